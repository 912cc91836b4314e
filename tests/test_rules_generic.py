"""Generic shapes of PHI that leaked on notes of unseen patients and on queries.

Tables of (text, expected spans) per recognizer, as in ``test_rules.py``: each
row lists every span the recognizer returns, so ``[]`` rows are negatives
(clinical shorthand of the same shape).
"""

from __future__ import annotations

import pytest
from test_rules import _check

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.rules import RuleDetector, is_date_lookalike


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector()


FIRST_INITIAL_ROWS = [
    ("Anna S. reports pain at the incision", [("Anna S.", "DOCTOR")]),
    ("spoke with John K. re: plan", [("John K.", "DOCTOR")]),
    # A full name keeps its surname after the initial.
    ("then Valerie B. Mitchell aware",
     [("Valerie B.", "DOCTOR"), ("B. Mitchell", "DOCTOR")]),
    ("F. Whitfield to see pt", [("F. Whitfield", "DOCTOR")]),
    # Relatives after a relation and a dash.
    ("DAUGHTER-JANE AT BEDSIDE", [("JANE", "RELATIVE")]),
    ("son- Bill called", [("Bill", "RELATIVE")]),
    ("HCP - daughter Liz Robbins", [("Liz Robbins", "RELATIVE")]),
    # The relation after the name, in brackets.
    ("FAMILY MEETING WITH JOAN (HCP) AND TIM (SON)",
     [("JOAN", "RELATIVE"), ("TIM", "RELATIVE")]),
    ("given lasix (son brought it); CXR (PA)", []),
    # Diagnoses, vitamins, leads and grades have the same shape.
    ("Vitamin K. 10 mg given, Hepatitis B. 2/2 neg", []),
    ("Lead V. 2 mm ST changes; Stage I. 2 cm", []),
    ("Factor V. Leiden; Type II. DM; Grade I. varices", []),
    ("son-in-law called", []),
    ("ANNA S. REPORTS", []),  # all caps: a capital and a period say nothing
    # Typed all in lower case: a first name one band rarer as a word.
    ("was bobby p. discharged from vmc?", [("bobby p.", "DOCTOR")]),
    ("oob in am per c. 2 assist; mark x. 2 sites", []),
    ("Met bobby p. at noon", []),  # capitals on the line: they would say it
    # A field label after the initial is no surname.
    ("need notes for Jessica M. MRN SV2261765", [("Jessica M.", "DOCTOR")]),
    # Two-letter first names; shorthand of the same shape is not one.
    ("Ed M. needs refill of lisinopril", [("Ed M.", "DOCTOR")]),
    ("Po K. 40 meq given; Pt A. and O.", []),
    # No full stop: a lower-case word or a clause's end after the capital.
    ("labs for Mohammed A from 3/2", [("Mohammed A", "DOCTOR")]),
    ("Vitamin K deficiency; Hepatitis B vaccine; Troponin I neg", []),
    ("Will A fib recur? Mark X on the site", []),
]


@pytest.mark.parametrize(("text", "expected"), FIRST_INITIAL_ROWS)
def test_when_first_name_and_initial_then_initial_masked_too(detector, text, expected):
    """``Anna S.``: the initial is PHI with the first name; look-alikes are not."""
    _check(detector, "names", text, expected)


PAGER_ROWS = [
    ("Pager: #1234 for questions", [("1234", "PHONE")]),
    ("covering resident pgr: #45678", [("45678", "PHONE")]),
    ("beeper #: 4471", [("4471", "PHONE")]),
    ("Pager no. 12345", [("12345", "PHONE")]),
    ("pg 2 of 3; paged x2, pager: #2", []),
]


@pytest.mark.parametrize(("text", "expected"), PAGER_ROWS)
def test_when_colon_before_pager_mark_then_pager_number_tagged(
        detector, text, expected):
    """A colon before ``#`` (``Pager: #1234``) no longer hides the number."""
    _check(detector, "phone", text, expected)


ID_NEAR_ROWS = [
    ("member id AB-123456, copay $20", [("AB-123456", "HEALTHPLAN")]),
    ("policy 12345-XY on file", [("12345-XY", "HEALTHPLAN")]),
    ("HMO-234567 is her member number", [("HMO-234567", "HEALTHPLAN")]),
    ("plan id on card: XYZ12345", [("XYZ12345", "HEALTHPLAN")]),
    ("old record (chart) H1234567 requested", [("H1234567", "MEDICALRECORD")]),
    ("acct for this visit: FIN-8812345", [("FIN-8812345", "ACCOUNT")]),
    # Doses, volumes and settings beside the same words; IDs with no ID word.
    ("Plan: 1000cc bolus, NS1000, q2000, x10000", []),
    ("plan per ID: vanco 1250-mg", []),
    ("lot ABC654321 on the box", []),
]


@pytest.mark.parametrize(("text", "expected"), ID_NEAR_ROWS)
def test_when_letters_and_digits_near_id_word_then_id_tagged(
        detector, text, expected):
    """Mixed IDs with an ID word before or after; the nearest word picks the label."""
    _check(detector, "id_near", text, expected)


DATE_ROWS = [
    # A fraction-shaped m/d after a date preposition, in any case.
    ("PT HAS BEEN FEBRILE SINCE 3/4 PER FAMILY", [("3/4", "DATE")]),
    ("since 3/4 pt has had fevers", [("3/4", "DATE")]),
    ("EARLIER IN DAY 3/14 PT WAS SEEN", [("3/14", "DATE")]),
    ("ON 11/2 PT HAD A FALL", [("11/2", "DATE")]),
    ("extubated 1/2, reintubated 1/3 for stridor", [("1/2", "DATE")]),
    ("Pt presented to OSH on 2/4 with a 24h history", [("2/4", "DATE")]),
    ("PROSTATE CA. ON 1/3 HAD CP UPON WAKING", [("1/3", "DATE")]),
    # Glued to the date word before it.
    ("admitted3/14 with CP", [("3/14", "DATE")]),
    ("DOS:3/14 ref'd by PCP", [("3/14", "DATE")]),
    # Two dates run together: both, or one span for a range of days.
    ("cx 3/14-3/16 neg", [("3/14", "DATE"), ("3/16", "DATE")]),
    ("BCx 3/14-16 no growth", [("3/14-16", "DATE")]),
    # A month alone after a date preposition.
    ("cath in March showed 3VD", [("March", "DATE")]),
    ("SINCE SEPT PT HAS HAD DOE", [("SEPT", "DATE")]),
    ("last seen in Dec. by cards; early August visit",
     [("Dec.", "DATE"), ("August", "DATE")]),
    ("discharged in May, pt returned", [("May", "DATE")]),
    # Other shapes keep their whole dates.
    ("ERCP in Nov-01; seen since Jan 5", [("Nov-01", "DATE"), ("Jan 5", "DATE")]),
    # A fraction-shaped date after a shift's hours: the shift's date.
    ("MICU 7A-7P 3/4\nNPN 7:00p-7:00a 2/3", [("3/4", "DATE"), ("2/3", "DATE")]),
    ("given 7a-7p 1/2 NS", []),
    # A date no count has, listed with another: the count words before it lose.
    ("cultures 2/28 and 3/1 negative", [("2/28", "DATE"), ("3/1", "DATE")]),
    ("cultures 1/2 and 2/4 bottles; bottles 2/4 and 1/4", []),
    # A day no count of bottles has, alone after the count word.
    ("blood cultures 2/28 x2 negative", [("2/28", "DATE")]),
    ("blood cultures 2/4 positive; bottles 4/4 grew GPC", []),
    # The day of the last bowel movement, dashed.
    ("last BM 11-2 per pt, colace given", [("11-2", "DATE")]),
    ("last bm 3-4 days ago; BM 2-3 per day", []),
    # After a study's name, or a shift's hours on the 24-hour clock.
    ("CXR 11-23 with worsening infiltrate", [("11-23", "DATE")]),
    ("Nursing Progress Note 0700-1900 3-4", [("3-4", "DATE")]),
    ("EKG 1-2 mm ST depression; 0700-1900 3-4 loose stools", []),
    ("RESP: EXTUBATED 12-27 TO 40% SHOVEL MASK", [("12-27", "DATE")]),
    ("started 2-3 L NC; drawn 2-3 times", []),
    # A named month after a shift's hours; a day past any count after a
    # date word, whatever unit-like letter follows.
    ("NPN 7p-7a Sept 14", [("Sept 14", "DATE")]),
    ("CV: PICC PLACED 11/14 L BASILIC", [("11/14", "DATE")]),
    ("placed 1/2 L; placed 5/10 mg", []),
    # Roughly a day no fraction has; a quantity mark still makes one.
    ("d/c planned ~3/14; ~1/2 tab; ~3/6 murmur", [("3/14", "DATE")]),
    # A dashed date before where it happened; a length in inches is none.
    ("22F seen 8-14 in our clinic - albendazole?", [("8-14", "DATE")]),
    ("on 10-17 in the ED; wound 2-3 in long, from 2-3 in length", [("10-17", "DATE")]),
    # Look-alikes: settings, fractions, ranges, the verb may, dec the decrease.
    ("SIMV12/5, x2/3 of the way, pt at1/2 NS", []),
    ("on 1/2 NS, since 1/2 hour, 3/4 of the way up", []),
    ("started on 1/2 strength feeds; on 1/4 tab; Pt on 2/3 maintenance", []),
    ("BCx 3/14-12 and rales 1/3-1/2 up", []),
    ("pt may go home; in may be; no dec in sats; seen by jan", []),
    ("IN MAY BE; in mar", []),
]


@pytest.mark.parametrize(("text", "expected"), DATE_ROWS)
def test_when_year_less_date_after_date_word_then_tagged(detector, text, expected):
    """Year-less dates leaked after prepositions, glued, as ranges, as months alone."""
    _check(detector, "date", text, expected)


RESIDENCE_ROWS = [
    ("pt from Dayton, OH, lives alone", [("Dayton", "CITY"), ("OH", "STATE")]),
    ("lives in Ohio with wife", [("Ohio", "STATE")]),
    ("moved to New York last yr", [("New York", "STATE")]),
    ("OLD RECORDS FROM ANNAPOLIS, MD", [("ANNAPOLIS", "CITY"), ("MD", "STATE")]),
    ("family visiting from Ellicott City, Maryland",
     [("Ellicott City", "CITY"), ("Maryland", "STATE")]),
    # A state code or a town by itself after a cue of where one lives.
    ("Lives in MA with husband", [("MA", "STATE")]),
    ("PT LIVES IN NH WITH SON", [("NH", "STATE")]),  # capitals run on after it
    ("LIVES IN IV FLUIDS", []),
    ("26 Y/O RESIDENT OF NORTH POTOMAC ADMITTED WITH NSTEMI",
     [("NORTH POTOMAC", "CITY")]),
    ("Pt lives in Dorchester with sister", [("Dorchester", "CITY")]),
    ("Lives in Assisted Living; lives in town; lives in ICU; Lives In Apartment", []),
    # Units, rooms and staff after "from", a state code with no town.
    ("transferred from ED, MD aware; from home, PA to see", []),
    ("FROM OR, PA AWARE; returned to floor; from MD office", []),
    ("weaned from vent, IN NAD; lives in fear", []),
    # No state after the comma: the town by itself.
    ("just moved from Nairobi, SOB and HR 124", [("Nairobi", "CITY")]),
    # After "from" alone, only a listed city of the world that is no common
    # name, ending its clause.
    ("Mr Mthembu, 42, from Soweto, on rifampin; returned from Mumbai.",
     [("Soweto", "CITY"), ("Mumbai", "CITY")]),
    ("call from Florence. She asked; FROM MUMBAI; from Mumbai hospital", []),
    ("just back from Tokyo with fever; from Beijing last week",
     [("Tokyo", "CITY"), ("Beijing", "CITY")]),
    ("came from Mexico with family; call from Florence with questions", []),
    # Where a person travelled: a world city, of two listed words too; not
    # a rhythm, a unit, a state's code or a place in the hospital.
    ("she was in Guatemala City until Tuesday; trip to Nairobi, then home",
     [("Guatemala City", "CITY"), ("Nairobi", "CITY")]),
    ("pt was in SR, then AF; was in Afib; was in bed; was in ICU; was in MA", []),
]


@pytest.mark.parametrize(("text", "expected"), RESIDENCE_ROWS)
def test_when_residence_cue_then_town_and_state_tagged(detector, text, expected):
    """A state, a town (and a comma and a state) after lives in / from / moved to."""
    _check(detector, "residence", text, expected)



ODD_DIGIT_NOTES = [
    "Pt seen 3/4\u00b2 by Dr. Hollis, since 3/4\u00b2 BP stable.",
    "F/u \u2460/\u2461 with Dr Pruitt at 555-12\u00b34, age 9\u2079.",
    "Labs drawn \u00b9\u00b2/\u00b3\u2074/2021; MRN 12\u00b345678; 10.0.\u00b2.1",
    "PSV \u00b210/5, ext \u00b2\u00b2\u00b2\u00b2, pager #\u2460\u2461\u2462\u2463",
]


@pytest.mark.parametrize("text", ODD_DIGIT_NOTES)
def test_when_note_holds_digit_like_characters_then_rules_do_not_raise(detector,
                                                                      text):
    """``²``, ``①`` pass ``str.isdigit`` and fail ``int``; no rule reads them."""
    spans = detector.detect(ClinicalDocument("odd", text, "text"))
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    for start in range(len(text)):
        for end in range(start + 1, min(start + 12, len(text)) + 1):
            is_date_lookalike(text, start, end)


def test_when_digits_fullwidth_then_still_read(detector):
    """Decimal digits of other scripts are digits (PHI written in them leaks else)."""
    text = "Call \uff16\uff11\uff17-\uff15\uff15\uff15-\uff10\uff11\uff19\uff19"
    assert [(s.label, s.start) for s in detector.detect(
        ClinicalDocument("n", text, "text"))] == [("PHONE", 5)]


@pytest.mark.parametrize(("text", "value", "alone", "sure"), [
    # a fraction's shape alone: a look-alike unless the caller is sure
    ("Anticipate transfer to floor 2/4", "2/4", True, False),
    ("? d/c TF's 1/3. Then PT", "1/3", True, False),
    # a fluid, a unit or a score after it: a look-alike however sure
    ("Pt on 1/2 NS at 100cc/hr", "1/2", True, True),
    ("pulses 2/4 bilat", "2/4", True, True),
    # a dash with no date word around it, the same; a unit after it is a range
    ("BC from R groin line drawn on 3-11 came back", "3-11", True, False),
    ("on 2-3 L NC, sats 95%", "2-3", True, True),
    ("ICP 6-7 mmHg overnight", "6-7", True, True),
])
def test_when_caller_is_sure_then_only_a_dates_shape_is_forgiven(
        text, value, alone, sure):
    from deid_pipeline.tagger.rules import is_date_lookalike

    start = text.index(value)
    end = start + len(value)
    assert is_date_lookalike(text, start, end) is alone
    assert is_date_lookalike(text, start, end, sure=True) is sure



EMPLOYER_ROWS = [
    ("concerned about his business Genentech", [("Genentech", "ORGANIZATION")]),
    ("pt works at harford memorial.", [("harford memorial", "ORGANIZATION")]),
    ("WORKS AT GENENTECH IN SF", [("GENENTECH", "ORGANIZATION")]),
    ("Works for Microsoft as engineer", [("Microsoft", "ORGANIZATION")]),
    ("works as a pilot for JetBlue, cleared to fly?", [("JetBlue", "ORGANIZATION")]),
    ("works as a nurse at home", []),
    ("Pt is a student at Northeastern, lives in the dorms",
     [("Northeastern", "ORGANIZATION")]),
    ("student at home schooling; studies at night", []),
    # Where and when one works is no employer; nor a trade.
    ("works at home, works at night; works for a bank in town", []),
    ("WORKS AS NURSES AIDE; works for the city", []),
    # A post names the employer after it; not a ward's or a family's manager.
    ("HUSBAND CEO OF IBM. SMOKER", [("IBM", "ORGANIZATION")]),
    ("wife is vice president at Fidelity", [("Fidelity", "ORGANIZATION")]),
    ("case manager for update; director of nursing aware", []),
    ("son is manager of his admission plans", []),
    # The employer alone names it too; capitalised, it ends with its capitals.
    ("pt's employer MBTA called asking for an update", [("MBTA", "ORGANIZATION")]),
    ("employer is Raytheon; employer notified of absence",
     [("Raytheon", "ORGANIZATION")]),
    ("his company Genentech called today", [("Genentech", "ORGANIZATION")]),
    ("works at Stop & Shop as a cashier", [("Stop & Shop", "ORGANIZATION")]),
]


@pytest.mark.parametrize(("text", "expected"), EMPLOYER_ROWS)
def test_when_where_a_person_works_is_named_then_employer_tagged(
        detector, text, expected):
    """An employer after ``works at``/``for`` or ``his business``."""
    _check(detector, "employers", text, expected)


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("postal_code", "zip 02114; Zip code: 02139-1234",
     [("02114", "ZIP"), ("02139-1234", "ZIP")]),
    ("postal_code", "zipper 12345, zip 123, 02114 mL", []),
    ("po_box", "PO Box 1234; mail to P.O. Box #77, Quincy",
     [("PO Box 1234", "STREET"), ("P.O. Box #77", "STREET")]),
    ("po_box", "box 3 of gauze; lunch box 2", []),
    ("apartment", "lives alone in Apt 4B; apartment #17; Apt B12 key",
     [("4B", "STREET"), ("17", "STREET"), ("B12", "STREET")]),
    ("route", "BIBA from the market on Route 9; hwy 1 north",
     [("Route 9", "STREET"), ("hwy 1", "STREET")]),
    ("route", "IV route 2 times daily; route of admin", []),
    # "apt" is also an appointment: not before a time, a date or a duration.
    ("apartment", "f/u apt 2 wks; has apt 3/4 with cards; apt 10:30; apt to fall",
     []),
    ("id_bare", "ID 4472 interpreter; Ms. Wen (ID 4471)",
     [("4472", "IDNUM"), ("4471", "IDNUM")]),
    ("id_bare", "per ID 2019 guidelines; id 4471; I&D 4471; ID consult; ID 12", []),
    # A holiday as when something happened; a disease, a seal, labour do not.
    ("holiday", "fell on christmas eve; home for Labor Day; over Thanksgiving",
     [("christmas eve", "DATE"), ("Labor Day", "DATE"), ("Thanksgiving", "DATE")]),
    ("holiday", "Christmas disease, Easter Seals, labor day 2, Thanksgiving weight",
     []),
])
def test_when_zip_or_po_box_cue_then_tagged(detector, name, text, expected):
    """A ZIP code after its word and a post office box (rules.json custom)."""
    _check(detector, name, text, expected)
