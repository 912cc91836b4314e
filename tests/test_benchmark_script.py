"""Smoke tests of the job benchmarks (``benchmark`` and the two it is made of,
``bench_scaling`` and ``bench_stages``): each runs on a handful of documents and
prints its figures. Never asserts speed (that depends on the machine and its load).
"""

import json

import pytest

from deid_pipeline.benchmarks import (
    bench_inputs,
    bench_scaling,
    bench_stages,
    benchmark,
    sampling,
)

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
    assert bench_inputs.resolve_detectors("rules,crf", missing) == ("rules",)
    assert "no CRF model" in capsys.readouterr().err
    assert bench_inputs.resolve_detectors("rules,dictionary", missing) == (
        "rules",
        "dictionary",
    )


def test_when_bench_scaling_runs_alone_then_it_prints_runs_and_acceptance(
    tmp_path, capsys
):
    figures = bench_scaling.main(
        ["--docs", "3", "--scale", "1", "--workers", "1", "--workdir",
         str(tmp_path / "work")]
    )
    out = capsys.readouterr().out
    for expected in (
        "deid-pipeline bench_scaling:",
        "input N: 3 documents",
        "N 1w",
        "acceptance (issue 6",
        "  N: ",
    ):
        assert expected in out, expected
    assert "per-stage share" not in out
    assert [r["label"] for r in figures["runs"]] == ["N 1w"]


@pytest.mark.parametrize("mode", ["multi_processing", "in_memory"])
def test_when_bench_stages_runs_alone_then_shares_are_set_against_a_job_run(
    tmp_path, capsys, mode
):
    figures = bench_stages.main(
        ["--docs", "3", "--workdir", str(tmp_path / "work"), "--single-mode", mode]
    )
    out = capsys.readouterr().out
    for expected in (
        "deid-pipeline bench_stages:",
        "running N 1w (the baseline)",
        "per-stage share of time",
        "tag:rules",
        "tag:reconcile",
        "CPU-ms/doc in its process tree",
        "timed inside the job, its de-identification steps took",
        "running 1 doc 1w (start-up)",
        "a 1-document run (start-up): client",
    ):
        assert expected in out, expected
    assert figures["stage_documents"] == 3
    assert figures["baseline"]["records_read"] == 3
    # The start-up run read one document: what the N run used beyond it is
    # the per-document cost. In memory, the client is the only process.
    if mode == "in_memory":
        assert figures["startup_driver_cpu"] == pytest.approx(figures["startup_cpu"])
    else:
        assert 0 < figures["startup_driver_cpu"] < figures["startup_cpu"]


def test_the_stage_timings_reconcile_documents_in_the_jobs_chunks():
    # Each file's documents, so many at a time: what the job reconciles together.
    chunks = bench_stages._chunks(10, [0, 3, 3], 4)
    assert [(c.start, c.stop) for c in chunks] == [(0, 3), (3, 7), (7, 10)]


def test_when_processes_sampled_by_role_then_flink_client_and_workers_told_apart():
    """The client's command line names the job server jar: still the client."""
    import subprocess
    import sys

    sampler = sampling.RoleSampler(interval=0.1)
    roles = {
        "deid_pipeline.pipelines.job --flink_job_server_jar=/c/x-job-server-2.62.0.jar":
            "run (client)",
        "java -jar /c/beam-runners-flink-1.19-job-server-2.62.0.jar": "beam job server",
        "java org.apache.flink.runtime.taskexecutor.TaskManagerRunner":
            "flink taskmanagers",
        "python -c from apache_beam.runners.worker.sdk_worker import SdkHarness; "
        "SdkHarness('localhost:1')": "sdk workers",
        "python -m apache_beam.runners.worker.sdk_worker_main": "sdk workers",
        "bash": "other",
    }
    for line, role in roles.items():
        assert sampler._role(line.split()) == role
    sampler.start()
    busy = subprocess.run(
        [sys.executable, "-c", "import time\nt = time.process_time()\n"
         "while time.process_time() - t < 0.6: pass", "deid_pipeline.pipelines.job"],
        check=True,
    )
    assert busy.returncode == 0
    assert sampler.stop()["run (client)"] >= 0.3


def test_when_a_process_has_exited_unreaped_then_it_keeps_the_role_it_was_seen_in():
    """A zombie shows no command line but all its CPU: not counted as ``other``."""
    from types import SimpleNamespace

    def process(cmdline, cpu, pid=41):
        times = SimpleNamespace(user=cpu, system=0.0)
        return SimpleNamespace(pid=pid, info={"cmdline": cmdline, "cpu_times": times})

    seen = [[process(["python", "-m", "deid_pipeline.pipelines.job"], 0.2),
             process(None, 0.1, pid=42)],  # a command line that cannot be read
            [process([], 0.6)]]
    sampler = sampling.RoleSampler(interval=60)
    sampler._start.clear()  # the machine's processes: none of them is pid 41's
    sampler._psutil = SimpleNamespace(process_iter=lambda attrs: seen.pop(0))
    sampler._sample()
    assert sampler.start().stop() == {"other": 0.1, "run (client)": 0.6}


def test_when_bench_stages_runs_rounds_then_each_figure_has_a_median_and_range(
    tmp_path, capsys, monkeypatch
):
    timed_in = []

    def recorded(function, *args):
        timed_in.append(function.__name__)
        return fresh_process(function, *args)

    fresh_process = bench_stages.fresh_process
    monkeypatch.setattr(bench_stages, "fresh_process", recorded)
    figures = bench_stages.main(
        ["--docs", "3", "--workdir", str(tmp_path / "work"),
         "--single-mode", "in_memory", "--rounds", "2"]
    )
    out = capsys.readouterr().out
    assert "round 1 of 2" in out and "round 2 of 2" in out
    assert "over 2 rounds" in out and "Beam's share of the job's CPU" in out
    rounds = figures["rounds"]
    assert len(rounds) == 2
    for name, median in figures["medians"].items():
        values = [r[name] for r in rounds]
        assert min(values) <= median <= max(values)
    # A round's share is its own job against its own stage timing, the stage
    # functions timed in a process of their own each round.
    for r in rounds:
        assert r["beam_share"] == pytest.approx(1 - r["stage_ms"] / r["job_cpu_ms"])
        # The one-off loads are stage work: counted as Beam's, the share is more.
        assert r["stage_ms"] > r["unloaded_ms"]
        assert r["beam_share_with_loads"] > r["beam_share"]
    assert "the one-off loads counted as Beam's" in out
    # And each round's job timed its own steps: one run, one moment.
    assert "the steps timed inside the job" in out
    for r in rounds:
        assert 0 < r["beam_share_in_job"] < 1
    assert figures["stage_seconds"]["load"] > 0
    assert timed_in == ["time_stages", "time_stages"]


def _texts_held() -> int:
    """Token texts the shipped model's encoder holds rows for in this process."""
    from deid_pipeline.tagger.crf_model import load_model

    return len(load_model(None).encoder._rows)  # noqa: SLF001 - its cache


def test_when_stages_are_timed_in_a_fresh_process_then_no_cache_is_warm():
    from deid_pipeline.model import ClinicalDocument
    from deid_pipeline.tagger.detectors import TaggerConfig
    from deid_pipeline.tagger.tagging import PhiTagger

    PhiTagger.from_config(TaggerConfig(detectors=("crf",))).tag(ClinicalDocument(
        doc_id="n1", text="Pt seen by Dr. Rivera on 3/4. Family at bedside.",
        source="test"))
    assert _texts_held() > 0
    assert bench_stages.fresh_process(_texts_held) == 0


def test_when_bench_stages_is_asked_for_no_round_then_it_says_so(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        bench_stages.main(["--docs", "3", "--workdir", str(tmp_path), "--rounds", "0"])
    assert exit_info.value.code == 2
