"""Training the neural second view in numpy: hand-written gradients, Adam, seeded.

The forward pass is :func:`deid_pipeline.tagger.neural.forward` (the one that
runs at tagging time); :func:`backward` is its gradient, checked against
finite differences by ``tests/test_neural.py``. No framework: the default
install stays as it is, and a model is the same bytes for the same documents,
options and numpy (one thread: ``OMP_NUM_THREADS=1`` pins BLAS's summation
order).

The recipe is the CRF's: the development notes of the patients trained on,
``synthetic:N`` notes and ``--augment`` copies drawn from the TRAINING half of
every name and place list (:func:`neural_training_documents`).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TextIO

import numpy as np

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.bio import OUTSIDE, spans_to_bio
from deid_pipeline.tagger.neural import (
    CHAR_WINDOW,
    MAX_CHARS,
    N_FLAGS,
    WINDOW_1,
    WINDOW_2,
    Inputs,
    Vocabulary,
    Weights,
    encode,
    forward,
    normal_word,
    save_weights,
)
from deid_pipeline.tokenizer import Token, tokenize


@dataclass(frozen=True)
class NeuralOptions:
    """Sizes and optimiser settings (the defaults are the measured recipe)."""

    word_dim: int = 32
    char_dim: int = 16
    char_filters: int = 32
    hidden: int = 64
    epochs: int = 8
    learning_rate: float = 2e-3
    batch_tokens: int = 4000
    word_dropout: float = 0.15
    min_count: int = 2
    clip: float = 5.0
    seed: int = 0


def init_weights(words: Sequence[str], chars: Sequence[str], labels: Sequence[str],
                 options: NeuralOptions = NeuralOptions(), recipe: str = "{}"
                 ) -> Weights:
    """Seeded random weights (scaled for the fan-in)."""
    rng = np.random.default_rng(options.seed)
    feature_dim = options.word_dim + options.char_filters + N_FLAGS

    def normal(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    width = len(CHAR_WINDOW) * options.char_dim
    return Weights(
        tuple(words), tuple(chars), tuple(labels),
        word_emb=normal((len(words), options.word_dim), 4),
        char_emb=normal((len(chars), options.char_dim), 4),
        char_w=normal((width, options.char_filters), width),
        char_b=np.zeros(options.char_filters, np.float32),
        w1=normal((len(WINDOW_1) * feature_dim, options.hidden),
                  len(WINDOW_1) * feature_dim),
        b1=np.zeros(options.hidden, np.float32),
        w2=normal((len(WINDOW_2) * options.hidden, options.hidden),
                  len(WINDOW_2) * options.hidden),
        b2=np.zeros(options.hidden, np.float32),
        w_out=normal((options.hidden, len(labels)), options.hidden),
        b_out=np.zeros(len(labels), np.float32),
        recipe=recipe)


def _unwindows(d: np.ndarray, offsets: Sequence[int], width: int) -> np.ndarray:
    """The adjoint of :func:`deid_pipeline.tagger.neural.windows`."""
    n = d.shape[0]
    out = np.zeros((n, width), dtype=d.dtype)
    for k, o in enumerate(offsets):
        lo, hi = max(0, -o), min(n, n - o)
        if hi > lo:
            out[lo + o:hi + o] += d[lo:hi, k * width:(k + 1) * width]
    return out


def _scatter_rows(index: np.ndarray, values: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, values.shape[1]), dtype=values.dtype)
    np.add.at(out, index, values)
    return out


def loss_and_gradients(params: dict[str, np.ndarray], inputs: Inputs,
                       targets: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """Mean cross-entropy over the real tokens, and its gradient per array.

    ``targets`` holds a label index per row of ``inputs`` (ignored on padding).
    """
    probs, c = forward(params, inputs, keep=True)
    real = inputs.real
    count = max(1, int(real.sum()))
    rows = np.flatnonzero(real)
    picked = probs[rows, targets[rows]]
    loss = float(-np.log(np.maximum(picked, 1e-12)).sum() / count)
    d_logits = probs.copy()
    d_logits[rows, targets[rows]] -= 1.0
    d_logits[~real] = 0.0
    d_logits /= count
    g: dict[str, np.ndarray] = {}
    g["w_out"] = c["h2"].T @ d_logits
    g["b_out"] = d_logits.sum(axis=0)
    d_h2 = d_logits @ params["w_out"].T
    d_a2 = d_h2 * (c["a2"] > 0)
    g["w2"] = c["x2"].T @ d_a2
    g["b2"] = d_a2.sum(axis=0)
    hidden = c["h1"].shape[1]
    d_h1 = d_h2 + _unwindows(d_a2 @ params["w2"].T, WINDOW_2, hidden)
    d_z1 = d_h1 * (c["h1"] > 0)
    g["w1"] = c["x1"].T @ d_z1
    g["b1"] = d_z1.sum(axis=0)
    d_x = _unwindows(d_z1 @ params["w1"].T, WINDOW_1, c["x"].shape[1])
    word_dim = params["word_emb"].shape[1]
    filters = params["char_b"].shape[0]
    g["word_emb"] = _scatter_rows(inputs.words, d_x[:, :word_dim],
                                  params["word_emb"].shape[0])
    d_pooled = d_x[:, word_dim:word_dim + filters] * (1.0 - c["char_vec"] ** 2)
    n, length = inputs.chars.shape
    d_conv = np.zeros((n, length, filters), dtype=d_pooled.dtype)
    np.put_along_axis(d_conv, c["arg"][:, None, :], d_pooled[:, None, :], axis=1)
    ccol = c["ccol"]
    g["char_w"] = ccol.reshape(-1, ccol.shape[2]).T @ d_conv.reshape(-1, filters)
    g["char_b"] = d_conv.sum(axis=(0, 1))
    d_ccol = d_conv @ params["char_w"].T
    e = params["char_emb"].shape[1]
    d_padded = np.zeros((n, length + 2, e), dtype=d_ccol.dtype)
    for k in range(len(CHAR_WINDOW)):
        d_padded[:, k:k + length] += d_ccol[:, :, k * e:(k + 1) * e]
    g["char_emb"] = _scatter_rows(inputs.chars.ravel(),
                                  d_padded[:, 1:-1].reshape(-1, e),
                                  params["char_emb"].shape[0])
    return loss, g


class Adam:
    """Adam (Kingma and Ba) with global-norm clipping, over a dict of arrays."""

    def __init__(self, params: dict[str, np.ndarray], rate: float, clip: float,
                 beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        self.rate, self.clip = rate, clip
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.steps = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]
             ) -> None:
        """Update ``params`` in place."""
        norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads.values())))
        scale = min(1.0, self.clip / max(norm, 1e-12))
        self.steps += 1
        t = self.steps
        correction = np.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
        for k, grad in grads.items():
            grad = grad * scale
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * grad
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * grad * grad
            params[k] -= (self.rate * correction * self.m[k]
                          / (np.sqrt(self.v[k]) + self.eps)).astype(params[k].dtype)


# ---------------------------------------------------------------------------
# Data.


def token_kinds(tokens: Sequence[Token], doc: ClinicalDocument) -> list[str]:
    """Each token's gold PHI kind (``O`` outside): BIO tags without the prefix."""
    return [tag.partition("-")[2] if tag != OUTSIDE else OUTSIDE
            for tag in spans_to_bio(tokens, doc.gold)]


def vocabularies(tokenized: Sequence[tuple[str, list[Token]]], min_count: int
                 ) -> tuple[list[str], list[str]]:
    """Words met ``min_count`` times and characters met twice, after pad and unknown."""
    words: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    for _, tokens in tokenized:
        for tok in tokens:
            words[normal_word(tok.text)] += 1
            chars.update(tok.text[:MAX_CHARS])
    kept_words = sorted(w for w, n in words.items() if n >= min_count)
    kept_chars = sorted(c for c, n in chars.items() if n >= 2)
    return ["<pad>", "<unk>", *kept_words], ["\0", "\1", *kept_chars]


def neural_training_documents(docs: Sequence[ClinicalDocument], augment: int,
                              seed: int = 0, pools: str = "training"
                              ) -> list[ClinicalDocument]:
    """``docs`` and ``augment`` surrogate copies of each annotated note (the CRF's)."""
    if not augment:
        return list(docs)
    from deid_pipeline.training.augment import with_augmented_copies
    from deid_pipeline.training.crf import POOLS

    return list(with_augmented_copies(docs, augment, seed, POOLS[pools]))


@dataclass(frozen=True)
class NeuralResult:
    """What training produced: counts and the weights' identity (no PHI)."""

    path: str
    documents: int
    tokens: int
    seconds: float
    sha256: str
    size: int
    final_loss: float


def _batches(order: Sequence[int], sizes: Sequence[int], budget: int
             ) -> list[list[int]]:
    batches: list[list[int]] = [[]]
    used = 0
    for i in order:
        if batches[-1] and used + sizes[i] > budget:
            batches.append([])
            used = 0
        batches[-1].append(i)
        used += sizes[i]
    return [b for b in batches if b]


def train_neural(docs: Sequence[ClinicalDocument], output: str,
                 options: NeuralOptions = NeuralOptions(),
                 progress: TextIO | None = sys.stderr,
                 recipe: dict | None = None) -> NeuralResult:
    """Train on ``docs``' gold and write the weights to ``output`` (an ``.npz``)."""
    started = time.monotonic()
    tokenized = [(d.text, tokenize(d.text)) for d in docs]
    keep = [i for i, (_, toks) in enumerate(tokenized) if toks]
    words, chars = vocabularies([tokenized[i] for i in keep], options.min_count)
    kinds = sorted({s.label for d in docs for s in d.gold})
    labels = [OUTSIDE, *kinds]
    label_index = {k: i for i, k in enumerate(labels)}
    record = {"options": asdict(options), "documents": len(docs), **(recipe or {})}
    weights = init_weights(words, chars, labels, options,
                           json.dumps(record, sort_keys=True))
    params = {k: v.copy() for k, v in weights.arrays().items()}
    vocabulary = Vocabulary(words, chars)
    encoded = []
    for i in keep:
        text, tokens = tokenized[i]
        inputs = encode(vocabulary, [(text, tokens)])
        target = np.zeros(len(inputs.real), dtype=np.int64)
        target[inputs.real] = [label_index[k] for k in token_kinds(tokens, docs[i])]
        encoded.append((inputs, target))
    sizes = [len(t) for _, t in encoded]
    n_tokens = sum(int(x.real.sum()) for x, _ in encoded)
    rng = np.random.default_rng(options.seed)
    adam = Adam(params, options.learning_rate, options.clip)
    loss = float("nan")
    for epoch in range(options.epochs):
        order = rng.permutation(len(encoded))
        total = count = 0.0
        for batch in _batches(order.tolist(), sizes, options.batch_tokens):
            inputs = _concatenate([encoded[i][0] for i in batch])
            target = np.concatenate([encoded[i][1] for i in batch])
            drop = (rng.random(len(inputs.words)) < options.word_dropout) & inputs.real
            inputs = Inputs(np.where(drop, 1, inputs.words), inputs.chars,
                            inputs.flags, inputs.real)
            loss, grads = loss_and_gradients(params, inputs, target)
            adam.step(params, grads)
            total += loss
            count += 1
        loss = total / max(count, 1)
        if progress is not None:
            print(f"neural: epoch {epoch + 1}/{options.epochs}  loss {loss:.4f}  "
                  f"elapsed {time.monotonic() - started:.0f}s", file=progress,
                  flush=True)
    trained = Weights(weights.words, weights.chars, weights.labels,
                      recipe=weights.recipe, **params)
    sha = save_weights(trained, output)
    with open(output, "rb") as fh:
        size = len(fh.read())
    return NeuralResult(output, len(docs), n_tokens, time.monotonic() - started, sha,
                        size, loss)


def _concatenate(parts: Sequence[Inputs]) -> Inputs:
    return Inputs(np.concatenate([p.words for p in parts]),
                  np.concatenate([p.chars for p in parts]),
                  np.concatenate([p.flags for p in parts]),
                  np.concatenate([p.real for p in parts]))


def weights_sha256(path: str) -> str:
    """The sha256 of a weights file (what a model card records)."""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()
