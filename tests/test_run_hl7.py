"""``run`` over HL7 files: report documents in Parquet, de-identified HL7 beside."""

import json
import os

import pyarrow.parquet as pq
import pytest
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message

from deid_pipeline.hl7.documents import read_hl7
from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.pipelines.job import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples", "hl7")


def _gold():
    with open(os.path.join(SAMPLES, "gold.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_when_hl7_run_with_hl7_output_then_messages_parse_and_no_header_value_left(
    tmp_path,
):
    key = tmp_path / "k"
    key.write_bytes(b"hl7-run-test-key-0123456789abcdef")
    out, hl7_out = tmp_path / "o", tmp_path / "hl7"
    summary = run(
        [
            "--input",
            f"{SAMPLES}/*.hl7",
            "--output",
            str(out),
            "--hl7-output",
            str(hl7_out),
            "--key-file",
            str(key),
            "--detectors",
            "rules,dictionary",
        ]
    )
    gold = _gold()
    assert summary["records_read"] == len(gold)
    assert summary["accounted"] and summary["records_quarantined"] == 0
    assert summary["hl7_output"]["messages_in"] == 5
    assert summary["hl7_output"]["messages_out"] == 5
    inputs = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".hl7"))
    assert sorted(os.listdir(hl7_out)) == inputs
    documents = pq.read_table(out / "documents").to_pylist()
    # A surrogate may by chance equal some other original (a fake surname that
    # is also a real doctor's given name): that is not a leak.
    surrogate_words = {
        w.lower()
        for r in pq.read_table(out / "identifiers").column("replacement").to_pylist()
        for w in r.split()
    }

    def header_values(message_id):
        return {
            v
            for g in gold
            if g["id"].rsplit("-", 1)[0] == message_id
            for _f, v, label in g["header_identifiers"]
            if len(v) >= 4
            and label not in ("STATE", "COUNTRY")
            and v.lower() not in surrogate_words
        }

    for name in inputs:
        text = (hl7_out / name).read_bytes().decode("utf-8")
        frames = list(frame_file(text.encode("utf-8")).frames())
        assert frames
        for frame in frames:
            parse_message(
                frame.data.decode("utf-8").strip("\r\n"),
                validation_level=VALIDATION_LEVEL.TOLERANT,
                find_groups=False,
            )
        values = header_values(name[: -len(".hl7")])
        assert values
        leaked = [v for v in values if v.lower() in text.lower()]
        assert not leaked, f"{len(leaked)} header values left in {name}"
    for doc in documents:
        values = header_values(doc["doc_id"].rsplit("-", 1)[0])
        assert not [v for v in values if v.lower() in doc["text"].lower()]
        meta = dict(doc["metadata"])
        assert meta["hl7_message_type"] in ("ORU^R01", "MDM^T02")
    # The narrative in the HL7 output is the research text of the same report,
    # character for character (the HL7 branch rewrites the document path's tags).
    research = {doc["doc_id"]: doc["text"] for doc in documents}
    reread = {d.doc_id: d.text for n in inputs
              for d in read_hl7(str(hl7_out / n), (hl7_out / n).read_bytes())}
    assert reread == research


def test_when_hl7_output_then_each_report_tagged_once(tmp_path, monkeypatch):
    from deid_pipeline.tagger.tagging import PhiTagger

    calls = []
    original = PhiTagger.tag

    def counting(self, doc):
        calls.append(doc.doc_id)
        return original(self, doc)

    monkeypatch.setattr(PhiTagger, "tag", counting)
    summary = run(["--input", f"{SAMPLES}/*.hl7", "--output", str(tmp_path / "o"),
                   "--hl7-output", str(tmp_path / "hl7"), "--ephemeral-key",
                   "--detectors", "rules,dictionary"])
    assert summary["records_written"] == len(_gold())
    assert summary["hl7_output"]["messages_out"] == 5
    assert sorted(calls) == sorted(g["id"] for g in _gold())
    assert summary["hl7_output"]["reports_tagged_again"] == 0


def test_when_hl7_file_has_a_message_twice_then_both_written_from_one_tagging(
        tmp_path):
    # Same control id, same reports: the research table gets both rows; the
    # HL7 output both messages, rewritten from the first one's tags.
    one = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".hl7"))[0]
    data = open(os.path.join(SAMPLES, one), "rb").read()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "twice.hl7").write_bytes(data + b"\r\n" + data)
    summary = run(["--input", str(tmp_path / "in" / "*.hl7"), "--output",
                   str(tmp_path / "o"), "--hl7-output", str(tmp_path / "hl7"),
                   "--ephemeral-key", "--detectors", "rules,dictionary"])
    assert summary["hl7_output"] == {**summary["hl7_output"], "messages_in": 2,
                                     "messages_out": 2, "reports_tagged_again": 0}
    out = (tmp_path / "hl7" / "twice.hl7").read_bytes()
    first, second = [f.data for f in frame_file(out).frames()]
    assert first == second


@pytest.mark.parametrize("mode", ["empty", "keep"])
def test_when_run_with_z_segment_then_option_decides_what_is_written(tmp_path, mode):
    one = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".hl7"))[0]
    data = open(os.path.join(SAMPLES, one), "rb").read().rstrip(b"\r\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "z.hl7").write_bytes(data + b"\rZTR|1|tracking 88-1|\r")
    argv = ["--input", str(tmp_path / "in" / "*.hl7"), "--output", str(tmp_path / "o"),
            "--hl7-output", str(tmp_path / "hl7"), "--ephemeral-key",
            "--detectors", "rules,dictionary"]
    summary = run(argv if mode == "empty" else [*argv, "--hl7-z-segments", mode])
    assert summary["hl7_output"]["messages_out"] == 1
    out = (tmp_path / "hl7" / "z.hl7").read_bytes()
    expected = b"\rZTR\r" if mode == "empty" else b"\rZTR|1|tracking 88-1|\r"
    assert out.endswith(expected)


def test_when_hl7_input_gzipped_then_output_written_plain_under_its_inner_name(
        tmp_path):
    import gzip

    one = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".hl7"))[0]
    data = open(os.path.join(SAMPLES, one), "rb").read()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "feed.hl7.gz").write_bytes(gzip.compress(data, mtime=0))
    (tmp_path / "in" / "notes.txt.gz").write_bytes(gzip.compress(b"Seen today."))
    summary = run(["--input", str(tmp_path / "in" / "*"), "--output",
                   str(tmp_path / "o"), "--hl7-output", str(tmp_path / "hl7"),
                   "--ephemeral-key", "--detectors", "rules,dictionary"])
    assert summary["records_written"] == 2
    assert summary["hl7_output"]["messages_out"] == 1
    assert sorted(os.listdir(tmp_path / "hl7")) == ["feed.hl7"]
    (frame,) = frame_file((tmp_path / "hl7" / "feed.hl7").read_bytes()).frames()
    assert frame.data.startswith(b"MSH|")


def test_when_message_has_no_mrn_then_both_outputs_use_the_same_person(tmp_path):
    # Without an MRN each report is its own person in the document path (or
    # whom linking joins it to); the HL7 branch used a per-message key, so the
    # HL7 narrative and the research text got different surrogates.
    one = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".hl7"))[0]
    text = open(os.path.join(SAMPLES, one), "rb").read().decode("utf-8")
    pid = next(line for line in text.split("\r") if line.startswith("PID|"))
    fields = pid.split("|")
    fields[3] = ""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "nomrn.hl7").write_text(text.replace(pid, "|".join(fields)),
                                               encoding="utf-8")
    run(["--input", str(tmp_path / "in" / "*.hl7"), "--output", str(tmp_path / "o"),
         "--hl7-output", str(tmp_path / "hl7"), "--ephemeral-key",
         "--detectors", "rules,dictionary"])
    research = {d["doc_id"]: d["text"]
                for d in pq.read_table(tmp_path / "o" / "documents").to_pylist()}
    out = tmp_path / "hl7" / "nomrn.hl7"
    reread = {d.doc_id: d.text for d in read_hl7(str(out), out.read_bytes())}
    assert reread and reread == research


def test_when_one_report_names_someone_its_sibling_tagged_then_both_are_rewritten(
        tmp_path):
    """Two reports of one message: the first names the radiologist after "Dr.",
    the second by surname alone. Both research texts and the HL7 output lose it,
    and the message is written, not quarantined by the whole-message guard."""
    message = ("MSH|^~\\&|RIS|GH|||20240305||ORU^R01|RAD77|P|2.5\r"
               "PID|1||4410021^^^GH^MR||PELLINGTON^ARDEN||19580211|M\r"
               "OBR|1|O1|F1|71020^CHEST 2 VIEWS|||20240305\r"
               "OBX|1|TX|||Read by Dr. Vasquez-Ortmann. No acute process.\r"
               "OBR|2|O2|F2|71250^CT CHEST|||20240305\r"
               "OBX|1|TX|||Vasquez-Ortmann compared with prior study; stable nodule.\r")
    src = tmp_path / "in"
    src.mkdir()
    (src / "rad.hl7").write_bytes(message.encode())
    summary = run(["--input", f"{src}/*.hl7", "--output", str(tmp_path / "o"),
                   "--hl7-output", str(tmp_path / "hl7"), "--ephemeral-key",
                   "--detectors", "rules,dictionary"])
    assert summary["records_written"] == 2
    assert summary["hl7_output"]["messages_out"] == 1
    texts = pq.read_table(str(tmp_path / "o" / "documents"),
                          columns=["text"]).column("text").to_pylist()
    assert len(texts) == 2
    assert not any("Vasquez" in t or "Ortmann" in t for t in texts)
    written = (tmp_path / "hl7" / "rad.hl7").read_text()
    assert "Vasquez" not in written and "Ortmann" not in written
