"""One value, one surrogate: seeded values copied into fields no table types.

Senders copy an order number into OBR-29, an MRN into MSH-10, a mother's
names into PID-21's check digit. Every whole leaf that spells a value the
header seeded gets the surrogate the typed field got, wherever it stands,
so the message guard has nothing to find and the message is not held back.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from deid_pipeline.hl7.escapes import escape
from deid_pipeline.hl7.fields import (
    KINDS,
    NARRATIVE_OBX_TYPES,
    OPAQUE_OBX_TYPES,
    STRUCTURE_FIELDS,
    fields_of,
    kind_of_obx,
    map_leaves,
    numbers_of,
)
from deid_pipeline.hl7.header import HeaderRewriter
from deid_pipeline.hl7.message import Hl7Message, Segment
from deid_pipeline.labels import category
from deid_pipeline.model import DeidentifiedDocument, PatientDictionary

__all__ = ["replace_found", "replace_seeded", "replaced_labels", "seeded_values"]

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


def replace_seeded(message: Hl7Message, seeded: dict[str, str],
                   header: HeaderRewriter) -> None:
    """Give every other leaf that spells a seeded value that value's surrogate.

    The typed PHI leaves are done by :func:`~deid_pipeline.hl7.header.replace_header`;
    this walks the rest of every field of every segment (kept Z-segments
    too), so an order number copied into OBR-29 gets the surrogate ORC-3 got,
    instead of the message going to quarantine.
    """
    if not seeded:
        return
    d = message.delimiters
    # Most segments (the OBX lines of a report) hold no seeded leaf at all:
    # one split of the whole segment says so before any field is walked. An
    # escaped leaf is compared unescaped, so a segment with escapes is walked.
    leaf_edges = re.compile("|".join(map(re.escape, (
        d.field, d.component, d.repetition, d.subcomponent))))

    def may_hold(text: str) -> bool:
        return d.escape in text or not seeded.keys().isdisjoint(map(str.strip, (
            leaf_edges.split(_BLANK_RUNS.sub(" ", text.lower())))))

    def surrogate(value: str) -> str | None:
        label = seeded.get(_leaf_key(value))
        return None if label is None else header.value(value, label)

    _map_kept_leaves(message, may_hold, surrogate)


def replaced_labels(header: HeaderRewriter, dictionary: PatientDictionary,
                    deids: Iterable[DeidentifiedDocument]) -> dict[str, str]:
    """Every value the message's rewrite replaced (as :func:`_leaf_key`) -> its label.

    The header's replaced values first (their surrogates are cached), then
    the seeded ones, then those the narrative's rewrite removed; the first
    label met wins. Initials and codes of fewer than three characters are
    left out, as in :func:`seeded_values`.
    """
    out: dict[str, str] = {}

    def add(value: str, label: str) -> None:
        key = _leaf_key(value)
        if sum(map(str.isalnum, key)) >= 3:
            out.setdefault(key, label)

    for value, label in header.cache:
        add(value, "DATE" if label == "<ts>" else label)
    for entry in dictionary.entries:
        add(entry.value, entry.label)
    for deid in deids:
        for r in deid.replacements:
            add(r.original, r.span.label)
    return out


_TS_LEAF = re.compile(r"\d{8}(?:\d{2,6})?(?:\.\d+)?(?:[+-]\d{4})?")


def replace_found(message: Hl7Message, labels: Mapping[str, str],
                  header: HeaderRewriter, found: Callable[[str], Counter]) -> None:
    """Give a kept leaf the guard finds that spells a replaced value its surrogate.

    One value, one surrogate in the fields write-back keeps as they are
    (SFT-2, QPD-6, OBX-15, a coded OBX-5's text, MSH-17): a sender's copy of
    a birth date, a name or a ZIP that was replaced elsewhere in the message
    gets the surrogate it got there (a date: the person's shift, in the
    leaf's own form), so the guard has nothing to find. Only leaves the guard
    (``found``) would refuse are touched; a value that stands inside a longer
    leaf is left, and the guard quarantines the message.
    """
    def surrogate(value: str) -> str | None:
        label = labels.get(_leaf_key(value))
        if label is None or not found(value):
            return None
        if category(label) == "DATE" and _TS_LEAF.fullmatch(value.strip()):
            return header.date(value)
        return header.value(value, label)

    _map_kept_leaves(message, lambda _text: True, surrogate)


def _map_kept_leaves(message: Hl7Message, may_hold: Callable[[str], bool],
                     surrogate: Callable[[str], str | None]) -> None:
    """Pass every leaf no table types through ``surrogate`` (None: kept).

    Structure fields, the report's text fields and the typed PHI leaves
    (replaced by the header rewriter) are not passed; a segment whose raw
    fields ``may_hold`` says no is skipped whole.
    """
    d = message.delimiters
    nested = (d.component, d.repetition, d.subcomponent, d.escape)
    for seg in message.segments:
        fields = seg.fields
        if not may_hold(d.field.join(fields[1:])):
            continue
        typed = _typed_leaves(seg.name)
        skip = numbers_of(STRUCTURE_FIELDS, seg.name)
        text_field, obx_typed = _text_field(message, seg)
        for n in range(1, len(fields)):
            raw = fields[n]
            if not raw or n in skip or n == text_field:
                continue
            own = obx_typed if seg.name == "OBX" and n == 5 else typed.get(
                n, _NO_FIELDS)
            if not any(ch in raw for ch in nested):
                # One plain leaf (most fields): no split, no escaping.
                if (1, 1) not in own and raw != '""':
                    new = surrogate(raw)
                    if new is not None:
                        fields[n] = escape(new, d)
                continue

            def leaf(component: int, sub: int, value: str,
                     own: frozenset = own) -> str | None:
                return None if (component, sub) in own else surrogate(value)

            fields[n] = map_leaves(raw, d, leaf)
