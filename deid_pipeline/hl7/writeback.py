"""De-identified HL7 out: the same messages, framing and structure, no PHI.

Per message: parse, seed, tag each report, rewrite it, then write the
rewritten text back field by field (re-escaped) and replace every PHI header
field with the rewriter's surrogate for the same value, so the header and
the narrative agree (``SMITH`` in PID-5 and "Mr. Smith" in the report become
the same surrogate). A message that fails any step is quarantined with its
stage and a PHI-free reason and is not written; the rest of the file is.

Z-segments (site-defined) are written as their bare segment id unless the
caller keeps them. Before a message is written, a leak guard looks for the
header's strong identifiers (names, ids, phones, birth date...) anywhere in
the output message, kept Z-segments included: anything the field table does
not cover (a vendor Z-segment with the patient's name, a free-text field)
sends the message to quarantine instead of the output.

Nothing here logs or prints: callers count results.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

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
    HeaderField,
    Leaf,
    fields_of,
    identifier_label,
    kind_of_obx,
    map_field,
    map_leaves,
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
from deid_pipeline.model import (
    ClinicalDocument,
    DeidentifiedDocument,
    PatientDictionary,
    QuarantineRecord,
    TaggedDocument,
)
from deid_pipeline.surrogates import Originals

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
    def rewrite(self, tagged: TaggedDocument,
                person_key: str | None = None) -> DeidentifiedDocument: ...

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


def _masked_pieces(report: Report, deid: DeidentifiedDocument) -> dict[int, str]:
    """Each touched piece's ORIGINAL text with the replaced characters blanked.

    What the leak guard reads: only what the rewrite left of the input. The
    narrative is blanked once and cut into pieces; the pieces a replacement
    touches are found by bisection (pieces are in text order and disjoint).
    """
    text = report.text
    pieces = report.pieces
    ends = [p.end for p in pieces]
    chars = list(text)
    touched: set[int] = set()
    for r in deid.replacements:
        start, end = r.span.start, min(r.span.end, len(text))
        if start < end:
            chars[start:end] = "\x00" * (end - start)
        k = bisect.bisect_right(ends, r.span.start)
        while k < len(pieces) and pieces[k].start < r.span.end:
            p = pieces[k]
            if max(r.span.start, p.start) < min(r.span.end, p.end):
                touched.add(k)
            k += 1
    masked = "".join(chars)
    return {k: masked[pieces[k].start:pieces[k].end] for k in sorted(touched)}


def _masked_fields(message: Hl7Message, reports: list[Report],
                   deids: list[DeidentifiedDocument]) -> dict[int, dict[int, str]]:
    r"""Segment index -> field number -> unescaped text of each masked narrative field.

    What the leak guard would read after writing the masked pieces back
    escaped (as :func:`_write_narrative` does) and unescaping the field,
    without the round trip: a blanked character is a control character, so
    each one would be written as a ``\X00\`` sequence and decoded again.
    ``message`` holds the fields as parsed. The escaped text of a piece
    decodes to the piece with its ``\r\n`` and ``\r`` made ``\n``; when no
    other repetition of the field holds an escape character, the field
    decodes to its repetitions decoded one by one. Otherwise (an escape
    sequence could then span repetitions) the field is escaped and unescaped
    as before.
    """
    d = message.delimiters
    esc = d.escape
    touched: dict[tuple[int, int], dict[int, str]] = {}
    for report, deid in zip(reports, deids, strict=True):
        for k, text in _masked_pieces(report, deid).items():
            p = report.pieces[k]
            touched.setdefault((p.segment, p.field), {})[p.repetition] = text
    out: dict[int, dict[int, str]] = {}
    for (i, n), texts in touched.items():
        # A touched piece is not empty, so field n exists in segment i.
        reps = repetitions(message.segments[i].get(n), d)
        if any(esc in rep for r, rep in enumerate(reps) if r not in texts):
            for r, text in texts.items():
                reps[r] = escape(text, d)
            raw = d.repetition.join(reps)
            value = unescape(raw, d) if esc in raw else raw
        else:
            for r, text in texts.items():
                reps[r] = text.replace("\r\n", "\n").replace("\r", "\n")
            value = d.repetition.join(reps)
        out.setdefault(i, {})[n] = value
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
        """``avoid``: the message's originals, which no surrogate may spell."""
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


# Kinds with a leaf at component 1, subcomponent 1: the whole of a field
# without separators.
_FIRST_LEAF_KINDS = frozenset(kind for kind, leaves in KINDS.items()
                              if any(leaf.component == leaf.subcomponent == 1
                                     for leaf in leaves))


class _Blanker:
    """Empties every PHI leaf: the masked copy the leak guard reads."""

    @staticmethod
    def field(raw: str, spec: HeaderField, d: Delimiters) -> str:
        if (d.component not in raw and d.repetition not in raw
                and d.subcomponent not in raw):
            # A single value (a date, an id): what map_field does to it is
            # empty it if the kind has a leaf there, unless it is the null "".
            return raw if raw == '""' or spec.kind not in _FIRST_LEAF_KINDS else ""
        return map_field(raw, d, KINDS[spec.kind], lambda leaf, value, comps: "")


def _replace_header(message: Hl7Message, header: _HeaderRewriter | _Blanker,
                    masked: Hl7Message | None = None) -> None:
    """Pass every PHI leaf of the header through ``header``.

    ``masked``, a copy of ``message`` with the same header fields, gets the
    same leaves blanked in the same walk (the leak guard's copy): the walk
    over segments, field specs and OBX value types is made once.
    """
    d = message.delimiters
    for index, seg in enumerate(message.segments):
        fields = seg.fields
        other = None if masked is None else masked.segments[index]
        n = len(fields)
        for spec in fields_of(seg.name):
            number = spec.number
            if number < n and fields[number]:
                raw = fields[number]
                fields[number] = header.field(raw, spec, d)
                if other is not None:
                    other.fields[number] = _Blanker.field(raw, spec, d)
        if seg.name == "OBX" and seg.get(5):
            value_type = message.component(seg.get(2), 1).strip().upper()
            if value_type in OPAQUE_OBX_TYPES:
                seg.set(5, "")
                if other is not None:
                    other.set(5, "")
            else:
                spec = kind_of_obx(value_type)
                if spec is not None:
                    raw = seg.get(5)
                    seg.set(5, header.field(raw, spec, d))
                    if other is not None:
                        other.set(5, _Blanker.field(raw, spec, d))


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
                    header: _HeaderRewriter, masked: Hl7Message) -> None:
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
    for index, seg in enumerate(message.segments):
        typed = _typed_leaves(seg.name)
        skip = _STRUCTURE.get(seg.name, _NO_FIELDS)
        text_field, obx_typed = _text_field(message, seg)
        fields, other = seg.fields, masked.segments[index].fields
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
                    other[n] = ""
                continue

            def label_of(component: int, sub: int, value: str,
                         own: frozenset = own) -> str | None:
                if (component, sub) in own:
                    return None
                return seeded.get(_leaf_key(value))

            def surrogate(component: int, sub: int, value: str) -> str | None:
                label = label_of(component, sub, value)
                return None if label is None else header.value(value, label)

            new = map_leaves(raw, d, surrogate)
            if new is not raw:
                fields[n] = new
                other[n] = map_leaves(other[n], d, lambda c, s, v: (
                    None if label_of(c, s, v) is None else ""))


# -------------------------------------------------------------- leak guard

# Labels whose header values are distinctive enough that finding one in what
# the rewrite left can only be a leak (a city or a bare surname can be words).
_GUARDED = frozenset({"PATIENT", "RELATIVE", "DOCTOR", "MEDICALRECORD", "SSN",
                      "ACCOUNT", "LICENSE", "HEALTHPLAN", "IDNUM", "PHONE", "EMAIL",
                      "DATE", "STREET"})
_KEPT_BY_LIMITED_DATASET = frozenset({"DATE"})
_NAMES = frozenset({"PATIENT", "RELATIVE", "DOCTOR"})
_WORDS = re.compile(r"[^\W_]+")


def _single_spaced(text: str) -> bool:
    """Whether each field of the NUL-joined ``text`` is already space-normalised.

    True only if ``" ".join(field.split()) == field`` for every field, even
    one with NULs of its own (a blanked character): no double space, no
    space next to a NUL or at an end, and no whitespace but the space (every
    other whitespace character is unprintable; the NUL is not whitespace).
    All C-level scans: a regex alternation over a message costs more than
    the per-field work it would save.
    """
    return ("  " not in text and " \x00" not in text and "\x00 " not in text
            and text[:1] != " " and text[-1:] != " "
            and text.replace("\x00", "").isprintable())


def _guarded_values(dictionary: PatientDictionary, policy: str) -> list[str]:
    """Lower-cased, space-normalised strong identifiers of the header.

    Strong means a surrogate is very unlikely to spell it by chance: full
    names, ids, phones, dated forms. Bare name parts, initials and
    year-less dates are left to the tagger.
    """
    labels = _GUARDED - (_KEPT_BY_LIMITED_DATASET if policy == "limited-dataset"
                         else frozenset())
    values = set()
    # ~230 entries a message: the per-character tests are C-level maps.
    for entry in dictionary.entries:
        label = entry.label
        if label not in labels:
            continue
        value = " ".join(entry.value.lower().split())
        if len(value) < 5 or not (" " in value or "," in value or "@" in value
                                  or any(map(str.isdigit, value))):
            continue
        if label in _NAMES and min(map(len, _WORDS.findall(value)), default=0) < 2:
            # "Smith, J." also reads "Smith, M.D." after a surrogate Smith; a
            # "name" without a letter or digit ("*** ***") has nothing to leak.
            continue
        if label == "DATE" and sum(map(str.isdigit, value)) < 4:
            continue  # "March 17" without a year: any surrogate date can say it
        values.add(value)
    return sorted(values)


def _found(haystack: str, value: str) -> int:
    """Offset of ``value`` in ``haystack`` as a whole word (alnum boundaries), or -1."""
    start = haystack.find(value)
    n = len(value)
    while start >= 0:
        before = haystack[start - 1] if start else " "
        after = haystack[start + n] if start + n < len(haystack) else " "
        if not (value[0].isalnum() and before.isalnum()) and \
                not (value[-1].isalnum() and after.isalnum()):
            return start
        start = haystack.find(value, start + 1)
    return -1


def _first_field(seg: Segment) -> int:
    """The number of a segment's first field after its name (MSH-1/2 are delimiters)."""
    return 3 if seg.name == "MSH" else 1


def _unescaped_fields(seg: Segment, own: dict[int, str] | None,
                      d: Delimiters) -> list[str]:
    """A segment's fields from :func:`_first_field` on, unescaped (``own``: decoded)."""
    first = _first_field(seg)
    fields = [unescape(f, d) if d.escape in f else f for f in seg.fields[first:]]
    for n, value in (own or {}).items():
        fields[n - first] = value
    return fields


def _normalised(fields: list[str]) -> list[str]:
    return [" ".join(f.lower().split()) for f in fields]


def _haystacks(message: Hl7Message, decoded: dict[int, dict[int, str]]) -> list[str]:
    """Each segment's unescaped, lower-cased, space-normalised fields joined by NUL.

    ``decoded`` gives the unescaped text of fields already decoded (the masked
    narrative: see :func:`_masked_fields`). A segment without an escape
    character needs no per-field unescaping, and most segments need no
    whitespace normalising: both are then done on the joined segment in one
    call each (lower-casing joined fields is lower-casing each: a NUL stops
    the final-sigma context as a string end does).
    """
    d = message.delimiters
    esc = d.escape
    out = []
    for i, seg in enumerate(message.segments):
        fields = seg.fields[_first_field(seg):]
        text = "\x00".join(fields)
        own = decoded.get(i)
        if own or esc in text:
            fields = _unescaped_fields(seg, own, d)
            text = "\x00".join(fields)
        text = text.lower()
        if not _single_spaced(text):
            text = "\x00".join(_normalised(fields))
        out.append(text)
    return out


def _leak_guard(masked: Hl7Message, dictionary: PatientDictionary,
                policy: str, decoded: dict[int, dict[int, str]] | None = None,
                ) -> None:
    """Refuse the message if a strong header identifier survived anywhere in it.

    ``masked`` is the input message with everything the rewrite replaced
    blanked out (header PHI leaves, tagged narrative spans): what is left is
    what goes out unchanged, Z-segments and unlisted fields included. The
    masked narrative fields may come already unescaped in ``decoded``
    (segment index -> field number -> text) instead of written into
    ``masked``. A surrogate that happens to spell another header value is not
    looked at. Plain substring search over each segment's unescaped,
    lower-cased, space-normalised fields (joined by a NUL that no value
    contains): cheap enough for every message, unlike one big
    case-insensitive regex.
    """
    message = masked
    values = _guarded_values(dictionary, policy)
    if not values:
        return
    haystacks = _haystacks(message, decoded or {})
    # Almost always nothing is left. A value absent from all segments at once
    # is absent from each: one substring test per value over the whole
    # message first, instead of a word-boundary search per value per segment.
    whole = "\x00".join(haystacks)
    values = [value for value in values if value in whole]
    if not values:
        return
    for index, (seg, haystack) in enumerate(zip(message.segments, haystacks,
                                                 strict=True), 1):
        for value in values:
            if _found(haystack, value) >= 0:
                # Which field: searched one by one (blanked characters are NULs
                # too, so counting the haystack's NULs would miscount).
                fields = _normalised(_unescaped_fields(
                    seg, (decoded or {}).get(index - 1), message.delimiters))
                where = next((f" field {_first_field(seg) + k}"
                              for k, field in enumerate(fields)
                              if _found(field, value) >= 0), "")
                raise WritebackError(
                    f"header identifier left in segment {index} ({seg.name}){where}",
                    "leak_guard")


# ---------------------------------------------------------------- message


# What happens to Z-segments (site-defined, so no field table can say which of
# their fields hold PHI): "empty" writes each as its bare segment id, "keep"
# writes it as received and relies on the leak guard, which only knows the
# header's values.
Z_SEGMENT_MODES = ("empty", "keep")


def _empty_z_segments(*messages: Hl7Message) -> None:
    for message in messages:
        for seg in message.segments:
            if seg.name.startswith("Z"):
                del seg.fields[1:]


def _fallback_key(origin: str, message: Hl7Message) -> str:
    """Key a message without an MRN as its own person (all its reports agree)."""
    return f"hl7-message:{os.path.basename(origin)}:{message.control_id}"


def _deidentify(text: str, codec: str, tagger: Tagger, rewriter: Rewriter,
                origin: str, state: list[str], z_segments: str = "empty",
                person_keys: PersonKeys | None = None) -> tuple[str, tuple]:
    state[0] = "parse"
    message, reports = parse_hl7_message(text)
    segment_names = [s.name for s in message.segments]
    state[0] = "seed"
    dictionary = seed_dictionary(message)
    docs = build_documents(message, origin, codec, reports, dictionary)
    key = dictionary.person_key or _fallback_key(origin, message)
    state[0] = "tag"
    tagged = [tagger.tag(doc) for doc in docs]
    state[0] = "surrogate"
    # A message without an MRN: its reports are each the person the document
    # path (and its linking) made them, so both outputs use the same surrogates.
    keys = [key] * len(tagged)
    if person_keys is not None:
        for i, t in enumerate(tagged):
            known, linked = person_keys(t)
            if known:
                keys[i] = linked
    deids = [rewriter.rewrite(t, person_key=k) for t, k in zip(tagged, keys)]
    # The same document-level guard as the Parquet path: a report whose text
    # still holds a removed value fails the whole message (fail closed).
    state[0] = "leak_guard"
    for t, deid in zip(tagged, deids, strict=True):
        rewriter.guard(t, deid)
    pid = rewriter.person_id_for(tagged[0], keys[0])
    state[0] = "write"
    # What the leak guard reads: the input with the header's PHI leaves blanked
    # (by the header walk below) and the masked narrative fields (decoded).
    masked = Hl7Message(message.delimiters,
                        [Segment(s.name, list(s.fields)) for s in message.segments])
    for report, deid in zip(reports, deids, strict=True):
        _write_narrative(message, report, _piece_texts(report, deid))
    decoded = _masked_fields(masked, reports, deids)
    header = _HeaderRewriter(rewriter, pid, originals_of(*tagged))
    _replace_header(message, header, masked)
    _replace_seeded(message, seeded_values(dictionary), header, masked)
    if z_segments == "empty":
        _empty_z_segments(message, masked)
    state[0] = "leak_guard"
    _leak_guard(masked, dictionary, getattr(rewriter, "policy", "safe-harbor"),
                decoded)
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
                       person_keys: PersonKeys | None = None) -> MessageResult:
    """De-identify one message (what an MLLP gateway calls per frame).

    ``z_segments`` is one of :data:`Z_SEGMENT_MODES`; ``person_keys`` gives
    the person of a report that the batch job linked (default: every report
    is the person of the message's MRN, else of the message).

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
                                     z_segments, person_keys)
        return MessageResult(er7, encode_message(er7, codec), documents)
    except Hl7ParseError as exc:
        record = quarantine_record(origin, ordinal, state[0], "Hl7ParseError", str(exc),
                                   raw)
    except WritebackError as exc:
        record = quarantine_record(origin, ordinal, exc.stage, "WritebackError",
                                   str(exc), raw)
    except Exception as exc:  # noqa: BLE001 - fail closed; the text may hold PHI
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
            elif name == "BTS" and n == 1 and fields[1].strip().isdigit():
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
                        person_keys: PersonKeys | None = None) -> Hl7FileResult:
    """De-identify every message of one file; the output keeps the input's framing.

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
                                    z_segments, person_keys)
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
