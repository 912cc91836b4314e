"""Annotated corpora by spec: documents with gold spans for training and evaluation.

``physionet:DIR``, ``jsonl:FILE``, ``brat:DIR`` and ``genre:N``. The files are
read by the same readers as a run's inputs (:mod:`deid_pipeline.readers.formats`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.readers.formats import Record, read_physionet, read_physionet_gold


def load_physionet_corpus(directory: str) -> list[ClinicalDocument]:
    """The gold corpus as documents with gold spans (for training and evaluation)."""
    text_path = os.path.join(directory, "id.text")
    gold = read_physionet_gold(os.path.join(directory, "id-phi.phrase"))
    with open(text_path, "rb") as fh:
        data = fh.read()
    docs = [
        r
        for r in read_physionet(text_path, data, gold)
        if isinstance(r, ClinicalDocument)
    ]
    return docs


def load_jsonl_corpus(path: str) -> list[ClinicalDocument]:
    """Annotated JSONL: ``{"id", "text", "spans": [{"start", "end", "label"}]}``."""
    docs = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            gold = tuple(
                sorted(
                    PhiSpan(s["start"], s["end"], s["label"], "gold")
                    for s in obj["spans"]
                )
            )
            docs.append(
                ClinicalDocument(
                    doc_id=str(obj["id"]),
                    text=obj["text"],
                    source="jsonl",
                    origin=path,
                    gold=gold,
                    person_key=obj.get("person_key"),
                )
            )
    return docs


def load_corpus(spec: str) -> list[ClinicalDocument]:
    """``physionet:DIR``, ``jsonl:FILE``, ``brat:DIR`` or ``genre:N`` -> documents.

    ``genre:N`` is the genre set (:mod:`deid_pipeline.synthetic.genres`, seed 0):
    N documents of other genres, names and places from the evaluation half.
    ``brat:DIR`` (:mod:`deid_pipeline.evaluation.brat`) takes labels of the
    label set or of a label map loaded before (``--label-map``).
    """
    kind, _, path = spec.partition(":")
    if kind == "brat":
        from deid_pipeline.evaluation.brat import load_brat_corpus
        from deid_pipeline.labels import check_label

        return load_brat_corpus(path, check_label)
    if kind == "physionet":
        return load_physionet_corpus(path)
    if kind == "jsonl":
        return load_jsonl_corpus(path)
    if kind == "genre":
        from deid_pipeline.synthetic.genres import generate_genre_notes

        try:
            return generate_genre_notes(int(path))
        except ValueError:
            raise ValueError(f"corpus spec {spec!r}: expected genre:COUNT") from None
    raise ValueError(
        f"corpus spec {spec!r}: expected physionet:DIR, jsonl:FILE, brat:DIR or "
        "genre:N")


def iter_documents(records: Iterable[Record]) -> Iterator[ClinicalDocument]:
    """Only the documents of a record stream."""
    return (r for r in records if isinstance(r, ClinicalDocument))
