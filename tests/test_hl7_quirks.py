"""What real senders send and the standard does not allow: accepted, repaired, noted.

Each fixture ``tests/fixtures/hl7/quirk_*.hl7`` holds one quirk met in real
feeds (issue 18); ``test_hl7_writeback`` checks on the same files that no
header value survives and that hl7apy parses the output.
"""

from __future__ import annotations

import os

import pytest
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse

from deid_pipeline.hl7.documents import read_hl7
from deid_pipeline.hl7.framing import decode_message, frame_file
from deid_pipeline.hl7.message import QUIRKS, Hl7ParseError, parse_message
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_hl7_file
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hl7")
TAGGER = PhiTagger([DictionaryDetector()])

# fixture -> (quirks noted, MSH-2, MSH-10 (None: generated), MSH-12) of the output
CASES = {
    "quirk_msh2_five_chars.hl7": (("msh2_truncation_dropped",), "^~\\&", "QK-1",
                                  "2.4"),
    "quirk_msh12_empty.hl7": (("msh12_default",), "^~\\&", "QK-2", "2.5"),
    "quirk_msh10_empty.hl7": (("msh10_generated",), "^~\\&", None, "2.5"),
    "quirk_wrapped_segment.hl7": (("segment_wrapped",), "^~\\&", "QK-4", "2.5"),
    "quirk_one_line.hl7": (("segments_on_one_line",), "^~\\&", "QK-5", "2.5"),
}


def _read(name: str) -> bytes:
    with open(os.path.join(FIXTURES, name), "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("name", sorted(CASES))
def test_when_sender_quirk_then_message_read_and_quirk_recorded(name):
    quirks, _enc, _control, _version = CASES[name]
    records = list(read_hl7(name, _read(name)))
    assert records and all(isinstance(r, ClinicalDocument) for r in records)
    for doc in records:
        assert dict(doc.metadata)["hl7_accepted"] == ",".join(quirks)
        assert set(quirks) <= set(QUIRKS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_when_sender_quirk_then_output_is_standard_and_parses_with_hl7apy(name):
    _quirks, enc, control, version = CASES[name]
    result = deidentify_hl7_file(name, _read(name), TAGGER, FakeRewriter())
    assert (result.messages_in, result.messages_out) == (1, 1)
    (frame,) = list(frame_file(result.output).frames())
    text, _ = decode_message(frame.data)
    assert text.count("\r") == 6 and "\n" not in text
    message = parse_message(text)
    assert message.quirks == ()  # the output needs no repair
    msh = message.msh
    assert msh.get(2) == enc and msh.get(12) == version
    if control is None:
        assert msh.get(10).startswith("H") and len(msh.get(10)) == 20
    else:
        assert msh.get(10) == control
    assert [d.doc_id for d in result.documents] == [f"{msh.get(10)}-1"]
    hl7apy_parse(text, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=True)


def test_when_control_id_generated_then_same_on_rerun_and_per_message():
    data = _read("quirk_msh10_empty.hl7")
    first = parse_message(data.decode()).control_id
    assert parse_message(data.decode()).control_id == first
    other = data.replace(b"OTTILIE", b"OTTILIA")
    assert parse_message(other.decode()).control_id != first


@pytest.mark.parametrize("text,message", [
    # Still refused: no encoding characters, a version hl7apy does not know, a
    # continuation line before any segment.
    ("MSH||A||||1||ORU^R01|1|P|2.5\rOBR|1", "encoding characters"),
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|9.9\rOBR|1", "version missing or not supported"),
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|2.5", "truncated after MSH"),
])
def test_when_framing_truly_broken_then_still_refused_with_reason(text, message):
    with pytest.raises(Hl7ParseError, match=message):
        parse_message(text)
