"""The CRF's compiled kernels (``tagger/_kernels.c``) against plain loops.

The marginals are read against thresholds and written as confidences, so
they must be CRFsuite's sums term by term: equal to the bit to the same sums
in Python floats (a compiler that fused a multiply-add, or reassociated a sum,
moves the last bits, and this test with them). Also: what the kernels refuse,
threads, and arrays in other layouts.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from deid_pipeline.tagger import _kernels
from deid_pipeline.tagger.crf import tokenize
from deid_pipeline.tagger.crf_kernels import best_path, marginal_arrays
from deid_pipeline.tagger.crf_model import load_model
from deid_pipeline.tagger.feature_kernels import lay_out_ids

TOKENS = 60  # of each note: the plain loops take a second a note at this length


def _plain_marginals(state: np.ndarray, trans: np.ndarray) -> tuple[list, float]:
    """Forward-backward in Python floats, in CRFsuite's order of operations."""
    n, labels = state.shape
    exp_trans = [[math.exp(trans[i][j]) for j in range(labels)] for i in range(labels)]
    shift = [max(row) for row in state.tolist()]
    exp_state = [[math.exp(state[t][j] - shift[t]) for j in range(labels)]
                 for t in range(n)]
    alpha, scale = [], []
    prev: list[float] = []
    for t in range(n):
        if t == 0:
            cur = list(exp_state[0])
        else:
            cur = [0.0] * labels
            for i in range(labels):
                for j in range(labels):
                    cur[j] += prev[i] * exp_trans[i][j]
            cur = [cur[j] * exp_state[t][j] for j in range(labels)]
        total = 0.0
        for value in cur:
            total += value
        scale.append(1.0 / total if total != 0.0 else 1.0)
        prev = [value * scale[t] for value in cur]
        alpha.append(prev)
    beta = [None] * n
    prev = [scale[n - 1]] * labels
    beta[n - 1] = prev
    for t in range(n - 2, -1, -1):
        cur = [0.0] * labels
        for j in range(labels):
            w = prev[j] * exp_state[t + 1][j]
            for i in range(labels):
                cur[i] += exp_trans[i][j] * w
        prev = [value * scale[t] for value in cur]
        beta[t] = prev
    marginals = [[alpha[t][j] * beta[t][j] / scale[t] for j in range(labels)]
                 for t in range(n)]
    log_norm = 0.0
    for t in range(n):
        log_norm += shift[t] - math.log(scale[t])
    return marginals, log_norm


def _encoded(model, doc, limit: int | None = None):
    tokens = tuple(tokenize(doc.text))[:limit]
    return model.encoder.encode(doc, tokens)


def test_when_real_notes_then_the_marginals_are_the_plain_sums_to_the_bit(
        physionet_docs):
    model = load_model(None)
    weights = model.weights
    checked = 0
    for doc in physionet_docs[:40:4]:
        ids, offsets = _encoded(model, doc, TOKENS)
        if len(offsets) < 2:
            continue
        state, marginals, log_norm = marginal_arrays(ids, offsets, weights.state_rows,
                                                     weights.transitions)
        expected_state = np.zeros_like(state)
        for t in range(len(offsets) - 1):
            for a in ids[offsets[t]:offsets[t + 1]]:
                if a >= 0:
                    expected_state[t] += weights.state_rows[a, :state.shape[1]]
        assert np.array_equal(state, expected_state)
        plain, plain_norm = _plain_marginals(state, weights.transitions)
        assert marginals.tolist() == plain
        assert log_norm == plain_norm
        checked += 1
    assert checked >= 8


def test_when_threads_decode_at_once_then_each_gets_what_it_gets_alone(
        physionet_docs):
    model = load_model(None)
    weights = model.weights
    encoded = [_encoded(model, doc) for doc in physionet_docs[:60]]
    encoded = [e for e in encoded if len(e[1]) > 1]
    alone = [marginal_arrays(ids, offsets, weights.state_rows, weights.transitions)
             for ids, offsets in encoded]
    results: dict[int, list] = {}

    def decode(k: int) -> None:
        results[k] = [marginal_arrays(ids, offsets, weights.state_rows,
                                      weights.transitions) for ids, offsets in encoded]

    threads = [threading.Thread(target=decode, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(4):
        for (s1, m1, n1), (s2, m2, n2) in zip(results[k], alone, strict=True):
            assert np.array_equal(s1, s2) and np.array_equal(m1, m2) and n1 == n2


def test_when_arrays_come_in_another_layout_then_the_results_are_the_same(
        physionet_docs):
    model = load_model(None)
    weights = model.weights
    ids, offsets = _encoded(model, physionet_docs[0])
    state, marginals, _ = marginal_arrays(ids, offsets, weights.state_rows,
                                          weights.transitions)
    strided = np.repeat(ids, 2)[::2]  # not contiguous
    assert not strided.flags["C_CONTIGUOUS"]
    again = marginal_arrays(strided, offsets.astype(np.int32), weights.state_rows,
                            np.asfortranarray(weights.transitions))
    assert np.array_equal(again[0], state) and np.array_equal(again[1], marginals)
    path, score = best_path(np.asfortranarray(state), weights.transitions)
    assert np.array_equal(path, best_path(state, weights.transitions)[0])
    assert np.isfinite(score)
    assert best_path(state[:0], weights.transitions)[0].size == 0


def test_when_arguments_are_wrong_then_the_kernels_refuse_them():
    rows = np.zeros((3, 4))
    trans = np.zeros((3, 3))
    offsets = np.array([0, 2], np.int64)
    with pytest.raises(ValueError, match="attribute id"):
        marginal_arrays(np.array([0, 3], np.int64), offsets, rows, trans)
    with pytest.raises(ValueError, match="span"):
        marginal_arrays(np.array([0, 1, 2], np.int64), offsets, rows, trans)
    with pytest.raises(ValueError, match="decrease"):
        marginal_arrays(np.array([0, 1], np.int64), np.array([0, 2, 1, 2], np.int64),
                        rows, trans)
    with pytest.raises(ValueError):
        _kernels.marginal_arrays(b"\0" * 16, np.array([0, 2], np.int64).tobytes(),
                                 rows.tobytes(), 4, trans.tobytes(), 5)
    with pytest.raises(ValueError):
        _kernels.best_path(np.zeros(7).tobytes(), 3, trans.tobytes())
    with pytest.raises(TypeError):
        _kernels.best_path("text", 3, trans.tobytes())


def test_when_a_token_names_a_row_past_the_pool_then_the_layout_refuses_it():
    one = np.zeros(1, np.int64)
    args = [np.zeros(4, np.int64), np.zeros((2, 1), np.int64),
            np.ones((2, 1), np.int64), one, np.array([5], np.int64), -one - 1, one,
            -one - 1, -one - 1, -one - 1,
            np.zeros(1, np.bool_), one[:0], one[:0], np.zeros(8, np.int64), 1, 2, 3,
            one[:0], one[:0], one[:0], one[:0], np.zeros((2, 2), np.int64)]
    with pytest.raises(ValueError, match="row out of range"):
        lay_out_ids(*args)
    args[4] = np.array([1], np.int64)
    ids, offsets = lay_out_ids(*args)
    assert offsets.tolist() == [0, len(ids)]
