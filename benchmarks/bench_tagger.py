"""Benchmark the CRF tagger on one core: tokens/s and notes/s, features vs decoding.

Not a test: run it by hand on the machine you size a job for::

    python -m deid_pipeline.benchmarks.bench_tagger \
        --corpus physionet:../shared/corpora/physionet-deid

It tags every note of the corpus ``--repeat`` times in this one process (one
core) and reports the best pass, split into tokenization, feature extraction
(the model's attribute ids of every token's features, as tagging computes
them: ``FeatureEncoder``; training spells the same features as strings) and
CRF decoding (state scores, Viterbi, marginals, path probability), and the
end-to-end ``CrfDetector.analyze`` rate. The first, cold pass (empty per-process
feature cache) is reported too. Only counts and timings are printed.
"""

from __future__ import annotations

import argparse
import sys
import time


def _bench(docs, detector, repeat: int) -> dict[str, list[float]]:
    from deid_pipeline.tagger.crf_decoder import decode_ids
    from deid_pipeline.tokenizer import tokenize

    model = detector.model
    timings: dict[str, list[float]] = {"tokenize": [], "features": [], "decode": [],
                                       "analyze": []}
    for _ in range(repeat):
        spent = {"tokenize": 0.0, "features": 0.0, "decode": 0.0}
        # Per document, as the tagger works: the features of one note are
        # garbage once it is decoded (holding all of them would time the GC).
        for d in docs:
            t0 = time.perf_counter()
            tokens = tokenize(d.text)
            t1 = time.perf_counter()
            ids, offsets = model.encoder.encode(d, tokens)
            t2 = time.perf_counter()
            decode_ids(model.weights, ids, offsets)
            t3 = time.perf_counter()
            spent["tokenize"] += t1 - t0
            spent["features"] += t2 - t1
            spent["decode"] += t3 - t2
        t3 = time.perf_counter()
        for d in docs:
            detector.analyze(d)
        t4 = time.perf_counter()
        for key, value in spent.items():
            timings[key].append(value)
        timings["analyze"].append(t4 - t3)
    return timings


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; prints a table, returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", required=True, metavar="SPEC",
                        help="physionet:DIR, jsonl:FILE or synthetic:N (repeatable)")
    parser.add_argument("--model", help="CRF model (default: the shipped model)")
    parser.add_argument("--bias", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3, help="passes (best is kept)")
    args = parser.parse_args(argv)

    from deid_pipeline.tagger import lexicons
    from deid_pipeline.tagger.crf import CrfDetector
    from deid_pipeline.tagger.crf_model import load_model
    from deid_pipeline.tokenizer import tokenize
    from deid_pipeline.training.train import load_corpora

    try:
        import os

        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        pinned = "pinned to one core"
    except (AttributeError, OSError):
        pinned = "not pinned"
    docs = load_corpora(args.corpus)
    n_tokens = sum(len(tokenize(d.text)) for d in docs)
    t0 = time.perf_counter()
    lexicons.load()
    t_lex = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = load_model(args.model)
    t_model = time.perf_counter() - t0
    detector = CrfDetector(model, args.bias)
    # The first note loads what the tagger loads on first use (lexicons, rule
    # gates): once per process, like the loads above, so outside the timing.
    t0 = time.perf_counter()
    detector.analyze(docs[0])
    t_first = time.perf_counter() - t0
    timings = _bench(docs, detector, args.repeat)

    print(f"corpus: {len(docs)} notes, {n_tokens} tokens; model {model.model_id} "
          f"({len(model.weights.attribute_ids)} attributes, "
          f"{len(model.labels)} labels); {pinned}")
    print(f"one-off loads: lexicons {t_lex:.2f}s, model {t_model:.3f}s, "
          f"first note (lazy loads) {t_first:.2f}s")
    print(f"{'stage':<30} {'best s':>8} {'cold s':>8} {'tokens/s':>10} {'notes/s':>9}")
    rows = [("tokenize", timings["tokenize"]),
            ("feature extraction", timings["features"]),
            ("CRF decoding", timings["decode"])]
    split = [sum(x) for x in zip(timings["tokenize"], timings["features"],
                                 timings["decode"])]
    rows += [("sum of the three", split),
             ("end to end (analyze)", timings["analyze"])]
    for name, values in rows:
        best = min(values)
        print(f"{name:<30} {best:>8.2f} {values[0]:>8.2f} {n_tokens / best:>10.0f} "
              f"{len(docs) / best:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
