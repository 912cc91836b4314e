"""The CRF decoder's kernels: state scores, forward-backward marginals, Viterbi.

In CRFsuite's own order of operations; the path apart, as only some callers
read it. Compiled C (``_kernels.c``, built with the package): these were numba
functions, and importing numba and loading their cache cost every tagging
process 0.2-0.3 s of start-up and 60-80 MiB, and a fresh install compiled
them for about 8 s. Here each function checks and converts its arguments and
views what the C code returns as numpy arrays; the C code keeps no state
between calls and releases the GIL, so threads share one model.
"""

from __future__ import annotations

import numpy as np

from deid_pipeline.tagger import _kernels


def int64s(values: np.ndarray) -> np.ndarray:
    """``values`` as the C-contiguous int64 array the kernels read (no copy if so)."""
    return np.ascontiguousarray(values, dtype=np.int64)


def float64s(values: np.ndarray) -> np.ndarray:
    """``values`` as the C-contiguous float64 array the kernels read."""
    return np.ascontiguousarray(values, dtype=np.float64)


def marginal_arrays(ids: np.ndarray, offsets: np.ndarray, state_rows: np.ndarray,
                    trans: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """State scores, marginals and log partition of one sequence (no path).

    Token t's attribute ids are ``ids[offsets[t]:offsets[t+1]]`` (-1: one the
    model lacks); ``state_rows`` holds each attribute's state weights, padded
    with zero columns past the labels; ``trans`` is labels x labels. The state
    scores come back for :func:`best_path`, which a caller runs only when it
    reads the path.
    """
    n_tokens, n_labels = len(offsets) - 1, trans.shape[0]
    state, marginals, log_norm = _kernels.marginal_arrays(
        int64s(ids), int64s(offsets), float64s(state_rows), state_rows.shape[1],
        float64s(trans), n_labels)
    shape = (n_tokens, n_labels)
    return (np.frombuffer(state, np.float64).reshape(shape),
            np.frombuffer(marginals, np.float64).reshape(shape), log_norm)


def best_path(state: np.ndarray, trans: np.ndarray) -> tuple[np.ndarray, float]:
    """The Viterbi path of a sequence's state scores, and its score.

    Ties go to the lowest label id, as in CRFsuite: the back-pointer of the
    label the path takes is the first previous label that reaches its score
    in id order.
    """
    if not len(state):
        return np.zeros(0, np.int64), 0.0
    path, score = _kernels.best_path(float64s(state), trans.shape[0], float64s(trans))
    return np.frombuffer(path, np.int64), score
