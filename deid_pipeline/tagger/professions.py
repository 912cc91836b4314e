"""A patient's profession where a case states it: ``Varón de 78 años, carpintero``.

A site model sees a profession a few dozen times in its training notes, each
a different word, and learns almost none (MEDDOCAN's development part: 0 of 9
profession tokens found by a model trained on the training part and half the
development part). Where a case states a profession, it does so in a few
set phrases: right after the age that opens it (``Mujer de 28 años, auxiliar
de enfermería,``), after ``de profesión``, ``trabaja como``, ``ocupación:``.
There, a job of Faker's ``es_ES`` list (in the masculine; the feminine made
by its ending: ``soldador`` -> ``soldadora``) or a common one that list
lacks (:data:`EXTRA_JOBS`: ``enfermero``, ``ama de casa``, ``militar``) is added
with the site's profession label, when no span touches it and the job word
ends there (a comma, a full stop, a bracket, or ``que``/``sin``/``con``/``en``
after it). In the gold of MEDDOCAN's training and development parts these
phrases hold a listed job 6 times, all 6 annotated as professions.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from deid_pipeline.labels import site_labels
from deid_pipeline.model import PhiSpan

__all__ = ["PROFESSION_SOURCE", "missed_professions"]

PROFESSION_SOURCE = "rules:professions"
# Common occupations Faker's list lacks (it has ``Abogado`` and ``Carpintero``
# but no ``enfermero`` or ``profesor``), in the masculine; ``hogar`` is how
# Latin American records write a homemaker's occupation.
EXTRA_JOBS = (
    "ama de casa", "hogar", "militar", "policía", "guardia civil", "bombero",
    "enfermero", "auxiliar de enfermería", "médico", "profesor", "maestro",
    "mecánico", "conductor", "camionero", "taxista", "cocinero", "camarero",
    "dependiente", "comercial", "administrativo", "ingeniero", "arquitecto",
    "electricista", "fontanero", "pintor", "peluquero", "jardinero", "limpiador",
    "cuidador", "panadero", "carnicero", "pescador", "ganadero", "agricultor",
    "minero", "albañil", "carpintero", "soldador", "obrero", "peón", "jornalero")
_FEMININE = (("or", "ora"), ("o", "a"))
_LOCK = threading.Lock()
_PATTERN: list[re.Pattern[str]] = []


def _jobs() -> set[str]:
    from faker.providers.job.es_ES import Provider

    jobs = set()
    for job in (*Provider.jobs, *EXTRA_JOBS):
        words = job.lower().split()
        jobs.add(" ".join(words))
        for masculine, feminine in _FEMININE:
            if words[0].endswith(masculine):
                jobs.add(" ".join([words[0][: -len(masculine)] + feminine, *words[1:]]))
                break
    return jobs


def _pattern() -> re.Pattern[str]:
    with _LOCK:
        if not _PATTERN:
            jobs = "|".join(sorted(map(re.escape, _jobs()), key=len, reverse=True))
            _PATTERN.append(re.compile(
                r"(?i:\b\d{1,3} años(?: de edad)?,\s+|\bde profesi[oó]n:?\s+"
                r"|\b(?:trabaja(?:ba)?|emplead[oa]|trabaj[oó]) como\s+"
                r"|\b(?:ocupaci[oó]n|profesi[oó]n):\s*)"
                rf"(?P<job>(?i:{jobs}))"
                r"(?=\s*[,.;()\n]|\s+(?:que|sin|con|en|desde)\b)"))
        return _PATTERN[0]


def missed_professions(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """Stated professions no span of ``spans`` touches (module docstring)."""
    labels = site_labels("PROFESSION")
    if len(labels) != 1:
        return []
    out = []
    for match in _pattern().finditer(text):
        start, end = match.span("job")
        if not any(s.start < end and start < s.end for s in spans):
            out.append(PhiSpan(start, end, labels[0], PROFESSION_SOURCE, 1.0))
    return out
