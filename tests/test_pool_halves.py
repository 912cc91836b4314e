"""Pool halves: training data and scoring data never share a name or a place."""

from __future__ import annotations

import re

import pytest

from deid_pipeline.rewrite import RewriteContext
from deid_pipeline.surrogates import surrogate
from deid_pipeline.surrogates.halves import (
    POOL_SALT,
    PoolContext,
    PoolHalf,
    half_of,
    parse_pool,
)
from deid_pipeline.surrogates.locations import gazetteer
from deid_pipeline.surrogates.names import name_tables

TRAINING, EVALUATION = PoolHalf.TRAINING, PoolHalf.EVALUATION


def test_when_salt_and_hash_computed_then_they_are_the_ones_fixed_for_good():
    # Moving a value between halves voids every model trained before: these
    # values pin the salt and the hash.
    assert POOL_SALT == "deid-pipeline pool halves v1"
    assert {v: half_of(v).value for v in PINNED} == PINNED


PINNED = {"Springfield": "training", "Smith": "evaluation", "Anna": "training",
          "Mercy": "evaluation", "Boston": "training", "Johnson": "evaluation",
          "MD": "evaluation", "XJH": "training", "Baltimore": "evaluation"}


def test_when_value_written_in_another_case_then_same_half():
    assert half_of("BALTIMORE") is half_of("baltimore") is half_of(" Baltimore ")


@pytest.mark.parametrize("lists", [
    lambda h: name_tables(h).last.words, lambda h: name_tables(h).first.words,
    lambda h: name_tables(h).female.words, lambda h: gazetteer(h).cities.words,
    lambda h: gazetteer(h).city_words.words, lambda h: gazetteer(h).state_codes.words,
])
def test_when_pool_split_then_halves_disjoint_cover_it_and_each_is_sizeable(lists):
    train, evaluation, whole = set(lists(TRAINING)), set(lists(EVALUATION)), lists(None)
    assert not train & evaluation
    assert train | evaluation == set(whole)
    assert 0.35 < len(train) / len(whole) < 0.65


def test_when_state_names_split_then_a_state_is_in_the_half_of_its_code():
    names = set(gazetteer(EVALUATION).state_names.words)
    codes = set(gazetteer(EVALUATION).state_codes.words)
    assert ("Maryland" in names) == ("MD" in codes)
    assert ("Texas" in names) == ("TX" in codes)


def test_when_pool_named_then_parsed_or_refused():
    assert parse_pool("evaluation") is EVALUATION
    assert parse_pool("all") is None and parse_pool(None) is None
    with pytest.raises(ValueError):
        parse_pool("eval")


_CONTEXT_VALUES = [("John Smith", "PATIENT"), ("Dr. Anna Sousa", "DOCTOR"),
                   ("mary", "RELATIVE"), ("Springfield", "CITY"), ("MD", "STATE"),
                   ("12 Oak Street", "STREET"), ("Mercy Hospital", "HOSPITAL"),
                   ("Baltimore Rehab", "LOCATION")]


@pytest.mark.parametrize("half", [TRAINING, EVALUATION])
def test_when_context_has_a_half_then_every_drawn_word_is_in_it(half):
    for n in range(40):
        ctx = PoolContext(key=f"k{n}".encode(), person_id=f"p{n}", as_of_year=2026,
                          pool=half)
        for value, label in _CONTEXT_VALUES:
            out = surrogate(value, label, ctx)
            if label in ("CITY", "STATE"):  # a whole value of the gazetteer
                drawn = [out]
            else:
                kept = set(re.findall(r"[A-Za-z]+", value))
                drawn = [w for w in re.findall(r"[A-Za-z]+", out)
                         if w not in kept and w.casefold() not in _SUFFIXES]
            assert drawn and all(half_of(w) is half for w in drawn), (label, n)


# Street suffixes a street surrogate draws from its own short list.
_SUFFIXES = {"street", "st", "road", "rd", "avenue", "ave", "lane", "ln", "drive",
             "dr", "court", "ct", "place", "pl", "boulevard", "blvd", "terrace",
             "ter", "circle", "cir", "parkway", "pkwy", "highway", "hwy", "square",
             "sq", "trail", "trl", "way"}


def test_when_run_rewrites_then_surrogates_are_those_of_before_halves():
    # Production draws from the whole pool: these surrogates are what
    # the code before pool halves gave for this key (computed with it).
    ctx = RewriteContext(key=b"pool halves golden key", person_id="person-1",
                         as_of_year=2026)
    assert {v: surrogate(v, label, ctx) for v, label in GOLDEN} == {
        v: out for (v, _), out in GOLDEN.items()}


GOLDEN = {
    ("John Smith", "PATIENT"): "James Freeman",
    ("Dr. Anna Sousa", "DOCTOR"): "Dr. Nicole Graham",
    ("mary", "RELATIVE"): "megan",
    ("Springfield", "CITY"): "Roosevelt",
    ("MD", "STATE"): "NY",
    ("Maryland", "STATE"): "Georgia",
    ("12 Oak Street", "STREET"): "56 Guzman Parkway",
    ("Mercy Hospital", "HOSPITAL"): "Bradenton Hospital",
    ("St. Agnes'", "HOSPITAL"): "St. Sean'",
    ("Baltimore Rehab", "LOCATION"): "Delano Rehab",
    ("France", "COUNTRY"): "Jersey",
    ("W123456789", "HEALTHPLAN"): "G638098047",
}


def test_when_run_rewrites_then_it_draws_from_both_halves():
    ctx = RewriteContext(key=b"whole pool", person_id="p", as_of_year=2026)
    halves = {half_of(surrogate(f"Name{n}x", "DOCTOR", ctx)) for n in range(60)}
    assert halves == {TRAINING, EVALUATION}


_NAME_LABELS = ("PATIENT", "DOCTOR", "RELATIVE")


def test_when_synthetic_training_corpus_loaded_then_its_names_are_training_half():
    from deid_pipeline.training.train import load_training_corpus

    docs = load_training_corpus("synthetic:40")
    names = cities = 0
    for doc in docs:
        for span in doc.gold:
            value = doc.text[span.start:span.end]
            if span.label in _NAME_LABELS:
                words = [w for w in re.findall(r"[A-Za-z]{3,}", value)
                         if w.casefold() not in ("drs", "and")]
                names += len(words)
                assert all(half_of(w) is TRAINING for w in words), span.label
            elif span.label == "CITY":
                cities += 1
                assert half_of(value) is TRAINING
    assert names > 200 and cities > 10


def test_when_synthetic_notes_generated_without_a_half_then_unchanged_bytes():
    from deid_pipeline.synthetic import generate_notes

    plain = generate_notes(5, seed=3)
    assert plain == generate_notes(5, seed=3, pool=None)
    assert plain != generate_notes(5, seed=3, pool=TRAINING)


def test_when_whole_pools_chosen_then_training_data_draws_from_both_halves():
    """``train --pools whole`` (a model for use): copies and synthetic notes
    draw names from every list, the evaluation half included; the default does not."""
    from deid_pipeline.model import ClinicalDocument, PhiSpan
    from deid_pipeline.training.augment import augmented_copy
    from deid_pipeline.training.crf import POOLS
    from deid_pipeline.training.train import load_training_corpus

    def name_halves(docs):
        return {half_of(w) for d in docs for s in d.gold if s.label in _NAME_LABELS
                for w in re.findall(r"[A-Za-z]{3,}", d.text[s.start:s.end])
                if w.casefold() not in ("drs", "and")}

    assert name_halves(load_training_corpus("synthetic:20", pools="whole")) == {
        TRAINING, EVALUATION}
    assert name_halves(load_training_corpus("synthetic:20")) == {TRAINING}
    text = "Pt seen by Dr. Hollis; son Marcus Webb visited."
    note = ClinicalDocument("n1", text, "physionet", gold=(
        PhiSpan(15, 21, "DOCTOR", "gold"), PhiSpan(27, 38, "RELATIVE", "gold")))
    whole = [augmented_copy(note, c, pool=POOLS["whole"]) for c in range(1, 40)]
    default = [augmented_copy(note, c) for c in range(1, 40)]
    assert name_halves(whole) == {TRAINING, EVALUATION}
    assert name_halves(default) == {TRAINING}
