"""De-identified HL7 out: the same messages, framing and structure, no PHI.

Per message: parse, seed, tag each report, rewrite it, then write the
rewritten text back field by field (re-escaped) and replace every PHI header
field with the rewriter's surrogate for the same value, so the header and
the narrative agree (``SMITH`` in PID-5 and "Mr. Smith" in the report become
the same surrogate). A message that fails any step is quarantined with its
stage and a PHI-free reason and is not written; the rest of the file is.

A value the header seeds that a sender copied whole into any other field
(an order number in OBR-29, an MRN in MSH-10, a mother's names in PID-21's
components) gets the same surrogate there. No surrogate spells an original of
the message; the batch job also passes each person's originals from every
document of the run (``person_originals``), so none spells an original of
the same person's other messages either. Z-segments (site-defined) are
written as their bare segment id unless the caller keeps them. Before a
message is written, a leak guard reads the whole output message (every
field, component and subcomponent, kept Z-segments included) for every
value seeded from the header and every value removed from the narrative:
anything the field table does not cover (a vendor Z-segment with the
patient's name, a free-text field) and any surrogate that spells an original
sends the message to quarantine instead of the output (docs/hl7-audit.md).

Nothing here logs or prints: callers count results.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from deid_pipeline import leak_guard
from deid_pipeline.byte_order import narrow
from deid_pipeline.deidentify import originals_of
from deid_pipeline.hl7.dates import shift_ts
from deid_pipeline.hl7.documents import (
    SOURCE,
    Report,
    build_documents,
    parse_hl7_message,
    quarantine_record,
)
from deid_pipeline.hl7.escapes import Delimiters, escape, unescape
from deid_pipeline.hl7.fields import (
    KINDS,
    NARRATIVE_OBX_TYPES,
    OPAQUE_OBX_TYPES,
    PERSON_KINDS,
    PERSON_SEGMENTS,
    HeaderField,
    Leaf,
    code_leaves,
    fields_of,
    identifier_label,
    kept_as_code,
    kind_of_obx,
    map_field,
    map_leaves,
    reads_as_code,
    repetitions,
)
from deid_pipeline.hl7.framing import (
    Envelope,
    MessageFrame,
    declared_charset,
    decode_message,
    encode_message,
    frame_file,
    render,
)
from deid_pipeline.hl7.message import (
    Hl7Message,
    Hl7ParseError,
    Segment,
    parse_message,
)
from deid_pipeline.hl7.seed import seed_dictionary
from deid_pipeline.interrupts import reraise_interrupt
from deid_pipeline.labels import category
from deid_pipeline.model import (
    ClinicalDocument,
    DeidentifiedDocument,
    PatientDictionary,
    QuarantineRecord,
    TaggedDocument,
)
from deid_pipeline.surrogates import Originals
from deid_pipeline.tagger.tagging import reconcile_reports
from deid_pipeline.tokenizer import is_digits

__all__ = [
    "Z_SEGMENT_MODES",
    "Hl7FileResult",
    "MessageResult",
    "WritebackError",
    "deidentify_hl7_file",
    "deidentify_message",
]


class Tagger(Protocol):
    def tag(self, doc: ClinicalDocument) -> TaggedDocument: ...


class PersonKeys(Protocol):
    """Where the document path put a tagged report: ``(known, person key)``.

    ``person key`` None means the report's own key (as ``Rewriter.rewrite``
    reads None); ``known`` False, that the caller has no answer, and the
    message's own key is used.
    """

    def __call__(self, tagged: TaggedDocument) -> tuple[bool, str | None]: ...


class Rewriter(Protocol):
    def rewrite(self, tagged: TaggedDocument, person_key: str | None = None,
                avoid: Originals | None = None) -> DeidentifiedDocument: ...

    def person_id_for(self, tagged: TaggedDocument,
                      person_key: str | None = None) -> str: ...

    def replace_value(self, value: str, label: str, pid: str,
                      avoid: Originals | None = None) -> str: ...

    def guard(self, tagged: TaggedDocument,
              result: DeidentifiedDocument) -> DeidentifiedDocument: ...


class WritebackError(ValueError):
    """The de-identified message could not be made safely (PHI-free message)."""

    def __init__(self, message: str, stage: str = "write") -> None:
        """Carry the quarantine stage (``write``, ``surrogate``, ``leak_guard``)."""
        super().__init__(message)
        self.stage = stage


@dataclass(frozen=True, slots=True)
class MessageResult:
    r"""One message's outcome: its de-identified form and documents, or quarantine.

    ``er7`` uses ``\r`` segment terminators; ``data`` is ``er7`` encoded in
    the input's character set (what a file or MLLP peer gets).
    """

    er7: str | None
    data: bytes | None
    documents: tuple[DeidentifiedDocument, ...] = ()
    quarantined: tuple[QuarantineRecord, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the message was de-identified (not quarantined)."""
        return self.er7 is not None


@dataclass(frozen=True, slots=True)
class Hl7FileResult:
    """A de-identified file: same framing, quarantined messages left out.

    ``messages_in == messages_out + len(quarantined)`` always holds.
    """

    output: bytes
    documents: tuple[DeidentifiedDocument, ...]
    quarantined: tuple[QuarantineRecord, ...]
    messages_in: int
    messages_out: int


# ------------------------------------------------------------- narrative


def _piece_texts(report: Report, deid: DeidentifiedDocument) -> dict[int, str]:
    """Compute the new text of every narrative piece a replacement touches.

    A replacement is written whole into the piece where it starts (or the
    next piece, when it starts on a line break); the characters it covers in
    later pieces are removed, so a name wrapped across two OBX lines leaves
    nothing behind.
    """
    text = report.text
    reps = sorted(deid.replacements, key=lambda r: (r.span.start, r.span.end))
    rebuilt: list[str] = []
    cursor = 0
    for r in reps:
        start, end = r.span.start, r.span.end
        if start < cursor or end > len(text) or text[start:end] != r.original:
            raise WritebackError(f"report {report.set_id}: replacements overlap or do "
                                 "not match the text", "surrogate")
        rebuilt.append(text[cursor:start])
        rebuilt.append(r.replacement)
        cursor = end
    rebuilt.append(text[cursor:])
    if "".join(rebuilt) != deid.text:
        raise WritebackError(f"report {report.set_id}: rewritten text does not match "
                             "its replacements", "surrogate")
    pieces = report.pieces
    owners: dict[int, int] = {}  # replacement index -> piece that gets its text
    touched: set[int] = set()
    for i, r in enumerate(reps):
        covered = [k for k, p in enumerate(pieces)
                   if p.end > r.span.start and p.start < r.span.end]
        if covered:  # else only line breaks between fields were covered
            owners[i] = covered[0]
            touched.update(covered)
    out: dict[int, str] = {}
    for k in sorted(touched):
        p = pieces[k]
        parts: list[str] = []
        cur = p.start
        for i, r in enumerate(reps):
            if r.span.end <= p.start or r.span.start >= p.end:
                continue
            if r.span.start >= cur:
                parts.append(text[cur:r.span.start])
            if owners.get(i) == k:
                parts.append(r.replacement)
            cur = max(cur, min(r.span.end, p.end))
        parts.append(text[cur:p.end])
        out[k] = "".join(parts)
    return out


def _write_narrative(message: Hl7Message, report: Report,
                     texts: dict[int, str]) -> None:
    d = message.delimiters
    for k, new in texts.items():
        piece = report.pieces[k]
        seg = message.segments[piece.segment]
        reps = repetitions(seg.get(piece.field), d)
        reps[piece.repetition] = escape(new, d)
        seg.set(piece.field, d.repetition.join(reps))


# ---------------------------------------------------------------- header


class _HeaderRewriter:
    """Replaces PHI leaves through the rewriter, one cached answer per value."""

    def __init__(self, rewriter: Rewriter, pid: str,
                 avoid: Originals | None = None) -> None:
        """``avoid``: the message's (and its person's) originals, never spelled."""
        self.rewriter = rewriter
        self.pid = pid
        self.avoid = avoid
        self.cache: dict[tuple[str, str], str] = {}

    def value(self, value: str, label: str) -> str:
        key = (value, label)
        out = self.cache.get(key)
        if out is None:
            out = self.rewriter.replace_value(value, label, self.pid, self.avoid)
            self.cache[key] = out
        return out

    def date(self, value: str) -> str:
        key = (value, "<ts>")
        out = self.cache.get(key)
        if out is None:
            out = shift_ts(value, self.value) or ""
            self.cache[key] = out
        return out

    def phone_parts(self, area: str, local: str) -> tuple[str, str]:
        """XTN-6/7: the number replaced whole, so it matches the narrative's.

        A part the whole-number surrogate happens to keep (the same area
        code) is replaced on its own: no header value stays as it was.
        """
        digits = re.sub(r"\D", "", area + local)
        new_area, new_local = area, local
        if len(digits) == 10:
            fake = re.sub(r"\D", "", self.value(
                f"({digits[:3]}) {digits[3:6]}-{digits[6:]}", "PHONE"))
            if len(fake) == 11 and fake[0] == "1":
                fake = fake[1:]
            if len(fake) == 10:
                new_area, new_local = fake[:3], fake[3:]
        if area and new_area == area:
            new_area = self.value(area, "PHONE")
        if local and new_local == local:
            new_local = self.value(local, "PHONE")
        return new_area, new_local

    def field(self, raw: str, spec: HeaderField, d: Delimiters) -> str:
        leaves = KINDS[spec.kind]

        def leaf_value(leaf: Leaf, value: str, comps: list[str]) -> str | None:
            role = leaf.role
            if role == "date":
                return self.date(value)
            if role in ("area", "local"):
                area = unescape(comps[5], d) if len(comps) > 5 else ""
                local = unescape(comps[6], d) if len(comps) > 6 else ""
                new_area, new_local = self.phone_parts(area, local)
                return new_area if role == "area" else new_local
            label = leaf.label or spec.label
            if role == "id" and leaf.label is None and spec.kind == "CX":
                cx_type = unescape(comps[4], d) if len(comps) > 4 else ""
                label = identifier_label(cx_type, spec.label)
            return self.value(value, label)

        return map_field(raw, d, leaves, leaf_value)


def _replace_header(message: Hl7Message, header: _HeaderRewriter) -> None:
    """Pass every PHI leaf of the header through ``header``."""
    d = message.delimiters
    for seg in message.segments:
        fields = seg.fields
        n = len(fields)
        for spec in fields_of(seg.name):
            number = spec.number
            if number < n and fields[number]:
                fields[number] = header.field(fields[number], spec, d)
        if seg.name == "OBX" and seg.get(5):
            value_type = message.component(seg.get(2), 1).strip().upper()
            if value_type in OPAQUE_OBX_TYPES:
                seg.set(5, "")
            else:
                spec = kind_of_obx(value_type)
                if spec is not None:
                    seg.set(5, header.field(seg.get(5), spec, d))


# ------------------------------------------------------ one value, one surrogate

# Labels whose seeded values are replaced wherever a whole leaf spells one:
# senders copy an order number into OBR-29 or OBX-15, an MRN into MSH-10, a
# mother's names into PID-21's check digit, the facility into an authority.
# Towns, units and dates are left to their typed fields: as leaves elsewhere
# they are codes ("ECHO") or values of their own; so are payers (IN1-4 is
# every member's insurer, kept in IN1-2/3 on purpose).
_SEEDED_ANYWHERE = frozenset({"PATIENT", "RELATIVE", "DOCTOR", "MEDICALRECORD",
                              "SSN", "ACCOUNT", "LICENSE", "HEALTHPLAN", "IDNUM",
                              "DEVICE", "BIOID", "VEHICLE", "PHONE", "EMAIL",
                              "STREET", "HOSPITAL"})
# Fields that are the message's structure, not data.
_STRUCTURE = {"MSH": frozenset({1, 2, 9, 12})}
_NO_FIELDS: frozenset[int] = frozenset()


_BLANK_RUNS = re.compile(r"\s+")


def _leaf_key(value: str) -> str:
    """How a leaf is compared with the seeded values: lower case, single spaces."""
    if value.isalnum():  # most leaves: nothing to squeeze
        return value.lower()
    return " ".join(value.lower().split())


def seeded_values(dictionary: PatientDictionary) -> dict[str, str]:
    """Seeded value (as :func:`_leaf_key` writes it) -> label, first entry wins.

    Values with fewer than three letters or digits (initials) are left out:
    as whole leaves they are codes (``MR``, ``HH``) far more often than names.
    """
    out: dict[str, str] = {}
    for entry in dictionary.entries:
        if entry.label in _SEEDED_ANYWHERE:
            key = _leaf_key(entry.value)
            if len(key) >= 3 and (key.isalnum() or sum(map(str.isalnum, key)) >= 3):
                out.setdefault(key, entry.label)
    return out


@functools.lru_cache(maxsize=1024)
def _typed_leaves(segment: str) -> dict[int, frozenset[tuple[int, int]]]:
    """Field number -> (component, subcomponent) of the PHI leaves its type names."""
    return {spec.number: frozenset((leaf.component, leaf.subcomponent)
                                   for leaf in KINDS[spec.kind])
            for spec in fields_of(segment)}


def _text_field(message: Hl7Message, seg: Segment) -> tuple[int, frozenset]:
    """The field the narrative or OBX typing handles (0: none), and its typed leaves.

    OBX-5 of a narrative type and NTE-3 are the report's text (rewritten from
    its tags); an opaque OBX-5 is emptied; a structured one has its type's
    leaves.
    """
    if seg.name == "NTE":
        return 3, _NO_FIELDS
    if seg.name == "OBX":
        value_type = message.component(seg.get(2), 1).strip().upper()
        if value_type in NARRATIVE_OBX_TYPES or value_type in OPAQUE_OBX_TYPES:
            return 5, _NO_FIELDS
        spec = kind_of_obx(value_type)
        if spec is not None:
            return 0, frozenset((leaf.component, leaf.subcomponent)
                                for leaf in KINDS[spec.kind])
    return 0, _NO_FIELDS


def _replace_seeded(message: Hl7Message, seeded: dict[str, str],
                    header: _HeaderRewriter) -> None:
    """Give every other leaf that spells a seeded value that value's surrogate.

    The typed PHI leaves are done by :func:`_replace_header`; this walks the
    rest of every field of every segment (kept Z-segments too), so an order
    number copied into OBR-29 gets the surrogate ORC-3 got, instead of the
    message going to quarantine. ``masked`` (the leak guard's copy) gets the
    same leaves blanked.
    """
    if not seeded:
        return
    d = message.delimiters
    nested = (d.component, d.repetition, d.subcomponent, d.escape)
    # Most segments (the OBX lines of a report) hold no seeded leaf at all:
    # one split of the whole segment says so before any field is walked. An
    # escaped leaf is compared unescaped, so a segment with escapes is walked.
    leaf_edges = re.compile("|".join(map(re.escape, (d.field, *nested[:3]))))
    for seg in message.segments:
        fields = seg.fields
        text = d.field.join(fields[1:])
        if d.escape not in text and seeded.keys().isdisjoint(map(str.strip, (
                leaf_edges.split(_BLANK_RUNS.sub(" ", text.lower()))))):
            continue  # no leaf's _leaf_key is seeded
        typed = _typed_leaves(seg.name)
        skip = _STRUCTURE.get(seg.name, _NO_FIELDS)
        text_field, obx_typed = _text_field(message, seg)
        for n in range(1, len(fields)):
            raw = fields[n]
            if not raw or n in skip or n == text_field:
                continue
            own = obx_typed if seg.name == "OBX" and n == 5 else typed.get(
                n, _NO_FIELDS)
            if not any(ch in raw for ch in nested):
                # One plain leaf (most fields): no split, no escaping.
                label = None if (1, 1) in own else seeded.get(_leaf_key(raw))
                if label is not None and raw != '""':
                    fields[n] = escape(header.value(raw, label), d)
                continue

            def surrogate(component: int, sub: int, value: str,
                          own: frozenset = own) -> str | None:
                if (component, sub) in own:
                    return None
                label = seeded.get(_leaf_key(value))
                return None if label is None else header.value(value, label)

            fields[n] = map_leaves(raw, d, surrogate)


# ------------------------------------------------------ person parts by allowlist


@functools.lru_cache(maxsize=64)
def _kept_leaves(kind: str) -> tuple[frozenset[tuple[int, int]], dict]:
    """A data type's PHI leaves (written as their surrogates) and code leaves."""
    return (frozenset((leaf.component, leaf.subcomponent) for leaf in KINDS[kind]),
            code_leaves(kind))


def _typed_and_code_leaves(raw: str, kind: str, d: Delimiters) -> str:
    """``raw`` with every leaf emptied that is neither PHI of ``kind`` nor a code."""
    typed, codes = _kept_leaves(kind)

    def keep(component: int, sub: int, value: str) -> str | None:
        if (component, sub) in typed:
            return None
        position = (component, sub)
        if position in codes and reads_as_code(value, codes[position]):
            return None
        return ""

    return map_leaves(raw, d, keep)


def _empty_unlisted_person_parts(message: Hl7Message) -> None:
    """Write of a person only what a table says is PHI (replaced) or a code.

    In person segments (:data:`PERSON_SEGMENTS`) a field no table types is
    kept only when HL7 types it as a code (sex, race, relationship), else
    emptied; in every field typed as a person, address, phone or identifier
    (:data:`PERSON_KINDS`, wherever it stands) and every typed field of a
    person segment, a component that is neither a PHI leaf of its type nor a
    table code is emptied: a mother's names in PID-21's check digit, a
    birth place in a job-title field, a date in a name's validity range.
    Seeded values there were already given their surrogates; this catches
    what nobody seeded.
    """
    d = message.delimiters
    for seg in message.segments:
        person, kinds = _person_plan(seg.name)
        fields = seg.fields
        if seg.name == "OBX" and len(fields) > 5 and fields[5]:
            spec = kind_of_obx(message.component(seg.get(2), 1).strip().upper())
            if spec is not None and spec.kind in PERSON_KINDS:
                fields[5] = _typed_and_code_leaves(fields[5], spec.kind, d)
        elif not person and not kinds:
            continue
        for n in range(1, len(fields)):
            raw = fields[n]
            if not raw or raw == '""' or (seg.name == "OBX" and n == 5):
                continue
            kind = kinds.get(n)
            if kind is not None:
                fields[n] = _typed_and_code_leaves(raw, kind, d)
            elif person and not kept_as_code(seg.name, n):
                fields[n] = ""


@functools.lru_cache(maxsize=1024)
def _person_plan(segment: str) -> tuple[bool, dict[int, str]]:
    """Whether ``segment`` is a person segment, and the fields whose leaves count.

    Field number -> data type: every typed field of a person segment, the
    person-typed ones (:data:`PERSON_KINDS`) of any other.
    """
    person = segment in PERSON_SEGMENTS
    return person, {spec.number: spec.kind for spec in fields_of(segment)
                    if person or spec.kind in PERSON_KINDS}


# -------------------------------------------------------------- leak guard


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
    skip = _STRUCTURE.get(seg.name, _NO_FIELDS)
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


class _GuardedValues:
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
            pattern = leak_guard.value_pattern(value)
            if pattern is not None and any(_same_date(value, m.group())
                                           for m in pattern.finditer(text)):
                return True
        return False


def _replace_telling_control_id(message: Hl7Message, guarded: _GuardedValues,
                                header: _HeaderRewriter) -> None:
    """Give MSH-10 a surrogate when it spells a known value (``RAD-20230314-0042``).

    Senders build control ids from the date and the accession number. The
    documents keep the original id in their doc ids (the join key of both
    outputs); in the written message such an id is an identifier like any.
    """
    msh, d = message.msh, message.delimiters
    control = unescape(msh.get(10), d)
    if control and guarded.found(control):
        msh.set(10, escape(header.value(control, "IDNUM"), d))


def _output_guard(message: Hl7Message, guarded: _GuardedValues) -> None:
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


# ---------------------------------------------------------------- message


# What happens to Z-segments (site-defined, so no field table can say which of
# their fields hold PHI): "empty" writes each as its bare segment id, "keep"
# writes it as received and relies on the leak guard, which only knows the
# header's values.
Z_SEGMENT_MODES = ("empty", "keep")


def _empty_z_segments(message: Hl7Message) -> None:
    for seg in message.segments:
        if seg.name.startswith("Z"):
            del seg.fields[1:]


def _fallback_key(origin: str, message: Hl7Message) -> str:
    """Key a message without an MRN as its own person (all its reports agree)."""
    return f"hl7-message:{os.path.basename(origin)}:{message.control_id}"


def _deidentify(text: str, codec: str, tagger: Tagger, rewriter: Rewriter,
                origin: str, state: list[str], z_segments: str = "empty",
                person_keys: PersonKeys | None = None,
                person_originals: Mapping[str, Originals] | None = None,
                ) -> tuple[str, tuple]:
    state[0] = "parse"
    message, reports = parse_hl7_message(text)
    segment_names = [s.name for s in message.segments]
    state[0] = "seed"
    dictionary = seed_dictionary(message)
    docs = build_documents(message, origin, codec, reports, dictionary)
    key = dictionary.person_key or _fallback_key(origin, message)
    state[0] = "tag"
    tagged = reconcile_reports([tagger.tag(doc) for doc in docs])
    state[0] = "surrogate"
    # A message without an MRN: its reports are each the person the document
    # path (and its linking) made them, so both outputs use the same surrogates.
    keys = [key] * len(tagged)
    if person_keys is not None:
        for i, t in enumerate(tagged):
            known, linked = person_keys(t)
            if known:
                keys[i] = linked
    # One set of originals for the whole message: its reports are written
    # into one message, so none of their surrogates may spell another's (for
    # one report it is the set the document path makes). With its persons'
    # originals (every document of theirs in the run) it is the set the
    # document path rewrites each of their reports with.
    avoid = originals_of(*tagged)
    if person_originals:
        pids = {rewriter.person_id_for(t, k) for t, k in zip(tagged, keys)}
        avoid = Originals.union([avoid, *(person_originals[p] for p in sorted(pids)
                                          if p in person_originals)])
    deids = [rewriter.rewrite(t, person_key=k, avoid=avoid)
             for t, k in zip(tagged, keys)]
    # The same document-level guard as the Parquet path: a report whose text
    # still holds a removed value fails the whole message (fail closed).
    state[0] = "leak_guard"
    for t, deid in zip(tagged, deids, strict=True):
        rewriter.guard(t, deid)
    pid = rewriter.person_id_for(tagged[0], keys[0])
    state[0] = "write"
    for report, deid in zip(reports, deids, strict=True):
        _write_narrative(message, report, _piece_texts(report, deid))
    header = _HeaderRewriter(rewriter, pid, avoid)
    _replace_header(message, header)
    _replace_seeded(message, seeded_values(dictionary), header)
    _empty_unlisted_person_parts(message)
    if z_segments == "empty":
        _empty_z_segments(message)
    if getattr(rewriter, "mode", "surrogate") != "tag":  # tag mode keeps PHI inline
        state[0] = "leak_guard"
        guarded = _GuardedValues(dictionary, tagged, deids,
                                 getattr(rewriter, "policy", "safe-harbor"),
                                 [v for (_, kind), v in header.cache.items()
                                  if kind == "<ts>"])
        _replace_telling_control_id(message, guarded, header)
        _output_guard(message, guarded)
    state[0] = "write"
    er7 = message.to_er7()
    check = parse_message(er7)
    if [s.name for s in check.segments] != segment_names:
        raise WritebackError("rewritten message does not keep its segments")
    # Rewriter.rewrite already added the header research columns.
    return er7, tuple(deids)


def deidentify_message(message: str | bytes, tagger: Tagger, rewriter: Rewriter,
                       origin: str = "", ordinal: int = 1,
                       z_segments: str = "empty",
                       person_keys: PersonKeys | None = None,
                       person_originals: Mapping[str, Originals] | None = None,
                       ) -> MessageResult:
    """De-identify one message (what an MLLP gateway calls per frame).

    ``z_segments`` is one of :data:`Z_SEGMENT_MODES`; ``person_keys`` gives
    the person of a report that the batch job linked (default: every report
    is the person of the message's MRN, else of the message);
    ``person_originals`` maps person ids to the originals of all their
    documents in the batch run, which no surrogate of theirs may spell
    (default: only the message's own, all a gateway can know).

    ``message`` as bytes is decoded like a file's message (MSH-18, else UTF-8,
    else cp1252/Latin-1) and ``data`` comes back in the same encoding; as
    ``str`` it is used as is and ``data`` is UTF-8 unless MSH-18 says
    otherwise. Never raises: failures come back in ``quarantined``.
    """
    state = ["read"]
    raw = message if isinstance(message, bytes) else b""
    try:
        if isinstance(message, bytes):
            text, codec = decode_message(message)
        else:
            text = message
            raw = message.encode("utf-8", "replace")
            codec = declared_charset(raw) or "utf-8"
        er7, documents = _deidentify(text, codec, tagger, rewriter, origin, state,
                                     z_segments, person_keys, person_originals)
        return MessageResult(er7, encode_message(er7, codec), documents)
    except Hl7ParseError as exc:
        record = quarantine_record(origin, ordinal, state[0], "Hl7ParseError", str(exc),
                                   raw)
    except WritebackError as exc:
        record = quarantine_record(origin, ordinal, exc.stage, "WritebackError",
                                   str(exc), raw)
    except Exception as exc:  # noqa: BLE001 - fail closed; the text may hold PHI
        reraise_interrupt(exc)
        record = quarantine_record(origin, ordinal, state[0], type(exc).__name__,
                                   f"unexpected {type(exc).__name__} at {state[0]}",
                                   raw)
    return MessageResult(None, None, (), (record,))


# ------------------------------------------------------------------- file

# Batch envelopes keep only what routes the batch (applications, time, ids,
# counts); facilities get a surrogate, everything else (comments, file and
# batch names, security) is emptied: a vendor writes anything there.
_ENVELOPE_KEEP = {"FHS": frozenset({3, 5, 7, 11, 12}),
                  "BHS": frozenset({3, 5, 7, 11, 12}),
                  "BTS": frozenset({1, 3}), "FTS": frozenset({1})}
_ENVELOPE_FACILITIES = frozenset({4, 6})


def _envelope_renderer(rewriter: Rewriter) -> tuple[Callable[[Envelope], bytes],
                                                    list[int]]:
    """Render FHS/BHS/BTS/FTS lines de-identified; BTS-1 counts messages written.

    Facilities belong to no patient: they get the surrogate of one fixed
    pseudo-person, so every batch header of a run agrees. An envelope whose
    delimiters make no sense is written as its bare segment id.
    """
    written = [0]
    header: list[_HeaderRewriter] = []

    def facility(value: str) -> str:
        if not header:
            tagged = TaggedDocument(ClinicalDocument("hl7-envelope", "", SOURCE), ())
            header.append(_HeaderRewriter(
                rewriter, rewriter.person_id_for(tagged, "hl7-envelope")))
        return header[0].value(value, "HOSPITAL")

    def render_envelope(env: Envelope) -> bytes:
        text = env.data.decode("latin-1").strip()
        name, sep = text[:3], text[3:4]
        bare = name.encode("latin-1") + env.terminator
        if not sep or sep.isalnum() or sep.isspace():
            return bare
        parts = text.split(sep)
        if name in ("FHS", "BHS"):
            fields = [name, sep, *parts[1:]]
            enc = fields[2]
            if len(enc) not in (4, 5) or len(set(enc + sep)) != len(enc) + 1 or any(
                    c.isalnum() or c.isspace() for c in enc):
                return bare
            d = Delimiters(sep, enc[0], enc[1], enc[2], enc[3], enc[4:5])
            first = 3
        else:
            fields = parts
            d = Delimiters(sep)
            first = 1
        if name == "BHS":
            written[0] = 0
        keep = _ENVELOPE_KEEP.get(name, frozenset())
        for n in range(first, len(fields)):
            if name in ("FHS", "BHS") and n in _ENVELOPE_FACILITIES and fields[n]:
                comps = fields[n].split(d.component)
                if comps[0]:
                    comps[0] = escape(facility(unescape(comps[0], d)), d)
                fields[n] = d.component.join(comps[:1])
            elif name == "BTS" and n == 1 and is_digits(fields[1].strip()):
                fields[1] = str(written[0])
            elif n not in keep:
                fields[n] = ""
        while len(fields) > first and not fields[-1]:
            fields.pop()
        out = (name + sep + sep.join(fields[2:])) if first == 3 else sep.join(fields)
        return encode_message(out, "latin-1") + env.terminator

    return render_envelope, written


def deidentify_hl7_file(path: str, data: bytes, tagger: Tagger,
                        rewriter: Rewriter, z_segments: str = "empty",
                        person_keys: PersonKeys | None = None,
                        person_originals: Mapping[str, Originals] | None = None,
                        ) -> Hl7FileResult:
    """De-identify every message of one file; the output keeps the input's framing.

    ``person_keys`` and ``person_originals`` as for :func:`deidentify_message`.
    Never raises on input: unframeable content and failed messages are
    quarantined and left out of ``output``.
    """
    data, wide = narrow(data)  # UTF-16/32 with a mark: worked on as UTF-8
    framed = frame_file(data)
    results: dict[int, MessageResult] = {}
    quarantined: list[QuarantineRecord] = []
    documents: list[DeidentifiedDocument] = []
    frames = list(framed.frames())
    for frame in frames:
        if frame.error is not None:
            quarantined.append(quarantine_record(path, frame.ordinal, "read",
                                                 "FramingError", frame.error,
                                                 frame.data))
            continue
        result = deidentify_message(frame.data, tagger, rewriter, path, frame.ordinal,
                                    z_segments, person_keys, person_originals)
        results[frame.ordinal] = result
        quarantined.extend(result.quarantined)
        documents.extend(result.documents)
    render_envelope, written = _envelope_renderer(rewriter)

    def render_message(frame: MessageFrame) -> bytes | None:
        result = results.get(frame.ordinal)
        if result is None or result.data is None:
            return None
        written[0] += 1
        return result.data

    output, count = render(framed.parts, render_message, render_envelope)
    if wide is not None and count:
        output = wide.widen(output)  # written back as it came
    return Hl7FileResult(output=output, documents=tuple(documents),
                         quarantined=tuple(quarantined), messages_in=len(frames),
                         messages_out=count)
