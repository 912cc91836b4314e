"""The whole-message guard: the last check before a de-identified message is written.

Beside the document guard (:mod:`deid_pipeline.leak_guard`), which checks
each report's rewritten text, this one reads the output message whole
(every field, component and subcomponent, kept Z-segments too) for every
value seeded from the header and every value removed from the narrative.
Anything the field table does not cover and any surrogate that spells an
original sends the message to quarantine (docs/hl7-audit.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from deid_pipeline import leak_guard, value_search
from deid_pipeline.hl7.contracts import WritebackError
from deid_pipeline.hl7.escapes import Delimiters, escape, unescape
from deid_pipeline.hl7.fields import STRUCTURE_FIELDS, numbers_of
from deid_pipeline.hl7.header import HeaderRewriter
from deid_pipeline.hl7.message import Hl7Message, Segment
from deid_pipeline.labels import category
from deid_pipeline.model import DeidentifiedDocument, PatientDictionary, TaggedDocument

__all__ = [
    "UNGUARDED_LABELS",
    "GuardedValues",
    "output_guard",
    "replace_telling_control_id",
]


def _first_field(seg: Segment) -> int:
    """The number of a segment's first field after its name (MSH-1/2 are delimiters)."""
    return 3 if seg.name == "MSH" else 1


def _field_texts(seg: Segment, d: Delimiters) -> list[str]:
    """A segment's fields from :func:`_first_field` on, unescaped.

    The structure fields (MSH-9 ``MDM^T02``, MSH-12) read as empty: codes the
    parser checked, which an initials form such as ``MDM`` would match.
    """
    esc = d.escape
    first = _first_field(seg)
    skip = numbers_of(STRUCTURE_FIELDS, seg.name)
    return ["" if n in skip else unescape(f, d) if esc in f else f
            for n, f in enumerate(seg.fields[first:], first)]


# Labels the whole-message guard does not search for: not a person's
# identifiers under Safe Harbor (states, countries) or codes and generic words
# a surrogate keeps on purpose (a unit "4W", a room "253" that is also an area
# code, "WARD" in a facility surrogate, a payer's name).
UNGUARDED_LABELS = frozenset({"HOSPITAL", "ORGANIZATION", "DEPARTMENT", "ROOM",
                              "PROFESSION", "STATE", "COUNTRY"})


def _unguarded(value: str, label: str) -> bool:
    """Whether the whole-message guard leaves a value out.

    Labels in :data:`UNGUARDED_LABELS`, dates without their year (``July
    21``, ``7/21``): any shifted date may say one, and ages (``92``, ``100``):
    any number may, a lab value or an IP surrogate's ``198.51.100.7``. The
    document guard exempts surrogate text, where such a coincidence stands,
    and checks each report for them; this guard exempts nothing, so it
    searches the dated forms (``July 21, 1950``, ``7/21/50``) only.
    """
    return label in UNGUARDED_LABELS or label == "AGE" or (
        label == "DATE" and sum(map(str.isdigit, value)) < 4)


_TS_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})(?:\d|[.+-]|$)")
_MDY_DATE = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})$")
_ISO_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})$")


# A year-less m/d: the same day of another year in a shifted date (9/21/2000
# moved to 12/21/1997 beside an original 12/21) is a coincidence of the one
# shift, as for a whole date above; it does not say the original day's year.
_MD_DATE = re.compile(r"(\d{1,2})/(\d{1,2})$")


def _date_key(value: str) -> tuple | str:
    """How a surrogate date is compared with an original one.

    A date written as an HL7 timestamp, ``m/d/y`` or ISO is (y, m, d); any
    other text is itself, lower-cased.
    """
    value = value.strip()
    m = _TS_DATE.match(value)
    if m:
        return int(m[1]), int(m[2]), int(m[3])
    m = _MDY_DATE.match(value)
    if m:
        return m[3] if len(m[3]) == 2 else int(m[3]), int(m[1]), int(m[2])
    m = _ISO_DATE.match(value)
    if m:
        return int(m[1]), int(m[2]), int(m[3])
    return value.lower()


_DIGIT_GROUPS = re.compile(r"\d+")


def _same_date(value: str, found: str) -> bool:
    """Whether text the guard matched for a date value says that date.

    The guard matches a mostly-digit value digit by digit across any
    separators, right for IDs and phones; for a date it also matches another
    date: ``6/20/09`` in ``11/6/2009``. Both read as dates: the same day; else
    the same digit groups (``03/05`` is ``3/5``).
    """
    a, b = _date_key(value), _date_key(found)
    if isinstance(a, tuple) and isinstance(b, tuple):
        if isinstance(a[0], str) or isinstance(b[0], str):  # a two-digit year
            a, b = (int(a[0]) % 100, *a[1:]), (int(b[0]) % 100, *b[1:])
        return a == b
    return ([g.lstrip("0") for g in _DIGIT_GROUPS.findall(value)]
            == [g.lstrip("0") for g in _DIGIT_GROUPS.findall(found)])


class GuardedValues:
    """What the whole-message guard searches for, and the search.

    The values are the header's and each report's own (its dates) and every
    value removed from the narrative, less :data:`UNGUARDED_LABELS`. For a
    one-report message that is the report's dictionary, whose search plan
    the tagger and the document guard have just made (the plan is cached by
    dictionary): it is searched whole and, only when a hit is labelled
    unguarded (a value's first label wins) or a date, searched again without them.

    An original date that is also a surrogate date of the message is not
    searched: shifting keeps intervals, so 3/1 and 3/15 shifted by 14 days
    make a 3/15 that no rewrite can avoid, and it says nothing an interval
    did not (the auditor's scan of birth dates still finds a real one, as a
    birth date is never a shifted report date of the same week). Nor is a
    year-less original (``12/21``) whose day and month a shifted date of the
    message has (``12/21/1997``).
    """

    def __init__(self, dictionary: PatientDictionary, tagged: list[TaggedDocument],
                 deids: list[DeidentifiedDocument], policy: str,
                 header_dates: Iterable[str] = ()) -> None:
        """Collect the values of ``dictionary`` and every report of the message.

        ``header_dates``: the shifted header timestamps written.
        """
        own = [t.document.dictionary for t in tagged
               if t.document.dictionary is not None]
        if len(own) == 1:
            self.dictionary = own[0]
        else:
            entries = list(dictionary.entries)
            for extra in own:
                if extra is not dictionary:
                    entries.extend(extra.entries[len(dictionary.entries):])
            self.dictionary = PatientDictionary(tuple(entries), dictionary.person_key)
        self._shifted = {_date_key(r.replacement) for deid in deids
                         for r in deid.replacements if category(r.span.label) == "DATE"}
        self._shifted.update(_date_key(ts) for ts in header_dates if ts)
        self._shifted_days = {k[1:] for k in self._shifted if isinstance(k, tuple)}
        self.removed = leak_guard.removed_values(deids, policy, self._skipped)
        self.policy = policy
        self._guarded: PatientDictionary | None = None

    def _skipped(self, value: str, label: str) -> bool:
        """Left out of the search: unguarded, or an original date a shift rewrote."""
        if _unguarded(value, label) or category(label) != "DATE":
            return _unguarded(value, label)
        day = _MD_DATE.match(value.strip())
        return _date_key(value) in self._shifted or bool(
            day and (int(day[1]), int(day[2])) in self._shifted_days)

    def found(self, text: str) -> Counter:
        """Labels (with counts) of the guarded values found in ``text``."""
        leaks = leak_guard.find_anywhere(text, self.dictionary, self.removed,
                                         self.policy)
        if leaks.keys() & UNGUARDED_LABELS or leaks["DATE"]:
            if self._guarded is None:
                self._guarded = PatientDictionary(
                    tuple(e for e in self.dictionary.entries
                          if not self._skipped(e.value, e.label)),
                    self.dictionary.person_key)
            leaks = leak_guard.find_anywhere(text, self._guarded, self.removed,
                                             self.policy)
            if leaks["DATE"] and not self._says_a_date(text):
                del leaks["DATE"]
        return +leaks

    def _says_a_date(self, text: str) -> bool:
        """Whether a guarded date's match in ``text`` says that date."""
        values = [e.value for e in self._guarded.entries if category(e.label) == "DATE"]
        values += [v[0] for v in self.removed if category(v[1]) == "DATE"]
        for value in values:
            pattern = value_search.value_pattern(value)
            if pattern is not None and any(_same_date(value, m.group())
                                           for m in pattern.finditer(text)):
                return True
        return False


def replace_telling_control_id(message: Hl7Message, guarded: GuardedValues,
                               header: HeaderRewriter) -> None:
    """Give MSH-10 a surrogate when it spells a known value (``RAD-20230314-0042``).

    Senders build control ids from the date and the accession number. The
    documents keep the original id in their doc ids (the join key of both
    outputs); in the written message such an id is an identifier like any.
    """
    msh, d = message.msh, message.delimiters
    control = unescape(msh.get(10), d)
    if control and guarded.found(control):
        msh.set(10, escape(header.value(control, "IDNUM"), d))


def output_guard(message: Hl7Message, guarded: GuardedValues) -> None:
    """Refuse the message if a known PHI value stands anywhere in what is written.

    Reads the output message whole: every field, component and subcomponent
    of every segment (kept Z-segments too), unescaped, against every value
    ``guarded`` holds, with the document guard's matching
    (:func:`deid_pipeline.leak_guard.find_anywhere`). Fields are joined by a
    NUL, which no value spans. Nothing is exempt: a surrogate that spells an
    original of the message is a leak too.
    """
    d = message.delimiters
    texts = [_field_texts(seg, d) for seg in message.segments]
    whole = "\x00".join("\x00".join(fields) for fields in texts)
    if not guarded.found(whole):
        return
    for index, (seg, fields) in enumerate(zip(message.segments, texts, strict=True),
                                          1):
        for k, text in enumerate(fields):
            leaks = guarded.found(text)
            if leaks:
                labels = ", ".join(sorted(leaks))
                raise WritebackError(
                    f"{labels} value left in segment {index} ({seg.name}) field "
                    f"{_first_field(seg) + k}", "leak_guard")
    raise WritebackError("PHI value left across fields", "leak_guard")

