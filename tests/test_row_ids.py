"""A new text's row of ids (``row_ids.RowIds``) against looking up its strings.

The encoder finds most of a new text's ids without spelling the strings of
its base record; they must be exactly ``attribute_ids.get(s, -1)`` of each
string ``features._base`` spells, block by block and in order: for every
distinct text of real notes, for odd texts, and for a model whose
attributes name Brown clusters and every kind of feature.
"""

from __future__ import annotations

import itertools

import pytest

from deid_pipeline.tagger import clusters as clusters_module
from deid_pipeline.tagger import features
from deid_pipeline.tagger import lexicons as lexicons_module
from deid_pipeline.tagger.crf_model import load_model
from deid_pipeline.tagger.row_ids import RowIds
from deid_pipeline.tokenizer import tokenize

ODD_TEXTS = ["MCMXCIV", "IV", "x", "X", "7", "0042", "1999", "123456789012", "\x00",
             "a\x00b", "Ünïcødé", "ÉCOLE", "ß", "İ", "٣٤", "—", ".", "''", "O'Neil",
             "Smith-Jones", "McDONALD", "aBcDeFgHiJkLmNoP", "x" * 40, "#", "w=",
             "1w=", "-2s=Xx"]


def _texts(docs) -> list[str]:
    seen = dict.fromkeys(ODD_TEXTS)
    for doc in docs:
        seen.update(dict.fromkeys(t[0] for t in tokenize(doc.text)))
    return list(seen)


def _spelled_ids(attribute_ids: dict[str, int], base) -> tuple[list[int], tuple]:
    blocks = base[:9]
    ids = [attribute_ids.get(s, -1) for s in itertools.chain.from_iterable(blocks)]
    return ids, tuple(map(len, blocks))


def test_when_the_shipped_model_then_every_text_gets_the_ids_of_its_strings(
        physionet_docs):
    attribute_ids = load_model(None).weights.attribute_ids
    rows = RowIds(attribute_ids, features._OFFSETS, features._NEAR_OFFSETS)
    lex = lexicons_module.load()
    texts = _texts(physionet_docs[:400])
    assert len(texts) > 5000
    known = 0
    for text in texts:
        parts = features._parts(text, lex, features._NO_CLUSTERS)
        expected = _spelled_ids(attribute_ids,
                                features._base(text, lex, features._NO_CLUSTERS))
        assert rows.row(parts) == expected, text
        known += sum(1 for i in expected[0] if i >= 0)
    assert known > len(texts)  # the model knows many of these strings


@pytest.mark.parametrize("kept_limit", [None, 3])
def test_when_the_model_names_clusters_and_every_kind_then_the_ids_are_the_same(
        physionet_docs, monkeypatch, kept_limit):
    if kept_limit is not None:  # values forgotten and found again
        monkeypatch.setattr("deid_pipeline.tagger.row_ids._KEPT_LIMIT", kept_limit)
    lex = lexicons_module.load()
    table = clusters_module.load()
    texts = _texts(physionet_docs[:60])
    bases = {text: features._base(text, lex, table) for text in texts}
    # A model that knows every other string these texts spell, so that both
    # known and unknown ids of every kind (clusters' too) are checked.
    strings = sorted({s for base in bases.values()
                      for s in itertools.chain.from_iterable(base[:9])})
    assert any(s.startswith("bc") for s in strings)
    assert any(s.startswith("-1bc") for s in strings)
    attribute_ids = {s: i for i, s in enumerate(strings[::2])}
    rows = RowIds(attribute_ids, features._OFFSETS, features._NEAR_OFFSETS)
    for text in texts:
        parts = features._parts(text, lex, table)
        assert rows.row(parts) == _spelled_ids(attribute_ids, bases[text]), text
