"""The compiled passes of :class:`deid_pipeline.tagger.features.FeatureEncoder`.

The encoder finds each text's row of blocks of ids
(:mod:`deid_pipeline.tagger.text_rows`), each chunk's, the line keys', the
phrase flags' and the bigrams' in Python (dict lookups); laying them out token
by token in the model's order took some forty numpy calls a note, about 7% of
tagging it (issue 45), and so did finding each token's line, chunk and key
(:func:`deid_pipeline.tagger.token_layout.token_layout`). Both run as one C
pass each (``_kernels.c``, beside the CRF's kernels of
:mod:`deid_pipeline.tagger.crf_kernels`); here their arguments are checked and
what they return is viewed as numpy arrays.
"""

from __future__ import annotations

import numpy as np

from deid_pipeline.tagger import _kernels
from deid_pipeline.tagger.crf_kernels import int64s


def lay_out_ids(block_pool, block_start, block_len, block_offsets, slot, cpos,
                line_pos, key_word, df, dcase, short_line, chunk_pool, chunk_len,
                extra_ids, line_base, df_base, dcase_base, key_ids, sparse_pool,
                sparse_where, sparse_len, pair_ids) -> tuple[np.ndarray, np.ndarray]:
    """Each token's attribute ids in the model's order, and where each token's start.

    ``block_pool`` holds the blocks of ids of every text row (row 0 the pad),
    block j of row r at ``block_start[r, j]``, ``block_len[r, j]`` long;
    ``slot[t]`` is token t's row and ``block_offsets[j]`` the token whose
    block j token t takes; then the extras: its chunk's ids (chunks of
    several tokens, in order), ``cpos``, line position, line key, df, dcase
    and short line from ``extra_ids`` (``-1`` codes: none), its phrase and
    dictionary ids (``sparse_len[k]`` of them for token ``sparse_where[k]``),
    its two bigrams (``pair_ids``: n + 1 pairs).
    """
    ids, offsets = _kernels.lay_out_ids(
        int64s(block_pool), int64s(block_start), int64s(block_len),
        int64s(block_offsets), int64s(slot), int64s(cpos), int64s(line_pos),
        int64s(key_word), int64s(df), int64s(dcase),
        np.ascontiguousarray(short_line, dtype=np.bool_), int64s(chunk_pool),
        int64s(chunk_len), int64s(extra_ids), int(line_base), int(df_base),
        int(dcase_base), int64s(key_ids), int64s(sparse_pool), int64s(sparse_where),
        int64s(sparse_len), int64s(pair_ids))
    return np.frombuffer(ids, np.int64), np.frombuffer(offsets, np.int64)


def layout_codes(newlines, starts, ends, code, word, upper, lower, line_max,
                 key_reach, document_reach, short_line_max, n_cases
                 ) -> tuple[np.ndarray, ...]:
    """:func:`deid_pipeline.tagger.token_layout.token_layout`'s arrays, token by token.

    ``newlines``: the text's newline offsets, ascending. Returns chunk start
    and end, cpos, line position (at most 4), key word, df bucket, dcase and
    short line, as that function documents them. A token's df counts its word
    within ``document_reach`` tokens, its dcase the case of the letters there.
    """
    n = len(starts)
    if n == 0:
        return (*np.zeros((7, 0), np.int64), np.zeros(0, np.bool_))
    columns, short_line = _kernels.layout_codes(
        int64s(newlines), int64s(starts), int64s(ends), int64s(code), int64s(word),
        int64s(upper), int64s(lower), line_max, key_reach, document_reach,
        short_line_max, n_cases)
    return (*np.frombuffer(columns, np.int64).reshape(7, n),
            np.frombuffer(short_line, np.bool_, n))
