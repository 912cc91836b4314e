"""The sealed split and the review-queue curve (issue 9's protocol)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from deid_pipeline.evaluation import cross_validation
from deid_pipeline.evaluation.sealed import (
    format_review_curve,
    group_key,
    is_sealed,
    missed_phrases,
    review_curve,
    split,
)
from deid_pipeline.model import ClinicalDocument, PhiSpan


def test_when_corpus_split_then_patients_whole_and_about_30_percent(physionet_docs):
    dev, sealed = split(physionet_docs)
    assert len(dev) + len(sealed) == len(physionet_docs)
    dev_patients = {group_key(d) for d in dev}
    sealed_patients = {group_key(d) for d in sealed}
    assert not dev_patients & sealed_patients
    share = len(sealed_patients) / (len(dev_patients) + len(sealed_patients))
    assert 0.2 <= share <= 0.4


def test_when_split_computed_then_it_is_the_one_fixed_for_good():
    # The split must never move: a patient development has read must never
    # become sealed. These keys pin the hash, salt and share.
    docs = [ClinicalDocument(f"d{i}", "x", "physionet", person_key=str(i))
            for i in range(1, 21)]
    assert [d.person_key for d in docs if is_sealed(d)] == SEALED_OF_FIRST_20


SEALED_OF_FIRST_20 = ["12", "15", "17", "19", "20"]


def test_when_document_has_no_patient_then_its_own_id_decides():
    a = ClinicalDocument("note-1", "x", "text")
    assert group_key(a) == "doc:note-1"
    assert is_sealed(a) == is_sealed(dataclasses.replace(a, text="other"))


def _doc(doc_id: str, text: str, gold: list[tuple[int, int, str]]) -> ClinicalDocument:
    spans = tuple(PhiSpan(s, e, lab, "gold") for s, e, lab in gold)
    return ClinicalDocument(doc_id, text, "jsonl", gold=spans)


def test_when_misses_counted_then_bare_years_and_overlapped_phrases_are_not_misses():
    text = "Seen by Dr Smith in 1992 at Mercy on 3/4."
    doc = _doc("a", text, [(11, 16, "DOCTOR"), (20, 24, "DATE"), (28, 33, "HOSPITAL"),
                          (37, 40, "DATE")])
    predicted = [PhiSpan(13, 16, "DOCTOR", "crf")]
    # Smith is overlapped, 1992 is a bare year, Mercy and 3/4 are missed.
    assert missed_phrases(text, doc.gold, predicted) == 2


def test_when_review_curve_then_least_confident_documents_are_read_first():
    docs = [_doc(f"d{i}", "Dr Smith", [(3, 8, "DOCTOR")]) for i in range(10)]
    found = [PhiSpan(3, 8, "DOCTOR", "crf")]
    # d7 and d8 are missed; d8 is the least confident, d7 the 4th least.
    predicted = [() if i in (7, 8) else found for i in range(10)]
    confidence = [0.9, 0.8, 0.95, 0.4, 0.7, 0.99, 0.6, 0.65, 0.1, None]
    points = review_curve(docs, predicted, confidence, shares=(0.1, 0.3, 0.5))
    assert [(p.documents_read, p.missed_found, p.missed_total) for p in points] == [
        (1, 1, 2), (3, 1, 2), (5, 2, 2)]
    assert "missed found" in format_review_curve(points)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    cross_validation.add_subcommand(parser.add_subparsers())
    return parser


def _synthetic_patients(n_docs: int = 30):
    from deid_pipeline.synthetic import generate_notes

    docs = generate_notes(n_docs, seed=11, min_tokens=40, max_tokens=100)
    # Three notes per patient, so whole patients fall on each side.
    return [dataclasses.replace(d, person_key=f"p{i // 3}") for i, d in enumerate(docs)]


def test_when_evaluate_sealed_then_dev_cv_sealed_scores_curve_and_gap(
        tmp_path, capsys, jsonl_corpus):
    docs = _synthetic_patients()
    dev, sealed = split(docs)
    assert dev and sealed
    out = tmp_path / "scores.json"
    args = _parser().parse_args([
        "evaluate", "--corpus", jsonl_corpus(docs),
        "--protocol", "sealed", "--folds", "2", "--max-iterations", "5",
        "--detectors", "crf", "--json", str(out),
        "--save-model", str(tmp_path / "dev.crfsuite")])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "Development patients" in printed and "Sealed patients" in printed
    assert "Review queue" in printed and "Gap, HIPAA binary token" in printed
    payload = json.loads(out.read_text())
    assert payload["evaluation"]["documents"] == len(dev)
    assert payload["sealed"]["evaluation"]["documents"] == len(sealed)
    assert sum(p["documents_read"] > 0 for p in payload["sealed"]["review_curve"]) == 4
    assert docs[0].text[:30] not in printed + out.read_text()
    # The kept development model scores the sealed split again to the same figures.
    again = tmp_path / "again.json"
    args = _parser().parse_args([
        "evaluate", "--corpus", jsonl_corpus(docs), "--protocol", "sealed",
        "--model", str(tmp_path / "dev.crfsuite"), "--detectors", "crf",
        "--json", str(again)])
    assert args.func(args) == 0
    assert (json.loads(again.read_text())["sealed"]["evaluation"]
            == payload["sealed"]["evaluation"])
    # ... and --protocol sealed also scored the swapped copies with that model,
    # which --protocol swapped scores again, alone, to the same figures.
    assert "Swapped sealed patients (3 copies" in printed
    rows = payload["swapped"]["copies"]
    assert [r["copy"] for r in rows][:4] == ["copy 1", "copy 2", "copy 3", "mean"]
    assert rows[-1]["copy"].startswith("worst (copy ")
    swapped = tmp_path / "swapped.json"
    capsys.readouterr()
    args = _parser().parse_args([
        "evaluate", "--corpus", jsonl_corpus(docs), "--protocol", "swapped",
        "--model", str(tmp_path / "dev.crfsuite"), "--detectors", "crf",
        "--json", str(swapped)])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "Sealed patients" not in printed and "Swapped sealed patients" in printed
    assert json.loads(swapped.read_text())["swapped"]["copies"] == rows


def test_when_evaluate_dev_then_no_sealed_document_is_scored(tmp_path, capsys,
                                                            jsonl_corpus):
    from deid_pipeline.training.crf import TrainOptions, train_model

    docs = _synthetic_patients()
    dev, _ = split(docs)
    model = str(tmp_path / "m.crfsuite")
    train_model(docs, model, TrainOptions(max_iterations=5), progress=None)
    out = tmp_path / "scores.json"
    args = _parser().parse_args([
        "evaluate", "--corpus", jsonl_corpus(docs),
        "--protocol", "dev", "--model", model, "--json", str(out)])
    assert args.func(args) == 0
    assert json.loads(out.read_text())["evaluation"]["documents"] == len(dev)
    assert "Sealed" not in capsys.readouterr().out
