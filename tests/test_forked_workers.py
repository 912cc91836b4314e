"""SDK workers forked from a loaded zygote (pipelines/forked_workers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import apache_beam as beam
import psutil
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from deid_pipeline.pipelines import forked_workers
from deid_pipeline.tagger.detectors import TaggerConfig

pytestmark = pytest.mark.skipif(not forked_workers.supported(),
                                reason="workers are forked on Linux only")


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--input", "a", "--direct_running_mode=multi_processing"], True),
    (["run", "--direct_running_mode", "multi_processing",
      "--runner=DirectRunner"], True),
    (["run", "--input", "a"], False),
    (["run", "--direct_running_mode=in_memory"], False),
    (["run", "--direct_running_mode=multi_processing", "--runner=FlinkRunner"],
     False),
    (["tables", "--direct_running_mode=multi_processing"], False),
])
def test_wanted_reads_the_runner_off_the_command_line(argv, expected):
    assert forked_workers.wanted(argv) is expected


def _ran(directory) -> dict[int, tuple[int, int]]:
    return {int(name.split(".")[0]): tuple(
        int(x) for x in (directory / name).read_text().split())
        for name in os.listdir(directory)}


def _run_beam(zygote: forked_workers.Zygote, directory, workers: int = 2,
              busy_seconds: float = 0.0) -> None:
    def where(element: int, directory: str) -> int:
        # Which process ran ``element``, under which parent. (A nested
        # function travels by value: workers cannot import this module.)
        import os
        import time

        started = time.process_time()
        while time.process_time() - started < busy_seconds:
            pass
        with open(os.path.join(directory, f"{element}.txt"), "w") as fh:
            fh.write(f"{os.getppid()} {os.getpid()}")
        return element

    options = PipelineOptions(["--direct_running_mode=multi_processing",
                               f"--direct_num_workers={workers}"])
    with beam.Pipeline(runner=forked_workers.runner(zygote, options),
                       options=options) as pipeline:
        _ = (pipeline | beam.Create(list(range(20)))
             | beam.Reshuffle() | beam.Map(where, str(directory)))


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_beams_workers_are_the_zygote_and_its_children(tmp_path, workers):
    """A real Beam pipeline: the last worker is the zygote, the others its forks."""
    zygote = forked_workers.Zygote()
    try:
        zygote.preload(TaggerConfig(detectors=("rules",)), workers)
        _run_beam(zygote, tmp_path, workers)
        ran = _ran(tmp_path)
        assert sorted(ran) == list(range(20))
        processes = {pid for _, pid in ran.values()}
        assert len(processes) == workers
        assert zygote.pid in processes
        assert all(pid == zygote.pid or parent == zygote.pid
                   for parent, pid in ran.values())
        process = psutil.Process(zygote.pid)
    finally:
        zygote.close()
    assert not process.is_running()
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status()
                   != psutil.STATUS_ZOMBIE for pid in processes)
    assert not os.path.exists(zygote.directory)


def test_the_drivers_children_time_counts_every_workers_cpu(tmp_path):
    """The zygote waits for its forks before it ends: ``time`` sees their CPU."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    zygote = forked_workers.Zygote()
    try:
        zygote.preload(TaggerConfig(detectors=("rules",)), 2)
        _run_beam(zygote, tmp_path, 2, busy_seconds=0.15)  # 3 CPU-s in all
    finally:
        zygote.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ran = _ran(tmp_path)
    assert len({pid for _, pid in ran.values()}) == 2
    # About half of it ran in the fork: lost, the sum would be 1.5 s and the
    # zygote's start-up (under a second).
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert cpu >= 3.0


@pytest.mark.parametrize("failure", ["killed", "socket path too long"])
def test_when_the_zygote_cannot_fork_then_beams_own_workers_run_the_job(
        tmp_path, monkeypatch, failure):
    out = tmp_path / "ran"
    out.mkdir()
    if failure == "socket path too long":  # a socket's path has ~100 bytes
        deep = tmp_path / ("d" * 120)
        deep.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(deep))
    zygote = forked_workers.Zygote()
    try:
        zygote.preload(TaggerConfig(detectors=("rules",)), 2)
        if failure == "killed":
            os.kill(zygote.pid, 9)
            psutil.Process(zygote.pid).wait(10)
        _run_beam(zygote, out)
        ran = _ran(out)
    finally:
        zygote.close()
    assert sorted(ran) == list(range(20))
    assert not {zygote.pid} & {p for pair in ran.values() for p in pair}


def test_when_the_driver_dies_then_its_zygote_ends(tmp_path):
    code = ("import os, sys; from deid_pipeline.pipelines import forked_workers; "
            "z = forked_workers.Zygote(); print(z.pid, flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    pid = int(out.split()[0])
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the zygote outlived its driver")
