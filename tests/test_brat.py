"""BRAT corpora: real MEDDOCAN pairs read whole, odd .ann lines handled or refused."""

import os
import shutil

import pytest

from deid_pipeline.evaluation.brat import (
    BratFormatError,
    load_brat_corpus,
    parse_ann,
)
from deid_pipeline.evaluation.corpora import load_corpus
from deid_pipeline.label_maps import load_label_map
from deid_pipeline.labels import check_label

TEXT = "Nombre: Ernesto Rivera.\nNHC: 368503.\nEdad: 70 años Sexo: H.\n"


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


def _ann(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_when_meddocan_train_then_500_cases_and_every_span_matches_its_ann(
        meddocan_dir):
    docs = load_corpus(f"brat:{meddocan_dir}/train")
    assert len(docs) == 500
    assert sum(len(d.gold) for d in docs) == 11333  # the README's count
    doc = next(d for d in docs if d.doc_id == "S0004-06142005000500011-1")
    with open(f"{meddocan_dir}/train/{doc.doc_id}.ann", encoding="utf-8") as fh:
        quoted = {(int(a), int(b), lab): txt for _, mid, txt in
                  (line.rstrip("\n").split("\t") for line in fh)
                  for lab, a, b in [mid.split()]}
    assert {(s.start, s.end, s.label) for s in doc.gold} == set(quoted)
    for s in doc.gold:
        assert doc.text[s.start:s.end] == quoted[(s.start, s.end, s.label)]


def test_when_notes_attributes_relations_then_skipped():
    spans = parse_ann(_ann("T1\tNOMBRE_SUJETO_ASISTENCIA 8 15\tErnesto",
                           "#1\tAnnotatorNotes T1\tcheck",
                           "A1\tNegated T1", "R1\tRel Arg1:T1 Arg2:T2",
                           "*\tEquiv T1 T2", "N1\tReference T1 Wiki:1\tx"),
                      TEXT, "a.ann", check_label)
    assert [(s.start, s.end, s.label) for s in spans] == [
        (8, 15, "NOMBRE_SUJETO_ASISTENCIA")]


def test_when_discontinuous_then_one_span_per_fragment():
    spans = parse_ann(_ann("T1\tNOMBRE_SUJETO_ASISTENCIA 8 15;16 22\tErnesto Rivera"),
                      TEXT, "a.ann", check_label)
    assert [(s.start, s.end) for s in spans] == [(8, 15), (16, 22)]


@pytest.mark.parametrize("line, message", [
    ("T1\tNOMBRE_SUJETO_ASISTENCIA 8 16\tErnesto", "does not match"),
    ("T1\tNOMBRE_SUJETO_ASISTENCIA 8 15;16 21\tErnesto Rivera", "does not match"),
    ("T1\tNOMBRE_SUJETO_ASISTENCIA 8 900\tErnesto", "outside the text"),
    ("T1\tNOMBRE 8 15\tErnesto", "unknown PHI label 'NOMBRE'"),
    ("E1\tIngreso:T3 Paciente:T1", "event annotations"),
    ("T1 NOMBRE_SUJETO_ASISTENCIA 8 15 Ernesto", "not a BRAT annotation line"),
    ("T1\tNOMBRE_SUJETO_ASISTENCIA eight 15\tErnesto", "not a BRAT annotation line"),
])
def test_when_bad_line_then_error_names_file_and_line(line, message):
    _refused(_ann("T9\tID_SUJETO_ASISTENCIA 29 35\t368503", line), message)


def _refused(ann: str, message: str) -> None:
    with pytest.raises(BratFormatError, match=rf"^case\.ann:2: .*{message}"):
        parse_ann(ann, TEXT, "case.ann", check_label)


def test_when_span_inside_another_then_outer_kept_and_duplicates_dropped():
    spans = parse_ann(_ann("T1\tNOMBRE_SUJETO_ASISTENCIA 8 22\tErnesto Rivera",
                           "T2\tNOMBRE_SUJETO_ASISTENCIA 16 22\tRivera",
                           "T3\tNOMBRE_SUJETO_ASISTENCIA 8 22\tErnesto Rivera"),
                      TEXT, "a.ann", check_label)
    assert [(s.start, s.end) for s in spans] == [(8, 22)]


@pytest.mark.parametrize("second, message", [
    ("T2\tNOMBRE_SUJETO_ASISTENCIA 16 23\tRivera.", "crosses the span of line 1"),
    ("T2\tNOMBRE_PERSONAL_SANITARIO 8 22\tErnesto Rivera", "another label"),
])
def test_when_spans_cross_or_disagree_then_refused(second, message):
    _refused(_ann("T1\tNOMBRE_SUJETO_ASISTENCIA 8 22\tErnesto Rivera", second),
             message)


def test_when_crlf_text_then_offsets_count_both_characters(tmp_path):
    (tmp_path / "c.txt").write_bytes("Nombre:\r\nErnesto.\r\n".encode())
    (tmp_path / "c.ann").write_text("T1\tNOMBRE_SUJETO_ASISTENCIA 9 16\tErnesto\n",
                                    encoding="utf-8")
    (doc,) = load_brat_corpus(str(tmp_path), check_label)
    assert doc.text[doc.gold[0].start:doc.gold[0].end] == "Ernesto"


def test_when_half_a_pair_then_error_names_the_file(tmp_path, meddocan_dir):
    stem = "S0004-06142005000500011-1"
    shutil.copy(f"{meddocan_dir}/train/{stem}.txt", tmp_path)
    with pytest.raises(BratFormatError, match=f"{stem}.txt: no {stem}.ann"):
        load_brat_corpus(str(tmp_path))
    os.remove(tmp_path / f"{stem}.txt")
    shutil.copy(f"{meddocan_dir}/train/{stem}.ann", tmp_path)
    with pytest.raises(BratFormatError, match=f"{stem}.ann: no .txt"):
        load_brat_corpus(str(tmp_path))


def test_when_not_a_directory_then_error(tmp_path):
    with pytest.raises(BratFormatError, match="not a directory"):
        load_corpus(f"brat:{tmp_path}/missing")
