"""The CRF's spans checked against their text, in English.

At a recall bias the model reads numbers, field labels and clinical
letters as PHI: a pressure as a date, ``MRN`` as part of a name, ``RCA``
as a hospital. A span is trimmed of the words that are no part of any
value (facility nouns, field labels, roles, what a person did) and dropped
when its text cannot be the PHI type it was given, or is a clinical
look-alike by the same standard the rules hold theirs to.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger import lexicons
from deid_pipeline.tagger.gazetteers import clinical_letters
from deid_pipeline.tagger.rules.detector import is_date_lookalike


def checked_english(text: str, spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """``spans`` trimmed of words that are no part of them, implausible ones dropped."""
    spans = (_without_facility_noun(text, s) for s in spans)
    spans = (_without_field_words(text, s) for s in spans if s is not None)
    spans = (_without_dangling_joiner(text, s) for s in spans if s is not None)
    return tuple(s for s in spans if s is not None
                 and is_alnum_span(text, s)
                 and plausible(text[s.start:s.end], s.label)
                 and not _short_date_lookalike(text, s)
                 and not _in_value_series(text, s)
                 and not _clinical_letters_alone(text, s)
                 and not _clock_time(text, s)
                 and not _modal_may(text, s)
                 and not _after_a_length(text, s))


_NUMERIC = re.compile(r"[\d/\-.:() ]+")
_NUMBER = re.compile(r"\d+")


_RATE = re.compile(r"\d+(?:\.\d+)?[ \t]*/[ \t]*[A-Za-z]+")
_MONTH_ABBREVIATIONS = frozenset(
    "jan feb mar apr may jun jul aug sep oct nov dec".split())


def plausible(value: str, label: str) -> bool:
    """Whether a CRF span's numbers can be the PHI type it was given.

    A CRF that has seen dates and phones will call ``80/30`` (a pressure) a
    date and ``86-105`` (a range) a phone when pushed for recall; a value
    that cannot be a date or a phone by its digits alone is not redacted as
    one; nor is a rate (``10/hr``) a date, nor ``8/4/460`` or ``3/7/9``.
    Other spans with letters are left to the model.
    """
    if label == "DATE" and _RATE.fullmatch(value):
        return value.rsplit("/", 1)[1].strip()[:3].lower() in _MONTH_ABBREVIATIONS
    if label in ("PHONE", "FAX"):
        # Letters or not ("150-180's", "800-1000 ccs"): no phone has fewer.
        return sum(len(n) for n in _NUMBER.findall(value)) >= 7
    if not _NUMERIC.fullmatch(value):
        return True
    numbers = [int(n) for n in _NUMBER.findall(value)]
    if label == "DATE":
        if ("/" in value or "-" in value) and len(numbers) >= 2:
            parts = _NUMBER.findall(value)
            # No date has a 3- or 5-digit part or a 4-digit one that is no
            # year: 8/4/460, 6670/1182, 3/2/1500.
            if any(len(p) == 3 or len(p) > 4 or (
                    len(p) == 4 and not 1850 <= int(p) <= 2150) for p in parts):
                return False
            if len(parts) == 3 and len(parts[2]) == 1:
                return False  # Apgars 3/7/9: no year is written in one digit
            first, second = numbers[:2]
            if first >= 1000:  # year first: 2006-10-22
                return True
            return (1 <= first <= 12 and 1 <= second <= 31) or (
                1 <= second <= 12 and 1 <= first <= 31)
    return True


# The kind of place, not its name: "Calvert [Hospital]", "Kessler [Medical
# Center]", "Baltimore [VA]", "kernan [ew]", "Keeley [House]", and alone "OSH" (outside
# hospital). Left in clear (it identifies no one; the institution surrogate
# keeps such words too), as annotators of the PhysioNet corpus do. "hosp"
# with any ending: nurses misspell it ("HOSPIATAL").
_FACILITY_NOUN = re.compile(
    r"(?:(?:^|[ \t]+)(?:hosp[a-z]*|medical|med|center|centre|ctr|clinic|rehab|"
    r"rehabilitation|infirmary|facility|hospice|house|va|er|ew|ed|osh)\.?)+$",
    re.IGNORECASE)
_PLACE_LABELS = frozenset({"HOSPITAL", "LOCATION", "ORGANIZATION"})


def _without_facility_noun(text: str, span: PhiSpan) -> PhiSpan | None:
    """The span minus trailing facility nouns (None if nothing else is left)."""
    if span.label not in _PLACE_LABELS:
        return span
    value = text[span.start:span.end]
    m = _FACILITY_NOUN.search(value)
    if m is None:
        return span
    if m.start() == 0:
        return None
    return dataclasses.replace(span, end=span.start + m.start())


# The words of a record's field labels, which the model carries a name or an
# ID into (``Jessica M. MRN``, ``Carroll   Med rec no.``, ``id 5297578i``,
# ``of Valley Medical``); never PHI themselves.
_FIELD_TAIL = re.compile(r"(?:[ \t]+(?:mrn|record|rec|med|id|acct|dob))+$",
                         re.IGNORECASE)
# ``pt from jupiter w/ chf``: the "w" of "w/" after a place.
_WITH_MARK = re.compile(r"[ \t]+w$", re.IGNORECASE)
# Also the "'S" of a possessive before a name (``DR'S CAMARDA``).
_FIELD_HEAD = re.compile(
    r"(?:(?:of|id|mrn|record|(?<=['\u2019])s|['\u2019]s)[ \t]+)+", re.IGNORECASE)
# A credential or the role a name or a hospital is followed by (``Smith RN``,
# ``GBMC NURSE``): no part of the name.
_ROLE_TAIL = re.compile(r"(?:[ \t,]+(?:nurse|rn|np|lpn|cna|crnp|md|do|pa-?c?))+$",
                        re.IGNORECASE)
_ROLE_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "HOSPITAL", "ORGANIZATION"})
# A clock time after a full date (``10/22/03, 1900``): the time is no date part.
_DATE_THEN_CLOCK = re.compile(r"\d[,;]?[ \t]+(?:[01]\d|2[0-3])[0-5]\d$")
_FIELD_WORD = re.compile(r"(?:mrn|record|rec|med|id|acct|dob)", re.IGNORECASE)
# What a named person did, after the name (``DR BAKAITIS UPDATE BY MD``, ``dr
# vascuez spoke with``): no gold name of the corpus ends with one of these.
_DID_TAIL = re.compile(
    r"(?:[ \t,]+(?:spoke|speaks|update|updated|aware|notified|called|paged|"
    r"informed|saw|said|states|stated|came|visited|plans|wants|will|would|is|"
    r"was|has|had|here))+$", re.IGNORECASE)
_PERSON_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE"})
# A facility noun, then what happened there (``AT CALVERT HOSPITAL REQUIRING
# DOPAMINE``): a name goes on after its noun (Hospital for Special Surgery),
# a verb does not; no gold place of the corpus goes on at all.
_FACILITY_THEN_VERB = re.compile(
    r"\b(?:hospital|hosp|center|centre|clinic|rehab|campus)"
    r"(?P<tail>[ \t,]+[A-Za-z]{2,}(?:ing|ed)\b.*)$", re.IGNORECASE | re.DOTALL)
_PLACE_LABELS = frozenset({"HOSPITAL", "LOCATION", "ORGANIZATION"})
# The floor after a ward's or building's name (``TRANSFER TO QUARTERMAIN 2``):
# the name is the place, the floor number names nothing.
_FLOOR_TAIL = re.compile(r"(?<=[A-Za-z])[ \t]+\d{1,2}$")
# When, after a value (``from st agnes memorial yesterday``): no gold span of
# the corpus holds one of these words.
_WHEN_TAIL = re.compile(
    r"(?:[ \t,]+(?:yesterday|today|tonight|tomorrow|overnight|now|"
    r"this[ \t]+(?:am|pm|morning|afternoon|evening)))+$", re.IGNORECASE)


# A role the model takes for a name when it stands alone (``pt's pastor was
# in``); before a name (``Pastor Williams``) the span holds the name too.
_ROLE_WORD = re.compile(r"(?:pastor|priest|chaplain|rabbi|minister|reverend|imam|"
                        r"deacon|clergy|nun)", re.IGNORECASE)


def _without_field_words(text: str, span: PhiSpan) -> PhiSpan | None:
    """The span minus field-label words at its ends (None if it is one)."""
    value = text[span.start:span.end]
    if _FIELD_WORD.fullmatch(value) or _ROLE_WORD.fullmatch(value):
        return None
    end = span.start + _tail_cut(text, span, value)
    head = _FIELD_HEAD.match(text, span.start, end)
    start = head.end() if head is not None else span.start
    if (start, end) == (span.start, span.end):
        return span
    return dataclasses.replace(span, start=start, end=end) if end > start else None


# A joining word the model ran a value into: ``Zimmerman and [Sons]``,
# ``Good Shepherd Nursing and [Rehabilitation]`` once its facility noun is
# trimmed, ``University Hospital of [Lake Isabella]``. No gold span of the
# PhysioNet corpus ends with one. Left on, the joiner and the surrogate
# written before it can spell the value where another surrogate stands
# (``W. Zimmerman and``): the leak guard then holds a whole document back.
_DANGLING_JOINER = re.compile(r"(?:[ \t]+(?:and|or|of|&))+$", re.IGNORECASE)


def _without_dangling_joiner(text: str, span: PhiSpan) -> PhiSpan:
    """The span minus joining words at its end (a word always remains)."""
    cut = _DANGLING_JOINER.search(text, span.start, span.end)
    if cut is None:
        return span
    return dataclasses.replace(span, end=cut.start())


def _tail_cut(text: str, span: PhiSpan, value: str) -> int:
    """Where in ``value`` the words that are no part of it begin (its length: none)."""
    tail = _FIELD_TAIL.search(value)
    if tail is None and text[span.end:span.end + 1] == "/":
        tail = _WITH_MARK.search(value)
    if tail is None and span.label in _ROLE_LABELS:
        tail = _ROLE_TAIL.search(value)
    if tail is None and span.label in _PERSON_LABELS:
        tail = _DID_TAIL.search(value)
    if tail is None and span.label in _PLACE_LABELS:
        verb = _FACILITY_THEN_VERB.search(value)
        if verb is not None:
            return verb.start("tail")
        tail = _FLOOR_TAIL.search(value)
    if tail is None:
        tail = _WHEN_TAIL.search(value)
    if tail is None and span.label == "DATE" and _DATE_THEN_CLOCK.search(value):
        tail = re.search(r"[,;]?[ \t]+\d{4}$", value)
    return tail.start() if tail is not None else len(value)


# ``at 1900``, ``until 2000``, ``1900-0700``: a 24-hour clock time, which
# nursing notes write as a year is written (a year follows "since", "in",
# "from", never "at" or "until"). 35 such places in the corpus, one of them
# a gold date ("since 2006", not taken here).
_CLOCK = re.compile(r"(?:[01]\d|2[0-3])[0-5]\d")
_CLOCK_BEFORE = re.compile(
    r"(?:(?<![\w])(?:at|until|till|til|@|by|around|approx|about)[ \t]*"
    r"|\d{4}[ \t]*(?:-|to)[ \t]*)$", re.IGNORECASE)
_CLOCK_AFTER = re.compile(r"[ \t]*(?:-|to)[ \t]*(?:[01]\d|2[0-3])[0-5]\d(?!\d)")


def _clock_time(text: str, span: PhiSpan) -> bool:
    """Whether a four-digit DATE is a clock time by the words around it."""
    if span.label != "DATE" or not _CLOCK.fullmatch(text, span.start, span.end):
        return False
    return (_CLOCK_BEFORE.search(text, max(0, span.start - 12), span.start) is not None
            or _CLOCK_AFTER.match(text, span.end) is not None)


# ``May`` before a word is the verb (``MAY GET``, ``May require intubation``)
# unless the word joins it to another date (``May of 2010``, ``May to July``);
# the rules hold their ``May`` to the same.
_VERB_AFTER_MAY = re.compile(
    r"[ \t]+(?!(?:of|and|or|to|thru|through|until|till|the)\b)[A-Za-z]", re.I)


def _modal_may(text: str, span: PhiSpan) -> bool:
    """Whether a DATE that is the word ``may`` alone is the verb."""
    return (span.label == "DATE" and text[span.start:span.end].lower() == "may"
            and _VERB_AFTER_MAY.match(text, span.end) is not None)


# A word right after a length is what was measured there (``ETT at 21 CM
# MARK``, ``23 cm mark``), no name or place.
_LENGTH_BEFORE = re.compile(r"\d(?:\.\d+)?[ \t]*(?:cm|mm)[ \t]+$", re.I)


def _after_a_length(text: str, span: PhiSpan) -> bool:
    """Whether a one-word span follows a length in cm or mm."""
    return (" " not in text[span.start:span.end].strip()
            and _LENGTH_BEFORE.search(text, max(0, span.start - 16), span.start)
            is not None)


# A CRF date this sure is kept though it has a fraction's shape (``? d/c
# TF's 2/4``, ``transfer to floor 2/4``) or a dash with no date word around
# it (``BC drawn on 3-11``) when no other look-alike sign holds. Swapped
# sealed copies: 4 more date tokens of 536 found in the worst copy at 0.8, no
# false positive more (fractions). Dashes: the shipped model is rarely that
# sure of one; fold models trained on copies that wrote dates as m-d found
# 19/33 and 34/48 of folds 3 and 4's dates so written (14, 25 without this).
SURE_DATE = 0.8
_YEAR_LESS_DATE = re.compile(r"\d{1,2}(?:[/-]\d{1,2})?(?:[/-]\d{1,2})?")


def _short_date_lookalike(text: str, span: PhiSpan) -> bool:
    """Whether a year-less numeric DATE is a look-alike by its context.

    ``10/5`` after PSV, ``8/10`` near "pain", ``1/2`` before NS: the date
    rules reject these, and a CRF date is held to the same standard.
    """
    value = text[span.start:span.end]
    if span.label != "DATE" or not _YEAR_LESS_DATE.fullmatch(value):
        return False
    return is_date_lookalike(text, span.start, span.end,
                             sure=(span.confidence or 0.0) >= SURE_DATE)


# Two dates joined as a range: the one run of numbers of four parts that is dates.
_DATE_RANGE = re.compile(r"\d{1,2}/\d{1,2}(?:/\d{2,4})?-\d{1,2}/\d{1,2}(?:/\d{2,4})?")
_SERIES_PARTS = re.compile(r"[/.-]")
_NUMBERS = re.compile(r"[/.-]?\d[\d/.-]*")
# A run of numbers is read at most this far on either side of the span.
_SERIES_REACH = 24


def _in_value_series(text: str, span: PhiSpan) -> bool:
    """Whether a numeric DATE is part of a run of values, not a date.

    Vent settings, pressures and cardiac outputs are written as runs of
    numbers (``AC 40/700/5/12``, ``5-6/3-4/0-80``, ``6.6/3.71``) whose pieces
    the model at a recall bias reads as dates. A run of more than three
    numbers is a date only as a range of two (``3/4-3/6``); a decimal
    point before the first slash makes a value (``11/21.93`` stays a date).
    """
    if span.label != "DATE" or not _NUMBERS.fullmatch(text, span.start, span.end):
        return False
    lo, hi = span.start, span.end
    floor, ceiling = max(lo - _SERIES_REACH, 0), min(hi + _SERIES_REACH, len(text))
    while lo > floor and (text[lo - 1].isdecimal() or text[lo - 1] in "/-."):
        lo -= 1
    while hi < ceiling and (text[hi].isdecimal() or text[hi] in "/-."):
        hi += 1
    run = text[lo:hi].strip("/-.")
    if "." in run and "/" in run and run.index(".") < run.index("/"):
        return True
    return len(_SERIES_PARTS.split(run)) > 3 and not _DATE_RANGE.fullmatch(run)


def _clinical_letters_alone(text: str, span: PhiSpan) -> bool:
    """A place span that is one clinical abbreviation (``HD/ UF``, ``stents to RCA``).

    The model at a recall bias reads short capitals after ``to``/``at`` as a
    hospital's letters; rules.json's units and clinical letters never are
    one. A word of them that English uses as a word can name a place (``at
    the BAY``) and stays; so does one that is a state's code where it reads
    as a state (``lives in NH``, ``Annapolis, MD``), not elsewhere (``AAA
    repair, MI 1992``, ``CT showed``, ``husband MD (ENT)``).
    """
    if span.label not in _PLACE_LABELS and span.label != "STATE":
        return False
    word = text[span.start:span.end].lower()
    if word not in clinical_letters():
        return False
    lex = lexicons.load()
    if "stab" in lex.flags(word):
        return not _reads_as_state(text, span)
    return not (len(word) >= 3 and lex.english_band(word) >= 4)


# Where a state's code is one: after a town and its comma, after a word of
# where someone is or comes from, or before a ZIP code.
_STATE_AFTER_WORD = re.compile(
    r"(?<![A-Za-z])(?i:in|from|of|near|lives|living|moved|back)[ \t]*$")
_STATE_AFTER_TOWN = re.compile(r"(?P<town>[A-Za-z]+)\.?,[ \t]*$")
_STATE_BEFORE_ZIP = re.compile(r"[ \t,]*\d{5}(?!\d)")
_TOWN_FLAGS = frozenset({"city", "town", "uscity"})


def _reads_as_state(text: str, span: PhiSpan) -> bool:
    """Whether a state's code stands where a state is written."""
    lo = max(0, span.start - 30)
    if (_STATE_AFTER_WORD.search(text, lo, span.start)
            or _STATE_BEFORE_ZIP.match(text, span.end)):
        return True
    town = _STATE_AFTER_TOWN.search(text, lo, span.start)
    return town is not None and bool(
        _TOWN_FLAGS & set(lexicons.load().flags(town["town"].lower())))


def is_alnum_span(text: str, span: PhiSpan) -> bool:
    """Whether the span holds a letter or a digit."""
    return any(c.isalnum() for c in text[span.start:span.end])

