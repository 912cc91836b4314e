"""Services the tests start on loopback: Beam's job service and worker pool, S3.

Each runs as a child process in a session of its own, so that stopping it
signals exactly that service and its children, and every log goes to a file
shown when a service fails to start.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from deid_pipeline.synthetic import generate_messages, generate_notes

START_TIMEOUT_S = 60.0


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port: int) -> bool:
    """Whether something listens on ``port`` of loopback."""
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start(args, log_path):
    """``python -m *args`` in its own session, output to ``log_path``."""
    log = open(log_path, "wb")  # closed in stop()
    # The pool starts SDK workers as plain ``python``: make that this interpreter.
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    proc.log = log
    return proc


def stop(proc) -> None:
    """SIGTERM the service's session, SIGKILL it if it lingers."""
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


def wait_until(ready, proc, log_path, what) -> None:
    """Wait for ``ready()``; fail with the service's log if it exits or hangs."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as fh:
                pytest.fail(f"{what} exited {proc.returncode}:\n{fh.read()[-2000:]}")
        if ready():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} did not start within {START_TIMEOUT_S:.0f} s")


@contextlib.contextmanager
def portable_services(directory):
    """(job endpoint, worker pool endpoint): Beam's local job service + SDK pool.

    That is the topology of a Flink deployment (job server + SDK harness
    reached over gRPC, ``--environment_type=EXTERNAL``).
    """
    port_file = directory / "job.port"
    job_log, pool_log = directory / "job.log", directory / "pool.log"
    job = start(
        [
            "apache_beam.runners.portability.local_job_service_main",
            "--port=0",
            f"--port_file={port_file}",
        ],
        job_log,
    )
    procs = [job]
    try:
        wait_until(port_file.exists, job, job_log, "job service")
        job_port = int(port_file.read_text())
        pool_port = free_port()
        pool = start(
            [
                "apache_beam.runners.worker.worker_pool_main",
                f"--service_port={pool_port}",
            ],
            pool_log,
        )
        procs.append(pool)
        wait_until(lambda: accepts(pool_port), pool, pool_log, "worker pool")
        yield f"localhost:{job_port}", f"localhost:{pool_port}"
    finally:
        for proc in reversed(procs):
            stop(proc)


def portable_args(endpoints) -> list[str]:
    """``run`` options that submit the job to ``portable_services``."""
    job_endpoint, pool_endpoint = endpoints
    return [
        "--runner=PortableRunner",
        f"--job_endpoint={job_endpoint}",
        "--environment_type=EXTERNAL",
        f"--environment_config={pool_endpoint}",
    ]


@contextlib.contextmanager
def s3_server(directory):
    """The endpoint URL of moto's S3 API server on 127.0.0.1 (in memory)."""
    port = free_port()
    log = directory / "moto.log"
    proc = start(["moto.server", "-H", "127.0.0.1", "-p", str(port)], log)
    try:
        wait_until(lambda: accepts(port), proc, log, "S3 server (moto)")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def write_generated_inputs(directory, seed: int, notes: int = 6, messages: int = 6):
    """Two JSONL files of generated notes and two multi-message HL7 files.

    ``notes-0.jsonl``, ``notes-1.jsonl``, ``reports-0.hl7``, ``reports-1.hl7``
    under ``directory``; ``seed`` for the notes, ``seed + 1`` for the messages.
    """
    generated = generate_notes(notes, seed, 150, 400)
    for k in range(2):
        with open(directory / f"notes-{k}.jsonl", "w", encoding="utf-8") as fh:
            for note in generated[k::2]:
                fh.write(json.dumps({"id": note.doc_id, "text": note.text}) + "\n")
    reports = generate_messages(messages, seed + 1, ("oru",))
    for k in range(2):
        (directory / f"reports-{k}.hl7").write_text(
            "\n".join(m.er7 for m in reports[k::2]) + "\n", encoding="utf-8"
        )
