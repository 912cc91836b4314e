"""``run --incremental``: nightly partitions over a growing archive (issue 19).

Generated notes (persons linked only through their text) and HL7 messages
(persons by header MRN) are split into two nights; the union of the nights'
partitions must equal one run over everything.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pyarrow.dataset as ds
import pytest

from deid_pipeline.pipelines import job
from deid_pipeline.pipelines.cli import main as cli_main
from deid_pipeline.pipelines.job import RunError, main, run
from deid_pipeline.store.incremental import OutputLock, current_files
from deid_pipeline.synthetic.cli import main as generate

ARGS = ["--as-of-year", "2026"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """12 notes (several per person, linked by text) and 8 HL7 messages."""
    root = tmp_path_factory.mktemp("generated")
    for argv in (
        ["--kind", "text", "--count", "12", "--seed", "1", "--min-tokens", "60",
         "--max-tokens", "150", "--output", str(root / "notes")],
        ["--kind", "hl7", "--count", "8", "--seed", "2", "--output", str(root / "hl7")],
    ):
        assert generate(["generate", *argv]) == 0
    return sorted(
        str(root / kind / name)
        for kind, suffix in (("notes", ".txt"), ("hl7", ".hl7"))
        for name in os.listdir(root / kind)
        if name.endswith(suffix)
    )


@pytest.fixture()
def key_file(tmp_path):
    path = tmp_path / "deid.key"
    path.write_bytes(b"0123456789abcdef0123456789abcdef")
    return str(path)


def _archive(tmp_path, files) -> str:
    """Copy ``files`` into the archive directory (kept: a growing archive)."""
    archive = tmp_path / "archive"
    archive.mkdir(exist_ok=True)
    for path in files:
        target = archive / os.path.basename(path)
        if not target.exists():
            shutil.copy2(path, target)
    return str(archive)


def _night(archive, out, key_file, *extra) -> dict:
    return run(
        ["--input", f"{archive}/*.txt", "--input", f"{archive}/*.hl7",
         "--output", str(out), "--key-file", key_file, "--incremental",
         "--allow-empty-input", *ARGS, *extra]
    )


def _rows(paths, columns) -> set[tuple]:
    table = ds.dataset(paths, format="parquet").to_table(columns=columns)
    return set(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def _current(out, table="documents", columns=("doc_id", "person_id", "text")):
    return _rows(current_files(str(out))[table], list(columns))


def test_when_two_nights_then_night_two_reads_only_new_files_and_union_equals_one_run(
    generated, tmp_path, key_file
):
    half = len(generated) // 2
    out = tmp_path / "out"
    archive = _archive(tmp_path, generated[::2])  # every other file: mixed kinds
    first = _night(archive, out, key_file)
    assert first["incremental"]["new"] == half and first["accounted"]
    _archive(tmp_path, generated)
    hl7_out = tmp_path / "hl7-out"
    second = _night(archive, out, key_file, "--hl7-output", str(hl7_out))
    plan = second["incremental"]
    new_hl7 = sorted(os.path.basename(p) for p in generated[1::2] if p.endswith(".hl7"))
    assert sorted(os.listdir(hl7_out)) == new_hl7 == second["hl7_output"]["files"]
    assert (plan["new"], plan["unchanged"], plan["changed"]) == (half, half, 0)
    assert second["files_read"] == half
    # Partitions: one per night, each with its runs/<ts>.json.
    runs = sorted(p.removesuffix(".json") for p in os.listdir(out / "runs"))
    assert runs == [first["incremental"]["run"], second["incremental"]["run"]]
    nights = ds.dataset(out / "documents", format="parquet", partitioning="hive")
    assert set(nights.to_table(columns=["run"]).column("run").to_pylist()) == set(runs)

    whole = tmp_path / "whole"
    everything = run(
        ["--input", f"{archive}/*.txt", "--input", f"{archive}/*.hl7",
         "--output", str(whole), "--key-file", key_file, "--allow-empty-input",
         *ARGS]
    )
    assert everything["records_written"] == (
        first["records_written"] + second["records_written"]
    )
    columns = ["doc_id", "person_id", "text"]
    union = _rows(str(out / "documents"), columns)
    assert union == _rows(str(whole / "documents"), columns)
    # Patients whose reports span both nights: one person_id (and, the texts
    # being equal to the single run's, one date shift).
    by_night = [
        {r[1] for r in _rows(str(out / "documents" / f"run={ts}"), columns)}
        for ts in runs
    ]
    assert by_night[0] & by_night[1]
    # Layouts never mix: a plain run would swap the tables, dropping partitions.
    with pytest.raises(RunError, match="without --incremental"):
        _night(archive, whole, key_file)
    with pytest.raises(RunError, match="add --incremental"):
        run(["--input", f"{archive}/*", "--output", str(out), "--key-file",
             key_file, *ARGS])
    # A third night with nothing new reads nothing and adds an empty partition.
    third = _night(archive, out, key_file)
    assert third["files_read"] == 0 and third["records_written"] == 0
    assert _current(out) == union


def test_when_file_changes_then_it_is_read_again_and_its_rows_superseded(
    generated, tmp_path, key_file
):
    notes = [p for p in generated if p.endswith(".txt")][:3]
    out = tmp_path / "out"
    archive = _archive(tmp_path, notes)
    _night(archive, out, key_file)
    before = _current(out)
    changed = os.path.join(archive, os.path.basename(notes[1]))
    with open(changed, "a", encoding="utf-8") as fh:
        fh.write("\nAddendum: seen again in clinic.\n")
    touched = os.path.join(archive, os.path.basename(notes[2]))
    os.utime(touched, (time.time() + 5, time.time() + 5))  # same content
    second = _night(archive, out, key_file)
    plan = second["incremental"]
    assert (plan["changed"], plan["unchanged"], plan["new"]) == (1, 2, 0)
    assert second["files_read"] == 1
    after = _current(out)
    stem = os.path.basename(changed).removesuffix(".txt")
    assert len(after) == len(before)
    old = {r for r in before if r[0] == stem}
    new = {r for r in after if r[0] == stem}
    assert len(new) == 1 and new != old and "Addendum" in next(iter(new))[2]
    assert after - new == before - old
    # Every partition is kept: the superseded row is still in the union.
    assert old <= _rows(str(out / "documents"), ["doc_id", "person_id", "text"])
    # compact writes exactly the current rows, the run column in their path.
    assert cli_main(["compact", "--output", str(out)]) == 0
    compacted = ds.dataset(
        out / "current" / "documents", format="parquet", partitioning="hive"
    ).to_table()
    assert compacted.num_rows == len(after)
    columns = ["doc_id", "person_id", "text"]
    assert _rows(str(out / "current" / "documents"), columns) == after
    runs = dict(zip(compacted.column("doc_id").to_pylist(),
                    compacted.column("run").to_pylist(), strict=True))
    assert runs[stem] == plan["run"]
    assert cli_main(["compact", "--output", str(tmp_path / "none")]) == 2


_NATIVE_THREADS = """
import os, sys, threading
import pyarrow as pa
from deid_pipeline.pipelines.cli import main
pa.array(list(range(1000)))  # allocator threads start before the count

def native():
    return len(os.listdir("/proc/self/task")) - threading.active_count()

before = native()
code = main(["compact", "--output", sys.argv[1]])
print(code, before, native())
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_when_compact_reads_quarantine_then_no_arrow_thread_pool_outlives_it(
    generated, tmp_path, key_file
):
    # pyarrow's CPU pool, once started, can abort the process at exit
    # (std::terminate, exit 134; a CI run of the README failed on it).
    out = tmp_path / "out"
    _night(_archive(tmp_path, [p for p in generated if p.endswith(".txt")][:2]),
           out, key_file)
    assert current_files(str(out))["quarantine"]  # compact has a table to read
    done = subprocess.run([sys.executable, "-c", _NATIVE_THREADS, str(out)],
                          capture_output=True, text=True, timeout=120, check=True)
    code, before, after = map(int, done.stdout.split())
    assert code == 0
    assert after == before


def test_when_output_locked_then_run_refused_with_exit_2(
    generated, tmp_path, key_file, capsys
):
    out = tmp_path / "out"
    archive = _archive(tmp_path, generated[:2])
    with OutputLock(str(out)):
        with pytest.raises(RunError, match="lock"):
            _night(archive, out, key_file)
        code = main(
            ["--input", f"{archive}/*", "--output", str(out), "--key-file",
             key_file, "--incremental", *ARGS]
        )
    assert code == 2 and "lock" in capsys.readouterr().err
    assert not os.path.exists(out / "runs")


def test_when_run_killed_mid_way_then_nothing_published_and_next_run_redoes_it(
    generated, tmp_path, key_file
):
    out = tmp_path / "out"
    archive = _archive(tmp_path, generated)
    command = [
        sys.executable, "-m", "deid_pipeline.pipelines.cli", "run", "--input",
        f"{archive}/*.txt", "--input", f"{archive}/*.hl7", "--output", str(out),
        "--key-file", key_file, "--incremental", "--allow-empty-input", *ARGS,
    ]
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    # Killed once its staging holds spilled documents: mid-way, before commit.
    while time.time() < deadline and proc.poll() is None:
        if any(
            name.startswith(".staging-") and os.path.exists(out / name / "_spill")
            for name in os.listdir(out) if os.path.isdir(out / name)
        ) if out.exists() else False:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not os.path.exists(out / "runs")
    assert not any((out / t).exists() for t in ("documents", "inputs"))
    redo = _night(archive, out, key_file)
    assert redo["incremental"]["new"] == len(generated)
    assert redo["files_read"] == len(generated)
    assert not [n for n in os.listdir(out) if n.startswith(".staging-")]
    assert json.loads((out / "runs" / f"{redo['incremental']['run']}.json").read_text())


def _note(directory, name, text) -> None:
    (directory / name).write_text(text, encoding="utf-8")


def _documents(out) -> dict[str, tuple[str, str]]:
    rows = _rows(str(out / "documents"), ["doc_id", "person_id", "text"])
    return {doc_id: (person, text) for doc_id, person, text in rows}


def test_when_later_note_links_by_text_then_earlier_person_id_and_date_shift_kept(
    tmp_path, key_file
):
    archive = tmp_path / "archive"
    archive.mkdir()
    seen = "Seen in clinic on 03/14/2019 for follow-up.\n"
    _note(archive, "a.txt", f"Unit No 30198928\nSocial Security #: 330-51-3611\n{seen}")
    _note(archive, "c.txt", f"Unit No 41122334\n{seen}")
    _note(archive, "d.txt", f"Social Security #: 512-44-8123\n{seen}")
    out = tmp_path / "out"
    _night(archive, out, key_file)
    # b shares only the SSN with a; e joins c (MRN) and d (SSN).
    _note(archive, "b.txt", f"Social Security #: 330-51-3611\n{seen}")
    _note(archive, "e.txt", f"Unit No 41122334\nSocial Security #: 512-44-8123\n{seen}")
    second = _night(archive, out, key_file)
    assert second["files_read"] == 2
    docs = _documents(out)
    assert docs["b"][0] == docs["a"][0]
    # One date shift: the same date reads the same in both persons' notes.
    assert docs["b"][1].splitlines()[-1] == docs["a"][1].splitlines()[-1]
    assert docs["c"][0] != docs["d"][0]
    assert docs["e"][0] == docs["c"][0]  # the MRN person is kept (stronger)
    merges = ds.dataset(out / "person_merges", format="parquet").to_table()
    assert merges.to_pylist() == [
        {"person_id": docs["c"][0], "merged_person_id": docs["d"][0]}
    ]
    # Each night's protected link history is its own partition.
    runs = sorted(p.removesuffix(".json") for p in os.listdir(out / "runs"))
    assert sorted(os.listdir(out / "links")) == [f"run={r}" for r in runs]


def test_when_killed_after_commit_then_next_run_finishes_the_publish(
    generated, tmp_path, key_file, monkeypatch
):
    out = tmp_path / "out"
    archive = _archive(tmp_path, generated[:4])
    finish = job.finish_publish

    def killed(*args):
        raise KeyboardInterrupt("killed between commit and the moves")

    monkeypatch.setattr(job, "finish_publish", killed)
    with pytest.raises(KeyboardInterrupt):
        _night(archive, out, key_file)
    (committed,) = os.listdir(out / "runs")
    assert not (out / "documents").exists()
    monkeypatch.setattr(job, "finish_publish", finish)
    second = _night(archive, out, key_file)
    assert second["incremental"]["unchanged"] == 4 and second["files_read"] == 0
    ts = committed.removesuffix(".json")
    assert os.listdir(out / "documents" / f"run={ts}")
    assert (out / "inputs" / committed).exists()
    assert not [n for n in os.listdir(out) if n.startswith(".staging-")]


def test_when_current_files_imported_from_its_documented_former_path_then_same():
    from deid_pipeline.transforms.incremental import current_files as former

    assert former is current_files
