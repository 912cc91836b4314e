"""A long line, or a long document, is tagged as well as the same words alone.

A token's document-wide features (how often its word occurs, the case of the
text around it) and its line features (position, the line's ``KEY:``) used to
be read off the whole text: a note pasted into a line of 100,000 other tokens
was tagged from the filler's statistics. They now stop a bounded number of
tokens away (``tagger/features.py``), so only the few tokens at a note's
edges, whose CRF context window reaches into the filler, can differ.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from faker import Faker

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger
from deid_pipeline.tokenizer import tokenize

# PHI-free nursing words, in the case mixes notes come in.
_FILLER_WORDS = (
    "pt resting comfortably, no acute distress. VS stable. lungs clear bilat, "
    "abd soft NT/ND, +BS. Tolerating diet. Voiding qs. Skin intact. Will "
    "continue to monitor. NEURO: alert and oriented x3, MAE. CV: NSR no ectopy. "
    "RESP: on room air, sats 97%. GI: BM x1 soft brown. Pain controlled with "
    "tylenol. PLAN: cont current mgmt, encourage ambulation."
).split()


def _filler(tokens: int, seed: int) -> str:
    rng = random.Random(seed)
    words = []
    while len(tokenize(" ".join(words))) < tokens:
        words.extend(rng.choice(_FILLER_WORDS) for _ in range(2000))
    text = " ".join(words)
    cut = tokenize(text)[tokens - 1][2]
    return text[:cut]


@pytest.fixture(scope="module")
def tagger():
    return PhiTagger.from_config(TaggerConfig())


def _covered(spans, start: int, end: int) -> bool:
    return any(s.start <= start and end <= s.end for s in spans)


@pytest.mark.parametrize("length", [10, 1_000, 100_000])
def test_when_names_dates_and_ids_stand_anywhere_on_a_long_line_then_all_are_found(
        tagger, length):
    fake = Faker()
    fake.seed_instance(length)
    name = f"{fake.first_name()} {fake.last_name()}"
    sentence = (f"Seen today by Dr. {name}, admitted 3/14/2091, MRN 4412983, "
                f"call 617-555-0142.")
    values = (name, "3/14/2091", "4412983", "617-555-0142")
    filler = _filler(length, seed=length)
    half = filler.rfind(" ", 0, len(filler) // 2)
    for where, (before, after) in {
        "start": ("", " " + filler),
        "middle": (filler[:half] + " ", filler[half:]),
        "end": (filler + " ", ""),
    }.items():
        text = before + sentence + after
        doc = ClinicalDocument(f"line-{length}-{where}", text, "text")
        spans = tagger.tag(doc).spans
        for value in values:
            at = text.index(value, len(before))
            assert _covered(spans, at, at + len(value)), (length, where, value)


def _flat(doc: ClinicalDocument) -> str:
    return " ".join(doc.text.split())


def _gold_tokens(doc: ClinicalDocument, text: str, spans, offset: int,
                 edge: int = 4) -> set[tuple[int, int]]:
    """Gold PHI tokens of the note that ``spans`` cover (not its ``edge`` ends)."""
    tokens = tokenize(text)[edge:-edge]
    gold = [(s.start, s.end) for s in doc.gold]
    out = set()
    for _, start, end, *_ in tokens:
        if any(g0 <= start and end <= g1 for g0, g1 in gold) and _covered(
                spans, start + offset, end + offset):
            out.add((start, end))
    return out


def test_when_notes_stand_anywhere_on_a_100k_token_line_then_their_phi_is_found(
        tagger, physionet_docs):
    """Three real notes, flattened, on one line with 100,000 tokens of filler."""
    notes = []
    for doc in sorted(physionet_docs, key=lambda d: (-len(d.gold), d.doc_id))[:3]:
        flat = _flat(doc)
        # The gold re-placed onto the flattened text (spaces only collapse).
        gold = []
        for s in doc.gold:
            value = " ".join(doc.text[s.start:s.end].split())
            at = flat.find(value)
            if at >= 0:
                gold.append(dataclasses.replace(s, start=at, end=at + len(value)))
        notes.append(dataclasses.replace(doc, text=flat, gold=tuple(gold)))
    alone = [_gold_tokens(n, n.text, tagger.tag(n).spans, 0) for n in notes]
    assert all(alone)
    filler = _filler(50_000, seed=1)
    for rotation in range(3):
        order = notes[rotation:] + notes[:rotation]
        parts = [order[0].text, filler, order[1].text, filler, order[2].text]
        line = " ".join(parts)
        spans = tagger.tag(ClinicalDocument(f"line-{rotation}", line, "text")).spans
        offset = 0
        for part in parts:
            if part is not filler:
                k = notes.index(next(n for n in notes if n.text is part))
                found = _gold_tokens(notes[k], part, spans, offset)
                assert alone[k] <= found, (rotation, notes[k].doc_id)
            offset += len(part) + 1


def test_when_text_far_away_changes_then_a_tokens_features_do_not():
    """What stands more than 2,048 tokens away (here upper-case filler with
    ``KEY:`` words and repeats of the note's words) changes no feature of the note."""
    from deid_pipeline.tagger.features import document_features

    note = ("Pt seen by Dr. Harold Whitcombe today, wife Maria at bedside. "
            "Plan: follow up 3/14 with cardiology, call 617-555-0142.")
    near = _filler(2_100, seed=2)
    far_a = _filler(30_000, seed=3)
    far_b = " ".join(f"NOTE: {w.upper()} HAROLD WHITCOMBE MARIA"
                     for w in _filler(6_000, seed=4).split())
    n = len(tokenize(note))
    one = document_features(" ".join((note, near, far_a)))[:n]
    other = document_features(" ".join((note, near, far_b)))[:n]
    assert one == other
    # The note alone differs only where the near filler is within reach.
    assert document_features(note) != one
