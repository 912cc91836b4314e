"""``deid-pipeline run --table NAME=PATTERN --column-policy NAME=FILE``: tables.

A research extract's tables (notes, encounters, patients, ...) de-identified
column by column (``deid_pipeline/tables/``), their text columns with the
tagger, in one Beam job (``deid_pipeline/transforms/tables.py``), staged and
published as ``run`` publishes: nothing unless the whole job passed.

Everything a usage error can be is found before any work (exit 2): an option
pair missing, a policy that does not validate, a policy column the table
lacks, an undeclared column under ``undeclared: error``. Tables are read on
the driver (their header must be checked first; a table bounds its memory).
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from apache_beam.io.filesystems import FileSystems

from deid_pipeline.pipelines.job import (
    RunRejectedError,
    _check_outcome,
    _new_staging_dir,
    local_pipeline,
    run_night,
)
from deid_pipeline.pipelines.job_options import (
    _SECRET_OPTIONS,
    RunError,
    redact_beam_args,
)
from deid_pipeline.pipelines.worker_logs import quiet_workers
from deid_pipeline.runtime import interrupts
from deid_pipeline.runtime.process import collect_from_here
from deid_pipeline.store.files import (
    is_local,
    match_files,
    read_bytes,
)
from deid_pipeline.store.incremental import (
    IncrementalError,
    check_layout,
    load_manifest,
    plan_inputs,
    run_timestamp,
)
from deid_pipeline.store.publish import discard, protect_staging, publish, staged_tables
from deid_pipeline.store.tables import read_counts, write_table_file
from deid_pipeline.tables.policy import PolicyError, check_header, load_policy
from deid_pipeline.tables.read import TableRow, read_table
from deid_pipeline.tables.schema import table_schema
from deid_pipeline.transforms.read import (
    DEFAULT_MAX_FILE_BYTES,
    FileTooLargeError,
    decompress,
)
from deid_pipeline.transforms.tables import (
    DeidentifyTables,
    TableInput,
    table_path,
)
from deid_pipeline.transforms.write import WriteCounts

log = logging.getLogger(__name__)

__all__ = ["load_tables", "pairs", "run_tables"]


def pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed or repeated name is an error."""
    found: dict[str, str] = {}
    for value in values or []:
        name, eq, rest = value.partition("=")
        name = name.strip()
        if not eq or not name or not rest:
            raise RunError(f"{option} {value!r}: expected NAME=VALUE")
        if not name.replace("_", "").replace("-", "").isalnum():
            raise RunError(f"{option} {value!r}: a table name is letters, digits, "
                           "'_' and '-'")
        if name in found:
            raise RunError(f"{option}: table {name!r} named twice")
        found[name] = rest
    return found


def load_tables(tables: dict[str, str], policies: dict[str, str],
                only: set[str] | None = None,
                max_bytes: int = DEFAULT_MAX_FILE_BYTES,
                ) -> tuple[dict[str, TableInput], list[TableRow], dict[str, dict]]:
    """Read and check every table: (inputs, rows, per-table facts for run.json).

    ``only`` (``--incremental``): the files to read; a table none of whose
    files is among them is left out of the run. ``.gz``/``.bz2`` files are
    decompressed; a file over ``max_bytes`` (``--max-file-bytes``) is an error.
    """
    if set(tables) != set(policies):
        odd = sorted(set(tables) ^ set(policies))[0]
        raise RunError(f"table {odd!r}: every --table NAME needs a --column-policy "
                       "NAME (and the reverse)")
    inputs: dict[str, TableInput] = {}
    rows: list[TableRow] = []
    facts: dict[str, dict] = {}
    for name in sorted(tables):
        try:
            policy = load_policy(policies[name])
        except PolicyError as exc:
            raise RunError(str(exc)) from exc
        paths = match_files(tables[name])
        if not paths:
            raise RunError(f"--table {name}: {tables[name]!r} matches no file")
        if only is not None:
            paths = [p for p in paths if p in only]
            if not paths:
                continue
        header, types, table_rows, dropped = None, {}, [], []
        for path in paths:
            try:
                data = read_table(name, path,
                                  decompress(path, read_bytes(path), max_bytes))
                dropped = check_header(name, policy, data.header)
            except (PolicyError, ValueError, FileTooLargeError, OSError) as exc:
                raise RunError(str(exc)) from exc
            if header is not None and data.header != header:
                raise RunError(f"table {name}: its files do not have the same "
                               "columns")
            header, types = data.header, data.types
            base = len(table_rows)
            table_rows.extend(r._replace(index=base + r.index) for r in data.rows)
        inputs[name] = TableInput(name, ",".join(paths), policy,
                                  table_schema(policy, types))
        rows.extend(table_rows)
        facts[name] = {
            "files": len(paths),
            "rows_read": len(table_rows),
            "columns": {c: s.action.value for c, s in policy.columns.items()},
            # Declared drop, then undeclared (dropped by default).
            "dropped_columns": [c for c, s in policy.columns.items()
                                if s.action.value == "drop"] + dropped,
            "undeclared_columns": dropped,
        }
    return inputs, rows, facts


def _summary(job, facts: dict, counts: Counter, elapsed: float) -> dict:
    args = job.args
    stages: Counter = Counter()
    for name, fact in facts.items():
        fact["rows_written"] = counts[f"table:{name}", ""]
        by_stage = {v: n for (t, v), n in counts.items()
                    if t == f"table_quarantined:{name}"}
        fact["rows_quarantined"] = sum(by_stage.values())
        fact["quarantined_by_stage"] = dict(sorted(by_stage.items()))
        fact["accounted"] = fact["rows_read"] == (fact["rows_written"]
                                                  + fact["rows_quarantined"])
        stages.update(by_stage)
    read = sum(f["rows_read"] for f in facts.values())
    written = sum(f["rows_written"] for f in facts.values())
    quarantined = sum(f["rows_quarantined"] for f in facts.values())
    return {
        "records_read": read,
        "records_written": written,
        "records_quarantined": quarantined,
        "accounted": all(f["accounted"] for f in facts.values()),
        "files_read": sum(f["files"] for f in facts.values()),
        "files_skipped": {},
        "persons": counts["persons", ""],
        "quarantined_by_stage": dict(sorted(stages.items())),
        "spans_by_label": dict(sorted((v, n) for (t, v), n in counts.items()
                                      if t == "identifiers" and v)),
        "tables": facts,
        "seconds": round(elapsed, 3),
        "documents_per_second": round(written / elapsed, 1) if elapsed else None,
        "options": {k: v for k, v in sorted(vars(args).items())
                    if k not in _SECRET_OPTIONS},
        "key": job.provenance["key"],
        "beam_options": redact_beam_args(job.beam_args),
        "versions": job.provenance["versions"],
        "pipeline_version": job.provenance["pipeline_version"],
    }


def _check(job) -> None:
    args = job.args
    if args.input:
        raise RunError("--table cannot be combined with --input (one run reads "
                       "tables or documents)")
    if args.mode == "tag":
        raise RunError("--table needs --mode surrogate or redact (tag mode keeps "
                       "PHI in the text)")
    if args.hl7_output:
        raise RunError("--hl7-output reads HL7 inputs, not --table")
    if not is_local(job.output):
        raise RunError("--table writes to a local --output only (for now)")


def run_tables(job, test_pipeline=None) -> dict:
    """Run the tables job; returns the summary also written to ``OUTPUT/run.json``.

    ``job``: the run's checked options and configuration (``job._Job``).
    With ``--incremental`` the summary goes to ``OUTPUT/runs/<ts>.json`` and
    each table to ``tables/<name>/run=<ts>/``, as ``run`` partitions.
    """
    _check(job)
    tables = pairs(job.args.table, "--table")
    policies = pairs(job.args.column_policy, "--column-policy")
    if job.args.incremental:
        return _run_incremental(job, tables, policies, test_pipeline)
    inputs, rows, facts = load_tables(tables, policies,
                                      max_bytes=job.args.max_file_bytes)
    try:
        check_layout(job.output, incremental=False)
    except IncrementalError as exc:
        raise RunError(str(exc)) from exc
    staging = _new_staging_dir(job.output)
    try:
        summary = _stage(job, inputs, rows, facts, staging, test_pipeline)
        _check_outcome(summary, staging)
        publish(staged_tables(staging), staging, job.output, None, summary)
    except RunRejectedError:
        raise
    except BaseException as exc:
        left = discard(staging)
        if left:
            exc.left_behind = left
        raise
    discard(staging)
    log.debug("published %d table rows", summary["records_written"])
    return summary


def _stage(job, inputs: dict[str, TableInput], rows: list[TableRow],
           facts: dict[str, dict], staging: str, test_pipeline) -> dict:
    """Run the pipeline into ``staging``; the run's summary (not yet checked)."""
    started = time.time()
    pipeline = test_pipeline or local_pipeline(job.options)
    flags = tuple(job.beam_args)
    _ = (
        pipeline
        | "DeidentifyTables" >> DeidentifyTables(
            inputs, rows, job.tagger_config, job.rewriter, staging,
            job.num_shards, flags)
        | "WriteCounts" >> WriteCounts(staging, flags)
    )
    interrupts.raise_if_received()
    collect_from_here()  # the start-up's objects are built: freeze them
    with quiet_workers(job.beam_args):
        pipeline.run().wait_until_finish()
    protect_staging(staging, job.args.mode)
    for name, table in inputs.items():
        path = table_path(staging, name)
        if not FileSystems.exists(path):  # no row published: still a table
            write_table_file(path, table.schema, [])
    staged_tables(staging)  # empty identifiers, quarantine, ... get one file
    return _summary(job, facts, read_counts(staging), time.time() - started)


def _run_incremental(job, tables: dict[str, str], policies: dict[str, str],
                     test_pipeline) -> dict:
    """One night's partition of every table: lock, recover, new files, commit.

    As ``run --incremental`` (``deid_pipeline/store/incremental.py``): only
    new or changed table files are read; everything is staged, then
    ``runs/<ts>.json`` is written (the commit), then the partitions move in.
    """
    def night(runs: list[str], staging: str):
        run_id = run_timestamp(runs[-1] if runs else None)
        paths, entries, plan = plan_inputs(
            [tables[n] for n in sorted(tables)], load_manifest(job.output, runs),
            run_id)
        inputs, rows, facts = load_tables(tables, policies, set(paths),
                                          job.args.max_file_bytes)
        summary = _stage(job, inputs, rows, facts, staging, test_pipeline)
        summary["incremental"] = {"run": run_id, **plan}
        _check_outcome(summary, staging)
        return summary, run_id, entries

    return run_night(job, night)
