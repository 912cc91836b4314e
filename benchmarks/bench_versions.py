r"""Benchmark: one build of ``run`` against another, whole process, alternating pairs.

Issue 45's measurement in one command. Each build is an installed
``deid-pipeline`` (its own virtual environment's executable); both run the
same input under the same key, one after the other in each pair, the order
swapped every pair so that the machine's drift falls on both. Each run is
timed from outside: wall time, and the CPU and peak summed RSS of its
process tree (``sampling.TreeSampler``, as ``bench_scaling`` counts them).
Printed: every run, each figure's median and range per build, and the
candidate/baseline ratio of each pair with the median of those ratios::

    python -m deid_pipeline.benchmarks.bench_versions \
        --baseline /path/to/old-venv/bin/deid-pipeline \
        --physionet ../shared/corpora/physionet-deid --pairs 3 --cpus 0

``--physionet`` writes that corpus's notes as JSONL (``{"id", "text"}``) once
and runs on it; ``--input`` runs on any input instead. ``--same-output``
also checks that the two builds wrote byte-identical files (all but
``run.json``): for a change meant to leave the outputs alone. Untimed
warm-up runs come first (``--warmup``): the first run of a fresh install
writes its ``.pyc`` and data caches. Only counts, timings and sizes are
printed; never document content.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

from deid_pipeline.benchmarks.bench_inputs import (
    bench_key,
    fmt_bytes,
    workspace,
    write_json,
)
from deid_pipeline.benchmarks.sampling import TreeSampler

CANDIDATE, BASELINE = "candidate", "baseline"
FIGURES = (("wall_s", "wall", "s"), ("cpu_s", "CPU of the tree", "s"),
           ("peak_rss", "peak RSS of the tree", "bytes"))


def write_physionet_jsonl(directory: str, path: str) -> int:
    """The corpus's notes as JSONL ``{"id", "text"}`` at ``path``; how many."""
    from deid_pipeline.evaluation.corpora import load_physionet_corpus

    docs = load_physionet_corpus(directory)
    with open(path, "w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps({"id": doc.doc_id, "text": doc.text}) + "\n")
    return len(docs)


def default_candidate() -> str:
    """The ``deid-pipeline`` beside this interpreter (this build), or on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "deid-pipeline")
    return beside if os.path.exists(beside) else shutil.which("deid-pipeline") or beside


def time_run(executable: str, inputs: Sequence[str], key_file: str, output: str,
             cpus: set[int] | None, log_path: str) -> dict[str, float]:
    """One ``run`` of ``executable`` in a subprocess: its wall, CPU and peak RSS."""
    shutil.rmtree(output, ignore_errors=True)
    cmd = [executable, "run", "--output", output, "--key-file", key_file]
    for pattern in inputs:
        cmd += ["--input", pattern]
    pin = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=pin)
        sampler = TreeSampler(proc.pid).start()
        code = proc.wait()
        sampler.stop()
    wall = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{executable} run exited {code}; see {log_path}")
    return {"wall_s": round(wall, 3), "cpu_s": round(sampler.tree_cpu, 2),
            "peak_rss": sampler.peak_rss}


def output_digests(directory: str) -> dict[str, str]:
    """SHA-256 of every file a run wrote, by relative path.

    ``run.json`` is left out: it holds the run's own timings.
    """
    digests = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory)
            if rel == "run.json":
                continue
            with open(path, "rb") as fh:
                digests[rel] = hashlib.sha256(fh.read()).hexdigest()
    return digests


def summarize(runs: list[dict]) -> dict[str, dict]:
    """Per figure: each build's median and range, and the pairs' ratios."""
    summary = {}
    for figure, _, _ in FIGURES:
        row: dict[str, object] = {}
        for build in (CANDIDATE, BASELINE):
            values = [r[figure] for r in runs if r["build"] == build]
            row[build] = {"median": statistics.median(values),
                          "min": min(values), "max": max(values)}
        ratios = []
        for pair in sorted({r["pair"] for r in runs}):
            got = {r["build"]: r[figure] for r in runs if r["pair"] == pair}
            if got.get(BASELINE):
                ratios.append(got[CANDIDATE] / got[BASELINE])
        row["ratios"] = [round(x, 4) for x in ratios]
        row["ratio_median"] = round(statistics.median(ratios), 4) if ratios else None
        summary[figure] = row
    return summary


def _fmt(value: float, unit: str) -> str:
    return fmt_bytes(int(value)) if unit == "bytes" else f"{value:.2f} {unit}"


def report(summary: dict[str, dict]) -> None:
    """Print each figure's medians, ranges and the candidate/baseline ratio."""
    print("\nmedians (range) over the pairs; ratio: candidate / baseline, pair by pair")
    for figure, name, unit in FIGURES:
        row = summary[figure]
        sides = [f"{build} {_fmt(row[build]['median'], unit)} "
                 f"({_fmt(row[build]['min'], unit)} - {_fmt(row[build]['max'], unit)})"
                 for build in (CANDIDATE, BASELINE)]
        ratios = row["ratios"]
        print(f"  {name}: {'; '.join(sides)}; ratio {row['ratio_median']:.3f} "
              f"({min(ratios):.3f} - {max(ratios):.3f})")


def cpu_set(text: str) -> set[int]:
    """``--cpus``: CPU numbers this machine has, comma-separated."""
    try:
        cpus = {int(c) for c in text.split(",")}
    except ValueError:
        raise argparse.ArgumentTypeError(f"not CPU numbers: {text!r}") from None
    unknown = cpus - os.sched_getaffinity(0)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"CPUs {sorted(unknown)} are not among this process's "
            f"{sorted(os.sched_getaffinity(0))}")
    return cpus


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.benchmarks.bench_versions",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--baseline", required=True, metavar="EXECUTABLE",
                        help="the other build's deid-pipeline (in its own venv)")
    parser.add_argument("--candidate", metavar="EXECUTABLE",
                        help="this build's deid-pipeline (default: the one "
                        "beside this Python)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", action="append", metavar="PATTERN",
                        help="what both runs read (repeatable)")
    source.add_argument("--physionet", metavar="DIR",
                        help="the PhysioNet corpus directory: its notes as JSONL")
    parser.add_argument("--pairs", type=int, default=3, help="timed pairs (default: 3)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed runs of each build first (default: 1)")
    parser.add_argument("--cpus", type=cpu_set,
                        help="pin every run to these CPUs, e.g. 0 or 0,1 "
                        "(default: not pinned)")
    parser.add_argument("--same-output", action="store_true",
                        help="fail unless both builds wrote byte-identical files")
    parser.add_argument("--key-file", help="the run key (default: a new random key "
                        "in the work directory, the same for both builds)")
    parser.add_argument("--workdir", help="outputs and logs (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--json", metavar="PATH", help="write every figure as JSON")
    return parser


def _measure(args: argparse.Namespace, workdir: str) -> dict:
    builds = {CANDIDATE: args.candidate or default_candidate(),
              BASELINE: args.baseline}
    for build, executable in builds.items():
        if not os.access(executable, os.X_OK):
            raise SystemExit(f"bench_versions: the {build} {executable!r} is not an "
                             "executable deid-pipeline")
    inputs = args.input
    if args.physionet:
        path = os.path.join(workdir, "physionet-notes.jsonl")
        print(f"{write_physionet_jsonl(args.physionet, path)} PhysioNet notes as JSONL")
        inputs = [path]
    key_file = args.key_file or bench_key(workdir)[0]
    cpus = args.cpus

    def one(build: str, tag: str) -> dict[str, float]:
        out = os.path.join(workdir, f"out-{build}")
        return time_run(builds[build], inputs, key_file, out, cpus,
                        os.path.join(workdir, f"log-{build}-{tag}.txt"))

    for k in range(args.warmup):
        for build in builds:
            one(build, f"warmup{k}")
    runs = []
    digests: dict[str, dict[str, str]] = {}
    for pair in range(args.pairs):
        order = (CANDIDATE, BASELINE) if pair % 2 == 0 else (BASELINE, CANDIDATE)
        for build in order:
            figures = {"pair": pair + 1, "build": build, **one(build, str(pair))}
            runs.append(figures)
            rss = fmt_bytes(figures["peak_rss"])
            print(f"pair {pair + 1} {build}: wall {figures['wall_s']:.2f} s, CPU "
                  f"{figures['cpu_s']:.2f} s, peak RSS {rss}", flush=True)
            digests[build] = output_digests(os.path.join(workdir, f"out-{build}"))
    same = digests[CANDIDATE] == digests[BASELINE]
    return {"builds": builds, "inputs": inputs, "cpus": sorted(cpus or ()),
            "runs": runs, "same_output": same,
            "output_files": len(digests[CANDIDATE])}


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    if args.pairs < 1 or args.warmup < 0:
        raise SystemExit("bench_versions: --pairs must be 1 or more, --warmup 0+")
    with workspace(args.workdir) as path:
        figures = _measure(args, path)
    figures["summary"] = summarize(figures["runs"])
    report(figures["summary"])
    print(f"outputs ({figures['output_files']} files, run.json aside): "
          f"{'byte-identical' if figures['same_output'] else 'different'}")
    write_json(args.json, figures)
    if args.same_output and not figures["same_output"]:
        raise SystemExit("bench_versions: the two builds wrote different outputs")
    return figures


if __name__ == "__main__":
    main()
