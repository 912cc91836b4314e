"""A patient's sex after the word for the patient: ``paciente de sexo femenino``.

MEDDOCAN's annotators mark a patient's sex (``SEXO_SUJETO_ASISTENCIA``, a
label the site keeps: it is annotated, never replaced), and the site model
finds it at the start of a case (``Varón de 52 años``) but misses it in the
other ways a case writes it: ``paciente masculino``, ``individuo de sexo
masculino``, ``lactante de sexo femenino``. Right after a word for the patient
(``paciente``, ``individuo``, ``lactante``, ``neonato``, ``recién nacido``; with
``de sexo`` between or not), after ``años de sexo`` or after ``Sexo:``, the
gold of the training and development parts marks the word of sex 127 times in
128 (the other: a general remark, ``en un paciente varón``; ``de sexo`` after
any other word is a foetus's or a friend's as often as the patient's, and is
not taken). So such a word no span touches is added with the site's sex label,
when its map has one of :data:`SEX_LABEL_NAMES` of category KEEP; it changes
no output, only what is counted and reviewed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deid_pipeline.labels import site_labels
from deid_pipeline.model import PhiSpan

__all__ = ["SEX_LABEL_NAMES", "SEX_SOURCE", "missed_sex_words"]

SEX_SOURCE = "rules:sex_words"
SEX_LABEL_NAMES = ("SEXO_SUJETO_ASISTENCIA", "SEXO")
_SEX = r"(?P<sex>(?i:masculino|femenino|var[oó]n|mujer|hembra))\b"
_SEX_AFTER_PATIENT = re.compile(
    r"\b(?:(?:[Pp]aciente|[Ii]ndividuo|[Ll]actante|[Nn]eonato|[Rr]eci[eé]n nacid[oa])"
    r"(?:\s+del?\s+sexo)?|años\s+de\s+sexo|[Ss]exo:)\s*" + _SEX)


def _sex_label() -> str | None:
    keep = set(site_labels("KEEP"))
    return next((name for name in SEX_LABEL_NAMES if name in keep), None)


def missed_sex_words(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """Words of a patient's sex no span of ``spans`` touches (module docstring)."""
    label = _sex_label()
    if label is None:
        return []
    out = []
    for match in _SEX_AFTER_PATIENT.finditer(text):
        start, end = match.span("sex")
        if not any(s.start < end and start < s.end for s in spans):
            out.append(PhiSpan(start, end, label, SEX_SOURCE, 1.0))
    return out

