"""SDK workers forked from a fork of the driver (pipelines/forked_workers.py).

A zygote is forked only from a process where no other thread runs: each case
runs its driver in a fresh interpreter, as ``deid-pipeline run`` does (a
pytest worker has threads of its own, and one pipeline run leaves gRPC's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import psutil
import pyarrow.parquet as pq
import pytest

from deid_pipeline.pipelines import forked_workers
from deid_pipeline.tagger.detectors import TaggerConfig

pytestmark = pytest.mark.skipif(not forked_workers.supported(),
                                reason="workers are forked on Linux only")

SAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "samples")

# A driver: forks its zygote, runs a real Beam pipeline on it, and prints
# which process ran each element (and under which parent) as JSON.
DRIVER = textwrap.dedent("""
    import json, os, resource, signal, sys, time

    from deid_pipeline.runtime.process import one_blas_thread

    one_blas_thread()  # as the console script does: numpy starts no thread

    import apache_beam as beam
    import psutil
    from apache_beam.options.pipeline_options import PipelineOptions

    from deid_pipeline.pipelines import forked_workers
    from deid_pipeline.tagger.detectors import TaggerConfig

    spec = json.loads(sys.argv[1])
    workers = spec["workers"]


    def where(element, directory, busy_seconds):
        # A nested function travels by value: workers cannot import this file.
        import os
        import time

        started = time.process_time()
        while time.process_time() - started < busy_seconds:
            pass
        with open(os.path.join(directory, f"{element}.txt"), "w") as fh:
            fh.write(f"{os.getppid()} {os.getpid()}")
        return element


    report = {"forkable": forked_workers.forkable()}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    zygote = forked_workers.start(TaggerConfig(detectors=("rules",)), workers)
    report["zygote"] = zygote.pid
    if spec.get("signals"):
        os.kill(zygote.pid, signal.SIGINT)  # the driver's Ctrl-C, not its own
        time.sleep(0.5)
        report["after_sigint"] = psutil.Process(zygote.pid).status()
        os.kill(zygote.pid, signal.SIGTERM)
        psutil.Process(zygote.pid).wait(10)
    if spec.get("kill"):
        os.kill(zygote.pid, 9)
        psutil.Process(zygote.pid).wait(10)
    options = PipelineOptions(["--direct_running_mode=multi_processing",
                               f"--direct_num_workers={workers}"])
    try:
        with beam.Pipeline(runner=forked_workers.runner(zygote, options),
                           options=options) as pipeline:
            _ = (pipeline | beam.Create(list(range(20))) | beam.Reshuffle()
                 | beam.Map(where, spec["out"], spec.get("busy", 0.0)))
        report["alive_after_run"] = psutil.Process(zygote.pid).is_running() and (
            psutil.Process(zygote.pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        report["alive_after_run"] = False
    finally:
        forked_workers.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report["children_cpu"] = (after.ru_utime + after.ru_stime
                              - before.ru_utime - before.ru_stime)
    report["directory_left"] = os.path.exists(zygote.directory)
    report["forkable_after_run"] = forked_workers.forkable()
    print(json.dumps(report))
""")


def _drive(tmp_path, **spec) -> tuple[dict, dict[int, tuple[int, int]]]:
    """Run DRIVER on ``spec``; its report and who ran each element."""
    out = tmp_path / "ran"
    out.mkdir()
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    done = subprocess.run(
        [sys.executable, str(script), json.dumps({**spec, "out": str(out)})],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    ran = {int(name.split(".")[0]): tuple(int(x) for x in (out / name).read_text()
                                          .split())
           for name in os.listdir(out)}
    return report, ran


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_beams_workers_are_the_zygote_and_its_children(tmp_path, workers):
    """A real Beam pipeline: the last worker is the zygote, the others its forks."""
    report, ran = _drive(tmp_path, workers=workers)
    assert report["forkable"]
    zygote = report["zygote"]
    assert sorted(ran) == list(range(20))
    processes = {pid for _, pid in ran.values()}
    assert len(processes) == workers
    assert zygote in processes
    assert all(pid == zygote or parent == zygote for parent, pid in ran.values())
    assert not report["directory_left"]
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status()
                   != psutil.STATUS_ZOMBIE for pid in processes)
    # A pipeline leaves gRPC's threads behind: no second fork from here.
    assert not report["forkable_after_run"]


def test_the_drivers_children_time_counts_every_workers_cpu(tmp_path):
    """The zygote waits for its forks before it ends: ``time`` sees their CPU."""
    report, ran = _drive(tmp_path, workers=2, busy=0.15)  # 3 CPU-s in all
    assert len({pid for _, pid in ran.values()}) == 2
    # About half of it ran in the fork: lost, the sum would be 1.5 s and the
    # zygote's start-up (under a second).
    assert report["children_cpu"] >= 3.0


def test_when_the_zygote_is_gone_then_beams_own_workers_run_the_job(tmp_path):
    report, ran = _drive(tmp_path, workers=2, kill=True)
    assert sorted(ran) == list(range(20))
    assert not {report["zygote"]} & {p for pair in ran.values() for p in pair}


def test_the_zygote_keeps_none_of_the_drivers_signal_handlers(tmp_path):
    """Ctrl-C is the driver's to handle; SIGTERM ends the zygote as any process."""
    report, ran = _drive(tmp_path, workers=1, signals=True)
    assert report["after_sigint"] != psutil.STATUS_ZOMBIE
    assert not report["alive_after_run"]
    assert sorted(ran) == list(range(20))  # Beam's own worker ran them


def test_when_no_socket_can_be_bound_then_nothing_is_forked(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 120)  # a socket's path has ~100 bytes
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    children = {p.pid for p in psutil.Process().children()}
    with pytest.raises(OSError):
        forked_workers.Zygote(TaggerConfig(detectors=("rules",)), 2)
    assert {p.pid for p in psutil.Process().children()} == children
    assert os.listdir(deep) == []  # its directory removed


def test_a_process_with_another_thread_is_not_forked():
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked_workers.forkable()
        assert forked_workers.start(TaggerConfig(detectors=("rules",)), 2) is None
    finally:
        stop.set()
        thread.join()


def test_when_the_driver_dies_then_its_zygote_ends():
    code = ("import os; from deid_pipeline.pipelines import forked_workers; "
            "from deid_pipeline.tagger.detectors import TaggerConfig; "
            "z = forked_workers.Zygote(TaggerConfig(detectors=('rules',)), 1); "
            "print(z.pid, flush=True); os._exit(0)")
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          text=True) as driver:
        pid = int(driver.stdout.readline())
        driver.wait(60)
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


def test_run_on_two_forked_workers_writes_what_one_process_writes(tmp_path):
    """``deid-pipeline run`` as a user starts it: its workers forked, same tables."""
    key = tmp_path / "key"
    key.write_bytes(os.urandom(32))
    inputs = ["--input", os.path.join(SAMPLES, "notes.jsonl"),
              "--input", os.path.join(SAMPLES, "hl7", "*.hl7")]
    # The console script's main, with the zygote's start recorded.
    code = textwrap.dedent("""
        import sys
        from deid_pipeline.pipelines import entry, forked_workers

        started = forked_workers.start
        def start(*args):
            zygote = started(*args)
            print("zygote", None if zygote is None else zygote.pid, file=sys.stderr)
            return zygote
        forked_workers.start = start
        sys.exit(entry.main(sys.argv[1:]))
    """)
    runs = {}
    for name, extra in (("forked", ["--direct_num_workers", "2",
                                    "--direct_running_mode", "multi_processing"]),
                        ("one", [])):
        out = tmp_path / name
        done = subprocess.run(
            [sys.executable, "-c", code, "run", *inputs, "--output", str(out),
             "--key-file", str(key), *extra],
            capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[name] = (out, done.stderr)
    assert "zygote None" not in runs["forked"][1]
    assert "zygote " in runs["forked"][1]
    assert "zygote" not in runs["one"][1]  # one process: nothing forked
    for table in ("documents", "identifiers", "quarantine"):
        tables = [pq.read_table(runs[name][0] / table).to_pylist()
                  for name in ("forked", "one")]
        assert tables[0] == tables[1]
        assert tables[0] or table == "quarantine"


def test_a_client_interrupted_while_its_worker_runs_ends_without_a_traceback(
        tmp_path):
    """Ctrl-C reaches every process of the run: each client ends quietly."""
    import signal
    import socket

    path = str(tmp_path / "zygote.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    client = subprocess.Popen(
        [sys.executable, "-m", "deid_pipeline.pipelines.forked_workers", "worker",
         path], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        connection, _ = listener.accept()
        connection.recv(4)  # its request's length: it waits for its worker now
        connection.sendall(b"F")  # forked, say; the status never comes
        time.sleep(0.3)
        client.send_signal(signal.SIGINT)
        _, err = client.communicate(timeout=30)
    finally:
        listener.close()
    assert client.returncode == 128 + signal.SIGINT
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
