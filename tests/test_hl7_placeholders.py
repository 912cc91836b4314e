"""Template messages: address parts written as their own names are no place.

A template's ``Street^^City^State^Zip Code`` seeded the words "Street" and
"City"; every surrogate street ("Oak Street") spelled one, and the whole-
message guard held the message back. Placeholder words are now replaced in
their fields but never searched for. Names are Faker's; never printed.
"""

from __future__ import annotations

import pytest
from faker import Faker

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.seed import is_placeholder, seed_dictionary
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger(create(TaggerConfig(detectors=("rules", "dictionary"))))


def _template(seed: int) -> str:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    family, given = fake.last_name().upper(), fake.first_name().upper()
    return ("MSH|^~\\&|EHR|H|||20240312101500||ADT^A04|A1|P|2.5\r"
            "EVN|A04|20240312101500\r"
            f"PID|1||{fake.random_number(digits=8, fix_len=True)}^^^H^MR||"
            f"{family}^{given}||19710304|F|||Street^Address Line 2^City^State^"
            "Zip Code^USA||(555)555-5555\r"
            f"NK1|1|{family}^{fake.first_name().upper()}|SPO|Street^^City^State^Zip\r")


@pytest.mark.parametrize("value,expected", [
    ("Street", True), ("Address Line 2", True), ("City", True), ("Zip Code", True),
    ("N/A", True), ("STATE", True),
    ("12 Main Street", False), ("State College", False), ("Oak Street", False),
    ("Boston", False), ("02134", False),
])
def test_when_an_address_leaf_is_read_then_placeholders_are_told_apart(value,
                                                                        expected):
    assert is_placeholder(value) is expected


def test_when_a_template_is_seeded_then_placeholder_words_are_not_entries():
    seeded = {e.value.lower() for e in seed_dictionary(parse_message(_template(1)))
              .entries}
    assert not seeded & {"street", "city", "state", "zip code", "zip"}


@pytest.mark.parametrize("key", [b"A" * 32, b"B" * 32, b"C" * 32])
def test_when_a_template_message_is_written_then_not_quarantined(key):
    result = deidentify_message(_template(2), TAGGER, Rewriter("surrogate", key=key),
                                "t.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    address = parse_message(result.er7).first("PID").get(11).split("^")
    assert address[0] != "Street" and address[2] != "City"
