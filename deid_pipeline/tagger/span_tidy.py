"""Boundary tidying of a site model's spans, by category, and the dates it missed.

A site model learns its annotators' boundaries, but two kinds of slip recur
where a value is glued to its neighbours without a blank, and the tokens
around it look like the value's own:

- a contact taken with its cue: ``E-mail.ana@x.es``, ``mail-ana@x.es``,
  ``848428434 Fax``: an e-mail span is cut to the address (from the first
  character after the last non-address character before ``@``), a phone
  span (digits, no ``@``) loses the words of letters at either end and a
  ``+`` before the country code (annotators leave it out: ``+ 34 93 ...``);
- a name taken with its title: ``Doctora Marta García`` loses ``Doctora``
  (no name span of MEDDOCAN's gold starts with a title);
- a date found from its middle: ``30-marzo-2004`` tagged from ``marzo``: a
  date span grows over digit runs joined to it by ``-``, ``/`` or ``.``;

and where two values stand side by side with only a blank or a conjunction
between them, the model takes them as one span where the annotators wrote
two (an address block's ``Hospital de Getafe Carretera Toledo``, ``28040
Madrid``; ``en 1993 y 1994``):

- a place span is cut between a postcode (five digits) and the word beside
  it (with the ``CP`` cue before a postcode left out), and before a street
  word (``Carretera``, ``Avda.``, ``C/``) that follows a capitalised word
  when the span does not start with one (nor is a post-office box,
  ``Apartado de Correos 20134``); in MEDDOCAN's gold no span is cut so;
- a date span is cut at ``y``/``e``/``a`` between two parts with digits;
- a place span of more than 60 characters with three commas or more is a
  line of values the model ran together (``Ana Ruiz, Department of
  Surgery, Dental College, Chennai 600095``), cut at its commas: each
  value is then replaced, and found again elsewhere, on its own (a name
  inside such a span is marked where it stands alone too);

and the other way round, a place span that is a street word alone
(``Pso``, ``Av.``) is joined to the place span after it when only a full
stop and blanks stand between (``Pso. Isabel La Católica, s/n``). The
family doctor (``médico de familia``) is no relative: that ``familia`` is
dropped, whatever its label (MEDDOCAN's annotators never mark it); so is
an age that is a time (``hace más de 20 años``, ``durante los últimos 40
años``, ``Ocho años atrás``). A postcode takes Spain's postal prefix before
it (``E-41013``), and a name never holds a ``Nº`` glued to its last word
(``Begoña IzaNºCol: 28 28 52001``: the name ends before it).

Each piece keeps the span's label. Only spans whose label is of category
AGE, CONTACT, DATE, LOCATION or NAME are touched. Last, a date written in digits
that no span touches (:mod:`.spanish_dates`: ``22-7-04``, ``diciembre-08``)
is added with the site's date label, when its label map has exactly one.
The English model's spans never pass here (its rules and clean-ups differ).
The street words, titles and date forms are Spanish: the only other language
a model is trained for.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable, Sequence

from deid_pipeline.labels import builtin_label, category, site_labels
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.bracket_makers import bracket_makers
from deid_pipeline.tagger.country_names import as_countries, missed_countries
from deid_pipeline.tagger.professions import missed_professions
from deid_pipeline.tagger.sex_words import missed_sex_words
from deid_pipeline.tagger.spanish_dates import written_dates

__all__ = ["dropped_by_tidying", "tidy_spans"]

# An address's characters before the @; a cue glued to it ("E-mail.") ends
# with a character that is not one, or with the word mail and its joiner.
_MAIL_CUE = re.compile(r"^(?:e-?mail|correo(?: electr[oó]nico)?)[\W_]*", re.I)
_LEADING_WORDS = re.compile(r"(?:[^\W\d_]+[\W_]*)+")
_TRAILING_WORDS = re.compile(r"(?:[\W_]+[^\W\d_]+)+[\W_]*$")
_JOINED_DIGITS_LEFT = re.compile(r"\d+[-/.]$")
_JOINED_DIGITS_RIGHT = re.compile(r"^[-/.]\d+")
_PLUS = re.compile(r"\+\s*")
_TITLE = re.compile(r"(?:Doctora|Doctor|Dra|Dr|Dña|Doña|Don|Sra|Sr|Prof)\b\.?\s*",
                    re.I)
# (cut start, cut end) gaps: the text between them belongs to neither piece.
_POSTCODE_THEN_WORD = re.compile(r"(?<!\d)\d{5}(\s+)(?=[^\W\d_])")
_WORD_THEN_POSTCODE = re.compile(
    r"(?<=[^\W\d_]{2})(\s+(?:C\.? ?P\.?:? ?)?)\d{5}(?![\d-])")
# A post-office box ("Apartado de Correos 20134") is one value, number and all.
_BOX = re.compile(r"Apartado\b")
_STREET_WORD = (r"(?:C/|(?:Avda|Avenida|Av|Calle|Carretera|Ctra|Paseo|Pso|Pº|Plaza"
                r"|Pza)\b)")
_STREET_START = re.compile(_STREET_WORD)
_BEFORE_STREET = re.compile(r"(?<=[^\W\d_])(\s+)(?=%s)" % _STREET_WORD)
_STREET_ALONE = re.compile(_STREET_WORD + r"\.?")
_JOIN_GAP = re.compile(r"\.?\s+")
# A place span past 60 characters with three commas or more is a line of
# values (an affiliation: a name, a department, a college, a town and its
# postcode), not one address: it is cut at its commas. MEDDOCAN's longest
# gold place with three commas has 57 characters
# (``Calle del Alcalde Pablo Durán y Pérez de Castro, 6, 11, A``).
_ONE_PLACE_CHARS = 60
_LIST_COMMAS = 3
_LIST_COMMA = re.compile(r",\s*")
# ``Nº`` (número) glued to the word before it (``Begoña IzaNºCol: 28 28
# 52001``) belongs to the id after, never to a name.
_GLUED_NUMBER_WORD = re.compile(r"(?<=[^\W\d_])Nº")
_NAME_WORD_GLUED = re.compile(r"\s+([^\W\d_]+)Nº")
# Spain's postal prefix: ``E-41013`` is one postcode (MEDDOCAN's training
# gold starts 11 of 13 such postcodes at the E).
_POSTAL_PREFIX = re.compile(r"(?<![\w-])E-$")
# A number of years after ``hace``/``durante``/``desde hace`` or before
# ``atrás``/``antes`` is a time, not an age (no age of MEDDOCAN's 1,035
# training gold ages stands so).
_DURATION_BEFORE = re.compile(
    r"(?:\bhace(?: m[aá]s de| menos de| unos| casi)?|\bdesde hace(?: m[aá]s de)?"
    r"|\bdurante(?: los| m[aá]s de)?(?: [uú]ltimos| pr[oó]ximos)?|\b[uú]ltimos"
    r"|\bper[ií]odo de|\bevoluci[oó]n de(?: m[aá]s de| unos)?|\bplazo de)\s+$",
    re.I)
_DURATION_AFTER = re.compile(
    r"\s+(?:atr[aá]s|antes|despu[eé]s|de evoluci[oó]n|de antig[uü]edad)\b", re.I)
_FAMILY_DOCTOR = re.compile(r"(?:m[ée]dic[oa]s?|medicina) de\s+$", re.I)
_DATE_JOINER = re.compile(r"(?<=\d)(\s+[yea]\s+)(?=\S*\d)")
# Two institutions joined by ``y`` (``Hospital Clínico ... y Hospital San
# José``) are two values: no hospital or institution of MEDDOCAN's training
# and development gold holds ``y`` before an institution's word.
_INSTITUTION_WORD = (r"(?:Hospital|Cl[ií]nica|Complejo|Centro|Instituto|Fundaci[oó]n"
                     r"|Universidad|Sanatorio|Consorcio)\b")
_AND_ANOTHER = re.compile(r"(\s+y\s+)(?=%s)" % _INSTITUTION_WORD)
_INSTITUTION_BUILTINS = frozenset({"HOSPITAL", "ORGANIZATION"})


def _contact(text: str, span: PhiSpan) -> PhiSpan | None:
    value = text[span.start:span.end]
    if "@" in value:
        cue = _MAIL_CUE.match(value)
        start = span.start + (cue.end() if cue else 0)
        end = span.end
        while end > start and text[end - 1] in ".,;:":
            end -= 1
    elif any(c.isdigit() for c in value):
        m = _LEADING_WORDS.match(value)
        lead = m.end() if m and m.end() < len(value) else 0
        plus = _PLUS.match(value, lead)
        lead = plus.end() if plus and plus.end() < len(value) else lead
        m = _TRAILING_WORDS.search(value)
        trail = m.start() if m and m.start() > lead else len(value)
        start, end = span.start + lead, span.start + trail
    else:
        return span
    if start >= end:
        return None
    return dataclasses.replace(span, start=start, end=end)


def _name(text: str, span: PhiSpan) -> PhiSpan:
    glued = _GLUED_NUMBER_WORD.search(text, span.start, span.end)
    if glued is not None:
        span = dataclasses.replace(span, end=glued.start())
    elif after := _NAME_WORD_GLUED.match(text, span.end):
        if after.group(1)[0].isupper():
            span = dataclasses.replace(span, end=after.end(1))
    title = _TITLE.match(text, span.start, span.end)
    if title is None or title.end() == span.end:
        return span
    return dataclasses.replace(span, start=title.end())


def _postal_prefix(text: str, span: PhiSpan) -> PhiSpan:
    """A postcode span grown over the ``E-`` before it."""
    if (re.fullmatch(r"\d{5}", text[span.start:span.end])
            and _POSTAL_PREFIX.search(text, max(0, span.start - 3), span.start)):
        return dataclasses.replace(span, start=span.start - 2)
    return span


def _duration(text: str, span: PhiSpan) -> bool:
    """Whether an age span is a time (``hace 20 años``, ``ocho años atrás``)."""
    return (_DURATION_BEFORE.search(text, max(0, span.start - 40), span.start)
            is not None or _DURATION_AFTER.match(text, span.end) is not None)


def _date(text: str, span: PhiSpan) -> PhiSpan:
    start, end = span.start, span.end
    while m := _JOINED_DIGITS_LEFT.search(text, max(0, start - 12), start):
        if m.end() != start:
            break
        start = m.start()
    while m := _JOINED_DIGITS_RIGHT.match(text[end:end + 12]):
        end += m.end()
    return span if (start, end) == (span.start, span.end) else (
        dataclasses.replace(span, start=start, end=end))


def _capitalised_word_before(value: str, at: int) -> bool:
    word = re.search(r"[^\W\d_]+\W*$", value[:at])
    return word is not None and word.group()[0].isupper()


def _list_gaps(value: str) -> list[tuple[int, int]]:
    """The commas of a place span too long to be one value, as gaps."""
    gaps = [m.span() for m in _LIST_COMMA.finditer(value)]
    if len(value) <= _ONE_PLACE_CHARS or len(gaps) < _LIST_COMMAS:
        return []
    return gaps


def _place_gaps(value: str) -> list[tuple[int, int]]:
    if _BOX.match(value):
        return []
    if gaps := _list_gaps(value):
        return gaps
    gaps = [m.span(1) for m in _POSTCODE_THEN_WORD.finditer(value)]
    gaps.extend(m.span(1) for m in _WORD_THEN_POSTCODE.finditer(value))
    if not _STREET_START.match(value):
        gaps.extend(m.span(1) for m in _BEFORE_STREET.finditer(value)
                    if _capitalised_word_before(value, m.start()))
    return gaps


def _institution_gaps(value: str) -> list[tuple[int, int]]:
    """Where a hospital or institution span holds a second one."""
    return [m.span(1) for m in _AND_ANOTHER.finditer(value)]


def _date_gaps(value: str) -> list[tuple[int, int]]:
    return [m.span(1) for m in _DATE_JOINER.finditer(value)]


def _cut(text: str, span: PhiSpan, gaps: list[tuple[int, int]]) -> list[PhiSpan]:
    """``span`` in pieces around the gaps (offsets into its value)."""
    pieces = []
    start = 0
    for gap_start, gap_end in sorted(gaps):
        if gap_start > start:
            pieces.append((start, gap_start))
        start = max(start, gap_end)
    pieces.append((start, span.end - span.start))
    if len(pieces) == 1:
        return [span]
    return [dataclasses.replace(span, start=span.start + a, end=span.start + b)
            for a, b in pieces if b > a]


DATE_SOURCE = "rules:spanish_dates"


def _order(span: PhiSpan) -> tuple[int, int]:
    return span.start, span.end


def _joined_streets(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """``spans`` (sorted) with a street word alone joined to the place after it.

    The joined span takes the label of the place after: the model read the
    street from there.
    """
    out: list[PhiSpan] = []
    for span in spans:
        previous = out[-1] if out else None
        if (previous is not None and category(previous.label) == "LOCATION"
                and category(span.label) == "LOCATION"
                and _STREET_ALONE.fullmatch(text, previous.start, previous.end)
                and _JOIN_GAP.fullmatch(text, previous.end, span.start)):
            out[-1] = dataclasses.replace(span, start=previous.start)
        else:
            out.append(span)
    return out


def _outermost(spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """``spans`` (sorted) without those inside another (``E-`` of ``E-41013``)."""
    out: list[PhiSpan] = []
    for span in spans:
        if out and out[-1].start <= span.start and span.end <= out[-1].end:
            continue
        if out and span.start <= out[-1].start and out[-1].end <= span.end:
            out[-1] = span
            continue
        out.append(span)
    return out


def _family_doctor(text: str, span: PhiSpan) -> bool:
    return (text[span.start:span.end].lower() == "familia"
            and _FAMILY_DOCTOR.search(text, max(0, span.start - 16), span.start)
            is not None)


def dropped_by_tidying(text: str, span: PhiSpan) -> bool:
    """Whether :func:`tidy_spans` drops ``span`` whole where it stands.

    The propagation of found values asks it of each copy it would add
    (:func:`deid_pipeline.tagger.merge.with_occurrences`).
    """
    if category(span.label) == "CONTACT" and _contact(text, span) is None:
        return True
    if category(span.label) == "AGE" and _duration(text, span):
        return True
    return _family_doctor(text, span)


def _missed_dates(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """Written dates no span of ``spans`` (sorted, non-overlapping) touches."""
    labels = site_labels("DATE")
    if len(labels) != 1:
        return []
    starts = [s.start for s in spans]
    out = []
    for start, end in written_dates(text):
        i = bisect.bisect_left(starts, end)
        if i == 0 or spans[i - 1].end <= start:
            out.append(PhiSpan(start, end, labels[0], DATE_SOURCE, 1.0))
    return out


def tidy_spans(text: str, spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """``spans`` with boundaries tidied and joined values cut (module docstring)."""
    out = []
    for span in spans:
        kind = category(span.label)
        gaps: list[tuple[int, int]] = []
        if kind == "CONTACT":
            span = _contact(text, span)
        elif kind == "DATE":
            span = _date(text, span)
            gaps = _date_gaps(text[span.start:span.end])
        elif kind == "LOCATION":
            span = _postal_prefix(text, span)
            gaps = _place_gaps(text[span.start:span.end])
            if builtin_label(span.label) in _INSTITUTION_BUILTINS:
                gaps.extend(_institution_gaps(text[span.start:span.end]))
        elif kind == "NAME":
            span = _name(text, span)
        elif kind == "AGE" and _duration(text, span):
            continue
        if span is not None and not _family_doctor(text, span):
            out.extend(_cut(text, span, gaps) if gaps else [span])
    out = _outermost(_joined_streets(text, sorted(out, key=_order)))
    out = sorted([*out, *_missed_dates(text, out)], key=_order)
    out = as_countries(text, out)
    out = sorted([*out, *missed_countries(text, out)], key=_order)
    out = sorted([*out, *missed_sex_words(text, out)], key=_order)
    out = sorted([*out, *missed_professions(text, out)], key=_order)
    return tuple(sorted([*out, *bracket_makers(text, out)], key=_order))
