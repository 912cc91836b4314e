"""The genre set: other genres, evaluation-half names, a fifth PHI-free."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from deid_pipeline.evaluation import cross_validation
from deid_pipeline.evaluation.corpora import load_corpus
from deid_pipeline.evaluation.phi_free import phi_free_score
from deid_pipeline.model import PhiSpan
from deid_pipeline.surrogates.halves import PoolHalf, half_of
from deid_pipeline.synthetic.genres import EPONYMS, GENRES, generate_genre_notes


@pytest.fixture(scope="module")
def genre_docs():
    return generate_genre_notes(500)


def test_when_genre_set_generated_then_gold_covers_the_inserted_values(genre_docs):
    for doc in genre_docs:
        for span in doc.gold:
            value = doc.text[span.start:span.end]
            assert value and value == value.strip()
        spans = sorted(doc.gold)
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))


def test_when_genre_set_generated_then_a_fifth_phi_free_and_every_genre(genre_docs):
    free = [d for d in genre_docs if not d.gold]
    assert 0.14 <= len(free) / len(genre_docs) <= 0.26
    assert all(dict(d.metadata)["phi_free"] == "yes" for d in free)
    eponyms = [d for d in free if any(e.casefold() in d.text.casefold()
                                      for e in EPONYMS)]
    assert len(eponyms) > len(free) / 2
    assert {dict(d.metadata)["kind"] for d in genre_docs} == set(GENRES)


def test_when_genre_set_generated_then_names_and_towns_are_evaluation_half(
        genre_docs):
    names = 0
    for doc in genre_docs:
        for span in doc.gold:
            value = doc.text[span.start:span.end]
            if span.label in ("PATIENT", "DOCTOR", "RELATIVE"):
                for word in re.findall(r"[A-Za-z]{2,}", value):
                    names += 1
                    assert half_of(word) is PoolHalf.EVALUATION
            elif span.label == "CITY":
                assert half_of(value) is PoolHalf.EVALUATION
    assert names > 500


def test_when_genre_set_generated_then_it_has_the_shapes_users_saw_leak(genre_docs):
    texts = [d.text for d in genre_docs]
    gold = [(d.text[s.start:s.end], s.label, d.text[s.end:s.end + 4])
            for d in genre_docs for s in d.gold]
    assert any(re.fullmatch(r"[A-Z][a-z]+ [A-Z]\.", v) and lab == "DOCTOR"
               for v, lab, _ in gold)  # "Anna S."
    assert any(lab == "CITY" and after.startswith(", ") for v, lab, after in gold)
    assert any(lab == "HEALTHPLAN" and re.search(r"[A-Za-z]", v)
               for v, lab, _ in gold)
    assert any(lab == "HOSPITAL" and re.fullmatch(r"[A-Z]{2,5}", v)
               for v, lab, _ in gold)
    assert any(t.startswith("pt from ") for t in texts)


def test_when_genre_set_generated_twice_then_same_bytes():
    assert generate_genre_notes(20, seed=4) == generate_genre_notes(20, seed=4)
    assert load_corpus("genre:20") == generate_genre_notes(20)
    with pytest.raises(ValueError):
        load_corpus("genre:many")


def test_when_phi_free_documents_tagged_then_bare_years_do_not_count(genre_docs):
    free = [d for d in genre_docs if not d.gold][:3]
    year = free[1].text.find("19")
    predicted = [[PhiSpan(0, 3, "DOCTOR", "crf")], [], []]
    score = phi_free_score(free, predicted)
    assert (score.documents, score.tagged) == (3, 1)
    text = "what is the Framingham risk score in 1998"
    doc = type(free[0])("y", text, "synthetic")
    start = text.index("1998")
    assert phi_free_score([doc], [[PhiSpan(start, start + 4, "DATE", "crf")]]
                          ).tagged == 0
    assert year == year  # the share counts documents, not spans


def test_when_evaluate_genre_corpus_then_binary_token_and_phi_free_share(
        tmp_path, capsys):
    parser = argparse.ArgumentParser()
    cross_validation.add_subcommand(parser.add_subparsers())
    out = tmp_path / "genre.json"
    args = parser.parse_args(["evaluate", "--corpus", "genre:60", "--detectors",
                              "rules", "--json", str(out)])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "Binary token" in printed and "PHI-free documents: " in printed
    payload = json.loads(out.read_text())
    free = sum(1 for d in generate_genre_notes(60) if not d.gold)
    assert payload["phi_free"]["documents"] == free
