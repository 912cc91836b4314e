"""``deid-pipeline train``: fit the CRF on annotated corpora and write a model file.

Corpora are named by spec: ``physionet:DIR`` and ``jsonl:FILE`` (read by
:mod:`deid_pipeline.evaluation.corpora`) and ``synthetic:N`` (N documents from the
project's Faker generator, seeded with ``--seed`` so a command line always
names the same data). The command is reproducible: the same specs and options
give the same model bytes, and it prints the sha256 to prove it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from deid_pipeline.model import ClinicalDocument


def load_training_corpus(spec: str, seed: int = 0, pools: str = "training"
                         ) -> list[ClinicalDocument]:
    """Gold-annotated documents: ``physionet:DIR``, ``jsonl:FILE``, ``synthetic:N``.

    ``synthetic:N`` is seeded with ``seed`` so a command line names fixed data,
    and draws its names and places from the TRAINING half of every list
    (``pools`` "whole": from all of each list).
    """
    kind, _, value = spec.partition(":")
    if kind == "synthetic":
        try:
            count = int(value)
        except ValueError:
            raise ValueError(
                f"corpus spec {spec!r}: expected synthetic:COUNT") from None
        from deid_pipeline.synthetic import generate_notes
        from deid_pipeline.training.crf import POOLS

        # The training half by default: the genre set and the swapped sealed
        # split are written from the other (surrogates.halves).
        return list(generate_notes(count, seed=seed, pool=POOLS[pools]))
    from deid_pipeline.evaluation.corpora import load_corpus

    return load_corpus(spec)


def load_corpora(specs: Sequence[str], seed: int = 0, pools: str = "training"
                 ) -> list[ClinicalDocument]:
    """All documents of ``specs``, in order."""
    docs: list[ClinicalDocument] = []
    for spec in specs:
        docs.extend(load_training_corpus(spec, seed, pools))
    return docs


def add_training_options(parser: argparse.ArgumentParser) -> None:
    """CRF options shared by ``train`` and ``evaluate --folds`` (same defaults)."""
    from deid_pipeline.training.crf import TrainOptions

    defaults = TrainOptions()
    group = parser.add_argument_group("CRF training")
    group.add_argument("--c1", type=float, default=defaults.c1,
                       help="L1 regularisation (default: %(default)s)")
    group.add_argument("--c2", type=float, default=defaults.c2,
                       help="L2 regularisation (default: %(default)s)")
    group.add_argument("--max-iterations", type=int, default=defaults.max_iterations,
                       help="L-BFGS iteration cap (default: %(default)s); training "
                       "stops earlier when the log-likelihood improves by less than "
                       f"{defaults.delta:g} over {defaults.period} iterations")
    group.add_argument("--sampling", default=defaults.sampling,
                       help="none | window:K | random-o:P (HIDE's sampling; "
                       "default: %(default)s)")
    group.add_argument("--augment", type=int, default=defaults.augment, metavar="K",
                       help="also train on K copies of each annotated note with "
                       "its PHI replaced by keyed surrogates in varied case "
                       "(default: %(default)s)")
    group.add_argument("--clusters", default=defaults.clusters,
                       choices=("all", "own", "none"),
                       help="Brown-cluster features trained on: all, own (the "
                       "token's path prefixes only) or none (default: %(default)s)")
    group.add_argument("--hide-copy-words", action="store_true",
                       help="train the --augment copies without their PHI words "
                       "(word, affixes, whole cluster path, as context and in "
                       "bigrams): shape, classes and context only")
    group.add_argument("--hide-rare", type=int, default=defaults.hide_rare, metavar="N",
                       help="with --hide-copy-words, also hide the copies' words met "
                       "at most N times in the notes (default: %(default)s)")
    group.add_argument("--seed", type=int, default=defaults.seed,
                       help="seed of random-o sampling and synthetic:N corpora "
                       "(default: %(default)s)")
    from deid_pipeline.run_options import add_rules_option

    add_rules_option(parser)
    add_site_options(parser)


def add_site_options(parser: argparse.ArgumentParser) -> None:
    """``--language`` and ``--label-map``, shared by ``train`` and ``evaluate``."""
    from deid_pipeline.tagger.languages import LANGUAGES

    group = parser.add_argument_group("site annotations (docs/retargeting.md)")
    group.add_argument("--language", choices=LANGUAGES, default="en",
                       help="language of the notes: selects the features, "
                       "recorded in the model (default: %(default)s)")
    group.add_argument("--label-map", metavar="NAME|FILE",
                       help="the site's own labels and their surrogate category: "
                       "a shipped map (meddocan) or a JSON file; the model "
                       "predicts these labels and records the map")
    group.add_argument("--model-bias", type=float, metavar="B",
                       help="with train: the CRF bias run and evaluate use with "
                       "this model when given no --bias, recorded in it (default "
                       "for a --language/--label-map model: 0, the best path)")


def label_map_from_args(args: argparse.Namespace):
    """The ``--label-map`` of ``args``, loaded and registered (None if not given)."""
    if getattr(args, "label_map", None) is None:
        return None
    from deid_pipeline.label_maps import load_label_map

    return load_label_map(args.label_map)


def train_options_from_args(args: argparse.Namespace):
    """TrainOptions from parsed ``add_training_options`` arguments (validated)."""
    from deid_pipeline.training.crf import TrainOptions, parse_sampling

    parse_sampling(args.sampling)
    if (args.c1 < 0 or args.c2 < 0 or args.max_iterations < 1 or args.augment < 0
            or args.hide_rare < 0):
        raise ValueError("--c1/--c2/--augment/--hide-rare must be >= 0 and "
                         "--max-iterations >= 1")
    return TrainOptions(c1=args.c1, c2=args.c2, max_iterations=args.max_iterations,
                        sampling=args.sampling, seed=args.seed, augment=args.augment,
                        clusters=args.clusters, hide_copy_words=args.hide_copy_words,
                        hide_rare=args.hide_rare,
                        pools=getattr(args, "pools", "training"))


def run_train(args: argparse.Namespace) -> int:
    """The ``train`` subcommand; returns the exit code."""
    from deid_pipeline.tagger.rules.site import load_site_rules, site_report
    from deid_pipeline.training.crf import train_model

    try:
        options = train_options_from_args(args)
        site = load_site_rules(args.rules) if args.rules else None
        label_map = label_map_from_args(args)
        started = time.monotonic()
        if args.hold_out_fold is None and not args.development:
            docs = load_corpora(args.corpus, args.seed, options.pools)
        else:
            from deid_pipeline.training.train_neural import fold_corpora

            docs = fold_corpora(args.corpus, args.seed, options.pools,
                                args.hold_out_fold, args.folds, args.development)
    except (ValueError, OSError) as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    n_spans = sum(len(d.gold) for d in docs)
    print(f"train: {len(docs)} documents, {n_spans} gold spans from "
          f"{len(args.corpus)} corpus spec(s)", file=sys.stderr)
    if site is not None:
        # The model does not read the site rules; the site sees, on its own
        # gold, whether each rule it adds to tagging fires right (counts only).
        for line in site_report(docs, site):
            print(f"train: {line}", file=sys.stderr)
    try:
        result = train_model(docs, args.output, options, progress=sys.stderr,
                             language=args.language, label_map=label_map,
                             bias=args.model_bias)
    except ValueError as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    print(f"model: {result.path}\nsize: {result.size} bytes\nsha256: {result.sha256}\n"
          f"documents: {result.documents}  sequences: {result.sequences}  "
          f"tokens: {result.tokens}\ntime: {time.monotonic() - started:.0f} s")
    return 0


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``train`` to the ``deid-pipeline`` command line."""
    parser = subparsers.add_parser(
        "train", help="train the CRF model on annotated corpora",
        description="Train the CRFsuite PHI model (L-BFGS) on annotated corpora. "
        "Reproducible: same corpora and options give the same model bytes.")
    parser.add_argument("--corpus", action="append", required=True, metavar="SPEC",
                        help="physionet:DIR, jsonl:FILE, brat:DIR or synthetic:N "
                        "(repeatable)")
    parser.add_argument("--output", required=True, metavar="MODEL",
                        help="model file to write")
    add_training_options(parser)
    parser.add_argument(
        "--pools", choices=("training", "whole"), default="training",
        help="which half of every name and place list the --augment copies and "
        "synthetic:N notes draw from: 'training' (default; the swapped sealed "
        "split and the genre set are written from the other half, so a model "
        "to be scored on them must not see it) or 'whole' (a model for use: "
        "the shipped model's recipe)")
    from deid_pipeline.training.train_neural import add_fold_options

    add_fold_options(parser)
    parser.set_defaults(func=run_train)
    return parser
