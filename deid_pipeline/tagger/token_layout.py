"""Where each token stands in its document: lines, chunks, keys, counts, case.

The per-document half of the CRF's features (:mod:`deid_pipeline.tagger.features`
spells the strings, its encoder turns the same codes into ids), computed with
numpy over arrays of token spans and codes, never by walking the tokens.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

# The case words, in the order a text code's case bits index them.
CASES = ("ALLCAPS", "LOWER", "INITCAPS", "MIXEDCAPS")
SHORT_LINE_MAX = 4
_NEWLINE = re.compile("\n")


# What a token's document-wide features (df, dcase) count and what its line
# features (position, KEY:, short line) see stop this many tokens away: a
# name at the end of a line of 100,000 tokens, or a note pasted into a long
# export, is then tagged from its neighbourhood as on its own, not from
# whatever the rest of the file is. Both exceed every training document's
# length (PhysioNet notes: at most 793 tokens, lines at most 372; synthetic
# notes at most 1,500), so a document of ordinary size has exactly the
# features the model was trained on. A ``KEY:`` keys at most KEY_REACH tokens
# after it (in training at most 486 did).
DOCUMENT_REACH = 2048
LINE_TOKENS_MAX = 2048
KEY_REACH = 512
# A token's surroundings are mostly upper case (U), lower (L) or mixed (M).
DOCUMENT_CASES = ("U", "L", "M")


def _within_reach(values: np.ndarray, reach: int) -> np.ndarray:
    """Per token, the sum of ``values`` over the tokens at most ``reach`` away."""
    n = len(values)
    if n <= reach + 1:
        return np.full(n, values.sum())
    total = np.concatenate(([0], np.cumsum(values)))
    at = np.arange(n)
    return total[np.minimum(at + reach, n - 1) + 1] - total[np.maximum(at - reach, 0)]


def _counts_within_reach(word: np.ndarray, reach: int) -> np.ndarray:
    """Per token, how often its word stands at most ``reach`` tokens away."""
    n = len(word)
    if n <= reach + 1:
        return np.bincount(word)[word]
    at = np.arange(n)
    key = word * (n + 1) + at
    ordered = np.sort(key)
    lo = np.searchsorted(ordered, word * (n + 1) + np.maximum(at - reach, 0), "left")
    hi = np.searchsorted(ordered, word * (n + 1) + np.minimum(at + reach, n - 1),
                         "right")
    return hi - lo


def _surrounding_case(upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """Per token, the index in ``DOCUMENT_CASES`` of the letters around it."""
    up = _within_reach(upper, DOCUMENT_REACH)
    total = up + _within_reach(lower, DOCUMENT_REACH)
    return np.where((total == 0) | (up >= 0.8 * total), 0,
                    np.where(up <= 0.03 * total, 1, 2))


class Layout(NamedTuple):
    """Where each token stands in its document, as codes: one array each.

    Both renderings of the features read these: ``features.document_features``
    spells strings from them and ``features.FeatureEncoder`` turns them into ids
    with numpy, so the two cannot disagree on a token's extras, and neither
    walks the tokens in Python to find lines, chunks and keys.
    """

    chunk_start: np.ndarray  # its whitespace-delimited chunk
    chunk_end: np.ndarray
    cpos: np.ndarray         # 0/1/2: _CPOS in a chunk of several tokens; -1 otherwise
    line_pos: np.ndarray     # position in its line, 4 for the 5th and later
    key_word: np.ndarray     # the word of the line's last ``KEY:`` before it; -1
    df: np.ndarray           # _DF_BUCKETS of its word's count; -1 if not a word
    dcase: np.ndarray        # its index in features' dcase names; -1: no word
    short_line: np.ndarray   # on a line of at most SHORT_LINE_MAX tokens


def token_layout(text: str, starts: np.ndarray, ends: np.ndarray, code: np.ndarray,
            word: np.ndarray, letters: np.ndarray) -> Layout:
    """Codes of the tokens with these spans, given per token.

    ``code``: its text's :func:`_text_code`; ``word``: an id of its
    lower-cased text; ``letters``: its upper- and lower-case letter counts
    (two columns).
    """
    case = (code & 7) - 1
    colon = (code & 8) != 0
    sentence_end = (code & 16) != 0
    n = len(starts)
    at = np.arange(n)
    newlines = np.fromiter((m.start() for m in _NEWLINE.finditer(text)), np.int64)
    # A token starts a line when a newline stands between it and the one before.
    breaks = np.searchsorted(newlines, starts) > np.searchsorted(
        newlines, np.concatenate(([0], ends[:-1])))
    breaks[0] = True
    line = np.cumsum(breaks) - 1
    pos = at - np.flatnonzero(breaks)[line]
    # A very long line is read as lines of LINE_TOKENS_MAX tokens.
    breaks |= pos % LINE_TOKENS_MAX == 0
    line = np.cumsum(breaks) - 1
    first = np.flatnonzero(breaks)[line]
    pos = at - first
    # Tokens cover every non-space character, so a whitespace-delimited chunk
    # is a run of tokens that touch.
    opens = np.ones(n, bool)
    opens[1:] = starts[1:] != ends[:-1]
    chunk = np.cumsum(opens) - 1
    first_of_chunk = np.flatnonzero(opens)
    last_of_chunk = np.append(first_of_chunk[1:] - 1, n - 1)
    chunk_start, chunk_end = starts[first_of_chunk][chunk], ends[last_of_chunk][chunk]
    cpos = np.where(starts == chunk_start, 0, np.where(ends == chunk_end, 1, 2))
    cpos[chunk_end - chunk_start == ends - starts] = -1
    # A KEY: is a colon after a word, not first on its line; it keys the
    # tokens after it on the line, until the next one.
    is_word = case >= 0
    is_key = colon & (pos > 0)
    is_key[1:] &= is_word[:-1]
    last_key = np.maximum.accumulate(np.where(is_key, at, -1))
    key_word = np.full(n, -1)
    keyed = (last_key[:-1] >= first[1:]) & (at[1:] - last_key[:-1] <= KEY_REACH)
    key_word[1:] = np.where(keyed, last_key[:-1] - 1, -1)
    df = np.where(is_word, np.searchsorted(
        (1, 2, 4), _counts_within_reach(word, DOCUMENT_REACH)), -1)
    starts_sentence = pos == 0
    starts_sentence[1:] |= sentence_end[:-1]
    around = _surrounding_case(letters[:, 0], letters[:, 1])
    dcase = np.where(is_word, 2 * len(CASES) * around + 2 * case + starts_sentence, -1)
    short_line = (np.bincount(line) <= SHORT_LINE_MAX)[line]
    return Layout(chunk_start, chunk_end, cpos, np.minimum(pos, 4), key_word, df,
                   dcase, short_line)
