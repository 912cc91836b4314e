"""One value, one surrogate: a seeded value copied into any other field (issue 18).

Senders copy the filler order number into OBR-29 and OBX-15, the accession
into MSH-10 and SFT-4, the MRN into PV1-18, IN2-10 and Z-segments, and a
mother's names into PID-21's components. Each copy must get the surrogate
its typed field got, and the message must be written, not quarantined.
"""

from __future__ import annotations

import os

import pytest

from deid_pipeline.hl7.framing import decode_message, frame_file
from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_hl7_file
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hl7")
TAGGER = PhiTagger([DictionaryDetector()])


def _deidentified(name: str, z_segments: str = "empty"):
    with open(os.path.join(FIXTURES, name), "rb") as fh:
        data = fh.read()
    result = deidentify_hl7_file(name, data, TAGGER, FakeRewriter(),
                                 z_segments=z_segments)
    assert result.quarantined == () and result.messages_out == 1
    (frame,) = list(frame_file(result.output).frames())
    before = parse_message(decode_message(data)[0])
    after = parse_message(decode_message(frame.data)[0])
    return before, after


def _at(message, address: str) -> str:
    """``PID.21.2`` (segment.field.component[.subcomponent]) of the first segment."""
    name, *numbers = address.split(".")
    raw = message.first(name).get(int(numbers[0]))
    d = message.delimiters
    if len(numbers) > 1:
        raw = raw.split(d.component)[int(numbers[1]) - 1]
    if len(numbers) > 2:
        raw = raw.split(d.subcomponent)[int(numbers[2]) - 1]
    return raw


# (fixture, typed field, copies of its value elsewhere)
COPIES = [
    ("oru_copied_ids.hl7", "OBR.3", ("MSH.10", "SFT.4", "ORC.3", "OBR.4.1",
                                     "OBR.29.1.1")),
    ("oru_copied_ids.hl7", "OBR.2", ("ORC.17", "OBR.29.2")),
    ("oru_copied_ids.hl7", "PID.3.1", ("PV1.18", "OBX.15.1")),
    ("oru_copied_ids.hl7", "MSH.4", ("OBR.29.1.2", "OBX.15.2")),
    ("adt_copied_ids.hl7", "PID.3.1", ("MSH.10", "IN2.10")),
    ("adt_copied_ids.hl7", "PID.18.1", ("PV1.18",)),
    ("adt_copied_ids.hl7", "NK1.2.1", ("PID.21.2", "PID.6.1")),
    ("adt_copied_ids.hl7", "NK1.2.2", ("PID.21.3", "PID.6.2")),
]


# Copies in a person segment's field that is neither typed PHI nor a code
# (IN2-10 military id, PID-21's check digit and scheme): emptied, not replaced.
EMPTIED = frozenset({"IN2.10", "PID.21.2", "PID.21.3"})


@pytest.mark.parametrize("name,typed,copies", COPIES)
def test_when_seeded_value_copied_into_other_fields_then_same_surrogate_there(
        name, typed, copies):
    before, after = _deidentified(name)
    original, surrogate = _at(before, typed), _at(after, typed)
    assert surrogate and surrogate.lower() != original.lower()
    for address in copies:
        assert _at(before, address) == original, address  # the fixture's copy
        expected = "" if address in EMPTIED else surrogate
        assert _at(after, address) == expected, address


def test_when_z_segments_kept_then_copied_values_there_replaced_too():
    before, after = _deidentified("oru_copied_ids.hl7", z_segments="keep")
    assert _at(before, "ZPI.2") == _at(before, "PID.3.1")
    assert _at(after, "ZPI.2") == _at(after, "PID.3.1")
    assert _at(after, "ZPI.3") == _at(after, "PV1.19.1") != _at(before, "ZPI.3")


def test_when_a_code_is_not_a_seeded_value_then_it_is_kept():
    before, after = _deidentified("oru_copied_ids.hl7")
    for address in ("OBX.3", "OBX.6", "OBX.7", "OBR.4.2", "SFT.3", "ORC.1"):
        assert _at(after, address) == _at(before, address), address
