"""Nothing logs PHI: a DEBUG-level run leaves no identifier in logs, stderr or run.json.

The inputs are generated, so every identifier value is known: the gold span
texts of every note and report and every HL7 header identifier. The run
includes the paths where PHI is most likely to slip into a message: broken
JSONL lines and a truncated HL7 message (read/parse quarantine), and a
careless detector that raises with note text in its exception message (tag
quarantine). Quarantine and identifier tables may hold PHI (they are
protected); logs, the console and run.json may not.
"""

import json
import logging
import os
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from deid_pipeline.pipelines.job import run
from deid_pipeline.synthetic import generate_messages, generate_notes
from deid_pipeline.synthetic.hl7 import escape
from deid_pipeline.tagger.detectors import Detector, register

# One place to switch on the CRF once its model ships.
DETECTORS = "rules,dictionary"
KEY = b"0123456789abcdef0123456789abcdef"
MIN_LENGTH = 4
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _CarelessDetector(Detector):
    """Raises with the note's text in the message, as a buggy detector might."""

    name = "test-careless"
    victims: frozenset[str] = frozenset()

    def detect(self, doc):
        if doc.doc_id in self.victims:
            raise ValueError(f"cannot handle {doc.text[:400]!r}")
        return ()


register("test-careless")(lambda config: _CarelessDetector())


@pytest.fixture(scope="module")
def phi_inputs(tmp_path_factory):
    """Input files with known PHI, and the set of values that must not leak."""
    root = tmp_path_factory.mktemp("phi-logs")
    (root / "in").mkdir()
    notes = generate_notes(10, 21, min_tokens=80, max_tokens=300)
    # every kind, and at least one ORU to cut short below
    messages = generate_messages(5, 21) + generate_messages(1, 21, kinds=("oru",))
    values: set[str] = set()
    for doc in notes + [d for m in messages for d in m.documents]:
        values.update(doc.text[s.start : s.end] for s in doc.gold)
    for message in messages:
        values.update(value for _field, value, _label in message.header_identifiers)
    values = {v.strip() for v in values if len(v.strip()) >= MIN_LENGTH}

    with open(root / "in" / "notes.jsonl", "w", encoding="utf-8") as fh:
        for doc in notes:
            fh.write(json.dumps({"id": doc.doc_id, "text": doc.text}) + "\n")
        broken = json.dumps({"id": "broken-1", "text": notes[0].text})
        fh.write(broken[: len(broken) // 2] + "\n")  # invalid JSON, PHI inside
        fh.write(json.dumps({"id": "no-text", "body": notes[1].text}) + "\n")
    oru = next(m for m in messages if "OBR|" in m.er7)
    truncated = oru.er7.split("\rOBR|", 1)[0] + "\r"  # an ORU cut before its OBR
    with open(root / "in" / "messages.hl7", "w", encoding="utf-8") as fh:
        fh.write("\n".join(m.er7 for m in messages) + "\n" + truncated)
    key = root / "deid.key"
    key.write_bytes(KEY)
    _CarelessDetector.victims = frozenset({notes[2].doc_id, notes[3].doc_id})
    return {"root": root, "values": values, "key": key, "notes": notes}


def _leaked(values: set[str], *texts: str) -> list[str]:
    """Values found as whole words (``ERIN`` in ``BUFFERING`` is no leak)."""
    haystack = "\n".join(texts)
    return sorted(
        v
        for v in values
        if re.search(
            rf"(?<![A-Za-z0-9]){re.escape(v)}(?![A-Za-z0-9])", haystack, re.IGNORECASE
        )
    )


def _argv(inputs, out, detectors=DETECTORS):
    root = inputs["root"]
    return [
        "--input",
        str(root / "in" / "*.jsonl"),
        "--input",
        str(root / "in" / "*.hl7"),
        "--output",
        str(out),
        "--key-file",
        str(inputs["key"]),
        "--detectors",
        detectors,
    ]


def test_values_are_really_in_the_inputs(phi_inputs):
    # The check below means something only if the PHI is there to leak.
    data = "".join(
        p.read_text(encoding="utf-8") for p in (phi_inputs["root"] / "in").iterdir()
    )
    assert len(phi_inputs["values"]) > 50
    # in HL7 a value stands escaped ("Dominguez \\T\\ Simmons Clinic")
    values = phi_inputs["values"]
    missing = [v for v in values if v not in data and escape(v) not in data]
    assert not missing


# Beam's worker logs every element it moves (``Processing [%s] in %s``) on this
# logger whenever the root logger is at DEBUG; our dataclass reprs carry text.
BEAM_ELEMENT_LOGGER = "apache_beam.runners.worker.operations"


def _debug_run(inputs, out, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    summary = run(_argv(inputs, out, f"{DETECTORS},test-careless"))
    console = capfd.readouterr()
    stages = summary["quarantined_by_stage"]
    # Every PHI-prone path was taken: read and parse failures, a tag failure.
    assert stages.get("read", 0) >= 2 and stages.get("parse", 0) >= 1
    assert stages.get("tag") == 2
    assert summary["records_written"] > 0 and summary["accounted"]
    # DEBUG really was on: the job's own debug lines (ids and counts) are there.
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) >= 2
    return console


def _records(caplog, exclude: str = "") -> str:
    return "\n".join(
        f"{r.name} {r.levelname} {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if not (exclude and r.name.startswith(exclude))
    )


def test_when_run_in_process_at_debug_then_no_phi_in_our_logs_console_or_run_json(
    phi_inputs, tmp_path, caplog, capfd
):
    out = tmp_path / "out"
    console = _debug_run(phi_inputs, out, caplog, capfd)
    run_json = (out / "run.json").read_text(encoding="utf-8")
    for where, text in (
        ("log records (all but Beam's element logger)",
         _records(caplog, exclude=BEAM_ELEMENT_LOGGER)),
        ("stderr", console.err),
        ("stdout", console.out),
        ("run.json", run_json),
    ):
        assert not _leaked(phi_inputs["values"], text), f"PHI in {where}"
    # The careless detector's message did reach the protected quarantine.
    quarantine = pq.read_table(out / "quarantine").to_pylist()
    tag_failures = [q for q in quarantine if q["stage"] == "tag"]
    assert tag_failures and all(
        "cannot handle" in q["error_message"] for q in tag_failures
    )


def test_when_run_in_process_at_debug_then_no_phi_in_any_log_record(
    phi_inputs, tmp_path, caplog, capfd
):
    _debug_run(phi_inputs, tmp_path / "out", caplog, capfd)
    assert not _leaked(phi_inputs["values"], _records(caplog), caplog.text)


@pytest.mark.parametrize(
    "mode",
    [
        "in_memory",
        "multi_processing",
    ],
)
def test_when_cli_run_with_debug_logging_then_no_phi_on_console_or_run_json(
    phi_inputs, tmp_path, mode
):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get(
        "PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "deid_pipeline.pipelines.cli", "-v", "-v", "run"]
        + _argv(phi_inputs, out)
        + [f"--direct_running_mode={mode}", "--direct_num_workers=2"],
        capture_output=True,
        timeout=300,
        env=env,
        cwd=str(tmp_path),
    )
    stderr = done.stderr.decode("utf-8", "replace")
    stdout = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, stderr[-3000:]
    assert re.search(r"\bDEBUG\b", stderr), "DEBUG logging was not on"
    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert summary["records_written"] > 0 and summary["accounted"]
    for where, text in (
        ("run.json", json.dumps(summary)),
        ("stdout", stdout),
        ("stderr", stderr),
    ):
        assert not _leaked(phi_inputs["values"], text), f"PHI in {where}"
