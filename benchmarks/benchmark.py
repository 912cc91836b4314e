"""Benchmark: the whole ``run`` job on synthetic documents, 1 worker and all cores.

The acceptance run of issue 6, in one command: generates N and ``--scale`` x N
synthetic documents once (``bench_inputs``), then measures what
``bench_scaling`` measures (the full job as a subprocess on 1 worker and on
every core: documents/s, tokens/s, peak RSS of the process tree, CPU of the
tree and of everything else, scaling efficiency against the 1-worker run and
a busy-loop calibration, growth from N to ``--scale`` x N) and what
``bench_stages`` measures (the per-stage share of time of the Beam-free stage
functions over the same documents, against the 1-worker N run), and prints
the targets of issue 6, met or missed::

    python -m deid_pipeline.benchmarks.benchmark --docs 5000 --scale 10 [--nursing]

Only counts, timings and sizes are printed; never document content.
"""

from __future__ import annotations

import argparse
import sys

from deid_pipeline.benchmarks.bench_inputs import new_parser, prepare, workspace
from deid_pipeline.benchmarks.bench_scaling import (
    add_scaling_arguments,
    by_set,
    finish,
    measure_runs,
)
from deid_pipeline.benchmarks.bench_stages import (
    add_profile_argument,
    measure_stages,
    profile,
)


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command line: ``bench_scaling``'s and ``bench_stages``'."""
    parser = new_parser("benchmark", __doc__, docs=5000)
    add_scaling_arguments(parser)
    parser.add_argument(
        "--stage-docs",
        type=int,
        default=2000,
        help="documents for the per-stage timing (default: 2000)",
    )
    add_profile_argument(parser)
    return parser


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns (and prints) the figures."""
    args = build_parser().parse_args(argv)
    with workspace(args.workdir) as workdir:
        bench = prepare(args, args.scale, workdir, "benchmark")
        runs, figures = measure_runs(args, bench)
        baseline = by_set(runs).get(("N", 1))
        limit = min(args.stage_docs, args.docs)
        figures.update(measure_stages(bench, args.model, limit, baseline))
        finish(args, bench, runs, figures)
        if args.pyinstrument:
            profile(bench, args.pyinstrument)
        return figures


if __name__ == "__main__":
    main(sys.argv[1:])
