"""What a scheduler sees: exit codes, and outputs that are complete or absent."""

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from deid_pipeline.pipelines.deidentify import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DETECTORS = ["--detectors", "rules,dictionary"]


@pytest.fixture()
def key_file(tmp_path):
    path = tmp_path / "deid.key"
    path.write_bytes(b"exit-code-tests-key-0123456789abcdef")
    return str(path)


def test_when_input_missing_then_exit_2_and_nothing_written(tmp_path, key_file, capsys):
    out = tmp_path / "o"
    code = main(
        [
            "--input",
            str(tmp_path / "nope.txt"),
            "--output",
            str(out),
            "--key-file",
            key_file,
            *DETECTORS,
        ]
    )
    assert code == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.exists()


def test_when_output_unusable_then_exit_2(tmp_path, key_file, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code = main(
        [
            "--input",
            f"{ROOT}/samples/notes.jsonl",
            "--output",
            str(blocker / "out"),
            "--key-file",
            key_file,
            *DETECTORS,
        ]
    )
    assert code == 2
    assert "cannot use output directory" in capsys.readouterr().err


def test_when_quarantine_above_ratio_then_exit_4_else_0(tmp_path, key_file, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "ok"}\n{broken\n')
    args = ["--input", str(src), "--key-file", key_file, *DETECTORS]
    assert main(args + ["--output", str(tmp_path / "o1")]) == 0
    assert "1 quarantined (read 1)" in capsys.readouterr().err
    assert (
        main(
            args + ["--output", str(tmp_path / "o2"), "--max-quarantine-ratio", "0.25"]
        )
        == 4
    )
    assert (
        main(args + ["--output", str(tmp_path / "o3"), "--max-quarantine-ratio", "0.5"])
        == 0
    )


def _big_input(path, n=6000):
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "id": f"n{i}",
                        "text": f"Seen {1 + i % 12}/"
                        f"{1 + i % 28}/2006 call 617-555-{i % 10000:04d}. " * 20,
                    }
                )
                + "\n"
            )


def test_when_run_is_sigkilled_then_previous_output_stays_whole(tmp_path, key_file):
    out = tmp_path / "o"
    small = tmp_path / "small.jsonl"
    small.write_text('{"id": "old", "text": "Seen 7/22/2006."}\n')
    assert (
        main(
            [
                "--input",
                str(small),
                "--output",
                str(out),
                "--key-file",
                key_file,
                *DETECTORS,
            ]
        )
        == 0
    )
    before = pq.read_table(out / "documents").to_pylist()
    big = tmp_path / "big.jsonl"
    _big_input(big)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "deid_pipeline.cli",
            "run",
            "--input",
            str(big),
            "--output",
            str(out),
            "--key-file",
            key_file,
            *DETECTORS,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not any(
        n.startswith(".staging-") for n in os.listdir(out)
    ):
        time.sleep(0.05)
    time.sleep(1.0)
    assert proc.poll() is None, "run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The killed run published nothing: the old tables and summary are intact.
    assert pq.read_table(out / "documents").to_pylist() == before
    assert json.loads((out / "run.json").read_text())["records_read"] == 1
    # The next run clears the dead staging directory and publishes whole.
    assert (
        main(
            [
                "--input",
                str(small),
                "--output",
                str(out),
                "--key-file",
                key_file,
                *DETECTORS,
            ]
        )
        == 0
    )
    assert not [n for n in os.listdir(out) if n.startswith(".staging-")]
