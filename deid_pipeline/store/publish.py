"""Staging and publishing a run's output: all of the new extract or none of it.

A run writes into ``OUTPUT/.staging-<id>/`` and, once the pipeline succeeded
and the run's checks passed, puts the tables (and the HL7 files) in place of
the previous ones with ``run.json`` written last: without run.json a directory
is not a finished run, and run.json's file lists are the manifest a reader of
an object store reads.

Locally the publish is a transaction: every step is a rename whose inverse is
kept (the previous tables, run.json and HL7 files wait inside staging), and
an interrupt or error before run.json is written puts all of them back, so the
previous extract stays byte-identical. Interrupts are deferred while it runs
(``deid_pipeline.runtime.interrupts.deferred``) and looked at once, just before the
commit. On an object store a rename is a copy: there the publish, once
begun, finishes, and a signal is acted on after it.
"""

from __future__ import annotations

import json
import logging
import uuid

from apache_beam.io.filesystems import FileSystems

from deid_pipeline.outputs.protected import protected_names
from deid_pipeline.runtime import interrupts
from deid_pipeline.schemas import TABLES
from deid_pipeline.store.files import (
    delete_files,
    delete_tree,
    is_local,
    make_directory,
    make_protected_directory,
    match_files,
    move,
    move_files,
    owner_only,
    read_bytes,
    write_atomically,
    write_bytes,
)
from deid_pipeline.store.tables import write_empty_table

log = logging.getLogger(__name__)

__all__ = [
    "StagingError",
    "discard",
    "new_staging_dir",
    "json_bytes",
    "protect_staging",
    "publish",
    "staged_tables",
]

# Every staging directory holds this file from its start: a prefix an object
# store lists, and a first write that proves the output is usable. Not empty:
# Beam's S3 file system cannot write an empty object (a multipart upload of
# no parts, which S3 refuses).
_STAGING_MARK = "_started"
# Output folders beside TABLES that hold folders of tables (run --table's
# research tables, tables/<name>/); published whole, locally only.
EXTRA_FOLDERS = ("tables",)
_STAGING_MARK_TEXT = b"deid-pipeline run staging; deleted when the run ends\n"


class StagingError(Exception):
    """The output directory cannot be used (no staging directory there)."""


def _stale_staging(output: str) -> set[str]:
    """Staging directories left under ``output`` by runs that died."""
    (match,) = FileSystems.match([FileSystems.join(output, ".staging-*", "**")])
    stale = set()
    for m in match.metadata_list:
        rest = m.path[len(output) :].lstrip("/")
        stale.add(FileSystems.join(output, rest.split("/", 1)[0]))
    return stale


def new_staging_dir(output: str) -> str:
    """A fresh staging directory inside ``output``; stale ones of killed runs go.

    One run per output directory at a time: a staging directory left behind
    can only be from a run that died before publishing.
    """
    staging = FileSystems.join(output, f".staging-{uuid.uuid4().hex[:12]}")
    try:
        for stale in sorted(_stale_staging(output)):
            delete_tree(stale)
        # Owner-only before anything is in it: spill and tables hold PHI.
        make_protected_directory(staging)
        write_bytes(FileSystems.join(staging, _STAGING_MARK), _STAGING_MARK_TEXT)
    except Exception as exc:  # noqa: BLE001 - any storage failure: cannot run
        raise StagingError(f"cannot use output directory {output!r}: {exc}") from exc
    return staging


def discard(staging: str) -> str | None:
    """Delete a failed run's staging directory; returns it if that failed.

    The run's own error is what the caller must see; a staging directory
    that could not be deleted holds protected data (spilled input), so the
    caller names it. The next run deletes it.
    """
    try:
        delete_tree(staging)
    except BaseException as exc:  # noqa: BLE001 - even a second Ctrl-C
        log.warning("could not delete staging %s: %s", staging, type(exc).__name__)
        return staging
    return None


def protect_staging(staging: str, mode: str) -> None:
    """Make the protected outputs in ``staging`` owner-only (local only).

    Beam's workers and pyarrow wrote them with the umask's modes inside the
    0700 staging directory; this runs before anything leaves it (and for a
    refused run, whose staging stays until the next run). Idempotent.
    """
    for name in sorted(protected_names(mode)):
        owner_only(FileSystems.join(staging, name))


def staged_tables(staging: str) -> dict[str, list[str]]:
    """Each table's staged files (one listing); an empty table gets one empty file.

    A table with no rows produces no shard; it is still published, as one
    empty file with the table's schema, so readers need no special case.
    """
    staged: dict[str, list[str]] = {table: [] for table in TABLES}
    for path in match_files(FileSystems.join(staging, "*", "*.parquet")):
        table = FileSystems.split(FileSystems.split(path)[0])[1]
        if table in staged:
            staged[table].append(path)
    for table, paths in staged.items():
        if not paths:
            paths.append(write_empty_table(staging, table))
    return staged


def _previous_hl7_files(run_json: str) -> list[str]:
    """The HL7 files the previous run.json lists (paths that still exist)."""
    if not FileSystems.exists(run_json):
        return []
    try:
        previous = json.loads(read_bytes(run_json)).get("hl7_output") or {}
    except ValueError:
        return []
    directory, names = previous.get("directory"), previous.get("files") or []
    if not directory or not names:
        return []
    paths = [FileSystems.join(directory, n) for n in names]
    return [p for p in paths if FileSystems.exists(p)]


def _names(paths: list[str]) -> list[str]:
    return sorted(FileSystems.split(p)[1] for p in paths)


class _Undo:
    """The renames done so far, undone in reverse order."""

    def __init__(self) -> None:
        self._steps: list[tuple[list[str], list[str]]] = []

    def move(self, sources: list[str], targets: list[str]) -> None:
        move(sources, targets)
        self._steps.append((sources, targets))

    def undo(self) -> None:
        for sources, targets in reversed(self._steps):
            move(targets, sources)


def publish(
    staged: dict[str, list[str]],
    staging: str,
    output: str,
    hl7_target: str | None,
    summary: dict,
) -> dict:
    """Put the staged tables, HL7 files and ``summary`` in place of the previous run.

    Fills ``summary["files"]`` (and the HL7 file list), writes run.json last,
    and deletes what the previous run had that this one replaced, including
    HL7 files it listed that this run did not write. Returns ``summary``.
    """
    with interrupts.deferred():
        interrupts.raise_if_received()
        if is_local(output):
            _publish_local(staged, staging, output, hl7_target, summary)
        else:
            _publish_remote(staged, staging, output, hl7_target, summary)
    return summary


def _publish_local(staged, staging, output, hl7_target, summary) -> None:
    run_json = FileSystems.join(output, "run.json")
    old_hl7 = _previous_hl7_files(run_json)
    mode = summary["options"].get("mode", "surrogate")
    protect_staging(staging, mode)
    undo = _Undo()
    try:
        if FileSystems.exists(run_json):
            undo.move([run_json], [FileSystems.join(staging, ".old-run.json")])
        for table in TABLES:
            target = FileSystems.join(output, table)
            if FileSystems.exists(target):
                undo.move([target], [FileSystems.join(staging, f".old-{table}")])
            undo.move([FileSystems.join(staging, table)], [target])
        for folder in EXTRA_FOLDERS:
            # Folders of tables only some runs write (run --table): this
            # run's, or none; never a previous run's left beside new tables.
            target = FileSystems.join(output, folder)
            if FileSystems.exists(target):
                undo.move([target], [FileSystems.join(staging, f".old-{folder}")])
            if FileSystems.exists(FileSystems.join(staging, folder)):
                undo.move([FileSystems.join(staging, folder)], [target])
        if old_hl7:
            trash = FileSystems.join(staging, ".old-hl7")
            FileSystems.mkdirs(trash)
            undo.move(old_hl7, [FileSystems.join(trash, f"{i:06d}")
                                for i in range(len(old_hl7))])
        summary["files"] = {t: _names(staged[t]) for t in TABLES}
        for folder in EXTRA_FOLDERS:
            found = match_files(FileSystems.join(output, folder, "*", "*.parquet"))
            if found:
                summary["files"][folder] = sorted(
                    p[len(FileSystems.join(output, folder)) + 1:] for p in found)
        if hl7_target:
            new = match_files(FileSystems.join(staging, "hl7", "*"))
            if new:
                if "hl7" in protected_names(mode):
                    make_protected_directory(hl7_target)
                else:
                    make_directory(hl7_target)
                undo.move(new, [FileSystems.join(hl7_target, n) for n in _names(new)])
            summary["hl7_output"]["files"] = _names(new)
        # The commit point: until run.json is written, everything goes back.
        interrupts.raise_if_received()
        write_atomically(run_json, json_bytes(summary))
    except BaseException:
        undo.undo()
        raise


def _publish_remote(staged, staging, output, hl7_target, summary) -> None:
    """Move the new files in, then delete the old ones no longer listed.

    A table directory can hold files of two runs for a moment; a reader
    reads only those run.json lists.
    """
    run_json = FileSystems.join(output, "run.json")
    old_hl7 = _previous_hl7_files(run_json)
    delete_files([run_json] if FileSystems.exists(run_json) else [])
    old = [
        path
        for path in match_files(FileSystems.join(output, "*", "*"))
        if FileSystems.split(FileSystems.split(path)[0])[1] in TABLES
    ]
    sources = [path for table in TABLES for path in staged[table]]
    targets = [
        FileSystems.join(output, table, FileSystems.split(path)[1])
        for table in TABLES
        for path in staged[table]
    ]
    move(sources, targets)
    delete_files(sorted(set(old) - set(targets)))
    summary["files"] = {t: _names(staged[t]) for t in TABLES}
    new_hl7: list[str] = []
    if hl7_target:
        names = move_files(FileSystems.join(staging, "hl7"), hl7_target)
        new_hl7 = [FileSystems.join(hl7_target, n) for n in names]
        summary["hl7_output"]["files"] = sorted(names)
    delete_files(sorted(set(old_hl7) - set(new_hl7)))
    write_atomically(run_json, json_bytes(summary))


def json_bytes(payload: dict) -> bytes:
    """run.json's bytes: sorted keys, indented, one trailing newline."""
    return (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode("utf-8")
