"""Real messages from other HL7 libraries' test suites through ``run --hl7-output``.

``tests/fixtures/hl7_real/`` holds the messages of hl7apy, python-hl7,
hl7-standard and simple-hl7 (SOURCES.md: package, version, file, licence):
what other systems send, with their quirks, as a stand-in for the feeds the
maintainers measure on. The test counts messages out as HL7 and quarantined,
by stage and error type, and checks that no PID/NK1 value of an input is left
in its output. Only file names, counts and stages are printed, never values.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import pyarrow.parquet as pq
import pytest

from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.pipelines.job import run

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hl7_real")

# Messages the standard says cannot be read (a batch header inside a message,
# a message without MSH-9, an ORU cut after PID): quarantined at parse/read.
EXPECTED_QUARANTINE = Counter({
    ("hl7_output:parse", "Hl7ParseError"): 4,
    ("hl7_output:read", "FramingError"): 2,
})
EXPECTED_OUT = 40


def _files() -> list[str]:
    return sorted(f for f in os.listdir(FIXTURES) if f.endswith(".hl7"))


def _header_words(data: bytes) -> set[str]:
    """PID-5/6/9 and NK1-2 name parts of 3+ letters (what an auditor scans for)."""
    text = data.decode("latin-1").lstrip("\ufeff")
    words: set[str] = set()
    for line in re.split(r"\r\n|\r|\n", text):
        if line[:3] in ("PID", "NK1") and len(line) > 3:
            fields = line.split(line[3])
            for n in ((5, 6, 9) if line[:3] == "PID" else (2,)):
                if n < len(fields):
                    for part in re.split(r"[\^~&]", fields[n]):
                        if len(part) >= 3 and part.isalpha():
                            words.add(part.upper())
    # Words every test suite uses as placeholders identify nobody.
    return words - {"TEST", "PATIENT", "DOE", "JOHN", "JANE"}


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    key = tmp / "k"
    key.write_bytes(b"hl7-real-messages-test-key-0123456789")
    out = tmp / "out"
    summary = run(["--input", f"{FIXTURES}/*.hl7", "--output", str(out),
                   "--hl7-output", str(out / "hl7"), "--key-file", str(key)])
    return summary, out


def test_when_real_messages_run_then_counted_out_or_quarantined_with_reasons(
        real_run):
    summary, out = real_run
    frames = sum(len(list(frame_file(open(os.path.join(FIXTURES, f), "rb").read())
                          .frames())) for f in _files())
    quarantine = pq.read_table(out / "quarantine").to_pylist()
    reasons = Counter((r["stage"], r["error_type"]) for r in quarantine
                      if r["stage"].startswith("hl7_output:"))
    print(f"messages in {summary['hl7_output']['messages_in']}, out "
          f"{summary['hl7_output']['messages_out']}, quarantined {dict(reasons)}")
    for r in quarantine:
        if r["stage"].startswith("hl7_output:"):
            print(r["doc_id"], r["stage"], r["error_type"])
    assert summary["hl7_output"]["messages_in"] == frames
    assert reasons == EXPECTED_QUARANTINE
    assert summary["hl7_output"]["messages_out"] == EXPECTED_OUT
    assert EXPECTED_OUT + sum(EXPECTED_QUARANTINE.values()) == frames


def test_when_real_messages_written_then_no_header_name_left(real_run):
    _, out = real_run
    left = []
    for name in _files():
        path = out / "hl7" / name
        if not path.exists():
            continue
        with open(os.path.join(FIXTURES, name), "rb") as fh:
            words = _header_words(fh.read())
        written = set(re.findall(r"[A-Za-z]+", path.read_bytes().decode("latin-1")
                                 .upper()))
        found = len(words & written)
        if found:
            left.append((name, found))
    assert left == []
