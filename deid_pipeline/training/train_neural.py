"""``deid-pipeline train-neural``: fit the neural second view and write its weights.

Corpora are named as for ``train`` (``physionet:DIR``, ``jsonl:FILE``,
``synthetic:N``); ``--augment K`` adds the CRF recipe's surrogate copies
(TRAINING half of every list by default). ``--hold-out-fold F`` trains on the
development patients outside fold F only (for ``evaluation.second_view``),
and the same option of ``train`` gives the CRF model that goes with it. The
weights go beside the CRF model they belong with (``NAME.neural.npz`` for
``NAME.crfsuite``), where detector ``crf-neural`` reads them. Reproducible:
the same corpora and options give the same bytes (sha256 printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from deid_pipeline.model import ClinicalDocument


def development_training_part(docs: Sequence[ClinicalDocument], fold: int | None,
                              folds: int = 5) -> list[ClinicalDocument]:
    """The development notes (never sealed) of the patients outside fold ``fold``.

    ``fold`` None: every development note (the sealed split's training part).
    """
    from deid_pipeline.evaluation.cross_validation import assign_folds
    from deid_pipeline.evaluation.sealed import split

    dev, _ = split(docs)
    if fold is None:
        return dev
    return [d for d, f in zip(dev, assign_folds(dev, folds)) if f != fold]


def fold_corpora(specs: Sequence[str], seed: int, pools: str, fold: int | None,
                 folds: int = 5, development: bool = False) -> list[ClinicalDocument]:
    """Every spec's documents; annotated notes cut to a fold's training part.

    ``development`` without a fold: cut to the development patients.
    """
    from deid_pipeline.training.train import load_training_corpus

    docs: list[ClinicalDocument] = []
    for spec in specs:
        loaded = load_training_corpus(spec, seed, pools)
        if (fold is not None or development) and not spec.startswith("synthetic:"):
            loaded = development_training_part(loaded, fold, folds)
        docs.extend(loaded)
    return docs


def add_fold_options(parser: argparse.ArgumentParser) -> None:
    """``--hold-out-fold`` and ``--folds`` (shared with ``train``)."""
    parser.add_argument("--hold-out-fold", type=int, metavar="F",
                        help="train on the development patients outside fold F "
                        "of --folds only (sealed patients never): a model for "
                        "a development hold-out measure")
    parser.add_argument("--folds", type=int, default=5, metavar="K",
                        help="folds of the development patients (default: "
                        "%(default)s; evaluation.cross_validation.assign_folds)")
    parser.add_argument("--development", action="store_true",
                        help="train on the development patients only (the sealed "
                        "split's training part): a model to score the sealed "
                        "split and its swapped copies with")


def run_train_neural(args: argparse.Namespace) -> int:
    """The ``train-neural`` subcommand; returns the exit code."""
    from deid_pipeline.training.neural import (
        NeuralOptions,
        neural_training_documents,
        train_neural,
    )

    started = time.monotonic()
    try:
        options = NeuralOptions(epochs=args.epochs, seed=args.seed)
        docs = fold_corpora(args.corpus, args.seed, args.pools, args.hold_out_fold,
                            args.folds, args.development)
        docs = neural_training_documents(docs, args.augment, args.seed, args.pools)
    except (ValueError, OSError) as exc:
        print(f"train-neural: {exc}", file=sys.stderr)
        return 2
    print(f"train-neural: {len(docs)} documents, "
          f"{sum(len(d.gold) for d in docs)} gold spans", file=sys.stderr)
    recipe = {"corpus": [os.path.basename(s.rstrip("/")) for s in args.corpus],
              "augment": args.augment, "pools": args.pools,
              "hold_out_fold": args.hold_out_fold, "folds": args.folds,
              "development": args.development}
    result = train_neural(docs, args.output, options, progress=sys.stderr,
                          recipe=recipe)
    print(f"weights: {result.path}\nsize: {result.size} bytes\nsha256: "
          f"{result.sha256}\ndocuments: {result.documents}  tokens: {result.tokens}"
          f"\nloss: {result.final_loss:.4f}\ntime: {time.monotonic() - started:.0f} s")
    return 0


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``train-neural`` to the ``deid-pipeline`` command line."""
    from deid_pipeline.training.neural import NeuralOptions

    defaults = NeuralOptions()
    parser = subparsers.add_parser(
        "train-neural", help="train the neural second view (detector crf-neural)",
        description="Train the neural second view (numpy, seeded) on annotated "
        "corpora; write NAME.neural.npz beside the CRF model NAME.crfsuite.")
    parser.add_argument("--corpus", action="append", required=True, metavar="SPEC",
                        help="physionet:DIR, jsonl:FILE or synthetic:N (repeatable)")
    parser.add_argument("--output", required=True, metavar="WEIGHTS",
                        help="weights file to write (.npz)")
    parser.add_argument("--augment", type=int, default=0, metavar="K",
                        help="also train on K surrogate copies of each annotated "
                        "note (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--pools", choices=("training", "whole"), default="training",
                        help="the half of every list copies and synthetic notes "
                        "draw from (as train's)")
    add_fold_options(parser)
    parser.set_defaults(func=run_train_neural)
    return parser
