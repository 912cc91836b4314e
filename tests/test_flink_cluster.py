"""The job on a real Flink session cluster: one JobManager, two TaskManagers.

The cluster is the one ``deid-flink-cluster`` starts (Flink from PyPI's
wheels, JVMs on loopback, Beam's SDK worker pool on this interpreter), once
for the module. The job tests also need Beam's Flink job server jar, built
with Maven from ``deploy/flink/job-server/pom.xml`` into the cache once
(``deid-flink-cluster jar``); they are skipped only where there is no mvn.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions
from loopback import free_port, write_generated_inputs

from deid_pipeline.pipelines.flink_cluster import (
    ClusterConfig,
    ClusterError,
    add_taskmanager,
    alive,
    default_cache_dir,
    fetch_job_server_jar,
    rest,
    runner_args,
    start,
    status,
    stop,
    taskmanager_pids,
)
from deid_pipeline.pipelines.flink_job import FlinkJobStalledError
from deid_pipeline.pipelines.job import run
from deid_pipeline.pipelines.job_options import RunError, check_beam_args
from deid_pipeline.run_options import build_parser
from deid_pipeline.synthetic import generate_notes

pytestmark = pytest.mark.flink

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "corpora", "physionet-deid", "id.text")
TABLES = ("documents", "identifiers", "persons")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A running cluster's config; stopped (every JVM gone) after the module."""
    if shutil.which("java") is None:
        pytest.skip("no java on PATH: Flink's JobManager and TaskManagers are JVMs")
    cfg = ClusterConfig(
        state_dir=str(tmp_path_factory.mktemp("flink")),
        cache_dir=default_cache_dir(),
        rest_port=free_port(),
        rpc_port=free_port(),
        worker_pool_port=free_port(),
        taskmanagers=2,
        slots=1,
    )
    try:
        start(cfg)
        yield cfg
    finally:
        stop(cfg)


@pytest.fixture(scope="module")
def flink_args(cluster):
    """``run`` options that submit to ``cluster`` (the job server jar built once)."""
    if shutil.which("mvn") is None:
        pytest.skip("no mvn on PATH: the job server jar is built with Maven")
    return runner_args(cluster, fetch_job_server_jar(cluster.cache_dir))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Text, JSONL, PhysioNet and HL7 inputs (small), and a key file."""
    d = tmp_path_factory.mktemp("flink-inputs")
    write_generated_inputs(d, 71, notes=8)
    patterns = [
        os.path.join(ROOT, "samples", "notes", "*.txt"),
        str(d / "*.jsonl"),
        str(d / "*.hl7"),
    ]
    if os.path.exists(CORPUS):
        with open(CORPUS, encoding="utf-8") as fh:
            records = fh.read().split("||||END_OF_RECORD\n")[:12]
        (d / "id.text").write_text(
            "".join(r + "||||END_OF_RECORD\n" for r in records), encoding="utf-8"
        )
        patterns.append(str(d / "id.text"))
    key = d / "deid.key"
    key.write_bytes(b"flink-cluster-test-key-0123456789abcdef")
    return patterns, str(key)


def _argv(patterns, key, out, *extra):
    argv = [a for p in patterns for a in ("--input", p)]
    return [*argv, "--output", str(out), "--hl7-output", str(out / "hl7"),
            "--key-file", key, "--output-shards", "2", *extra]


def _rows(directory, drop=()):
    """A table's rows, order-free (sorted by their JSON), less the ``drop`` columns."""
    rows = pq.read_table(str(directory)).to_pylist()
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True,
                   default=str)
        for r in rows
    )


def _hl7_files(directory):
    return {name: (directory / name).read_bytes() for name in os.listdir(directory)}


def _workers_with_records(cfg, job_id) -> set[str]:
    """TaskManager ids on which some vertex of ``job_id`` read records."""
    found = set()
    for vertex in rest(cfg, f"/jobs/{job_id}")["vertices"]:
        per_tm = rest(cfg, f"/jobs/{job_id}/vertices/{vertex['id']}/taskmanagers")
        for tm in per_tm["taskmanagers"]:
            if tm["metrics"].get("read-records", 0) > 0:
                found.add(tm["taskmanager-id"])
    return found


def _finished_jobs(cfg) -> list[dict]:
    jobs = rest(cfg, "/jobs/overview")["jobs"]
    return sorted(
        (j for j in jobs if j["state"] == "FINISHED"), key=lambda j: j["start-time"]
    )


def test_when_cluster_started_then_two_taskmanagers_one_slot_each_and_pool(cluster):
    managers = rest(cluster, "/taskmanagers")["taskmanagers"]
    assert [m["slotsNumber"] for m in managers] == [1, 1]
    state = status(cluster)
    assert state["overview"]["taskmanagers"] == 2
    assert state["overview"]["slots-total"] == 2
    assert len(state["processes"]["taskexecutor"]) == 2
    assert len(state["processes"]["standalonesession"]) == 1
    assert state["worker_pool"] == f"localhost:{cluster.worker_pool_port}"
    with open(os.path.join(cluster.state_dir, "conf", "config.yaml")) as fh:
        conf = yaml.safe_load(fh)
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in conf["env"]["java"][
        "opts"]["all"]
    assert conf["rest"]["port"] == cluster.rest_port


def test_when_jar_staged_in_beams_cache_then_used_without_maven(
    tmp_path, monkeypatch
):
    from apache_beam.utils.subprocess_server import JavaJarServer

    monkeypatch.setattr(JavaJarServer, "JAR_CACHE", str(tmp_path / "beam"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-mvn"))  # Maven unreachable
    cache = str(tmp_path / "cache")
    with pytest.raises(ClusterError, match="mvn not found"):
        fetch_job_server_jar(cache)
    staged = tmp_path / "beam" / "beam-runners-flink-1.19-job-server-2.62.0.jar"
    staged.parent.mkdir()
    staged.write_bytes(b"PK\x03\x04")
    assert fetch_job_server_jar(cache) == str(staged)


def test_when_two_taskmanagers_stop_worker_of_same_id_then_only_theirs_stopped(
    monkeypatch,
):
    """Both TaskManagers ask the pool for worker ``1-1``; one releases it.

    Beam's own pool killed the other TaskManager's worker (the job failed:
    ``CANCELLED: client cancelled``); this one stops the worker whose
    TaskManager closed its control endpoint, and only that one.
    """
    import socket

    from apache_beam.portability.api import beam_fn_api_pb2, endpoints_pb2

    import deid_pipeline.pipelines.flink_worker_pool as wp

    monkeypatch.setattr(wp, "sdk_worker_command", lambda *a: ["sleep", "120"])
    pool = wp._worker_pool_class()(use_process=True)
    listeners = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        listeners.append(s)
    ends = [f"localhost:{s.getsockname()[1]}" for s in listeners]
    for end in ends:
        response = pool.StartWorker(beam_fn_api_pb2.StartWorkerRequest(
            worker_id="1-1",
            control_endpoint=endpoints_pb2.ApiServiceDescriptor(url=end)), None)
        assert not response.error
    procs = {w[1]: w[0] for w in pool._workers["1-1"]}
    try:
        listeners[0].close()  # the first TaskManager shut its endpoint
        pool.StopWorker(beam_fn_api_pb2.StopWorkerRequest(worker_id="1-1"), None)
        assert procs[ends[0]].poll() is not None
        assert procs[ends[1]].poll() is None
        assert [w[1] for w in pool._workers["1-1"]] == [ends[1]]
        listeners[1].close()
        pool.StopWorker(beam_fn_api_pb2.StopWorkerRequest(worker_id="1-1"), None)
        assert procs[ends[1]].poll() is not None
        assert "1-1" not in pool._workers
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_when_taskmanager_pinned_then_its_sdk_worker_gets_its_cpus(monkeypatch):
    """A TaskManager confined to one CPU gets its Python worker confined too.

    The listener stands in for a TaskManager started under ``taskset``
    (``--pin-taskmanagers``); the worker is what the pool starts for it.
    """
    from apache_beam.portability.api import beam_fn_api_pb2, endpoints_pb2

    import deid_pipeline.pipelines.flink_worker_pool as wp

    cpu = sorted(os.sched_getaffinity(0))[-1]
    listener = subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-c",
         "import socket, sys, time\ns = socket.socket(); s.bind(('127.0.0.1', 0))\n"
         "s.listen(); print(s.getsockname()[1], flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )
    monkeypatch.setattr(wp, "sdk_worker_command", lambda *a: ["sleep", "120"])
    pool = wp._worker_pool_class()(use_process=True)
    try:
        end = f"localhost:{listener.stdout.readline().strip()}"
        response = pool.StartWorker(beam_fn_api_pb2.StartWorkerRequest(
            worker_id="1-1",
            control_endpoint=endpoints_pb2.ApiServiceDescriptor(url=end)), None)
        assert not response.error
        (worker, _), = pool._workers["1-1"]
        assert os.sched_getaffinity(worker.pid) == {cpu}
        # No local listener (a TaskManager elsewhere): the worker runs anywhere.
        assert wp._listener_affinity(f"localhost:{free_port()}") is None
    finally:
        listener.kill()
        listener.wait()
        for procs in pool._workers.values():
            for proc, _ in procs:
                proc.kill()
                proc.wait()


def test_when_run_help_and_docs_then_flink_example_is_what_start_prints(tmp_path):
    from deid_pipeline.pipelines.flink_cluster import _CLUSTER_LIB_JAR
    from deid_pipeline.run_options import EPILOG

    cfg = ClusterConfig(str(tmp_path), str(tmp_path))
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / _CLUSTER_LIB_JAR).write_bytes(b"")  # Beam in lib/
    with open(os.path.join(ROOT, "docs", "flink.md"), encoding="utf-8") as fh:
        doc = fh.read()
    for arg in runner_args(cfg, "/cache/job-server.jar"):
        name = arg.split("=")[0]
        assert name in EPILOG and name in doc, name
    assert "--environment_cache_millis=5000" in EPILOG
    assert "LOOPBACK" not in EPILOG


def test_when_runner_args_then_beam_takes_each_for_a_flink_1_19_job(tmp_path):
    cfg = ClusterConfig(str(tmp_path), str(tmp_path), rest_port=18081,
                        worker_pool_port=15000, taskmanagers=2, slots=1)
    args = runner_args(cfg, "/cache/job-server.jar")
    check_beam_args(args, build_parser())  # an unknown option raises RunError
    options = PipelineOptions(args).get_all_options()
    assert options["flink_version"] == "1.19"
    assert options["flink_master"] == "localhost:18081"
    assert options["environment_config"] == "localhost:15000"
    assert options["parallelism"] == 2


def test_when_run_on_flink_then_tables_and_hl7_equal_direct_runner(
    cluster, flink_args, inputs, tmp_path
):
    patterns, key = inputs
    direct = run(_argv(patterns, key, tmp_path / "direct"))
    before = {j["jid"] for j in _finished_jobs(cluster)}
    flink = run(_argv(patterns, key, tmp_path / "flink") + flink_args)

    assert flink["accounted"] is True
    # 21 records from the samples and generated files, 12 more with the corpus.
    assert flink["records_read"] == direct["records_read"] >= (
        33 if os.path.exists(CORPUS) else 21)
    for name in ("records_written", "records_quarantined", "files_read", "persons",
                 "quarantined_by_stage", "spans_by_label"):
        assert flink[name] == direct[name], name
    for table in TABLES:
        assert _rows(tmp_path / "flink" / table) == _rows(tmp_path / "direct" / table)
    hl7 = _hl7_files(tmp_path / "flink" / "hl7")
    assert hl7 and hl7 == _hl7_files(tmp_path / "direct" / "hl7")

    (job,) = [j for j in _finished_jobs(cluster) if j["jid"] not in before]
    managers = {m["id"] for m in rest(cluster, "/taskmanagers")["taskmanagers"]}
    assert _workers_with_records(cluster, job["jid"]) == managers


def test_when_taskmanager_killed_mid_job_then_previous_extract_left_as_it_was(
    cluster, flink_args, tmp_path
):
    d = tmp_path / "in"
    d.mkdir()
    notes = generate_notes(160, 73, 300, 900)
    for k in range(4):
        with open(d / f"notes-{k}.jsonl", "w", encoding="utf-8") as fh:
            for note in notes[k::4]:
                fh.write(json.dumps({"id": note.doc_id, "text": note.text}) + "\n")
    key = d / "deid.key"
    key.write_bytes(b"flink-cluster-kill-key-0123456789abcdef")
    argv = ["--input", str(d / "*.jsonl"), "--key-file", str(key), "--chunk-size",
            "16", "--output-shards", "2"]
    out = tmp_path / "out"
    # Last night's extract (of the first half), published on the DirectRunner.
    run(["--input", str(d / "notes-[01].jsonl"), "--key-file", str(key),
         "--output", str(out), "--output-shards", "2"])
    before = _tree(out)
    job = subprocess.Popen(
        [sys.executable, "-m", "deid_pipeline.pipelines.entry", "run", *argv,
         "--output", str(out), *flink_args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # with Beam's job server JVM, ended as one
    )
    try:
        victim = _kill_when_working(cluster, job)
        # A replacement, so that a restart by Flink could finish the job.
        add_taskmanager(cluster)
        job.wait(timeout=600)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert not alive(victim)
    if job.returncode != 0:
        # The job failed: the previous extract as it was, no staging (spill:
        # PHI) left beside it.
        assert _tree(out) == before
        return
    # Flink restarted it: complete, and what a DirectRunner run publishes.
    summary = json.loads((out / "run.json").read_text())
    assert summary["accounted"] is True and summary["records_read"] == len(notes)
    run([*argv, "--output", str(tmp_path / "direct")])
    for table in TABLES:
        assert _rows(out / table) == _rows(tmp_path / "direct" / table), table


def _tree(directory) -> dict[str, bytes]:
    """Every file under ``directory``, by relative path, with its bytes."""
    found = {}
    for root, _dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, directory)] = fh.read()
    return found


def test_when_workers_cannot_start_then_run_fails_clearly_in_bounded_time(
    cluster, flink_args, tmp_path, monkeypatch
):
    """Beam's own pool starting workers with a ``python`` that has no Beam.

    That hung the job at RUNNING for good; now it is cancelled after
    ``DEID_FLINK_STALL_SECONDS`` without progress and nothing is published.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                    str(tmp_path / "bare")], check=True)
    port = free_port()
    env = dict(os.environ, PATH=f"{tmp_path / 'bare' / 'bin'}:/usr/bin:/bin")
    pool = subprocess.Popen(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
         f"--service_port={port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    out = tmp_path / "out"
    monkeypatch.setenv("DEID_FLINK_STALL_SECONDS", "20")
    args = [f"--environment_config=localhost:{port}"
            if a.startswith("--environment_config=") else a for a in flink_args]
    started = time.monotonic()
    try:
        with pytest.raises(FlinkJobStalledError, match="no progress for 20 s"):
            run(["--input", os.path.join(ROOT, "samples", "notes.jsonl"),
                 "--output", str(out), "--ephemeral-key", *args])
    finally:
        os.killpg(pool.pid, signal.SIGKILL)
        pool.wait()
    assert time.monotonic() - started < 240
    assert not out.exists() or os.listdir(out) == []
    cancelled = [j for j in rest(cluster, "/jobs/overview")["jobs"]
                 if j["state"] == "CANCELED"]
    assert cancelled


def _kill_when_working(cfg, job) -> int:
    """SIGKILL the last TaskManager once the job runs tasks on both; its pid."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if job.poll() is not None:
            pytest.fail(f"job ended (exit {job.returncode}) before a TaskManager died")
        running = [j for j in rest(cfg, "/jobs/overview")["jobs"]
                   if j["state"] == "RUNNING"]
        if running and running[0]["tasks"].get("running", 0) >= 2:
            victim = taskmanager_pids(cfg)[-1]
            os.kill(victim, signal.SIGKILL)
            return victim
        time.sleep(0.5)
    pytest.fail("the job never ran tasks on both TaskManagers")


def test_when_incremental_on_flink_then_night_two_reads_only_new_file(
    cluster, flink_args, tmp_path
):
    d = tmp_path / "archive"
    d.mkdir()
    notes = generate_notes(9, 74, 150, 400)
    key = tmp_path / "deid.key"
    key.write_bytes(b"flink-cluster-night-key-0123456789abcdef")

    def night(files, out="out", runner=tuple(flink_args)):
        for k in files:
            with open(d / f"day-{k}.jsonl", "w", encoding="utf-8") as fh:
                for note in notes[k::3]:
                    fh.write(json.dumps({"id": note.doc_id, "text": note.text}) + "\n")
        return run(["--input", str(d / "*.jsonl"), "--output", str(tmp_path / out),
                    "--key-file", str(key), "--incremental", *runner])

    first = night([0, 1])
    second = night([2])
    # The same two nights on the DirectRunner: the same partitions' rows.
    (d / "day-2.jsonl").unlink()
    night([], "direct", ())
    night([2], "direct", ())
    for table in TABLES:  # less the run each row came from (a timestamp)
        assert _rows(tmp_path / "out" / table, {"run"}) == _rows(
            tmp_path / "direct" / table, {"run"}), table
    assert first["files_read"] == 2 and first["accounted"]
    assert second["files_read"] == 1 and second["accounted"]
    plan = second["incremental"]
    assert (plan["new"], plan["unchanged"], plan["changed"]) == (1, 2, 0)
    assert second["records_written"] == len(notes[2::3])


@pytest.mark.parametrize(
    "staged", ["--setup_file=./setup.py", "--requirements_file=req.txt"]
)
def test_when_packages_staged_for_external_workers_then_run_refused(
    staged, tmp_path
):
    out = tmp_path / "out"
    argv = ["--input", os.path.join(ROOT, "samples", "notes.jsonl"), "--output",
            str(out), "--ephemeral-key", "--runner=FlinkRunner",
            "--flink_master=localhost:8081", "--environment_type=EXTERNAL",
            "--environment_config=localhost:50000", staged]
    with pytest.raises(RunError, match="not installed by EXTERNAL workers"):
        run(argv)
    assert not out.exists()


def test_when_stopped_then_no_process_of_the_cluster_left(cluster):
    started = [p for pids in status(cluster)["processes"].values() for p in pids]
    assert len(started) >= 4  # JobManager, two TaskManagers, worker pool
    stop(cluster)
    assert not [p for p in started if alive(p)]
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if cluster.state_dir.encode() in fh.read():
                    left.append(pid)
        except OSError:
            continue
    assert left == []
