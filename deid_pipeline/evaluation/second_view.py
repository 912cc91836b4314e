"""The CRF alone, the neural view alone and their ensembles on a hold-out fold.

``python -m deid_pipeline.evaluation.second_view --corpus physionet:DIR --fold F
--model FOLD.crfsuite`` scores, on the development patients of fold ``F``
(:func:`~deid_pipeline.evaluation.cross_validation.assign_folds` of the
development 70%, never the sealed patients) and on swapped copies of them
(:func:`~deid_pipeline.evaluation.swapped.swapped_copy`), each variant alone
(the detector through the one merge) and inside the hybrid (rules,
dictionary, the variant, gazetteer), over a bias sweep. The models must have
been trained without the fold's patients; the neural weights are read beside
the CRF model (``FOLD.neural.npz``). Output: counts and scores only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from deid_pipeline.evaluation.cross_validation import assign_folds, tag_at_biases
from deid_pipeline.evaluation.metrics import PRF, evaluate
from deid_pipeline.evaluation.sealed import split
from deid_pipeline.evaluation.swapped import copy_seeds, swapped_split
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.crf import CrfDetector
from deid_pipeline.tagger.crf_model import load_model
from deid_pipeline.tagger.crf_neural import EnsembleDetector, MixRule
from deid_pipeline.tagger.detectors import Detector, TaggerConfig, create
from deid_pipeline.tagger.neural import load_neural, weights_beside

OTHERS = ("rules", "dictionary", "gazetteer")


def variants(model_path: str, neural_path: str, bias: float,
             weights: Sequence[float],
             rules: Sequence[MixRule] = (MixRule.MEAN,)) -> dict[str, Detector]:
    """The model-based detectors compared: CRF, neural, and each mix."""
    model = load_model(model_path)
    neural = load_neural(neural_path)
    out: dict[str, Detector] = {"crf": CrfDetector(model, bias),
                                "neural": EnsembleDetector(model, neural, bias,
                                                           rule=MixRule.MEAN,
                                                           weight=1.0)}
    for rule in rules:
        for w in weights:
            out[f"{rule.value}:{w:g}"] = EnsembleDetector(model, neural, bias,
                                                          rule=rule, weight=w)
    out["union"] = EnsembleDetector(model, neural, bias, rule=MixRule.UNION)
    return out


def hold_out(docs: Sequence[ClinicalDocument], fold: int, folds: int
             ) -> list[ClinicalDocument]:
    """The development notes of fold ``fold`` (sealed patients never included)."""
    dev, _ = split(docs)
    return [d for d, f in zip(dev, assign_folds(dev, folds)) if f == fold]


def compare(sets: dict[str, list[ClinicalDocument]], model_path: str,
            neural_path: str, biases: Sequence[float], weights: Sequence[float],
            log=sys.stderr, rules: Sequence[MixRule] = (MixRule.MEAN,)) -> dict:
    """HIPAA binary-token counts per setting, variant, test set and bias."""
    low = min(biases)
    others = create(TaggerConfig(OTHERS, model_path, low))
    results: dict = {}
    for name, detector in variants(model_path, neural_path, low, weights,
                                   rules).items():
        for setting, extra in (("alone", []), ("hybrid", others)):
            key = f"{setting} {name}"
            results[key] = {}
            for set_name, docs in sets.items():
                spans = tag_at_biases(docs, (), model_path, biases,
                                      created=[*extra, detector]).spans
                results[key][set_name] = {
                    str(b): evaluate((d.text, d.gold, p) for d, p in
                                     zip(docs, spans[b])).hipaa.binary_token.as_dict()
                    for b in biases}
            print(f"second view: {key} scored", file=log, flush=True)
    return results


def pooled(per_set: dict, bias: str) -> PRF:
    """The counts of every test set at ``bias`` added up."""
    total = PRF()
    for scores in per_set.values():
        s = scores[bias]
        total.add(PRF(int(s["tp"]), int(s["fp"]), int(s["fn"])))
    return total


def format_table(results: dict, biases: Sequence[float]) -> str:
    """One line per variant and bias: pooled P/R/FP/FN, then recall per set."""
    lines = ["| variant | bias | P | R | FP | FN | recall per set |",
             "|---|---|---|---|---|---|---|"]
    for key, per_set in results.items():
        for b in biases:
            total = pooled(per_set, str(b))
            recalls = ", ".join(f"{s[str(b)]['recall']:.4f}" for s in per_set.values())
            lines.append(f"| {key} | {b:g} | {total.precision:.4f} | "
                         f"{total.recall:.4f} | {total.fp} | {total.fn} | {recalls} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; prints the table, writes ``--json``."""
    from deid_pipeline.evaluation.corpora import load_corpus

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--model", required=True, help="the fold's CRF model")
    parser.add_argument("--neural", help="its neural weights (default: beside it)")
    parser.add_argument("--fold", type=int, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--swap-copies", type=int, default=3)
    parser.add_argument("--biases", default="-3.2,-2.8,-2.4,-2.0,-1.6")
    parser.add_argument("--weights", default="0.3,0.5")
    parser.add_argument("--rules", default="mean",
                        help="mix rules weighed (comma-separated): mean, veto")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    biases = [float(b) for b in args.biases.split(",")]
    weights = [float(w) for w in args.weights.split(",")]
    test = hold_out(load_corpus(args.corpus), args.fold, args.folds)
    sets = {"plain": test}
    for seed in copy_seeds(args.swap_copies):
        sets[f"copy {seed}"] = swapped_split(test, seed)
    neural_path = args.neural or weights_beside(args.model)
    rules = [MixRule(r) for r in args.rules.split(",")]
    results = compare(sets, args.model, neural_path, biases, weights, rules=rules)
    print(f"fold {args.fold}: {len(test)} notes; HIPAA binary token, pooled over "
          f"{', '.join(sets)}")
    print(format_table(results, biases))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
