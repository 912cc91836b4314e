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

from deid_pipeline.cli import main
from deid_pipeline.mllp.dedup import DedupIndex
from deid_pipeline.mllp.store import Commit, Store, mllp_frame
from deid_pipeline.outputs.protected import write_protected
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
    from deid_pipeline.pipelines import publish

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
