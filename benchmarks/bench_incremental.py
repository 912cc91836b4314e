"""Benchmark of ``run --incremental`` (issue 19): night 2 costs the new files.

Generates ``--archive`` synthetic notes (one ``.txt`` each) and ``--new``
more, runs night 1 over the archive, adds the new notes, runs night 2 over
everything (it lists the whole archive and reads only the new files), then a
plain run over the new notes alone, and prints the three times::

    python -m deid_pipeline.benchmarks.bench_incremental --archive 50000 --new 1000

Night 2 should take about as long as the plain run over the new notes: its
time is proportional to the new files, not to the archive. Only counts and
timings are printed, never document content.
"""

from __future__ import annotations

import argparse
import base64
import os
import secrets
import shutil
import sys
import tempfile
import time

from deid_pipeline.pipelines.job import run
from deid_pipeline.synthetic.cli import main as generate


def build_parser() -> argparse.ArgumentParser:
    """Sizes, note lengths and where to work."""
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.benchmarks.bench_incremental",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--archive", type=int, default=50_000, help="notes of night 1")
    parser.add_argument("--new", type=int, default=1_000, help="notes added later")
    parser.add_argument("--min-tokens", type=int, default=150)
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument(
        "--workdir", help="keep inputs and outputs here (default: a temporary one)"
    )
    return parser


def _notes(directory: str, count: int, seed: int, args) -> None:
    """``count`` synthetic notes, one file each (names carry the seed: distinct)."""
    code = generate(
        ["generate", "--kind", "text", "--count", str(count), "--seed", str(seed),
         "--min-tokens", str(args.min_tokens), "--max-tokens", str(args.max_tokens),
         "--output", directory]
    )
    if code:
        raise SystemExit(f"generate failed with exit {code}")
    os.remove(os.path.join(directory, "gold.jsonl"))


def _timed(argv: list[str]) -> tuple[float, dict]:
    started = time.perf_counter()
    summary = run(argv)
    return time.perf_counter() - started, summary


def measure(args, workdir: str) -> dict:
    """Night 1, night 2 and the plain run over the new notes; their figures."""
    archive, new = os.path.join(workdir, "archive"), os.path.join(workdir, "new")
    _notes(archive, args.archive, 1, args)
    _notes(new, args.new, 2, args)
    key = os.path.join(workdir, "bench.key")
    with open(key, "wb") as fh:
        fh.write(base64.b64encode(secrets.token_bytes(32)))
    common = ["--key-file", key, "--as-of-year", "2026"]
    out = os.path.join(workdir, "out")
    nightly = ["--input", f"{archive}/*.txt", "--output", out, "--incremental"]
    night1, first = _timed(nightly + common)
    for name in os.listdir(new):
        shutil.copy2(os.path.join(new, name), archive)
    night2, second = _timed(nightly + common)
    alone = os.path.join(workdir, "alone")
    plain, third = _timed(["--input", f"{new}/*.txt", "--output", alone] + common)
    return {
        "archive": args.archive,
        "new": args.new,
        "night1_seconds": round(night1, 2),
        "night1_files_read": first["files_read"],
        "night2_seconds": round(night2, 2),
        "night2_files_read": second["files_read"],
        "night2_unchanged": second["incremental"]["unchanged"],
        "new_alone_seconds": round(plain, 2),
        "new_alone_files_read": third["files_read"],
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; prints one line of figures and returns them."""
    args = build_parser().parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench-incremental-")
    try:
        f = measure(args, workdir)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"bench_incremental: night 1 over {f['archive']} notes "
        f"{f['night1_seconds']} s; night 2 over {f['archive']} + {f['new']} "
        f"(read {f['night2_files_read']}, skipped {f['night2_unchanged']}) "
        f"{f['night2_seconds']} s; plain run over the {f['new']} new alone "
        f"{f['new_alone_seconds']} s"
    )
    return f


if __name__ == "__main__":
    main(sys.argv[1:])
