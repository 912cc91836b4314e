"""Decoding a CRFsuite model without pycrfsuite's per-string attribute lookups.

Training stays with python-crfsuite and the model stays a CRFsuite file. But
tagging a note through ``pycrfsuite.Tagger`` spent most of its time in
``Tagger.set``: every one of ~34 attribute strings per token is converted to a
C++ string and looked up in the model's hash database, one by one. Here the
model file is read once (:func:`read_model`) into arrays, a document's
attribute strings become ids with one dict lookup each, and the state scores,
Viterbi path and forward-backward marginals are computed by small compiled
kernels (C, :mod:`deid_pipeline.tagger.crf_kernels`) that follow
CRFsuite's own order of operations, so the path is the one CRFsuite finds and
the probabilities agree with its to ~1e-12.

The kernels keep no state between calls and release the GIL, so one model is
shared by every thread of a process without a lock (pycrfsuite's ``Tagger``
keeps the current sequence inside the object and needed one).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, chain, repeat
from typing import Sequence

import numpy as np

from deid_pipeline.tagger.crf_kernels import best_path, marginal_arrays

__all__ = ["CrfWeights", "Decoded", "ModelFormatError", "check_header", "decode",
           "decode_ids", "read_model"]


class ModelFormatError(ValueError):
    """The bytes are not a CRFsuite (CRF1d) model this reader understands."""


# The file layout, from CRFsuite's crf1d_model.c (all little-endian):
# a 48-byte header, a feature chunk of (type, src, dst, weight) records, two
# CQDB string databases (labels, attributes) and two chunks of feature-id
# lists per label and per attribute.
_HEADER = struct.Struct("<4sI4sIIIIIIIII")
_CHUNK = struct.Struct("<4sII")
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"),
                     ("weight", "<f8")])
_STATE, _TRANSITION = 0, 1
_CQDB = struct.Struct("<4sIIIII")


@dataclass(frozen=True, eq=False)
class CrfWeights:
    """A CRFsuite model as arrays.

    ``attribute_ids`` maps an attribute string to its id; the state weights of
    attribute ``a`` are ``ref_label[ref_ptr[a]:ref_ptr[a+1]]`` /
    ``ref_weight[...]`` in the model's own order; ``transitions[i, j]`` is the
    weight of label i followed by label j.
    """

    labels: tuple[str, ...]
    attribute_ids: dict[str, int]
    ref_ptr: np.ndarray
    ref_label: np.ndarray
    ref_weight: np.ndarray
    transitions: np.ndarray

    @cached_property
    def state_rows(self) -> np.ndarray:
        """The state weights as one dense row per attribute, zero where it has none.

        Adding a whole row costs a few vector adds where walking the refs
        cost a scattered add each (a known attribute has 18 on average in
        notes); adding the zeros changes no sum, so the scores are the same
        to the bit. Rows are padded to a multiple of four labels (the vector
        width). 12,714 attributes x 52 labels is 5.3 MB.
        """
        n_attrs = len(self.ref_ptr) - 1
        rows = np.zeros((n_attrs, -(-len(self.labels) // 4) * 4))
        owner = np.repeat(np.arange(n_attrs), np.diff(self.ref_ptr))
        rows[owner, self.ref_label] = self.ref_weight
        return rows

    def attribute_names(self) -> list[str]:
        """Attribute strings in id order (for inspection and tests)."""
        names = [""] * len(self.attribute_ids)
        for name, i in self.attribute_ids.items():
            names[i] = name
        return names

    def state_weights(self) -> dict[tuple[str, str], float]:
        """Every state feature as ``(attribute, label) -> weight``."""
        names = self.attribute_names()
        out = {}
        for a, name in enumerate(names):
            for r in range(self.ref_ptr[a], self.ref_ptr[a + 1]):
                out[(name, self.labels[self.ref_label[r]])] = float(self.ref_weight[r])
        return out


def _cqdb_strings(data: bytes, offset: int, count: int) -> list[str]:
    """The ``count`` keys of the CQDB database at ``offset``, in id order."""
    chunk, _size, _flag, _order, bwd_size, bwd_offset = _CQDB.unpack_from(data, offset)
    if chunk != b"CQDB" or bwd_size < count:
        raise ModelFormatError("string database missing or truncated")
    records = np.frombuffer(data, "<u4", bwd_size, offset + bwd_offset)
    strings = []
    for i in range(count):
        at = offset + int(records[i])
        rid, ksize = struct.unpack_from("<II", data, at)
        if rid != i or ksize == 0:
            raise ModelFormatError("string database out of order")
        # ksize counts the terminating NUL.
        strings.append(data[at + 8:at + 7 + ksize].decode("utf-8"))
    return strings


def _refs(data: bytes, offset: int, magic: bytes, count: int) -> list[np.ndarray]:
    """The feature-id list of each of ``count`` labels or attributes."""
    chunk, _size, num = _CHUNK.unpack_from(data, offset)
    if chunk != magic or num != count:
        raise ModelFormatError(f"{magic.decode()} chunk missing or truncated")
    offsets = np.frombuffer(data, "<u4", num, offset + _CHUNK.size)
    lists = []
    for at in offsets.tolist():
        (n,) = struct.unpack_from("<I", data, at)
        lists.append(np.frombuffer(data, "<u4", n, at + 4))
    return lists


def read_model(data: bytes) -> CrfWeights:
    """Read a CRFsuite model file's bytes (as written by ``pycrfsuite.Trainer``).

    Raises :class:`ModelFormatError` for anything else, truncated files included.
    """
    try:
        return _read_model(data)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"not a readable CRFsuite model ({exc})") from None


def check_header(data: bytes) -> tuple:
    """A CRFsuite CRF1d model's header fields (ModelFormatError if it is none)."""
    if len(data) < _HEADER.size:
        raise ModelFormatError("too short for a CRFsuite model")
    header = _HEADER.unpack_from(data)
    magic, size, kind = header[:3]
    if magic != b"lCRF" or kind != b"FOMC" or size > len(data):
        raise ModelFormatError("not a CRFsuite CRF1d model")
    return header


def _read_model(data: bytes) -> CrfWeights:
    # The header's feature count is not filled in by CRFsuite; the chunk's is.
    (_magic, _size, _kind, _version, _n_features, n_labels, n_attrs, off_features,
     off_labels, off_attrs, _off_labelrefs, off_attrrefs) = check_header(data)
    chunk, _size, n_features = _CHUNK.unpack_from(data, off_features)
    if chunk != b"FEAT" or off_features + _CHUNK.size + 20 * n_features > len(data):
        raise ModelFormatError("feature chunk missing or truncated")
    features = np.frombuffer(data, _FEATURE, n_features, off_features + _CHUNK.size)
    labels = tuple(_cqdb_strings(data, off_labels, n_labels))
    attributes = _cqdb_strings(data, off_attrs, n_attrs)

    transitions = np.zeros((n_labels, n_labels))
    is_transition = features["type"] == _TRANSITION
    transitions[features["src"][is_transition], features["dst"][is_transition]] = (
        features["weight"][is_transition])

    refs = _refs(data, off_attrrefs, b"AFRF", n_attrs)
    fids = np.concatenate(refs) if refs else np.zeros(0, "<u4")
    if np.any(features["type"][fids] != _STATE):
        raise ModelFormatError("attribute refers to a non-state feature")
    ref_ptr = np.fromiter(accumulate(map(len, refs), initial=0), np.int64,
                          n_attrs + 1)
    return CrfWeights(
        labels=labels,
        attribute_ids={name: i for i, name in enumerate(attributes)},
        ref_ptr=ref_ptr,
        ref_label=features["dst"][fids].astype(np.int64),
        ref_weight=features["weight"][fids].astype(np.float64),
        transitions=transitions,
    )


class Decoded:
    """One sequence decoded: per-token label marginals; the best path on demand.

    ``path`` (label id per token) and ``probability`` (P(path | tokens)) are
    computed when first read: the CRF detector reads them only for a note
    with a token marked PHI (one in three), and Viterbi was a fifth of the
    decoding.
    """

    def __init__(self, marginals: np.ndarray, state: np.ndarray,
                 transitions: np.ndarray, log_norm: float) -> None:
        self.marginals = marginals  # (tokens, labels)
        self._state = state
        self._transitions = transitions
        self._log_norm = log_norm

    @cached_property
    def _best(self) -> tuple[np.ndarray, float]:
        if not len(self._state):
            return np.zeros(0, np.int64), 1.0
        path, score = best_path(self._state, self._transitions)
        return path, float(np.exp(score - self._log_norm))

    @property
    def path(self) -> np.ndarray:
        return self._best[0]

    @property
    def probability(self) -> float:
        return self._best[1]


def decode(weights: CrfWeights, features: Sequence[Sequence[str]]) -> Decoded:
    """Viterbi path and marginals of one sequence of attribute-string lists."""
    n = len(features)
    offsets = np.fromiter(accumulate(map(len, features), initial=0), np.int64, n + 1)
    ids = np.fromiter(map(weights.attribute_ids.get, chain.from_iterable(features),
                          repeat(-1)), np.int64, offsets[-1])
    return decode_ids(weights, ids, offsets)


def decode_ids(weights: CrfWeights, ids: np.ndarray, offsets: np.ndarray) -> Decoded:
    """:func:`decode` of attribute ids, for callers that never spell the strings.

    Token t's ids are ``ids[offsets[t]:offsets[t+1]]`` in the order of its
    strings (the order of CRFsuite's sums); -1 is an attribute the model lacks.
    """
    if len(offsets) == 1:
        n_labels = len(weights.labels)
        return Decoded(np.zeros((0, n_labels)), np.zeros((0, n_labels)),
                       weights.transitions, 0.0)
    state, marginals, log_norm = marginal_arrays(ids, offsets, weights.state_rows,
                                                 weights.transitions)
    return Decoded(marginals, state, weights.transitions, log_norm)
