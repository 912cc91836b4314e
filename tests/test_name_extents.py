"""The parts of a name left in clear beside a name found from its shape (issue 46).

``Hope Castellanos 34F``: the name rules vouch for the surname from the age
and sex after it, and a first name that is also a common English word was
left beside the surrogate. :mod:`deid_pipeline.tagger.name_extents` decides,
for the rules' spans and the CRF's tokens alike, whether the word before is
the first name.
"""

from __future__ import annotations

import pytest
from test_rules import _check

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger import lexicons
from deid_pipeline.tagger.detection import TaggerConfig
from deid_pipeline.tagger.name_extents import first_name_before_name
from deid_pipeline.tagger.rules import RuleDetector
from deid_pipeline.tagger.tagging import PhiTagger


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector()


WIDENED_ROWS = [
    # A first name English also uses as a word, capitalised before the name.
    ("Hope Castellanos 34F G2P1 at 32 wks, BP 168/112",
     [("Hope Castellanos", "PATIENT")]),
    ("Summer Whitlock's mom called, the 3 yo swallowed a button battery",
     [("Summer Whitlock", "PATIENT")]),
    # A first name English hardly uses, as before.
    ("Priyanka Venkataraman 52F with ferritin 12",
     [("Priyanka Venkataraman", "PATIENT")]),
    # The rest of a surname after its particle; after "named".
    ("seen by ortho resident dr. van der berg, ok to wb", [("van der berg", "DOCTOR")]),
    ("Dr. Del Toro called back", [("Del Toro", "DOCTOR")]),
    ("calling out for someone named ines", [("ines", "DOCTOR")]),
    # The surname after a first name a title's shape took alone.
    ("guardian is attorney Miriam Feldstein, reachable",
     [("Miriam Feldstein", "DOCTOR")]),
    ("son Bill Lasix given; VNA nurse Gwendolyn Called",
     [("Bill", "RELATIVE"), ("Gwendolyn", "DOCTOR")]),
    # In a line of capitals, in capitals.
    ("WIFE DOLORES FENWICK AT BEDSIDE", [("DOLORES FENWICK", "RELATIVE")]),
    ("WIFE DOLORES AWARE OF PLAN", [("DOLORES", "RELATIVE")]),
    # Relatives by the newer kin words.
    ("Pt's ex-husband, Duane, has a restraining order", [("Duane", "RELATIVE")]),
    ("a drug named Lasix; the nurse named above", []),
    # Titles, kin words and the verb in lower case are not first names.
    ("Mr Castellanos 34F with preeclampsia",
     [("Castellanos", "PATIENT")]),
    ("pt will call Whitlock's mom tomorrow", [("Whitlock", "PATIENT")]),
]


@pytest.mark.parametrize(("text", "expected"), WIDENED_ROWS)
def test_when_first_name_before_a_found_name_then_widened_to_it(detector, text,
                                                               expected):
    _check(detector, "names", text, expected)


@pytest.mark.parametrize(("word", "expected"), [
    ("Hope", True), ("Will", True), ("Grace", True), ("Priyanka", True),
    ("hope", False), ("HOPE", False),  # lower case or capitals: the word
    ("Mark", False),  # band 5, not in the common-word first names given
    ("Dr", False), ("Per", False), ("Daughter", False), ("Said", False),
])
def test_when_word_read_before_a_name_then_only_first_names_pass(word, expected):
    refused = {"dr", "daughter", "said", "per"}
    assert first_name_before_name(word, lexicons.load(), refused,
                                  {"hope", "will"}) is expected


def test_when_tagged_then_the_first_name_is_replaced_with_the_name():
    text = "Hope Castellanos 34F at 32 wks, mag running; Hope Castellanos to L&D"
    spans = PhiTagger.from_config(TaggerConfig()).tag(
        ClinicalDocument(doc_id="q", text=text, source="query")).spans
    values = {text[s.start:s.end] for s in spans}
    assert "Hope Castellanos" in values
    assert not any(text[s.start:s.end] == "Castellanos" for s in spans)
