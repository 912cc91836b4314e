"""Benchmark: one huge document against the same text as many small documents.

Generates N short synthetic nursing notes (Faker-seeded, each with its own
names, places, phones and dates), writes them (a) as ONE text document and
(b) as the same text split into documents of ``--notes-per-document`` notes,
and runs the real ``deid-pipeline run`` CLI (a subprocess, ``--ephemeral-key``)
on each::

    python -m deid_pipeline.benchmarks.bench_large_document --sizes 400,4000

For each size it prints the input size, wall time, peak RSS of the job's
process tree (sampled with psutil), the longest silence on the job's stderr
(from its start, between lines, to its end: ``docs/reliability.md`` promises
a progress line at most every 30 s) and the ratio one-document / split.
Only counts, sizes and timings are printed; never document content.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from deid_pipeline.benchmarks.bench_inputs import fmt_bytes, workspace, write_json
from deid_pipeline.benchmarks.sampling import TreeSampler

NOTE_TOKENS = (150, 300)  # about 1.2 KB a note: 40,000 notes are about 50 MB
SEPARATOR = "\n\n"


@dataclass
class JobFigures:
    """What one ``deid-pipeline run`` over one input layout measured."""

    layout: str
    notes: int
    documents: int
    input_bytes: int
    wall_seconds: float
    peak_rss: int
    longest_silence: float
    stderr_lines: int
    records_written: int | None


def _generate(job: tuple[int, int, int]) -> list[str]:
    from deid_pipeline.synthetic import generate_notes

    count, seed, _ = job
    return [d.text for d in generate_notes(count, seed, *NOTE_TOKENS, ("nursing",))]


def note_texts(count: int, seed: int, workers: int) -> list[str]:
    """``count`` notes, generated in batches (one seed each) over ``workers``."""
    import multiprocessing

    batch = 500
    jobs = [(min(batch, count - i), seed * 1_000_003 + i, i)
            for i in range(0, count, batch)]
    if workers < 2 or len(jobs) < 2:
        return [t for job in jobs for t in _generate(job)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return [t for texts in pool.map(_generate, jobs) for t in texts]


def write_inputs(texts: Sequence[str], directory: str, per_document: int
                 ) -> tuple[str, str, int]:
    """Write the one-document and the split layouts; their globs and the size."""
    one = os.path.join(directory, "one")
    split = os.path.join(directory, "split")
    os.makedirs(one, exist_ok=True)
    os.makedirs(split, exist_ok=True)
    whole = SEPARATOR.join(texts) + "\n"
    with open(os.path.join(one, "all.txt"), "w", encoding="utf-8") as fh:
        fh.write(whole)
    for k in range(0, len(texts), per_document):
        path = os.path.join(split, f"doc-{k // per_document:06d}.txt")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(SEPARATOR.join(texts[k:k + per_document]) + "\n")
    return (os.path.join(one, "*.txt"), os.path.join(split, "*.txt"),
            len(whole.encode("utf-8")))


class SilenceWatch:
    """Reads a pipe line by line and keeps the longest gap between lines."""

    def __init__(self, stream, started: float, log_path: str) -> None:
        self._stream = stream
        self._started = started
        self._log_path = log_path
        self._last = started
        self.longest = 0.0
        self.lines = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        # The job's stderr (progress lines: counts only) with the second each
        # came at, kept beside the outputs to see where a silence was.
        with open(self._log_path, "w", encoding="utf-8", buffering=1) as log:
            for line in self._stream:
                now = time.perf_counter()
                self.longest = max(self.longest, now - self._last)
                self._last = now
                self.lines += 1
                log.write(f"{now - self._started:8.1f} {line}")

    def finish(self) -> float:
        """The longest silence, counting the one from the last line to now."""
        self._thread.join()
        self.longest = max(self.longest, time.perf_counter() - self._last)
        return self.longest


def run_job(layout: str, pattern: str, notes: int, documents: int, size: int,
            workdir: str, extra: Sequence[str]) -> JobFigures:
    """One ``deid-pipeline run`` on ``pattern``, sampled and timed from outside."""
    import json

    out = os.path.join(workdir, f"out-{layout}")
    cmd = [sys.executable, "-m", "deid_pipeline.pipelines.cli", "run",
           "--input", pattern, "--output", out, "--ephemeral-key", *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    sampler = TreeSampler(proc.pid).start()
    watch = SilenceWatch(proc.stderr, started,
                         os.path.join(workdir, f"stderr-{layout}.log"))
    code = proc.wait()
    silence = watch.finish()
    sampler.stop()
    wall = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{layout} run exited {code} (notes {notes})")
    written = None
    summary_path = os.path.join(out, "run.json")
    if os.path.exists(summary_path):
        with open(summary_path, encoding="utf-8") as fh:
            written = json.load(fh).get("records_written")
    return JobFigures(layout, notes, documents, size, round(wall, 2),
                      sampler.peak_rss, round(silence, 1), watch.lines, written)


def _line(f: JobFigures) -> str:
    return (f"  {f.layout:<5} {f.documents:>6} docs  {f.wall_seconds:>8.1f} s  "
            f"peak RSS {fmt_bytes(f.peak_rss):>9}  longest silence "
            f"{f.longest_silence:>6.1f} s  ({f.stderr_lines} stderr lines, "
            f"{f.records_written} written)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.benchmarks.bench_large_document",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="400",
                        help="comma-separated note counts (default: 400; 40000 "
                             "is about 50 MB)")
    parser.add_argument("--notes-per-document", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workdir", help="keep inputs and outputs here")
    parser.add_argument("--generate-workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="also write the figures to this file")
    args, extra = parser.parse_known_args(argv)
    results = []
    with workspace(args.workdir) as workdir:
        for count in (int(s) for s in args.sizes.split(",") if s):
            directory = os.path.join(workdir, f"n{count}")
            texts = note_texts(count, args.seed, args.generate_workers)
            one, split, size = write_inputs(texts, directory, args.notes_per_document)
            del texts
            per = args.notes_per_document
            print(f"{count} notes, {size / 1e6:.1f} MB", flush=True)
            pair = []
            for layout, pattern, docs in (("one", one, 1),
                                          ("split", split, -(-count // per))):
                figures = run_job(layout, pattern, count, docs, size, directory,
                                  extra)
                print(_line(figures), flush=True)
                pair.append(figures)
            ratio = pair[0].wall_seconds / pair[1].wall_seconds
            print(f"  ratio one/split: {ratio:.2f}x", flush=True)
            results.extend(asdict(f) for f in pair)
    write_json(args.json, {"runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
