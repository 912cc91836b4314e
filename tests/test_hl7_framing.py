"""Framing and decoding: files as interface engines write them."""

from __future__ import annotations

import pytest

from deid_pipeline.hl7.framing import (
    Block,
    Envelope,
    MessageFrame,
    decode_message,
    encode_message,
    frame_file,
    normalise_segments,
    render,
)

MSG_A = b"MSH|^~\\&|A|H|B|H|20240101||ORU^R01|A1|P|2.5\rPID|1||1^^^H^MR\r"
MSG_B = b"MSH|^~\\&|A|H|B|H|20240101||ORU^R01|B2|P|2.5\rPID|1||2^^^H^MR\r"


def _frames(data: bytes) -> list[MessageFrame]:
    return list(frame_file(data).frames())


def _identity(data: bytes) -> bytes:
    framed = frame_file(data)
    out, _ = render(framed.parts, lambda f: f.data, lambda e: e.data + e.terminator)
    return out


@pytest.mark.parametrize("data,count,kind", [
    (MSG_A, 1, "messages"),
    (MSG_A + MSG_B, 2, "messages"),  # next MSH, no separator
    (MSG_A + b"\r\n\r\n" + MSG_B, 2, "messages"),  # blank lines
    (MSG_A.replace(b"\r", b"\n") + b"\n" + MSG_B.replace(b"\r", b"\n"), 2, "messages"),
    (MSG_A.replace(b"\r", b"\r\n") + MSG_B.replace(b"\r", b"\r\n"), 2, "messages"),
    (b"\xef\xbb\xbf" + MSG_A, 1, "messages"),
    (b"FHS|^~\\&\rBHS|^~\\&\r" + MSG_A + MSG_B + b"BTS|2\rFTS|1\r", 2, "batch"),
    (b"\x0b" + MSG_A + b"\x1c\r" + b"\x0b" + MSG_B + b"\x1c\r", 2, "mllp"),
    (b"\r\n\x0b" + MSG_A + b"\x1c\r\n\x0b" + MSG_B + b"\x1c\r", 2, "mllp"),
])
def test_when_framed_then_messages_found_and_bytes_kept(data, count, kind):
    framed = frame_file(data)
    frames = list(framed.frames())
    assert framed.kind == kind
    assert len(frames) == count
    assert all(f.error is None for f in frames)
    assert [f.ordinal for f in frames] == list(range(1, count + 1))
    assert _identity(data) == data


def test_when_batch_then_envelopes_are_parts():
    data = b"FHS|^~\\&\rBHS|^~\\&\r" + MSG_A + b"BTS|1\rFTS|1\r"
    envelopes = [p for p in frame_file(data).parts if isinstance(p, Envelope)]
    assert [e.name for e in envelopes] == ["FHS", "BHS", "BTS", "FTS"]


def test_when_content_outside_message_then_it_is_its_own_failed_frame():
    frames = _frames(b"garbage line\r\n\r\n" + MSG_A)
    assert frames[0].error == "content outside any message"
    assert frames[1].error is None and frames[1].data == MSG_A


def test_when_mllp_block_not_terminated_then_its_message_fails_framing():
    frames = _frames(b"\x0b" + MSG_A + b"\x1c\r\x0b" + MSG_B)
    assert frames[0].error is None
    assert frames[1].error == "MLLP block not terminated"


def test_when_bytes_between_mllp_blocks_then_they_fail_framing():
    frames = _frames(b"\x0b" + MSG_A + b"\x1c\rjunk\x0b" + MSG_B + b"\x1c\r")
    assert [f.error for f in frames] == [None, "bytes outside MLLP blocks", None]


def test_when_mllp_message_dropped_then_whole_block_goes():
    data = b"\x0b" + MSG_A + b"\x1c\r" + b"\x0b" + MSG_B + b"\x1c\r"
    framed = frame_file(data)
    out, written = render(framed.parts,
                          lambda f: None if f.ordinal == 1 else f.data,
                          lambda e: e.data)
    assert written == 1
    assert out == b"\x0b" + MSG_B + b"\x1c\r"
    assert isinstance(framed.parts[0], Block)


@pytest.mark.parametrize("data,codec,text", [
    ("Zoë Ångström".encode(), "utf-8", "Zoë Ångström"),
    ("Zoë".encode("latin-1"), "cp1252", "Zoë"),  # undeclared, not UTF-8
    ("“quoted”".encode("cp1252"), "cp1252", "“quoted”"),
    (b"\x81\x8d\x8f", "latin-1", "\x81\x8d\x8f"),  # not cp1252 either: Latin-1
])
def test_when_decoded_undeclared_then_utf8_else_cp1252_else_latin1(data, codec, text):
    message = b"MSH|^~\\&|A|H|B|H|1||ORU^R01|1|P|2.5\rOBX|1|TX|||" + data + b"\r"
    decoded, used = decode_message(message)
    assert used == codec
    assert text in decoded


def test_when_charset_declared_then_it_is_used():
    msh = b"MSH|^~\\&|A|H|B|H|1||ORU^R01|1|P|2.5|||||DEU|8859/1\r"
    decoded, used = decode_message(msh + "Jürgen".encode("latin-1") + b"\r")
    assert used == "latin-1" and "Jürgen" in decoded
    decoded, used = decode_message(msh + "“x”".encode("cp1252") + b"\r")
    assert used == "cp1252" and "“x”" in decoded  # mislabelled cp1252


def test_when_encoding_lacks_a_character_then_accents_dropped_not_crash():
    assert encode_message("Ődön Ñ", "latin-1") == "Odön Ñ".encode("latin-1")
    assert encode_message("Ω", "ascii") == b"?"


def test_when_segments_normalised_then_wrapped_text_joins_its_obx():
    text = "MSH|^~\\&|A\rOBX|1|TX|||first line\nsecond line|||F\r\nNTE|1||x\n"
    assert normalise_segments(text) == [
        "MSH|^~\\&|A", "OBX|1|TX|||first line\\.br\\second line|||F", "NTE|1||x"]


def test_when_a_header_segment_wraps_then_joined_and_noted():
    quirks: list[str] = []
    segments = normalise_segments(
        "MSH|^~\\&|A\rPID|1||123^^^H^MR||SMI\nTH^JOHN\rOBR|1\r", quirks)
    assert segments == ["MSH|^~\\&|A", "PID|1||123^^^H^MR||SMITH^JOHN", "OBR|1"]
    assert quirks == ["segment_wrapped"]


def test_when_whole_message_on_one_line_then_cut_at_segment_ids():
    quirks: list[str] = []
    text = "MSH|^~\\&|A B|x PID|1||9 Elm St\\rOBR|1<CR>OBX|1|TX|||seen by SAM"
    assert normalise_segments(text, quirks) == [
        "MSH|^~\\&|A B|x", "PID|1||9 Elm St", "OBR|1", "OBX|1|TX|||seen by SAM"]
    assert quirks == ["segments_on_one_line"]
