"""Site rules files: what they add and drop, how strictly they are checked, and
that ``run --rules`` uses the example of docs/site-rules.md and records it."""

from __future__ import annotations

import hashlib
import json
import os
import re

import pytest

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.pipelines.job import main
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.rules import RuleDetector
from deid_pipeline.tagger.rules.site import (
    SiteRulesError,
    load_site_rules,
    parse_site_rules,
)
from deid_pipeline.tagger.tagging import PhiTagger

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example() -> bytes:
    """The JSON example of docs/site-rules.md, as written there."""
    with open(os.path.join(ROOT, "docs", "site-rules.md"), encoding="utf-8") as fh:
        block = re.search(r"```json\n(.*?)```", fh.read(), re.S)
    assert block, "docs/site-rules.md has no JSON example"
    return block.group(1).encode("utf-8")


@pytest.fixture()
def example(tmp_path) -> str:
    path = tmp_path / "site-rules.json"
    path.write_bytes(_example())
    return str(path)


def _spans(detector, text: str) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label)
            for s in detector.detect(ClinicalDocument("n", text, "text"))]


SITE_ROWS = [
    ("Transferred to WARD 7B overnight", [("WARD 7B", "DEPARTMENT")]),
    ("lives in north ashby with son", [("north ashby", "CITY")]),
    ("back to bed 412-B after CT", [("412-B", "ROOM")]),
    # Whole words only; a pattern with context words needs one of them.
    ("Ward 7BX, Fairhavens; code 412-B on the form", []),
]


@pytest.mark.parametrize(("text", "expected"), SITE_ROWS)
def test_when_site_rules_then_deny_phrases_and_patterns_tagged(example, text,
                                                               expected):
    site = RuleDetector(site=load_site_rules(example))
    got = [s for s in _spans(site, text) if s[1] in ("DEPARTMENT", "CITY", "ROOM")]
    assert got == expected


def test_when_allow_word_then_rules_and_crf_spans_of_it_dropped(example):
    """``Foley`` the catheter: neither the rules nor the CRF redact it."""
    text = "Foley placed, draining well. Dr. Foley aware. Mrs. Hennessy resting."
    plain = PhiTagger.from_config(TaggerConfig(detectors=("rules", "crf")))
    site = PhiTagger.from_config(TaggerConfig(detectors=("rules", "crf"),
                                              rules_path=example))
    doc = ClinicalDocument("n", text, "text")
    before = {text[s.start:s.end] for s in plain.tag(doc).spans}
    after = {text[s.start:s.end] for s in site.tag(doc).spans}
    assert "Foley" in before
    assert "Foley" not in after
    assert "Hennessy" in after


def test_when_site_rules_then_sha256_in_rule_detector_version(example):
    (rules,) = create(TaggerConfig(detectors=("rules",), rules_path=example))
    digest = hashlib.sha256(_example()).hexdigest()
    assert rules.version.endswith(f"+site-sha256:{digest}")
    assert {"DEPARTMENT", "CITY", "ROOM"} <= set(rules.labels)


BAD_FILES = [
    ('{"alow": ["x"]}', "unknown key 'alow'"),
    ('{"deny": {"WARD": ["7B"]}}', "deny: unknown label 'WARD'"),
    ('{"deny": ["7B"]}', "deny must be an object"),
    ('{"deny": {"ROOM": ["7B", ""]}}', "deny.ROOM must be a list of non-empty"),
    ('{"allow": "Foley"}', "allow must be a list"),
    ('{"patterns": [{"name": "bed", "regex": "(x", "label": "ROOM"}]}',
     "pattern 'bed': regex does not compile"),
    ('{"patterns": [{"name": "bed", "regex": "x", "label": "BED"}]}',
     "pattern 'bed': unknown label 'BED'"),
    ('{"patterns": [{"name": "bed", "regex": "x", "label": "ROOM", "ctx": []}]}',
     "patterns[0]: unknown key 'ctx'"),
    ('{"patterns": [{"name": "bed", "label": "ROOM"}]}', "'regex' is required"),
    ('{"patterns": [{"name": "b", "regex": "x", "label": "ROOM", "confidence": 2}]}',
     "confidence must be a number"),
    ('{"patterns": [{"name": "b", "regex": "x", "label": "ROOM"}, '
     '{"name": "b", "regex": "y", "label": "ROOM"}]}', "same name"),
    ('{"deny": {"ROOM": ["7B"]},}', "not JSON"),
    ('["Foley"]', "must be a JSON object"),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_when_site_rules_invalid_then_error_names_the_culprit(content, message):
    with pytest.raises(SiteRulesError, match=re.escape(message)):
        parse_site_rules(content.encode(), "site.json")


def _run_args(tmp_path, *extra: str) -> list[str]:
    key = tmp_path / "deid.key"
    key.write_bytes(b"site-rules-tests-key-0123456789abcdef")
    return ["--input", f"{ROOT}/samples/notes.jsonl", "--output",
            str(tmp_path / "out"), "--key-file", str(key),
            "--detectors", "rules,dictionary", *extra]


def test_when_run_with_rules_file_then_used_and_recorded_in_run_json(
        tmp_path, example):
    assert main(_run_args(tmp_path, "--rules", example)) == 0
    with open(tmp_path / "out" / "run.json", encoding="utf-8") as fh:
        versions = json.load(fh)["versions"]
    digest = hashlib.sha256(_example()).hexdigest()
    assert versions["site_rules"] == digest
    assert versions["rules"].endswith(f"+site-sha256:{digest}")


def test_when_run_with_invalid_rules_file_then_exit_2_naming_it(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"patterns": [{"name": "bed", "regex": "(x", "label": "ROOM"}]}')
    assert main(_run_args(tmp_path, "--rules", str(bad))) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "pattern 'bed': regex does not compile" in err
    assert not (tmp_path / "out").exists()


def test_when_evaluate_with_rules_then_scored_with_them_and_sha_in_json(
        tmp_path, example, capsys):
    from deid_pipeline.pipelines.cli import main as cli_main

    out = tmp_path / "eval.json"
    assert cli_main(["evaluate", "--corpus", "synthetic:20", "--detectors",
                     "rules,dictionary", "--rules", example, "--json",
                     str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["site_rules"] == hashlib.sha256(_example()).hexdigest()


def test_when_train_with_rules_then_counts_per_rule_printed(tmp_path, example,
                                                             capsys):
    from deid_pipeline.pipelines.cli import main as cli_main

    model = tmp_path / "m.crfsuite"
    assert cli_main(["train", "--corpus", "synthetic:5", "--output", str(model),
                     "--max-iterations", "1", "--rules", example]) == 0
    err = capsys.readouterr().err
    digest = hashlib.sha256(_example()).hexdigest()
    assert f"train: site rules sha256 {digest}" in err
    assert "train: site_deny_department: 0 found, 0 on gold PHI" in err
    assert "train: site_bed: " in err
    assert "train: allow: 2 words, " in err


def test_when_train_with_invalid_rules_then_exit_2_before_training(tmp_path,
                                                                   capsys):
    from deid_pipeline.pipelines.cli import main as cli_main

    bad = tmp_path / "bad.json"
    bad.write_text('{"deny": {"WARD": ["7B"]}}')
    model = tmp_path / "m.crfsuite"
    assert cli_main(["train", "--corpus", "synthetic:5", "--output", str(model),
                     "--rules", str(bad)]) == 2
    assert "deny: unknown label 'WARD'" in capsys.readouterr().err
    assert not model.exists()


def test_when_docs_show_the_example_then_the_example_file_holds_the_same_rules():
    with open(os.path.join(ROOT, "docs", "site-rules.example.json"),
              encoding="utf-8") as fh:
        assert json.load(fh) == json.loads(_example())
