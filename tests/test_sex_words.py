"""A patient's sex written after the word for the patient, for a site that keeps it."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.sex_words import SEX_SOURCE
from deid_pipeline.tagger.span_tidy import tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


def _added(text, spans=()):
    return [(text[s.start:s.end], s.label) for s in tidy_spans(text, list(spans))
            if s.source == SEX_SOURCE]


@pytest.mark.parametrize("text, word", [
    ("Informe clínico del paciente: Paciente masculino de 33 años, con", "masculino"),
    ("Se trata de una paciente de sexo femenino, de 54 años de edad", "femenino"),
    ("Individuo de sexo masculino, de 19 años de edad y en uniforme", "masculino"),
    ("Lactante de sexo femenino que ingresó a los 7 meses", "femenino"),
    ("mujer de 76 años de sexo femenino con", "femenino"),
    ("Edad: 75 años Sexo: Mujer.", "Mujer"),
])
def test_when_the_patients_sex_follows_a_word_for_the_patient_then_added(text, word):
    assert _added(text) == [(word, "SEXO_SUJETO_ASISTENCIA")]


@pytest.mark.parametrize("text", [
    # Another person's sex, or no word for the patient before it.
    "naciendo un feto vivo de sexo masculino de 690 g",
    "no ha tenido pareja ni amigos de sexo masculino",
    "Varón de 52 años",
])
def test_when_the_sex_is_not_the_patients_then_nothing_added(text):
    assert _added(text) == []


def test_when_a_span_already_holds_the_word_then_not_doubled():
    text = "Paciente masculino de 33 años"
    start = text.index("masculino")
    found = PhiSpan(start, start + len("masculino"), "SEXO_SUJETO_ASISTENCIA", "crf",
                    0.9)
    assert tidy_spans(text, [found]) == (found,)
