"""The job times its own de-identification steps (transforms/stage_clock.py)."""

from __future__ import annotations

import time

from deid_pipeline.pipelines.job import run
from deid_pipeline.transforms.stage_clock import StageClock


def _busy(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_clock_counts_its_blocks_and_each_items_making_not_its_use():
    clock = StageClock()
    with clock:
        _busy(0.02)

    def made():
        for _ in range(3):
            _busy(0.01)  # making an item: timed
            yield 1

    for _ in clock.each(made()):
        _busy(0.05)  # what the caller does with it (Beam's next transform): not
    timed = clock._pending_ns / 1e9
    assert 0.05 <= timed < 0.1
    clock.flush()  # outside a pipeline the counter is Beam's no-op
    assert clock._pending_ns == 0


def test_run_json_reports_the_cpu_of_the_steps_within_the_runs_own(tmp_path):
    samples = "samples/notes/*.txt"
    before = time.process_time()
    summary = run(["--input", samples, "--output", str(tmp_path / "o"),
                   "--ephemeral-key"])
    used = time.process_time() - before
    # In one process: the steps (the tagger's load and every document's
    # tagging, rewriting and writing) are part, never all, of the run's CPU.
    assert summary["records_written"] > 0
    assert 0 < summary["stage_cpu_seconds"] < used
