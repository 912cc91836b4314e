"""What a scheduler sees: exit codes, and outputs that are complete or absent."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from deid_pipeline.pipelines.job import main
from deid_pipeline.pipelines.job_options import RunError, check_beam_args
from deid_pipeline.run_options import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DETECTORS = ["--detectors", "rules,dictionary"]


def _sample_args(out, key_file, *extra):
    """A run over the bundled notes.jsonl into ``out``, plus ``extra``."""
    return ["--input", f"{ROOT}/samples/notes.jsonl", "--output", str(out),
            "--key-file", key_file, *DETECTORS, *extra]


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


@pytest.mark.parametrize(
    ("typo", "named"),
    [
        (["--bais=-5"], "--bias"),
        (["--polcy", "limited-dataset"], "--policy"),
        (["--key_file", "k"], "--key-file"),
        (["--direct_num_worker=2"], "--direct_num_workers"),
        (["--s3_endpoint=http://127.0.0.1:9"], "--s3_endpoint_url"),
    ],
)
def test_when_option_unknown_then_exit_2_closest_named_and_nothing_written(
    tmp_path, key_file, capsys, typo, named
):
    out = tmp_path / "o"
    assert main(_sample_args(out, key_file, *typo)) == 2
    err = capsys.readouterr().err
    assert f"unrecognized option {typo[0].split('=')[0]} (did you mean {named}?)" in err
    assert not out.exists()


@pytest.mark.parametrize("typo", ["--ouptut", "--out", "--outptu=o"])
def test_when_a_required_option_is_misspelt_then_the_typo_is_named_not_a_missing_option(
    tmp_path, key_file, capsys, typo
):
    from deid_pipeline.pipelines.cli import main as cli_main

    out = tmp_path / "o"
    name, _, value = typo.partition("=")
    given = [typo] if value else [typo, str(out)]
    argv = ["--input", f"{ROOT}/samples/notes.jsonl", *given, "--key-file", key_file]
    for entry, args in ((cli_main, ["run", *argv]), (main, argv)):
        assert entry(args) == 2
        err = capsys.readouterr().err
        assert f"unrecognized option {name} (did you mean --output?)" in err
        assert "required" not in err
    assert not out.exists()


def test_when_another_command_has_a_value_run_then_its_options_are_not_runs(
    tmp_path, capsys
):
    from deid_pipeline.pipelines.cli import main as cli_main

    # A folder named "run" given to report: report's own error, not run's.
    assert cli_main(["report", "--run", "run", "--json", str(tmp_path / "r")]) != 0
    assert "unrecognized option --json" not in capsys.readouterr().err


def test_when_all_cores_then_beam_worker_logging_silent_but_with_v(tmp_path, key_file):
    def run_cli(*extra):
        out = tmp_path / f"o{len(extra)}"
        done = subprocess.run(
            [sys.executable, "-m", "deid_pipeline.pipelines.entry", *extra, "run",
             *_sample_args(out, key_file, "--direct_running_mode=multi_processing",
                           "--direct_num_workers=2")],
            capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stderr.splitlines()

    lines = run_cli()
    assert len(lines) == 1 and lines[0].startswith("deid-pipeline run: 10 records read")
    # -v keeps what the workers say (their harness start-up, at least).
    assert any("sdk_worker" in line for line in run_cli("-v"))


def test_when_stray_argument_then_exit_2(tmp_path, key_file, capsys):
    assert main(_sample_args(tmp_path / "o", key_file, "limited-dataset")) == 2
    assert "unexpected argument 'limited-dataset'" in capsys.readouterr().err


def test_when_options_beam_declares_then_passed_not_refused():
    parser = build_parser()
    beam_args = [
        "--runner=FlinkRunner",
        "--flink_master=localhost:8081",
        "--flink_job_server_jar=/opt/beam-runners-flink-job-server.jar",
        "--environment_type=EXTERNAL",
        "--environment_config=localhost:50000",
        "--setup_file=./setup.py",
        "--job_endpoint",
        "localhost:8099",
        "--direct_num_workers=2",
        "--direct_running_mode=multi_processing",
        "--s3_endpoint_url=http://127.0.0.1:9000",
        "--s3_access_key_id=id",
        "--s3_secret_access_key=secret",
        "--s3_region_name=us-east-1",
        "--project=p",
        "--temp_location=gs://bucket/tmp",
    ]
    _args, rest = parser.parse_known_args(["--input", "x", "--output", "y", *beam_args])
    assert rest == beam_args
    check_beam_args(rest, parser)  # raises on anything Beam does not declare
    with pytest.raises(RunError, match="--flink_master"):
        check_beam_args([*rest, "--flink_mastr=h:1"], parser)


def test_when_beam_options_given_then_run_exits_0(tmp_path, key_file):
    extra = ("--runner=DirectRunner", "--direct_num_workers=1",
             "--s3_region_name=us-east-1")
    assert main(_sample_args(tmp_path / "o", key_file, *extra)) == 0
    assert (tmp_path / "o" / "run.json").exists()


@pytest.mark.parametrize("given", ["samples/notes", "samples/notes/"])
def test_when_input_is_a_directory_then_exit_2_and_its_hint_reads_each_note_once(
    tmp_path, key_file, capsys, monkeypatch, given
):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "o"
    args = ["--output", str(out), "--key-file", key_file, *DETECTORS]
    assert main(["--input", given, *args]) == 2
    err = capsys.readouterr().err
    assert f"input {given!r} is a directory" in err and "--recursive" in err
    assert not out.exists()
    hinted = re.findall(r"--input '([^']+)'", err)
    assert hinted == ["samples/notes/*.txt"]
    # The hint, and the glob the old hint gave, read the 5 notes, not the gold.
    for patterns in (hinted, ["samples/notes/*"]):
        argv = [a for p in patterns for a in ("--input", p)]
        assert main([*argv, *args]) == 0
        summary = json.loads((out / "run.json").read_text())
        assert (summary["files_read"], summary["records_read"]) == (5, 5)
        ids = pq.read_table(out / "documents").column("doc_id").to_pylist()
        assert sorted(ids) == [f"synth-1-00000{i}" for i in range(1, 6)]


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
            "deid_pipeline.pipelines.cli",
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
