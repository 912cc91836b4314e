"""The CRF decoder agrees with CRFsuite's own tagger on real notes and models."""

from __future__ import annotations

import numpy as np
import pycrfsuite
import pytest

from deid_pipeline.tagger.crf_decoder import (
    CrfWeights,
    ModelFormatError,
    decode,
    read_model,
)
from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH, load_model
from deid_pipeline.tagger.features import document_features
from deid_pipeline.tokenizer import tokenize


def _crfsuite_tagger(path: str) -> pycrfsuite.Tagger:
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return tagger


def _note_features(physionet_docs, count: int) -> list[list[list[str]]]:
    docs = [d for d in physionet_docs[:count] if d.text.strip()]
    return [document_features(d, tuple(tokenize(d.text))) for d in docs]


@pytest.fixture(scope="module")
def shipped() -> tuple[CrfWeights, pycrfsuite.Tagger]:
    with open(DEFAULT_MODEL_PATH, "rb") as fh:
        weights = read_model(fh.read())
    return weights, _crfsuite_tagger(DEFAULT_MODEL_PATH)


def test_model_file_reads_as_crfsuite_dumps_it(shipped):
    weights, tagger = shipped
    info = tagger.info()
    assert weights.labels == tuple(tagger.labels())
    state = weights.state_weights()
    assert state.keys() == info.state_features.keys()
    # CRFsuite's dump prints six decimals; the file holds the doubles.
    assert max(abs(state[k] - w) for k, w in info.state_features.items()) < 1e-6
    index = {label: i for i, label in enumerate(weights.labels)}
    for (a, b), w in info.transitions.items():
        assert weights.transitions[index[a], index[b]] == pytest.approx(w, abs=1e-6)


def test_path_and_marginals_equal_crfsuite_on_real_notes(shipped, physionet_docs):
    weights, tagger = shipped
    checked = 0
    for feats in _note_features(physionet_docs, 40):
        ours = decode(weights, feats)
        tagger.set(feats)
        path = tagger.tag()
        assert [weights.labels[i] for i in ours.path] == path
        assert ours.probability == pytest.approx(tagger.probability(path), rel=1e-9)
        for t in range(len(feats)):
            for label_id, label in enumerate(weights.labels):
                assert ours.marginals[t, label_id] == pytest.approx(
                    tagger.marginal(label, t), abs=1e-12)
        checked += len(feats)
    assert checked > 2000


def test_marginals_are_distributions_and_path_is_their_best_sequence(shipped,
                                                                      physionet_docs):
    weights, _ = shipped
    feats = _note_features(physionet_docs, 3)[0]
    ours = decode(weights, feats)
    np.testing.assert_allclose(ours.marginals.sum(axis=1), 1.0, atol=1e-12)
    assert 0.0 < ours.probability <= 1.0
    assert ours.path.shape == (len(feats),)


def test_unknown_attributes_are_ignored_as_crfsuite_ignores_them(shipped):
    weights, tagger = shipped
    feats = [["w=the", "no-such-attribute"], ["zzz-unknown"], []]
    ours = decode(weights, feats)
    tagger.set(feats)
    assert [weights.labels[i] for i in ours.path] == tagger.tag()
    bare = decode(weights, [["w=the"], [], []])
    np.testing.assert_array_equal(ours.marginals, bare.marginals)


def test_huge_weights_do_not_overflow():
    # Two labels, one attribute pushing label 1 by far more than exp() can hold.
    weights = CrfWeights(
        labels=("O", "B-NAME"), attribute_ids={"w=x": 0},
        ref_ptr=np.array([0, 1]), ref_label=np.array([1]),
        ref_weight=np.array([5000.0]), transitions=np.zeros((2, 2)))
    out = decode(weights, [["w=x"], ["w=x"], ["other"]])
    assert np.isfinite(out.marginals).all()
    assert out.path.tolist()[:2] == [1, 1]
    assert out.marginals[0, 1] == pytest.approx(1.0)
    assert out.marginals[2, 0] == pytest.approx(0.5)


def test_a_single_token_sequence_decodes(shipped):
    weights, tagger = shipped
    ours = decode(weights, [["w=smith", "INITCAPS"]])
    tagger.set([["w=smith", "INITCAPS"]])
    assert [weights.labels[i] for i in ours.path] == tagger.tag()
    assert ours.marginals.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("mangle", [
    lambda d: b"",
    lambda d: b"not a model at all, just some bytes" * 3,
    lambda d: d[:40],
    lambda d: d[:200],
    lambda d: d[:4] + b"\x00" * 8 + d[12:],
])
def test_when_bytes_are_not_a_model_then_format_error(mangle):
    with open(DEFAULT_MODEL_PATH, "rb") as fh:
        data = fh.read()
    with pytest.raises(ModelFormatError):
        read_model(mangle(data))


def test_loaded_model_is_shared_state_free(physionet_docs):
    model = load_model(None)
    feats = _note_features(physionet_docs, 2)[0]
    first = model.decode(feats)
    again = model.decode(feats)
    np.testing.assert_array_equal(first.marginals, again.marginals)
    np.testing.assert_array_equal(first.path, again.path)
    assert first is not again and first.probability == again.probability


def test_an_empty_sequence_decodes_to_nothing(shipped):
    weights, _ = shipped
    out = decode(weights, [])
    assert out.path.shape == (0,) and out.marginals.shape == (0, len(weights.labels))


def _crfsuite_viterbi(state: np.ndarray, trans: np.ndarray) -> list[int]:
    """CRFsuite's Viterbi as written: each label keeps the first strictly better
    predecessor in id order, and the last position the first best label."""
    n, labels = state.shape
    score = state[0].copy()
    back = np.zeros((n, labels), np.int64)
    for t in range(1, n):
        new = np.empty(labels)
        for j in range(labels):
            best, arg = -np.inf, 0
            for i in range(labels):
                if best < score[i] + trans[i, j]:
                    best, arg = score[i] + trans[i, j], i
            new[j], back[t, j] = best + state[t, j], arg
        score = new
    path = [int(np.argmax(score))]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return path[::-1]


@pytest.mark.parametrize("seed", range(20))
def test_viterbi_breaks_ties_as_crfsuite_does(seed):
    """Small integer scores tie often: the path must still be CRFsuite's."""
    from deid_pipeline.tagger.crf_kernels import best_path

    rng = np.random.default_rng(seed)
    state = rng.integers(0, 3, (12, 5)).astype(float)
    trans = rng.integers(-1, 2, (5, 5)).astype(float)
    assert best_path(state, trans)[0].tolist() == _crfsuite_viterbi(state, trans)


def test_decoding_a_document_equals_decoding_its_feature_strings(physionet_docs):
    model = load_model(None)
    for doc in physionet_docs[:40]:
        tokens = tuple(tokenize(doc.text))
        strings = model.decode(document_features(doc, tokens))
        ids = model.decode_document(doc, tokens)
        np.testing.assert_array_equal(ids.path, strings.path)
        np.testing.assert_array_equal(ids.marginals, strings.marginals)
        assert ids.probability == strings.probability


def test_a_path_read_later_is_the_path_decoded_at_once(shipped, physionet_docs):
    """Viterbi runs when the path is first read; the result is what it was."""
    weights, tagger = shipped
    for feats in _note_features(physionet_docs, 5):
        ours = decode(weights, feats)
        marginals = ours.marginals.copy()
        tagger.set(feats)
        path = tagger.tag()
        assert "_best" not in vars(ours)  # not decoded yet
        assert [weights.labels[i] for i in ours.path] == path
        assert ours.probability == pytest.approx(tagger.probability(path), rel=1e-9)
        np.testing.assert_array_equal(ours.marginals, marginals)
