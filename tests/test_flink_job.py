"""The Flink stall watch: a job whose records do not move but whose staging grows works.

On Flink's batch runner a Beam stage is one bundle per task and its records
reach Flink's counters only when the bundle ends: the tagging stage of
50,000 notes on one TaskManager showed no record moving for over 600 s and
was cancelled while it worked. These tests run the watch against a stand-in
for Flink's REST API (counts frozen) and a real staging directory.
"""

from __future__ import annotations

import threading
import time

import pytest

from deid_pipeline.pipelines import flink_job


@pytest.fixture
def frozen_flink(monkeypatch):
    """Flink's REST API as a job whose counts never move; records cancels."""
    cancelled = []
    monkeypatch.setattr(flink_job, "POLL_SECONDS", 0.05)
    monkeypatch.setattr(flink_job, "_flink_job",
                        lambda base, beam_id: {"jid": "j1", "start-time": 0})
    frozen = ("RUNNING", (("v1", "RUNNING", 50, 0, 0, 0),))
    monkeypatch.setattr(flink_job, "progress", lambda base, jid: frozen)
    monkeypatch.setattr(flink_job._Watch, "_cancel",
                        lambda self, jid: cancelled.append(jid))
    return cancelled


def _watch(limit, activity=None):
    watch = flink_job._Watch("http://flink", "job_1", limit, activity)
    watch.start()
    return watch


def test_when_counts_frozen_but_staging_grows_then_job_not_cancelled(
    frozen_flink, tmp_path
):
    writing = threading.Event()

    def worker():  # a spill file per chunk, as the tagging stage writes them
        n = 0
        while not writing.is_set():
            (tmp_path / "_spill" / f"tagged-{n}.bin").write_bytes(b"x" * 100)
            n += 1
            time.sleep(0.1)

    (tmp_path / "_spill").mkdir()
    thread = threading.Thread(target=worker)
    thread.start()
    watch = _watch(0.5, lambda: flink_job.directory_activity(str(tmp_path)))
    time.sleep(2.0)  # four times the limit
    writing.set()
    thread.join()
    assert watch.stalled is None and frozen_flink == []
    # Once staging stops growing too, the job is stalled within the limit.
    watch.join(timeout=5)
    assert watch.stalled == "j1" and frozen_flink == ["j1"]


def test_when_counts_frozen_and_nothing_written_then_cancelled_within_limit(
    frozen_flink, tmp_path
):
    started = time.monotonic()
    watch = _watch(0.5, lambda: flink_job.directory_activity(str(tmp_path)))
    watch.join(timeout=5)
    assert watch.stalled == "j1" and frozen_flink == ["j1"]
    assert time.monotonic() - started < 3


def test_directory_activity_counts_files_and_bytes_below_it(tmp_path):
    assert flink_job.directory_activity(str(tmp_path)) == (0, 0)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.parquet").write_bytes(b"1234")
    (tmp_path / "y").write_bytes(b"12")
    assert flink_job.directory_activity(str(tmp_path)) == (2, 6)
    assert flink_job.directory_activity(str(tmp_path / "missing")) == (0, 0)
