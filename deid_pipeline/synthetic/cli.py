"""``deid-pipeline generate``: write synthetic notes or HL7 messages plus gold spans.

Output kinds: ``tables`` (a multi-table research extract, ``synthetic/tables.py``),
``text`` (one ``.txt`` per document), ``jsonl`` (``notes.jsonl``
with ``{"id", "text", "person_key"}`` per line) and ``hl7`` (one ``.hl7`` per
message, or ``--per-file K`` messages per file). Each also writes
``gold.jsonl`` beside it, one line per document:
``{"id", "text", "person_key", "kind", "spans": [{"start", "end", "label"}],
"header_identifiers": [[address, value, label], ...]}``, which
``deid_pipeline.evaluation.corpora.load_jsonl_corpus`` reads. For HL7, every document
line carries its message's header identifiers and ``message_id``; a message
without narrative (ADT) gets one line with empty ``text``.

Only counts are printed (on stderr): the data is synthetic, but the habit of
never echoing PHI is kept.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Iterable

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.synthetic.hl7 import MESSAGE_KINDS, SyntheticMessage, iter_messages
from deid_pipeline.synthetic.notes import KINDS as NOTE_KINDS
from deid_pipeline.synthetic.notes import iter_notes

logger = logging.getLogger(__name__)

OUTPUT_KINDS = ("text", "jsonl", "hl7", "tables")
GOLD_FILE = "gold.jsonl"
NOTES_FILE = "notes.jsonl"


def add_subcommand(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``generate`` to the main CLI's subparsers; sets ``func=run_generate``."""
    parser = subparsers.add_parser(
        "generate",
        help="write synthetic notes or HL7 messages with gold PHI spans",
        description="Write synthetic clinical documents (Faker identities, exact gold "
        "spans) for tests, demos, benchmarks and CRF training. The same seed gives "
        "the same bytes.",
    )
    parser.add_argument(
        "--kind",
        choices=OUTPUT_KINDS,
        default="jsonl",
        help="text: one .txt per document; jsonl: notes.jsonl; "
        "hl7: .hl7 messages; tables: a research extract (patients.csv, "
        "encounters.csv, notes.csv, their column policies; --count patients; "
        "docs/tables.md) (default: %(default)s)",
    )
    parser.add_argument(
        "--count",
        type=int,
        default=100,
        help="documents (text, jsonl) or messages (hl7) to write "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="random seed (default: %(default)s)"
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="DIR",
        help="output directory (created if missing)",
    )
    parser.add_argument(
        "--min-tokens",
        type=int,
        default=150,
        help="shortest note in tokens, text/jsonl (default: %(default)s)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=1500,
        help="longest note in tokens, text/jsonl (default: %(default)s)",
    )
    parser.add_argument(
        "--per-file",
        type=int,
        default=1,
        metavar="K",
        help="hl7: messages per .hl7 file (default: %(default)s)",
    )
    parser.add_argument(
        "--types",
        default=None,
        help="comma-separated subset: note kinds "
        f"({','.join(NOTE_KINDS)}) for text/jsonl, message kinds "
        f"({','.join(MESSAGE_KINDS)}) for hl7 (default: all)",
    )
    parser.add_argument(
        "--age-threshold",
        type=int,
        default=90,
        help="label ages from this value up as AGE; 0 labels every "
        "age (default: %(default)s, HIPAA Safe Harbor)",
    )
    parser.add_argument(
        "--night",
        type=int,
        default=1,
        help="tables: the export of night N: the same patients, new encounters "
        "and notes (default: %(default)s)",
    )
    parser.set_defaults(func=run_generate)
    return parser


def _gold_line(
    doc: ClinicalDocument,
    header: Iterable[tuple[str, str, str]] = (),
    message_id: str | None = None,
) -> str:
    obj: dict[str, object] = {
        "id": doc.doc_id,
        "text": doc.text,
        "person_key": doc.person_key,
        "kind": dict(doc.metadata).get("kind", ""),
        "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in doc.gold],
        "header_identifiers": [list(h) for h in header],
    }
    if message_id is not None:
        obj["message_id"] = message_id
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _write(path: str, text: str) -> None:
    # newline="" keeps "\r" segment terminators and note line ends byte-exact.
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def _parse_types(value: str | None, allowed: tuple[str, ...]) -> tuple[str, ...] | None:
    if value is None:
        return None
    types = tuple(t.strip() for t in value.split(",") if t.strip())
    bad = [t for t in types if t not in allowed]
    if bad or not types:
        raise ValueError(
            f"--types must be a comma-separated subset of {','.join(allowed)}"
        )
    return types


def _generate_notes(args: argparse.Namespace) -> tuple[int, int, int]:
    types = _parse_types(args.types, NOTE_KINDS)
    n_docs = n_spans = n_files = 0
    gold_path = os.path.join(args.output, GOLD_FILE)
    notes_fh = None
    if args.kind == "jsonl":
        notes_fh = open(
            os.path.join(args.output, NOTES_FILE), "w", encoding="utf-8", newline=""
        )
        n_files += 1
    try:
        with open(gold_path, "w", encoding="utf-8", newline="") as gold_fh:
            for note in iter_notes(
                args.count,
                args.seed,
                args.min_tokens,
                args.max_tokens,
                types,
                args.age_threshold,
            ):
                doc = note.document
                if notes_fh is not None:
                    notes_fh.write(
                        json.dumps(
                            {
                                "id": doc.doc_id,
                                "text": doc.text,
                                "person_key": doc.person_key,
                            },
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
                else:
                    _write(os.path.join(args.output, f"{doc.doc_id}.txt"), doc.text)
                    n_files += 1
                gold_fh.write(_gold_line(doc))
                n_docs += 1
                n_spans += len(doc.gold)
    finally:
        if notes_fh is not None:
            notes_fh.close()
    return n_docs, n_spans, n_files


def _generate_hl7(args: argparse.Namespace) -> tuple[int, int, int, int]:
    types = _parse_types(args.types, MESSAGE_KINDS) or MESSAGE_KINDS
    if args.per_file < 1:
        raise ValueError("--per-file must be >= 1")
    n_msgs = n_docs = n_spans = n_files = 0
    batch: list[SyntheticMessage] = []

    def flush() -> None:
        nonlocal n_files
        if not batch:
            return
        name = (
            f"{batch[0].message_id}.hl7"
            if args.per_file == 1
            else f"messages-{n_files + 1:05d}.hl7"
        )
        _write(os.path.join(args.output, name), "".join(m.er7 for m in batch))
        n_files += 1
        batch.clear()

    with open(
        os.path.join(args.output, GOLD_FILE), "w", encoding="utf-8", newline=""
    ) as gold_fh:
        for msg in iter_messages(args.count, args.seed, types, args.age_threshold):
            n_msgs += 1
            docs = msg.documents or (
                ClinicalDocument(
                    doc_id=msg.message_id,
                    text="",
                    source="hl7",
                    person_key=msg.person_key,
                    metadata=(("kind", msg.kind),),
                ),
            )
            for doc in docs:
                gold_fh.write(_gold_line(doc, msg.header_identifiers, msg.message_id))
                n_spans += len(doc.gold)
            n_docs += len(msg.documents)
            batch.append(msg)
            if len(batch) >= args.per_file:
                flush()
        flush()
    return n_msgs, n_docs, n_spans, n_files


def run_generate(args: argparse.Namespace) -> int:
    """Write the requested synthetic data; 0 on success, 2 on bad options or I/O."""
    if args.count < 0:
        print("generate: --count must be >= 0", file=sys.stderr)
        return 2
    if args.min_tokens < 1 or args.max_tokens < args.min_tokens:
        print("generate: need 1 <= --min-tokens <= --max-tokens", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.output, exist_ok=True)
        if args.kind == "tables":
            from deid_pipeline.synthetic.tables import write_tables

            counts = write_tables(args.output, args.count, args.seed, args.night)
            summary = ("generate: {} patients, {} encounters, {} notes, {} gold "
                       "spans, 3 tables and their policies").format(*counts)
        elif args.kind == "hl7":
            n_msgs, n_docs, n_spans, n_files = _generate_hl7(args)
            summary = (
                f"generate: {n_msgs} HL7 messages, {n_docs} report documents, "
                f"{n_spans} gold spans, {n_files} .hl7 files"
            )
        else:
            n_docs, n_spans, n_files = _generate_notes(args)
            summary = (
                f"generate: {n_docs} {args.kind} documents, {n_spans} gold spans, "
                f"{n_files} files"
            )
    except (OSError, ValueError) as exc:
        print(f"generate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(summary + f" (+ {GOLD_FILE})", file=sys.stderr)
    logger.info("%s", summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry: ``python -m deid_pipeline.synthetic.cli generate ...``."""
    parser = argparse.ArgumentParser(prog="python -m deid_pipeline.synthetic.cli")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_subcommand(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
