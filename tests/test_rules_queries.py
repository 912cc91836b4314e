"""Shapes found in clinicians' questions and messages (issue 46).

A first name alone as a sentence's subject, vehicle and device numbers, a
street line by its shape, an SSN's last four said to be them and a day's
ordinal alone after an event.

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
    # A rare first name with a surname; seen at a clinic. Alone it is no one.
    ("Aiyana Redcloud seen at IHS clinic in Gallup, strep positive",
     [("Aiyana Redcloud", "PATIENT")]),
    ("Aiyana seen at the clinic. Cardiology seen, recs appreciated.", []),
    # A capitalised surname after a lower-case pt; not a verb or a finding.
    ("for Dr Iwasaki: pt Fontaine in bed 12 is refusing meds",
     [("Fontaine", "PATIENT")]),
    ("pt Denies pain, pt Alert and oriented; pt Brown stool; pt Lasix 40", []),
    # A first name in capitals alone before lower case; not a state or an order.
    ("pt WINIFRED prefers to be called by her nickname", [("WINIFRED", "PATIENT")]),
    ("pt DENIES pain; pt NPO after mn; pt CMO per family; pt OOB to chair", []),
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
    # Who a question is about: "my patient" and a first name, in any case.
    ("my patient Zainab, 34 weeks, BP 160/105 - mag?", [("Zainab", "PATIENT")]),
    ("my pt esperanza, 81, on hospice at home", [("esperanza", "PATIENT")]),
    ("my patient has a fever; my pt with CHF; our patient presented with", []),
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
    # Staff numbers.
    ("employee ID 88213 called about the incident", [("88213", "IDNUM")]),
    ("interpreter ID 44712 present for the consent", [("44712", "IDNUM")]),
    ("badge # 4471 of the nurse at the bedside", [("4471", "IDNUM")]),
    ("employee of the month; badge reader down", []),
    ("pathology accession S25-18832 reviewed", [("S25-18832", "IDNUM")]),
    ("Accession received 05/14/2006", []),
    ("encounter 20250912-118 billed", [("20250912-118", "ACCOUNT")]),
    ("first encounter 2 years ago; encounter for immunization", []),
]


@pytest.mark.parametrize(("text", "expected"), VEHICLE_DEVICE_ROWS)
def test_when_vehicle_device_or_staff_number_after_its_word_then_tagged(
        detector, text, expected):
    _check(detector, "id", text, expected)


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
    # Where one lives, without the number; in capitals too.
    ("PT STATES HE LIVES ON CENTRE ST IN JAMAICA PLAIN",
     [("CENTRE ST", "STREET")]),
    ("resides off Elm Street with wife", [("Elm Street", "STREET")]),
    ("LIVES ON 2ND FLOOR; lives on a farm; LIVES ON SS INCOME", []),
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


ORDINAL_AFTER_ROWS = [
    ("extubated on the 22nd, reintubated 24th for resp distress",
     [("22nd", "DATE"), ("24th", "DATE")]),
    ("transferred 12th to rehab; since 3rd, no BM",
     [("12th", "DATE"), ("3rd", "DATE")]),
    # A dashed date seen again after another.
    ("seen 10-3 and again 10-17 in the Lubbock ED",
     [("10-3", "DATE"), ("10-17", "DATE")]),
    ("again 2-3 L NC; again 10-15 mg", []),
    # A count, a floor, a time: the ordinal goes on into a noun.
    ("started 2nd dose of abx; after 2nd unit prbc; admitted 3rd time this year", []),
]


@pytest.mark.parametrize(("text", "expected"), ORDINAL_AFTER_ROWS)
def test_when_days_ordinal_alone_after_an_event_then_date(detector, text, expected):
    _check(detector, "date", text, expected)
