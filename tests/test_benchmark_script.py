"""Smoke test of the benchmark script: it runs on a handful of documents and prints
its figures. Never asserts speed (that depends on the machine and its load).
"""

import json

import pytest

from deid_pipeline.pipelines import benchmark

pytest.importorskip("psutil")


def test_when_benchmark_runs_on_a_few_documents_then_it_prints_every_figure(
    tmp_path, capsys
):
    figures = benchmark.main(
        [
            "--docs",
            "4",
            "--scale",
            "2",
            "--workers",
            "1,2",
            "--stage-docs",
            "4",
            "--no-calibrate",
            "--workdir",
            str(tmp_path / "work"),
            "--json",
            str(tmp_path / "figures.json"),
        ]
    )
    out = capsys.readouterr().out
    for expected in (
        "input N: 4 documents",
        "input 2N: 8 documents",
        "docs/s",
        "tokens/s",
        "peak RSS",
        "scaling efficiency N:",
        "growth N -> 2N, 2 worker(s)",
        "per-stage share of time",
        "tag:rules",
        "leak_guard",
        "acceptance (issue 6",
        "  N: ",
        "  2N: ",
    ):
        assert expected in out, expected
    runs = {r["label"]: r for r in figures["runs"]}
    assert set(runs) == {"N 1w", "N 2w", "2N 1w", "2N 2w"}
    for r in runs.values():
        # Every record is accounted for, and the tree was sampled.
        assert r["records_read"] == r["documents"]
        assert r["records_written"] + r["records_quarantined"] == r["documents"]
        assert r["peak_rss"] > 0 and r["tokens"] > 0
    assert json.loads((tmp_path / "figures.json").read_text())["docs"] == 4


def test_when_the_crf_model_is_missing_then_crf_is_left_out_with_a_warning(
    tmp_path, capsys
):
    missing = str(tmp_path / "no-model.crfsuite")
    assert benchmark.resolve_detectors("rules,crf", missing) == ("rules",)
    assert "no CRF model" in capsys.readouterr().err
    assert benchmark.resolve_detectors("rules,dictionary", missing) == (
        "rules",
        "dictionary",
    )
