"""The link solver of the chunked batch job, Beam-free.

Each tagged document sends one small :class:`LinkItem` to one place, where
:func:`solve_links_with_prior` solves the identifier graph for the whole run
(and the link history of earlier runs) and says, per chunk of documents,
which person key each was linked to. ``transforms/chunks.py`` only moves
these values between DoFns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.keys import person_id
from deid_pipeline.linking.graph import (
    LinkRecord,
    PriorPerson,
    link_record,
    resolve_with_prior,
)
from deid_pipeline.linking.persons import (
    QuasiIdentifiers,
    persons_row,
    quasi_identifiers,
)
from deid_pipeline.model import TaggedDocument

__all__ = [
    "ChunkId",
    "DuplicateDocumentIdError",
    "LinkItem",
    "LinkSolution",
    "link_item",
    "solve_links",
    "solve_links_with_prior",
]

# (input file index, chunk index): where a document's tagged chunk lies.
ChunkId = tuple[int, int]


class LinkItem(NamedTuple):
    """What one tagged document sends to the link solver.

    Plain values (tuples, strings), which pickle compactly inside the packed
    blobs that cross the shuffle, unlike dataclasses. The repr shows where
    the document is and how much it carries, never its identifiers.
    """

    chunk_id: ChunkId
    # Position of the document in its tagged chunk.
    position: int
    # The document's own person key (its header's MRN + authority), or None.
    own_key: str | None
    # Linkable identifiers found in it, ((kind, value), ...).
    identifiers: tuple[tuple[str, str], ...]
    # Person id of the document alone: only when it has no own key and no
    # identifiers, so that it can link to nothing.
    alone: str | None
    # (date of birth as written, sex, ZIP3) from its header.
    quasi: tuple[str | None, str | None, str | None]
    # The document's id: two documents of a run with one id publish one row.
    doc_id: str = ""

    def __repr__(self) -> str:
        """Where the item comes from and its identifier count (no values)."""
        return (f"LinkItem(chunk_id={self.chunk_id!r}, position={self.position}, "
                f"identifiers={len(self.identifiers)})")


class LinkSolution(NamedTuple):
    """What solving all link items of a run gives."""

    # Chunk id -> person key of each document by position; None where
    # linking decided nothing (the document's own key, else the document
    # alone, as ``Rewriter.person_id_for`` derives it).
    keys_by_chunk: dict[ChunkId, tuple[str | None, ...]]
    # The persons table, one row per person id, in person id order.
    persons_rows: list[dict]
    # This run's persons for the next run's history: the key each was
    # rewritten with and its identifiers.
    history: list[PriorPerson]
    # (kept key, merged key) of earlier persons this run joined.
    merges: list[tuple[str, str]]
    # Chunk id -> person id of each document whose person has other
    # documents in this run (None for the others); chunks without any are
    # left out.
    shared_by_chunk: dict[ChunkId, tuple[str | None, ...]]
    # Chunk id -> {position: chunk id of the first document with its id}
    # for each document whose id an earlier document of the run has (in
    # input file, chunk and position order): quarantined, never linked.
    duplicates_by_chunk: dict[ChunkId, dict[int, ChunkId]] = {}


class DuplicateDocumentIdError(ValueError):
    """A document whose id an earlier document of the same run has.

    The research extract holds one row per document id: the first (in input
    file path order, then order in the file) is published, the later ones
    are quarantined at stage ``link`` with this error.
    """


def duplicate_message(first: ChunkId) -> str:
    """The quarantine message of a duplicate (no PHI: where the first one is)."""
    return (f"document id already used by an earlier document of this run (the "
            f"first: input file {first[0]} in path order, chunk {first[1]}); "
            "only the first is published")


def find_duplicates(items: list[LinkItem]) -> dict[tuple[ChunkId, int], ChunkId]:
    """Each later document with an id seen before -> where the first one is.

    Keys are (chunk id, position), values the first one's chunk id; documents
    are ordered by chunk id (input file in path order, chunk), then position.
    """
    first: dict[str, ChunkId] = {}
    later: dict[tuple[ChunkId, int], ChunkId] = {}
    for item in sorted(items, key=lambda i: (i.chunk_id, i.position)):
        if item.doc_id in first:
            later[item.chunk_id, item.position] = first[item.doc_id]
        else:
            first[item.doc_id] = item.chunk_id
    return later


def link_item(
    tagged: TaggedDocument, chunk_id: ChunkId, position: int, key: bytes
) -> LinkItem:
    """The link item of a tagged document."""
    record = link_record(tagged)
    quasi = quasi_identifiers(tagged.document)
    alone = None
    if not record.own_key and not record.identifiers:
        alone = person_id(key, record.fallback_key)
    return LinkItem(
        chunk_id,
        position,
        record.own_key or None,
        record.identifiers,
        alone,
        (quasi.birth, quasi.sex, quasi.zip3),
        tagged.document.doc_id,
    )


def solve_links(
    items: Iterable[LinkItem], rewriter: Rewriter
) -> tuple[dict[ChunkId, tuple[str | None, ...]], list[dict]]:
    """All link items -> person keys per chunk and the persons-table rows.

    The person key of a document is given only when linking decided it (an
    identifier it shares); ``None`` means the document's own key, else the
    document alone, which ``Rewriter.person_id_for`` derives from the
    document itself. The persons rows are as ``Persons`` makes them.
    """
    solution = solve_links_with_prior(items, rewriter, ())
    return solution.keys_by_chunk, solution.persons_rows


def solve_links_with_prior(
    items: Iterable[LinkItem], rewriter: Rewriter, prior: Iterable[PriorPerson]
) -> LinkSolution:
    """``solve_links`` against the persons of earlier runs (``--incremental``)."""
    items = list(items)
    later = find_duplicates(items)
    duplicates: dict[ChunkId, dict[int, ChunkId]] = {}
    for (chunk_id, position), first in sorted(later.items()):
        duplicates.setdefault(chunk_id, {})[position] = first
    # A duplicate is quarantined: it links nobody and is no person's document
    # (its key stays None, so each chunk's keys still run by position).
    by_chunk: dict[ChunkId, list[str | None]] = {}
    for item in items:
        if (item.chunk_id, item.position) in later:
            _put(by_chunk, item, None)
    items = [i for i in items if (i.chunk_id, i.position) not in later]
    key = rewriter.key
    records = [
        LinkRecord(f"{item.chunk_id[0]}:{item.chunk_id[1]}:{item.position}",
                   item.own_key, "", item.identifiers)
        for item in items
    ]
    solved, merges = resolve_with_prior(records, prior)
    assignments = {a.doc_key: a for a in solved}
    by_person: dict[str, list] = {}
    history: dict[str, set] = {}
    pids: list[str] = []
    for item, record in zip(items, records, strict=True):
        own = item.own_key
        assignment = assignments[record.doc_key]
        linked = assignment.person_key
        if linked and linked != own:
            pid, sent = person_id(key, linked), linked
        else:
            pid, sent = (person_id(key, own) if own else item.alone), None
        _put(by_chunk, item, sent)
        by_person.setdefault(pid, []).append(
            (assignment.linked_by, QuasiIdentifiers(*item.quasi))
        )
        pids.append(pid)
        if item.identifiers and (sent or own):
            history.setdefault(sent or own, set()).update(item.identifiers)
    shared: dict[ChunkId, list[str | None]] = {}
    for item, pid in zip(items, pids, strict=True):
        if len(by_person[pid]) > 1:
            _put(shared, item, pid)
    rows = [
        persons_row(pid, entries, rewriter)
        for pid, entries in sorted(by_person.items())
    ]
    persons = [PriorPerson(k, tuple(sorted(v))) for k, v in sorted(history.items())]
    return LinkSolution(
        {c: tuple(keys) for c, keys in by_chunk.items()},
        rows,
        persons,
        merges,
        {c: tuple(people) for c, people in shared.items()},
        duplicates,
    )


def _put(by_chunk: dict[ChunkId, list[str | None]], item: LinkItem,
         value: str | None) -> None:
    """Set ``value`` at the item's position in its chunk's list (None-padded)."""
    values = by_chunk.setdefault(item.chunk_id, [])
    values.extend([None] * (item.position + 1 - len(values)))
    values[item.position] = value
