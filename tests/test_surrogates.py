"""Surrogate generators: never the original, same format, keyed and deterministic.

Property-based where the property is general (every generator), tables where a
specific form matters (the date formats the tagger finds, Safe Harbor rules).
"""
# ruff: noqa: D103  (test names say what each test checks)

from __future__ import annotations

import datetime
import ipaddress
import re
import threading
from dataclasses import dataclass

import pytest
from faker.providers.person.en_US import Provider as PersonData
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_pipeline.labels import LABELS
from deid_pipeline.surrogates import (
    GENERATORS,
    RESTRICTED_ZIP3,
    SurrogateError,
    _memo,
    date_shift_days,
    parse_date,
    safe_harbor_zip3,
    surrogate,
)
from deid_pipeline.surrogates.dates import REFERENCE_YEAR

KEY = b"0123456789abcdef0123456789abcdef"
OTHER_KEY = b"fedcba9876543210fedcba9876543210"
AS_OF = 2025
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Ctx:
    """A surrogate context without the rewrite module (the protocol is enough)."""

    key: bytes = KEY
    person_id: str = "a1b2c3d4e5f6a7b8c9d0"
    policy: str = "safe-harbor"
    as_of_year: int = AS_OF
    min_shift_days: int = 365
    max_shift_days: int = 3 * 365


CTX = Ctx()
LDS = Ctx(policy="limited-dataset")
FIRST_NAMES = sorted(PersonData.first_names)
LAST_NAMES = sorted(PersonData.last_names)
persons = st.text("0123456789abcdef", min_size=20, max_size=20)
keys = st.binary(min_size=16, max_size=32)


def shape(text: str) -> str:
    """Character classes: 9 for a digit, A/a for a letter, other characters as is."""
    return "".join("9" if c.isdigit() else ("A" if c.isupper() else "a") if c.isalpha()
                   else c for c in text)


def offset(ctx: Ctx = CTX) -> datetime.timedelta:
    days = date_shift_days(ctx.key, ctx.person_id, ctx.min_shift_days,
                           ctx.max_shift_days)
    return datetime.timedelta(days=days)


def test_when_any_label_then_one_generator_serves_it():
    assert set(GENERATORS) == set(LABELS)


def test_when_label_unknown_then_surrogate_raises():
    with pytest.raises(SurrogateError):
        surrogate("x", "NOT_A_LABEL", CTX)


def test_when_cache_cleared_then_output_is_recomputed_identically():
    values = [("PATIENT", "John Smith"), ("DATE", "7/22/2006"), ("SSN", "123-45-6789"),
              ("HOSPITAL", "Harford Memorial"), ("STREET", "12 Main St")]
    first = [surrogate(v, lab, CTX) for lab, v in values]
    _memo.cache_clear()
    assert [surrogate(v, lab, Ctx()) for lab, v in values] == first


def test_when_threads_share_generators_then_results_match_a_serial_run():
    values = [f"{FIRST_NAMES[i]} {LAST_NAMES[i]}" for i in range(200)]
    _memo.cache_clear()
    serial = [surrogate(v, "PATIENT", CTX) for v in values]
    results: dict[int, list[str]] = {}

    def work(n: int) -> None:
        results[n] = [surrogate(v, "PATIENT", Ctx(person_id=CTX.person_id))
                      for v in values]

    _memo.cache_clear()
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == serial for r in results.values())


# ---- names -------------------------------------------------------------------

cases = st.sampled_from([str.upper, str.lower, str.title])


@SETTINGS
@given(first=st.sampled_from(FIRST_NAMES), last=st.sampled_from(LAST_NAMES),
       case=cases, label=st.sampled_from(["PATIENT", "DOCTOR", "RELATIVE"]))
def test_when_name_replaced_then_every_part_changes_and_keeps_case(first, last, case,
                                                                   label):
    value = case(f"{first} {last}")
    out = surrogate(value, label, CTX)
    parts, new = value.split(" "), out.split(" ")
    assert len(new) == 2
    for a, b in zip(parts, new):
        assert a.casefold() != b.casefold()
    if case is str.upper:
        assert out == out.upper()
    elif case is str.lower:
        assert out == out.lower()
    else:
        assert all(p[0].isupper() for p in new)


@SETTINGS
@given(first=st.sampled_from(FIRST_NAMES), last=st.sampled_from(LAST_NAMES),
       person=persons)
def test_when_name_part_recurs_then_person_gets_same_surrogate_part(first, last,
                                                                    person):
    ctx = Ctx(person_id=person)
    full = surrogate(f"{first} {last}", "PATIENT", ctx)
    alone = surrogate(last, "PATIENT", ctx)
    inverted = surrogate(f"{last.upper()}, {first.upper()}", "PATIENT", ctx)
    titled = surrogate(f"Mr. {last}", "RELATIVE", ctx)
    new_first, new_last = full.split(" ")
    assert alone == new_last
    assert inverted == f"{new_last.upper()}, {new_first.upper()}"
    assert titled == f"Mr. {new_last}"


@pytest.mark.parametrize("first", ["Aurelio", "Zainab", "Deshawn", "Latrice"])
def test_when_first_name_faker_lacks_then_surrogate_is_a_first_name(first):
    # Listed as first names by the tagger's lists, not by Faker's: the
    # surrogate of "Aurelio lives alone" was a surname ("Black lives alone").
    from deid_pipeline.surrogates.names import name_tables

    tables = name_tables()
    assert first.casefold() not in tables.female_keys | tables.male_keys
    out = surrogate(first, "PATIENT", CTX)
    assert out.casefold() in tables.female_keys | tables.male_keys, out


@pytest.mark.parametrize(("value", "pattern"), [
    ("J.", r"[A-Z]\."), ("j", r"[a-z]"), ("J. Smith", r"[A-Z]\. [A-Z][a-z]+"),
    ("SMITH, J", r"[A-Z]+, [A-Z]"),
])
def test_when_initial_then_another_initial_of_same_case(value, pattern):
    out = surrogate(value, "PATIENT", CTX)
    assert re.fullmatch(pattern, out)
    assert out[0] != value[0] if len(value) < 3 or value[1] == "." else True


def test_when_name_has_title_and_hyphen_then_they_are_kept():
    out = surrogate("Dr. Mary O'Brien-Jones", "PATIENT", CTX)
    assert out.startswith("Dr. ") and "-" in out and "Brien" not in out


@pytest.mark.parametrize(("value", "kept"), [
    ("John Smith MD", "MD"), ("Dr. Smith", "Dr"), ("Mrs. Jones Jr.", "Jr"),
])
def test_when_title_or_degree_in_its_place_then_kept(value, kept):
    assert kept in surrogate(value, "DOCTOR", CTX)


@pytest.mark.parametrize("value", ["Minh Do", "Md Rahman", "Dr", "Sr"])
def test_when_title_word_is_a_name_part_then_replaced(value):
    out = surrogate(value, "PATIENT", CTX)
    assert not set(value.split()) & set(out.split())


def test_when_doctor_then_same_surrogate_for_every_person():
    names = ["Vasquez", "Hayes", "Joyce Jacobson", "KARGAS"]
    a = [surrogate(n, "DOCTOR", Ctx(person_id="0" * 20)) for n in names]
    b = [surrogate(n, "DOCTOR", Ctx(person_id="1" * 20)) for n in names]
    assert a == b


def test_when_patient_then_surrogate_depends_on_person():
    names = LAST_NAMES[:20]
    a = [surrogate(n, "PATIENT", Ctx(person_id="0" * 20)) for n in names]
    b = [surrogate(n, "PATIENT", Ctx(person_id="1" * 20)) for n in names]
    assert a != b


def test_when_username_then_letters_and_digits_keep_their_places():
    out = surrogate("john.smith42", "USERNAME", CTX)
    assert re.fullmatch(r"[a-z]+\.[a-z]+\d\d", out) and out != "john.smith42"
    assert out.split(".")[0] == surrogate("john", "PATIENT", CTX).lower()


# ---- every label: never the original, same key same output, other key other ------

ID_LABELS = ["MEDICALRECORD", "ACCOUNT", "LICENSE", "HEALTHPLAN", "IDNUM", "DEVICE",
             "BIOID", "VEHICLE"]
ids = st.text(alphabet="0123456789ABCDEFXYZabcxyz-/ .#", min_size=1,
              max_size=16).filter(lambda s: any(c.isalnum() for c in s))


@SETTINGS
@given(value=ids, label=st.sampled_from(ID_LABELS + ["FAX", "PHONE"]))
def test_when_identifier_then_same_shape_never_equal(value, label):
    out = surrogate(value, label, CTX)
    assert out != value
    if any(c.isalpha() for c in value) or label in ("FAX", "PHONE"):
        assert shape(out) == shape(value)


@SETTINGS
@given(value=st.from_regex(r"\(?[2-9]\d\d\)?[ -.]?\d{3}[ -.]\d{4}", fullmatch=True))
def test_when_us_phone_then_fictitious_555_01xx_in_same_layout(value):
    out = surrogate(value, "PHONE", CTX)
    digits = "".join(c for c in out if c.isdigit())
    assert shape(out) == shape(value) and out != value
    assert digits[3:6] == "555" and digits[6:8] == "01" and digits[0] in "23456789"


@SETTINGS
@given(value=st.from_regex(r"\d{3}([- ]?)\d{2}\1\d{4}", fullmatch=True))
def test_when_ssn_then_never_issued_area_and_same_layout(value):
    out = surrogate(value, "SSN", CTX)
    digits = "".join(c for c in out if c.isdigit())
    assert shape(out) == shape(value) and out != value
    assert 900 <= int(digits[:3]) <= 999
    assert digits[3:5] != "00" and digits[5:] != "0000"


SAMPLES = {
    "PATIENT": ["John Smith", "SMITH", "Smith, John"],
    "DOCTOR": ["Hayes", "DAN A"],
    "RELATIVE": ["bill", "Radu Crosson"],
    "USERNAME": ["jsmith", "mary_k7"],
    "DATE": ["7/22/2006", "July 22", "2006-07-22", "22-Jul-06"],
    "PHONE": ["410-322-1419", "(617) 555-3012"],
    "FAX": ["617.726.2000"],
    "EMAIL": ["john.smith@partners.org"],
    "URL": ["http://www.mgh.harvard.edu/x.html"],
    "IPADDR": ["10.1.2.3", "fe80::1"],
    "SSN": ["123-45-6789"],
    "MEDICALRECORD": ["0012345", "MRN 887766"],
    "STREET": ["12 Main Street", "Clover Lane"],
    "CITY": ["Baltimore", "SAN DIEGO"],
    "STATE": ["MD", "Maryland"],
    "ZIP": ["21201", "21201-1595"],
    "COUNTRY": ["Germany", "USA"],
    "HOSPITAL": ["Harford Memorial", "St. Mary's Hospital"],
    "ORGANIZATION": ["Genentech", "IBM"],
    "LOCATION": ["Quartermain", "Baltimore Rehab"],
    "ROOM": ["Room 412B"],
    "DEPARTMENT": ["Cardiology Department"],
    "PROFESSION": ["teacher"],
    "ACCOUNT": ["A-99812"],
    "LICENSE": ["S1234567"],
    "HEALTHPLAN": ["XHP 123456789"],
    "IDNUM": ["8336652"],
    "DEVICE": ["SN-44A1"],
    "BIOID": ["BX-2291"],
    "VEHICLE": ["4ABC123"],
}


def test_when_sample_of_every_label_then_samples_cover_the_label_set():
    assert set(SAMPLES) == set(LABELS) - {"AGE"}


@pytest.mark.parametrize("label", sorted(SAMPLES))
def test_when_label_sample_then_changed_deterministic_and_keyed(label):
    for value in SAMPLES[label]:
        out = surrogate(value, label, CTX)
        assert out != value
        assert surrogate(value, label, Ctx()) == out
    # Other keys change at least one of a few values (overwhelmingly likely).
    others = [OTHER_KEY, OTHER_KEY[::-1], KEY[::-1]]
    assert any(surrogate(v, label, Ctx(key=k)) != surrogate(v, label, CTX)
               for v in SAMPLES[label] for k in others)


@SETTINGS
@given(key=keys, first=st.sampled_from(FIRST_NAMES), last=st.sampled_from(LAST_NAMES))
def test_when_same_key_then_same_output_and_other_key_differs(key, first, last):
    ctx, other = Ctx(key=key), Ctx(key=key + b"!")
    values = [("PATIENT", f"{first} {last}"), ("MEDICALRECORD", "00123456"),
              ("DATE", "03/14/2011"), ("CITY", "Baltimore"), ("ZIP", "21201")]
    assert [surrogate(v, lab, ctx) for lab, v in values] == \
        [surrogate(v, lab, Ctx(key=key)) for lab, v in values]
    assert [surrogate(v, lab, ctx) for lab, v in values] != \
        [surrogate(v, lab, other) for lab, v in values]


# ---- dates -------------------------------------------------------------------

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def _n(value: int, pad: bool) -> str:
    return f"{value:02d}" if pad else str(value)


def _mon(d: datetime.date, full: bool) -> str:
    return MONTHS[d.month - 1] if full else MONTHS[d.month - 1][:3]


def _ord(day: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    suffix = "th" if 11 <= day <= 13 else suffix
    return f"{day}{suffix}"


# (name, kind, formatter(date, pad, full_month)); kind says what the text holds.
# Formats named with MM/DD are written zero padded, the others not.
DATE_FORMATS = [
    ("M/D/YYYY", "ymd", lambda d, p, f: f"{_n(d.month, p)}/{_n(d.day, p)}/{d.year}"),
    ("MM/DD/YYYY", "ymd", lambda d, p, f: f"{_n(d.month, p)}/{_n(d.day, p)}/{d.year}"),
    ("M-D-YY", "ymd",
     lambda d, p, f: f"{_n(d.month, p)}-{_n(d.day, p)}-{d.year % 100:02d}"),
    ("DD-Mon-YY", "ymd",
     lambda d, p, f: f"{_n(d.day, p)}-{_mon(d, f)}-{d.year % 100:02d}"),
    ("Month D, YYYY", "ymd", lambda d, p, f: f"{_mon(d, True)} {d.day}, {d.year}"),
    ("Mon D YYYY", "ymd", lambda d, p, f: f"{_mon(d, f)} {d.day} {d.year}"),
    ("D Month YYYY", "ymd", lambda d, p, f: f"{d.day} {_mon(d, True)} {d.year}"),
    ("YYYY-MM-DD", "ymd", lambda d, p, f: d.isoformat()),
    ("YYYYMMDD", "ymd", lambda d, p, f: d.strftime("%Y%m%d")),
    ("YYYYMMDDhhmm", "ymd", lambda d, p, f: d.strftime("%Y%m%d") + "1530"),
    ("MON D YYYY", "ymd", lambda d, p, f: f"{_mon(d, f).upper()} {d.day} {d.year}"),
    ("Month Dth, YYYY", "ymd",
     lambda d, p, f: f"{_mon(d, True)} {_ord(d.day)}, {d.year}"),
    ("DDMONYYYY", "ymd", lambda d, p, f: f"{_n(d.day, p)}{_mon(d, f).upper()}{d.year}"),
    ("Weekday, Month D, YYYY", "ymd",
     lambda d, p, f: f"{d.strftime('%A')}, {_mon(d, True)} {d.day}, {d.year}"),
    ("M/D", "md", lambda d, p, f: f"{_n(d.month, p)}/{_n(d.day, p)}"),
    ("Month Dth", "md", lambda d, p, f: f"{_mon(d, True)} {_ord(d.day)}"),
    ("MON D", "md", lambda d, p, f: f"{_mon(d, f).upper()} {d.day}"),
    ("Month YYYY", "ym", lambda d, p, f: f"{_mon(d, True)} {d.year}"),
    ("M/YYYY", "ym", lambda d, p, f: f"{_n(d.month, p)}/{d.year}"),
    ("the Dth", "d", lambda d, p, f: f"the {_ord(d.day)}"),
]
dates = st.dates(min_value=datetime.date(1930, 1, 1),
                 max_value=datetime.date(2024, 12, 31))


def _anchor(d: datetime.date, kind: str) -> datetime.date:
    """Where a partial date of ``kind`` is shifted from (see surrogates.dates)."""
    return {"ymd": d, "md": d.replace(year=REFERENCE_YEAR) if not (
        d.month == 2 and d.day == 29) else datetime.date(REFERENCE_YEAR, 2, 29),
        "ym": d.replace(day=15), "d": datetime.date(REFERENCE_YEAR, 1, d.day)}[kind]


@pytest.mark.parametrize(("holiday", "day"), [
    ("christmas eve", "December 24"), ("Christmas Eve", "December 24"),
    ("New Year's Day", "January 1"), ("Halloween", "October 31")])
def test_when_holiday_on_a_fixed_day_then_shifted_as_that_day(holiday, day):
    assert surrogate(holiday, "DATE", CTX) == surrogate(day, "DATE", CTX)


def test_when_holiday_moves_with_the_year_then_no_surrogate_and_masked():
    with pytest.raises(SurrogateError):
        surrogate("Thanksgiving", "DATE", CTX)


@SETTINGS
@given(d=dates, fmt=st.sampled_from(DATE_FORMATS), person=persons)
def test_when_date_in_any_format_then_shifted_exactly_in_the_same_format(d, fmt,
                                                                         person):
    name, kind, render = fmt
    ctx = Ctx(person_id=person)
    text = render(d, "MM" in name or "DD" in name, len(MONTHS[d.month - 1]) <= 3)
    out = surrogate(text, "DATE", ctx)
    expected = _anchor(d, kind) + offset(ctx)
    if kind == "d" and expected.day == d.day:  # it would say the day: one further
        expected += datetime.timedelta(days=1)
    # Padding and "May" (name or abbreviation?) may be undecidable from the text.
    allowed = {render(expected, p, f) for p in (False, True) for f in (False, True)}
    assert out in allowed, name
    assert out != text
    a, b = parse_date(text, AS_OF), parse_date(out, AS_OF)
    assert a is not None and b is not None and a.kind == b.kind


@SETTINGS
@given(d1=dates, d2=dates, f1=st.sampled_from(DATE_FORMATS[:14]),
       f2=st.sampled_from(DATE_FORMATS[:14]), person=persons)
def test_when_two_dates_of_a_person_then_their_interval_is_preserved(d1, d2, f1, f2,
                                                                      person):
    ctx = Ctx(person_id=person)
    shifted = []
    for d, (_, _, render) in ((d1, f1), (d2, f2)):
        p = parse_date(surrogate(render(d, True, True), "DATE", ctx), AS_OF)
        shifted.append(datetime.date(p.year, p.month, p.day))
    assert (shifted[1] - shifted[0]) == (d2 - d1)


@SETTINGS
@given(d1=dates, d2=dates, person=persons)
def test_when_two_yearless_dates_of_one_year_then_interval_is_preserved(d1, d2, person):
    ctx = Ctx(person_id=person)
    shifted = []
    for d in (d1, d2):
        out = parse_date(surrogate(f"{d.month}/{d.day}", "DATE", ctx), AS_OF)
        expected = _anchor(d, "md") + offset(ctx)
        assert (out.year, out.month, out.day) == (None, expected.month, expected.day)
        shifted.append(expected)
    # Both moved by the same offset on the reference year's calendar.
    assert shifted[1] - shifted[0] == _anchor(d2, "md") - _anchor(d1, "md")


@pytest.mark.parametrize(("text", "expected"), [
    ("07/22/2006", lambda o: (datetime.date(2006, 7, 22) + o).strftime("%m/%d/%Y")),
    ("7/22/2006", lambda o: "{d.month}/{d.day}/{d.year}".format(
        d=datetime.date(2006, 7, 22) + o)),
    ("2006-07-22", lambda o: (datetime.date(2006, 7, 22) + o).isoformat()),
    ("200607221530", lambda o: (datetime.date(2006, 7, 22) + o).strftime("%Y%m%d1530")),
    ("20060722153000.0000-0500",
     lambda o: (datetime.date(2006, 7, 22) + o).strftime("%Y%m%d153000.0000-0500")),
    ("22-JUL-06",
     lambda o: (datetime.date(2006, 7, 22) + o).strftime("%d-%b-%y").upper()),
    ("july 22, 2006", lambda o: (datetime.date(2006, 7, 22) + o).strftime(
        "%B %-d, %Y").lower()),
    ("8/88", lambda o: "{d.month}/{d:%y}".format(d=datetime.date(1988, 8, 15) + o)),
    # A month and a two-digit year ("DVT Apr-00"), not a month alone and a year.
    ("Apr-00", lambda o: (datetime.date(2000, 4, 15) + o).strftime("%b-%y")),
    ("DEC 99", lambda o: (datetime.date(1999, 12, 15) + o).strftime("%b %y").upper()),
    ("Apr-12", lambda o: (datetime.date(REFERENCE_YEAR, 4, 12) + o).strftime("%b-%-d")),
])
def test_when_known_format_then_exact_shifted_text(text, expected):
    assert surrogate(text, "DATE", CTX) == expected(offset())


@pytest.mark.parametrize(("text", "template"), [
    ("7/22/06 at 15:30", "{d.month}/{d.day}/{d:%y} at 15:30"),
    ("(7/22/2006).", "({d.month}/{d.day}/{d.year})."),
    ("7/22/2006 3:30 pm", "{d.month}/{d.day}/{d.year} 3:30 pm"),
    ("2006-07-22T15:30:00Z", "{d:%Y-%m-%d}T15:30:00Z"),
])
def test_when_date_has_time_or_punctuation_then_only_the_date_moves(text, template):
    assert surrogate(text, "DATE", CTX) == template.format(
        d=datetime.date(2006, 7, 22) + offset())


def test_when_weekday_then_it_moves_with_the_shift():
    out = surrogate("Monday, July 24, 2006", "DATE", CTX)
    shifted = datetime.date(2006, 7, 24) + offset()
    assert out == shifted.strftime("%A, %B ") + f"{shifted.day}, {shifted.year}"
    assert surrogate("Monday", "DATE", CTX) == shifted.strftime("%A")


def test_when_range_then_both_ends_shift_in_their_forms():
    out = surrogate("7/22-7/25", "DATE", CTX)
    a, b = (datetime.date(REFERENCE_YEAR, 7, d) + offset() for d in (22, 25))
    assert out == f"{a.month}/{a.day}-{b.month}/{b.day}"


@pytest.mark.parametrize(("text", "year", "written"), [
    ("1992", 1992, "{:04d}"), ("'92", 1992, "'{:02d}"), ("92", 1992, "{:02d}"),
    ("2006", 2006, "{:04d}"), ("1935", 1935, "{:04d}"), ("1920", 1935, "{:04d}"),
    ("1899", 1935, "{:04d}"), ("'20", 2020, "'{:02d}"),
])
def test_when_bare_year_under_safe_harbor_then_top_coded_and_moved_by_whole_years(
        text, year, written):
    """Years of birth of people over 89 say the cut-off; all move like full dates."""
    whole = round(offset().days / 365.2425)
    assert whole in (-1, -2, -3)
    out = surrogate(text, "DATE", CTX)
    assert out == written.format((year + whole) % (10000 if len(text) == 4 else 100))


def test_when_limited_dataset_then_dates_ages_and_towns_are_kept():
    for label, value in [("DATE", "07/22/2006"), ("DATE", "1920"), ("AGE", "97"),
                         ("CITY", "Baltimore"), ("STATE", "MD"), ("ZIP", "03601"),
                         ("LOCATION", "Baltimore")]:
        assert surrogate(value, label, LDS) == value
    assert surrogate("John Smith", "PATIENT", LDS) != "John Smith"
    assert surrogate("410-322-1419", "PHONE", LDS) != "410-322-1419"


def test_when_a_date_span_holds_a_leading_word_then_the_date_still_shifts():
    """``on 3/4/2019`` shifts as ``3/4/2019`` does, not digit by digit."""
    for text, date in (("on 3/4/2019", "3/4/2019"), ("in 1998", "1998"),
                       ("early 2019", "2019"), ("since 3/4.", "3/4")):
        out = surrogate(text, "DATE", CTX)
        assert out.endswith(surrogate(date, "DATE", CTX) + text[len(text.rstrip(".")):])
        assert out.startswith(text.split()[0] + " ")


def test_when_date_unparseable_then_digits_replaced_or_masked():
    out = surrogate("Q3 (approx)", "DATE", CTX)
    assert out != "Q3 (approx)" and shape(out) == shape("Q3 (approx)")
    # A year is never redrawn digit for digit (it came out as 7545): masked.
    for text in ("Q3 of 2006 (approx)", "1980s"):
        with pytest.raises(SurrogateError):
            surrogate(text, "DATE", CTX)
    with pytest.raises(SurrogateError):
        surrogate("Thanksgiving", "DATE", CTX)
    # A tagged date that runs into a town must not carry the town through
    # (the rewrite masks what raises).
    for text in ("3, Dorchester", "Dorchester 3/4", "3 2 Smith"):
        with pytest.raises(SurrogateError):
            surrogate(text, "DATE", CTX)


@pytest.mark.parametrize(("text", "date", "rest"), [
    ("11/21.93", "11/21", "93"), ("11/21 .93", "11/21", "93"),
    ("3/11, 2006", "3/11", "2006"), ("11/3 PM", "11/3", None),
])
def test_when_a_date_runs_on_into_text_no_form_reads_then_the_date_still_shifts(
        text, date, rest):
    """Redrawn digit for digit, ``11/21.93`` came out as ``50/73.73``: no date."""
    out = surrogate(text, "DATE", CTX)
    head = surrogate(date, "DATE", CTX)
    assert out.startswith(head)
    tail = out[len(head):]
    if rest is None:
        assert tail == text[len(date):]
    else:
        assert tail == text[len(date):-len(rest)] + surrogate(rest, "DATE", CTX)


@pytest.mark.parametrize("text", ["13", "09", "21", "'13"])
def test_when_two_digits_alone_then_two_digits_back(text):
    """``'09 PTCA ... '13 stent``: the 13 came back as ``9``, no longer a year."""
    out = surrogate(text, "DATE", CTX)
    assert out != text and len(out) == len(text) and out.lstrip("'").isdigit()


@pytest.mark.parametrize("season", ["summer of", "Summer", "fall", "winter of"])
def test_when_a_season_and_year_then_the_year_shifted_as_alone(season):
    assert surrogate(f"{season} 2019", "DATE", CTX) == \
        f"{season} {surrogate('2019', 'DATE', CTX)}"
    assert surrogate(f"{season} 2019-2020", "DATE", CTX) == \
        f"{season} {surrogate('2019-2020', 'DATE', CTX)}"


@pytest.mark.parametrize(("label", "value", "kept_form"), [
    ("AGE", "92 Dorchester", "95 yo"),
    ("AGE", "45 Dorchester", "a ninety-two year old man"),
    ("AGE", "92 Smith", "92 YOF"),
    ("ZIP", "02124 Dorchester", "02124-1234"),
    ("SSN", "123-45-6789 Linda", "123-45-6789"),
    ("ROOM", "Smith 4", "Room 412B"),
])
def test_when_a_span_runs_into_a_word_its_generator_would_keep_then_it_fails(
        label, value, kept_form):
    """Digit-redrawing generators must not carry a town or a name through."""
    with pytest.raises(SurrogateError):
        surrogate(value, label, CTX)
    assert surrogate(kept_form, label, CTX)  # the forms they are for still work


@SETTINGS
@given(person=persons, low=st.integers(0, 400), span=st.integers(0, 800))
def test_when_shift_range_configured_then_offset_within_it(person, low, span):
    days = date_shift_days(KEY, person, low, low + span)
    assert -(low + span) <= days <= -low
    assert days == date_shift_days(KEY, person, low, low + span)
    ctx = Ctx(person_id=person, min_shift_days=low, max_shift_days=low + span)
    out = surrogate("2006-07-22", "DATE", ctx)
    shifted = datetime.date(2006, 7, 22) + datetime.timedelta(days=days)
    assert out == shifted.isoformat()


def test_when_shift_range_is_default_then_one_to_three_years_back():
    shifts = {date_shift_days(KEY, f"{i:020x}") for i in range(500)}
    assert all(-3 * 365 <= s <= -365 for s in shifts) and len(shifts) > 200
    # Never (nearly) a whole number of years: month and day always move.
    assert all(abs(-s - round(-s / 365.2425) * 365.2425) >= 7 for s in shifts)


@SETTINGS
@given(d=dates, person=persons)
def test_when_yearless_date_then_never_unchanged(d, person):
    text = f"{d.month}/{d.day}"
    assert surrogate(text, "DATE", Ctx(person_id=person)) != text


@pytest.mark.parametrize("value", ["11th", "3rd", "28", "1st"])
def test_when_a_day_alone_then_never_the_same_day(value):
    # A shift of a whole number of months sent "11th" to "11th" for about
    # one person in 30, and the leak guard quarantined the message.
    day = int(re.match(r"\d+", value).group())
    for person in range(300):
        out = surrogate(value, "DATE", Ctx(person_id=f"{person:020x}"))
        assert int(re.match(r"\d+", out).group()) != day, person


@SETTINGS
@given(month=st.integers(1, 12), yy=st.sampled_from([0, *range(32, 100)]),
       person=persons, sep=st.sampled_from(["-", " ", "/"]))
def test_when_month_and_two_digit_year_then_never_unchanged(month, yy, person, sep):
    # Shifted as a month alone (year kept), "Apr-00" came back as itself for
    # 4% of keys and the leak guard quarantined the note.
    text = f"{MONTHS[month - 1][:3].title()}{sep}{yy:02d}"
    out = surrogate(text, "DATE", Ctx(person_id=person))
    assert out != text


def test_when_physionet_dates_then_every_patients_day_differences_survive(
        physionet_docs):
    """Acceptance (issue 5): all pairs of a patient's dates, within and across notes."""
    shifted: dict[str, list[tuple[datetime.date, datetime.date]]] = {}
    for doc in physionet_docs:
        ctx = Ctx(person_id=doc.person_key)
        for gold in doc.gold:
            text = doc.text[gold.start:gold.end]
            before = parse_date(text, AS_OF) if gold.label == "DATE" else None
            if before is None or before.kind not in ("ymd", "md"):
                continue
            after = parse_date(surrogate(text, "DATE", ctx), AS_OF)
            anchor = datetime.date(before.year or REFERENCE_YEAR, before.month,
                                   before.day)
            moved = anchor + offset(ctx)
            # Yearless dates carry only month and day; full dates all three.
            assert (after.year, after.month, after.day) == (
                moved.year if before.year else None, moved.month, moved.day)
            out = datetime.date(after.year or moved.year, after.month, after.day)
            shifted.setdefault(f"{doc.person_key}/{before.kind}", []).append(
                (anchor, out))
    pairs = 0
    for dates_of_person in shifted.values():
        for i, (a0, a1) in enumerate(dates_of_person):
            for b0, b1 in dates_of_person[i + 1:]:
                assert b1 - a1 == b0 - a0
                pairs += 1
    assert pairs > 500


# ---- ages --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("92", "90+"), ("92 yo", "90+ yo"), ("92-year-old", "90-year-old"), ("101", "90+"),
    ("95+", "90+"), ("ninety-two", "ninety"), ("Ninety-Two", "Ninety"),
    ("one hundred and two", "ninety"), ("45", "45"), ("89", "89"),
    ("18 months", "18 months"), ("92 M", "90+ M"), ("aged 97 years", "aged 90+ years"),
    ("100th", "90th"), ("91st", "90th"), ("50th", "50th"), ("90th", "90th"),
])
def test_when_age_then_over_89_aggregated_and_younger_kept(text, expected):
    assert surrogate(text, "AGE", CTX) == expected


@SETTINGS
@given(age=st.integers(0, 130),
       suffix=st.sampled_from(["", " yo", "-year-old", " y/o", " years"]))
def test_when_any_age_then_only_ages_over_89_change(age, suffix):
    out = surrogate(f"{age}{suffix}", "AGE", CTX)
    if age <= 89:
        assert out == f"{age}{suffix}"
    else:
        assert out == ("90" if suffix.startswith("-") else "90+") + suffix


def test_when_age_without_number_then_it_is_masked_upstream():
    with pytest.raises(SurrogateError):
        surrogate("elderly", "AGE", CTX)


# ---- contact -----------------------------------------------------------------

emails = st.from_regex(
    r"[a-z]{2,8}(\.[a-z]{2,8})?\d{0,3}@[a-z]{2,8}\.(com|org|edu|net)", fullmatch=True)


@SETTINGS
@given(value=emails)
def test_when_email_then_example_domain_and_valid_form(value):
    out = surrogate(value, "EMAIL", CTX)
    assert out != value
    assert re.fullmatch(r"[a-z]+(\.[a-z]+)?\d{0,3}@example\.(com|org|net)", out)
    tld = value.rsplit(".", 1)[1]
    if tld != "edu":
        assert out.endswith("." + tld)


def test_when_url_then_example_host_and_same_scheme():
    out = surrogate("https://www.mgh.harvard.edu/pts/123.html", "URL", CTX)
    assert re.fullmatch(r"https://www\.example\.(com|org|net)/[a-z]{3}/\d{3}\.html",
                        out)


@SETTINGS
@given(value=st.ip_addresses(v=4).map(str))
def test_when_ipv4_then_documentation_range(value):
    out = ipaddress.ip_address(surrogate(value, "IPADDR", CTX))
    assert out != ipaddress.ip_address(value)
    assert any(out in ipaddress.ip_network(n) for n in
               ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))


@SETTINGS
@given(value=st.ip_addresses(v=6).map(str))
def test_when_ipv6_then_2001_db8(value):
    out = ipaddress.ip_address(surrogate(value, "IPADDR", CTX))
    assert out in ipaddress.ip_network("2001:db8::/32") and str(out) != value


# ---- locations ---------------------------------------------------------------

@SETTINGS
@given(value=st.from_regex(r"[0-9]{5}(-[0-9]{4})?", fullmatch=True))
def test_when_zip_then_length_kept_and_safe_harbor_zip3(value):
    out = surrogate(value, "ZIP", CTX)
    assert shape(out) == shape(value) and out != value
    assert out[:3] == ("000" if value[:3] in RESTRICTED_ZIP3 else value[:3])


def test_when_zip_has_no_ascii_digits_then_it_fails_closed():
    with pytest.raises(SurrogateError):
        surrogate("\u0660\u0661\u0662\u0663\u0664", "ZIP", CTX)


def test_when_zip3_restricted_then_000():
    assert len(RESTRICTED_ZIP3) == 17
    assert safe_harbor_zip3("036") == "000" and safe_harbor_zip3("021") == "021"
    with pytest.raises(ValueError):
        safe_harbor_zip3("21")


def test_when_state_then_same_form_and_case():
    assert re.fullmatch(r"[A-Z]{2}", surrogate("MD", "STATE", CTX))
    assert re.fullmatch(r"[a-z]{2}", surrogate("md", "STATE", CTX))
    assert len(surrogate("Maryland", "STATE", CTX)) > 2
    assert surrogate("MARYLAND", "STATE", CTX).isupper()


def test_when_city_then_real_city_in_original_case():
    out = surrogate("SAN DIEGO", "CITY", CTX)
    assert out.isupper() and out != "SAN DIEGO"
    assert surrogate("catonsville", "CITY", CTX).islower()


def test_when_street_then_house_number_presence_kept():
    with_no = surrogate("123 Main Street", "STREET", CTX)
    assert re.fullmatch(r"[1-9]\d\d [A-Z][\w' -]* \w+", with_no)
    without = surrogate("Clover Lane", "STREET", CTX)
    assert not without[0].isdigit() and without != "Clover Lane"
    unit = surrogate("45 N. Elm St. Apt 4B", "STREET", CTX)
    assert unit.startswith(tuple("123456789")) and " N. " in unit and "Apt " in unit
    # A post office box keeps its words; only its numbers are drawn again.
    for box in ("PO Box 1234", "P.O. Box #77"):
        out = surrogate(box, "STREET", CTX)
        assert re.fullmatch(re.sub(r"\d", r"\\d", re.escape(box)), out) and out != box


def test_when_hospital_then_generic_words_kept_and_run_wide_consistent():
    a = surrogate("HARFORD MEMORIAL", "HOSPITAL", Ctx(person_id="0" * 20))
    b = surrogate("Harford Memorial Hospital", "HOSPITAL", Ctx(person_id="1" * 20))
    assert a.endswith(" MEMORIAL") and a.isupper() and "HARFORD" not in a
    assert b == a.split(" ")[0].title() + " Memorial Hospital"
    assert re.fullmatch(r"St\. [A-Z][a-z]+'s", surrogate("St. Mary's", "HOSPITAL", CTX))
    assert re.fullmatch(r"[A-Z]{3}", surrogate("MGH", "HOSPITAL", CTX))


def test_when_generic_location_then_realistic_replacement():
    out = surrogate("Quartermain", "LOCATION", CTX)
    assert out[0].isupper() and out.isalpha() and out != "Quartermain"
    assert surrogate("GH", "LOCATION", CTX) != "GH"


def test_when_room_department_profession_country_then_same_form():
    assert re.fullmatch(r"Room [1-9]\d\d[A-Z]", surrogate("Room 412B", "ROOM", CTX))
    assert surrogate("Cardiology Department", "DEPARTMENT", CTX).endswith(" Department")
    assert surrogate("teacher", "PROFESSION", CTX).islower()
    assert re.fullmatch(r"[A-Z]{3}", surrogate("USA", "COUNTRY", CTX))
    assert re.fullmatch(r"[A-Z]{2}", surrogate("US", "COUNTRY", CTX))
