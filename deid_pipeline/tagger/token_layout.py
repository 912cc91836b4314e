"""Where each token stands in its document: lines, chunks, keys, counts, case.

The per-document half of the CRF's features (:mod:`deid_pipeline.tagger.features`
spells the strings, its encoder turns the same codes into ids), computed from
arrays of token spans and codes by one compiled pass
(:func:`deid_pipeline.tagger.feature_kernels.layout_codes`): written with numpy
it took some forty calls a note, 5% of tagging it (issue 45).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from deid_pipeline.tagger.feature_kernels import layout_codes

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


class Layout(NamedTuple):
    """Where each token stands in its document, as codes: one array each.

    Both renderings of the features read these: ``features.document_features``
    spells strings from them and ``features.FeatureEncoder`` turns them into ids,
    so the two cannot disagree on a token's extras, and neither walks the
    tokens in Python to find lines, chunks and keys.
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
    newlines = np.fromiter((m.start() for m in _NEWLINE.finditer(text)), np.int64)
    return Layout(*layout_codes(
        newlines, starts, ends, code, word, np.ascontiguousarray(letters[:, 0]),
        np.ascontiguousarray(letters[:, 1]), LINE_TOKENS_MAX, KEY_REACH,
        DOCUMENT_REACH, SHORT_LINE_MAX, len(CASES)))
