"""Spanish ages: over 89 -> ``90``/``90+`` (``noventa`` in words); others kept.

The English rule (:mod:`deid_pipeline.surrogates.ages`) with Spanish words:
units ``meses``, ``semanas``, ``días``, ``horas`` (``1100 meses`` is over 89
years), numbers in words over 89 (``noventa y dos``, ``ciento uno``), and the
words an age's text may hold (``años``, ``de edad``, ``varón``); any other
word makes it fail and the span is masked.
"""

from __future__ import annotations

import re

from deid_pipeline.surrogates.ages import AgeGenerator

_NUMBER = re.compile(
    r"(?<![\d.,])(?P<n>\d+(?:[.,]\d+)?)(?P<gap>\s*-?\s*)"
    r"(?P<unit>mes(?:es)?\b|sem(?:anas?)?\b|d[ií]as?\b|h(?:oras?)?\b)?",
    re.IGNORECASE)
_UNIT_YEARS = {"me": 12, "se": 52, "dí": 365, "di": 365, "h": 8766, "ho": 8766}
_UNITS = (r"uno|un|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce"
          r"|trece|catorce|quince|dieciséis|dieciseis|diecisiete|dieciocho"
          r"|diecinueve|veinte|veinti\w+")
_TENS = (r"treinta|cuarenta|cincuenta|sesenta|setenta|ochenta|noventa")
_WORDS = re.compile(
    rf"\b(?:noventa\s+y\s+(?:{_UNITS})|cien|ciento(?:\s+(?:{_TENS})(?:\s+y\s+"
    rf"(?:{_UNITS}))?|\s+(?:{_UNITS}))?)\b", re.IGNORECASE)
_ANY_WORD_NUMBER = re.compile(rf"\b(?:{_UNITS}|{_TENS}|cien|ciento)\b",
                              re.IGNORECASE)
_AGE_WORDS = frozenset("""
a año años anos de edad y medio con tiene tenía cumplidos aprox aproximadamente
unos unas casi más mas menos cerca alrededor varón varon mujer hombre niño niña
nino nina paciente meses mes semanas semana sem días dias día dia horas hora h
vida uno un una dos tres cuatro cinco seis siete ocho nueve diez once doce trece
catorce quince dieciséis dieciseis diecisiete dieciocho diecinueve veinte
veintiuno veintiún veintidós veintidos veintitrés veintitres veinticuatro
veinticinco veintiséis veintiseis veintisiete veintiocho veintinueve treinta
cuarenta cincuenta sesenta setenta ochenta noventa cien ciento
""".split())


class SpanishAgeGenerator(AgeGenerator):
    """Spanish ages over 89 -> ``90``/``90+``/``noventa``; others unchanged."""

    number_rx = _NUMBER
    unit_years = _UNIT_YEARS
    words_rx = _WORDS
    any_word_number = _ANY_WORD_NUMBER
    allowed = _AGE_WORDS
    ninety = "noventa"
