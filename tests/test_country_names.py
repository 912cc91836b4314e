"""Country names a Spanish site model missed, added from the gazetteer."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.country_names import COUNTRY_SOURCE, missed_countries
from deid_pipeline.tagger.span_tidy import tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


def _found(text, spans=()):
    return [text[s.start:s.end] for s in tidy_spans(text, list(spans))
            if s.source == COUNTRY_SOURCE]


@pytest.mark.parametrize("text, countries", [
    ("Fecha de nacimiento: 13/06/1961.\nPaís: Costa Rica.\nEdad: 56", ["Costa Rica"]),
    ("paciente de 25 años, natural de Ucrania, diagnosticada de diabetes",
     ["Ucrania"]),
    ("04005-005 Sao Paulo SP Brasil e-mail: x", ["Brasil"]),
    # English names and the short forms of long ones, abbreviations with dots.
    ("(Sonos 100 CF, Hewlett Packard, Massachusetts, USA) se apreció",
     ["USA"]),
    ("un implante (Mentor®, Johnson & Johnson, New Jersey, EE.UU.), de 350cc",
     ["EE.UU."]),
    ("Av. Tres Cruces s/n. 46014 Valencia, Spain.", ["Spain"]),
    ("una universidad privada del Reino Unido se objetiva", ["Reino Unido"]),
])
def test_when_a_country_name_is_missed_then_added_with_the_site_country_label(
        text, countries):
    assert _found(text) == countries
    assert {s.label for s in missed_countries(text, [])} == {"PAIS"}


@pytest.mark.parametrize("text", [
    # A first name or a surname of the top band, or a Spanish town: ambiguous.
    "Remitido por: Dr. Mauricio Pérez.",
    "Hospital Universitario San Cecilio de Granada.",
    "brucelosis (fiebre de Malta) en 2004",
    # Part of a word or of a hyphenated name; not capitalised as listed.
    "Straumann, Walderburg-Switzerland) colocado",
    # Part of a longer name: a capitalised word beside it.
    "un implante (Mentor®, Johnson & Johnson, New Jersey) de 350cc",
    "dispositivo VAC® (KCI Clinic Spain SL), en modo continuo",
    "dieta con chile y comino",
    "un CHILENO de 40 años",
])
def test_when_a_country_name_is_ambiguous_or_not_a_word_then_left_to_the_model(text):
    assert _found(text) == []


def test_when_a_span_touches_the_country_then_it_is_not_added():
    text = ("Servicio de Cirugía, Hospital Clínico Universidad de Chile. "
            "Santiago, Chile.")
    hospital = "Hospital Clínico Universidad de Chile"
    start = text.index(hospital)
    spans = [PhiSpan(start, start + len(hospital), "HOSPITAL", "crf", 0.9)]
    out = tidy_spans(text, spans)
    assert [text[s.start:s.end] for s in out] == [hospital, "Chile"]
    assert out[1].start == text.rindex("Chile") and out[1].label == "PAIS"


@pytest.mark.parametrize("text, value, label, expected", [
    # A country the model gave the town label takes the country label.
    ("Av. Tres Cruces s/n. 46014 Valencia, Spain.", "Spain", "TERRITORIO", "PAIS"),
    ("originario de Marruecos, que ingresó", "Marruecos", "TERRITORIO", "PAIS"),
    # A town, a longer place, or another kind of place keeps its label.
    ("Ciudad de México D.F. 06800", "México D.F.", "TERRITORIO", "TERRITORIO"),
    ("Hospital Universitario de Granada", "Granada", "TERRITORIO", "TERRITORIO"),
    ("Calle Colombia, 12", "Calle Colombia, 12", "CALLE", "CALLE"),
])
def test_when_a_place_span_is_a_country_name_then_it_takes_the_country_label(
        text, value, label, expected):
    start = text.index(value)
    (span,) = [s for s in tidy_spans(text, [PhiSpan(start, start + len(value), label,
                                                    "crf", 0.9)])
               if s.start == start]
    assert (text[span.start:span.end], span.label) == (value, expected)
