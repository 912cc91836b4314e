"""``deid-pipeline report``: what a run removed, how re-identifiable its persons are.

Reads only the run's outputs (run.json, documents/, persons/), so it can be
run by the honest broker after the job. The k-anonymity check looks at the
persons table's generalised quasi-identifiers (birth year, sex, ZIP3), the
step HIDE's anonymisation would take next: every equivalence class smaller
than k is a group of persons that a linkage attack could single out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import Counter

from deid_pipeline.outputs.protected import write_protected
from deid_pipeline.parquet_files import read_parquet

QUASI_IDENTIFIERS = ("birth_year", "sex", "zip3")


def _rows(run_dir: str, table: str, columns: list[str]) -> list[dict]:
    directory = os.path.join(run_dir, table)
    if not os.path.isdir(directory):
        return []
    files = sorted(f for f in os.listdir(directory) if f.endswith(".parquet"))
    rows: list[dict] = []
    for f in files:
        rows.extend(
            read_parquet(os.path.join(directory, f), columns=columns).to_pylist()
        )
    return rows


def _known(value) -> bool:
    return value is not None and value != ""


def k_anonymity(persons: list[dict], k: int) -> dict:
    """Equivalence classes over the quasi-identifiers; who sits in classes below k.

    Only persons with at least one quasi-identifier known are classed: a
    person of whom nothing is known (every note of a text-only input) is
    counted in ``persons_without_quasi_identifiers``, not put in one big
    "unknown" class that would read like a pass. When no person has any,
    the check is not made (``checked`` false, the class figures null).
    """
    with_qi = [p for p in persons if any(_known(p.get(q)) for q in QUASI_IDENTIFIERS)]
    result = {
        "k": k,
        "quasi_identifiers": list(QUASI_IDENTIFIERS),
        "checked": bool(with_qi),
        "persons_with_quasi_identifiers": len(with_qi),
        "persons_without_quasi_identifiers": len(persons) - len(with_qi),
        "known": {
            q: sum(1 for p in persons if _known(p.get(q))) for q in QUASI_IDENTIFIERS
        },
    }
    if not with_qi:
        return {
            **result,
            "equivalence_classes": None,
            "smallest_class": None,
            "persons_in_classes_below_k": None,
            "classes_below_k": None,
        }
    classes = Counter(tuple(p.get(q) for q in QUASI_IDENTIFIERS) for p in with_qi)
    small = {c: n for c, n in classes.items() if n < k}
    return {
        **result,
        "equivalence_classes": len(classes),
        "smallest_class": min(classes.values()),
        "persons_in_classes_below_k": sum(small.values()),
        "classes_below_k": len(small),
    }


def build_report(run_dir: str, k: int = 5) -> dict:
    """The privacy report of one run as a plain dict (no PHI in it)."""
    with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as fh:
        summary = json.load(fh)
    persons = _rows(
        run_dir, "persons", ["person_id", "n_documents", *QUASI_IDENTIFIERS]
    )
    docs_per_person = [p["n_documents"] for p in persons]
    return {
        "records": {
            k_: summary.get(k_)
            for k_ in ("records_read", "records_written", "records_quarantined")
        },
        "quarantined_by_stage": summary.get("quarantined_by_stage", {}),
        "spans_by_label": summary.get("spans_by_label", {}),
        "persons": len(persons),
        "documents_per_person": {
            "min": min(docs_per_person, default=0),
            "median": statistics.median(docs_per_person) if docs_per_person else 0,
            "max": max(docs_per_person, default=0),
        },
        "k_anonymity": k_anonymity(persons, k),
    }


def print_report(report: dict, out=None) -> None:
    """Human-readable report (on ``out``, by default the current stdout)."""
    out = out if out is not None else sys.stdout
    rec = report["records"]
    print(
        f"records: {rec['records_read']} read, {rec['records_written']} written, "
        f"{rec['records_quarantined']} quarantined",
        file=out,
    )
    for stage, n in sorted(report["quarantined_by_stage"].items()):
        print(f"  quarantined at {stage}: {n}", file=out)
    print("PHI spans by label:", file=out)
    for label, n in sorted(report["spans_by_label"].items(), key=lambda kv: -kv[1]):
        print(f"  {label:<14} {n:>8}", file=out)
    dpp = report["documents_per_person"]
    print(
        f"persons: {report['persons']} (documents per person: min {dpp['min']}, "
        f"median {dpp['median']}, max {dpp['max']})",
        file=out,
    )
    ka = report["k_anonymity"]
    head = f"k-anonymity over {', '.join(ka['quasi_identifiers'])} (k={ka['k']}): "
    if not ka["checked"]:
        print(
            f"{head}not checked: no quasi-identifier was known for any of the "
            f"{report['persons']} persons (no birth year, sex or ZIP3; text-only "
            "inputs have none)",
            file=out,
        )
        return
    without = ka["persons_without_quasi_identifiers"]
    known = ", ".join(f"{q} {n}" for q, n in ka["known"].items())
    print(
        f"{head}{ka['equivalence_classes']} classes of the "
        f"{ka['persons_with_quasi_identifiers']} persons with a quasi-identifier "
        f"known ({known}), smallest {ka['smallest_class']}, "
        f"{ka['persons_in_classes_below_k']} persons in {ka['classes_below_k']} "
        f"classes smaller than k"
        + (f"; {without} persons with none known, not classed" if without else ""),
        file=out,
    )


def run_report(args: argparse.Namespace) -> int:
    """``report`` subcommand."""
    if not os.path.exists(os.path.join(args.run, "run.json")):
        print(
            f"deid-pipeline report: error: {args.run!r} has no run.json "
            "(not a finished run directory)",
            file=sys.stderr,
        )
        return 2
    report = build_report(args.run, args.k)
    if args.json:
        # Counts only, but of a protected run: owner-only like the review page.
        write_protected(args.json, json.dumps(report, indent=2, sort_keys=True))
    print_report(report)
    if args.html:
        from deid_pipeline.outputs.review import DEFAULT_LIMIT, write_html

        total = write_html(args.run, args.html, limit=DEFAULT_LIMIT)
        print(
            f"review page: {args.html} ({total} documents, the "
            f"{min(total, DEFAULT_LIMIT)} least confident shown). PROTECTED: it "
            "shows original PHI; keep it with the identifier view.",
            file=sys.stderr,
        )
    return 0


def add_subcommand(subparsers) -> None:
    """Register ``report`` on the main CLI."""
    parser = subparsers.add_parser(
        "report",
        help="privacy report of a finished run (counts, persons, k-anonymity)",
        description="Summarise a run: PHI per label, persons, documents per person, "
        "a k-anonymity check of the persons' quasi-identifiers.",
    )
    parser.add_argument(
        "--run", required=True, metavar="DIR", help="output DIR of a run"
    )
    parser.add_argument(
        "-k", type=int, default=5, help="k for the k-anonymity check (default: 5)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    parser.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write the review queue: a self-contained HTML page of the least "
        "confident documents with their replacements highlighted (PROTECTED: it "
        "shows original PHI from identifiers/)",
    )
    parser.set_defaults(func=run_report)
