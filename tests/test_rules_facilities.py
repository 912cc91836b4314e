"""Hospitals, places and identifiers as other genres write them (issue 28).

Values come from Faker (seeded), never from the genre set's pools, so these
tests say the rules are generic shapes; each table has negative rows of
clinical text with the same shape.
"""

from __future__ import annotations

import pytest
from faker import Faker
from test_rules import _check

from deid_pipeline.tagger.rules import RuleDetector


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector()


def _fake(seed: int) -> Faker:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return fake


# Letters that are also units (litres, hours, grams, units, times, metres).
CHECK_LETTERS = ("L", "H", "G", "U", "X", "M")


@pytest.mark.parametrize("letter", CHECK_LETTERS)
@pytest.mark.parametrize(("cue", "label"), [
    ("Acct", "ACCOUNT"), ("Member ID", "HEALTHPLAN"), ("RECORD #:", "MEDICALRECORD")])
def test_when_long_id_ends_in_unit_letter_then_tagged(detector, letter, cue, label):
    """``113374-L`` is an account with a check letter, not 113,374 litres."""
    fake = _fake(ord(letter))
    digits = fake.numerify("%#####" + "#" * (ord(letter) % 3))
    value = f"{digits}-{letter}"
    _check(detector, "id_near", f"{cue} {value}. Follow up", [(value, label)])


@pytest.mark.parametrize("text", [
    "plan: NS 1000-L over 8 hr", "per ID plan heparin 25000-u/250", "plan 2000-cc",
])
def test_when_short_number_ends_in_unit_then_not_an_id(detector, text):
    """Doses and volumes keep their units: fewer than six digits."""
    _check(detector, "id_near", text, [])
