"""The encoder's rows of token texts: bounded, and never a different id."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from deid_pipeline.tagger.crf_decoder import read_model
from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH
from deid_pipeline.tagger.features import FeatureEncoder, document_features
from deid_pipeline.tagger.text_rows import NewRow, TextRows
from deid_pipeline.tokenizer import tokenize


@pytest.fixture(scope="module")
def attribute_ids() -> dict[str, int]:
    with open(DEFAULT_MODEL_PATH, "rb") as fh:
        return read_model(fh.read()).attribute_ids


def _expected(doc, encoder: FeatureEncoder, attribute_ids) -> list[int]:
    from deid_pipeline.tagger.features import without_clusters

    feats = document_features(doc)
    if not encoder.clusters:
        feats = without_clusters(feats)
    return [attribute_ids.get(f, -1) for token in feats for f in token]


def test_when_the_rows_turn_over_again_and_again_then_ids_are_unchanged(
        physionet_docs, attribute_ids):
    # 40 texts a generation against notes of a hundred distinct texts and
    # more: every note turns the rows over, and texts of the last note come
    # back from the previous generation.
    encoder = FeatureEncoder(attribute_ids)
    encoder._rows = TextRows(encoder._rows._pad, 40)
    docs = [d for d in physionet_docs[:30] if d.text.strip()]
    for doc in docs + docs[::-1]:
        ids, _ = encoder.encode(doc)
        assert ids.tolist() == _expected(doc, encoder, attribute_ids), doc.doc_id
        # At most a generation, or one document's texts in a new one.
        assert len(encoder._rows) <= max(40, len({t.text for t in tokenize(doc.text)}))


def test_a_text_met_again_after_a_turnover_keeps_its_row_data():
    pad = NewRow(np.array([7]), (1, 0), 0, (0, 0), "")
    made: list[str] = []

    def make(text: str) -> NewRow:
        made.append(text)
        return NewRow(np.arange(len(text) + 1), (len(text), 1), len(text), (1, 2),
                      text.lower())

    table = TextRows(pad, 3)
    first = table.rows(["Moss", "saw", "Moss"], make)
    assert first.rows.tolist() == [1, 2, 1] and made == ["Moss", "saw"]
    assert first.word[first.rows].tolist() == [1, 2, 1]
    again = table.rows(["Moss", "called", "x"], make)  # no room: a new generation
    assert made == ["Moss", "saw", "called", "x"]  # Moss copied, not made again
    row = int(again.rows[0])
    start, length = again.start[row], again.length[row]
    assert again.pool[start[0]:start[0] + length.sum()].tolist() == [0, 1, 2, 3, 4]
    assert length.tolist() == [4, 1] and again.code[row] == 4
    assert again.letters[row].tolist() == [1, 2] and again.lowers[row] == "moss"
    assert again.pool[again.start[0, 0]] == 7  # row 0 is the pad in every generation


def test_a_long_document_of_texts_held_keeps_its_generation():
    # A 100,000-character part has more tokens than a generation holds texts:
    # only new texts count towards the limit.
    pad = NewRow(np.array([7]), (1,), 0, (0, 0), "")
    made: list[str] = []

    def make(text: str) -> NewRow:
        made.append(text)
        return NewRow(np.array([len(made)]), (1,), 0, (0, 0), text)

    table = TextRows(pad, 3)
    table.rows(["a", "b"], make)
    generation = table._current
    held = table.rows(["a", "b"] * 50, make)
    assert table._current is generation and made == ["a", "b"]
    assert held.rows.tolist() == [1, 2] * 50
    table.rows(["c", "d"], make)  # two new texts do not fit: a new generation
    assert table._current is not generation and len(table) == 2


def test_threads_sharing_an_encoder_get_the_ids_of_one(physionet_docs, attribute_ids):
    encoder = FeatureEncoder(attribute_ids)
    encoder._rows = TextRows(encoder._rows._pad, 200)  # turnovers while they run
    docs = [d for d in physionet_docs[:40] if d.text.strip()]
    expected = {d.doc_id: _expected(d, encoder, attribute_ids) for d in docs}
    failures: list[str] = []

    def work(order):
        for doc in order:
            if encoder.encode(doc)[0].tolist() != expected[doc.doc_id]:
                failures.append(doc.doc_id)

    threads = [threading.Thread(target=work, args=(docs[k::3] * 3,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
