"""What real feeds put around and inside MSH: blank escape characters, stray bytes.

A Windows-based sender declares ``^~ &`` (a blank as escape character),
which hl7apy reads; bytes with no letter or digit before the first MSH (a
NUL run, a line of dashes) are no message and hold no PHI. Both used to
quarantine the message. Text before MSH still goes to quarantine: it may
name the patient. Values are Faker's; nothing is printed.
"""

from __future__ import annotations

import pytest
from faker import Faker
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse

from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.hl7.message import Hl7ParseError, parse_message
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_hl7_file
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger([DictionaryDetector()])


def _oru(seed: int, encoding: str = "^~\\&") -> tuple[str, list[str]]:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    family, given = fake.last_name().upper(), fake.first_name().upper()
    doctor = fake.last_name().upper()
    text = (f"MSH|{encoding}|LAB|HOSP|||20110329082006||ORU^R01|C{seed}|T|2.3\r"
            f"PID||{fake.random_number(digits=7, fix_len=True)}|||{family}^{given}||"
            "19651015|F\r"
            f"OBR|1|O{seed}|F{seed}|681X^Automated Bld Cnt|||20110329045100||||||||"
            f"|16626^{doctor}^PHYSICIAN\r"
            "OBX|1|NM|6690-2^Leukocytes^LN||11.8|10(9)/L|3.8-11.2|H|||F\r"
            f"OBX|2|TX|||Reviewed with Dr. {doctor.title()} by phone.\r")
    return text, [family, given, doctor]


@pytest.mark.parametrize("encoding", ["^~ &", "^~\t&", "#~\\&", "^~\\&#"])
def test_when_msh2_declares_what_hl7apy_accepts_then_parsed(encoding):
    text, _ = _oru(1, encoding)
    if len(encoding) == 5:
        text = text.replace("|2.3\r", "|2.7\r", 1)
    hl7apy_parse(text, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=False)
    assert parse_message(text).delimiters.encoding_characters == encoding


@pytest.mark.parametrize("encoding", ["^~A&", "^~\\^", "^~|&"])
def test_when_msh2_has_letters_or_duplicates_then_still_refused(encoding):
    text, _ = _oru(2, encoding)
    with pytest.raises(Hl7ParseError):
        parse_message(text)


@pytest.mark.parametrize("seed", [3, 4])
def test_when_a_windows_sender_uses_a_blank_escape_then_written_without_names(seed):
    text, names = _oru(seed, "^~ &")
    result = deidentify_hl7_file("w.hl7", text.encode(), TAGGER, FakeRewriter())
    assert result.messages_out == 1, [q.error_message for q in result.quarantined]
    out = result.output.decode()
    hl7apy_parse(out, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=False)
    assert sum(n in out.upper() for n in names) == 0


@pytest.mark.parametrize("before", [b"\x00\x00\x00\r\n", b"----------\r\n",
                                    b"\x1a\x04\r\n\r\n"])
def test_when_stray_bytes_precede_the_first_msh_then_skipped_and_counted(before):
    text, names = _oru(5)
    result = deidentify_hl7_file("s.hl7", before + text.encode(), TAGGER,
                                 FakeRewriter())
    assert (result.messages_in, result.messages_out, result.skipped) == (1, 1, 1)
    assert result.output.lstrip(b"\r\n")[:4] == b"MSH|"
    assert frame_file(before + text.encode()).skipped == 1


def test_when_text_precedes_the_first_msh_then_it_is_quarantined():
    text, names = _oru(6)
    before = f"Result for {names[1].title()} {names[0].title()}:\r\n".encode()
    result = deidentify_hl7_file("t.hl7", before + text.encode(), TAGGER,
                                 FakeRewriter())
    assert (result.messages_in, result.messages_out, result.skipped) == (2, 1, 0)
    (record,) = result.quarantined
    assert record.stage == "read"
    leaked = names[0].encode() in result.output.upper()
    assert not leaked


def test_when_exports_with_byte_order_marks_are_concatenated_then_each_is_read():
    first, names1 = _oru(7)
    second, names2 = _oru(8)
    bom = b"\xef\xbb\xbf"
    data = bom + first.encode() + b"\r\n" + bom + second.encode()
    result = deidentify_hl7_file("cat.hl7", data, TAGGER, FakeRewriter())
    assert (result.messages_in, result.messages_out) == (2, 2)
    assert result.output.count(bom) == 2
    out = result.output.decode("utf-8").upper()
    assert sum(n in out for n in names1 + names2) == 0


@pytest.mark.parametrize("seed", [9, 10])
def test_when_a_message_keeps_an_mllp_start_byte_and_no_end_then_it_is_read(seed):
    """A saved message with the sender's start byte (0x0B) and no 0x1C anywhere."""
    text, names = _oru(seed)
    data = b"\x0b" + text.replace("\r", "\r\n").encode()
    result = deidentify_hl7_file("vt.hl7", data, TAGGER, FakeRewriter())
    assert (result.messages_in, result.messages_out, result.skipped) == (1, 1, 1)
    assert result.output[:4] == b"MSH|"
    out = result.output.decode().upper()
    assert sum(n in out for n in names) == 0


def test_when_mllp_blocks_lack_their_end_bytes_then_still_quarantined():
    """Two start bytes and no end: a capture cut in transit, not a saved message."""
    first, _ = _oru(11)
    second, _ = _oru(12)
    data = b"\x0b" + first.encode() + b"\x0b" + second.encode()
    result = deidentify_hl7_file("cut.hl7", data, TAGGER, FakeRewriter())
    assert (result.messages_in, result.messages_out) == (2, 0)
    assert {q.error_message for q in result.quarantined} == {
        "MLLP block not terminated"}
