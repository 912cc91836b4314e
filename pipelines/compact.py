"""``deid-pipeline compact``: the current rows of an ``--incremental`` output.

Nightly runs add partitions and never rewrite one; a file read again
supersedes its earlier rows. ``compact`` writes ``DIR/current/`` with only
the current rows (``deid_pipeline/store/incremental.py``), for readers
that want one row per document without applying the manifest themselves.
"""

from __future__ import annotations

import argparse
import sys


def add_subcommand(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compact`` to the main CLI's subparsers."""
    parser = subparsers.add_parser(
        "compact",
        help="write DIR/current/: the current rows of a --incremental output",
        description="Copy the current rows of each input file's newest reading "
        "into DIR/current/<table>/run=<ts>/ (documents, identifiers, "
        "quarantine); earlier partitions are kept as they are.",
    )
    parser.add_argument(
        "--output", required=True, metavar="DIR", help="the --incremental output"
    )
    parser.set_defaults(func=run_compact)
    return parser


def run_compact(args: argparse.Namespace) -> int:
    """0 done; 2 not an incremental output, or another run holds its lock."""
    from deid_pipeline.store.files import absolute
    from deid_pipeline.store.incremental import IncrementalError, compact

    try:
        written = compact(absolute(args.output))
    except IncrementalError as exc:
        print(f"deid-pipeline compact: error: {exc}", file=sys.stderr)
        return 2
    files = ", ".join(f"{table} {n}" for table, n in sorted(written.items()))
    print(f"deid-pipeline compact: current/ written ({files} files)", file=sys.stderr)
    return 0
