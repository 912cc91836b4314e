"""The compiled kernel of :class:`deid_pipeline.tagger.features.FeatureEncoder` (numba).

The encoder finds each distinct text's blocks of ids, each chunk's, the line
keys', the phrase flags' and the bigrams' in Python (dict lookups); laying
them out token by token in the model's order took some forty numpy calls a
note, about 7% of tagging it (issue 45). Here one pass counts each token's
ids and a second copies them. Its own module, loaded with the first encode,
as :mod:`deid_pipeline.tagger.crf_kernels` is with the first decode; compiled
once and cached beside this file.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def lay_out_ids(block_pool, block_len, block_offsets, slot, cpos, line_pos,
                key_word, df, dcase, short_line, chunk_pool, chunk_len, extra_ids,
                line_base, df_base, dcase_base, key_ids, sparse_pool, sparse_where,
                sparse_len, pair_ids):  # pragma: no cover
    """Each token's attribute ids in the model's order, and where each token's start.

    ``block_pool`` holds the blocks of ids (pad first, then each distinct
    text, ``block_len`` fields each), ``slot[t]`` token t's block and
    ``block_offsets[j]`` the token whose field j token t takes; then the
    extras: its chunk's ids (chunks of several tokens, in order), ``cpos``,
    line position, line key, df, dcase and short line from ``extra_ids``
    (``-1`` codes: none), its phrase and dictionary ids, its two bigrams.
    """
    n = slot.shape[0]
    n_blocks, n_fields = block_len.shape
    block_start = np.empty((n_blocks, n_fields), np.int64)
    at = 0
    for b in range(n_blocks):
        for j in range(n_fields):
            block_start[b, j] = at
            at += block_len[b, j]
    sparse_start = np.full(n, -1, np.int64)
    sparse_count = np.zeros(n, np.int64)
    at = 0
    for k in range(sparse_where.shape[0]):
        sparse_start[sparse_where[k]] = at
        sparse_count[sparse_where[k]] = sparse_len[k]
        at += sparse_len[k]
    # Which block each field of each token reads, padded past either end.
    source = np.zeros((n, n_fields), np.int64)
    for t in range(n):
        for j in range(n_fields):
            u = t + block_offsets[j]
            source[t, j] = slot[u] if 0 <= u < n else 0
    offsets = np.zeros(n + 1, np.int64)
    chunk = -1
    for t in range(n):
        size = 0
        for j in range(n_fields):
            size += block_len[source[t, j], j]
        if cpos[t] == 0:
            chunk += 1
        if cpos[t] >= 0:
            size += chunk_len[chunk] + 1
        size += 1  # line position
        if key_word[t] >= 0:
            size += 1
        if df[t] >= 0:
            size += 2
        if short_line[t]:
            size += 1
        size += sparse_count[t] + 2
        offsets[t + 1] = offsets[t] + size
    ids = np.empty(offsets[n], np.int64)
    out = 0
    chunk = -1
    chunk_at = 0
    key = -1
    last_key = -2
    for t in range(n):
        for j in range(n_fields):
            b = source[t, j]
            start = block_start[b, j]
            for k in range(block_len[b, j]):
                ids[out] = block_pool[start + k]
                out += 1
        if cpos[t] == 0:
            if chunk >= 0:
                chunk_at += chunk_len[chunk]
            chunk += 1
        if cpos[t] >= 0:
            for k in range(chunk_len[chunk]):
                ids[out] = chunk_pool[chunk_at + k]
                out += 1
            ids[out] = extra_ids[cpos[t]]
            out += 1
        ids[out] = extra_ids[line_base + line_pos[t]]
        out += 1
        if key_word[t] >= 0:
            if key_word[t] != last_key:
                key += 1
                last_key = key_word[t]
            ids[out] = key_ids[key]
            out += 1
        if df[t] >= 0:
            ids[out] = extra_ids[df_base + df[t]]
            ids[out + 1] = extra_ids[dcase_base + dcase[t]]
            out += 2
        if short_line[t]:
            ids[out] = extra_ids[extra_ids.shape[0] - 1]
            out += 1
        for k in range(sparse_count[t]):
            ids[out] = sparse_pool[sparse_start[t] + k]
            out += 1
        ids[out] = pair_ids[t, 1]
        ids[out + 1] = pair_ids[t + 1, 0]
        out += 2
    return ids, offsets
