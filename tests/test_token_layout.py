"""The token layout's compiled pass against the array formulation it replaced.

``_array_layout`` below is the numpy code ``token_layout`` ran until
2026-11-30 (issue 45), kept here as the oracle: on real notes, on generated
texts and on documents past every reach (a line longer than
LINE_TOKENS_MAX, a document longer than DOCUMENT_REACH, keys further than
KEY_REACH) the kernel's arrays equal its, value and type.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_pipeline.tagger import features as features_module
from deid_pipeline.tagger.token_layout import (
    CASES,
    DOCUMENT_REACH,
    KEY_REACH,
    LINE_TOKENS_MAX,
    SHORT_LINE_MAX,
    Layout,
)

_NEWLINE = re.compile("\n")


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


def _array_layout(text, starts, ends, code, word, letters) -> Layout:
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


def _layouts(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Layout, Layout]:
    """The layout features computes for ``text``, and the oracle's of its inputs."""
    seen = []
    real = features_module.token_layout

    def spy(*args):
        seen.append((args, real(*args)))
        return seen[-1][1]

    monkeypatch.setattr(features_module, "token_layout", spy)
    features_module._document_parts(text, None, None)
    monkeypatch.undo()
    (args, made), = seen
    return made, _array_layout(*args)


def _assert_same(made: Layout, expected: Layout) -> None:
    for name, a, b in zip(Layout._fields, made, expected):
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), name


def test_when_real_notes_then_the_kernel_lays_them_out_as_the_arrays_did(
        physionet_docs, monkeypatch):
    for doc in physionet_docs[:200]:
        _assert_same(*_layouts(doc.text, monkeypatch))


_PIECES = st.sampled_from(["Pt", "PT", "pt", "MRN:", "Dr.", "Key:", "a", "7/22/2006",
                           "\n", "\n\n", " ", "  ", "\t", ".", ";", ":", "HR 88",
                           "Smith-Jones", "O'Neil", "B/P", "é", "NAME:", "x"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=80).map(" ".join))
def test_when_any_text_then_the_kernel_lays_it_out_as_the_arrays_did(text):
    with pytest.MonkeyPatch.context() as monkeypatch:
        if not features_module.tokenize(text):
            return
        _assert_same(*_layouts(text, monkeypatch))


@pytest.mark.parametrize("text", [
    # one line past LINE_TOKENS_MAX tokens, a key far behind its tokens
    "KEY: " + "word " * (LINE_TOKENS_MAX + KEY_REACH + 50),
    # a document past DOCUMENT_REACH, of lines of every length and case
    "\n".join(("Pt SMITH seen: ok " * (i % 7)) + ("X" * (i % 3))
               for i in range(DOCUMENT_REACH // 3)),
    "a " * (3 * DOCUMENT_REACH),
])
def test_when_past_every_reach_then_the_kernel_lays_it_out_as_the_arrays_did(
        text, monkeypatch):
    assert SHORT_LINE_MAX and CASES
    _assert_same(*_layouts(text, monkeypatch))
