"""``deid-pipeline run`` end to end: files in, Parquet tables and run.json out."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from deid_pipeline.evaluation.metrics import evaluate
from deid_pipeline.model import PhiSpan
from deid_pipeline.pipelines.job import RunError, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT_PATH = pathlib.Path(ROOT)


def _table(directory):
    return pq.read_table(directory).to_pylist()


@pytest.fixture()
def key_file(tmp_path):
    path = tmp_path / "deid.key"
    path.write_bytes(b"0123456789abcdef0123456789abcdef")
    return str(path)


def test_when_physionet_corpus_run_then_all_notes_accounted_and_offsets_gold_comparable(
    corpus_dir, physionet_docs, tmp_path, key_file
):
    out = tmp_path / "o"
    summary = run(
        [
            "--input",
            f"{corpus_dir}/id.text",
            "--input-format",
            "physionet",
            "--output",
            str(out),
            "--mode",
            "redact",
            "--key-file",
            key_file,
            "--detectors",
            "rules,dictionary",
        ]
    )
    assert summary["records_read"] == 1619
    assert summary["records_written"] + summary["records_quarantined"] == 1619
    assert summary["accounted"]
    on_disk = json.loads((out / "run.json").read_text())
    assert on_disk["records_written"] == summary["records_written"]
    assert "key_file" not in on_disk["options"]
    documents = _table(out / "documents")
    assert len({d["doc_id"] for d in documents}) == summary["records_written"]
    texts = {d.doc_id: d.text for d in physionet_docs}
    predicted = {doc_id: [] for doc_id in texts}
    for row in _table(out / "identifiers"):
        assert texts[row["doc_id"]][row["start"] : row["end"]] == row["original"]
        predicted[row["doc_id"]].append(
            PhiSpan(row["start"], row["end"], row["label"], row["source"])
        )
    # Offsets are comparable with the gold: rules alone find most dates and phones
    # with high precision at the token level.
    result = evaluate(
        (
            d.text,
            [g for g in d.gold if g.label in ("DATE", "PHONE")],
            predicted[d.doc_id],
        )
        for d in physionet_docs
    )
    assert result.hipaa.binary_token.recall > 0.5
    # A patient keeps one person id across notes.
    by_patient = {}
    for row in documents:
        by_patient.setdefault(row["doc_id"].split("-")[0], set()).add(row["person_id"])
    assert all(len(ids) == 1 for ids in by_patient.values())


def _table_bytes(directory):
    return {f.name: f.read_bytes() for f in sorted(directory.iterdir())}


def test_when_rerun_with_same_key_and_two_workers_then_byte_identical(
    tmp_path, key_file
):
    inputs = [
        "--input",
        f"{ROOT}/samples/notes/*.txt",
        "--input",
        f"{ROOT}/samples/notes.jsonl",
        "--output-shards",
        "3",
        # Several chunks per file, spread over the workers.
        "--chunk-size",
        "3",
    ]
    common = inputs + ["--key-file", key_file, "--detectors", "rules,dictionary"]
    run(common + ["--output", str(tmp_path / "one")])
    run(
        common
        + [
            "--output",
            str(tmp_path / "two"),
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )
    for table in ("documents", "identifiers", "persons", "quarantine"):
        one = _table_bytes(tmp_path / "one" / table)
        assert one == _table_bytes(tmp_path / "two" / table), table
    assert _table(tmp_path / "one" / "documents")
    # A different key changes every person id.
    other = tmp_path / "other.key"
    other.write_bytes(b"another-key-another-key-another-k")
    run(
        inputs
        + [
            "--key-file",
            str(other),
            "--detectors",
            "rules,dictionary",
            "--output",
            str(tmp_path / "three"),
        ]
    )
    ids_one = {r["person_id"] for r in _table(tmp_path / "one" / "documents")}
    ids_three = {r["person_id"] for r in _table(tmp_path / "three" / "documents")}
    assert not ids_one & ids_three


def _sorted_rows(directory):
    return sorted(
        _table(directory),
        key=lambda r: repr(sorted(r.items())),
    )


def test_when_chunk_size_changes_then_same_rows_and_no_spill_left(tmp_path, key_file):
    # Without person keys: a patient's notes lend each other their names
    # within a chunk (docs/tagger.md), so with them the chunk size matters.
    notes = tmp_path / "in" / "notes.jsonl"
    notes.parent.mkdir()
    notes.write_text("".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "person_key"})
        + "\n" for line in open(f"{ROOT}/samples/notes.jsonl", encoding="utf-8")))
    common = [
        "--input",
        f"{ROOT}/samples/notes/*.txt",
        "--input",
        str(notes),
        "--key-file",
        key_file,
        "--detectors",
        "rules,dictionary",
    ]
    small = run(common + ["--output", str(tmp_path / "small"), "--chunk-size", "1"])
    large = run(common + ["--output", str(tmp_path / "large")])
    assert small["records_written"] == large["records_written"] > 10
    assert small["accounted"] and large["accounted"]
    for table in ("documents", "identifiers", "persons", "quarantine"):
        assert _sorted_rows(tmp_path / "small" / table) == _sorted_rows(
            tmp_path / "large" / table
        ), table
    # One documents file per chunk, named after (input file, chunk) only.
    small_files = sorted(f.name for f in (tmp_path / "small" / "documents").iterdir())
    large_files = sorted(f.name for f in (tmp_path / "large" / "documents").iterdir())
    assert len(small_files) == small["records_written"]
    inputs = len(list((ROOT_PATH / "samples" / "notes").glob("*.txt"))) + 1
    assert len(large_files) == inputs  # one chunk per input file
    assert all(
        f.startswith("part-") and f.endswith(".parquet") and "-of-" not in f
        for f in small_files + large_files
    )
    # The spilled documents (PHI) and the staging directory are gone.
    for out in (tmp_path / "small", tmp_path / "large"):
        leftovers = [p.name for p in out.rglob("*") if p.name.startswith(("_", "."))]
        assert leftovers == []
        assert not list(out.rglob("*.pkl"))


def test_when_an_id_repeats_in_one_run_then_one_row_and_the_later_quarantined(
    tmp_path, key_file
):
    src = tmp_path / "dup.jsonl"
    src.write_text(
        '{"id": "same", "text": "Seen 7/22/2006."}\n'
        '{"id": "same", "text": "Called 617-555-0100."}\n'
        '{"id": "other", "text": "Seen 7/23/2006."}\n'
    )
    argv = ["--input", str(src), "--key-file", key_file, "--detectors", "rules"]
    one = run(argv + ["--output", str(tmp_path / "one")])
    # Each document its own chunk, on two workers: the same one is first.
    two = run(
        argv
        + [
            "--output",
            str(tmp_path / "two"),
            "--chunk-size",
            "1",
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )
    for summary, out in ((one, "one"), (two, "two")):
        assert (summary["records_read"], summary["records_written"],
                summary["records_quarantined"]) == (3, 2, 1)
        assert summary["accounted"] and summary["quarantined_by_stage"] == {"link": 1}
        rows = _table(tmp_path / out / "documents")
        assert sorted(r["doc_id"] for r in rows) == ["other", "same"]
        # The first line is the one published, the second quarantined whole.
        same = next(r for r in rows if r["doc_id"] == "same")
        assert same["text"].startswith("Seen ")
        (held,) = _table(tmp_path / out / "quarantine")
        assert (held["doc_id"], held["stage"], held["error_type"]) == (
            "same", "link", "DuplicateDocumentIdError")
        assert b"617-555-0100" in held["raw"]
        # The quarantined one is nobody's document: two persons, one each.
        persons = _table(tmp_path / out / "persons")
        assert sorted(p["n_documents"] for p in persons) == [1, 1]


def test_when_samples_read_recursively_then_gold_and_hidden_skipped_ids_once(
    tmp_path, key_file
):
    samples = tmp_path / "samples"
    shutil.copytree(ROOT_PATH / "samples", samples)
    (samples / "notes" / ".synth-1-000001.txt.swp").write_bytes(
        (samples / "notes" / "synth-1-000001.txt").read_bytes())
    summary = run(["--input", f"{samples}/", "--recursive", "--output",
                   str(tmp_path / "o"), "--key-file", key_file,
                   "--detectors", "rules"])
    # notes.jsonl, 5 notes and 5 HL7 files; 3 gold.jsonl, the swap file and
    # README.md left out.
    assert summary["files_read"] == 11
    assert summary["files_skipped"] == {"annotation": 3, "hidden": 1,
                                        "documentation": 1}
    assert summary["accounted"] and summary["records_quarantined"] == 0
    ids = [r["doc_id"] for r in _table(tmp_path / "o" / "documents")]
    assert len(ids) == len(set(ids)) == summary["records_written"]
    assert {f"synth-1-00000{i}" for i in range(1, 6)} <= set(ids)


def test_when_input_has_bad_records_then_quarantined_and_counted(tmp_path, key_file):
    src = tmp_path / "in"
    src.mkdir()
    (src / "good.txt").write_text("Seen 7/22/2006 by the team.")
    (src / "empty.txt").write_text("")
    (src / "blob.txt").write_bytes(b"\x00\x01binary\x00")
    (src / "notes.jsonl").write_text('{"id": "j1", "text": "ok"}\n{broken\n')
    summary = run(
        [
            "--input",
            f"{src}/*",
            "--output",
            str(tmp_path / "o"),
            "--key-file",
            key_file,
            "--detectors",
            "rules",
        ]
    )
    assert summary["records_read"] == 5
    assert summary["records_written"] == 3  # good, empty, j1
    assert summary["records_quarantined"] == 2
    assert summary["quarantined_by_stage"] == {"read": 2}
    quarantine = _table(tmp_path / "o" / "quarantine")
    assert {q["error_type"] for q in quarantine} == {"InvalidRecord"}
    assert all(q["raw"] for q in quarantine)


def test_when_no_key_then_run_refuses(tmp_path, monkeypatch):
    monkeypatch.delenv("DEID_KEY_FILE", raising=False)
    with pytest.raises(RunError, match="key"):
        run(["--input", "x", "--output", str(tmp_path / "o")])


def test_when_cli_run_then_exit_zero_and_tables_written(tmp_path, key_file):
    out = tmp_path / "cli"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "deid_pipeline.pipelines.cli",
            "run",
            "--input",
            f"{ROOT}/samples/notes.jsonl",
            "--output",
            str(out),
            "--key-file",
            key_file,
            "--detectors",
            "rules",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "written" in proc.stderr
    # Beam's import-time warning about BigQuery (never used here) is dropped.
    assert "apitools" not in proc.stderr and "WARNING" not in proc.stderr
    for table in ("documents", "identifiers", "quarantine"):
        assert (out / table).is_dir()
    assert json.loads((out / "run.json").read_text())["accounted"]


def test_when_cli_help_then_beam_passthrough_explained():
    proc = subprocess.run(
        [sys.executable, "-m", "deid_pipeline.pipelines.cli", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--direct_num_workers" in proc.stdout
    assert "PROTECTED" in proc.stdout


def test_when_run_on_default_runner_then_prism_never_tried(tmp_path, key_file,
                                                           monkeypatch):
    # Beam's DirectRunner would first download and start Prism (a Go binary
    # from GitHub) and fall back when that fails, so a call is all we can see.
    from apache_beam.runners.direct.direct_runner import SwitchingDirectRunner
    from apache_beam.runners.portability import prism_runner

    # conftest switches Prism off for TestPipelines; run must do it by itself.
    monkeypatch.setattr(SwitchingDirectRunner, "_is_interactive", False)
    tried = []

    def refuse(self, pipeline, options):
        tried.append(type(self).__name__)
        raise RuntimeError("no Prism here")

    monkeypatch.setattr(prism_runner.PrismRunner, "run_pipeline", refuse)
    notes = tmp_path / "in"
    notes.mkdir()
    (notes / "a.txt").write_text("Seen by Dr. Quentin Mirabel on 3/14/2011.\n")
    summary = run(["--input", str(notes / "*.txt"), "--output", str(tmp_path / "o"),
                   "--key-file", key_file, "--detectors", "rules"])
    assert summary["records_written"] == 1
    assert tried == []


def test_when_patterns_overlap_then_each_file_read_once(tmp_path, key_file):
    notes = tmp_path / "in"
    notes.mkdir()
    (notes / "a.txt").write_text("Seen by Dr. Quentin Mirabel on 3/14/2011.\n")
    (notes / "b.txt").write_text("Discharged home with daughter Ines Vasquez.\n")
    (notes / "c.txt").symlink_to(notes / "gone.txt")  # dangling
    summary = run(["--input", str(notes / "*"), "--input", str(notes / "*.txt"),
                   "--input", str(notes / "a.txt"), "--output", str(tmp_path / "o"),
                   "--key-file", key_file, "--detectors", "rules"])
    assert (summary["records_read"], summary["records_written"],
            summary["records_quarantined"]) == (3, 2, 1)
    assert summary["files_read"] == 3 and summary["accounted"]
    rows = _table(tmp_path / "o" / "documents")
    assert sorted(r["doc_id"] for r in rows) == ["a", "b"]


def test_a_name_found_in_one_note_of_a_patient_is_removed_from_the_others(
    tmp_path, key_file
):
    """PhysioNet notes of one patient: the son named after "Son" in one note
    is also replaced where another note names him alone, which the tagger
    does not find by itself; the document's span says it was propagated."""
    src = tmp_path / "id.text"
    src.write_text(
        "START_OF_RECORD=7||||1||||\nSon Tavita called for update, questions"
        " answered.\n||||END_OF_RECORD\n"
        "START_OF_RECORD=7||||2||||\nNeuro: alert, follows commands.\n"
        "tavita will visit tomorrow.\n||||END_OF_RECORD\n"
    )
    out = tmp_path / "o"
    summary = run(["--input", str(src), "--input-format", "physionet",
                   "--output", str(out), "--key-file", key_file])
    assert summary["records_written"] == 2 and summary["accounted"]
    texts = {r["doc_id"]: r["text"] for r in _table(out / "documents")}
    assert set(texts) == {"7-1", "7-2"}
    assert all("tavita" not in t.lower() for t in texts.values())
    (lent,) = [r for r in _table(out / "identifiers")
               if r["doc_id"] == "7-2" and r["original"] == "tavita"]
    assert "propagated" in lent["source"]


def test_jsonl_person_key_links_and_lends_and_other_keys_stay_out_of_the_extract(
    tmp_path, key_file
):
    """A JSONL export with the patient's MRN: ``person_key`` makes one person
    of the two notes (one surrogate for the daughter, lent to the note that
    names her alone), and no input key reaches the research extract unless
    ``--keep-metadata`` names it: an ``mrn`` key is published by nobody."""
    src = tmp_path / "export.jsonl"
    rows = [
        {"id": "n1", "text": "Son Tavita called for update, questions answered.",
         "person_key": "MRN48213377", "mrn": "48213377", "ward": "5A"},
        {"id": "n2", "text": "Neuro: alert.\ntavita will visit tomorrow.",
         "person_key": "MRN48213377", "mrn": "48213377"},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["--input", str(src), "--key-file", key_file]
    run(argv + ["--output", str(tmp_path / "plain")])
    run(argv + ["--output", str(tmp_path / "kept"), "--keep-metadata", "ward"])
    plain = {r["doc_id"]: r for r in _table(tmp_path / "plain" / "documents")}
    kept = {r["doc_id"]: r for r in _table(tmp_path / "kept" / "documents")}
    assert plain["n1"]["person_id"] == plain["n2"]["person_id"]
    assert all("tavita" not in r["text"].lower() for r in plain.values())
    assert all(r["metadata"] is None for r in plain.values())
    assert kept["n1"]["metadata"] == [("ward", "5A")] and kept["n2"]["metadata"] is None
    published = b"".join(
        p.read_bytes() for p in (tmp_path / "plain" / "documents").glob("*.parquet"))
    assert b"48213377" not in published


def test_the_direct_runner_graph_is_built_without_type_inference(
        tmp_path, key_file, monkeypatch):
    from apache_beam.transforms import ptransform

    import deid_pipeline.pipelines.job as job

    checked = []
    check = ptransform.PTransform.type_check_inputs

    def counting(self, pvalueish):
        checked.append(type(self).__name__)
        return check(self, pvalueish)

    monkeypatch.setattr(ptransform.PTransform, "type_check_inputs", counting)
    notes = tmp_path / "in"
    notes.mkdir()
    (notes / "a.txt").write_text("Seen by Dr. Quentin Mirabel on 3/14/2011.\n")
    (notes / "b.txt").write_text("Discharged home with daughter Ines Vasquez.\n")
    tables = []
    for name in ("plain", "checked"):
        if name == "checked":  # Beam's inference and checks, as other runners get
            monkeypatch.setattr(job, "skip_type_inference", lambda options: None)
        checked.clear()
        out = tmp_path / name
        summary = run(["--input", str(notes / "*.txt"), "--output", str(out),
                       "--key-file", key_file, "--detectors", "rules"])
        assert summary["records_written"] == 2
        tables.append((len(checked), _table(out / "documents")))
    (plain, plain_rows), (with_checks, checked_rows) = tables
    # By default Beam checked nothing; with its checks on, the whole graph
    # passed them;
    assert plain == 0 and with_checks > 20
    # and the outputs are the same either way.
    assert plain_rows == checked_rows


def test_other_runners_keep_beams_type_inference():
    from apache_beam.options.pipeline_options import TypeOptions

    from deid_pipeline.pipelines.job import skip_type_inference
    from deid_pipeline.transforms.beam_costs import JobOptions

    for args, checked in ((["--runner=FlinkRunner"], True), ([], False),
                          (["--runner=DirectRunner"], False)):
        options = JobOptions(args)
        skip_type_inference(options)
        assert options.view_as(TypeOptions).pipeline_type_check is checked, args
