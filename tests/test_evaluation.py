"""Evaluation: patient-grouped folds, printed tables, the bias sweep, the command."""

from __future__ import annotations

import argparse
import json

import pytest

from deid_pipeline.evaluation import cross_validation as evaluation
from deid_pipeline.evaluation.cross_validation import (
    assign_folds,
    format_evaluation,
    format_sweep,
    group_key,
    parse_sweep,
    tag_at_biases,
)
from deid_pipeline.evaluation.metrics import evaluate
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.detectors import DEFAULT_BIAS, TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger, reconcile_documents
from deid_pipeline.training import train as training
from deid_pipeline.training.crf import TrainOptions, train_model


def _docs(groups: dict[str, int]) -> list[ClinicalDocument]:
    return [ClinicalDocument(f"{p}-{i}", "x", "test", person_key=p)
            for p, n in groups.items() for i in range(n)]


def test_when_folds_assigned_then_no_patient_is_in_two_folds():
    docs = _docs({f"p{i}": (i % 7) + 1 for i in range(40)})
    folds = assign_folds(docs, 5)
    fold_of: dict[str, set[int]] = {}
    for doc, fold in zip(docs, folds):
        fold_of.setdefault(group_key(doc), set()).add(fold)
    assert all(len(f) == 1 for f in fold_of.values())
    sizes = [folds.count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 7  # balanced up to one patient
    assert set(folds) == set(range(5))


def test_when_folds_assigned_twice_or_reordered_then_same_patient_folds():
    docs = _docs({f"p{i}": (i % 3) + 1 for i in range(20)})
    first = dict(zip((d.doc_id for d in docs), assign_folds(docs, 4)))
    backwards = list(reversed(docs))
    again = dict(zip((d.doc_id for d in backwards), assign_folds(backwards, 4)))
    assert first == again


def test_when_documents_lack_a_person_key_then_each_is_its_own_group():
    docs = [ClinicalDocument(f"d{i}", "x", "test") for i in range(6)]
    assert sorted(assign_folds(docs, 3)) == [0, 0, 1, 1, 2, 2]


def test_when_fewer_patients_than_folds_then_error():
    with pytest.raises(ValueError):
        assign_folds(_docs({"a": 3, "b": 2}), 3)
    with pytest.raises(ValueError):
        assign_folds(_docs({"a": 3, "b": 2}), 1)


@pytest.mark.parametrize(("spec", "expected"), [
    ("-2:0:1", [-2.0, -1.0, 0.0]),
    ("0:1:0.5", [0.0, 0.5, 1.0]),
    ("1:-1:-1", [1.0, 0.0, -1.0]),
])
def test_when_sweep_spec_then_inclusive_range(spec, expected):
    assert parse_sweep(spec) == expected


@pytest.mark.parametrize("spec", ["1:2", "a:b:c", "0:1:0", "0:1:-1", "0:1000:0.001"])
def test_when_sweep_spec_bad_then_error(spec):
    with pytest.raises(ValueError):
        parse_sweep(spec)


def test_when_evaluation_printed_then_hand_computed_numbers_appear():
    # tokens: Seen by Dr Smith on 3 4 1992 -> gold PHI: Smith, 3, 4, 1992;
    # predicted: Dr Smith (DOCTOR) and 3/4 (DATE); the bare year is missed.
    text = "Seen by Dr Smith on 3/4 1992"
    gold = [PhiSpan(11, 16, "DOCTOR", "g"), PhiSpan(20, 23, "DATE", "g"),
            PhiSpan(24, 28, "DATE", "g")]
    pred = [PhiSpan(8, 16, "DOCTOR", "crf"), PhiSpan(20, 23, "DATE", "rules")]
    ev = evaluate([(text, gold, pred)])
    table = format_evaluation(ev, "title")
    lines = table.splitlines()
    row = next(line for line in lines if line.strip().startswith("all PHI"))
    # TP 3 (Smith, 3, 4), FP 1 (Dr), FN 1 (1992): P 0.75, R 0.75
    assert row.split()[2:] == ["3", "1", "1", "0.7500", "0.7500", "0.7500"]
    hipaa = next(line for line in lines if "HIPAA (no years)" in line)
    # the bare year is ignored: TP 3, FP 1, FN 0
    assert hipaa.split()[3:] == ["3", "1", "0", "0.7500", "1.0000", "0.8571"]
    strict = next(line for line in lines if "strict, all" in line)
    assert strict.split()[2:5] == ["1", "1", "2"]  # only 3/4 matches exactly
    date = next(line for line in lines if line.strip().startswith("DATE "))
    assert date.split() == ["DATE", "3", "2", "0.6667"]
    confusion_header = next(i for i, line in enumerate(lines) if "gold \\ pred" in line)
    assert lines[confusion_header].split()[-3:] == ["DATE", "DOCTOR", "O"]
    outside = lines[confusion_header + 3].split()
    assert outside == ["O", "0", "1", "3"]  # Dr -> DOCTOR; Seen, by, on -> O


def test_when_sweep_printed_then_one_row_per_bias():
    text = "Dr Smith"
    ev = evaluate([(text, [PhiSpan(3, 8, "DOCTOR", "g")], [])])
    out = format_sweep([(-1.0, ev), (0.0, ev)])
    assert "-1.00" in out and "0.00" in out
    assert len(out.splitlines()) == 4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from deid_pipeline.synthetic import generate_notes

    docs = generate_notes(24, seed=5, min_tokens=40, max_tokens=120)
    path = str(tmp_path_factory.mktemp("ev") / "m.crfsuite")
    train_model(docs, path, TrainOptions(max_iterations=25), progress=None)
    return docs, path


def test_when_sweep_tags_once_then_same_spans_as_the_shipped_tagger(tiny):
    docs, path = tiny
    detectors = ("dictionary", "crf")
    biases = [-3.0, 0.0, 2.0]
    swept = tag_at_biases(docs, detectors, path, biases)
    for bias in biases:
        tagger = PhiTagger.from_config(TaggerConfig(detectors, path, bias))
        tagged = reconcile_documents([tagger.tag(d) for d in docs])
        assert swept.spans[bias] == [t.spans for t in tagged]
        assert swept.confidence[bias] == [t.confidence for t in tagged]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    evaluation.add_subcommand(sub)
    training.add_subcommand(sub)
    return parser


def test_when_evaluate_command_with_folds_then_tables_and_json(tiny, tmp_path, capsys,
                                                             jsonl_corpus):
    docs, _ = tiny
    spec = jsonl_corpus(docs)
    out = tmp_path / "scores.json"
    args = _parser().parse_args(["evaluate", "--corpus", spec, "--folds", "2",
                                 "--jobs", "2", "--detectors", "dictionary,crf",
                                 "--max-iterations", "10", "--bias-sweep=-1:0:1",
                                 "--json", str(out)])
    assert args.func(args) == 0
    printed = capsys.readouterr()
    assert "Binary token" in printed.out and "Bias sweep" in printed.out
    assert "2-fold cross-validation grouped by patient" in printed.out
    payload = json.loads(out.read_text())
    assert payload["evaluation"]["documents"] == len(docs)
    # The sweep's biases, plus the default bias the main table is scored at.
    expected = sorted({-1.0, 0.0, DEFAULT_BIAS})
    assert [row["bias"] for row in payload["sweep"]] == expected
    # no note text in what is printed or written
    assert docs[0].text[:30] not in printed.out + printed.err + out.read_text()


def test_when_evaluate_command_with_model_then_scores_that_model(tiny, capsys,
                                                                jsonl_corpus):
    docs, path = tiny
    spec = jsonl_corpus(docs)
    args = _parser().parse_args(["evaluate", "--corpus", spec, "--model", path,
                                 "--detectors", "crf"])
    assert args.func(args) == 0
    assert "model crf-" in capsys.readouterr().out


def test_when_evaluate_options_bad_then_exit_2(tmp_path, capsys):
    for argv in (["evaluate", "--corpus", "nope:x"],
                 ["evaluate", "--corpus", "jsonl:/nonexistent.jsonl"],
                 ["evaluate", "--corpus", "synthetic:3", "--sampling", "bad"],
                 ["evaluate", "--corpus", "synthetic:3", "--detectors", "nope"]):
        args = _parser().parse_args(argv)
        assert args.func(args) == 2


def test_train_options_name_the_cluster_features_and_the_hidden_words():
    from deid_pipeline.training.crf import TrainOptions
    from deid_pipeline.training.train import train_options_from_args

    base = ["train", "--corpus", "synthetic:8", "--output", "m.crfsuite"]
    options = train_options_from_args(_parser().parse_args(
        [*base, "--clusters", "own", "--hide-copy-words", "--hide-rare", "2",
         "--pools", "whole"]))
    assert (options.clusters, options.hide_copy_words, options.hide_rare,
            options.pools) == ("own", True, 2, "whole")
    assert train_options_from_args(_parser().parse_args(base)) == TrainOptions()
    with pytest.raises(ValueError):
        train_options_from_args(_parser().parse_args([*base, "--hide-rare", "-1"]))
    with pytest.raises(SystemExit):
        _parser().parse_args([*base, "--clusters", "some"])
    with pytest.raises(SystemExit):
        _parser().parse_args([*base, "--pools", "evaluation"])


def test_when_train_command_then_model_written_and_reproducible(tmp_path, capsys):
    outs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.crfsuite"
        args = _parser().parse_args(["train", "--corpus", "synthetic:8",
                                     "--output", str(path), "--max-iterations", "5",
                                     "--seed", "2"])
        assert args.func(args) == 0
        outs.append(path.read_bytes())
    assert outs[0] == outs[1]
    printed = capsys.readouterr()
    assert "sha256:" in printed.out and "crf:" in printed.err
