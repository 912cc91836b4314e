"""The compiled kernels of :mod:`deid_pipeline.tagger.crf_decoder` (numba).

State scores, forward-backward marginals and the Viterbi path, in CRFsuite's
own order of operations; the path apart, as only some callers read it. A
module of their own so that importing the decoder (reading a model, its
labels and metadata) does not import numba: the run's
client process reads the model's header and never decodes. Compiled once and
cached beside this file (``cache=True``); no state between calls, no GIL.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def marginal_arrays(ids, offsets, state_rows, trans):  # pragma: no cover
    """State scores, marginals and log partition of one sequence (no path).

    The state scores come back for :func:`best_path`, which a caller runs
    only when it reads the path.
    """
    n_labels = trans.shape[0]
    state = np.ascontiguousarray(_state_scores(ids, offsets, state_rows)[:, :n_labels])
    # Forward-backward's inner loops run over a multiple of the vector width
    # (no scalar tail after each row): the extra columns are zeros, which add
    # nothing to any label's sum.
    width = -(-n_labels // 4) * 4
    exp_trans = np.zeros((n_labels, width))
    exp_trans[:, :n_labels] = np.exp(trans)
    exp_trans_t = np.zeros((n_labels, width))
    exp_trans_t[:, :n_labels] = exp_trans[:, :n_labels].T
    marginals, log_norm = _forward_backward(state, exp_trans, exp_trans_t)
    return state, marginals, log_norm


@numba.njit(cache=True, nogil=True)
def best_path(state, trans):  # pragma: no cover
    """The Viterbi path of a sequence's state scores, and its score."""
    path = _viterbi(state, trans)
    score = state[0, path[0]]
    for t in range(1, state.shape[0]):
        score += trans[path[t - 1], path[t]] + state[t, path[t]]
    return path, score


@numba.njit(cache=True, nogil=True)
def _state_scores(ids, offsets, state_rows):  # pragma: no cover
    """CRFsuite's state scores: each token's attributes' weights, in item order.

    Padded to the rows' width; the caller drops the padding.
    """
    n_tokens = offsets.shape[0] - 1
    width = state_rows.shape[1]
    state = np.zeros((n_tokens, width))
    for t in range(n_tokens):
        score = state[t]
        for k in range(offsets[t], offsets[t + 1]):
            a = ids[k]
            if a >= 0:
                row = state_rows[a]
                for j in range(width):
                    score[j] += row[j]
    return state


@numba.njit(cache=True, nogil=True)
def _viterbi(state, trans):  # pragma: no cover
    """Best label path; ties go to the lowest label id, as in CRFsuite.

    The forward pass keeps only each label's best score (a max over the
    previous labels, branch-free so that it vectorizes) and remembers every
    position's scores; the back-pointer is recomputed only for the label the
    path takes, as the first previous label that reaches that score in id
    order: CRFsuite's choice, from the same sums. The running max goes from
    one buffer to the other: updated in place, its store was conditional
    (a masked store, 3x slower than writing every element).
    """
    n_tokens, n_labels = state.shape
    score = np.empty((n_tokens, n_labels))
    score[0] = state[0]
    buffers = np.empty((2, n_labels))
    for t in range(1, n_tokens):
        prev = score[t - 1]
        best, other = buffers[0], buffers[1]
        best[:] = -np.inf
        for i in range(n_labels):
            p = prev[i]
            row = trans[i]
            for j in range(n_labels):
                x = p + row[j]
                b = best[j]
                other[j] = x if x > b else b
            best, other = other, best
        for j in range(n_labels):
            score[t, j] = best[j] + state[t, j]
    path = np.empty(n_tokens, np.int64)
    last = score[n_tokens - 1]
    top = -np.inf
    arg = 0
    for j in range(n_labels):
        if top < last[j]:
            top = last[j]
            arg = j
    path[n_tokens - 1] = arg
    for t in range(n_tokens - 1, 0, -1):
        j = path[t]
        prev = score[t - 1]
        target = -np.inf
        arg = 0
        for i in range(n_labels):
            value = prev[i] + trans[i, j]
            if target < value:
                target = value
                arg = i
        path[t - 1] = arg
    return path


@numba.njit(cache=True, nogil=True)
def _forward_backward(state, exp_trans, exp_trans_t):  # pragma: no cover
    """Marginals and log partition, scaled per position as CRFsuite does.

    Each position's state scores are shifted by their maximum before ``exp``
    (added back to the log partition), so no score can overflow. Sums run in
    CRFsuite's order; the inner loops work on separate buffers so that they
    vectorize. ``exp_trans`` and its transpose may have zero columns past
    the last label (the buffers get them too, and they stay zero).
    """
    n_tokens, n_labels = state.shape
    width = exp_trans.shape[1]
    shift = np.empty(n_tokens)
    exp_state = np.empty((n_tokens, n_labels))
    for t in range(n_tokens):
        shift[t] = state[t].max()
        for j in range(n_labels):
            exp_state[t, j] = np.exp(state[t, j] - shift[t])
    alpha = np.empty((n_tokens, n_labels))
    beta = np.empty((n_tokens, n_labels))
    scale = np.empty(n_tokens)
    buffers = np.zeros((2, width))
    cur, prev = buffers[0], buffers[1]
    for t in range(n_tokens):
        if t == 0:
            cur[:n_labels] = exp_state[0]
        else:
            cur[:] = 0.0
            for i in range(n_labels):
                p = prev[i]
                row = exp_trans[i]
                for j in range(width):
                    cur[j] += p * row[j]
            for j in range(n_labels):
                cur[j] *= exp_state[t, j]
        total = 0.0
        for j in range(n_labels):
            total += cur[j]
        scale[t] = 1.0 / total if total != 0.0 else 1.0
        for j in range(n_labels):
            cur[j] *= scale[t]
            prev[j] = cur[j]
            alpha[t, j] = cur[j]
    # beta[t, i] = scale[t] * sum_j exp_trans[i, j] * exp_state[t+1, j] * beta[t+1, j]
    # (summed over j in id order, CRFsuite's dot product).
    prev[:n_labels] = scale[n_tokens - 1]
    beta[n_tokens - 1] = prev[:n_labels]
    for t in range(n_tokens - 2, -1, -1):
        cur[:] = 0.0
        for j in range(n_labels):
            w = prev[j] * exp_state[t + 1, j]
            column = exp_trans_t[j]
            for i in range(width):
                cur[i] += column[i] * w
        for i in range(n_labels):
            prev[i] = cur[i] * scale[t]
            beta[t, i] = prev[i]
    marginals = np.empty((n_tokens, n_labels))
    log_norm = 0.0
    for t in range(n_tokens):
        for j in range(n_labels):
            marginals[t, j] = alpha[t, j] * beta[t, j] / scale[t]
        log_norm += shift[t] - np.log(scale[t])
    return marginals, log_norm
