"""HIDE's data linking: documents joined into persons through shared identifiers.

Every document contributes identifier nodes (header MRN with its assigning
authority, MRN and SSN values, a name together with a birth date, and the
same kinds found in its narrative); documents sharing a node belong to one
person (connected components, union-find). A header key is authoritative:
a document that carries one keeps it as its person key, so streaming (which
never sees other documents) and batch agree on its person id. Linking only
decides the person of documents that carry no key of their own.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from deid_pipeline.linking.keys import (
    document_key,
    fallback_person_key,
    record_person_key,
)
from deid_pipeline.model import TaggedDocument
from deid_pipeline.tokenizer import ASCII_DIGITS

# How strong each kind of identifier is as evidence of one person; the
# canonical key of a component comes from its strongest kind.
KIND_ORDER = ("record", "mrn", "ssn", "name-dob")

_DOB_CONTEXT = re.compile(
    r"(?:\bDOB\b|\bD\.O\.B\.?|\bborn\b|\bbirth\s*date\b|"
    r"\bdate\s+of\s+birth\b)\W{0,4}$",
    re.IGNORECASE,
)
# How far before a date its "DOB:" label may stand (bounded, so a note with
# thousands of dates is not rescanned from the top for each).
_DOB_WINDOW = 40
_DATE_PARTS = re.compile(r"\d+")
_MONTHS = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
)
_MONTH_NAME = re.compile(r"(?i)\b(" + "|".join(_MONTHS) + r")[a-z]*\.?")


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """The identifiers one document offers to the linking graph."""

    doc_key: str
    own_key: str | None
    fallback_key: str
    identifiers: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class PersonAssignment:
    """The person a document belongs to and what linked it."""

    doc_key: str
    person_key: str
    linked_by: tuple[str, ...]


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch in ASCII_DIGITS).lstrip("0")


def _name_key(value: str) -> str:
    parts = sorted(p for p in re.split(r"[\s,.]+", value.lower()) if len(p) > 1)
    return " ".join(parts)


def _date_key(value: str) -> str:
    """``month-day-yy`` of a birth date written numerically (US or ISO) or in words.

    The century is dropped because notes write ``3/4/50`` as often as
    ``03/04/1950``; a wrong key only means a link is not made.
    """
    numbers = [int(p) for p in _DATE_PARTS.findall(value)]
    month_name = _MONTH_NAME.search(value)
    if month_name and len(numbers) == 2:
        month = _MONTHS.index(month_name.group(1).lower()) + 1
        day, year = numbers
    elif len(numbers) == 3 and numbers[0] > 999:
        year, month, day = numbers
    elif len(numbers) == 3:
        month, day, year = numbers
    elif len(numbers) == 1 and len(str(numbers[0])) == 8:  # HL7 TS: YYYYMMDD
        n = numbers[0]
        year, month, day = n // 10000, n // 100 % 100, n % 100
    else:
        return ""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return ""
    return f"{month}-{day}-{year % 100:02d}"


def link_record(tagged: TaggedDocument) -> LinkRecord:
    """Collect the linkable identifiers of a tagged document (header and text)."""
    doc = tagged.document
    ids: set[tuple[str, str]] = set()
    names: set[str] = set()
    births: set[str] = set()
    if doc.dictionary is not None:
        for value, label, field in doc.dictionary.rows():
            if label == "MEDICALRECORD" and _digits(value):
                ids.add(("mrn", _digits(value)))
            elif label == "SSN" and len(_digits(value)) >= 7:
                ids.add(("ssn", _digits(value)))
            elif label == "PATIENT" and field.startswith("PID.5"):
                names.add(_name_key(value))
            elif label == "DATE" and field.startswith("PID.7"):
                births.add(_date_key(value))
    text = doc.text
    for span in tagged.spans:
        value = text[span.start : span.end]
        if span.label == "MEDICALRECORD" and len(_digits(value)) >= 4:
            ids.add(("mrn", _digits(value)))
        elif span.label == "SSN" and len(_digits(value)) >= 7:
            ids.add(("ssn", _digits(value)))
        elif span.label == "PATIENT":
            names.add(_name_key(value))
        elif span.label == "DATE" and _DOB_CONTEXT.search(
            text, max(0, span.start - _DOB_WINDOW), span.start
        ):
            births.add(_date_key(value))
    # A name alone is too weak to link two documents; with a birth date it is not.
    for name in names:
        for birth in births:
            if name and " " in name and birth:
                ids.add(("name-dob", f"{name}|{birth}"))
    return LinkRecord(
        document_key(doc),
        record_person_key(doc),
        fallback_person_key(doc),
        tuple(sorted(ids)),
    )


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, node: str) -> str:
        parent = self.parent.setdefault(node, node)
        if parent != node:
            parent = self.parent[node] = self.find(parent)
        return parent

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # Deterministic root choice so results never depend on input order.
            lo, hi = sorted((ra, rb))
            self.parent[hi] = lo


def _strength(node: str) -> tuple[int, str]:
    kind = node.split(":", 1)[0]
    return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), node)


def resolve(records: Iterable[LinkRecord]) -> list[PersonAssignment]:
    """Assign every document a person key (connected components of the graph)."""
    records = sorted(records, key=lambda r: r.doc_key)
    uf = _UnionFind()
    for rec in records:
        doc_node = f"doc:{rec.doc_key}"
        uf.find(doc_node)
        if rec.own_key:
            uf.union(doc_node, f"record:{rec.own_key}")
        for kind, value in rec.identifiers:
            uf.union(doc_node, f"{kind}:{value}")
    members: dict[str, list[str]] = defaultdict(list)
    for node in list(uf.parent):
        if not node.startswith("doc:"):
            members[uf.find(node)].append(node)
    assignments = []
    for rec in records:
        root = uf.find(f"doc:{rec.doc_key}")
        nodes = members.get(root, [])
        kinds = tuple(sorted({n.split(":", 1)[0] for n in nodes}))
        if rec.own_key:
            key = rec.own_key
        elif nodes:
            best = min(nodes, key=_strength)
            key = best.split(":", 1)[1] if best.startswith("record:") else best
        else:
            key = rec.fallback_key
        assignments.append(PersonAssignment(rec.doc_key, key, kinds))
    return assignments


@dataclass(frozen=True, slots=True)
class PriorPerson:
    """A person of an earlier run: the key it was given and its identifiers.

    From the protected link history of an ``--incremental`` output; the key is
    what that run rewrote the person's documents with (ids, date shift,
    surrogates all derive from it), so a later document linked to it must
    get the same key.
    """

    person_key: str
    identifiers: tuple[tuple[str, str], ...]


def _key_strength(person_key: str) -> tuple[int, str]:
    """Rank a person key as its node would rank (a bare key is a record key)."""
    kind = person_key.split(":", 1)[0]
    return _strength(person_key if kind in KIND_ORDER else f"record:{person_key}")


def resolve_with_prior(
    records: Iterable[LinkRecord], prior: Iterable[PriorPerson]
) -> tuple[list[PersonAssignment], list[tuple[str, str]]]:
    """``resolve`` for new documents, persons of earlier runs kept.

    A document without a header key that shares an identifier (directly or
    through other new documents) with an earlier person gets that person's
    key. If it joins several earlier persons, they are merged: the strongest
    key (``KIND_ORDER``, then text order) is kept and each other one is
    returned as ``(kept key, merged key)``; rows already published keep their
    old id (partitions are never rewritten), the merge record maps it.
    """
    prior = list(prior)
    records = sorted(records, key=lambda r: r.doc_key)
    uf = _UnionFind()
    for person in prior:
        node = f"prior:{person.person_key}"
        uf.find(node)
        for kind, value in person.identifiers:
            uf.union(node, f"{kind}:{value}")
    plain = {a.doc_key: a for a in resolve(records)}
    for rec in records:
        uf.find(f"doc:{rec.doc_key}")
        if rec.own_key:
            uf.union(f"doc:{rec.doc_key}", f"record:{rec.own_key}")
        for kind, value in rec.identifiers:
            uf.union(f"doc:{rec.doc_key}", f"{kind}:{value}")
    earlier: dict[str, set[str]] = defaultdict(set)
    for person in prior:
        earlier[uf.find(f"prior:{person.person_key}")].add(person.person_key)
    assignments, merges = [], set()
    for rec in records:
        keys = earlier.get(uf.find(f"doc:{rec.doc_key}"))
        assignment = plain[rec.doc_key]
        if keys and not rec.own_key:
            kept = min(keys, key=_key_strength)
            merges.update((kept, other) for other in keys if other != kept)
            assignment = PersonAssignment(rec.doc_key, kept, assignment.linked_by)
        assignments.append(assignment)
    return assignments, sorted(merges)
