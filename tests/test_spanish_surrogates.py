"""Spanish surrogates (``language="es"``): names, places, ids, phones, day-first dates.

Same contract as the English ones (tests/test_surrogates.py): never the
original, the original's format, keyed and deterministic; and English outputs
stay what they were when no language (or ``en``) is given.
"""
# ruff: noqa: D103  (test names say what each test checks)

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

import pytest
from faker.providers.person.es_ES import Provider as SpanishPersons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_pipeline.label_maps import LabelMapError, label_map_from_json, load_label_map
from deid_pipeline.labels import builtin_label
from deid_pipeline.model import PhiSpan
from deid_pipeline.rewrite import RewriteContext, make_operator, rewrite
from deid_pipeline.run_options import build_parser, surrogate_language
from deid_pipeline.surrogates import (
    GENERATORS,
    SurrogateError,
    _memo,
    generator_for,
    surrogate,
)
from deid_pipeline.surrogates.dates import date_shift_days, parse_date
from deid_pipeline.surrogates.es.dates import SPANISH_DATES, impossible_day_first
from deid_pipeline.surrogates.es.identifiers import (
    DNI_LETTERS,
    nass_check,
    valid_dni,
    valid_nie,
)
from deid_pipeline.surrogates.es.names import plain
from deid_pipeline.surrogates.es.places import PROVINCES, holds, province_code

KEY = b"0123456789abcdef0123456789abcdef"
OTHER_KEY = b"fedcba9876543210fedcba9876543210"
AS_OF = 2025
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
MONTHS = ("enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre"
          "|noviembre|diciembre")


@dataclass(frozen=True)
class Ctx:
    """A Spanish surrogate context without the rewrite module."""

    key: bytes = KEY
    person_id: str = "a1b2c3d4e5f6a7b8c9d0"
    policy: str = "safe-harbor"
    as_of_year: int = AS_OF
    min_shift_days: int = 365
    max_shift_days: int = 3 * 365
    language: str = "es"


ES = Ctx()
EN = Ctx(language="en")
LAST = {plain(n) for n in SpanishPersons.last_names}
FEMALE = {plain(n) for n in SpanishPersons.first_names_female}
MALE = {plain(n) for n in SpanishPersons.first_names_male}
persons = st.text("0123456789abcdef", min_size=20, max_size=20)


def es(value: str, label: str, ctx: Ctx = ES) -> str:
    return surrogate(value, label, ctx)


# ---- DNI, NIE, NASS -----------------------------------------------------------

@pytest.mark.parametrize("value", ["12345678Z", "00000001R", "12.345.678-Z",
                                   "12345678 z", "DNI 12345678Z"])
def test_when_dni_then_surrogate_is_a_dni_with_a_valid_letter(value):
    out = es(value, "IDNUM")
    dni = out.removeprefix("DNI ")
    assert valid_dni(dni), out
    assert re.sub(r"\d", "9", out)[:-1] == re.sub(r"\d", "9", value)[:-1]
    assert out != value and out[-1].islower() == value[-1].islower()


@pytest.mark.parametrize("value", ["X1234567L", "Y-7654321-G", "z 0000000 a"])
def test_when_nie_then_surrogate_is_a_nie_with_a_valid_letter(value):
    out = es(value, "MEDICALRECORD")
    assert valid_nie(out), out
    assert re.sub(r"\w", "w", out) == re.sub(r"\w", "w", value)


@given(person=persons, number=st.integers(0, 99_999_999))
@SETTINGS
def test_when_any_dni_then_letter_valid(person, number):
    value = f"{number:08d}{DNI_LETTERS[number % 23]}"
    assert valid_dni(surrogate(value, "IDNUM", Ctx(person_id=person)))


def test_when_check_letters_then_the_official_examples_hold():
    assert valid_dni("12345678Z") and not valid_dni("12345678A")
    assert valid_nie("X1234567L") and valid_nie("Y1234567X") and valid_nie("Z1234567R")


@pytest.mark.parametrize("value, same", [("28 28 12345", True),
                                         ("46-46-01234", True), ("46 28 1234", False)])
def test_when_collegiate_number_then_province_codes_where_they_were(value, same):
    out = es(value, "LICENSE")
    m = re.fullmatch(r"(\d\d)([ -])(\d\d)\2(\d+)", out)
    assert m and out != value and len(out) == len(value)
    assert m.group(1) in PROVINCES and m.group(3) in PROVINCES
    if same:  # one college twice stays one (a second code may match by chance)
        assert m.group(1) == m.group(3)


@pytest.mark.parametrize("value", ["28 12345678 90", "08/57628946/45",
                                   "78 9546215 54", "28 123456 40", "46-12345-07"])
def test_when_nass_then_province_code_and_check_digits_valid(value):
    out = es(value, "HEALTHPLAN")
    prov, number, check = re.split(r"[\s/-]", out)
    assert prov in PROVINCES and check == nass_check(prov, number)
    assert re.sub(r"\d", "9", out) == re.sub(r"\d", "9", value) and out != value


def test_when_nass_after_its_name_then_name_kept_and_the_number_as_alone():
    out = es("NASS: 28 123456 40", "HEALTHPLAN")
    assert out == "NASS: " + es("28 123456 40", "HEALTHPLAN")
    prov, number, check = out[len("NASS: "):].split()
    assert prov in PROVINCES and len(number) == 6 and check == nass_check(prov, number)


@pytest.mark.parametrize("value", ["NºCol: 28 28 12345", "Nº Col. 46 46 01234",
                                   "NºCol 3312345"])
def test_when_collegiate_label_word_in_the_span_then_written_as_it_was(value):
    out = es(value, "LICENSE")
    lead = re.match(r"\D*", value).group()
    assert out.startswith(lead) and out != value and len(out) == len(value)
    assert out == lead + es(value[len(lead):], "LICENSE")
    if value.count(" ") >= 3:  # a collegiate number: province codes where they were
        assert out[len(lead):len(lead) + 2] in PROVINCES


def test_when_id_words_written_as_one_inside_an_id_then_kept():
    out = es("12345 NºCol 67890", "IDNUM")
    assert re.fullmatch(r"\d{5} NºCol \d{5}", out) and out != "12345 NºCol 67890"


def test_when_twelve_digits_health_plan_then_nass_shaped():
    out = es("281234567890", "HEALTHPLAN")
    assert len(out) == 12 and out[:2] in PROVINCES
    assert out[-2:] == nass_check(out[:2], out[2:10])


def test_when_other_id_then_same_shape_and_id_words_kept():
    out = es("NHC 7134615", "MEDICALRECORD")
    assert out.startswith("NHC ") and re.fullmatch(r"NHC \d{7}", out)
    assert out != "NHC 7134615"


@pytest.mark.parametrize("value", ["Lactante", "raza caucásica", "casada"])
def test_when_an_id_is_written_words_then_masked_not_random_letters(value):
    with pytest.raises(SurrogateError):
        es(value, "MEDICALRECORD")
    text = f"Informe: {value} de 6 meses."
    span = PhiSpan(9, 9 + len(value), "MEDICALRECORD", "crf", 1.0)
    ctx = RewriteContext(key=KEY, person_id="p", as_of_year=AS_OF, language="es")
    out, _ = rewrite(text, [span], make_operator("surrogate"), ctx)
    assert out == "Informe: [**MEDICALRECORD**] de 6 meses."


@pytest.mark.parametrize("value", ["XKQW", "AB-CD", "ÁNGEL"])
def test_when_an_id_is_letters_in_capitals_then_letters_of_its_shape(value):
    out = es(value, "MEDICALRECORD")
    assert out != value and len(out) == len(value) and not any(
        c.islower() for c in out)


# ---- phones ---------------------------------------------------------------------

@pytest.mark.parametrize("value", ["934 169 700", "914 90 66 60", "609518571",
                                   "+34 609 51 85 71", "0034-913-908-121",
                                   "(+34) 956.013.059"])
def test_when_spanish_phone_then_spanish_shape_and_spacing_kept(value):
    out = es(value, "PHONE")
    assert re.sub(r"\d", "9", out) == re.sub(r"\d", "9", value)  # spacing kept
    prefix = re.compile(r"^\D*(?:\+\s?34|0034)")
    assert (prefix.match(out) and prefix.match(out).group()) == (
        prefix.match(value) and prefix.match(value).group())  # +34 kept
    digits = re.sub(r"\D", "", prefix.sub("", out))
    assert len(digits) == 9 and digits[0] in "6789", out
    assert digits[0] == re.sub(r"\D", "", prefix.sub("", value))[0]  # mobile stays
    assert out != value


def test_when_fax_then_same_rules_as_phone():
    out = es("985-27-36-14", "FAX")
    assert re.fullmatch(r"9\d\d-\d\d-\d\d-\d\d", out) and out != "985-27-36-14"


@pytest.mark.parametrize("season",
                         ["verano de", "el invierno de", "otoño", "primavera del"])
def test_when_a_season_and_year_then_the_year_shifted_never_redrawn(season):
    out = es(f"{season} 2019", "DATE")
    assert out == f"{season} {es('2019', 'DATE')}", out


# ---- names ------------------------------------------------------------------------

def test_when_two_surnames_then_two_spanish_surnames():
    out = es("Gutiérrez Soto", "PATIENT")
    parts = out.split()
    assert len(parts) == 2 and all(plain(p) in LAST for p in parts), out


def test_when_first_name_and_two_surnames_then_same_sex_first_name_and_two_surnames():
    out = es("María García López", "PATIENT").split()
    assert len(out) == 3 and plain(out[0]) in FEMALE
    assert all(plain(p) in LAST for p in out[1:])
    male = es("Pedro Carrión López", "DOCTOR").split()
    assert plain(male[0]) in MALE


def test_when_name_word_outside_the_spanish_lists_then_read_as_the_world_reads_it():
    # Serafín, Dylan, Cynthia: first names no Faker es_ES list holds; Reyes,
    # Pastor, Guzmán, Bautista: in both lists, surnames far more often.
    for value in ("Serafín García Mata", "Dylan Urcuyo Rot", "Cynthia Binelli"):
        out = es(value, "DOCTOR").split()
        assert plain(out[0]) in FEMALE | MALE, (value, out)
        assert all(plain(p) in LAST for p in out[1:]), (value, out)
    assert plain(es("Cynthia", "PATIENT")) in FEMALE
    # Unknown to every list: a Spanish given name in -a is a woman's.
    assert plain(es("Mikel", "PATIENT")) in MALE
    assert plain(es("Serafín", "PATIENT")) in MALE
    assert plain(es("Ainhoa", "PATIENT")) in FEMALE
    for value in ("Reyes Landero", "Bautista Romero", "Héctor Pastor Navarro",
                  "Pablo Guzmán Martínez"):
        out = es(value, "PATIENT").split()
        assert all(plain(p) in LAST for p in out[-2:]), (value, out)


def test_when_title_and_particles_then_kept():
    out = es("Dra. Ana de la Fuente", "DOCTOR")
    assert out.startswith("Dra. ") and " de la " in out
    assert "Ana" not in out and "Fuente" not in out


def test_when_surname_alone_then_same_surrogate_as_in_the_full_name():
    full = es("Ana Gutiérrez", "PATIENT")
    assert full.split()[1] == es("Gutiérrez", "PATIENT")
    assert es("GUTIÉRREZ", "PATIENT") == es("Gutiérrez", "PATIENT").upper()


def test_when_doctor_then_one_surrogate_run_wide():
    a = es("Marta Blanco", "DOCTOR", Ctx(person_id="1" * 20))
    b = es("Marta Blanco", "DOCTOR", Ctx(person_id="2" * 20))
    assert a == b


def test_when_email_then_spanish_name_parts_ascii_at_an_example_domain():
    out = es("molina_pil@gva.es", "EMAIL")
    local, domain = out.split("@")
    assert local.isascii() and "_" in local
    assert domain in ("example.com", "example.org", "example.net")


# ---- places -------------------------------------------------------------------------

def test_when_postcode_then_five_digits_of_a_province():
    out = es("28040", "LOCATION")
    assert re.fullmatch(r"\d{5}", out) and out[:2] in PROVINCES and out[:2] != "28"


def test_when_province_and_its_postcode_then_both_name_one_surrogate_province():
    town = es("Madrid", "LOCATION")
    code = province_code(town)
    assert code is not None and code != "28"
    assert es("28040", "LOCATION")[:2] == code
    assert es("28040 Madrid", "LOCATION") == f"{es('28040', 'LOCATION')} {town}"
    assert es("28001", "ZIP")[:2] == code


@pytest.mark.parametrize("name, postcode", [
    ("A Coruña", "15001"), ("La Rioja", "26500"), ("Ciudad Real", "13005"),
    ("Las Palmas", "35002")])
def test_when_a_province_name_starts_with_a_generic_word_then_it_is_a_province(
        name, postcode):
    # Read as "A" + a town "Coruña", it became "A La Bordeta" beside a
    # postcode of another province (29 of 356 such pairs on MEDDOCAN dev).
    out = es(name, "LOCATION")
    assert province_code(out) is not None and province_code(out) != postcode[:2]
    assert es(postcode, "LOCATION")[:2] == province_code(out)


def test_when_the_document_names_the_surrogate_province_then_postcode_still_agrees():
    # Madrid's surrogate province is written in the document itself: the
    # province is drawn again, and the postcode's first two digits with it
    # (a redraw used to move the province alone: Sevilla beside 25xxx).
    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument

    load_label_map("meddocan")
    rewriter = Rewriter("surrogate", KEY, as_of_year=AS_OF, language="es")

    def rewritten(text):
        spans = tuple(PhiSpan(m.start(), m.end(), "TERRITORIO", "crf", 1.0)
                      for m in re.finditer(r"\d{5}|[A-Z]\w+", text))
        doc = ClinicalDocument("caso-1", text, "jsonl")
        return {r.original: r.replacement for r in
                rewriter.rewrite(TaggedDocument(doc, spans)).replacements}

    plain_case = rewritten("Vive en Madrid, CP 28040.")
    named = plain_case["Madrid"]
    assert province_code(named) == plain_case["28040"][:2]
    out = rewritten(f"Vive en Madrid, CP 28040. Nació en {named}.")
    assert out["Madrid"] != named and out[named] != named
    assert province_code(out["Madrid"]) == out["28040"][:2]


@given(person=persons, code=st.sampled_from(sorted(PROVINCES)),
       rest=st.integers(0, 999))
@SETTINGS
def test_when_any_postcode_then_surrogate_is_a_valid_province_code(person, code, rest):
    out = surrogate(f"{code}{rest:03d}", "ZIP", Ctx(person_id=person))
    assert out[:2] in PROVINCES and len(out) == 5


@pytest.mark.parametrize("value", ["66260", "03020", "E-66260", "00184"])
def test_when_a_postcode_is_foreign_then_its_surrogate_names_no_province(value):
    # Mexico's 66260 and 03020 (03 is Alicante: a foreign postcode that
    # starts like a province cannot be told from one, and is one) and
    # Rome's 00184.
    out = es(value, "ZIP")
    digits = re.sub(r"\D", "", out)
    assert len(digits) == 5 and out.startswith(value[:-5])
    assert (digits[:2] in PROVINCES) == (value[-5:-3] in PROVINCES), out
    assert digits != value[-5:]


def test_when_town_then_a_spanish_town_and_generic_words_kept():
    assert es("provincia de Toledo", "LOCATION").startswith("provincia de ")
    assert es("Concepción", "CITY") != "Concepción"


def test_when_town_table_then_every_province_has_towns_and_known_towns_are_placed():
    from deid_pipeline.surrogates.es.towns import spanish_towns

    towns = spanish_towns()
    assert set(towns.pools) == set(PROVINCES)
    assert all(towns.pool(code).words for code in PROVINCES)
    # Capitals, a bilingual name by either half, and single-province communities.
    for name, code in [("Alcalá de Henares", "28"), ("Vitoria", "01"),
                       ("Gasteiz", "01"), ("Santiago de Compostela", "15"),
                       ("Jerez de la Frontera", "11"), ("Ponferrada", "24"),
                       ("Logroño", "26"), ("Oviedo", "33")]:
        assert towns.province_of(name) == code, code
    assert towns.province_of("Ningunsitio de Nada") is None


@given(person=persons, town=st.sampled_from(
    ["Alcalá de Henares", "Ponferrada", "Jerez de la Frontera", "Getxo", "Reus",
     "Talavera de la Reina", "Santiago de Compostela", "Elche", "Motril", "Gijón",
     "El Ejido", "La Línea de la Concepción", "Las Rozas de Madrid"]))
@SETTINGS
def test_when_town_then_drawn_in_the_surrogate_of_its_province(person, town):
    from deid_pipeline.surrogates.es.towns import spanish_towns

    towns = spanish_towns()
    code = towns.province_of(town)
    ctx = Ctx(person_id=person)
    out = surrogate(town, "LOCATION", ctx)
    postcode = surrogate(f"{code}001", "LOCATION", ctx)
    assert plain(out) != plain(town)
    # A town in the table, whole ("El Ejido" is a town, not "El" and a town).
    assert postcode[:2] in towns.provinces_of(out)
    assert plain(out) in {plain(t) for t in towns.pool(postcode[:2]).words}
    # Keyed and deterministic; a postcode in the same span agrees too.
    assert surrogate(town, "LOCATION", Ctx(person_id=person)) == out
    assert surrogate(f"{code}001 {town}", "LOCATION", ctx) == f"{postcode} {out}"


def test_when_town_unknown_then_drawn_in_the_province_of_the_documents_postcode():
    from deid_pipeline.surrogates import Originals
    from deid_pipeline.surrogates.es.towns import spanish_towns

    avoid = Originals.of([("Villaninguna", "LOCATION"), ("16004", "LOCATION")])
    ctx = RewriteContext(key=KEY, person_id=ES.person_id, as_of_year=AS_OF,
                         language="es", avoid=avoid)
    out = surrogate("Villaninguna", "LOCATION", ctx)
    assert surrogate("16004", "LOCATION", ctx)[:2] in spanish_towns().provinces_of(out)
    # Two provinces' postcodes name none: a town of all of Spain.
    avoid = Originals.of([("Villaninguna", "LOCATION"), ("16004", "LOCATION"),
                          ("28040", "LOCATION")])
    ctx = RewriteContext(key=KEY, person_id=ES.person_id, as_of_year=AS_OF,
                         language="es", avoid=avoid)
    assert surrogate("Villaninguna", "LOCATION", ctx)


def test_when_street_then_type_word_floor_and_door_kept():
    out = es("Calle Fernando Higueras, 27, 7B", "STREET")
    assert re.fullmatch(r"Calle [\w ]+, \d\d, \dB", out), out
    assert "Higueras" not in out
    out = es("Avda. Escosura, 4 - 6º", "STREET")
    assert re.fullmatch(r"Avda\. \w+, \d - \dº", out), out
    out = es("Plaza Mayor 3, 2º izq.", "STREET")
    assert out.startswith("Plaza ") and out.endswith("º izq.") and "Mayor" not in out
    # Floor and door glued (5ºC: the door is no surname), Crta., an estate's words.
    out = es("Avda. de la Constitución 23, 4ºB", "STREET")
    assert re.fullmatch(r"Avda\. de la \w+ \d\d, \dºB", out), out
    out = es("Crta. Feguerido, 3", "STREET")
    assert re.fullmatch(r"Crta\. \w+, \d", out) and "Feguerido" not in out, out
    out = es("Polígono Industrial Las Arenas, nave 7", "STREET")
    assert re.fullmatch(r"Polígono Industrial Las \w+, nave \d", out), out
    assert "Arenas" not in out


def test_when_hospital_then_generic_words_kept_and_proper_words_new():
    out = es("Hospital General Universitario Gregorio Marañón", "HOSPITAL")
    assert out.startswith("Hospital ") and "Universitario " in out
    assert "Hospital General" not in out  # two of its words in a row: see below
    assert "Gregorio" not in out and "Marañón" not in out
    out = es("Hospital Universitario 12 de Octubre", "HOSPITAL")
    day = int(re.search(r"\d+", out).group())
    assert 1 <= day <= 28  # a hospital named for a day keeps a possible day
    out = es("Centro de Salud Chantrea", "HOSPITAL")
    assert out.startswith("Centro de ") and "Chantrea" not in out


def test_when_country_then_a_country_in_spanish():
    out = es("Marruecos", "COUNTRY")
    assert out != "Marruecos" and out[0].isupper()


def test_when_limited_dataset_then_places_kept():
    lds = Ctx(policy="limited-dataset")
    for value, label in (("Madrid", "LOCATION"), ("28040", "ZIP"),
                         ("Asturias", "STATE")):
        assert surrogate(value, label, lds) == value


# ---- dates ---------------------------------------------------------------------

def _date(value: str) -> datetime.date:
    p = parse_date(value, AS_OF, SPANISH_DATES)
    return datetime.date(p.year, p.month, p.day)


def test_when_numeric_date_then_read_day_first():
    assert _date("03/04/2019") == datetime.date(2019, 4, 3)
    assert _date("31/12/2019") == datetime.date(2019, 12, 31)
    assert _date("22-7-04") == datetime.date(2004, 7, 22)
    assert parse_date("12/31/2019", AS_OF, SPANISH_DATES) is None


def test_when_not_a_valid_day_first_date_then_masked_never_written():
    with pytest.raises(SurrogateError):
        es("12/31/2019", "DATE")
    with pytest.raises(SurrogateError):
        es("31/02/2019", "DATE")
    text = "Visto el 12/31/2019."
    span = PhiSpan(9, 19, "DATE", "crf", 1.0)
    ctx = RewriteContext(key=KEY, person_id="p", as_of_year=AS_OF, language="es")
    out, _ = rewrite(text, [span], make_operator("surrogate"), ctx)
    assert out == "Visto el [**DATE**]."


def test_when_two_dates_of_one_person_then_interval_kept():
    a, b = "03/04/2019", "31/12/2019"
    shifted = _date(es(a, "DATE")), _date(es(b, "DATE"))
    assert shifted[1] - shifted[0] == _date(b) - _date(a)
    offset = date_shift_days(KEY, ES.person_id)
    assert shifted[0] == _date(a) + datetime.timedelta(days=offset)
    worded = es("3 de abril de 2019", "DATE")
    assert _date(worded) == shifted[0]


def test_when_date_in_words_then_shifted_in_the_same_form():
    out = es("3 de abril de 2019", "DATE")
    assert re.fullmatch(rf"\d{{1,2}} de ({MONTHS}) de \d{{4}}", out), out
    assert re.fullmatch(rf"({MONTHS}) de \d{{4}}", es("abril de 2019", "DATE"))
    assert re.fullmatch(r"[A-Z][a-z]+ \d{4}", es("Abril 2019", "DATE"))
    assert re.fullmatch(r"\d{1,2}-[a-z]{3}-\d{4}", es("3-abr-2019", "DATE"))
    assert re.fullmatch(r"[a-z]+-\d\d", es("diciembre-08", "DATE"))
    assert re.fullmatch(r"sept\. \d{4}|[a-z]{3}\. \d{4}", es("sept. 2019", "DATE"))


@pytest.mark.parametrize("abbr, month", [("ene", 1), ("feb", 2), ("mar", 3),
                                         ("abr", 4), ("may", 5), ("jun", 6),
                                         ("jul", 7), ("ago", 8), ("sep", 9),
                                         ("sept", 9), ("oct", 10), ("nov", 11),
                                         ("dic", 12)])
def test_when_month_abbreviation_then_its_month(abbr, month):
    assert _date(f"15-{abbr}-2019") == datetime.date(2019, month, 15)


@given(person=persons, day=st.dates(datetime.date(1930, 1, 1),
                                    datetime.date(2024, 12, 31)))
@SETTINGS
def test_when_any_numeric_date_then_output_is_a_valid_day_first_date(person, day):
    ctx = Ctx(person_id=person)
    short = f"{day.day}-{day.month}-{day.year % 100:02d}"  # "22-7-04"
    for text in (day.strftime("%d/%m/%Y"), short):
        out = surrogate(text, "DATE", ctx)
        assert not impossible_day_first(out)
        offset = date_shift_days(KEY, person)
        assert _date(out) == day + datetime.timedelta(days=offset)


def test_when_range_then_both_ends_shift():
    assert re.fullmatch(r"\d{4} y \d{4}", es("1993 y 1994", "DATE"))
    out = es("de 2010 a 2012", "DATE")
    assert re.fullmatch(r"de \d{4} a \d{4}", out)


# ---- determinism, language choice, English unchanged ---------------------------

def test_when_same_key_and_value_then_same_surrogate_across_runs():
    values = [("María García López", "PATIENT"), ("12345678Z", "IDNUM"),
              ("03/04/2019", "DATE"), ("Calle Mayor 3", "STREET"),
              ("934 169 700", "PHONE"), ("28040", "ZIP")]
    first = [es(v, label) for v, label in values]
    _memo.cache_clear()
    assert [es(v, label) for v, label in values] == first
    other = [surrogate(v, label, Ctx(key=OTHER_KEY)) for v, label in values]
    assert sum(a != b for a, b in zip(first, other)) >= len(values) - 1


def test_when_english_then_english_generators_and_outputs():
    for value, label in (("John Smith", "PATIENT"), ("03/04/2019", "DATE"),
                         ("617-555-0100", "PHONE"), ("Boston", "CITY")):
        assert generator_for(label, "en") is GENERATORS[label]
        expected = GENERATORS[label].generate(value, label, EN)
        assert surrogate(value, label, EN) == expected
    assert _date_en("03/04/2019") == datetime.date(2019, 3, 4)  # month first


def _date_en(value: str) -> datetime.date:
    p = parse_date(value, AS_OF)
    return datetime.date(p.year, p.month, p.day)


def test_when_context_has_no_language_then_english():
    @dataclass(frozen=True)
    class Bare:
        key: bytes = KEY
        person_id: str = "p" * 20
        policy: str = "safe-harbor"
        as_of_year: int = AS_OF

    assert surrogate("03/04/2019", "DATE", Bare()) == surrogate(
        "03/04/2019", "DATE", Ctx(person_id="p" * 20, language="en"))


def test_when_language_unknown_then_refused():
    with pytest.raises(ValueError, match="surrogate language"):
        RewriteContext(key=KEY, person_id="p", language="fr")


def test_when_run_language_then_option_else_the_models():
    parser = build_parser()
    given_es = parser.parse_args(["--input", "x", "--output", "y", "--language", "es"])
    assert surrogate_language(given_es) == "es"
    default = parser.parse_args(["--input", "x", "--output", "y"])
    assert not hasattr(default, "language")  # run.json's options as before
    assert surrogate_language(default) == "en"  # the shipped model is English


# ---- label maps: which generator a site label takes -------------------------------

def test_when_meddocan_map_then_labels_take_their_finer_generators():
    load_label_map("meddocan")
    assert builtin_label("CALLE") == "STREET"
    assert builtin_label("NOMBRE_PERSONAL_SANITARIO") == "DOCTOR"
    assert builtin_label("NOMBRE_SUJETO_ASISTENCIA") == "PATIENT"
    assert builtin_label("TERRITORIO") == "LOCATION"
    assert builtin_label("ID_ASEGURAMIENTO") == "HEALTHPLAN"
    assert builtin_label("CORREO_ELECTRONICO", "a@b.es") == "EMAIL"
    out = surrogate("Calle Mayor 3", "CALLE", ES)
    assert out.startswith("Calle ") and "Mayor" not in out


@pytest.mark.parametrize("finer, message", [
    ({"CALLE_X": "DOCTOR"}, "no built-in label of it"),
    ({"NOPE": "STREET"}, "not one of the map's own labels"),
    ({"PATIENT": "DOCTOR"}, "not one of the map's own labels"),
])
def test_when_surrogate_label_of_another_category_then_refused(finer, message):
    with pytest.raises(LabelMapError, match=message):
        label_map_from_json({"labels": {"CALLE_X": "location"},
                             "surrogate_labels": finer}, "site.json")


# ---- what a Spanish run must not write back ---------------------------------------

def test_when_age_in_spanish_words_under_90_then_it_stands_and_the_guard_agrees():
    from deid_pipeline.leak_guard import policy_keeps

    for value in ("trece años", "Ocho años", "tres meses", "un mes y medio"):
        assert es(value, "AGE") == value
        assert policy_keeps("AGE", value, "safe-harbor")
    assert es("noventa y dos años", "AGE") == "noventa años"
    assert not policy_keeps("AGE", "noventa y dos años", "safe-harbor")
    assert not policy_keeps("AGE", "trece Madrid", "safe-harbor")


def test_when_institution_of_generic_words_only_then_the_surrogate_does_not_hold_it():
    out = es("Hospital Clínico Universitario", "HOSPITAL")
    assert out.startswith("Hospital ") and "Clínico Universitario" not in out


@pytest.mark.parametrize("name, longer", [
    ("Ciudad de la Justicia", "Ciudad de la Justicia Fiscal"),
    ("Hospital General", "Hospital General de Alcorcón"),
    ("Hospital Clínico Universitario", "Hospital Clínico Universitario Lozano Blesa"),
    ("Facultad de Medicina", "Facultad de Medicina y Odontología"),
    ("Clínica Universitaria", "Clínica Universitaria de Navarra"),
])
def test_when_a_span_runs_past_a_name_of_generic_words_then_its_surrogate_drops_it(
        name, longer):
    # The tagger took a name made of generic words (MEDDOCAN's gold writes
    # these as institutions) with a word after it: the surrogate keeps none
    # of its generic words in a row, so the name cannot stand in it.
    for label in ("ORGANIZATION", "HOSPITAL"):
        out = es(longer, label)
        assert not holds(out, name), (longer, label)
        assert out.split()[0] == longer.split()[0]  # the kind of institution
        assert not holds(es(name, label), name)


def test_when_a_place_surrogate_would_be_another_original_of_the_person_then_redrawn():
    from deid_pipeline.surrogates import Originals

    drawn = es("Madrid", "LOCATION")
    avoid = Originals.of([("Madrid", "LOCATION"), (drawn, "LOCATION")])
    ctx = RewriteContext(key=KEY, person_id=ES.person_id, as_of_year=AS_OF,
                         language="es", avoid=avoid)
    again = surrogate("Madrid", "LOCATION", ctx)
    assert plain(again) not in {"madrid", plain(drawn)}


@pytest.mark.parametrize("maker", ["Pfizer", "Schering-Plough", "Lilly y Dista",
                                   "Carl Zeiss Meditec"])
def test_when_a_company_has_a_bare_name_then_its_surrogate_is_of_surnames(maker):
    # A maker in a product's brackets (tagger/bracket_makers.py) should not
    # read as the town after it: its words become Spanish surnames.
    from deid_pipeline.surrogates.es.names import spanish_names

    out = es(maker, "ORGANIZATION")
    words = [w for w in re.findall(r"[^\W\d_]+", out) if w not in ("y", "i", "e")]
    assert words and not holds(out, maker)
    assert all(w in spanish_names().last.words for w in words), out
    assert es(maker, "ORGANIZATION") == out
