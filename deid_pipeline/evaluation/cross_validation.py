"""``deid-pipeline evaluate``: score the shipped hybrid tagger on annotated corpora.

What is scored is what ships: :class:`~deid_pipeline.tagger.tagging.PhiTagger` with
the chosen detectors (default rules + header dictionary + CRF), merged by the
one merge policy, measured with :mod:`deid_pipeline.evaluation.metrics`.

- ``--model M`` (default: the shipped model) tags the corpus with one model.
- ``--folds K`` cross-validates: documents are grouped by patient
  (``person_key``) so no patient is in both a training and a test fold; fold
  assignment is deterministic; folds are trained in parallel processes.
- ``--bias-sweep FROM:TO:STEP`` scores every bias from the same models: the
  CRF's posterior is computed once per document and decoded at each bias,
  which gives exactly the spans ``PhiTagger`` would give at that bias.

Output is tables of counts and scores only, never text from the notes.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from deid_pipeline.evaluation.metrics import OUTSIDE, Evaluation, Scores, evaluate
from deid_pipeline.evaluation.phi_free import format_phi_free, phi_free_score
from deid_pipeline.evaluation.sealed import (
    floor_table,
    format_floor_table,
    format_review_curve,
    group_key,
    review_curve,
    split,
)
from deid_pipeline.evaluation.swapped import (
    DEFAULT_COPIES,
    copy_seeds,
    format_swapped,
    summarise,
    swapped_split,
)
from deid_pipeline.evaluation.swapped import payload as swapped_payload
from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument
from deid_pipeline.tagger.confidence import TokenPhi, document_confidence
from deid_pipeline.tagger.detectors import (
    DEFAULT_BIAS,
    DEFAULT_DETECTORS,
    Detector,
    TaggerConfig,
    check_names,
    effective_detectors,
)
from deid_pipeline.tagger.eponym_spans import drop_eponyms
from deid_pipeline.tagger.merge import reconcile
from deid_pipeline.tagger.rules.site import load_site_rules
from deid_pipeline.tagger.tagging import document_parts, reconcile_documents, shifted

# ---------------------------------------------------------------------------
# Folds.


def assign_folds(docs: Sequence[ClinicalDocument], k: int) -> list[int]:
    """Fold index per document, grouped by patient and balanced by document count.

    Patients are dealt, largest first (ties by a hash of the key, so the order
    does not depend on input order), to the fold with the fewest documents so
    far. Deterministic: the same documents always give the same folds.
    """
    if k < 2:
        raise ValueError("--folds needs at least 2 folds")
    sizes: dict[str, int] = defaultdict(int)
    for doc in docs:
        sizes[group_key(doc)] += 1
    if len(sizes) < k:
        raise ValueError(f"{len(sizes)} patient group(s) cannot fill {k} folds")
    order = sorted(sizes, key=lambda g: (-sizes[g],
                                         hashlib.sha256(g.encode()).hexdigest()))
    load = [0] * k
    fold_of: dict[str, int] = {}
    for g in order:
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of[g] = fold
        load[fold] += sizes[g]
    return [fold_of[group_key(d)] for d in docs]


# ---------------------------------------------------------------------------
# Tagging at several biases.


def parse_sweep(spec: str) -> list[float]:
    """``FROM:TO:STEP`` -> the biases, inclusive of TO (within rounding)."""
    try:
        start, stop, step = (float(x) for x in spec.split(":"))
    except ValueError:
        raise ValueError(f"bad --bias-sweep {spec!r}: expected FROM:TO:STEP") from None
    if step == 0 or (stop - start) / step < 0:
        raise ValueError(f"bad --bias-sweep {spec!r}: STEP must go from FROM to TO")
    count = int(round((stop - start) / step)) + 1
    if count > 200:
        raise ValueError(f"--bias-sweep {spec!r} has {count} points (max 200)")
    return [round(start + i * step, 6) for i in range(count)]


class BiasTagging(NamedTuple):
    """Spans per document at each bias, and each document's confidence at each bias."""

    spans: dict[float, list[tuple[PhiSpan, ...]]]
    confidence: dict[float, list[float | None]]


def tag_at_biases(docs: Sequence[ClinicalDocument], detectors: Sequence[str],
                  model_path: str | None, biases: Sequence[float],
                  rules_path: str | None = None,
                  created: Sequence[Detector] | None = None) -> BiasTagging:
    """Merged hybrid spans per document at each bias, the CRF run once per document.

    Equal, span for span, to what ``run`` marks: ``reconcile_documents`` of
    ``PhiTagger.from_config(TaggerConfig(detectors, model_path,
    bias)).tag(doc)`` over the documents for every bias (a patient's notes
    lend each other their sure values), and its confidence to
    ``.confidence`` at that bias (tested). ``created``: detectors built by the
    caller instead (a second view's variants,
    :mod:`deid_pipeline.evaluation.second_view`).
    """
    from deid_pipeline.tagger.crf import token_phi
    from deid_pipeline.tagger.detectors import create

    low = min(biases)
    if created is None:
        created = create(TaggerConfig(tuple(detectors), model_path, low, rules_path))
    crf = [d for d in created if d.name == "crf"]
    others = [d for d in created if d.name != "crf"]
    out: dict[float, list[tuple[PhiSpan, ...]]] = {b: [] for b in biases}
    confidence: dict[float, list[float | None]] = {b: [] for b in biases}
    for doc in docs:
        parts = document_parts(doc)
        fixed = [shifted(s, offset) for offset, part in parts
                 for d in others for s in d.analyze(part).spans]
        posteriors = [(offset, part, c, c.posterior(part, low))
                      for offset, part in parts for c in crf]
        tokens = TokenPhi.concatenate([token_phi(post).shifted(offset)
                                       for offset, _, _, post in posteriors])
        for bias in biases:
            spans = list(fixed)
            for offset, part, c, post in posteriors:
                spans.extend(shifted(s, offset)
                             for s in c.decode(part, post, bias).spans)
            merged = drop_eponyms(doc.text, reconcile(doc.text, spans, doc.dictionary))
            out[bias].append(merged)
            confidence[bias].append(document_confidence(tokens, merged))

    for bias, spans in out.items():
        out[bias] = [t.spans for t in reconcile_documents(
            [TaggedDocument(doc, s) for doc, s in zip(docs, spans, strict=True)])]
    return BiasTagging(out, confidence)


# ---------------------------------------------------------------------------
# Cross-validation (folds in worker processes; documents inherited by fork).

_CV_DOCS: list[ClinicalDocument] = []
_CV_EXTRA: list[ClinicalDocument] = []


@dataclass(frozen=True)
class _FoldJob:
    fold: int
    folds: tuple[int, ...]
    detectors: tuple[str, ...]
    biases: tuple[float, ...]
    options: object
    workdir: str
    rules_path: str | None = None


def _run_fold(job: _FoldJob) -> tuple[int, list[int], dict, float, float]:
    from deid_pipeline.training.crf import train_model

    train = [d for d, f in zip(_CV_DOCS, job.folds) if f != job.fold] + _CV_EXTRA
    test_idx = [i for i, f in enumerate(job.folds) if f == job.fold]
    path = os.path.join(job.workdir, f"fold{job.fold}.crfsuite")
    started = time.monotonic()
    train_model(train, path, job.options, progress=None)
    trained = time.monotonic() - started
    started = time.monotonic()
    preds = tag_at_biases([_CV_DOCS[i] for i in test_idx], job.detectors, path,
                          job.biases, job.rules_path).spans
    return job.fold, test_idx, preds, trained, time.monotonic() - started


def cross_validate(docs: Sequence[ClinicalDocument], k: int, detectors: Sequence[str],
                   biases: Sequence[float], options, jobs: int = 2,
                   extra_train: Sequence[ClinicalDocument] = (),
                   log=sys.stderr, rules_path: str | None = None
                   ) -> dict[float, list[tuple[PhiSpan, ...]]]:
    """Predicted spans per document (in ``docs`` order) at each bias, by K-fold CV."""
    global _CV_DOCS, _CV_EXTRA
    folds = assign_folds(docs, k)
    if log is not None:
        for f in range(k):
            members = [d for d, g in zip(docs, folds) if g == f]
            print(f"fold {f}: {len({group_key(d) for d in members})} patients, "
                  f"{len(members)} documents", file=log)
    preds: dict[float, list] = {b: [()] * len(docs) for b in biases}
    with tempfile.TemporaryDirectory(prefix="deid-cv-") as workdir:
        fold_jobs = [_FoldJob(f, tuple(folds), tuple(detectors), tuple(biases),
                              options, workdir, rules_path) for f in range(k)]
        _CV_DOCS, _CV_EXTRA = list(docs), list(extra_train)
        try:
            if jobs > 1:
                ctx = multiprocessing.get_context("fork")
                with ctx.Pool(min(jobs, k)) as pool:
                    results = list(pool.imap_unordered(_run_fold, fold_jobs))
            else:
                results = [_run_fold(j) for j in fold_jobs]
        finally:
            _CV_DOCS, _CV_EXTRA = [], []
    for fold, test_idx, fold_preds, trained, tagged in sorted(results,
                                                              key=lambda r: r[0]):
        if log is not None:
            print(f"fold {fold}: trained in {trained:.0f}s, tagged in {tagged:.0f}s",
                  file=log)
        for bias, spans in fold_preds.items():
            for i, s in zip(test_idx, spans):
                preds[bias][i] = s
    return preds


# ---------------------------------------------------------------------------
# Printing.


def _prf_row(name: str, prf) -> str:
    tp = getattr(prf, "gold_hit", prf.tp)
    return (f"  {name:<20} {tp:>7} {prf.fp:>7} {prf.fn:>7}   "
            f"{prf.precision:>9.4f} {prf.recall:>7.4f} {prf.f1:>7.4f}")


def format_evaluation(ev: Evaluation, title: str = "") -> str:
    """The DESIGN.md metrics as plain-text tables (counts and scores only)."""
    lines = []
    if title:
        lines += [title, ""]
    header = (f"  {'':<20} {'TP':>7} {'FP':>7} {'FN':>7}   {'precision':>9} "
              f"{'recall':>7} {'F1':>7}")
    lines += ["Binary token (tokens = [A-Za-z0-9] runs, type ignored)", header,
              _prf_row("all PHI", ev.all.binary_token),
              _prf_row("HIPAA (no years)", ev.hipaa.binary_token), ""]
    lines += ["Phrase (same label category)", header,
              _prf_row("strict, all", ev.all.strict_phrase),
              _prf_row("strict, HIPAA", ev.hipaa.strict_phrase),
              _prf_row("relaxed, all", ev.all.relaxed_phrase),
              _prf_row("relaxed, HIPAA", ev.hipaa.relaxed_phrase),
              "  (relaxed TP counts gold phrases overlapped by a prediction)", ""]
    lines += _label_recall_lines(ev.all)
    lines += [""] + _confusion_lines(ev.all.confusion)
    return "\n".join(lines)


def _label_recall_lines(scores: Scores) -> list[str]:
    totals: dict[str, int] = defaultdict(int)
    found: dict[str, int] = defaultdict(int)
    for (gold, pred), n in scores.confusion.items():
        if gold != OUTSIDE:
            totals[gold] += n
            if pred != OUTSIDE:
                found[gold] += n
    lines = ["Token recall by gold label (any PHI label counts as found)",
             f"  {'label':<14} {'tokens':>7} {'found':>7} {'recall':>7}"]
    for label in sorted(totals):
        lines.append(f"  {label:<14} {totals[label]:>7} {found[label]:>7} "
                     f"{found[label] / totals[label]:>7.4f}")
    return lines


def _confusion_lines(confusion) -> list[str]:
    gold_labels = sorted({g for g, _ in confusion} - {OUTSIDE}) + [OUTSIDE]
    pred_labels = sorted({p for _, p in confusion} - {OUTSIDE}) + [OUTSIDE]
    widths = [max(len(p), *(len(str(confusion.get((g, p), 0))) for g in gold_labels))
              + 1 for p in pred_labels]
    lines = ["Token confusion (rows: gold, columns: predicted; HIDE Table 3 style)",
             "  " + "gold \\ pred".ljust(14) + "".join(
                 p.rjust(w) for p, w in zip(pred_labels, widths))]
    for g in gold_labels:
        lines.append("  " + g.ljust(14) + "".join(
            str(confusion.get((g, p), 0)).rjust(w)
            for p, w in zip(pred_labels, widths)))
    return lines


def format_sweep(results: Sequence[tuple[float, Evaluation]]) -> str:
    """The recall/precision curve over biases (binary token, HIPAA and all PHI)."""
    lines = ["Bias sweep (binary token; negative bias = more recall)",
             f"  {'bias':>7}   {'HIPAA P':>8} {'HIPAA R':>8} {'HIPAA F1':>8}   "
             f"{'all P':>7} {'all R':>7} {'all F1':>7}"]
    for bias, ev in results:
        h, a = ev.hipaa.binary_token, ev.all.binary_token
        lines.append(f"  {bias:>7.2f}   {h.precision:>8.4f} {h.recall:>8.4f} "
                     f"{h.f1:>8.4f}   {a.precision:>7.4f} {a.recall:>7.4f} "
                     f"{a.f1:>7.4f}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The command.


def _dev_model(train: Sequence[ClinicalDocument], options, workdir: str,
               keep: str | None = None) -> str:
    """Train one model on ``train``; return its path.

    The model is written to ``keep`` when given (so the sealed and swapped
    splits can be scored again, at another bias or on other copies, with
    ``--model`` and without retraining), else into ``workdir``.
    """
    from deid_pipeline.training.crf import train_model

    path = keep or os.path.join(workdir, "model.crfsuite")
    train_model(train, path, options, progress=None)
    return path


def _scored(docs: Sequence[ClinicalDocument], preds: dict[float, list],
            biases: Sequence[float]) -> list[tuple[float, Evaluation]]:
    return [(b, evaluate((d.text, d.gold, p) for d, p in zip(docs, preds[b])))
            for b in biases]


def _title(what: str, docs: Sequence[ClinicalDocument], detectors, bias: float,
           mode: str, seconds: float) -> str:
    return (f"{what}: {len(docs)} documents, "
            f"{len({group_key(d) for d in docs})} patients, detectors "
            f"{','.join(detectors)}, bias {bias:g}, {mode} ({seconds:.0f}s)")


def _report(results: list[tuple[float, Evaluation]], title: str, args, out) -> None:
    print(format_evaluation(dict(results)[args.bias], title), file=out)
    if args.bias_sweep:
        print("", file=out)
        print(format_sweep(results), file=out)


def _payload(results: list[tuple[float, Evaluation]], mode: str, args) -> dict:
    return {"mode": mode, "evaluation": dict(results)[args.bias].as_dict(),
            "sweep": [{"bias": b, "all": ev.all.binary_token.as_dict(),
                       "hipaa": ev.hipaa.binary_token.as_dict()}
                      for b, ev in results] if args.bias_sweep else []}


def _gap_lines(cv: Evaluation, sealed: Evaluation) -> str:
    a, b = cv.hipaa.binary_token, sealed.hipaa.binary_token
    return ("Gap, HIPAA binary token (development CV minus sealed): "
            f"recall {a.recall - b.recall:+.4f}, precision "
            f"{a.precision - b.precision:+.4f}")


def _held_out(args, train: Sequence[ClinicalDocument],
              sealed: Sequence[ClinicalDocument], detectors, biases, options,
              cv_results, payload: dict, out) -> None:
    """Score ``--model`` (or one model trained on ``train``) on the held-out notes.

    ``--protocol sealed``: the sealed split, its review-queue curve and the
    gap to the CV, then the swapped copies; ``--protocol swapped``: only the
    swapped copies (:mod:`deid_pipeline.evaluation.swapped`). One model
    serves both, trained once.
    """
    from deid_pipeline.tagger.crf_model import model_id

    with tempfile.TemporaryDirectory(prefix="deid-sealed-") as workdir:
        started = time.monotonic()
        if args.model:
            path, mode = args.model, f"model {model_id(args.model)}"
        else:
            path = _dev_model(train, options, workdir, keep=args.save_model)
            mode = "one model trained on every development patient"
        if cv_results is not None:
            print("", file=out)
        if args.protocol == "sealed":
            tagged = tag_at_biases(sealed, detectors, path, biases, args.rules)
            results = _scored(sealed, tagged.spans, biases)
            _report(results, _title("Sealed patients (scored once, errors not read)",
                                    sealed, detectors, args.bias, mode,
                                    time.monotonic() - started), args, out)
            curve = review_curve(sealed, tagged.spans[args.bias],
                                 tagged.confidence[args.bias])
            print("", file=out)
            print(format_review_curve(curve), file=out)
            floors, bands = floor_table(sealed, tagged.spans[args.bias],
                                        tagged.confidence[args.bias])
            print("", file=out)
            print(format_floor_table(floors, bands), file=out)
            payload["sealed"] = _payload(results, mode, args)
            payload["sealed"]["review_curve"] = [dataclasses.asdict(p) for p in curve]
            payload["sealed"]["review_floor"] = [dataclasses.asdict(p) for p in floors]
            payload["sealed"]["calibration"] = bands
            if cv_results is not None:
                print("", file=out)
                print(_gap_lines(dict(cv_results)[args.bias], dict(results)[args.bias]),
                      file=out)
            print("", file=out)
        started = time.monotonic()
        scored = []
        for seed in copy_seeds(args.swap_copies):
            copies = swapped_split(sealed, seed)
            spans = tag_at_biases(copies, detectors, path, [args.bias],
                                  args.rules).spans
            scored.append((seed, _scored(copies, spans, [args.bias])[0][1]))
        rows = summarise(scored)
        title = _title(f"Swapped sealed patients ({len(scored)} copies, PHI from the "
                       "evaluation half; scored once, errors not read)", sealed,
                       detectors, args.bias, mode, time.monotonic() - started)
        print(format_swapped(rows, title), file=out)
        payload["swapped"] = {"mode": mode, "bias": args.bias,
                              "copies": swapped_payload(rows)}


def _report_span_scores(docs: Sequence[ClinicalDocument], preds: dict,
                        biases: Sequence[float], args, payload: dict, out) -> None:
    """The site's own-label span scores (MEDDOCAN's subtasks) at each bias."""
    from deid_pipeline.evaluation.span_scores import format_span_scores, span_scores

    payload["span_scores"] = {}
    for bias in biases:
        scores = span_scores(docs, {d.doc_id: p for d, p in zip(docs, preds[bias])})
        payload["span_scores"][str(bias)] = {
            s.name: {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                     "f1": round(s.f1, 4), "tp": s.tp, "fp": s.fp, "fn": s.fn}
            for s in scores}
        if bias == args.bias or args.bias_sweep:
            print("", file=out)
            print(format_span_scores(scores, f"Span scores of the site's labels "
                                     f"(MEDDOCAN subtasks 1 and 2), bias {bias:g}"),
                  file=out)


def run_evaluate(args: argparse.Namespace, out=None) -> int:
    """The ``evaluate`` subcommand; returns the exit code."""
    out = sys.stdout if out is None else out
    from deid_pipeline.training.train import (
        label_map_from_args,
        load_corpora,
        train_options_from_args,
    )

    try:
        detectors = check_names(d for d in args.detectors.split(",") if d)
        # What runs, as the title says it: a Spanish model's default set is
        # its language's (not rules,dictionary,crf,gazetteer).
        detectors = effective_detectors(TaggerConfig(detectors, args.model))
        if args.bias is None:
            from deid_pipeline.tagger.crf_model import load_model

            args.bias = (load_model(args.model).default_bias if args.model
                         else DEFAULT_BIAS)
        biases = parse_sweep(args.bias_sweep) if args.bias_sweep else []
        if args.bias not in biases:
            biases.append(args.bias)
        biases.sort()
        options = train_options_from_args(args)
        site = load_site_rules(args.rules) if args.rules else None
        label_map = label_map_from_args(args)
        if args.language != "en" and (args.folds or args.protocol != "all"):
            raise ValueError("--language other than en: score a model trained "
                             "with train --language (--model), protocol all")
        docs = load_corpora(args.corpus, args.seed)
        extra = load_corpora(args.train_corpus or [], args.seed)
    except (ValueError, OSError) as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    sealed: list[ClinicalDocument] = []
    if args.protocol != "all":
        docs, sealed = split(docs)
    if not docs or (args.protocol in ("sealed", "swapped") and not sealed):
        print("evaluate: no documents", file=sys.stderr)
        return 2
    payload: dict = {"corpus": list(args.corpus), "detectors": list(detectors),
                     "bias": args.bias, "protocol": args.protocol,
                     "site_rules": site.sha256 if site else None}
    started = time.monotonic()
    try:
        cv_results = confidence = None
        if args.folds:
            mode = f"{args.folds}-fold cross-validation grouped by patient"
            preds = cross_validate(docs, args.folds, detectors, biases, options,
                                   jobs=args.jobs, extra_train=extra,
                                   rules_path=args.rules)
        elif args.protocol in ("sealed", "swapped"):
            preds = None
        else:
            if "crf" in detectors or "crf-neural" in detectors:
                from deid_pipeline.tagger.crf_model import model_id

                mode = f"model {model_id(args.model)}"
                if "crf-neural" in detectors:
                    from deid_pipeline.tagger.crf_neural import neural_id

                    mode += f" + {neural_id(args.model)}"
            else:
                mode = "no CRF model"
            tagged = tag_at_biases(docs, detectors, args.model, biases, args.rules)
            preds, confidence = tagged.spans, tagged.confidence[args.bias]
        if preds is not None:
            what = ("Evaluation" if args.protocol == "all"
                    else "Development patients (the 70% not sealed)")
            cv_results = _scored(docs, preds, biases)
            _report(cv_results, _title(what, docs, detectors, args.bias, mode,
                                       time.monotonic() - started), args, out)
            payload.update(_payload(cv_results, mode, args))
            if label_map is not None:
                _report_span_scores(docs, preds, biases, args, payload, out)
            free = phi_free_score(docs, preds[args.bias])
            if free.documents:
                print("", file=out)
                print(format_phi_free(free), file=out)
                payload["phi_free"] = {"documents": free.documents,
                                       "tagged": free.tagged,
                                       "share": round(free.share, 4)}
            if confidence is not None and any(c is not None for c in confidence):
                floors, bands = floor_table(docs, preds[args.bias], confidence)
                print("", file=out)
                print(format_floor_table(floors, bands), file=out)
                payload["review_floor"] = [dataclasses.asdict(p) for p in floors]
                payload["calibration"] = bands
        if args.protocol in ("sealed", "swapped"):
            _held_out(args, [*docs, *extra], sealed, detectors, biases, options,
                      cv_results, payload, out)
    except (ValueError, OSError) as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    if args.json:
        if args.folds or args.protocol in ("sealed", "swapped"):
            payload["training"] = {"folds": args.folds, "c1": options.c1,
                                   "c2": options.c2,
                                   "max_iterations": options.max_iterations,
                                   "sampling": options.sampling, "seed": options.seed,
                                   "augment": options.augment,
                                   "train_corpus": list(args.train_corpus or [])}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, sort_keys=True)
            fh.write("\n")
    return 0


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``evaluate`` to the ``deid-pipeline`` command line."""
    from deid_pipeline.training.train import add_training_options

    parser = subparsers.add_parser(
        "evaluate", help="score the tagger on annotated corpora",
        description="Score the hybrid tagger (detectors + merge) against gold "
        "spans: binary-token P/R/F1 (all PHI and HIPAA), per-label recall, token "
        "confusion, strict and relaxed phrase scores.")
    parser.add_argument("--corpus", action="append", required=True, metavar="SPEC",
                        help="physionet:DIR, jsonl:FILE, brat:DIR or synthetic:N "
                        "(repeatable)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", metavar="M",
                       help="CRF model to evaluate (default: the shipped model)")
    which.add_argument("--folds", type=int, metavar="K",
                       help="K-fold cross-validation grouped by patient: train a "
                       "model per fold and score it on the held-out patients")
    parser.add_argument("--bias", type=float, default=None,
                        help="CRF O-label bias (negative = more recall; default: "
                        f"the bias --model records, else {DEFAULT_BIAS})")
    parser.add_argument("--bias-sweep", metavar="FROM:TO:STEP",
                        help="also print the recall/precision curve over these biases "
                        "(write --bias-sweep=-6:0:0.5 when FROM is negative)")
    parser.add_argument("--json", metavar="OUT", help="write all scores as JSON")
    parser.add_argument("--detectors", default=",".join(DEFAULT_DETECTORS),
                        help="comma-separated detectors (default: %(default)s)")
    parser.add_argument("--train-corpus", action="append", metavar="SPEC",
                        help="with --folds: extra training data added to every fold "
                        "(never scored), e.g. synthetic:2000")
    parser.add_argument("--protocol", choices=("all", "dev", "sealed", "swapped"),
                        default="all",
                        help="all: the whole corpus; dev: only the 70%% of patients "
                        "not sealed (for development and error reading); sealed: "
                        "--folds K cross-validates on the development patients, then "
                        "a model trained on all of them (or --model) is scored once "
                        "on the sealed 30%%, with the review-queue curve and the gap, "
                        "then on the swapped copies; swapped: only the swapped "
                        "copies (sealed notes with their PHI replaced from the "
                        "evaluation half of every name and place list) "
                        "(default: %(default)s)")
    parser.add_argument("--swap-copies", type=int, default=DEFAULT_COPIES,
                        metavar="N",
                        help="with --protocol sealed/swapped: swapped copies scored, "
                        "seeds 1..N (default %(default)s)")
    parser.add_argument("--save-model", metavar="PATH",
                        help="with --protocol sealed/swapped: keep the model trained "
                        "on the development patients here (score it again with "
                        "--model, no retraining)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="with --folds: folds trained in parallel (default 2)")
    add_training_options(parser)
    parser.set_defaults(func=run_evaluate)
    return parser
