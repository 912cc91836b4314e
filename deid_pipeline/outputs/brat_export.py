"""``deid-pipeline export-brat``: a run's tagged spans as BRAT ``.ann`` files.

A site scores a model with the tools it already has (MEDDOCAN's official
scorer reads BRAT): ``run --mode tag`` writes every span, with the model's
own label and its offsets into the original text, to the protected
identifier view; this writes one ``<doc id>.ann`` per document of the
extract (an empty file for a document without spans, so a scorer counts its
gold as missed, not the document as absent). ``--texts DIR`` also copies
each ``<doc id>.txt`` from DIR beside its ``.ann``, as BRAT tools expect.

The ``.ann`` files quote the original PHI (they are a protected output):
written owner-only, like the identifier view.
"""

from __future__ import annotations

import argparse
import os
import sys

from deid_pipeline.evaluation.brat import format_ann
from deid_pipeline.outputs.protected import make_protected_dirs, write_protected


def _rows(extract: str, table: str, columns: list[str]) -> list[dict]:
    import glob

    from deid_pipeline.parquet_files import read_parquet_files

    path = os.path.join(extract, table)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{extract}: no {table}/ table (not a run's output)")
    files = sorted(glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True))
    return read_parquet_files(files, columns).to_pylist() if files else []


def export_brat(extract: str, output: str, texts: str | None = None) -> tuple[int, int]:
    """Write the ``.ann`` files; returns (documents, spans) written."""
    doc_ids = sorted({r["doc_id"] for r in _rows(extract, "documents", ["doc_id"])})
    by_doc: dict[str, list[tuple[int, int, str, str]]] = {d: [] for d in doc_ids}
    for r in _rows(extract, "identifiers", ["doc_id", "start", "end", "label",
                                            "original"]):
        by_doc.setdefault(r["doc_id"], []).append(
            (r["start"], r["end"], r["label"], r["original"]))
    make_protected_dirs(output, tighten=True)
    n_spans = 0
    for doc_id, entries in sorted(by_doc.items()):
        write_protected(os.path.join(output, f"{doc_id}.ann"), format_ann(entries))
        n_spans += len(entries)
        if texts is not None:
            source = os.path.join(texts, f"{doc_id}.txt")
            if not os.path.exists(source):
                raise FileNotFoundError(f"--texts: no {doc_id}.txt in {texts}")
            # The original text: PHI, owner-only like the .ann beside it.
            with open(source, "rb") as fh:
                write_protected(os.path.join(output, f"{doc_id}.txt"), fh.read())
    return len(by_doc), n_spans


def run_export_brat(args: argparse.Namespace) -> int:
    """0 written; 2 the extract or a text is missing."""
    try:
        docs, spans = export_brat(args.extract, args.output, args.texts)
    except (OSError, ValueError) as exc:
        print(f"deid-pipeline export-brat: error: {exc}", file=sys.stderr)
        return 2
    print(f"deid-pipeline export-brat: {docs} .ann files, {spans} spans in "
          f"{args.output}", file=sys.stderr)
    return 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``export-brat`` to the main CLI's subparsers."""
    parser = subparsers.add_parser(
        "export-brat",
        help="write a run's tagged spans as BRAT .ann files (for a site's scorer)",
        description="One <doc id>.ann per document of a run's output: every span "
        "of the identifier view with its label and offsets into the original "
        "text. Use on the output of run --mode tag.")
    parser.add_argument("--extract", required=True, metavar="DIR",
                        help="a run's --output directory")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="directory for the .ann files (created owner-only)")
    parser.add_argument("--texts", metavar="DIR",
                        help="also copy each <doc id>.txt from DIR beside its .ann")
    parser.set_defaults(func=run_export_brat)
    return parser
