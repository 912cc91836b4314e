"""A street line by its shape, and an SSN's last four said to be them (issue 46).

Tables of (text, expected spans), as in ``test_rules.py``: each row lists every
span the recognizer returns, so ``[]`` rows are negatives.
"""

from __future__ import annotations

import pytest
from test_rules import _check

from deid_pipeline.tagger.rules import RuleDetector


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector()


STREET_ROWS = [
    ("address on file is 1140 Commonwealth Ave Apt 3, Allston MA 02134",
     [("1140 Commonwealth Ave Apt 3", "STREET")]),
    ("pt's landlord at 55 Prospect St called about a fall",
     [("55 Prospect St", "STREET")]),
    ("lives at 100 N. Main St., Apt #4B with her son",
     [("100 N. Main St., Apt #4B", "STREET")]),
    ("lives at 5 Oak Dr in Boston", [("5 Oak Dr", "STREET")]),
    ("ADDRESS: 0138 WEST COURT, ALLENHURST, NJ", [("0138 WEST COURT", "STREET")]),
    # A title, units, a drug, and capitals where ST, SQ, DR and PLACE are
    # something else.
    ("called 3 West Dr Lee aware; MAP < 120 PER DR. kenney", []),
    ("gave 2 Units St; 40 Lasix Dr", []),
    ("3 WAY FOLEY IN PLACE; COVER W 4 REG SQ; PT HAD 3 EPSIODES ST IN 130'S", []),
]


@pytest.mark.parametrize(("text", "expected"), STREET_ROWS)
def test_when_house_number_name_and_street_word_then_street_tagged(detector, text,
                                                                   expected):
    _check(detector, "streets", text, expected)


SSN_LAST_FOUR_ROWS = [
    ("SSN ends in 4471 per registration, verify identity", [("4471", "SSN")]),
    ("last 4 of SSN 4471 on the form", [("4471", "SSN")]),
    ("last four of her social 3392 matches", [("3392", "SSN")]),
    ("SSN last 4: 8812", [("8812", "SSN")]),
    # No SSN word: the last four of anything else.
    ("last 4 hours 1200 ml out; social worker ends in 2 hours", []),
]


@pytest.mark.parametrize(("text", "expected"), SSN_LAST_FOUR_ROWS)
def test_when_ssn_last_four_said_then_tagged(detector, text, expected):
    _check(detector, "ssn", text, expected)
