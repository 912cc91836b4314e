"""``run --incremental``: one partition per run, an input manifest, a lock.

Layout under the output directory ``DIR``::

    DIR/_lock                          held while a run or compact works
    DIR/runs/<ts>.json                 the run summary: its commit point
    DIR/<table>/run=<ts>/*.parquet     documents, identifiers, persons, quarantine
    DIR/inputs/<ts>.json               PROTECTED manifest: the files that run read
    DIR/.staging-*/                    a run in progress (ignored by readers)

Protected folders (identifiers, quarantine, links, inputs; documents too in
``--mode tag``: ``outputs.protected.protected_names``) are owner-only, their
files 0600, each partition tightened in staging before it is moved in.

A run writes everything into its staging directory, then writes
``runs/<ts>.json`` (the commit), then moves each staged table into its
partition and its manifest into ``inputs/``. A run killed before the commit
leaves only staging, deleted by the next run, which reads those files again
(no manifest entry names them). A run killed after the commit is finished by
the next run (roll forward): the staging directory ``runs/<ts>.json`` names
still holds what was not moved. Earlier partitions are never rewritten.

Which rows are current: the manifest maps each input path to the run and the
file index (``part-FFFFF-*`` of the documents and identifiers partitions) of
its newest reading; ``current_files`` selects exactly those files, and
``deid-pipeline compact`` copies them to ``DIR/current/``.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.linking.graph import PriorPerson
from deid_pipeline.outputs.protected import protected_names
from deid_pipeline.store.files import (
    FileSystemFlags,
    delete_tree,
    is_local,
    make_directory,
    make_protected_directory,
    match_files,
    move,
    owner_only,
    read_bytes,
    write_atomically,
    write_bytes,
)
from deid_pipeline.store.publish import protect_staging

TABLES = ("documents", "identifiers", "persons", "quarantine")
# Also partitioned per run, besides the tables every run writes: the person
# merges (ids only) and the PROTECTED link history (identifier values).
PERSON_MERGES = "person_merges"
LINKS = "links"
HISTORY_FILE = "history.jsonl.gz"
PARTITIONED = TABLES + (PERSON_MERGES, LINKS)
# The folder of run --table's research tables, one partitioned folder each.
TABLE_FOLDERS = "tables"
RUNS = "runs"
INPUTS = "inputs"
CURRENT = "current"
LOCK = "_lock"
COMMIT_STAGING = "staging"
# Per-chunk table files: part-<file index>-<chunk index>.parquet.
_CHUNK_FILE = re.compile(r"part-(\d{5})-(\d{5})\.parquet$")
_TS = re.compile(r"^\d{8}T\d{12}Z$")
_HASH_BLOCK = 1 << 20


class IncrementalError(Exception):
    """The incremental output cannot be used (locked, mixed layouts)."""


def run_timestamp(after: str | None = None) -> str:
    """A UTC timestamp naming a run, strictly after ``after`` (the newest run).

    Microseconds, so two runs in one second differ; sorted as text they are in
    time order, and a clock set back still yields a later name.
    """
    now = datetime.datetime.now(datetime.UTC)
    ts = now.strftime("%Y%m%dT%H%M%S%fZ")
    if after and ts <= after:
        last = datetime.datetime.strptime(after, "%Y%m%dT%H%M%S%fZ")
        ts = (last + datetime.timedelta(microseconds=1)).strftime("%Y%m%dT%H%M%S%fZ")
    return ts


def committed_runs(output: str) -> list[str]:
    """Timestamps of the runs whose ``runs/<ts>.json`` exists, oldest first."""
    names = [
        FileSystems.split(p)[1].removesuffix(".json")
        for p in match_files(FileSystems.join(output, RUNS, "*.json"))
    ]
    return sorted(n for n in names if _TS.match(n))


class OutputLock:
    """One run (or compact) per output directory at a time.

    Locally an ``flock`` on ``DIR/_lock``: the kernel releases it when the
    holder dies, so a killed run never blocks the next. An object store has
    no lock primitive: ``_lock`` is an object whose presence refuses other
    runs; a run killed there leaves it, and the error says to delete it.
    """

    def __init__(self, output: str) -> None:
        self._output = output
        self._path = FileSystems.join(output, LOCK)
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        if is_local(self._output):
            self._lock_local()
        else:
            self._lock_object()
        return self

    def _lock_local(self) -> None:
        """Local-only: ``flock`` exists only on a local file system."""
        import fcntl

        os.makedirs(self._output, exist_ok=True)
        fd = os.open(self._path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IncrementalError(
                f"another run holds the lock on {self._output!r} "
                "(concurrent runs on one output are refused)"
            ) from None
        self._fd = fd

    def _lock_object(self) -> None:
        if FileSystems.exists(self._path):
            raise IncrementalError(
                f"{self._path!r} exists: another run is working on this output, "
                "or one was killed (delete it if no run is running)"
            )
        write_atomically(self._path, b"deid-pipeline run lock\n")

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            self._unlock_local()
        elif FileSystems.exists(self._path):
            FileSystems.delete([self._path])

    def _unlock_local(self) -> None:
        """Local-only: releases the ``flock`` of ``_lock_local``."""
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def check_layout(output: str, incremental: bool) -> None:
    """Refuse to mix layouts: either would destroy or hide the other's tables.

    A plain run swaps ``DIR/documents`` whole (every partition would go); an
    incremental run beside a plain one would leave files no partition names.
    """
    has_runs = bool(match_files(FileSystems.join(output, RUNS, "*.json")))
    has_plain = FileSystems.exists(FileSystems.join(output, "run.json"))
    if incremental and has_plain:
        raise IncrementalError(
            f"{output!r} holds a run without --incremental (run.json); "
            "use a new output directory"
        )
    if not incremental and has_runs:
        raise IncrementalError(
            f"{output!r} holds --incremental runs (runs/); add --incremental"
        )


# --- the input manifest -------------------------------------------------------


def file_hash(path: str) -> str:
    """SHA-256 of the file's bytes as stored (read in blocks: bounded memory)."""
    digest = hashlib.sha256()
    with FileSystems.open(
        path, compression_type=CompressionTypes.UNCOMPRESSED
    ) as channel:
        while block := channel.read(_HASH_BLOCK):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def load_manifest(output: str, runs: list[str]) -> dict[str, dict]:
    """Path -> its newest entry over the committed runs' manifests."""
    current: dict[str, dict] = {}
    for ts in runs:
        path = FileSystems.join(output, INPUTS, f"{ts}.json")
        if not FileSystems.exists(path):
            continue  # a run with no input, or one rolled forward below
        for entry in json.loads(read_bytes(path))["files"]:
            current[entry["path"]] = entry
    return current


def plan_inputs(
    patterns: list[str], manifest: dict[str, dict], run: str
) -> tuple[list[str], list[dict], dict[str, int]]:
    """What this run reads: (paths in file-index order, manifest entries, counts).

    Unchanged files (same size and modification time, or else the same
    content hash) are skipped and keep their entry (its run and file index
    point at the rows already written); new and changed files are read, and
    their entries point at this run. Hashing costs a read of the new files
    only: the archive already seen is matched by its listing.
    """
    matched = {}
    for match in FileSystems.match(list(patterns)):
        for m in match.metadata_list:
            if not m.path.endswith(("/", "\\")):
                matched[m.path] = m
    counts = {"files_matched": len(matched), "unchanged": 0, "new": 0, "changed": 0}
    kept, to_read = [], []
    for path in sorted(matched):
        meta = matched[path]
        size, mtime = meta.size_in_bytes, meta.last_updated_in_seconds
        old = manifest.get(path)
        if old and old["size"] == size and old["mtime"] == mtime:
            kept.append(old)
            counts["unchanged"] += 1
            continue
        digest = file_hash(path)
        entry = {"path": path, "size": size, "mtime": mtime, "sha256": digest}
        if old and old["sha256"] == digest:
            kept.append({**old, **entry})
            counts["unchanged"] += 1
            continue
        counts["changed" if old else "new"] += 1
        to_read.append(entry)
    for index, entry in enumerate(to_read):
        entry.update(run=run, file_index=index)
    return [e["path"] for e in to_read], kept + to_read, counts


def literal_pattern(path: str) -> str:
    """A glob that matches exactly ``path`` (its wildcard characters escaped)."""
    return re.sub(r"([*?[])", r"[\1]", path)


# --- persons across runs: the protected link history -------------------------


@dataclass(frozen=True)
class LinkHistory:
    """Where the link stage reads earlier persons and writes this run's.

    ``prior_paths``: the history files of the committed runs; ``output_path``
    and ``merges_path``: this run's, inside its staging directory.
    """

    prior_paths: tuple[str, ...]
    output_path: str
    merges_path: str
    filesystem_flags: FileSystemFlags = None


def link_history(output: str, runs: list[str], staging: str, flags) -> LinkHistory:
    """The history of ``runs`` under ``output``, and this run's files in staging."""
    prior = tuple(
        path
        for run in runs
        for path in match_files(
            FileSystems.join(output, LINKS, f"run={run}", HISTORY_FILE)
        )
    )
    return LinkHistory(
        prior,
        FileSystems.join(staging, LINKS, HISTORY_FILE),
        FileSystems.join(staging, PERSON_MERGES, "part-00000-of-00001.parquet"),
        flags,
    )


def write_history(path: str, persons: list[PriorPerson]) -> None:
    """One JSON line per person: its key and identifiers (PHI: protected)."""
    lines = "".join(
        json.dumps([p.person_key, [list(i) for i in p.identifiers]]) + "\n"
        for p in persons
    )
    write_bytes(path, gzip.compress(lines.encode("utf-8"), mtime=0))


def read_history(path: str) -> list[PriorPerson]:
    """The persons ``write_history`` wrote."""
    text = gzip.decompress(read_bytes(path)).decode("utf-8")
    return [
        PriorPerson(key, tuple(tuple(i) for i in ids))
        for key, ids in (json.loads(line) for line in text.splitlines() if line)
    ]


# --- publishing and recovery --------------------------------------------------


def staged_commit(staging: str, run: str, summary: dict, files: list[dict]) -> bytes:
    """Write the manifest into staging; returns the ``runs/<ts>.json`` bytes.

    The manifest names the run, so that a run killed after its commit is
    finished by the next one (``recover``); the summary names the staging
    directory for whoever reads it.
    """
    manifest = FileSystems.join(staging, f"_{INPUTS}.json")
    write_atomically(
        manifest,
        json.dumps({"run": run, "files": files}, indent=1, sort_keys=True).encode(),
    )
    # Everything staged is in place: the protected part owner-only (the
    # manifest names PHI files by path and hash).
    mode = summary.get("options", {}).get("mode", "surrogate")
    protect_staging(staging, mode)
    owner_only(manifest)
    hl7_directory = (summary.get("hl7_output") or {}).get("directory")
    if hl7_directory and "hl7" in protected_names(mode):
        make_protected_directory(hl7_directory)
    summary = {**summary, COMMIT_STAGING: FileSystems.split(staging)[1]}
    return (json.dumps(summary, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _move_tree(source: str, target: str) -> None:
    """Move a staged directory into place: one rename locally, per file elsewhere."""
    if is_local(source):
        if FileSystems.exists(source):
            make_directory(FileSystems.split(target)[0])
            FileSystems.rename([source], [target])
        return
    sources = match_files(FileSystems.join(source, "*"))
    move(sources, [FileSystems.join(target, FileSystems.split(p)[1]) for p in sources])


def finish_publish(output: str, staging: str, run: str) -> None:
    """Move a committed run's staged tables and manifest into place (idempotent).

    Each table directory becomes ``DIR/<table>/run=<ts>`` whole (locally one
    rename, so a reader never sees a partition partly there).
    """
    protected = protected_names(_run_mode(output, run))
    for table in PARTITIONED:
        source = FileSystems.join(staging, table)
        if table in protected:
            # Idempotent: also a staging directory a killed run left.
            owner_only(source)
            make_protected_directory(FileSystems.join(output, table))
        _move_tree(source, FileSystems.join(output, table, f"run={run}"))
    # run --table's research tables: tables/<name>/ -> tables/<name>/run=<ts>.
    for folder in sorted({FileSystems.split(p)[0] for p in match_files(
            FileSystems.join(staging, TABLE_FOLDERS, "*", "*.parquet"))}):
        name = FileSystems.split(folder)[1]
        _move_tree(folder, FileSystems.join(output, TABLE_FOLDERS, name,
                                            f"run={run}"))
    manifest = FileSystems.join(staging, f"_{INPUTS}.json")
    if FileSystems.exists(manifest):
        target = FileSystems.join(output, INPUTS, f"{run}.json")
        owner_only(manifest)
        make_protected_directory(FileSystems.split(target)[0])
        FileSystems.rename([manifest], [target])
    delete_tree(staging)


def _run_mode(output: str, run: str) -> str:
    """The ``--mode`` a committed run was made with (its ``runs/<ts>.json``)."""
    try:
        summary = json.loads(read_bytes(FileSystems.join(output, RUNS, f"{run}.json")))
    except Exception:  # noqa: BLE001 - unreadable: protect as if tag mode
        return "tag"
    return (summary.get("options") or {}).get("mode") or "surrogate"


def recover(output: str, runs: list[str]) -> list[str]:
    """Finish the publish of committed runs whose staging is still there.

    A staging directory holding a manifest names its run; if that run has
    its ``runs/<ts>.json`` it committed and is finished here (roll forward).
    Returns the runs finished. Other staging directories are of uncommitted
    runs, left for ``_new_staging_dir`` to delete. Costs one listing, not
    one per earlier run.
    """
    committed = set(runs)
    finished = []
    manifests = match_files(FileSystems.join(output, ".staging-*", f"_{INPUTS}.json"))
    for manifest in manifests:
        run = json.loads(read_bytes(manifest))["run"]
        if run in committed:
            finish_publish(output, FileSystems.split(manifest)[0], run)
            finished.append(run)
    return sorted(finished)


# --- which rows are current ---------------------------------------------------


def current_files(output: str) -> dict[str, list[str]]:
    """Per table, the partition files holding the current rows.

    documents and identifiers: the chunk files of each input path's newest
    reading (the manifest's run and file index), so a file read again
    supersedes all its earlier rows, including documents it no longer has.
    quarantine and persons: every partition (rows are filtered or kept by
    ``compact``).
    """
    manifest = load_manifest(output, committed_runs(output))
    wanted = {(e["run"], e["file_index"]) for e in manifest.values()}
    selected: dict[str, list[str]] = {}
    for table in TABLES:
        paths = match_files(FileSystems.join(output, table, "run=*", "*.parquet"))
        if table in ("documents", "identifiers"):
            paths = [p for p in paths if _chunk_of(p) in wanted]
        selected[table] = paths
    return selected


def _chunk_of(path: str) -> tuple[str, int] | None:
    """(run, file index) of a per-chunk partition file; None for other files."""
    directory, name = FileSystems.split(path)
    found = _CHUNK_FILE.match(name)
    run = FileSystems.split(directory)[1].removeprefix("run=")
    return (run, int(found.group(1))) if found else None


def current_origins(output: str) -> dict[str, str]:
    """Input path -> the run whose rows of it are current (for quarantine rows)."""
    manifest = load_manifest(output, committed_runs(output))
    return {path: e["run"] for path, e in manifest.items()}


# --- compact: the current rows as one table per kind --------------------------


def compact(output: str) -> dict[str, int]:
    """Write ``DIR/current/<table>/run=<ts>/`` holding only the current rows.

    documents and identifiers: the current partition files, copied (rows
    unchanged, the ``run`` column kept by the path); quarantine: the rows of
    each input file's current run (and rows of no manifest file, such as a
    broken link). Persons stay per run (``n_documents`` counts that run's
    documents). The new tree replaces ``current/`` whole when local. Earlier
    partitions are not touched. Returns the files written per table.
    """
    import uuid

    from deid_pipeline.store.files import replace_directory

    if not committed_runs(output):
        raise IncrementalError(f"{output!r} holds no --incremental run")
    with OutputLock(output):
        recover(output, committed_runs(output))
        tmp = FileSystems.join(output, f".current-{uuid.uuid4().hex[:12]}")
        written = _write_current(output, tmp)
        target = FileSystems.join(output, CURRENT)
        if is_local(output):
            replace_directory(tmp, target, FileSystems.join(output, ".current-old"))
        else:
            delete_tree(target)
            sources = match_files(FileSystems.join(tmp, "**"))
            move(sources, [target + p[len(tmp) :] for p in sources])
            delete_tree(tmp)
    return written


def _write_current(output: str, tmp: str) -> dict[str, int]:
    """Copy or filter the current rows of each table into ``tmp``."""
    selected = current_files(output)
    modes = {_run_mode(output, run) for run in committed_runs(output)}
    protected = set().union(*(protected_names(m) for m in modes or {"surrogate"}))
    for table in ("documents", "identifiers", "quarantine"):
        if table in protected:  # owner-only before a file is copied in
            make_protected_directory(FileSystems.join(tmp, table))
    written = {}
    for table in ("documents", "identifiers"):
        sources = selected[table]
        targets = [tmp + p[len(output) :] for p in sources]
        for directory in sorted({FileSystems.split(t)[0] for t in targets}):
            make_directory(directory)
        if sources:
            FileSystems.copy(sources, targets)
        written[table] = len(sources)
    written["quarantine"] = _filter_quarantine(output, tmp, selected["quarantine"])
    for table in ("documents", "identifiers", "quarantine"):
        if table in protected:
            owner_only(FileSystems.join(tmp, table))
    return written


def _filter_quarantine(output: str, tmp: str, paths: list[str]) -> int:
    """Quarantine rows of superseded file readings left out; returns files written."""
    import pyarrow as pa

    from deid_pipeline.parquet_files import read_parquet
    from deid_pipeline.store.tables import SCHEMAS, write_table_file

    origins = current_origins(output)
    count = 0
    for path in paths:
        run = FileSystems.split(FileSystems.split(path)[0])[1].removeprefix("run=")
        with FileSystems.open(
            path, compression_type=CompressionTypes.UNCOMPRESSED
        ) as channel:
            rows = read_parquet(pa.BufferReader(channel.read())).to_pylist()
        kept = [r for r in rows if origins.get(r["origin"], run) == run]
        if kept:
            target = tmp + path[len(output) :]
            write_table_file(target, SCHEMAS["quarantine"], kept)
            count += 1
    return count
