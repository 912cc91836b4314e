"""The auditor's scan of a de-identified research extract's tables (counts only).

``python -m deid_pipeline.evaluation.table_audit EXPORT OUTPUT [OUTPUT2]``
reads the original export (``generate --kind tables``: patients, encounters,
notes with their policies) and a ``run --table`` output of it, and prints a
JSON summary of counts (never a value), as ``../shared/tools/hl7_audit.py``
does for HL7:

- ``joins``: person ids and encounter pseudonyms of notes and encounters
  that match no row of the table they refer to (0 when they all join), ids
  whose pseudonym is shared by two originals (collisions), and notes whose
  text names their encounter by the column's pseudonym;
- ``intervals``: persons whose dates (column and text, from the protected
  identifier view) do not all move by one offset (0: every interval kept);
- ``leaks``: a person's original names, ids, birth date or ZIP code found
  in their own research rows and text (``person_values``), a row's own
  original dates (ISO, ``M/D/YYYY``, ``MM/DD/YYYY``; a note's and its
  encounter's) in it (``row_dates``), and any original id anywhere in the
  research tables (``ids_anywhere``);
- with ``OUTPUT2`` (the same export, or a later night, run with the same
  key): ``identical_files`` / ``different_files`` of the research and
  identifier tables, and ``pseudonyms_changed``: originals whose pseudonym
  differs between the two runs (0: nights agree).

Rows are aligned by order, so the export must have been run without
quarantined rows (``run.json`` says so; the audit checks it).
"""

from __future__ import annotations

import csv
import datetime
import filecmp
import glob
import json
import os
import re
import sys
from collections import defaultdict

from deid_pipeline.parquet_files import read_parquet
from deid_pipeline.surrogates.dates import parse_date

__all__ = ["audit", "main"]

_TABLES = ("patients", "encounters", "notes")
_ID_COLUMNS = {"patients": ("patient_id",),
               "encounters": ("encounter_id", "patient_id"),
               "notes": ("note_id", "patient_id", "encounter_id", "author_id")}
_DATE_COLUMNS = ("birth_date", "admit_date", "discharge_date", "note_date")


def _read_csv(path: str) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _research(output: str, table: str) -> list[dict]:
    files = sorted(glob.glob(os.path.join(output, "tables", table, "*.parquet")))
    return [r for f in files for r in read_parquet(f).to_pylist()]


def _identifiers(output: str) -> list[dict]:
    files = sorted(glob.glob(os.path.join(output, "identifiers", "*.parquet")))
    return [r for f in files for r in read_parquet(f).to_pylist()]


def _date_forms(iso: str) -> list[str]:
    day = datetime.date.fromisoformat(iso)
    return [iso, f"{day.month}/{day.day}/{day.year}",
            f"{day.month:02d}/{day.day:02d}/{day.year}"]


def _joins(out: dict[str, list[dict]]) -> dict[str, int]:
    persons = {r["person_id"] for r in out["patients"]}
    encounters = {r["encounter_id"] for r in out["encounters"]}
    return {
        "encounter_persons_unjoined": sum(r["person_id"] not in persons
                                          for r in out["encounters"]),
        "note_persons_unjoined": sum(r["person_id"] not in persons
                                     for r in out["notes"]),
        "note_encounters_unjoined": sum(r["encounter_id"] not in encounters
                                        for r in out["notes"]),
        # Notes whose text names their encounter by its column pseudonym.
        "notes_text_naming_encounter_pseudonym": sum(
            bool(r["text"]) and r["encounter_id"] in r["text"] for r in out["notes"]),
    }


def _mapping(identifiers: list[dict]) -> dict[tuple[str, str, str], set[str]]:
    """(column, person id, original) -> its replacements, from the column rows.

    Per person: a date moves by its person's shift, the same date of two
    persons has two replacements.
    """
    found: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in identifiers:
        if r["source"].startswith("column:"):
            found[r["source"][7:], r["person_id"], r["original"]].add(
                r["replacement"])
    return found


def _collisions(mapping: dict[tuple[str, str, str], set[str]]) -> int:
    """Pseudonyms (``*_id`` columns) that stand for two originals."""
    by_fake: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (column, _person, original), fakes in mapping.items():
        if column.endswith("_id"):
            for fake in fakes:
                by_fake[column, fake].add(original)
    return sum(len(o) > 1 for o in by_fake.values())


def _offsets(identifiers: list[dict]) -> tuple[int, int]:
    """(persons whose dates move by more than one offset, dates compared)."""
    offsets: dict[str, set[int]] = defaultdict(set)
    compared = 0
    for r in identifiers:
        if r["label"] != "DATE" or not r["person_id"]:
            continue
        if r["source"].startswith("column:"):
            try:
                a = datetime.date.fromisoformat(r["original"][:10])
                b = datetime.date.fromisoformat(r["replacement"][:10])
            except ValueError:
                continue
        else:
            pa, pb = parse_date(r["original"]), parse_date(r["replacement"])
            if pa is None or pb is None or None in (pa.year, pa.month, pa.day,
                                                    pb.year, pb.month, pb.day):
                continue
            a = datetime.date(pa.year, pa.month, pa.day)
            b = datetime.date(pb.year, pb.month, pb.day)
        offsets[r["person_id"]].add((b - a).days)
        compared += 1
    return sum(len(v) > 1 for v in offsets.values()), compared


def _leaks(export: dict[str, list[dict]], out: dict[str, list[dict]]) -> dict:
    """Original values found in research rows (see the module's doc).

    Names, ids, ZIP codes and birth dates are the person's wherever they
    stand; other dates are the row's own (and, for a note, its encounter's):
    a shifted date may equal another date of the same person by chance.
    """
    person: dict[str, set[str]] = defaultdict(set)  # patient_id -> values
    ids: set[str] = set()
    encounters = {r["encounter_id"]: r for r in export["encounters"]}
    for table in _TABLES:
        for row in export[table]:
            mine = person[row["patient_id"]]
            for column in _ID_COLUMNS[table]:
                mine.add(row[column])
                ids.add(row[column])
            for column in ("first_name", "last_name", "zip"):
                if row.get(column):
                    mine.add(row[column])
            if row.get("birth_date"):
                mine.update(_date_forms(row["birth_date"]))
    counts = {"person_values": 0, "row_dates": 0, "ids_anywhere": 0,
              "cells_scanned": 0}
    id_pattern = re.compile("|".join(sorted(map(re.escape, ids), key=len,
                                            reverse=True))) if ids else None
    for table in _TABLES:
        for row_in, row_out in zip(export[table], out[table], strict=True):
            dated = [row_in, encounters.get(row_in.get("encounter_id"), {})]
            dates = {f for r in dated for c in _DATE_COLUMNS[1:] if r.get(c)
                     for f in _date_forms(r[c])}
            for value in row_out.values():
                if value is None:
                    continue
                cell = value.isoformat() if hasattr(value, "isoformat") else str(value)
                counts["cells_scanned"] += 1
                if id_pattern is not None:
                    counts["ids_anywhere"] += len(id_pattern.findall(cell))
                words = ({cell} if len(cell) <= 20
                         else set(re.findall(r"[\w/-]+", cell.lower())))
                lowered = {w.lower() for w in words}
                counts["person_values"] += sum(v.lower() in lowered
                                               for v in person[row_in["patient_id"]])
                counts["row_dates"] += sum(d in lowered for d in dates)
    return counts


def _compare(first: str, second: str) -> dict:
    same = different = 0
    for folder in ("tables/*", "identifiers", "persons"):
        for a in sorted(glob.glob(os.path.join(first, folder, "*.parquet"))):
            b = os.path.join(second, os.path.relpath(a, first))
            if os.path.exists(b) and filecmp.cmp(a, b, shallow=False):
                same += 1
            else:
                different += 1
    ma, mb = _mapping(_identifiers(first)), _mapping(_identifiers(second))
    changed = sum(ma[k] != mb[k] for k in ma.keys() & mb.keys())
    return {"identical_files": same, "different_files": different,
            "pseudonyms_compared": len(ma.keys() & mb.keys()),
            "pseudonyms_changed": changed}


def audit(export_dir: str, output: str, second: str | None = None) -> dict:
    """The audit's counts (see the module's doc); never a value."""
    run = json.load(open(os.path.join(output, "run.json"), encoding="utf-8"))
    export = {t: _read_csv(os.path.join(export_dir, f"{t}.csv")) for t in _TABLES}
    out = {t: _research(output, t) for t in _TABLES}
    identifiers = _identifiers(output)
    bad_intervals, compared = _offsets(identifiers)
    summary = {
        "rows": {t: [len(export[t]), len(out[t])] for t in _TABLES},
        "quarantined": run["records_quarantined"],
        "persons": len({r["person_id"] for r in out["patients"]}),
        "joins": {**_joins(out), "pseudonym_collisions": _collisions(
            _mapping(identifiers))},
        "intervals": {"persons_with_two_offsets": bad_intervals,
                      "dates_compared": compared},
        "leaks": (_leaks(export, out) if not run["records_quarantined"]
                  else "not scanned: rows quarantined"),
    }
    if second:
        summary["second_run"] = _compare(output, second)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Print the audit's JSON summary; exit 0 always (the counts are the result)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: python -m deid_pipeline.evaluation.table_audit EXPORT OUTPUT "
              "[OUTPUT2]", file=sys.stderr)
        return 2
    print(json.dumps(audit(*args), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
