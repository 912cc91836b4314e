"""One value, one surrogate: seeded values copied into fields no table types.

Senders copy an order number into OBR-29, an MRN into MSH-10, a mother's
names into PID-21's check digit. Every whole leaf that spells a value the
header seeded gets the surrogate the typed field got, wherever it stands,
so the message guard has nothing to find and the message is not held back.
"""

from __future__ import annotations

import functools
import re

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
from deid_pipeline.model import PatientDictionary

__all__ = ["replace_seeded", "seeded_values"]

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

