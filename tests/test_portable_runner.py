"""The job on Beam's portable runner: a local job service plus an SDK worker pool.

That is the topology of a Flink deployment (job server + SDK harness reached
over gRPC, ``--environment_type=EXTERNAL``), so a pass proves the pipeline is
portable: its DoFns pickle, nothing depends on driver-local state, metrics
come back through the job API (run.json's counts), and the outputs are the
DirectRunner's byte for byte (the writer sorts and shards deterministically).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from deid_pipeline.pipelines.deidentify import run
from deid_pipeline.synthetic import generate_messages, generate_notes
from deid_pipeline.tagger.detectors import DEFAULT_DETECTORS

pytestmark = pytest.mark.portable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("localhost", port)) == 0


def _start(args, log_path):
    log = open(log_path, "wb")  # closed in _stop
    # The pool starts SDK workers as plain ``python``: make that this interpreter.
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    # A session of its own: cleanup signals exactly this service and its children.
    proc = subprocess.Popen(
        [sys.executable, "-m", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    proc.log = log
    return proc


def _stop(proc) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
    proc.log.close()


def _wait_until(ready, proc, log_path, what):
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as fh:
                pytest.fail(f"{what} exited {proc.returncode}:\n{fh.read()[-2000:]}")
        if ready():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not start within {START_TIMEOUT_S:.0f} s")


@pytest.fixture(scope="module")
def portable_endpoints(tmp_path_factory):
    """(job endpoint, worker pool endpoint) of services running on loopback."""
    d = tmp_path_factory.mktemp("portable")
    port_file = d / "job.port"
    job_log, pool_log = d / "job.log", d / "pool.log"
    job = _start(
        [
            "apache_beam.runners.portability.local_job_service_main",
            "--port=0",
            f"--port_file={port_file}",
        ],
        job_log,
    )
    procs = [job]
    try:
        _wait_until(port_file.exists, job, job_log, "job service")
        job_port = int(port_file.read_text())
        pool_port = _free_port()
        pool = _start(
            [
                "apache_beam.runners.worker.worker_pool_main",
                f"--service_port={pool_port}",
            ],
            pool_log,
        )
        procs.append(pool)
        _wait_until(lambda: _accepts(pool_port), pool, pool_log, "worker pool")
        yield f"localhost:{job_port}", f"localhost:{pool_port}"
    finally:
        for proc in reversed(procs):
            _stop(proc)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The bundled samples plus generated notes and multi-message HL7 files."""
    d = tmp_path_factory.mktemp("inputs")
    notes = generate_notes(6, 61, 150, 400)
    for k in range(2):
        with open(d / f"notes-{k}.jsonl", "w", encoding="utf-8") as fh:
            for note in notes[k::2]:
                fh.write(json.dumps({"id": note.doc_id, "text": note.text}) + "\n")
    messages = generate_messages(6, 62, ("oru",))
    for k in range(2):
        (d / f"reports-{k}.hl7").write_text(
            "\n".join(m.er7 for m in messages[k::2]) + "\n", encoding="utf-8"
        )
    key = d / "deid.key"
    key.write_bytes(b"portable-runner-test-key-0123456789")
    return [
        os.path.join(ROOT, "samples", "notes", "*.txt"),
        os.path.join(ROOT, "samples", "notes.jsonl"),
        os.path.join(ROOT, "samples", "hl7", "*.hl7"),
        str(d / "*.jsonl"),
        str(d / "*.hl7"),
    ], str(key)


def _argv(patterns, key, out):
    argv = []
    for pattern in patterns:
        argv += ["--input", pattern]
    return argv + [
        "--output",
        str(out),
        "--hl7-output",
        str(out / "hl7"),
        "--key-file",
        key,
        "--detectors",
        ",".join(DEFAULT_DETECTORS),
        "--output-shards",
        "3",
    ]


def _files(directory):
    return {
        os.path.relpath(os.path.join(root, name), directory)
        for root, _, names in os.walk(directory)
        for name in names
        if name != "run.json"
    }


def test_when_run_on_portable_runner_then_outputs_equal_direct_runner_bytes(
    portable_endpoints, inputs, tmp_path
):
    job_endpoint, pool_endpoint = portable_endpoints
    patterns, key = inputs
    direct = run(_argv(patterns, key, tmp_path / "direct"))
    portable = run(
        _argv(patterns, key, tmp_path / "portable")
        + [
            "--runner=PortableRunner",
            f"--job_endpoint={job_endpoint}",
            "--environment_type=EXTERNAL",
            f"--environment_config={pool_endpoint}",
        ]
    )

    # Metrics travel back through the job API: the accounting is checked.
    assert portable["records_read"] == direct["records_read"] > 30
    assert portable["accounted"] is True
    for name in (
        "records_written",
        "records_quarantined",
        "files_read",
        "persons",
        "quarantined_by_stage",
        "spans_by_label",
        "hl7_output",
    ):
        if name == "hl7_output":
            direct[name].pop("directory"), portable[name].pop("directory")
        assert portable[name] == direct[name], name

    files = _files(tmp_path / "direct")
    assert files == _files(tmp_path / "portable")
    assert {f.split(os.sep)[0] for f in files} >= {
        "documents",
        "identifiers",
        "persons",
        "quarantine",
        "hl7",
    }
    assert any(f.endswith("part-00002-of-00003.parquet") for f in files)
    for name in sorted(files):
        left = (tmp_path / "direct" / name).read_bytes()
        right = (tmp_path / "portable" / name).read_bytes()
        assert left == right, f"{name} differs between DirectRunner and PortableRunner"
