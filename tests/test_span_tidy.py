"""A site model's contact and date boundaries tidied by category."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.span_tidy import tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


@pytest.mark.parametrize("text, found, label, expected", [
    ("Pamplona E-mail.hleonbrito@hotmail.com x", "E-mail.hleonbrito@hotmail.com",
     "CORREO_ELECTRONICO", "hleonbrito@hotmail.com"),
    ("28042 Madrid E-mail-jdemiguel@geodental.com", "E-mail-jdemiguel@geodental.com",
     "CORREO_ELECTRONICO", "jdemiguel@geodental.com"),
    ("España. rgarc18@oc.mde.es.", "rgarc18@oc.mde.es.", "CORREO_ELECTRONICO",
     "rgarc18@oc.mde.es"),
    ("Tfno. 848428434 Fax 948136286", "848428434 Fax", "NUMERO_TELEFONO",
     "848428434"),
    ("Tfno. 848428434 Fax 948136286", "Tfno. 848428434", "NUMERO_TELEFONO",
     "848428434"),
    ("Tfno: 986413144 ext 1530", "986413144 ext 1530", "NUMERO_TELEFONO",
     "986413144 ext 1530"),
    ("el día 30-marzo-2004 ingresa", "marzo", "FECHAS", "30-marzo-2004"),
    ("el día 30-marzo-2004 ingresa", "marzo-2004", "FECHAS", "30-marzo-2004"),
    ("el 12/03/2016 ingresa", "12/03/2016", "FECHAS", "12/03/2016"),
    # Not a contact or a date: untouched.
    ("Calle Tudela, 27, 4 der.", "Calle Tudela, 27, 4 der", "CALLE",
     "Calle Tudela, 27, 4 der"),
    ("Edad: 5-7 años", "7 años", "EDAD_SUJETO_ASISTENCIA", "7 años"),
])
def test_when_span_has_a_glued_cue_or_half_a_date_then_tidied(
        text, found, label, expected):
    start = text.index(found)
    (span,) = tidy_spans(text, [PhiSpan(start, start + len(found), label, "crf")])
    assert text[span.start:span.end] == expected
    assert span.label == label


def test_when_contact_has_no_digit_or_at_then_untouched():
    text = "web: http://www.seram.es y"
    start = text.index("http")
    url = PhiSpan(start, start + len("http://www.seram.es"), "URL_WEB", "crf")
    assert tidy_spans(text, [url]) == (url,)
