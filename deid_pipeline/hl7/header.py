"""Header rewriting: every typed PHI leaf through the rewriter, the rest by allowlist.

:class:`HeaderRewriter` asks the rewriter for one surrogate per (value,
label) and shifts timestamps with the person's shift, so ``SMITH`` in PID-5
and "Mr. Smith" in the report get the same surrogate.
:func:`replace_header` walks the field table (:mod:`~deid_pipeline.hl7.fields`)
and typed OBX values; :func:`empty_unlisted_person_parts` then writes of a
person only what a table says is PHI (replaced) or a code.
"""

from __future__ import annotations

import functools
import re

from deid_pipeline.hl7.contracts import SupportsRewrite
from deid_pipeline.hl7.dates import shift_ts
from deid_pipeline.hl7.escapes import Delimiters, unescape
from deid_pipeline.hl7.fields import (
    KINDS,
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
)
from deid_pipeline.hl7.message import Hl7Message
from deid_pipeline.surrogates import Originals

__all__ = ["HeaderRewriter", "empty_unlisted_person_parts", "replace_header"]


class HeaderRewriter:
    """Replaces PHI leaves through the rewriter, one cached answer per value."""

    def __init__(self, rewriter: SupportsRewrite, pid: str,
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
        """The person's shift; only the year when the shifted date is an original.

        One shift per person keeps intervals, so a date is never redrawn; but
        in a batch the shifted birth date of one patient can be, to the day,
        another patient's (two in a file of 100 ADT messages), and an auditor
        reading the file finds it. The shifted year is kept (a year is no
        identifier under Safe Harbor), the rest left out.
        """
        key = (value, "<ts>")
        out = self.cache.get(key)
        if out is None:
            out = shift_ts(value, self.value) or ""
            if out and self.avoid is not None and self.avoid.spelled_by(out):
                out = out[:4]
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


def replace_header(message: Hl7Message, header: HeaderRewriter) -> None:
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


def empty_unlisted_person_parts(message: Hl7Message) -> None:
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

