"""A patient's profession where a Spanish case states it."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.professions import PROFESSION_SOURCE
from deid_pipeline.tagger.span_tidy import tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


def _added(text, spans=()):
    return [(text[s.start:s.end], s.label) for s in tidy_spans(text, list(spans))
            if s.source == PROFESSION_SOURCE]


@pytest.mark.parametrize("text, job", [
    ("Historia Actual: Mujer de 28 años, auxiliar de enfermería, que acude",
     "auxiliar de enfermería"),
    ("Informe clínico del paciente: Varón de 61 años, albañil, sin antecedentes",
     "albañil"),
    # Faker's masculine made feminine; a job Faker lacks.
    ("Mujer de 40 años, abogada, que consulta", "abogada"),
    ("Varón de 35 años de edad, enfermero, con", "enfermero"),
    ("68 años de edad, diestra, casada, ocupación: hogar. Padecimiento", "hogar"),
    ("De profesión carpintero, fumador de 10 cigarrillos", "carpintero"),
    ("empleada como soldadora en una fábrica", "soldadora"),
])
def test_when_a_case_states_the_patients_job_then_added(text, job):
    assert _added(text) == [(job, "PROFESION")]


@pytest.mark.parametrize("text", [
    # No set phrase before it, or no word end after it, or not a listed job.
    "El carpintero de la obra le trasladó al hospital",
    "Varón de 70 años, minero jubilado, con",
    "Varón de 53 años, jubilado, sin alergias",
    "Mujer de 62 años, diabética e hipertensa",
])
def test_when_no_stated_job_then_nothing_added(text):
    assert _added(text) == []


def test_when_a_span_already_holds_the_job_then_not_doubled():
    text = "Varón de 78 años, carpintero, exfumador"
    start = text.index("carpintero")
    found = PhiSpan(start, start + len("carpintero"), "PROFESION", "crf", 0.9)
    assert tidy_spans(text, [found]) == (found,)
