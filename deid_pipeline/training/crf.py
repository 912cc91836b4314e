"""Fitting the CRF with CRFsuite: options, HIDE's token sampling, the training run.

Apart from :mod:`deid_pipeline.tagger.crf` (loading and biased tagging)
because a worker that only tags never needs any of it. The
same features and BIO conversion serve both, so training and tagging cannot
disagree about a boundary.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import pycrfsuite

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.surrogates.halves import PoolHalf
from deid_pipeline.tagger import languages
from deid_pipeline.tagger.bio import OUTSIDE, spans_to_bio
from deid_pipeline.tagger.features import (
    document_features,
    own_clusters_only,
    without_clusters,
    without_identity,
)
from deid_pipeline.tagger.model_metadata import append_metadata
from deid_pipeline.tokenizer import tokenize

if TYPE_CHECKING:
    from deid_pipeline.label_maps import LabelMap


@dataclass(frozen=True)
class TrainOptions:
    """CRFsuite L-BFGS options plus HIDE's sampling of the training tokens.

    ``delta``/``period``: stop when the log-likelihood improved by less than
    ``delta`` (relative) over the last ``period`` iterations (HIDE: 1e-5).
    ``sampling``: ``none``, ``window:K`` (only tokens within K of a PHI token),
    or ``random-o:P`` (every PHI token, each O token with probability P).
    ``augment``: each annotated non-synthetic note is also trained on this
    many times with its PHI replaced by surrogates (:mod:`.augment`).
    ``clusters``: the Brown-cluster features trained on, ``all``, ``own``
    (the token's path prefixes only) or ``none``; ``hide_copy_words``: the
    copies' PHI words are unspelt
    (:func:`~deid_pipeline.tagger.features.without_identity`), and
    with ``hide_rare`` N > 0 also their words met at most N times in the
    training documents that are not copies, so unspelt words are not all PHI. All three
    only remove features, so tagging needs no option: the decoder ignores
    attributes a model does not know. ``pools``: the half of the name and
    place lists the copies draw from, ``training`` (a model to be scored on
    the swapped split or the genre set) or ``whole`` (every list: a model
    for use; :data:`POOLS`).
    """

    c1: float = 0.05
    c2: float = 0.05
    max_iterations: int = 100
    sampling: str = "none"
    seed: int = 0
    delta: float = 1e-5
    period: int = 10
    min_freq: float = 0.0
    augment: int = 0
    clusters: str = "all"
    hide_copy_words: bool = False
    hide_rare: int = 0
    pools: str = "training"


def parse_sampling(spec: str) -> tuple[str, float]:
    """``none`` | ``window:K`` | ``random-o:P`` -> (kind, parameter), or ValueError."""
    kind, _, value = spec.partition(":")
    if kind == "none" and not value:
        return "none", 0.0
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if kind == "window" and number >= 0 and number == int(number):
        return "window", number
    if kind == "random-o" and 0 < number <= 1:
        return "random-o", number
    raise ValueError(f"bad sampling {spec!r}: expected none, window:K (K >= 0 integer) "
                     "or random-o:P (0 < P <= 1)")


def _kept_runs(keep: Sequence[bool]) -> Iterator[tuple[int, int]]:
    i, n = 0, len(keep)
    while i < n:
        if not keep[i]:
            i += 1
            continue
        j = i
        while j < n and keep[j]:
            j += 1
        yield i, j
        i = j


CLUSTER_SETS = {"all": None, "own": own_clusters_only, "none": without_clusters}
# ``--pools``: which half of every name and place list training data draws from.
POOLS = {"training": PoolHalf.TRAINING, "whole": None}


def training_sequences(docs: Iterable[ClinicalDocument], sampling: str = "none",
                       seed: int = 0, language: str = "en", clusters: str = "all",
                       hide_words: Callable[[ClinicalDocument], bool] | None = None,
                       rare_words: frozenset[str] = frozenset()
                       ) -> Iterator[tuple[list[list[str]], list[str]]]:
    """(features, BIO tags) sequences for CRFsuite, after sampling.

    Features are computed on the whole document first, so a sampled token
    keeps its real context. Sampled-out tokens split the document into
    separate sequences. The random draw of ``random-o`` is seeded per document
    (seed + doc id), so a document is sampled the same in every fold and run.
    ``clusters`` names the cluster features kept (:data:`CLUSTER_SETS`); the
    PHI words of a document ``hide_words`` accepts are unspelt, and its
    ``rare_words`` (lower case) too.
    """
    kind, param = parse_sampling(sampling)
    features = (document_features if language == "en"
                else languages.feature_function(language))
    keep_clusters = CLUSTER_SETS[clusters]
    for doc in docs:
        tokens = tokenize(doc.text)
        if not tokens:
            continue
        feats = features(doc, tokens)
        tags = spans_to_bio(tokens, doc.gold)
        if keep_clusters is not None:
            feats = keep_clusters(feats)
        if hide_words is not None and hide_words(doc):
            feats = without_identity(feats, [
                tag != OUTSIDE or tok.text.lower() in rare_words
                for tok, tag in zip(tokens, tags)])
        if kind == "none":
            yield feats, tags
            continue
        phi = [t != OUTSIDE for t in tags]
        if kind == "window":
            k = int(param)
            keep = [False] * len(tags)
            for i, is_phi in enumerate(phi):
                if is_phi:
                    for j in range(max(0, i - k), min(len(tags), i + k + 1)):
                        keep[j] = True
        else:
            rng = random.Random(f"{seed}:{doc.doc_id}")
            keep = [is_phi or rng.random() < param for is_phi in phi]
        for a, b in _kept_runs(keep):
            yield feats[a:b], tags[a:b]


class _Trainer(pycrfsuite.Trainer):
    """pycrfsuite's trainer with progress (numbers only, never PHI) on a stream."""

    def __init__(self, stream: TextIO | None, every: int = 10) -> None:
        super().__init__(algorithm="lbfgs", verbose=stream is not None)
        self._stream = stream
        self._every = every
        self._started = time.monotonic()

    def _say(self, text: str) -> None:
        if self._stream is not None:
            print(text, file=self._stream, flush=True)

    def on_start(self, log):  # noqa: D102 - pycrfsuite hooks
        pass

    def on_featgen_progress(self, log, percent):  # noqa: D102
        pass

    def on_featgen_end(self, log):  # noqa: D102
        pass

    def on_prepared(self, log):  # noqa: D102
        pass

    def on_prepare_error(self, log):  # noqa: D102
        self._say("crf: training data error")

    def on_iteration(self, log, info):  # noqa: D102
        if info["num"] == 1 or info["num"] % self._every == 0:
            self._say(f"crf: iteration {info['num']:4d}  loss {info['loss']:.1f}  "
                      f"active features {info['active_features']}  "
                      f"elapsed {time.monotonic() - self._started:.0f}s")

    def on_optimization_end(self, log):  # noqa: D102
        self._say(f"crf: optimization done after "
                  f"{time.monotonic() - self._started:.0f}s")

    def on_end(self, log):  # noqa: D102
        pass


@dataclass(frozen=True)
class TrainResult:
    """What training produced: counts and the model's identity (no PHI)."""

    path: str
    documents: int
    sequences: int
    tokens: int
    seconds: float
    sha256: str
    size: int


def _rare_words(docs: Sequence[ClinicalDocument], most: int) -> frozenset[str]:
    """Lower-cased letter words met at most ``most`` times in ``docs`` (0: none)."""
    if most <= 0:
        return frozenset()
    counts = Counter(t.text.lower() for doc in docs for t in tokenize(doc.text)
                     if t.text.isalpha())
    return frozenset(w for w, n in counts.items() if n <= most)


def train_model(docs: Sequence[ClinicalDocument], output: str,
                options: TrainOptions = TrainOptions(),
                progress: TextIO | None = sys.stderr, language: str = "en",
                label_map: LabelMap | None = None,
                bias: float | None = None) -> TrainResult:
    """Train a model on ``docs``' gold spans and write it to ``output``.

    Deterministic: the same documents in the same order with the same options
    give the same model bytes (L-BFGS is deterministic, sampling is seeded).
    A model of another language or of a site's labels carries both in its
    file (:mod:`deid_pipeline.tagger.model_metadata`), with the bias
    tagging uses by default (``bias``; None: 0, the best path); an English
    model of the label set has no trailer, as before.
    """
    started = time.monotonic()
    hide_words = None
    if options.augment:
        from deid_pipeline.training.augment import is_copy, with_augmented_copies

        docs = list(with_augmented_copies(docs, options.augment, options.seed,
                                          POOLS[options.pools], language))
        hide_words = is_copy if options.hide_copy_words else None
    rare = frozenset()
    if hide_words is not None:
        # Counted in the notes, not the copies: a copy repeats its note's words.
        rare = _rare_words([d for d in docs if not hide_words(d)], options.hide_rare)
    trainer = _Trainer(progress)
    n_seq = n_tok = 0
    for xseq, yseq in training_sequences(docs, options.sampling, options.seed,
                                         language, options.clusters, hide_words,
                                         rare):
        trainer.append(xseq, yseq)
        n_seq += 1
        n_tok += len(yseq)
    if progress is not None:
        print(f"crf: {len(docs)} documents, {n_seq} sequences, {n_tok} tokens "
              f"(sampling {options.sampling}); features in "
              f"{time.monotonic() - started:.0f}s", file=progress, flush=True)
    if n_tok == 0:
        raise ValueError("no training tokens (empty corpus or sampling kept nothing)")
    trainer.set_params({
        "c1": options.c1,
        "c2": options.c2,
        "max_iterations": options.max_iterations,
        "delta": options.delta,
        "period": options.period,
        "feature.minfreq": options.min_freq,
        "feature.possible_transitions": True,
    })
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    tmp = f"{output}.tmp-{os.getpid()}"
    trainer.train(tmp)
    if language != "en" or label_map is not None or bias is not None:
        append_metadata(tmp, {
            "language": language,
            "bias": 0.0 if bias is None else bias,
            "feature_version": languages.feature_version(language),
            "label_map": None if label_map is None else label_map.to_json()})
    os.replace(tmp, output)
    with open(output, "rb") as fh:
        data = fh.read()
    return TrainResult(path=output, documents=len(docs), sequences=n_seq, tokens=n_tok,
                       seconds=time.monotonic() - started,
                       sha256=hashlib.sha256(data).hexdigest(), size=len(data))
