"""Benchmark of ``run --table`` (issue 43): the columns beside the tagging.

Generates a three-table export (``generate --kind tables``: patients,
encounters, notes) of ``--patients`` patients, writes the notes' text as a
JSONL file (``id``, ``text``, ``person_key``), and in one process runs:

1. a warm-up (a few notes: model load and compilation are not measured);
2. today's text-only ``run --input notes.jsonl`` over the same notes;
3. ``run --table`` over the three tables;

and prints rows and notes per second of each and their ratio::

    python -m deid_pipeline.benchmarks.bench_tables --patients 1000 --audit

With ``--audit`` it also runs the tables again (same key: byte-identical?)
and night 2 (the same patients with new rows: same pseudonyms?) and prints
the audit's counts (``deid_pipeline.evaluation.table_audit``): joins,
intervals, leaks. Only counts and timings are printed, never values.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import os
import secrets
import sys
import tempfile
import time

from deid_pipeline.evaluation.table_audit import audit
from deid_pipeline.pipelines.job import run
from deid_pipeline.synthetic.tables import write_tables

TABLES = ("patients", "encounters", "notes")


def build_parser() -> argparse.ArgumentParser:
    """Size, seed, audit and where to work."""
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.benchmarks.bench_tables",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--patients", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--audit", action="store_true",
                        help="also a second run, night 2 and the audit's counts")
    parser.add_argument("--workdir", help="keep inputs and outputs here "
                        "(default: a temporary one)")
    return parser


def _timed(argv: list[str]) -> tuple[float, dict]:
    started = time.perf_counter()
    summary = run(argv)
    return time.perf_counter() - started, summary


def _notes_jsonl(export: str, path: str, limit: int | None = None) -> int:
    with open(os.path.join(export, "notes.csv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))[:limit]
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({"id": row["note_id"], "text": row["text"],
                                  "person_key": row["patient_id"]}) + "\n")
    return len(rows)


def _tables_argv(export: str, output: str) -> list[str]:
    argv = []
    for t in TABLES:
        argv += ["--table", f"{t}={os.path.join(export, t + '.csv')}",
                 "--column-policy", f"{t}={os.path.join(export, t + '.policy.yaml')}"]
    return argv + ["--output", output]


def measure(args, workdir: str) -> dict:
    """The timings (and with ``--audit`` the audit's counts)."""
    export = os.path.join(workdir, "export")
    write_tables(export, args.patients, args.seed)
    key = os.path.join(workdir, "bench.key")
    with open(key, "wb") as fh:
        fh.write(base64.b64encode(secrets.token_bytes(32)))
    common = ["--key-file", key, "--as-of-year", "2026"]
    warm = os.path.join(workdir, "warm.jsonl")
    _notes_jsonl(export, warm, 5)
    run(["--input", warm, "--output", os.path.join(workdir, "out-warm")] + common)
    notes = os.path.join(workdir, "notes.jsonl")
    n_notes = _notes_jsonl(export, notes)
    text_s, text = _timed(["--input", notes, "--output",
                           os.path.join(workdir, "out-text")] + common)
    out = os.path.join(workdir, "out-tables")
    tables_s, tables = _timed(_tables_argv(export, out) + common)
    figures = {
        "patients": args.patients,
        "notes": n_notes,
        "rows": tables["records_read"],
        "text_seconds": round(text_s, 2),
        "text_notes_per_second": round(n_notes / text_s, 2),
        "tables_seconds": round(tables_s, 2),
        "tables_rows_per_second": round(tables["records_read"] / tables_s, 2),
        "tables_notes_per_second": round(n_notes / tables_s, 2),
        "tables_over_text_time": round(tables_s / text_s, 3),
        "quarantined": tables["records_quarantined"],
        "text_quarantined": text["records_quarantined"],
    }
    if args.audit:
        again = os.path.join(workdir, "out-tables-again")
        run(_tables_argv(export, again) + common)
        night2 = os.path.join(workdir, "export-night2")
        write_tables(night2, args.patients, args.seed, night=2)
        out2 = os.path.join(workdir, "out-night2")
        run(_tables_argv(night2, out2) + common)
        figures["audit"] = audit(export, out, again)
        figures["audit_night2"] = audit(night2, out2, out)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures as JSON (counts and times only)."""
    args = build_parser().parse_args(argv)
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        figures = measure(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-tables-") as workdir:
            figures = measure(args, workdir)
    print(json.dumps(figures, indent=2, sort_keys=True))
    print(
        f"bench_tables: {figures['notes']} notes; text-only run "
        f"{figures['text_notes_per_second']} notes/s; tables run "
        f"{figures['tables_rows_per_second']} rows/s = "
        f"{figures['tables_notes_per_second']} notes/s "
        f"({figures['tables_over_text_time']}x the text-only time)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
