"""Rule recognizers: one table of (text, expected spans) per PHI kind.

Each row lists every span the recognizer must return, as (substring, label),
so a row with ``[]`` is a negative: clinical shorthand that looks like PHI
(``120/80``, ``1/2 NS``, ``5/5 strength``, ``900-1300``) must stay untouched.
Offsets are checked against the text, not only the matched strings.
"""

from __future__ import annotations

import random
import re

import pytest

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.rules import (
    Pattern,
    PatternRecognizer,
    RuleDetector,
    default_config,
)
from deid_pipeline.tokenizer import metric_tokens

Expected = list[tuple[str, str]]


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    """Build the packaged rules once for the module."""
    return RuleDetector()


def _recognizer(detector: RuleDetector, name: str) -> PatternRecognizer:
    return next(r for r in detector.recognizers if r.name == name)


def _offsets(text: str, expected: Expected) -> list[tuple[int, int, str]]:
    """Turn (substring, label) pairs into offsets; each must occur once."""
    out = []
    for sub, label in expected:
        assert text.count(sub) == 1, f"ambiguous expectation {sub!r}"
        start = text.index(sub)
        out.append((start, start + len(sub), label))
    return sorted(out)


def _found(recognizer: PatternRecognizer, text: str) -> list[tuple[int, int, str]]:
    spans = recognizer.analyze(text)
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        assert span.source == f"rules:{recognizer.name}"
        assert 0.0 < span.confidence <= 1.0
    return sorted((s.start, s.end, s.label) for s in spans)


def _check(detector: RuleDetector, name: str, text: str, expected: Expected) -> None:
    assert _found(_recognizer(detector, name), text) == _offsets(text, expected)


# -------------------------------------------------------------------- phone

PHONE_ROWS = [
    ("Call daughter at (617) 555-1234 after 5pm.", [("(617) 555-1234", "PHONE")]),
    ("Son's cell 617-555-1234.", [("617-555-1234", "PHONE")]),
    ("PCP office 617.555.1234", [("617.555.1234", "PHONE")]),
    ("HOME# 555-1234", [("555-1234", "PHONE")]),
    ("wife can be reached at 555 1234", [("555 1234", "PHONE")]),
    ("Dr. Lee called from 6175551234", [("6175551234", "PHONE")]),
    ("Sister in Montreal: +1 514 555 0199", [("+1 514 555 0199", "PHONE")]),
    ("Hospice intake 1-800-555-0100", [("1-800-555-0100", "PHONE")]),
    ("CALL DTR 617-555-1234 X1234 AFTER 6", [("617-555-1234 X1234", "PHONE")]),
    ("office (617) 555-1234 ext. 12", [("(617) 555-1234 ext. 12", "PHONE")]),
    ("CONTACT SON 410 202-6694 OR HOME 410 671-9309",
     [("410 202-6694", "PHONE"), ("410 671-9309", "PHONE")]),
    ("Pager # 98765", [("98765", "PHONE")]),
    ("page covering MD, beeper 4471", [("4471", "PHONE")]),
    ("social work ext. 4455", [("4455", "PHONE")]),
    ("paged covering resident PG 56789 re: K+", [("56789", "PHONE")]),
    ("Dr. Ames aware, pg#41234", [("41234", "PHONE")]),
    ("paged 34567 x2, no call back", [("34567", "PHONE")]),
    ("MD to call with update: 410 392 0780 x45.", [("410 392 0780 x45", "PHONE")]),
    ("son visited today (301 273 4516)", [("301 273 4516", "PHONE")]),
    ("Fax: 617-555-9876", [("617-555-9876", "FAX")]),
    ("tel 617-555-1234, fax 617-555-9876",
     [("617-555-1234", "PHONE"), ("617-555-9876", "FAX")]),
    ("records sent to 617-555-1234 (fax)", [("617-555-1234", "FAX")]),
    # Negatives: vitals, ranges, lab values, times, doses, IDs.
    ("BP 120/80, HR 72, RR 18", []),
    ("SVR 900-1300 on neo", []),
    ("U/O 100-1200 CC TODAY", []),
    ("HR 100-1112 in afib", []),
    ("TV 250-1000 cc on PSV", []),
    ("K 4.1, Na 138, glucose 212, WBC 12.5", []),
    ("at 2130 pt resting, 2130-0700 quiet night", []),
    ("lasix 40 mg iv x1 at 1400, heparin 1000 units/hr", []),
    ("MRN 1234567, acct 123-4567", []),
    ("pt weight 72.5 kg, 5551234 on the bag", []),
    ("pg 2 of 3, page 12 of report", []),
    ("I/O 500 300 1500 today", []),
    ("totals 800 250 1200 for shift", []),
    # an extension alone, near a phone word
    ("pls page Dr. Lindgren at x4471 re: plan", [("4471", "PHONE")]),
    # A number "at #" near a phone word; not a bed or a clinic's number.
    ("Dr. Ramanathan paged @ #34219, repleting K", [("34219", "PHONE")]),
    ("pt sat at #4 bed; seen at #12345 clinic", []),
    # A campus digit and a dash before the line.
    ("fellow pager 3-4471 recommends; f/u ext 4-7723 for rehab",
     [("3-4471", "PHONE"), ("4-7723", "PHONE")]),
    ("pg 2-3 of notes; ext 2-3 wks", []),
    ("x2 days, 1x1000 dose; call if WBC 12 x 1000; call x 2000 units", []),
]


@pytest.mark.parametrize(("text", "expected"), PHONE_ROWS)
def test_when_phone_shapes_then_only_phone_numbers_tagged(detector, text, expected):
    """Phones in every common layout; ranges, vitals and IDs are never phones."""
    _check(detector, "phone", text, expected)


# ------------------------------------------------------- e-mail, URL, IP

CONTACT_ROWS = [
    ("email", "send to jdoe@mail.org.", [("jdoe@mail.org", "EMAIL")]),
    ("email", "CONTACT J.DOE+NOTES@PARTNERS.ORG FOR RESULTS",
     [("J.DOE+NOTES@PARTNERS.ORG", "EMAIL")]),
    ("email", "lasix @ 2pm, NS @ 100cc/hr", []),
    ("email", "see x@y for details", []),
    ("url", "portal http://www.example.org/path?x=1.",
     [("http://www.example.org/path?x=1", "URL")]),
    ("url", "(see https://x.org/a)", [("https://x.org/a", "URL")]),
    ("url", "FAMILY BLOG WWW.HOPE4SAM.ORG", [("WWW.HOPE4SAM.ORG", "URL")]),
    ("url", "results on mychart.example.com daily", [("mychart.example.com", "URL")]),
    ("url", "tylenol 650 mg p.o. q.i.d. prn, f/u w/ PCP", []),
    ("url", "jdoe@mail.org", []),
    ("ip", "VPN from 10.0.0.12 at night", [("10.0.0.12", "IPADDR")]),
    ("ip", "host fe80::1ff:fe23:4567:890a up",
     [("fe80::1ff:fe23:4567:890a", "IPADDR")]),
    ("ip", "999.1.2.3 and 256.256.256.256", []),
    ("ip", "abg 80/48/7.45.34.7 on 40%", []),
    ("ip", "events at 10:30:45 and 11:02", []),
]


@pytest.mark.parametrize(("name", "text", "expected"), CONTACT_ROWS)
def test_when_contact_shapes_then_email_url_ip_tagged(detector, name, text, expected):
    """Addresses are tagged once, without sentence punctuation; shorthand is not."""
    _check(detector, name, text, expected)


# ---------------------------------------------------------------------- SSN

SSN_ROWS = [
    ("SSN 123-45-6789 on file", [("123-45-6789", "SSN")]),
    ("pt gave 078-05-1120 at registration", [("078-05-1120", "SSN")]),
    ("ss# 078 05 1120", [("078 05 1120", "SSN")]),
    ("social security number 078051120", [("078051120", "SSN")]),
    ("078051120 was written on the form", []),
    ("000-12-3456 666-12-3456 912-34-5678", []),
    ("123-00-4567 and 123-45-0000", []),
    ("MR# 123-45-67", []),
]


@pytest.mark.parametrize(("text", "expected"), SSN_ROWS)
def test_when_ssn_shapes_then_only_valid_ssns_tagged(detector, text, expected):
    """SSA-invalid areas/groups/serials and bare 9-digit runs are not SSNs."""
    _check(detector, "ssn", text, expected)


# --------------------------------------------------------------------- date

DATE_ROWS = [
    ("Seen 7/22.", [("7/22", "DATE")]),
    ("ADMITTED 07/22/2006 FROM ED", [("07/22/2006", "DATE")]),
    ("Admission Date: 7-22-06", [("7-22-06", "DATE")]),
    ("Report date 2006-07-22.", [("2006-07-22", "DATE")]),
    ("echo 22-Jul-06 showed EF 20%", [("22-Jul-06", "DATE")]),
    ("SEEN 22-JUL-2006 IN CLINIC", [("22-JUL-2006", "DATE")]),
    ("seen Jul 22, 2006 by cards", [("Jul 22, 2006", "DATE")]),
    ("stated it was July 22nd.", [("July 22nd", "DATE")]),
    ("born 22 July 2006", [("22 July 2006", "DATE")]),
    ("ADMITTED ON MARCH 3, 2005", [("MARCH 3, 2005", "DATE")]),
    ("knows it is 20th Oct", [("20th Oct", "DATE")]),
    ("cath on the 22nd of July", [("22nd of July", "DATE")]),
    ("in July, since the 22nd", [("July", "DATE"), ("22nd", "DATE")]),
    ("MI in July 2006, CABG Dec 2005", [("July 2006", "DATE"), ("Dec 2005", "DATE")]),
    ("stent 7/2006", [("7/2006", "DATE")]),
    ("PMH: CAD, AVR 8/88", [("8/88", "DATE")]),
    ("DOB: 01/05/1930", [("01/05/1930", "DATE")]),
    ("11/22/93 0530 neuro: awake", [("11/22/93", "DATE")]),
    ("cultures from 10/15-10/16.", [("10/15", "DATE"), ("10/16", "DATE")]),
    ("ceftaz rec'd 8/2 - 8/10", [("8/2", "DATE"), ("8/10", "DATE")]),
    ("transferred to Quartermain.8/31. Readmitted",
     [("8/31", "DATE")]),
    ("arrived to CCU at 2300 10/15.", [("10/15", "DATE")]),
    ("returned to OR on 7-8 for coiling", [("7-8", "DATE")]),
    ("BC FROM 3-5 GREW STAPH", [("3-5", "DATE")]),  # a culture's result after it
    ("admitted 11.25.26 with CP", [("11.25.26", "DATE")]),
    ("version 2.10.14 installed; ABG 7.3.45; bp 2.10.14", []),
    ("weaned from 4-2 L nc", []),
    ("extubated on 3/5, stable since", [("3/5", "DATE")]),
    # an airway event's date outweighs the vent words before it
    ("wean from vent and extubate 3/11.", [("3/11", "DATE")]),
    ("vent settings unchanged, S/P EXTUBATION 3/8. diuresed", [("3/8", "DATE")]),
    ("on PSV 10/5 since intubation; extubate to 4L NC", []),
    ("since 1/2.", [("1/2", "DATE")]),
    ("HEAD CT-WO ACUTE CHGES. 1/3 EXTUBATED. MADE NO PRESSORS", [("1/3", "DATE")]),
    ("CPAP 5/5 EXTUBATED AT 10; 1/2 NS, transferred", []),
    ("NO GROWTH SO FAR FROM 8/29 CULTURES", [("8/29", "DATE")]),
    ("pt's birthday is tomorrow, may 16, 2015", [("may 16, 2015", "DATE")]),
    ("seen Dec. 10 in clinic", [("Dec. 10", "DATE")]),
    ("Labs 3/4: WBC 11.2", [("3/4", "DATE")]),
    ("Flu shot Oct 2017. PSA 4.1 (2/2017)", [("Oct 2017", "DATE"), ("2/2017", "DATE")]),
    # Negatives: fractions, ratios, vitals, vent settings, scores, ranges.
    ("1/2 NS at 100cc/hr", []),
    ("given 1/2 tab of ativan", []),
    ("CRACKLES 2/3 OF THE WAY UP", []),
    ("rales 1/3-1/2 up bilat", []),
    ("BP 120/80, 110/46-170/90", []),
    ("5/5 strength bilaterally, 4/5 strength RLE", []),
    ("strength 5/5 in all extremities, 4/5 LLE", []),
    ("Grade 2/6 systolic murmur, 2+/4 pulses", []),
    ("ambien 5/10 mg qhs prn, Hgb 10.2/30.1, PT/PTT 14/32", []),
    ("I/O 1200/800, total 4/4 bottles", []),
    ("pain 8/10, rates pain 3/10", []),
    ("4/5 deltoid strength, 3/6 systolic murmur, 2/4 patellar reflexes", []),
    # weeks and days of gestation; a score and its scale
    ("GA 34 3/7 wk with late decels, born at 28 6/7 weeks", []),
    ("CAS 5/7, Katz ADL 3/6, Beighton 7/9, GCS 3/15", []),
    ("seen on 3/7 by ortho", [("3/7", "DATE")]),
    # a dashed date after a visit word, not a range after it
    ("seen 10-3 and admitted 10-17 with CP", [("10-3", "DATE"), ("10-17", "DATE")]),
    ("seen 2-3 times this week, admitted 2-3 days ago", []),
    ("admitted 3/12 systolic 80s", [("3/12", "DATE")]),
    ("HAD 3/10 INCISIONAL PAIN", []),
    ("on PSV 10/5, FiO2 40%", []),
    ("CPAP 5/5, 40%", []),
    ("remains on ps 12/5 peep", []),
    ("SIMV 500x12/5", []),
    ("+3/6 SEM at LSB", []),
    ("CO/CI 5.2/2.8, co/ci 4-6/2-4", []),
    ("1 1/2 hours later", []),
    ("D5 1/2NS, ulcer 2/2cm", []),
    ("MI 1992, CABG '95", []),
    ("ICP 6-7, q 2-3 hours, on 2-3 L NC, on 2-3 pressors", []),
    ("2/31/2006 and 13/22 and 4/31", []),
    ("will dec 10 mg, pt may 2 walk, x 2 may 10 mg", []),
    ("the 3rd floor, admitted on the 22nd", [("22nd", "DATE")]),  # after an event
    ("the 3rd floor, on the 22nd day", []),
]


@pytest.mark.parametrize(("text", "expected"), DATE_ROWS)
def test_when_date_shapes_then_real_dates_tagged_not_clinical_numbers(
        detector, text, expected):
    """Numeric and named dates are tagged; fractions, vitals and settings are not."""
    _check(detector, "date", text, expected)


def test_when_shift_name_follows_date_then_date_still_tagged(detector):
    """``7/22 days`` is a date and a shift; day-units do not unmake dates."""
    text = "7/22 days: stable. 7/23 nights: agitated"
    assert _found(_recognizer(detector, "date"), text) == [
        (0, 4, "DATE"), (19, 23, "DATE")]


# ---------------------------------------------------------------------- age

AGE_ROWS = [
    ("92 yo woman admitted", [("92", "AGE")]),
    ("pt is a 95 year old man", [("95", "AGE")]),
    ("this 95-year-old gentleman", [("95", "AGE")]),
    ("aged 91, lives alone", [("91", "AGE")]),
    ("Age: 103", [("103", "AGE")]),
    ("98 YO GENTLEMAN S/P FALL", [("98", "AGE")]),
    ("91yoF with CHF, 94 Y/O brother", [("91", "AGE"), ("94", "AGE")]),
    ("a woman in her 90s", [("90s", "AGE")]),
    # In words.
    ("a ninety-two year old man", [("ninety-two", "AGE")]),
    ("ONE HUNDRED AND ONE YO F", [("ONE HUNDRED AND ONE", "AGE")]),
    ("seventy-two year old; ninety minutes", []),
    # Turning it, and a birthday's ordinal.
    ("pt turns 95 tomorrow; she turned 91 last month", [("95", "AGE"), ("91", "AGE")]),
    ("she is now 96 and frail", [("96", "AGE")]),
    ("sats 88 on RA, pt now 94, on 4L; HR is now 94 bpm", []),
    ("celebrated her 100th birthday", [("100th", "AGE")]),
    ("her 50th birthday; sat turned 95 on 2L; HR is 97", []),
    # A number and F in the fever range is a person after a possessive.
    ("can we take her 95F with NSTEMI", [("95", "AGE")]),
    ("his 101F fever; her 98F temp; Tmax 101F", []),
    # the aggregated form of HIPAA and de-identified exports, the "+" with it
    ("HPI: 90+ y/o F with CHF; Age: 91+", [("90+", "AGE"), ("91+", "AGE")]),
    ("90+ YO GENTLEMAN, a 92+-year-old wife", [("90+", "AGE"), ("92+", "AGE")]),
    ("85+ yo man, ages 18+ only, 90+ mmHg", []),
    ("85 yo man, 89 year old wife", []),
    ("age 45, aged 60", []),
    ("BP in the 90s, sats in the 90s", []),
    ("neonate aged 91 days", []),
    ("HR 92, RR 95", []),
    # a person said to be it, the number ending the clause
    ("she is 97 and wants DNR", [("97", "AGE")]),
    ("Mother is 94.", [("94", "AGE")]),
    ("PT IS 96, LIVES ALONE", [("96", "AGE")]),
    ("pt is 100cc negative, HR is 97, she is 98% on RA", []),
    ("pt is 95 kg; sat is 97 and stable; pt is 97.5 temp", []),
    # a person by a common first name, in title case
    ("Ruth is 97 and wants DNR", [("97", "AGE")]),
    ("Walter is 92, family meeting today", [("92", "AGE")]),
    ("Sat is 97 on RA. Temp is 97. Glucose is 97. HR is 97, BP stable", []),
    ("John is 95 kg; Ruth is 97% on RA; RUTH IS 97.; ruth is 97.", []),
    # a number right after a titled name
    ("mrs o'connor 98 wants to stop all meds", [("98", "AGE")]),
    ("Mr. Katz 93, DNR, on hospice", [("93", "AGE")]),
    ("Mrs Smith 95 kg; Mr Jones 97% on RA; Mr Jones 98.6 temp; Mrs Lee 85 yo", []),
    # with the sex letter alone, never a Fahrenheit temperature
    ("flagged Benadryl for Ottoline Przybylski 91F", [("91", "AGE")]),
    ("a 93 M with CHF, his wife 91F", [("93", "AGE"), ("91", "AGE")]),
    ("Tmax 101F, 99F this am; 16F foley; 45M with CP", []),
    # opening a line, before the history; inside a line a measure's
    ("objective data\n\n98 s/p left hip fx", [("98", "AGE")]),
    ("CCU NPN\n  90+ S/P CABG", [("90+", "AGE")]),
    ("sats 98 s/p suctioning\nSBP 95 s/p bolus", []),
    ("85 s/p fall\n98.6 s/p tylenol", []),
]


@pytest.mark.parametrize(("text", "expected"), AGE_ROWS)
def test_when_age_phrases_then_only_ages_over_89_tagged(detector, text, expected):
    """Ages over 89 with an age word; younger ages and vitals are left alone."""
    _check(detector, "age", text, expected)


# ---------------------------------------------------------------------- IDs

ID_ROWS = [
    ("MRN: 1234567", [("1234567", "MEDICALRECORD")]),
    # Letters and digits interleaved, as Medicare beneficiary ids are.
    ("Medicare # 1EG4-TE5-MK72", [("1EG4-TE5-MK72", "HEALTHPLAN")]),
    ("ID: TMAX-99, WBC 12.1; id: 12mg; ID: 2x3cm2 wound", []),
    ("MR# 123-45-67 on band", [("123-45-67", "MEDICALRECORD")]),
    ("Medical record number 00123", [("00123", "MEDICALRECORD")]),
    ("PT MRN 7654321 CONFIRMED", [("7654321", "MEDICALRECORD")]),
    ("Acct 12345", [("12345", "ACCOUNT")]),
    ("billing account # 98765432", [("98765432", "ACCOUNT")]),
    ("policy # ABC123456", [("ABC123456", "HEALTHPLAN")]),
    ("member id: XYZ12345", [("XYZ12345", "HEALTHPLAN")]),
    ("DL # S1234567", [("S1234567", "LICENSE")]),
    ("license no. 12345", [("12345", "LICENSE")]),
    ("should arrive this morning (ref # 8336652)", [("8336652", "IDNUM")]),
    ("SMITH, JOHN MD  JOB#: 1234567", [("1234567", "IDNUM")]),
    ("taken into account 2 doses, account of 1999", []),
    ("unit no 12, MR 12, mrn pending", []),
    ("ID consult 1234 today, policy reviewed", []),
]


@pytest.mark.parametrize(("text", "expected"), ID_ROWS)
def test_when_id_keyword_then_id_tagged_without_keyword(detector, text, expected):
    """The keyword picks the label and stays out of the span."""
    _check(detector, "id", text, expected)


# ----------------------------------------------------------------- detector


def test_when_created_by_name_then_rule_detector_with_all_labels():
    """The registry builds it from a TaggerConfig, as the Beam workers do."""
    (built,) = create(TaggerConfig(detectors=("rules",)))
    assert isinstance(built, RuleDetector)
    assert built.name == "rules"
    assert {"PHONE", "FAX", "EMAIL", "URL", "IPADDR", "SSN", "DATE", "AGE",
            "MEDICALRECORD", "ACCOUNT", "HEALTHPLAN", "LICENSE",
            "IDNUM"} <= set(built.labels)
    assert built.version.endswith(f"data{default_config()['version']}")


def test_when_detecting_then_spans_sorted_with_sources_and_overlaps_kept(detector):
    """All recognizers run; an SSN-shaped MRN is both, for the merge to settle."""
    text = ("Seen 7/22/2006, call 617-555-0142 or jdoe@mail.org. "
            "MRN 123-45-6789. 92 yo.")
    spans = detector.detect(ClinicalDocument("n1", text, "text"))
    assert list(spans) == sorted(spans)
    got = [(text[s.start:s.end], s.label, s.source) for s in spans]
    assert got == [
        ("7/22/2006", "DATE", "rules:date"),
        ("617-555-0142", "PHONE", "rules:phone"),
        ("jdoe@mail.org", "EMAIL", "rules:email"),
        ("123-45-6789", "MEDICALRECORD", "rules:id"),
        ("123-45-6789", "SSN", "rules:ssn"),
        ("92", "AGE", "rules:age"),
    ]


def test_when_two_detectors_built_then_recognizers_compiled_once():
    """The packaged patterns are compiled once per process, not per detector."""
    assert RuleDetector().recognizers is RuleDetector().recognizers


def test_when_detecting_then_no_regex_is_compiled_per_record(detector, monkeypatch):
    """Per-record work uses only precompiled patterns, never the re module.

    The first text that needs a mix of a recognizer's patterns compiles that
    mix once (``PatternRecognizer._expression``); a record after it compiles
    nothing, whether through ``re`` or the kept programs (``_sre.compile`` is
    where both end).
    """
    import _sre

    text = "Seen 7/22, 1/2 NS, fax 617-555-1234, 92 yo, MRN 1234567, 10.0.0.1 x.org"
    first = detector.detect(ClinicalDocument("n", text, "text"))
    compiled: list[str] = []

    def forbidden(*args, **kwargs):
        compiled.append(str(args[:1]))
        raise RuntimeError("regex compiled per record")

    for fn in ("compile", "search", "match", "fullmatch", "finditer", "findall",
               "sub", "split"):
        monkeypatch.setattr(re, fn, forbidden)
    monkeypatch.setattr(_sre, "compile", forbidden)
    try:
        again = detector.detect(ClinicalDocument("n2", text, "text"))
    finally:
        monkeypatch.undo()
    assert not compiled
    assert again == first and first


def test_when_site_config_then_custom_keywords_and_recognizers_used():
    """A hospital extends the vocabulary and adds a recognizer in rules.json form."""
    config = dict(default_config())
    config["version"] = "site-7"
    config["ids"] = {**config["ids"], "MEDICALRECORD": ["empi", "mrn"]}
    config["custom"] = [{
        "name": "device", "label": "DEVICE", "context": ["pacer", "serial"],
        "patterns": [{"name": "serial", "regex": r"\b[A-Z]{3}\d{6}\b",
                      "confidence": 0.8, "needs_context": True}],
    }]
    site = RuleDetector.from_dict(config)
    text = "EMPI 99887766. Pacer serial PJN123456.\nLot code ABC654321 on the box."
    got = [(text[s.start:s.end], s.label, s.source, s.confidence)
           for s in site.detect(ClinicalDocument("n", text, "text"))]
    assert got == [("99887766", "MEDICALRECORD", "rules:id", 1.0),
                   ("PJN123456", "DEVICE", "rules:device", 0.8)]
    assert site.version.endswith("datasite-7")
    assert "DEVICE" in site.labels


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"label": "PHONE", "patterns": []}, "no patterns"),
    ({"label": "PHONE", "patterns": [Pattern("bad", r"(unclosed")]}, "bad pattern"),
    ({"label": "TELEPHONE", "patterns": [Pattern("p", r"\d+")]}, "unknown PHI label"),
])
def test_when_recognizer_misconfigured_then_rejected_at_construction(kwargs, message):
    """Configuration errors surface when the detector is built, not mid-run."""
    with pytest.raises(ValueError, match=message):
        PatternRecognizer("custom", **kwargs)


def _long_lines() -> list[str]:
    rng = random.Random(7)
    alphabet = "0123456789/-.:@ abxyzMRN#()+%"
    size = 100_000
    return [
        "".join(rng.choice(alphabet) for _ in range(size)),
        "1/" * (size // 2),
        "12-" * (size // 3),
        "1" * size,
        "a" * size,
        "a." * (size // 2),
        "a-" * (size // 2),
        "7/22/" * (size // 5),
        "mrn " * (size // 4),
        "1.2." * (size // 4),
        ":a" * (size // 2),
        "x" + "0" * size + "@",
    ]


@pytest.mark.parametrize("index", range(12))
def test_when_100k_character_line_then_detection_returns(detector, index):
    """No catastrophic backtracking: pathological lines finish (not timed strictly)."""
    text = _long_lines()[index]
    assert len(text) >= 99_990
    spans = detector.detect(ClinicalDocument("long", text, "text"))
    assert all(0 <= s.start < s.end <= len(text) for s in spans)


# ------------------------------------------------------------------- corpus


def test_when_run_on_physionet_corpus_then_date_phone_precision_at_least_90(
        detector, physionet_docs):
    """Token precision of DATE+PHONE spans against the gold (any PHI counts)."""
    correct = total = 0
    for doc in physionet_docs:
        spans = [s for s in detector.detect(doc) if s.label in ("DATE", "PHONE")]
        for start, end in metric_tokens(doc.text):
            if not any(s.start < end and start < s.end for s in spans):
                continue
            total += 1
            correct += any(g.start < end and start < g.end for g in doc.gold)
    assert total > 400
    assert correct / total >= 0.9


def test_when_run_on_physionet_corpus_then_most_non_year_dates_and_phones_found(
        detector, physionet_docs):
    """Recall guard: bare years are left to the CRF, the rest the rules find."""
    bare_year = re.compile(r"'?\d{2,4}'?s?", re.IGNORECASE)
    found = total = 0
    for doc in physionet_docs:
        spans = detector.detect(doc)
        for gold in doc.gold:
            if gold.label not in ("DATE", "PHONE"):
                continue
            if bare_year.fullmatch(doc.text[gold.start:gold.end]):
                continue
            total += 1
            found += any(s.start < gold.end and gold.start < s.end for s in spans)
    assert total > 250
    assert found / total >= 0.85



# -------------------------------------------------------------------- names

NAME_ROWS = [
    ("K 5.9. R. PELLEGRINO AWARE, WILL RECHECK", [("R. PELLEGRINO", "DOCTOR")]),
    ("valuables counted by nsg (t. okafor and m. o'halloran)",
     [("t. okafor", "DOCTOR"), ("m. o'halloran", "DOCTOR")]),
    ("CVL placed by J. Whitfield, CXR pending", [("J. Whitfield", "DOCTOR")]),
    # After a cue, an initial and a surname that is also a word.
    ("TRIPLE CVL BY B. WHITE. BLEEDING AT SITE", [("B. WHITE", "DOCTOR")]),
    ("REVERSALS NOT GIVEN PER L. WHITE PA.", [("L. WHITE", "DOCTOR")]),
    ("treated with E. coli sensitive abx; by S. Aureus coverage", []),
    # ... or after a first name: both halves found (the merge joins them).
    ("Submitting Physician: Jessica E. Brown",
     [("Jessica E.", "DOCTOR"), ("E. Brown", "DOCTOR")]),
    ("Hepatitis B. White count up; Vitamin K. Brown sugar", []),
    ("per L. hand surgery; per L. Hand surgery", []),
    ("MRS KOWALCZYK RESTING, HUSBAND AT BEDSIDE", [("KOWALCZYK", "PATIENT")]),
    ("mr.delacroix returned from OR", [("delacroix", "PATIENT")]),
    ("social: son bernard called, updated", [("bernard", "RELATIVE")]),
    ("DAUGHTER, ROSALIND, IS HCP", [("ROSALIND", "RELATIVE")]),
    # A section label hyphened to the relation.
    ("COPING-SISTER ,ANDREA HAS PHONED TODAY", [("ANDREA", "RELATIVE")]),
    ("SOCIAL-son leopold called twice", [("leopold", "RELATIVE")]),
    ("pt now post-op, x-son clip; by-son will visit", []),
    # Shorthand that looks like an initial and a name, and is not.
    ("no N/V. ABD soft, +BS", []),
    ("A&O. MAE, follows commands", []),
    ("UA sent; urine grew E. coli, c. diff negative, S. aureus in sputum", []),
    ("pt.got v.agitated overnight", []),
    ("drsg C/D/I. Neo weaned", []),
    # A relation or title followed by an ordinary word.
    ("son came in, daughter states pt was confused, friendly", []),
    ("MS CHANGES OVERNIGHT; MRI's reviewed; plan unclear", []),
    ("wife Will visit tomorrow", []),  # "will" is too common to be taken
    ("gi: mrs. Park ate small amount of oatmeal", [("Park", "PATIENT")]),
    ("MRS PARK ATE SMALL AMOUNT", []),  # capitals say nothing in an all-caps note
    ("MRS. PARK ATE SMALL AMOUNT", [("PARK", "PATIENT")]),  # the title's stop does
    ("mr. brown returned from or", [("brown", "PATIENT")]),
    ("Pt's wife, Mrs. Okonjo, at bedside", [("Okonjo", "PATIENT")]),  # rare word
    ("A:WO IMPROVEMENT IN MS. TOLERATING EXTUBATION; monitor ms. replete lytes", []),
    # A referral letter's patient after "thank you for seeing".
    ("THANK YOU FOR SEEING VILLA, LISA (DOB 08/27/1932)", [("VILLA, LISA", "PATIENT")]),
    ("Thank you for seeing Crystal C. (DOB 08/19/1924)", [("Crystal C.", "PATIENT")]),
    ("THANK YOU FOR SEEING COX, JOSHUA (DOB 01/14/1968)", [("COX, JOSHUA", "PATIENT")]),
    ("Thank you for seeing this patient; thank you for seeing him", []),
    # The person an age is given for, first on a line or in a sentence.
    ("Nguyen, 45 yo F with chest pain", [("Nguyen", "PATIENT")]),
    ("seen today. Takahashi, 89 yo on donepezil", [("Takahashi", "PATIENT")]),
    ("note:\nKowalczyk 72 y/o M s/p CABG", [("Kowalczyk", "PATIENT")]),
    ("Patient, 45 yo F. Obese 62 yo man. Lasix 40 mg. Asian 45 yo", []),
    ("saw Nguyen, 45 yo F", []),  # mid-sentence: the shape alone says too little
    # ... or with the sex letter alone, or after for/in/of, or a record number.
    ("Okonkwo 78M s/p CABG 3/14", [("Okonkwo", "PATIENT")]),
    ("Nguyen 98 yoF, Fahrenheit aside", [("Nguyen", "PATIENT")]),  # an age word
    ("Wanjiru Kamau, 29F, 3 wks postpartum", [("Wanjiru Kamau", "PATIENT")]),
    ("Benadryl for Ottoline Przybylski 91F", [("Ottoline Przybylski", "PATIENT")]),
    ("Neurocysticercosis in Xochitl Ramírez-Tzul, 22F seen",
     [("Xochitl Ramírez-Tzul", "PATIENT")]),
    ("Maeve D'Arcy, MRN 00917734, Ca 13.2", [("Maeve D'Arcy", "PATIENT")]),
    ("order for Foley 16F coude. Tmax 101F. Ward 300M. Labs, MRN 12345", []),
    # An age in brackets after the name.
    ("Toby (the 6 yo in room 3) has a fever", [("Toby", "PATIENT")]),
    ("Pain (a 6 yo scale). Lasix (40 yo)", []),
    # An age alone between commas.
    ("Ignatius Obi, 62, post-op day 2", [("Ignatius Obi", "PATIENT")]),
    ("Pain, 7, worse at night. Lasix, 40, given. Smith, 450, counted", []),
    # A query typed in lower case: two words first on the line, both names.
    ("francesca russo 81F fell at home", [("francesca russo", "PATIENT")]),
    ("haruto kobayashi, 45M, fever + eschar", [("haruto kobayashi", "PATIENT")]),
    ("chest pain 45M\nstable angina 67M\nsickle cell 22F\nnew pt 45M", []),
    ("pt ngo thi lan, 66F, from Houston", [("ngo thi lan", "PATIENT")]),
    ("aoife ní bhriain 19F, anorexia", [("aoife ní bhriain", "PATIENT")]),
    ("pt has new af 67M\npt with chest pain 45M", []),
    # A common surname after a name; a clinical word's pair is no name.
    ("Soo-ah Park 29F at 34 weeks", [("Soo-ah Park", "PATIENT")]),
    ("Sickle Cell 22F in crisis. Stable Angina 67M", []),
    # Whose relative it is, and a family by its name: the patient.
    ("harpreet singh's mom asking about MMR", [("harpreet singh", "PATIENT")]),
    ("asked Carol's husband to call", [("Carol", "PATIENT")]),
    ("Tran family from out of town", [("Tran", "PATIENT")]),
    ("the Hendersons want to take their dad home", [("Hendersons", "PATIENT")]),
    ("her roommate, Tamsin, called", [("Tamsin", "RELATIVE")]),
    ("godson Ignatius called; caregiver Remedios at bedside",
     [("Ignatius", "RELATIVE"), ("Remedios", "RELATIVE")]),
    # In-laws, a dash after the relation, a capitalised name no list knows.
    ("brother-in-law Casimir; Health care proxy - Anselm; foster mother Yevgenia",
     [("Casimir", "RELATIVE"), ("Anselm", "RELATIVE"), ("Yevgenia", "RELATIVE")]),
    ("wife - Aware of plan; son Hospitalized; daughter Mcv; son - Qvar", []),
    # The relation or the role, "is", then the name; not a faith or an origin.
    ("daughter is Shaniqua, HCP; her social worker is Latrice",
     [("Shaniqua", "RELATIVE"), ("Latrice", "DOCTOR")]),
    ("case worker Deshawn called", [("Deshawn", "DOCTOR")]),
    # A rare surname names a relative too; a common one or a finding does not.
    ("son-in-law Rafferty drove her in", [("Rafferty", "RELATIVE")]),
    # A word English hardly uses; a relation after a cue is still read.
    ("baseline A+Ox2 per niece Tovah, currently A+Ox1", [("Tovah", "RELATIVE")]),
    ("wife Tearful at bedside; son Lasix given", []),
    # In a line of capitals a name no list knows; a first name that called.
    ("GIRLFRIEND DESHAWNA CALLED, WOULD NOT LEAVE NUMBER.", [("DESHAWNA", "RELATIVE")]),
    ("SOCIAL: NEPHEW WILL CALLED FROM HOME", [("WILL", "RELATIVE")]),
    ("FH: FATHER CABG AT 60, MOTHER NIDDM, SISTER AFIB; nephew will call back", []),
    ("son and grandson both visited today; SON AND GRANDSON BOTH VISITED", []),
    # Nor a misspelt word (one letter from a common one).
    ("SOCIAL: WIFE VISTED, DAUGHTER UPDATTED ON PLAN", []),
    ("son Hospitalized; wife Pneumonia; sister Dialysis", []),
    ("guardian is attorney Miriam Feldstein", [("Miriam Feldstein", "DOCTOR")]),
    ("son is Aware. friend is Muslim. wife is Jewish. social worker is aware", []),
    ("the Browns and the Smiths visited; the Foleys were changed; per the Labs", []),
    ("the patient's mom; Pt's wife; the baby's dad; his wife's sister", []),
    ("Nuclear family supportive. Foster family aware. Entire family here", []),
    # A newborn by name.
    ("baby Hope born at 38 weeks, apgars 8/9", [("Hope", "PATIENT")]),
    ("patel baby born by c-section", [("patel", "PATIENT")]),
    ("Baby boy Oyelaran born 2/27", [("Oyelaran", "PATIENT")]),
    ("baby girl doing well, baby boy born at 0300, baby boy Tylenol given", []),
    ("baby tylenol given, baby food ok, baby boy doing well, baby monitor on", []),
    ("IV Lopressor 15mg, 2 Baby ASA. Chest pain resolved", []),
    # A title and an initial alone.
    ("micu nursing progress\nmr K remained on same doses of pressors",
     [("K", "PATIENT")]),
    ("spoke with Ms J. about her care", [("J", "PATIENT")]),
    ("spoke with ms j. about her care", []),  # a capital, or it is no initial
    # A title, an initial and a surname the lists also call a finding (bridges).
    ("read discussed with Dr. H. Bridges today", [("H. Bridges", "DOCTOR")]),
    ("Read discussed with Dr. H. Bridges. Dictated", [("H. Bridges", "DOCTOR")]),
    ("DR. H. BRIDGES AWARE OF K 3.1", [("H. BRIDGES", "DOCTOR")]),
    ("spoke with Dr. K. Will call back", [("K", "DOCTOR")]),
    ("Mr. K. Stable overnight", [("K", "PATIENT")]),
    ("MS A&O X3, MAE; MS: A+O", []),  # mental status, not Ms. A
    # Listed names before "aware" and after "per", with no title.
    ("RUN OF VENT BIGEMINY LENA HOLLISTER AWARE. MGSO4 GIVEN",
     [("LENA HOLLISTER", "DOCTOR")]),
    ("NSR WITH PVCS, BIGEMINY WHITAKER NOTIFIED", [("WHITAKER", "DOCTOR")]),
    ("LASIX HELD PER BRENNAN, RECHECK LYTES", [("BRENNAN", "DOCTOR")]),
    ("neurosurgery aware. intern notified of bs; MDs aware of rash", []),
    ("heparin per protocol, LVF per TEE, vent per ABG", []),
    # Listed as surnames somewhere, yet a test or a unit here (rules.json not_names).
    ("PULSES PER DOPPLER. MICU AWARE, EEG AWARE", []),
    ("social: pt married, husband MD (ENT), three children", []),
    # A common first name and a listed surname, with no cue at all.
    ("HCP IS DOLORES FENWICK OF SOCIAL WORK", [("DOLORES FENWICK", "RELATIVE")]),
    # a first name that is no English word vouches for a surname that is one
    ("Also, I spoke with NICOLE YOUNG, who will meet", [("NICOLE YOUNG", "DOCTOR")]),
    ("PUPILS EQUAL, IRIS BROWN; Grace White aware", []),
    ("family meeting set; Ingrid Okafor to call back", [("Ingrid Okafor", "DOCTOR")]),
    # Listed names both, yet shorthand, a rare first name or a place.
    ("MED PRN PAIN; FEM ALINE OUT; SWALLOW EVAL DONE", []),
    ("BEAR HUGGER ON; GRACE PERIOD; SON FROM HELEN BALTIMORE", []),
]


@pytest.mark.parametrize("text,expected", NAME_ROWS)
def test_names_recognizer(detector, text, expected):
    _check(detector, "names", text, expected)


STAFF_ROWS = [
    ("plan per dr okonkwo-baptiste, f/u in am", [("okonkwo-baptiste", "DOCTOR")]),
    ("HO Vantongeren notified of K 3.1", [("Vantongeren", "DOCTOR")]),
    ("met with dr.lindqvist and family", [("lindqvist", "DOCTOR")]),
    ("Dr paged, RN aware, MD aware", []),
    ("RN sats 95% on 2L", []),
    # "Drs" and a list: every name of it, up to the first word that is not one.
    ("NSICU called and Drs Marchetti and Oyelaran in to see pt",
     [("Marchetti", "DOCTOR"), ("Oyelaran", "DOCTOR")]),
    ("Drs. Kowalski, Brandt, and Nakamura saw pt",
     [("Kowalski", "DOCTOR"), ("Brandt", "DOCTOR"), ("Nakamura", "DOCTOR")]),
    ("DRS HALVORSEN/ABERNATHY AWARE",
     [("HALVORSEN", "DOCTOR"), ("ABERNATHY", "DOCTOR")]),
    ("seen by Drs Lindqvist and team, plan per pulmonary", [("Lindqvist", "DOCTOR")]),
    # A second word that reads as a surname is taken with the first name.
    ("spoke with Dr Will Cole (attending)", [("Will Cole", "DOCTOR")]),
    ("Dr. Sarah O'Driscoll spoke with family", [("Sarah O'Driscoll", "DOCTOR")]),
    ("Dr Okafor Aware of plan", [("Okafor", "DOCTOR")]),
    # A nurse, an interpreter, a chaplain by name; never their common words.
    ("VNA nurse Gwendolyn called", [("Gwendolyn", "DOCTOR")]),
    ("nurse aware of plan; nurse will call; interpreter present; NURSE MANAGER AWARE",
     []),
    # A function word some list calls a first name is never widened into one.
    ("K. Oduya, RN. the Hendersons called", []),
    # A common surname that is a word, after a title and a common first name.
    ("Orders signed on chart by Dr. Art White. Will stop pressors",
     [("Art White", "DOCTOR")]),
    ("Dr. Ann Green aware; Dr. Brown Hospital; DR. ART WHITE",
     [("Ann Green", "DOCTOR"), ("Brown", "DOCTOR"), ("ART", "DOCTOR")]),
    # After a doctor's title even a common surname, and an initial.
    ("spoke at length w/ dr kowalski, dr small today", [("kowalski", "DOCTOR"),
                                                         ("small", "DOCTOR")]),
    ("Dr. Brown to see pt; seen by Dr. K this am", [("Brown", "DOCTOR"),
                                                   ("K", "DOCTOR")]),
    ("dr will call back; dr aware; dr may come by; the doctor must see", []),
    ("RN small amt of blood", []),  # only a doctor's title vouches for "small"
    # A name in the possessive: the name without its 's.
    ("rectal tube placed per dr. white's order", [("white", "DOCTOR")]),
    ("per Dr. Kowalski's note; Mrs. Okafor's daughter called",
     [("Kowalski", "DOCTOR"), ("Okafor", "PATIENT")]),
    ("dr's orders; per MD's note; Dr. paged's", []),
]


@pytest.mark.parametrize("text,initials", [
    ("pmicu nursing progress\nmr a remained on same doses", [26]),
    ("mrs t. resting comfortably; ms a little confused; mr a&o x3", [4]),
    ("Mr a remained on same doses", []),  # a capital on the line: no initial
])
def test_a_lower_case_line_has_initials_after_mr_and_mrs(detector, text, initials):
    # An initial alone is too short for the row helper's unique substrings.
    assert _found(_recognizer(detector, "names"), text) == [
        (i, i + 1, "PATIENT") for i in initials]


@pytest.mark.parametrize("text,expected", STAFF_ROWS)
def test_names_recognizer_after_staff_titles(detector, text, expected):
    _check(detector, "names", text, expected)


CREDENTIAL_ROWS = [
    ("not following commands.  florencia cooke np into eval.",
     [("florencia cooke", "DOCTOR")]),
    ("Social: Andrwe O'connell MD spoke with pt's daughter",
     [("Andrwe O'connell", "DOCTOR")]),
    ("QUIET NIGHT FOR PT.\n DAN A. FORMAN-LYONS, RRT\n",
     [("DAN A. FORMAN-LYONS", "DOCTOR")]),
    ("Okonkwo, RN", [("Okonkwo", "DOCTOR")]),
    # A surname English hardly uses and no list names (band 1), capitalised.
    ("-- K. Oduya, RN", [("Oduya", "DOCTOR")]),
    ("TRANSFERRED FROM MICU, RN AWARE; pt from cvicu, RN at bedside", []),
    # Two surnames joined, each alone a word or a town.
    ("and now RLL. MURPHY-WHITE MD plans to attempt talc",
     [("MURPHY-WHITE", "DOCTOR")]),
    ("Black-King MD plans pleurodesis", [("Black-King", "DOCTOR")]),
    # A surname that is a common word, after a listed first name.
    ("7.40/35/64/22/-1. nicole young, R.N.", [("nicole young", "DOCTOR")]),
    ("CENTRAL LINE OK PER BOBBY BROWN NP", [("BOBBY BROWN", "DOCTOR")]),
    ("skin pink, RN aware; stool brown, MD aware; pt young, RN at bedside", []),
    # Places, units, prepositions and oxygen before the same letters.
    ("moved from Annapolis, MD last year", []),
    ("lives at 12 Oak Rd, Lutherville, MD 21093-1234", [("Lutherville", "CITY")]),
    ("seen by renal MD; micu md aware", []),
    ("sats 95% on 4L NP, CCU RN at bedside", []),
    ("husband MD (ENT), three children", []),
    ("moved from Wilkes-Barre, MD last year", []),
]


INSTITUTION_ROWS = [
    ("PT WAS TRANSFERED TO THE ZAGARIA CAMPUS FOR GI", [("ZAGARIA", "HOSPITAL")]),
    ("called out to tele surgical bed on mackerer campus", [("mackerer", "HOSPITAL")]),
    ("wishes to return to St Mary's after weaning", [("St Mary's", "HOSPITAL")]),
    ("transfer to st. joseph medical center", [("st. joseph", "HOSPITAL")]),
    ("ST elevation in V2-V4, st changes resolved", []),
    ("back to the main campus; pt may not leave building", []),
]


@pytest.mark.parametrize("text,expected", INSTITUTION_ROWS)
def test_institution_names(detector, text, expected):
    _check(detector, "institutions", text, expected)


UNIVERSITY_ROWS = [
    ("went to UOf Maryland Hosp and had ant st elev", [("UOf Maryland", "HOSPITAL")]),
    ("start IV insulin per U Maryland scale", [("U Maryland", "HOSPITAL")]),
    ("FROM UNIVERSITY OF MD MEDICAL CENTER", [("UNIVERSITY OF MD", "HOSPITAL")]),
    ("records from Univ. of North Carolina", [("Univ. of North Carolina", "HOSPITAL")]),
    # or a US city (a lower-case "u" after a number is units)
    ("on insulin drip following U Honolulu scale", [("U Honolulu", "HOSPITAL")]),
    ("cont insulin drip following u honolulu scale", [("u honolulu", "HOSPITAL")]),
    ("films from University of Chicago; seen at u of miami",
     [("University of Chicago", "HOSPITAL"), ("u of miami", "HOSPITAL")]),
    # or a person or a place no list holds (other hospitals' universities)
    ("ADMITTED TO UNIVERSITY OF DELANEY ER W/ STEMI",
     [("UNIVERSITY OF DELANEY", "HOSPITAL")]),
    ("transferred from Univ of Hudson for cath", [("Univ of Hudson", "HOSPITAL")]),
    ("insulin per U Hudson scale, U of Hudson consult",
     [("U Hudson", "HOSPITAL"), ("U of Hudson", "HOSPITAL")]),
    ("seen at University of Notre Dame clinic; UNIV OF DELANEY ER",
     [("University of Notre Dame", "HOSPITAL"), ("UNIV OF DELANEY", "HOSPITAL")]),
    # a state code needs "of"; places that are no state or city, and "u" as "you"
    ("told u or me; u md aware; gave 10 u boston", []),
    ("u of pt, U of urine, U of lab", []),
    # common words, drugs, units, and a lower-case u before a surname
    ("university of health sciences; gave 10 U Delaney; u delaney aware", []),
]


@pytest.mark.parametrize("text,expected", UNIVERSITY_ROWS)
def test_universities_named_after_a_state_or_city(detector, text, expected):
    _check(detector, "universities", text, expected)


@pytest.mark.parametrize("text,expected", CREDENTIAL_ROWS)
def test_credential_names(detector, text, expected):
    _check(detector, "credentials", text, expected)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Chest x-ray 8/23: no acute process.", ["8/23"]),
        ("CXR done, x-ray 6/30 clear", ["6/30"]),
        ("given 2 x 3/4 tabs", []),
        ("pt-ptt 1/2 normal", []),
    ],
)
def test_when_negative_word_starts_a_hyphenated_word_then_it_is_not_negative(
    text, expected
):
    spans = RuleDetector.from_dict(default_config()).detect(
        ClinicalDocument(doc_id="x", source="text", text=text))
    assert [text[s.start:s.end] for s in spans if s.label == "DATE"] == expected


def test_a_full_name_s_reading_is_kept_for_its_lexicon(detector):
    """Two long words recur in capitals (``NEURO ALERT``): read once per lexicon."""
    from deid_pipeline.tagger import lexicons
    from deid_pipeline.tagger.rules import names

    text = "family meeting set; Ingrid Okafor to call back. NEURO ALERT."
    for _ in range(2):  # the second time from what the first kept
        _check(detector, "names", text, [("Ingrid Okafor", "DOCTOR")])
    kept = names._FULL_NAME_READS.current  # noqa: SLF001
    assert kept[(id(lexicons.load()), "Ingrid", "Okafor")] is True
    assert kept[(id(lexicons.load()), "NEURO", "ALERT")] is False
