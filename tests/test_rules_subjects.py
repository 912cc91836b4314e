"""A first name alone as a sentence's subject; vehicle and device numbers (issue 46).

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


SUBJECT_ROWS = [
    ("Aurelio lives alone in Pawtucket, home PT or SNF?", [("Aurelio", "PATIENT")]),
    ("Fernando's CD4 is 45 and he has a headache, LP before CT?",
     [("Fernando", "PATIENT")]),
    ("Lucienne needs her Depo shot, last one was Aug 14", [("Lucienne", "PATIENT")]),
    # A first name and a surname, one of them listed as a name.
    ("Zephyrine Aucoin keeps pulling at her lines", [("Zephyrine Aucoin", "PATIENT")]),
    ("Ignatius Obi is 62 and post-op", [("Ignatius Obi", "PATIENT")]),
    ("Social Work says ok. Heme Onc was called. Night Float was paged.", []),
    # After a sentence's end, too.
    ("Pt resting. Tobias says she is confused.", [("Tobias", "PATIENT")]),
    # A drug, a state, kin, a first name common as a word, an abbreviation
    # that some list calls a name, no verb after it: no subject.
    ("Heparin was held overnight.", []),
    ("Georgia has the highest rate", []),
    ("Patient is stable. Daughter says she ate.", []),
    ("Grace is at the bedside", []),
    ("Abd is tense with ascites", []),
    ("Fernando Valley clinic closed", []),
    ("seen with Aurelio lives", []),  # not first in its sentence
]


@pytest.mark.parametrize(("text", "expected"), SUBJECT_ROWS)
def test_when_first_name_is_a_sentences_subject_then_tagged(detector, text, expected):
    _check(detector, "subjects", text, expected)


VEHICLE_DEVICE_ROWS = [
    ("license plate 7KXL293 on the incident report", [("7KXL293", "VEHICLE")]),
    ("VIN 1HGCM82633A004352 of the car that hit him",
     [("1HGCM82633A004352", "VEHICLE")]),
    ("pacemaker serial number PJN123456 interrogated", [("PJN123456", "DEVICE")]),
    ("pump s/n 4471829 alarming", [("4471829", "DEVICE")]),
    ("VIN 3 on the vulvar biopsy; plate 2 of the series", []),
]


@pytest.mark.parametrize(("text", "expected"), VEHICLE_DEVICE_ROWS)
def test_when_vehicle_or_device_number_after_its_word_then_tagged(detector, text,
                                                                  expected):
    _check(detector, "id", text, expected)
