"""SIGINT and SIGTERM end a run with 130 / 143, publish nothing, leave nothing.

Each phase of a run (reading, tagging, writing, publishing) gets the signal
from inside it: the test patches a function the phase calls so that it sends
the signal to this process, as Ctrl-C or a scheduler's SIGTERM would. The
previous extract must stay byte-identical and no staging directory (spilled
input: PHI) may remain. The tagging phase fails the way the compiled decoder
did: a ``SystemError`` whose cause is the interrupt, which a per-record
handler once quarantined, letting the run publish an extract without it.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from deid_pipeline.pipelines import job
from deid_pipeline.runtime import interrupts
from deid_pipeline.store import publish
from deid_pipeline.tagger.tagging import PhiTagger

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = [
    os.path.join(ROOT, "samples", "notes", "*.txt"),
    os.path.join(ROOT, "samples", "hl7", "*.hl7"),
]


def _argv(out: str, key: str) -> list[str]:
    argv = []
    for pattern in SAMPLES:
        argv += ["--input", pattern]
    return argv + ["--output", out, "--hl7-output", os.path.join(out, "hl7"),
                   "--key-file", key, "--as-of-year", "2026"]


def _snapshot(out: str) -> dict[str, str]:
    """Every file under ``out`` (hidden ones too) -> sha256 of its bytes."""
    found = {}
    for folder, _dirs, files in os.walk(out):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, out)] = hashlib.sha256(
                    fh.read()).hexdigest()
    return found


@pytest.fixture
def previous_extract(tmp_path):
    key = tmp_path / "deid.key"
    key.write_text("c2VjcmV0LWtleS1mb3ItaW50ZXJydXB0LXRlc3RzLTAxMjM0NTY3\n")
    out = str(tmp_path / "out")
    assert job.main(_argv(out, str(key))) == 0
    return out, str(key), _snapshot(out)


def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    # The handler runs in the main thread; give it the moment it needs if
    # the phase runs in another one.
    time.sleep(0.2)


def _patch_phase(monkeypatch, phase: str, signum: int) -> None:
    if phase == "read":
        from deid_pipeline.transforms import read

        real = read.decompress

        def decompress(*args, **kwargs):
            _signal_self(signum)
            return real(*args, **kwargs)

        monkeypatch.setattr(read, "decompress", decompress)
    elif phase == "tag":
        def tag(self, doc):
            try:
                _signal_self(signum)
            except BaseException as exc:
                raise SystemError("returned a result with an exception set") from exc
            raise SystemError("returned a result with an exception set")

        monkeypatch.setattr(PhiTagger, "tag", tag)
    elif phase == "write":
        from deid_pipeline.transforms import chunks

        real = chunks.write_table_file

        def write_table_file(*args, **kwargs):
            _signal_self(signum)
            return real(*args, **kwargs)

        monkeypatch.setattr(chunks, "write_table_file", write_table_file)
    elif phase == "publish":
        real = publish._Undo.move
        calls = []

        def move(self, sources, targets):
            calls.append(1)
            if len(calls) == 4:  # tables half swapped
                _signal_self(signum)
            return real(self, sources, targets)

        monkeypatch.setattr(publish._Undo, "move", move)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("phase", ["read", "tag", "write", "publish"])
def test_when_signalled_in_a_phase_then_exit_128_plus_n_and_previous_extract_kept(
    previous_extract, monkeypatch, capsys, phase, signum
):
    out, key, before = previous_extract
    capsys.readouterr()
    _patch_phase(monkeypatch, phase, signum)
    code = job.main(_argv(out, key))
    err = capsys.readouterr().err
    assert code == 128 + signum
    assert _snapshot(out) == before
    assert not [n for n in os.listdir(out) if n.startswith(".staging-")]
    assert "nothing published" in err
    assert "Traceback" not in err


def test_when_signalled_after_the_commit_then_the_new_extract_is_whole(
    previous_extract, monkeypatch, capsys
):
    out, key, _before = previous_extract
    real = publish.write_atomically

    def write_atomically(path, data):
        real(path, data)
        _signal_self(signal.SIGTERM)

    monkeypatch.setattr(publish, "write_atomically", write_atomically)
    capsys.readouterr()
    assert job.main(_argv(out, key)) == 143
    assert "it is complete" in capsys.readouterr().err
    import json

    listed = json.load(open(os.path.join(out, "run.json")))["files"]
    for table, names in listed.items():
        assert sorted(os.listdir(os.path.join(out, table))) == names


def test_when_interrupt_is_the_cause_of_an_error_then_it_is_not_a_record_error():
    try:
        try:
            raise KeyboardInterrupt
        except BaseException as exc:
            raise SystemError("returned a result with an exception set") from exc
    except SystemError as wrapped:
        with pytest.raises(interrupts.RunInterrupted):
            interrupts.reraise_interrupt(wrapped)
    interrupts.reraise_interrupt(ValueError("a bad record"))  # no raise


@pytest.mark.skipif(sys.platform != "linux", reason="process groups, /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_when_multiprocess_run_signalled_then_workers_end_and_nothing_stays(
    previous_extract, tmp_path, signum
):
    """The real command, two worker processes, the signal to the driver alone.

    Beam's multi-process runner waited for its workers for ever after a
    SIGTERM to the driver; now the run ends them and exits.
    """
    out, key, before = previous_extract
    inputs = tmp_path / "notes"
    inputs.mkdir()
    with open(os.path.join(ROOT, "samples", "notes.jsonl"), encoding="utf-8") as fh:
        lines = fh.read()
    # Enough for the run to outlast the wait below by far (40 files took 2 s).
    for i in range(400):
        (inputs / f"batch{i:03d}.jsonl").write_text(lines, encoding="utf-8")
    argv = [sys.executable, "-m", "deid_pipeline.pipelines.entry", "run",
            "--input", str(inputs / "*.jsonl"), "--output", out,
            "--key-file", key, "--direct_running_mode=multi_processing",
            "--direct_num_workers=2"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    driver = psutil.Process(proc.pid)
    deadline = time.time() + 120
    while time.time() < deadline and len(driver.children(recursive=True)) < 2:
        time.sleep(0.2)
    time.sleep(2)
    workers = driver.children(recursive=True)
    assert workers, "the run started no worker processes"
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum
    assert err.strip().splitlines()[-1].startswith("deid-pipeline")
    assert "interrupted" in err.strip().splitlines()[-1]
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
    assert _snapshot(out) == before
    assert not [n for n in os.listdir(out) if n.startswith(".staging-")]
