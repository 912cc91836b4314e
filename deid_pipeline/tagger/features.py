"""CRF features: one function, :func:`document_features`, for training and tagging.

The feature set follows HIDE (Gardner & Xiong 2008), Carafe (Wellner et al.
2007) and Liu et al. (2017):

- the token itself: lower-cased word, word shape (long and collapsed), length,
  affixes of 1-3 (and 4) characters, HIDE's regular-expression features
  (INITCAPS, ALLCAPS, MIXEDCAPS, digit counts and value ranges, ROMAN, ...);
- the whitespace-delimited chunk the token belongs to: our tokenizer splits
  ``7/22/2006`` into five tokens, so HIDE's per-word regexes (HASDASH,
  HASSLASH, ALPHANUMERIC, REALNUMBER, the ``d/dd/dddd`` shape) are computed on
  the chunk and given to every token of it;
- context, which HIDE found matters most: word, shape and lexicon flags of the
  previous and next two tokens, the word alone for the 3rd and 4th, bigrams;
- the line: position in the line, a short-line flag (signatures), and the
  ``KEY:`` that last precedes the token on its line (``MRN:``, ``DOB:``,
  ``PMH:``: the section heading or field label);
- lexicons (:mod:`deid_pipeline.tagger.lexicons`): names, places, English-word
  frequency, drugs and diseases, case-insensitive;
- Brown clusters (:mod:`deid_pipeline.tagger.clusters`, Liu et al. 2017):
  prefixes of the word's cluster bit path, and of its neighbours' at -1 and
  +1, so a town or name never seen in training shares features with the
  ones that were;
- the patient dictionary from the document header (``IN_PATIENT_NAME``,
  ``IN_PATIENT_ID``, ...) when the document carries one;
- document level: how often the token occurs in the document (HIDE).

Speed is the point of the layout: everything that depends on the token text
alone (its own features and its features *as context* at each offset) is
computed once per distinct text and cached for the process, so a token costs a
few list operations plus the per-document features. Feature strings never leave
the process and are never logged (they contain words of the note).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from deid_pipeline.labels import category
from deid_pipeline.model import ClinicalDocument, PatientDictionary
from deid_pipeline.tagger import clusters as clusters_module
from deid_pipeline.tagger import lexicons as lexicons_module
from deid_pipeline.tagger.feature_kernels import lay_out_ids
from deid_pipeline.tagger.generations import Generations
from deid_pipeline.tagger.row_ids import RowIds, TextParts
from deid_pipeline.tagger.text_rows import NewRow, TextRows
from deid_pipeline.tagger.token_layout import CASES as _CASES
from deid_pipeline.tagger.token_layout import DOCUMENT_CASES as _DOCUMENT_CASES
from deid_pipeline.tagger.token_layout import Layout, token_layout
from deid_pipeline.tokenizer import Token, is_digits, tokenize

FEATURE_VERSION = "2"

_ROMAN = re.compile(
    r"(?=[MDCLXVI])M{0,3}(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})")
_CHUNK_SHAPE_MAX = 16
# Brown cluster bit-path prefixes: a token's own (``bc4=``.., the whole path
# ``bc=``) and its neighbours' at -1 and +1 (``-1bc6=``..). A path shorter
# than a prefix gives the whole path.
_CLUSTER_PREFIXES = (4, 6, 10)
_CLUSTER_CONTEXT_PREFIXES = (6, 10)
_LINE_KEY_MAX = 24


# Per-process caches of per-token features, sized so a worker's memory stays
# flat however many documents pass, with the working vocabulary of clinical
# notes cached (the 1,619 PhysioNet notes have 15,150 distinct tokens and
# 35,532 distinct whitespace chunks). A base record is ~2.4 kB, a chunk's
# features ~170 bytes: the chunk cache can afford more entries. The encoder
# keeps its own rows of texts (ids only, a few hundred bytes a text) under
# the same limit (:mod:`deid_pipeline.tagger.text_rows`).
_BASE_CACHE_LIMIT = 16_000
_CHUNK_CACHE_LIMIT = 24_000

# A base record per distinct token text: (own features, context features at
# offsets -4, -3, -2, -1, +1, +2, +3, +4, lower-cased text, its case word or
# None when the lower-cased text is not all letters, its _text_code, its
# counts of upper- and lower-case letters).
_Base = tuple
_BASE_CACHE = Generations(_BASE_CACHE_LIMIT)
# The encoder of a model that knows no cluster attribute (the shipped one is
# trained with ``--clusters none``) neither loads the clusters (0.1 s and 13 MB
# a process) nor looks them up.
_NO_CLUSTERS = clusters_module.Clusters({})
_CHUNK_CACHE = Generations(_CHUNK_CACHE_LIMIT)

_OFFSETS = (-4, -3, -2, -1, 1, 2, 3, 4)
# The offsets whose context features hold the shape and lexicon signature too.
_NEAR_OFFSETS = (-2, -1, 1, 2)
_LINE_POSITIONS = ("lp=0", "lp=1", "lp=2", "lp=3", "lp=4+")


def _case(text: str) -> str:
    if text.isupper():
        return "ALLCAPS"
    if text.islower():
        return "LOWER"
    if text[0].isupper() and text[1:].islower():
        return "INITCAPS"
    return "MIXEDCAPS"


# ASCII letters and digits as their shape characters: an ASCII text's shape
# is one str.translate (the per-character loop below is for the rest).
_ASCII_SHAPE = str.maketrans(
    string.digits + string.ascii_uppercase + string.ascii_lowercase,
    "d" * 10 + "X" * 26 + "x" * 26)
_REPEATS = re.compile(r"(.)\1+")
# Long shape -> collapsed shape: shapes of up to 12 characters of a small
# alphabet repeat (a few thousand in 1,619 notes), and the substitution cost
# more than the rest of a new word's shape.
_COLLAPSED: dict[str, str] = {}


def _shape(text: str) -> tuple[str, str]:
    """Long shape (``Xxxxx``, ``dddd``) and collapsed shape (``Xx``, ``d``)."""
    head = text[:12]
    if head.isascii():
        long = head.translate(_ASCII_SHAPE)
    else:
        out = []
        for ch in head:
            if ch.isdigit():
                out.append("d")
            elif ch.isalpha():
                out.append("X" if ch.isupper() else "x")
            else:
                out.append(ch)
        long = "".join(out)
    collapsed = _COLLAPSED.get(long)
    if collapsed is None:
        if len(_COLLAPSED) >= _BASE_CACHE_LIMIT:  # other scripts' letters stay in it
            _COLLAPSED.clear()
        collapsed = _COLLAPSED[long] = _REPEATS.sub(r"\1", long)
    return long, collapsed


def _number_features(text: str) -> list[str]:
    """HIDE's digit-count patterns plus value ranges that separate dates/times."""
    n = len(text)
    feats = [f"DIGITS={n if n < 6 else '6+'}"]
    value = int(text) if n <= 9 else -1
    if n <= 2:
        if 1 <= value <= 12:
            feats.append("NUM=month")
        elif 13 <= value <= 31:
            feats.append("NUM=day")
        elif value < 60:
            feats.append("NUM=minute")
        else:
            feats.append("NUM=2d")
    elif n == 4:
        if 1900 <= value <= 2099:
            feats.append("NUM=year")
        elif value % 100 < 60 and value < 2400:
            feats.append("NUM=hhmm")
    elif n in (5, 9):
        feats.append("NUM=zipish")
    elif n in (7, 10):
        feats.append("NUM=phoneish")
    return feats


def _cluster_features(path: str | None) -> tuple[list[str], dict[int, tuple[str, ...]]]:
    """A token's own cluster features, and its context ones by offset."""
    if path is None:
        return [], {}
    own = [f"bc{k}={path[:k]}" for k in _CLUSTER_PREFIXES]
    own.append(f"bc={path}")
    return own, {off: tuple(f"{off}bc{k}={path[:k]}" for k in _CLUSTER_CONTEXT_PREFIXES)
                 for off in (-1, 1)}


def _parts(text: str, lex: lexicons_module.Lexicons,
           clusters: clusters_module.Clusters) -> TextParts:
    """Everything that depends on the token text alone, unspelled."""
    lower = text.lower().replace("\x00", "?")
    if clusters is _NO_CLUSTERS:
        cluster_own, cluster_ctx = (), {}
    else:
        own_clusters, cluster_ctx = _cluster_features(clusters.path(text))
        cluster_own = tuple(own_clusters)
    long, collapsed = _shape(text)
    flags = lex.flags(lower)
    lexsig, lexicon_features, not_english = _flag_parts(flags)
    tail = []
    if text.isalpha():
        tail.append(_case(text))
        if len(text) == 1:
            tail.append("ONECHAR")
        elif text.isupper() and _ROMAN.fullmatch(text):
            tail.append("ROMAN")
        if not_english:
            tail.append("NOTENGLISH")
        if len(text) > 1:
            tail.extend((f"p1={lower[:1]}", f"p2={lower[:2]}", f"p3={lower[:3]}",
                         f"s1={lower[-1:]}", f"s2={lower[-2:]}", f"s3={lower[-3:]}"))
            if len(text) > 4:
                tail.extend((f"p4={lower[:4]}", f"s4={lower[-4:]}"))
        word_ctx = lower
    elif is_digits(text):
        tail.extend(_number_features(text))
        word_ctx = f"#{long}"
    else:
        tail.append("PUNCT")
        word_ctx = lower
    case = _case(text) if lower.isalpha() else None
    letters = (sum(map(str.isupper, text)), sum(map(str.islower, text)))
    return TextParts(lower, long, collapsed, min(len(text), 12), lexsig, flags,
                     lexicon_features, cluster_own, cluster_ctx, tuple(tail), word_ctx,
                     case, _text_code(text, case), letters)


def _base(text: str, lex: lexicons_module.Lexicons,
          clusters: clusters_module.Clusters) -> _Base:
    """Everything that depends on the token text alone (cached per process)."""
    p = _parts(text, lex, clusters)
    own = (f"w={p.lower}", f"sh={p.long}", f"shc={p.collapsed}", f"len={p.length}",
           f"L={p.lexsig}", *p.lexicon_features, *p.cluster_own, *p.tail)
    ctx = []
    for off in _OFFSETS:
        if off in _NEAR_OFFSETS:
            ctx.append((f"{off}w={p.word_ctx}", f"{off}s={p.collapsed}",
                        f"{off}L={p.lexsig}", *p.cluster_ctx.get(off, ())))
        else:
            ctx.append((f"{off}w={p.word_ctx}",))
    return (own, *ctx, p.lower, p.case, p.code, p.letters)


_FLAG_PARTS: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = {}


def _flag_parts(flags: tuple[str, ...]) -> tuple[str, tuple[str, ...], bool]:
    """A word's lexicon signature, its ``lx=`` features, whether no English list has it.

    Memoised by the flags: words share a few hundred combinations of them.
    """
    parts = _FLAG_PARTS.get(flags)
    if parts is None:
        parts = _FLAG_PARTS[flags] = (
            "|".join(flags) if flags else "-", tuple(f"lx={f}" for f in flags),
            not any(f[0] == "w" for f in flags))
    return parts


def _text_code(text: str, case: str | None) -> int:
    """What a document's layout needs of a text, packed in one int.

    Bits 0-2: the case's index in ``_CASES`` plus one (0: not a word);
    bit 3: the text is ``:``; bit 4: it ends a sentence.
    """
    return ((0 if case is None else _CASES.index(case) + 1)
            | (8 if text == ":" else 0) | (16 if text in _SENTENCE_END else 0))


def _pad(off: int) -> tuple[str, ...]:
    return (f"{off}w=<PAD>",)


_PADS = tuple(_pad(off) for off in _OFFSETS)


_LOWER_RUN = re.compile(r"[a-z]+")
_UPPER_RUN = re.compile(r"[A-Z]+")
_DIGIT_RUN = re.compile(r"\d+")
_REAL_NUMBER = re.compile(r"[+-]?\d*\.\d+")


def _digit_run_shape(match: re.Match) -> str:
    return "d" * min(len(match.group()), 4)


# An ASCII chunk's shape without a Python call per digit run: letters and
# digits become x, X and d in one str.translate, then the runs are collapsed
# (a chunk is met once per text, and 35,000 distinct ones fill 1,619 notes).
_ASCII_CHUNK_SHAPE = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase + string.digits,
    "x" * 26 + "X" * 26 + "d" * 10)
_X_RUN = re.compile(r"xx+")
_UPPER_X_RUN = re.compile(r"XX+")
_LONG_D_RUN = re.compile(r"ddddd+")


def chunk_shape(chunk: str) -> str:
    """Runs of lower and upper letters as ``x``/``X``, digit runs as up to 4 ``d``."""
    if chunk.isascii():
        shape = _X_RUN.sub("x", chunk.translate(_ASCII_CHUNK_SHAPE))
        return _LONG_D_RUN.sub("dddd", _UPPER_X_RUN.sub("X", shape))
    shape = _UPPER_RUN.sub("X", _LOWER_RUN.sub("x", chunk))
    return _DIGIT_RUN.sub(_digit_run_shape, shape)


def _chunk_features(chunk: str) -> tuple[str, ...]:
    """HIDE's whole-word regexes on a whitespace-delimited chunk (cached)."""
    cached = _CHUNK_CACHE.current.get(chunk)
    if cached is None:
        cached = _CHUNK_CACHE.recall(chunk)
    if cached is not None:
        return cached
    out = []
    shape = chunk_shape(chunk)
    feats = [f"csh={shape[:_CHUNK_SHAPE_MAX]}"]
    if chunk.isascii():  # letters and digits are all in the shape as x, X, d
        has_alpha = "x" in shape or "X" in shape
        has_digit = "d" in shape
    else:
        has_alpha = any(c.isalpha() for c in chunk)
        has_digit = any(c.isdigit() for c in chunk)
    if has_alpha and has_digit:
        out.append("ALPHANUMERIC")
    if "-" in chunk:
        out.append("HASDASH")
    if "/" in chunk:
        out.append("HASSLASH")
    if "@" in chunk:
        out.append("HASAT")
    if _REAL_NUMBER.fullmatch(chunk):
        out.append("REALNUMBER")
    if chunk.endswith(":"):
        out.append("ENDSCOLON")
    feats.extend(out)
    result = tuple(feats)
    _CHUNK_CACHE.put(chunk, result)
    return result


DICTIONARY_FEATURE_PREFIX = "IN_"
_DICT_FEATURE = {"PATIENT": "IN_PATIENT_NAME", "RELATIVE": "IN_RELATIVE_NAME",
                 "DOCTOR": "IN_DOCTOR_NAME", "USERNAME": "IN_PATIENT_NAME"}
_DICT_CATEGORY_FEATURE = {"ID": "IN_PATIENT_ID", "DATE": "IN_PATIENT_DATE",
                          "CONTACT": "IN_PATIENT_CONTACT",
                          "LOCATION": "IN_PATIENT_LOCATION", "AGE": "IN_PATIENT_AGE",
                          "PROFESSION": "IN_PATIENT_PROFESSION",
                          "NAME": "IN_PATIENT_NAME"}


def dictionary_token_features(dictionary: PatientDictionary | None,
                              lowers: Sequence[str]) -> dict[int, set[str]]:
    """Token index -> ``IN_PATIENT_*`` features for header identifiers in the text.

    A name part matches alone (the note says ``Mrs. Smith``, the header
    ``SMITH^JANE``); any other value must match as its whole token sequence.
    """
    if dictionary is None or not dictionary.values:
        return {}
    single: dict[str, set[str]] = {}
    multi: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for value, label, _field in dictionary.rows():
        feature = _DICT_FEATURE.get(label) or _DICT_CATEGORY_FEATURE[category(label)]
        parts = tuple(t.text.lower() for t in tokenize(value))
        if not parts:
            continue
        if category(label) == "NAME":
            for part in parts:
                if part.isalpha() and len(part) > 1:
                    single.setdefault(part, set()).add(feature)
        elif len(parts) == 1:
            single.setdefault(parts[0], set()).add(feature)
        else:
            multi.setdefault(parts[0], []).append((parts, feature))
    found: dict[int, set[str]] = {}
    n = len(lowers)
    for i, lower in enumerate(lowers):
        feats = single.get(lower)
        if feats:
            found.setdefault(i, set()).update(feats)
        for parts, feature in multi.get(lower, ()):
            k = len(parts)
            if i + k <= n and tuple(lowers[i:i + k]) == parts:
                for j in range(i, i + k):
                    found.setdefault(j, set()).add(feature)
    return found


_SENTENCE_END = frozenset(".!?;:")
_CPOS = ("cpos=B", "cpos=E", "cpos=M")
_DF_BUCKETS = ("df=1", "df=2", "df=3-4", "df=5+")
_SHORT_LINE = "SHORTLINE"


_DCASE_NAMES = tuple(f"dcase={doc_case}{case}{starts}" for doc_case in _DOCUMENT_CASES
                     for case in _CASES for starts in ("", "S"))


class _Parts(NamedTuple):
    """A document's features before they are spelled or looked up."""

    text: str
    texts: list[str]        # the distinct token texts, first seen first
    bases: list[_Base]      # the base record of each
    slots: np.ndarray       # token -> its text's index in ``bases``
    lowers: list[str]       # token -> lower-cased text
    layout: Layout
    sparse: dict[int, list[str]]  # token -> its phrase flags, then dictionary features


def _document_parts(doc: ClinicalDocument | str, tokens: Sequence[Token] | None,
                    lexicons: lexicons_module.Lexicons | None) -> _Parts | None:
    """What :func:`document_features` needs; None for no tokens."""
    text, dictionary, tokens = _tokens_of(doc, tokens)
    n = len(tokens)
    if n == 0:
        return None
    lex = lexicons if lexicons is not None else lexicons_module.load()
    table = clusters_module.load()
    texts = list(map(itemgetter(0), tokens))
    slot_of = dict.fromkeys(texts)
    cache = _BASE_CACHE
    bases = []
    for slot, text_ in enumerate(slot_of):
        b = cache.current.get(text_)
        if b is None:
            b = cache.recall(text_)
        if b is None:
            b = _base(text_, lex, table)
            if lexicons is None:
                cache.put(text_, b)
        bases.append(b)
        slot_of[text_] = slot
    slots = np.fromiter(map(slot_of.__getitem__, texts), np.int64, n)
    slot_lowers = list(map(itemgetter(9), bases))
    word_of = dict(zip(slot_lowers, range(len(bases))))
    words = np.fromiter(map(word_of.__getitem__, slot_lowers), np.int64, len(bases))
    codes = np.fromiter(map(itemgetter(11), bases), np.int64, len(bases))
    starts = np.fromiter(map(itemgetter(1), tokens), np.int64, n)
    ends = np.fromiter(map(itemgetter(2), tokens), np.int64, n)
    letters = np.fromiter(chain.from_iterable(map(itemgetter(12), bases)), np.int64,
                          2 * len(bases)).reshape(-1, 2)
    layout = token_layout(text, starts, ends, codes[slots], words[slots],
                          letters[slots])
    lowers = list(map(slot_lowers.__getitem__, slots.tolist()))
    return _Parts(text, list(slot_of), bases, slots, lowers, layout,
                  _sparse_features(lowers, dictionary, lex))


def _tokens_of(doc: ClinicalDocument | str, tokens: Sequence[Token] | None
               ) -> tuple[str, PatientDictionary | None, Sequence[Token]]:
    """The text of ``doc``, its patient dictionary, its tokens (cut if not given)."""
    if isinstance(doc, str):
        text, dictionary = doc, None
    else:
        text, dictionary = doc.text, doc.dictionary
    return text, dictionary, tokenize(text) if tokens is None else tokens


def _sparse_features(lowers: list[str], dictionary: PatientDictionary | None,
                     lex: lexicons_module.Lexicons) -> dict[int, list[str]]:
    """Token -> its phrase flags, then its dictionary features (few tokens have any)."""
    sparse = {i: [f"P={f}" for f in sorted(flags)]
              for i, flags in lexicons_module.phrase_flags(lowers, lex).items()}
    for i, feats in dictionary_token_features(dictionary, lowers).items():
        sparse.setdefault(i, []).extend(sorted(feats))
    return sparse


def _extras(parts: _Parts) -> list[list[str]]:
    """Each token's per-document features, in the order the model learnt them.

    Chunk features and position, line position, line key, df and document
    case, short line, phrase flags, dictionary features.
    """
    text, lowers, layout = parts.text, parts.lowers, parts.layout
    sparse = parts.sparse
    out = []
    rows = zip(layout.chunk_start.tolist(), layout.chunk_end.tolist(),
               layout.cpos.tolist(), layout.line_pos.tolist(), layout.key_word.tolist(),
               layout.df.tolist(), layout.dcase.tolist(), layout.short_line.tolist())
    for i, (cs, ce, cpos, line_pos, key_word, df, dcase, short) in enumerate(rows):
        ex = []
        if cpos >= 0:
            ex.extend(_chunk_features(text[cs:ce]))
            ex.append(_CPOS[cpos])
        ex.append(_LINE_POSITIONS[line_pos])
        if key_word >= 0:
            ex.append(f"key={lowers[key_word][:_LINE_KEY_MAX]}")
        if df >= 0:
            ex.append(_DF_BUCKETS[df])
            ex.append(_DCASE_NAMES[dcase])
        if short:
            ex.append(_SHORT_LINE)
        if i in sparse:
            ex.extend(sparse[i])
        out.append(ex)
    return out


def document_features(doc: ClinicalDocument | str,
                      tokens: Sequence[Token] | None = None,
                      lexicons: lexicons_module.Lexicons | None = None
                      ) -> list[list[str]]:
    """One list of feature strings per token of ``doc`` (tokens of its text).

    ``tokens`` defaults to ``tokenize(doc.text)``; pass them when the caller
    already has them, they must come from :func:`deid_pipeline.tokenizer.tokenize`.
    ``doc`` may be a bare string for callers without a document (no header).
    A token's list is its own features, its neighbours' context features at
    each of ``_OFFSETS`` in that order, its document extras, then the two
    bigrams: :class:`FeatureEncoder` gives the same ids in the same order.
    """
    parts = _document_parts(doc, tokens, lexicons)
    if parts is None:
        return []
    bases = list(map(parts.bases.__getitem__, parts.slots.tolist()))
    n = len(bases)
    extras = _extras(parts)
    # Column k holds each token's neighbour at offset _OFFSETS[k], seen as
    # context; past either end of the document, the pad.
    ctx_cols = []
    for k, off in enumerate(_OFFSETS):
        pad = _PADS[k]
        col = [b[k + 1] for b in bases]
        if off < 0:
            col = [pad] * min(-off, n) + col[:max(n + off, 0)]
        else:
            col = col[off:] + [pad] * min(off, n)
        ctx_cols.append(col)
    m4, m3, m2, m1, p1, p2, p3, p4 = ctx_cols
    before, after = _bigrams(parts.lowers)
    return [[*bases[i][0], *m4[i], *m3[i], *m2[i], *m1[i], *p1[i], *p2[i], *p3[i],
             *p4[i], *extras[i], before[i], after[i]] for i in range(n)]


# Features that spell a token's word itself (its lower-cased text, affixes,
# whole cluster path), as opposed to its shape, case, lexicon classes and
# coarse clusters, which an unseen name shares with the names of training.
_IDENTITY = ("w=", "p1=", "p2=", "p3=", "p4=", "s1=", "s2=", "s3=", "s4=", "bc=")
# Cluster features the ``own`` subset drops: the whole path and the neighbours'.
_CLUSTER_CONTEXT = tuple(f"{off}bc" for off in (-1, 1))


def without_identity(features: list[list[str]], hidden: Sequence[bool]
                     ) -> list[list[str]]:
    """``features`` with the words of ``hidden`` tokens unspelt everywhere.

    A training copy's surrogate names are one draw of strings among
    millions; a model that learns them learns nothing a new patient's name
    shares. Without them (in the token's own features, as its neighbours'
    context word and in every bigram that holds it) only the name's shape,
    case, lexicon classes, coarse clusters and context remain, which is all a
    model has at a name it never met: the copies train for that case.
    """
    n = len(features)
    drop: list[set[str]] = [set() for _ in range(n)]
    for i in (i for i, h in enumerate(hidden) if h):
        drop[i].update((*_IDENTITY, _BEFORE, _AFTER))
        for off in _OFFSETS:
            if 0 <= i - off < n:
                drop[i - off].add(f"{off}w=")
        if i + 1 < n:
            drop[i + 1].add(_BEFORE)
        if i > 0:
            drop[i - 1].add(_AFTER)
    return [[f for f in feats if not f.startswith(tuple(d))] if d else feats
            for feats, d in zip(features, drop)]


def own_clusters_only(features: list[list[str]]) -> list[list[str]]:
    """``features`` without the whole cluster path and the neighbours' clusters."""
    drop = ("bc=", *_CLUSTER_CONTEXT)
    return [[f for f in feats if not f.startswith(drop)] for feats in features]


def without_clusters(features: list[list[str]]) -> list[list[str]]:
    """``features`` without any Brown-cluster feature (FEATURE_VERSION 1's set)."""
    drop = ("bc", *_CLUSTER_CONTEXT)
    return [[f for f in feats if not f.startswith(drop)] for feats in features]


# A token's bigrams: ``b-=`` with the previous lower-cased word, ``b+=`` with
# the next, joined by ``|``; past either end of the document, <S> and </S>.
_BEFORE, _AFTER, _JOIN = "b-=", "b+=", "|"


def _word_pairs(lowers: Sequence[str]) -> list[tuple[str, str]]:
    """Pair k is the lower-cased words of tokens k-1 and k (n+1 pairs)."""
    return list(zip(["<S>", *lowers], [*lowers, "</S>"]))


def _bigrams(lowers: Sequence[str]) -> tuple[list[str], list[str]]:
    """Each token's bigram with the previous and with the next lower-cased word."""
    pairs = _word_pairs(lowers)
    before = [f"{_BEFORE}{prev}{_JOIN}{word}" for prev, word in pairs[:-1]]
    after = [f"{_AFTER}{word}{_JOIN}{nxt}" for word, nxt in pairs[1:]]
    return before, after


# Where a token's blocks of base-record features come from: its own record's
# own features, then each neighbour's context features, in document_features'
# order (source token offset, field of the base record: field j is block j).
_BLOCKS = ((0, 0), *((off, k + 1) for k, off in enumerate(_OFFSETS)))
_BLOCK_OFFSETS = np.array([off for off, _ in _BLOCKS])
_NO_IDS = np.zeros(0, np.int64)


class FeatureEncoder:
    """:func:`document_features` as a model's attribute ids, without the strings.

    Decoding needs ids only, and looking up ~34 strings a token in the model's
    dict cost more than computing them. Most of them are the blocks of a
    token's base record (its own features, its context features at each
    offset), the same for every occurrence of the text: their ids are kept in
    a row per text (:class:`~deid_pipeline.tagger.text_rows.TextRows`), and
    the kernel gathers a document's from the rows of its tokens. Its extras
    come from the document's :class:`~deid_pipeline.tagger.token_layout.Layout`
    codes through a table of the few strings they can spell (chunk features
    are cached per chunk); only line keys, phrase flags and dictionary
    features are looked up one by one. Bigrams are looked up by their pair of
    words, never spelled out: a model knows few of them (2,320 of 12,714
    attributes; 5% of the bigrams of notes).
    Attributes the model lacks are -1, as ``attribute_ids.get(s, -1)`` gives.
    A model with no Brown-cluster attribute gets the features of
    :func:`without_clusters` (their ids would all be -1: the same scores).
    One encoder per model: the caches hold that model's ids.
    """

    def __init__(self, attribute_ids: dict[str, int]) -> None:
        """Encode for the model whose attribute-string -> id map is given."""
        self.attribute_ids = attribute_ids
        drop = ("bc", *_CLUSTER_CONTEXT)
        self.clusters = any(name.startswith(drop) for name in attribute_ids)
        self._chunks = Generations(_CHUNK_CACHE_LIMIT)
        self._feature_ids = Generations(_CHUNK_CACHE_LIMIT)
        self._row_ids = RowIds(attribute_ids, _OFFSETS, _NEAR_OFFSETS)
        pad_ids, pad_lengths = self._block_ids(((),) + _PADS)
        self._rows = TextRows(NewRow(pad_ids, pad_lengths, 0, (0, 0), ""),
                              _BASE_CACHE_LIMIT)
        # The ids of the extras' few strings, in lay_out_ids' order: cpos,
        # line positions, df buckets, dcase names, the short line last.
        self._extra_ids = self._block_ids(
            ((*_CPOS, *_LINE_POSITIONS, *_DF_BUCKETS, *_DCASE_NAMES, _SHORT_LINE),))[0]
        # (word, next word) -> ids of their b+= and b-= bigrams. A word may
        # hold the joiner: each split of a name is a pair that spells it.
        pairs: dict[tuple[str, str], list[int]] = {}
        for name, attribute in attribute_ids.items():
            for side, prefix in enumerate((_AFTER, _BEFORE)):
                if name.startswith(prefix):
                    words = name[len(prefix):]
                    at = words.find(_JOIN)
                    while at >= 0:
                        key = (words[:at], words[at + len(_JOIN):])
                        pairs.setdefault(key, [-1, -1])[side] = attribute
                        at = words.find(_JOIN, at + 1)
        self._pair_ids = {key: tuple(ids) for key, ids in pairs.items()}

    def _block_ids(self, blocks: Sequence[Sequence[str]]
                   ) -> tuple[np.ndarray, tuple[int, ...]]:
        """The ids of the blocks' strings, one after another; the blocks' lengths."""
        names = list(chain.from_iterable(blocks))
        ids = np.fromiter(map(self.attribute_ids.get, names, repeat(-1)), np.int64,
                          len(names))
        return ids, tuple(map(len, blocks))

    def _chunk_ids(self, chunk: str) -> np.ndarray:
        """Ids of a chunk's features (cached per chunk text, then per shape).

        An ASCII chunk's features are those of its shape alone (every test
        of :func:`_chunk_features` reads as well on ``chunk_shape``: letters
        and digits become x, X and d, every other character stays), and a
        note's new chunks (``120/70,``, ``0400``) share a few thousand
        shapes: a new chunk costs its shape, not its features.
        """
        cache = self._chunks
        ids = cache.current.get(chunk)
        if ids is None:
            ids = cache.recall(chunk)
        if ids is None:
            key = chunk_shape(chunk) if chunk.isascii() else chunk
            shared = self._feature_ids
            ids = shared.current.get(key)
            if ids is None:
                ids = shared.recall(key)
            if ids is None:
                ids = self._block_ids((_chunk_features(chunk),))[0]
                shared.put(key, ids)
            cache.put(chunk, ids)
        return ids

    def encode(self, doc: ClinicalDocument | str,
               tokens: Sequence[Token] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, offsets)``: the ids of token t are ``ids[offsets[t]:offsets[t+1]]``.

        The same ids, in the same order, as looking up each string of
        ``document_features(doc, tokens)`` (of ``without_clusters`` of them
        when the model knows no cluster attribute).
        """
        text, dictionary, tokens = _tokens_of(doc, tokens)
        n = len(tokens)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(1, np.int64)
        lex = lexicons_module.load()
        table = clusters_module.load() if self.clusters else _NO_CLUSTERS

        def new_row(text_: str) -> NewRow:
            parts = _parts(text_, lex, table)
            ids, lengths = self._row_ids.row(parts)
            return NewRow(ids, lengths, parts.code, parts.letters, parts.lower)

        held = self._rows.rows(list(map(itemgetter(0), tokens)), new_row)
        rows = held.rows
        starts = np.fromiter(map(itemgetter(1), tokens), np.int64, n)
        ends = np.fromiter(map(itemgetter(2), tokens), np.int64, n)
        layout = token_layout(text, starts, ends, held.code[rows], held.word[rows],
                              held.letters[rows])
        lowers = list(map(held.lowers.__getitem__, rows.tolist()))
        sparse = _sparse_features(lowers, dictionary, lex)
        get = self.attribute_ids.get
        opens = layout.cpos == 0
        chunks = [text[s:e] for s, e in zip(layout.chunk_start[opens].tolist(),
                                            layout.chunk_end[opens].tolist())]
        # Looked up in C; a chunk the current generation lacks, one by one.
        chunk_ids = list(map(self._chunks.current.get, chunks))
        for k in [k for k, ids in enumerate(chunk_ids) if ids is None]:
            chunk_ids[k] = self._chunk_ids(chunks[k])
        chunk_len = np.fromiter(map(len, chunk_ids), np.int64, len(chunk_ids))
        chunk_pool = np.concatenate(chunk_ids) if chunk_ids else _NO_IDS
        # A line key's ids, once per run of tokens it keys (key words never
        # decrease along the document).
        keyed = layout.key_word[layout.key_word >= 0].tolist()
        key_words = [w for w, before in zip(keyed, [-1, *keyed]) if w != before]
        key_ids = np.fromiter((get(f"key={lowers[w][:_LINE_KEY_MAX]}", -1)
                               for w in key_words), np.int64, len(key_words))
        where = np.fromiter(sparse, np.int64, len(sparse))
        lengths = np.fromiter(map(len, sparse.values()), np.int64, len(sparse))
        sparse_pool = np.fromiter(map(get, chain.from_iterable(sparse.values()),
                                      repeat(-1)), np.int64, int(lengths.sum()))
        # Token t's bigrams: the b-= of pair t, the b+= of pair t+1. Bigrams
        # are looked up by their pair of words, never spelled out.
        pair_ids = np.fromiter(chain.from_iterable(map(self._pair_ids.get,
                                                       _word_pairs(lowers),
                                                       repeat((-1, -1)))),
                               np.int64, 2 * (n + 1)).reshape(n + 1, 2)
        return lay_out_ids(
            held.pool, held.start, held.length, _BLOCK_OFFSETS, rows, layout.cpos,
            layout.line_pos, layout.key_word, layout.df, layout.dcase,
            layout.short_line, chunk_pool, chunk_len, self._extra_ids,
            len(_CPOS), len(_CPOS) + len(_LINE_POSITIONS),
            len(_CPOS) + len(_LINE_POSITIONS) + len(_DF_BUCKETS), key_ids,
            sparse_pool, where, lengths, pair_ids)

