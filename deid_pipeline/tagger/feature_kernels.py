"""The compiled kernel of :class:`deid_pipeline.tagger.features.FeatureEncoder` (numba).

The encoder finds each text's row of blocks of ids
(:mod:`deid_pipeline.tagger.text_rows`), each chunk's, the line keys', the
phrase flags' and the bigrams' in Python (dict lookups); laying them out token
by token in the model's order took some forty numpy calls a note, about 7% of
tagging it (issue 45). Here one pass counts each token's
ids and a second copies them. Its own module, loaded with the first encode,
as :mod:`deid_pipeline.tagger.crf_kernels` is with the first decode; compiled
once and cached beside this file.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def lay_out_ids(block_pool, block_start, block_len, block_offsets, slot, cpos,
                line_pos, key_word, df, dcase, short_line, chunk_pool, chunk_len,
                extra_ids, line_base, df_base, dcase_base, key_ids, sparse_pool,
                sparse_where, sparse_len, pair_ids):  # pragma: no cover
    """Each token's attribute ids in the model's order, and where each token's start.

    ``block_pool`` holds the blocks of ids of every text row (row 0 the pad),
    block j of row r at ``block_start[r, j]``, ``block_len[r, j]`` long;
    ``slot[t]`` is token t's row and ``block_offsets[j]`` the token whose
    block j token t takes; then the extras: its chunk's ids (chunks of
    several tokens, in order), ``cpos``, line position, line key, df, dcase
    and short line from ``extra_ids`` (``-1`` codes: none), its phrase and
    dictionary ids, its two bigrams.
    """
    n = slot.shape[0]
    n_fields = block_len.shape[1]
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


@numba.njit(cache=True, nogil=True)
def _within_reach(values, reach):  # pragma: no cover
    """Per token, the sum of ``values`` over the tokens at most ``reach`` away."""
    n = values.shape[0]
    out = np.empty(n, np.int64)
    if n <= reach + 1:
        total = 0
        for t in range(n):
            total += values[t]
        out[:] = total
        return out
    running = np.zeros(n + 1, np.int64)
    for t in range(n):
        running[t + 1] = running[t] + values[t]
    for t in range(n):
        out[t] = running[min(t + reach, n - 1) + 1] - running[max(t - reach, 0)]
    return out


@numba.njit(cache=True, nogil=True)
def _counts_within_reach(word, reach):  # pragma: no cover
    """Per token, how often its word stands at most ``reach`` tokens away."""
    n = word.shape[0]
    out = np.empty(n, np.int64)
    if n <= reach + 1:
        counts = np.zeros(word.max() + 1, np.int64)
        for t in range(n):
            counts[word[t]] += 1
        for t in range(n):
            out[t] = counts[word[t]]
        return out
    key = np.empty(n, np.int64)
    for t in range(n):
        key[t] = word[t] * (n + 1) + t
    ordered = np.sort(key)
    for t in range(n):
        base = word[t] * (n + 1)
        lo = np.searchsorted(ordered, base + max(t - reach, 0), side="left")
        hi = np.searchsorted(ordered, base + min(t + reach, n - 1), side="right")
        out[t] = hi - lo
    return out


@numba.njit(cache=True, nogil=True)
def layout_codes(newlines, starts, ends, code, word, upper, lower,  # pragma: no cover
                 line_max, key_reach, document_reach, short_line_max, n_cases):
    """:func:`deid_pipeline.tagger.token_layout.token_layout`'s arrays, token by token.

    ``newlines``: the text's newline offsets, ascending. Returns chunk start
    and end, cpos, line position (at most 4), key word, df bucket, dcase and
    short line, as that function documents them.
    """
    n = starts.shape[0]
    # A token starts a line when a newline stands between it and the one
    # before; a very long line is read as lines of line_max tokens.
    first = np.empty(n, np.int64)
    line = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    current = -1
    head = 0
    for t in range(n):
        if t == 0:
            broken = True
        else:
            broken = (np.searchsorted(newlines, starts[t])
                      > np.searchsorted(newlines, ends[t - 1]))
        if broken or (t - head) % line_max == 0:
            current += 1
            head = t
        first[t] = head
        line[t] = current
        pos[t] = t - head
    per_line = np.zeros(current + 1, np.int64)
    for t in range(n):
        per_line[line[t]] += 1
    # Tokens cover every non-space character, so a whitespace-delimited
    # chunk is a run of tokens that touch.
    chunk_start = np.empty(n, np.int64)
    chunk_end = np.empty(n, np.int64)
    t = 0
    while t < n:
        u = t
        while u + 1 < n and starts[u + 1] == ends[u]:
            u += 1
        for k in range(t, u + 1):
            chunk_start[k] = starts[t]
            chunk_end[k] = ends[u]
        t = u + 1
    cpos = np.empty(n, np.int64)
    line_pos = np.empty(n, np.int64)
    key_word = np.full(n, -1, np.int64)
    df = np.full(n, -1, np.int64)
    dcase = np.full(n, -1, np.int64)
    short_line = np.empty(n, np.bool_)
    counts = _counts_within_reach(word, document_reach)
    up = _within_reach(upper, document_reach)
    letters = up + _within_reach(lower, document_reach)
    last_key = -1
    for t in range(n):
        if chunk_end[t] - chunk_start[t] == ends[t] - starts[t]:
            cpos[t] = -1
        elif starts[t] == chunk_start[t]:
            cpos[t] = 0
        elif ends[t] == chunk_end[t]:
            cpos[t] = 1
        else:
            cpos[t] = 2
        line_pos[t] = min(pos[t], 4)
        case = (code[t] & 7) - 1
        # A KEY: is a colon after a word, not first on its line; it keys the
        # tokens after it on the line, until the next one.
        if t > 0 and last_key >= first[t] and t - last_key <= key_reach:
            key_word[t] = last_key - 1
        if (code[t] & 8) != 0 and pos[t] > 0 and (code[t - 1] & 7) - 1 >= 0:
            last_key = t
        if case >= 0:
            c = counts[t]
            df[t] = 0 if c <= 1 else 1 if c <= 2 else 2 if c <= 4 else 3
            if letters[t] == 0 or up[t] >= 0.8 * letters[t]:
                around = 0
            elif up[t] <= 0.03 * letters[t]:
                around = 1
            else:
                around = 2
            starts_sentence = pos[t] == 0 or (t > 0 and (code[t - 1] & 16) != 0)
            dcase[t] = 2 * n_cases * around + 2 * case + (1 if starts_sentence else 0)
        short_line[t] = per_line[line[t]] <= short_line_max
    return chunk_start, chunk_end, cpos, line_pos, key_word, df, dcase, short_line
