"""``bench_versions``: two builds of ``run`` timed in alternating pairs.

The end-to-end test runs this build against itself on a few real notes (two
real runs): the figures come out per pair, the outputs compare byte for byte.
Never asserts speed.
"""

import json
import os
import stat

import pytest

from deid_pipeline.benchmarks import bench_versions

pytest.importorskip("psutil")


def _notes_jsonl(path, docs) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps({"id": doc.doc_id, "text": doc.text}) + "\n")
    return str(path)


def test_when_a_build_is_timed_against_itself_then_pairs_alternate_and_outputs_match(
        tmp_path, capsys, physionet_docs):
    notes = _notes_jsonl(tmp_path / "notes.jsonl", physionet_docs[:3])
    this = bench_versions.default_candidate()
    figures = bench_versions.main([
        "--baseline", this, "--candidate", this, "--input", notes,
        "--pairs", "2", "--warmup", "0", "--same-output",
        "--workdir", str(tmp_path / "work"), "--json", str(tmp_path / "f.json")])
    out = capsys.readouterr().out
    assert [(r["pair"], r["build"]) for r in figures["runs"]] == [
        (1, "candidate"), (1, "baseline"), (2, "baseline"), (2, "candidate")]
    for r in figures["runs"]:
        assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_rss"] > 10 * 2**20
    assert figures["same_output"] and figures["output_files"] >= 2
    wall = figures["summary"]["wall_s"]
    assert len(wall["ratios"]) == 2
    assert "pair 2 baseline: wall" in out and "ratio" in out
    assert "outputs (" in out and "byte-identical" in out
    assert json.loads((tmp_path / "f.json").read_text())["runs"] == figures["runs"]
    for line in out.splitlines():  # counts and timings only, never a note's text
        assert not any(doc.text[:30] in line for doc in physionet_docs[:3])


def test_summary_pairs_each_run_with_the_other_build_of_its_pair():
    runs = [
        {"pair": 1, "build": "candidate", "wall_s": 2.0, "cpu_s": 1.0, "peak_rss": 100},
        {"pair": 1, "build": "baseline", "wall_s": 4.0, "cpu_s": 2.0, "peak_rss": 200},
        {"pair": 2, "build": "baseline", "wall_s": 5.0, "cpu_s": 2.0, "peak_rss": 200},
        {"pair": 2, "build": "candidate", "wall_s": 4.0, "cpu_s": 1.5, "peak_rss": 100},
        {"pair": 3, "build": "candidate", "wall_s": 3.0, "cpu_s": 1.0, "peak_rss": 100},
        {"pair": 3, "build": "baseline", "wall_s": 3.0, "cpu_s": 2.0, "peak_rss": 100},
    ]
    summary = bench_versions.summarize(runs)
    assert summary["wall_s"]["ratios"] == [0.5, 0.8, 1.0]
    assert summary["wall_s"]["ratio_median"] == 0.8
    assert summary["wall_s"]["candidate"] == {"median": 3.0, "min": 2.0, "max": 4.0}
    assert summary["cpu_s"]["ratios"] == [0.5, 0.75, 0.5]
    assert summary["peak_rss"]["baseline"]["median"] == 200


def test_digests_leave_out_run_json_and_see_any_changed_byte(tmp_path):
    for side in ("a", "b"):
        (tmp_path / side / "documents").mkdir(parents=True)
        (tmp_path / side / "documents" / "part-0.parquet").write_bytes(b"PAR1 rows")
        (tmp_path / side / "run.json").write_text(json.dumps({"seconds": len(side)}))
    a = bench_versions.output_digests(str(tmp_path / "a"))
    assert list(a) == [os.path.join("documents", "part-0.parquet")]
    assert a == bench_versions.output_digests(str(tmp_path / "b"))
    (tmp_path / "b" / "documents" / "part-0.parquet").write_bytes(b"PAR1 rowz")
    assert a != bench_versions.output_digests(str(tmp_path / "b"))


def test_a_baseline_that_is_not_an_executable_is_refused_before_any_run(tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"id": "1", "text": "Pt stable."}\n')
    with pytest.raises(SystemExit, match="baseline .* is not an executable"):
        bench_versions.main(["--baseline", str(tmp_path / "missing"), "--input",
                             str(notes), "--workdir", str(tmp_path / "w")])
    assert not (tmp_path / "w" / "out-candidate").exists()


@pytest.mark.parametrize("cpus", ["zero", "0,99999"])
def test_cpus_that_are_not_this_machine_s_are_refused_at_the_command_line(
        cpus, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench_versions.main(["--baseline", "x", "--input", "y", "--cpus", cpus])
    assert exit_.value.code == 2 and "--cpus" in capsys.readouterr().err


def test_a_run_that_fails_names_its_log(tmp_path):
    failing = tmp_path / "deid-pipeline"
    failing.write_text("#!/bin/sh\necho 'no such option' >&2\nexit 2\n")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(RuntimeError, match=r"exited 2; see .*log-x-0\.txt"):
        bench_versions.time_run(str(failing), ["in.jsonl"], "key", str(tmp_path / "o"),
                                None, str(tmp_path / "log-x-0.txt"))
    assert "no such option" in (tmp_path / "log-x-0.txt").read_text()


def test_the_physionet_notes_are_written_as_jsonl_in_corpus_order(
        tmp_path, corpus_dir, physionet_docs):
    path = tmp_path / "notes.jsonl"
    assert bench_versions.write_physionet_jsonl(corpus_dir, str(path)) == len(
        physionet_docs)
    lines = path.read_text(encoding="utf-8").splitlines()
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first == {"id": physionet_docs[0].doc_id, "text": physionet_docs[0].text}
    assert last["id"] == physionet_docs[-1].doc_id
