"""The neural second view: per-token PHI kinds from learnt word and character vectors.

Liu et al. 2017's second view, small enough to run in numpy: each token is a
word vector (its lower-cased form, digits as ``0``; rare words share one
unknown vector), a character CNN over its first :data:`MAX_CHARS` characters
(width 3, max-pooled, so an unseen surname still reads as one) and a few
layout flags (case, digits, a line break before or after); two token
convolutions (width 5, then width 3 dilated by 2, residual: each token sees
four tokens on either side) and a softmax over ``O`` and the PHI kinds of
the training gold (token kinds, no BIO: the ensemble reads P(O)).

Weights are plain numpy arrays in one ``.npz`` (:func:`save_weights`,
:func:`load_weights`), trained by :mod:`deid_pipeline.training.neural`;
inference is this module's :meth:`NeuralModel.probabilities`, vectorised over
a document's tokens. The forward pass is written once here and the trainer
differentiates the same functions, so what is trained is what runs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deid_pipeline.tokenizer import Token

FORMAT = "deid-pipeline neural tagger v1"
MAX_CHARS = 12
# Tokens of padding around a document: the encoder's reach (2 + 2 * 2... 4).
CONTEXT = 4
PAD, UNKNOWN = 0, 1
N_FLAGS = 7
# Words whose features a loaded model keeps (about 20 MB at the default sizes).
MAX_ROWS = 100_000
# Characters past this code point share the unknown character's vector.
MAX_CODE_POINT = 0x3000


def normal_word(text: str) -> str:
    """The word vector's key: lower case, every digit ``0``."""
    return text.lower().translate(_DIGITS)


_DIGITS = str.maketrans("123456789", "000000000")


@dataclass(frozen=True)
class Weights:
    """The arrays of one model (float32) and what they mean.

    ``words``/``chars``: the vocabularies, index = row of ``word_emb`` /
    ``char_emb`` (0 padding, 1 unknown); ``labels``: the softmax's classes,
    ``O`` first.
    """

    words: tuple[str, ...]
    chars: tuple[str, ...]
    labels: tuple[str, ...]
    word_emb: np.ndarray
    char_emb: np.ndarray
    char_w: np.ndarray
    char_b: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray
    recipe: str = "{}"

    ARRAYS = ("word_emb", "char_emb", "char_w", "char_b", "w1", "b1", "w2", "b2",
              "w_out", "b_out")

    def arrays(self) -> dict[str, np.ndarray]:
        """The parameter arrays by name (the trainer's view)."""
        return {name: getattr(self, name) for name in self.ARRAYS}


def save_weights(weights: Weights, path: str) -> str:
    """Write ``weights`` to ``path`` (an ``.npz``, byte-stable); return its sha256."""
    buffer = io.BytesIO()
    meta = json.dumps({"format": FORMAT, "words": weights.words,
                       "chars": weights.chars, "labels": weights.labels,
                       "recipe": json.loads(weights.recipe)}, sort_keys=True)
    arrays = {name: np.ascontiguousarray(a, dtype=np.float32)
              for name, a in weights.arrays().items()}
    # np.savez stamps zip entries with the time: write the entries ourselves.
    import zipfile

    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        entries = {"meta.npy": np.frombuffer(meta.encode(), dtype=np.uint8),
                   **{f"{k}.npy": v for k, v in arrays.items()}}
        for name in sorted(entries):
            data = io.BytesIO()
            np.lib.format.write_array(data, entries[name], allow_pickle=False)
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data.getvalue())
    payload = buffer.getvalue()
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(payload)
    os.replace(tmp, path)
    return hashlib.sha256(payload).hexdigest()


class WeightsFormatError(ValueError):
    """A file that is not this module's weights."""


def load_weights(path: str) -> Weights:
    """Read an ``.npz`` written by :func:`save_weights` (no pickles)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            arrays = {name: data[name].astype(np.float32) for name in Weights.ARRAYS}
    except (KeyError, ValueError, OSError) as exc:
        raise WeightsFormatError(f"not a neural tagger weights file: {path}") from exc
    if meta.get("format") != FORMAT:
        raise WeightsFormatError(f"unknown neural weights format in {path}")
    return Weights(tuple(meta["words"]), tuple(meta["chars"]), tuple(meta["labels"]),
                   recipe=json.dumps(meta.get("recipe", {}), sort_keys=True),
                   **arrays)


# ---------------------------------------------------------------------------
# Inputs.


@dataclass(frozen=True)
class Inputs:
    """One or more documents' tokens as ids, padded by :data:`CONTEXT` tokens.

    ``real`` marks the rows that are tokens (not padding), in order.
    """

    words: np.ndarray   # (n,) int
    chars: np.ndarray   # (n, MAX_CHARS) int
    flags: np.ndarray   # (n, N_FLAGS) float32
    real: np.ndarray    # (n,) bool


class Vocabulary:
    """Token -> ids, with a cache of the words met (shared, thread-safe enough)."""

    def __init__(self, words: Sequence[str], chars: Sequence[str]) -> None:
        self.word_ids = {w: i for i, w in enumerate(words)}
        self.char_table = np.full(MAX_CODE_POINT, UNKNOWN, dtype=np.int32)
        for i, c in enumerate(chars):
            if i > UNKNOWN and ord(c) < MAX_CODE_POINT:
                self.char_table[ord(c)] = i
        self._cache: dict[str, tuple[int, np.ndarray, tuple[float, ...]]] = {}

    def token(self, text: str) -> tuple[int, np.ndarray, tuple[float, ...]]:
        """The word id, character-id row and shape flags of a token's text."""
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        word = self.word_ids.get(normal_word(text), UNKNOWN)
        codes = np.frombuffer(text[:MAX_CHARS].encode("utf-32-le"), dtype=np.uint32)
        row = np.zeros(MAX_CHARS, dtype=np.int32)
        row[:len(codes)] = np.where(codes < MAX_CODE_POINT,
                                    self.char_table[np.minimum(codes,
                                                               MAX_CODE_POINT - 1)],
                                    UNKNOWN)
        entry = (word, row, shape_flags(text))
        if len(self._cache) < 200_000:
            self._cache[text] = entry
        return entry


def shape_flags(word: str) -> tuple[float, ...]:
    """The first five flags of a token (:func:`token_flags`), from its text alone."""
    return (float(word[:1].isupper()), float(word.isupper() and len(word) > 1),
            float(word.islower()), float(word[:1].isdigit()),
            float(not word[:1].isalnum()))


def token_flags(text: str, tokens: Sequence[Token],
                shapes: Sequence[tuple[float, ...]] | None = None) -> np.ndarray:
    """Per token, seven flags (0/1).

    Capitalised, all capitals, all lower case, starting with a digit, not
    alphanumeric (``shapes``: these five, if known), a line break before it,
    a line break after it.
    """
    n = len(tokens)
    flags = np.zeros((n, N_FLAGS), dtype=np.float32)
    if not n:
        return flags
    if shapes is None:
        flags[:, :5] = [shape_flags(t.text) for t in tokens]
    elif len(shapes):
        flags[:, :5] = shapes
    # Line breaks before each token: the count of newlines up to its start
    # against the count up to the previous token's end.
    newlines = np.concatenate([[0], np.cumsum(np.frombuffer(
        text.encode("utf-32-le"), dtype=np.uint32) == 10)])
    starts = np.fromiter((t.start for t in tokens), np.int64, n)
    ends = np.fromiter((t.end for t in tokens), np.int64, n)
    before = newlines[starts] > newlines[np.concatenate([[0], ends[:-1]])]
    before[0] = True
    flags[:, 5] = before
    flags[:-1, 6] = flags[1:, 5]
    flags[-1, 6] = 1.0
    return flags


def encode(vocabulary: Vocabulary, documents: Sequence[tuple[str, Sequence[Token]]]
           ) -> Inputs:
    """Documents (text, tokens) as one padded batch: CONTEXT pads around each."""
    words: list[int] = []
    chars: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    real: list[bool] = []
    blank = np.zeros(MAX_CHARS, dtype=np.int32)
    pad_flags = np.zeros((CONTEXT, N_FLAGS), dtype=np.float32)
    for text, tokens in documents:
        words.extend([PAD] * CONTEXT)
        chars.extend([blank] * CONTEXT)
        flags.append(pad_flags)
        real.extend([False] * CONTEXT)
        shapes = []
        for tok in tokens:
            word, row, shape = vocabulary.token(tok.text)
            words.append(word)
            chars.append(row)
            shapes.append(shape)
        flags.append(token_flags(text, tokens, shapes))
        real.extend([True] * len(tokens))
    words.extend([PAD] * CONTEXT)
    chars.extend([blank] * CONTEXT)
    flags.append(pad_flags)
    real.extend([False] * CONTEXT)
    return Inputs(np.asarray(words, dtype=np.int64), np.stack(chars),
                  np.concatenate(flags), np.asarray(real, dtype=bool))


# ---------------------------------------------------------------------------
# The forward pass (the trainer keeps its intermediate values for backprop).


def windows(x: np.ndarray, offsets: Sequence[int]) -> np.ndarray:
    """Rows ``x[t + o]`` for each offset side by side (zeros past either end)."""
    n, d = x.shape
    out = np.zeros((n, d * len(offsets)), dtype=x.dtype)
    for k, o in enumerate(offsets):
        lo, hi = max(0, -o), min(n, n - o)
        if hi > lo:
            out[lo:hi, k * d:(k + 1) * d] = x[lo + o:hi + o]
    return out


WINDOW_1 = (-2, -1, 0, 1, 2)
WINDOW_2 = (-2, 0, 2)
CHAR_WINDOW = (-1, 0, 1)


def char_columns(char_vectors: np.ndarray) -> np.ndarray:
    """(n, L, e) character vectors -> (n, L, 3e): each with its neighbours."""
    n, length, e = char_vectors.shape
    padded = np.zeros((n, length + 2, e), dtype=char_vectors.dtype)
    padded[:, 1:-1] = char_vectors
    return np.concatenate([padded[:, k:k + length] for k in range(3)], axis=2)


def char_vectors(p: dict[str, np.ndarray], chars: np.ndarray,
                 keep: bool = False):
    """(n, MAX_CHARS) character ids -> (n, filters) token vectors (CNN, max, tanh)."""
    ccol = char_columns(p["char_emb"][chars])             # (n, L, 3e)
    conv = ccol @ p["char_w"] + p["char_b"]              # (n, L, c)
    arg = conv.argmax(axis=1)                            # (n, c)
    pooled = np.take_along_axis(conv, arg[:, None, :], axis=1)[:, 0]
    vectors = np.tanh(pooled)
    return (vectors, ccol, arg) if keep else vectors


def encoder(p: dict[str, np.ndarray], x: np.ndarray, keep: bool = False):
    """Token features (n, d) -> label probabilities (n, labels)."""
    x1 = windows(x, WINDOW_1)
    h1 = np.maximum(x1 @ p["w1"] + p["b1"], 0.0)
    x2 = windows(h1, WINDOW_2)
    a2 = x2 @ p["w2"] + p["b2"]
    h2 = np.maximum(a2, 0.0) + h1
    logits = h2 @ p["w_out"] + p["b_out"]
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    if not keep:
        return probs
    return probs, dict(x=x, x1=x1, h1=h1, x2=x2, a2=a2, h2=h2)


def forward(p: dict[str, np.ndarray], inputs: Inputs, keep: bool = False):
    """Softmax probabilities (n, labels); with ``keep`` also the cache for backprop."""
    chars, ccol, arg = char_vectors(p, inputs.chars, keep=True)
    x = np.concatenate([p["word_emb"][inputs.words], chars, inputs.flags], axis=1)
    if not keep:
        return encoder(p, x)
    probs, cache = encoder(p, x, keep=True)
    cache.update(ccol=ccol, arg=arg, char_vec=chars)
    return probs, cache


class NeuralModel:
    """Loaded weights plus their vocabulary; immutable once built, shared by threads."""

    def __init__(self, weights: Weights, sha256: str = "", path: str = "") -> None:
        self.weights = weights
        self.path = path
        self.sha256 = sha256
        self.labels = weights.labels
        self.outside = self.labels.index("O")
        self.params = weights.arrays()
        self.vocabulary = Vocabulary(weights.words, weights.chars)
        # Row 0: the padding token's features (no word, no characters, no flags).
        pad = np.concatenate([self.params["word_emb"][PAD], char_vectors(
            self.params, np.zeros((1, MAX_CHARS), np.int64))[0],
            np.zeros(5, np.float32)])
        self._table = np.empty((1024, len(pad)), np.float32)
        self._table[0] = pad
        self._row_of: dict[str, int] = {"": 0}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``nn-<sha256 prefix>``: the weights' identity in versions and run.json."""
        return f"nn-{self.sha256[:12]}"

    def probabilities(self, text: str, tokens: Sequence[Token]) -> np.ndarray:
        """(tokens, labels) probabilities of one document's tokens.

        :func:`forward`'s result, with each word's features (its vector, its
        character vector, its shape flags) computed once per process: notes
        repeat their words, and the character CNN is most of the cost.
        """
        n = len(tokens)
        if not n:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        index = self._row_of
        texts = [tok.text for tok in tokens]
        missing = [t for t in dict.fromkeys(texts) if t not in index]
        overflow = self._add_rows(missing) if missing else {}
        rows = np.fromiter((index.get(t, 0) for t in texts), np.int64, n)
        # Read after the index: a row is written before its word is indexed.
        table = self._table
        x = np.empty((n + 2 * CONTEXT, table.shape[1] + 2), dtype=np.float32)
        x[:CONTEXT, :-2] = x[-CONTEXT:, :-2] = table[0]
        x[:CONTEXT, -2:] = x[-CONTEXT:, -2:] = 0.0
        x[CONTEXT:-CONTEXT, :-2] = table[rows]
        for i, t in enumerate(texts) if overflow else ():
            if t in overflow:
                x[CONTEXT + i, :-2] = overflow[t]
        x[CONTEXT:-CONTEXT, -2:] = token_flags(text, tokens, ())[:, 5:]
        return encoder(self.params, x)[CONTEXT:-CONTEXT]

    def _add_rows(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Feature rows of ``texts`` added to the table (at most :data:`MAX_ROWS`).

        Returns the rows of the texts that did not fit (used for this call only).
        """
        p = self.params
        entries = [self.vocabulary.token(t) for t in texts]
        chars = char_vectors(p, np.stack([e[1] for e in entries]))
        new = np.concatenate([p["word_emb"][[e[0] for e in entries]], chars,
                              np.asarray([e[2] for e in entries], np.float32)],
                             axis=1)
        with self._lock:
            index = self._row_of
            fresh = [i for i, t in enumerate(texts) if t not in index]
            room = max(0, MAX_ROWS - len(index))
            kept, spilt = fresh[:room], fresh[room:]
            if kept:
                used = len(index)
                table = self._table
                if used + len(kept) > len(table):
                    grown = np.empty((max(2 * len(table), used + len(kept)),
                                      table.shape[1]), np.float32)
                    grown[:used] = table[:used]
                    table = grown
                table[used:used + len(kept)] = new[kept]
                self._table = table
                for i in kept:
                    index[texts[i]] = len(index)
        return {texts[i]: new[i] for i in spilt}

    def p_outside(self, text: str, tokens: Sequence[Token]) -> np.ndarray:
        """P(O) per token."""
        return self.probabilities(text, tokens)[:, self.outside]


_MODELS: dict[str, NeuralModel] = {}
_LOCK = threading.Lock()


def load_neural(path: str) -> NeuralModel:
    """The weights at ``path``, loaded once per process (cached by content hash)."""
    with open(path, "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    with _LOCK:
        model = _MODELS.get(sha)
        if model is None:
            model = _MODELS[sha] = NeuralModel(load_weights(path), sha,
                                               os.path.abspath(path))
    return model


def weights_beside(model_path: str) -> str:
    """The second view's weights that belong with the CRF model at ``model_path``.

    ``models/default.crfsuite`` -> ``models/default.neural.npz``: a CRF model
    and the neural view trained on the same data travel together.
    """
    stem, _ = os.path.splitext(model_path)
    return f"{stem}.neural.npz"
