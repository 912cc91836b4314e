"""Files that show PHI are owner-only (0o600, directories 0o700) whatever the umask.

One test per writer: the review page and the privacy report of ``deid-pipeline
report`` (written under a loose umask 0o022, which makes a plain ``open`` 0o644),
and the gateway's identifier and quarantine files (written under a strict umask
0o277, which cut the old 0o600 to 0o400). No code writes a key file: the docs
make keys with the shell (``umask 077``).
"""

from __future__ import annotations

import glob
import json
import os
import stat
import time

import pytest

from deid_pipeline.mllp.dedup import DedupIndex
from deid_pipeline.mllp.store import Commit, Store, mllp_frame
from deid_pipeline.outputs.protected import write_protected
from deid_pipeline.pipelines.cli import main
from deid_pipeline.pipelines.job import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")
KEY = b"tR7pQ2vX9mK4nB8cL1zW6yH3jF5dS0aG"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    old = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The bundled JSONL notes, de-identified: a run directory to report on."""
    root = tmp_path_factory.mktemp("protected")
    key = root / "deid.key"
    key.write_bytes(KEY)
    out = root / "out"
    summary = run(
        [
            "--input",
            os.path.join(SAMPLES, "notes.jsonl"),
            "--output",
            str(out),
            "--key-file",
            str(key),
            "--detectors",
            "rules,dictionary",
        ]
    )
    assert summary["records_written"] == 10
    return str(out)


def test_when_review_page_written_then_file_and_new_folder_owner_only(
    sample_run, tmp_path, umask
):
    umask(0o022)
    page = tmp_path / "work" / "review.html"
    assert main(["report", "--run", sample_run, "--html", str(page)]) == 0
    assert _mode(page) == 0o600
    assert _mode(tmp_path / "work") == 0o700
    assert "PROTECTED" in page.read_text(encoding="utf-8")
    assert not [n for n in os.listdir(tmp_path / "work") if n != "review.html"]


def test_when_report_json_written_then_owner_only_even_over_an_open_file(
    sample_run, tmp_path, umask
):
    umask(0o022)
    report = tmp_path / "report.json"
    report.write_text("{}", encoding="utf-8")
    os.chmod(report, 0o644)
    assert main(["report", "--run", sample_run, "--json", str(report)]) == 0
    assert _mode(report) == 0o600
    assert json.loads(report.read_text(encoding="utf-8"))["persons"] > 0


def test_when_protected_text_written_then_existing_folder_kept_and_umask_ignored(
    tmp_path, umask
):
    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    for mask in (0o000, 0o277):
        umask(mask)
        target = tmp_path / "shared" / f"report-{mask:o}.json"
        write_protected(str(target), '{"persons": 3}')
        assert _mode(target) == 0o600
        assert target.read_text(encoding="utf-8") == '{"persons": 3}'
        nested = tmp_path / f"new-{mask:o}" / "deeper" / "review.html"
        write_protected(str(nested), "<p>page</p>")
        assert _mode(nested) == 0o600
        assert _mode(nested.parent) == _mode(nested.parent.parent) == 0o700
    assert _mode(tmp_path / "shared") == 0o755


def test_when_gateway_writes_under_a_strict_umask_then_phi_files_exactly_0600(
    tmp_path, umask
):
    with open(sorted(glob.glob(os.path.join(SAMPLES, "hl7", "*.hl7")))[0], "rb") as fh:
        message = fh.read().strip(b"\x0b\x1c\r\n")
    # A umask that cuts 0o600 must take owner bits, so the folders the store
    # would make 0o500 (a non-root gateway could not write in them) exist first.
    for folder in ("hl7", "state"):
        (tmp_path / folder).mkdir(mode=0o755)
    umask(0o277)
    store = Store(str(tmp_path), roll_messages=1)
    store.open()
    index = DedupIndex(str(tmp_path / "state" / "seen.log"), 7 * 86400, time.time)
    store.start(index.load())
    row = {"doc_id": "SYN0000000C000001-1", "label": "DATE", "start": 41, "end": 51}
    store.submit(Commit(hl7=mllp_frame(message),
                        identifiers=json.dumps(row).encode() + b"\n",
                        quarantine=b'{"doc_id": "SYN0000000C000002-1"}\n',
                        index=b"k1 A 1\n")).result(10)
    store.close()
    for kind in ("identifiers", "quarantine"):
        files = os.listdir(tmp_path / kind)
        assert files and all(_mode(tmp_path / kind / n) == 0o600 for n in files)
        assert _mode(tmp_path / kind) == 0o700
    # De-identified HL7 is no PHI: it keeps following the site's umask.
    (hl7,) = os.listdir(tmp_path / "hl7")
    assert _mode(tmp_path / "hl7" / hl7) == 0o644 & ~0o277


def test_when_run_publishes_then_protected_tables_and_staging_are_owner_only(
    tmp_path, umask, monkeypatch
):
    umask(0o022)
    from deid_pipeline.store import publish

    staging_modes = []
    real = publish.staged_tables

    def staged_tables(staging):
        staging_modes.append(_mode(staging))
        return real(staging)

    monkeypatch.setattr(publish, "staged_tables", staged_tables)
    monkeypatch.setattr(
        "deid_pipeline.pipelines.job.staged_tables", staged_tables
    )
    out = tmp_path / "out"
    run(["--input", os.path.join(SAMPLES, "notes.jsonl"), "--output", str(out),
         "--ephemeral-key"])
    assert staging_modes == [0o700]
    for table in ("identifiers", "quarantine"):
        assert _mode(out / table) == 0o700
    assert _mode(out / "documents") == 0o755


# --- every mode, the whole output tree ------------------------------------------
#
# Each test below runs one mode on the bundled samples under umask 0o022 (a
# plain open makes 0o644 files and 0o755 folders, so nothing passes by
# accident) and walks everything it wrote. The rule of what is protected is
# written here, apart from the code's own list, so that a path the code
# forgets fails: identifiers, quarantine, the --incremental link history and
# input manifest, the gateway's state, staging, and in --mode tag the
# documents and HL7 files too (the originals are inline). Research tables
# (documents, persons, person_merges) and run summaries keep the umask's mode.

_PROTECTED = {"identifiers", "quarantine", "links", "inputs", "state"}
_TAG_PROTECTED = {"documents", "hl7"}
_DETECTORS = ["--detectors", "rules,dictionary"]


def _protected(rel: str, tag: bool) -> bool:
    parts = rel.split(os.sep)
    if parts[0].startswith((".staging-", ".current")):
        if len(parts) == 1:
            return True  # staging holds spilled input and the run's tables
        parts = parts[1:]
        if parts[0].startswith("_inputs"):
            return True  # the staged manifest of an --incremental run
    if parts[0] == "current" and len(parts) > 1:
        parts = parts[1:]
    return parts[0] in (_PROTECTED | (_TAG_PROTECTED if tag else set()))


def _walk(root, tag: bool = False) -> tuple[list[str], list[str]]:
    """(protected paths, those with any group or other bit) under ``root``."""
    protected, exposed = [], []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root)
            if _protected(rel, tag):
                protected.append(rel)
                if _mode(path) & 0o077:
                    exposed.append(f"{rel} {_mode(path):o}")
    return protected, sorted(exposed)


def _inputs(tmp_path) -> list[str]:
    """Notes (text and JSONL), HL7 reports, and one broken JSONL line (quarantined)."""
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "broken-1", "text": "cut sho\n', encoding="utf-8")
    return ["--input", os.path.join(SAMPLES, "notes", "*.txt"),
            "--input", os.path.join(SAMPLES, "notes.jsonl"),
            "--input", os.path.join(SAMPLES, "hl7", "*.hl7"),
            "--input", str(broken)]


def _key(tmp_path) -> list[str]:
    key = tmp_path / "deid.key"
    key.write_bytes(KEY)
    os.chmod(key, 0o600)
    return ["--key-file", str(key)]


def _names(root, folder) -> list[str]:
    return [n for _d, _s, files in os.walk(os.path.join(root, folder)) for n in files]


@pytest.mark.parametrize("mode", ["surrogate", "tag"])
def test_when_plain_run_and_report_then_no_protected_path_readable_by_others(
    tmp_path, umask, mode
):
    umask(0o022)
    out = tmp_path / "out"
    summary = run([*_inputs(tmp_path), "--output", str(out), "--hl7-output",
                   str(out / "hl7"), "--mode", mode, *_key(tmp_path), *_DETECTORS])
    assert summary["records_written"] == 21 and summary["records_quarantined"] == 1
    reports = tmp_path / "reports"
    assert main(["report", "--run", str(out), "--json", str(reports / "r.json"),
                 "--html", str(reports / "review.html")]) == 0
    protected, exposed = _walk(out, tag=mode == "tag")
    assert exposed == []
    assert {"identifiers", "quarantine"} <= set(protected)
    assert len(_names(out, "identifiers")) == 11 and _names(out, "quarantine")
    assert _names(out, "hl7")
    # BRAT annotations quote the originals (export-brat, for the scorer).
    os.makedirs(reports / "ann", mode=0o755)
    assert main(["export-brat", "--extract", str(out), "--output",
                 str(reports / "ann")]) == 0
    # Everything under reports/ shows PHI or is made from it.
    written = [os.path.join(d, n) for d, subs, files in os.walk(reports)
               for n in subs + files]
    assert len(written) == 3 + 21
    assert {_mode(p) for p in [reports, *written]} == {0o700, 0o600}
    # The research extract keeps the site's umask (0o644) unless it shows PHI.
    research = 0o600 if mode == "tag" else 0o644
    for folder in ("documents", "hl7"):
        assert {_mode(out / folder / n) for n in _names(out, folder)} == {research}
    assert _mode(out / "persons" / _names(out, "persons")[0]) == 0o644
    assert _mode(out) == 0o755


def test_when_run_refused_then_staging_left_with_its_quarantine_is_owner_only(
    tmp_path, umask
):
    umask(0o022)
    out = tmp_path / "out"
    from deid_pipeline.pipelines.job import RunRejectedError

    with pytest.raises(RunRejectedError) as refused:
        run([*_inputs(tmp_path), "--output", str(out), "--max-quarantine-ratio", "0",
             *_key(tmp_path), *_DETECTORS])
    assert refused.value.exit_code == 4
    (staging,) = [n for n in os.listdir(out) if n.startswith(".staging-")]
    protected, exposed = _walk(out)
    assert exposed == []
    assert os.path.join(staging, "identifiers") in protected
    assert _names(out / staging, "quarantine")


def test_when_incremental_nights_and_compact_then_no_protected_path_readable(
    tmp_path, umask
):
    umask(0o022)
    archive = tmp_path / "archive"
    archive.mkdir()
    notes = sorted(glob.glob(os.path.join(SAMPLES, "notes", "*.txt")))
    for path in notes[:3]:
        with open(path, encoding="utf-8") as fh:
            (archive / os.path.basename(path)).write_text(fh.read(), encoding="utf-8")
    out = tmp_path / "extract"
    hl7_out = tmp_path / "hl7-out"
    night = ["--input", str(archive / "*.txt"),
             "--input", os.path.join(SAMPLES, "hl7", "*.hl7"),
             "--output", str(out), "--hl7-output", str(hl7_out), "--incremental",
             *_key(tmp_path), *_DETECTORS]
    assert run(night)["records_written"] == 9  # 3 notes, 6 HL7 reports
    # Night two: one new note and one changed (a second reading supersedes).
    with open(notes[3], encoding="utf-8") as fh:
        (archive / os.path.basename(notes[3])).write_text(fh.read(), encoding="utf-8")
    with open(archive / os.path.basename(notes[0]), "a", encoding="utf-8") as fh:
        fh.write("\nSeen again on 03/04/2021.\n")
    assert run(night)["incremental"]["new"] == 1
    assert main(["compact", "--output", str(out)]) == 0
    protected, exposed = _walk(out)
    assert exposed == []
    tops = {p.split(os.sep)[0] for p in protected}
    assert tops == {"identifiers", "quarantine", "links", "inputs", "current"}
    assert {os.path.join("current", t) for t in ("identifiers", "quarantine")} <= set(
        protected)
    assert len(_names(out, "links")) == 2 and len(_names(out, "inputs")) == 2
    # Research partitions and de-identified HL7 keep the umask.
    assert {_mode(out / "documents"), _mode(out / "current"),
            _mode(out / "current" / "documents")} == {0o755}
    assert {_mode(hl7_out / n) for n in os.listdir(hl7_out)} == {0o644}


@pytest.mark.parametrize("mode", ["surrogate", "tag"])
def test_when_gateway_takes_sample_messages_then_no_protected_path_readable(
    tmp_path, umask, mode
):
    import io

    from hl7.client import MLLPClient

    from deid_pipeline.hl7.framing import frame_file
    from deid_pipeline.keys import load_key
    from deid_pipeline.mllp import EngineConfig, GatewayConfig, MllpGateway
    from deid_pipeline.tagger.detectors import TaggerConfig

    umask(0o022)
    key_args = _key(tmp_path)
    key, _how = load_key(key_args[1])
    engine = EngineConfig(TaggerConfig(detectors=("rules", "dictionary")), mode, key)
    out = tmp_path / "gw"
    config = GatewayConfig(output_dir=str(out), engine=engine, port=0, workers=0,
                           status_interval=0)
    with MllpGateway(config, status_stream=io.StringIO()) as gateway:
        with MLLPClient(*gateway.address) as client:
            for path in sorted(glob.glob(os.path.join(SAMPLES, "hl7", "*.hl7"))):
                with open(path, "rb") as fh:
                    for frame in frame_file(fh.read()).frames():
                        client.send_message(frame.data.decode("latin-1"))
            client.send_message("not HL7 at all")  # refused: quarantined
    protected, exposed = _walk(out, tag=mode == "tag")
    assert exposed == []
    assert _names(out, "identifiers") and _names(out, "quarantine")
    assert _names(out, "state")
    (hl7_file,) = _names(out, "hl7")
    assert _mode(out / "hl7" / hl7_file) == (0o600 if mode == "tag" else 0o644)
