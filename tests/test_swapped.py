"""The swapped sealed split: sealed notes with PHI from the evaluation half."""

from __future__ import annotations

import re

from deid_pipeline.evaluation.metrics import PRF, Evaluation, Scores
from deid_pipeline.evaluation.sealed import split
from deid_pipeline.evaluation.swapped import (
    copy_seeds,
    format_swapped,
    summarise,
    swapped_copy,
    swapped_split,
)
from deid_pipeline.surrogates.halves import PoolHalf, half_of

_NAMES = ("DOCTOR", "RELATIVE", "PATIENT")


def _sealed_with_names(physionet_docs, n=60):
    _, sealed = split(physionet_docs)
    spans_disjoint = [d for d in sealed if d.gold and all(
        a.end <= b.start for a, b in zip(d.gold, d.gold[1:]))]
    return spans_disjoint[:n]


def test_when_sealed_notes_swapped_then_gold_points_at_surrogates_and_rest_kept(
        physionet_docs):
    for doc in _sealed_with_names(physionet_docs):
        copy = swapped_copy(doc, 1)
        assert copy.doc_id == f"{doc.doc_id}#swap1"
        assert [s.label for s in copy.gold] == [s.label for s in doc.gold]
        old_cur = new_cur = 0
        for old, new in zip(doc.gold, copy.gold):
            assert doc.text[old_cur:old.start] == copy.text[new_cur:new.start]
            assert copy.text[new.start:new.end].strip() == copy.text[new.start:new.end]
            old_cur, new_cur = old.end, new.end
        assert doc.text[old_cur:] == copy.text[new_cur:]


def test_when_sealed_notes_swapped_then_names_come_from_the_evaluation_half(
        physionet_docs):
    checked = 0
    for doc in _sealed_with_names(physionet_docs, 200):
        copy = swapped_copy(doc, 2)
        for old, new in zip(doc.gold, copy.gold):
            if old.label not in _NAMES:
                continue
            kept = {w.casefold() for w in re.findall(r"[A-Za-z]+",
                                                       doc.text[old.start:old.end])}
            for word in re.findall(r"[A-Za-z]{2,}", copy.text[new.start:new.end]):
                if word.casefold() not in kept:
                    checked += 1
                    assert half_of(word) is PoolHalf.EVALUATION
    assert checked > 50


def test_when_swapped_under_other_seeds_then_copies_differ_and_repeat(physionet_docs):
    docs = _sealed_with_names(physionet_docs, 30)
    one, two = swapped_split(docs, 1), swapped_split(docs, 2)
    assert one == swapped_split(docs, 1)
    assert sum(a.text != b.text for a, b in zip(one, two)) > 25
    assert copy_seeds(3) == [1, 2, 3]


def _evaluation(tp, fp, fn):
    scores = Scores()
    scores.binary_token = PRF(tp, fp, fn)
    return Evaluation(all=scores, hipaa=scores)


def test_when_copies_summarised_then_mean_and_worst_recall_rows():
    rows = summarise([(1, _evaluation(90, 10, 10)), (2, _evaluation(80, 0, 20)),
                      (3, _evaluation(95, 5, 5))])
    assert [r.name for r in rows] == ["copy 1", "copy 2", "copy 3", "mean",
                                      "worst (copy 2)"]
    mean = rows[3].hipaa
    assert abs(mean.recall - (0.9 + 0.8 + 0.95) / 3) < 1e-12
    assert abs(mean.fn - 35 / 3) < 1e-12
    table = format_swapped(rows, "title")
    assert "worst (copy 2)" in table and "0.8000" in table
