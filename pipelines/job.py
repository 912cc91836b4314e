"""The batch de-identification job: ``deid-pipeline run``.

``run(argv)`` parses our options and hands the rest to Beam, builds the
pipeline, writes into a staging directory and publishes the tables (and
run.json last) only when the pipeline succeeded, so a failed or killed run
never leaves output that looks complete. Every path goes through Beam's
FileSystems (``deid_pipeline/store/files.py``): inputs, spill, staging and outputs
may be local or on s3://, gs://, hdfs://, where the workers write directly.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import platform
import sys
import time
from collections import Counter
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import (
    DirectOptions,
    PipelineOptions,
    StandardOptions,
    TypeOptions,
)

from deid_pipeline import __version__
from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.keys import key_fingerprint, load_key
from deid_pipeline.outputs.rows import quarantine_row
from deid_pipeline.pipelines import forked_workers
from deid_pipeline.pipelines.flink_job import FlinkJobStalledError
from deid_pipeline.pipelines.flink_job import wait_until_finish as wait_for_job
from deid_pipeline.pipelines.job_options import (
    _SECRET_OPTIONS,
    RunError,
    _check_same_storage,
    check_beam_args,
    check_option_names,
    check_worker_environment,
    redact_beam_args,
)
from deid_pipeline.pipelines.worker_logs import quiet_worker_args, quiet_workers
from deid_pipeline.run_options import build_parser, metadata_keys, surrogate_language
from deid_pipeline.runtime import interrupts
from deid_pipeline.runtime.interrupts import RunInterrupted, handling_signals
from deid_pipeline.runtime.process import collect_from_here
from deid_pipeline.store.files import (
    absolute,
    match_files,
    move_files,
    write_atomically,
)
from deid_pipeline.store.incremental import (
    IncrementalError,
    OutputLock,
    check_layout,
    committed_runs,
    finish_publish,
    link_history,
    literal_pattern,
    load_manifest,
    plan_inputs,
    recover,
    run_timestamp,
    staged_commit,
)
from deid_pipeline.store.inputs import InputPlan
from deid_pipeline.store.inputs import plan_inputs as plan_input_files
from deid_pipeline.store.publish import (
    StagingError,
    discard,
    new_staging_dir,
    protect_staging,
    publish,
    staged_tables,
)
from deid_pipeline.store.tables import read_counts
from deid_pipeline.tagger.detectors import TaggerConfig, check_names, create
from deid_pipeline.transforms.beam_costs import JobOptions
from deid_pipeline.transforms.chunks import delete_spill
from deid_pipeline.transforms.composites import DeidentifyFiles
from deid_pipeline.transforms.hl7_output import STAGE_PREFIX as HL7_STAGE_PREFIX
from deid_pipeline.transforms.hl7_output import Hl7Output
from deid_pipeline.transforms.spread import direct_workers
from deid_pipeline.transforms.stage_clock import COUNTER as STAGE_CPU_COUNTER
from deid_pipeline.transforms.write import WriteCounts, WriteSortedParquet

log = logging.getLogger(__name__)

# Bounds the rows one worker sorts and holds when writing a persons or
# quarantine shard (documents and identifiers are written per chunk).
BYTES_PER_SHARD = 64 * 1024 * 1024
MAX_SHARDS = 4096

def _by(counts: Counter, table: str) -> dict[str, int]:
    """Rows of ``table`` per value of its counted column (``written_counts``)."""
    return dict(sorted((v, n) for (t, v), n in counts.items() if t == table and v))


def _counter(result, name: str) -> int | None:
    try:
        found = result.metrics().query(
            beam.metrics.MetricsFilter().with_namespace("deid").with_name(name)
        )
    except Exception:  # noqa: BLE001 - some runners do not report metrics
        return None
    values = [
        c.committed if c.committed is not None else c.attempted
        for c in found["counters"]
    ]
    return sum(v for v in values if v is not None) if values else 0


def _stage_cpu_seconds(result) -> float | None:
    micros = _counter(result, STAGE_CPU_COUNTER)
    return None if micros is None else round(micros / 1e6, 3)


def _versions(tagger_config: TaggerConfig) -> dict[str, str]:
    import pyarrow

    versions = {
        "deid_pipeline": __version__,
        "apache_beam": beam.__version__,
        "pyarrow": pyarrow.__version__,
        "python": platform.python_version(),
    }
    if {"crf", "crf-neural"} & set(tagger_config.detectors):
        from deid_pipeline.tagger.crf_model import model_id

        versions["model"] = model_id(tagger_config.model_path)
    if "crf-neural" in tagger_config.detectors:
        from deid_pipeline.tagger.crf_neural import neural_id

        versions["neural"] = neural_id(tagger_config.model_path)
    if tagger_config.rules_path:
        from deid_pipeline.tagger.rules.site import load_site_rules

        # The site rules file, by its sha256, in the rule detector's version.
        versions["site_rules"] = load_site_rules(tagger_config.rules_path).sha256
        if "rules" in tagger_config.detectors:
            only_rules = dataclasses.replace(tagger_config, detectors=("rules",))
            versions["rules"] = create(only_rules)[0].version
    return versions


def expand_inputs(
    patterns: list[str], allow_empty: bool = False, recursive: bool = False
) -> InputPlan:
    """What the run reads; a pattern that matches no input file cannot run.

    Directories, hidden and gold files: ``deid_pipeline/store/inputs.py``.

    A glob that matched nothing used to be a warning, and the run then
    published empty tables over a good extract. Now it is an error unless
    ``allow_empty`` (``--allow-empty-input``: a nightly job over a folder
    that may be empty). A directory is refused with globs that read its
    files, unless ``recursive``.
    """
    def warn(message: str) -> None:
        print(f"deid-pipeline run: warning: {message}", file=sys.stderr)

    try:
        return plan_input_files(list(patterns), allow_empty, recursive, warn)
    except ValueError as exc:
        raise RunError(str(exc)) from exc


def input_bytes(patterns: list[str], allow_empty: bool = False) -> int:
    """Total size of the files ``patterns`` read (``expand_inputs``)."""
    return expand_inputs(patterns, allow_empty).total_bytes


def output_shards(total_bytes: int, requested: int | None) -> int:
    """Persons and quarantine shards: as asked, else one per ``BYTES_PER_SHARD``."""
    if requested:
        return requested
    return max(1, min(MAX_SHARDS, -(-total_bytes // BYTES_PER_SHARD)))



# Runner names that mean Beam's DirectRunner (the default when none is given).
_DIRECT_RUNNERS = frozenset({"DirectRunner", "SwitchingDirectRunner"})


def skip_type_inference(options: PipelineOptions) -> None:
    """On the DirectRunner, build the graph without Beam's type inference.

    Beam reads each transform's output type from its bytecode (and checks
    it) while the graph is built: half of building this job's graph, 0.044
    of 0.087 CPU-s in every run. The graph is this module's own and fixed;
    a test builds and runs it with the check on too. Grouping keys are typed
    as the runner needs them either way (Beam does that for every runner).
    Other runners (Flink) are left as they were.
    """
    if options.view_as(StandardOptions).runner in (None, *_DIRECT_RUNNERS):
        options.view_as(TypeOptions).pipeline_type_check = False


def local_pipeline(options: PipelineOptions,
                   tagger_config: TaggerConfig | None = None) -> beam.Pipeline:
    """A pipeline for ``options``; on the DirectRunner, one that never tries Prism.

    Since Beam 2.6x the DirectRunner first tries each pipeline on Prism, a Go
    binary it downloads from GitHub at run time, and falls back to its own
    runners when that fails. A de-identification job runs next to PHI: it must
    not fetch and execute a binary from the internet, pick its runner by
    whether the download worked, or leave the attempt's temporary directories
    behind on every run (three per run, never removed). ``is_interactive`` is
    the runner's public switch that makes it skip Prism (Prism has no
    interactive mode), leaving Beam's own choice between the FnApiRunner
    (batch; ``--direct_running_mode``, ``--direct_num_workers``) and the
    bundle-based runner. Any other ``--runner`` (Flink, Prism asked for by
    name) is used as given. With ``--direct_running_mode=multi_processing``
    the workers are forked from a copy of this process that has built the
    tagger for ``tagger_config``, where that can be done:
    :mod:`~deid_pipeline.pipelines.forked_workers`.
    """
    runner = options.view_as(StandardOptions).runner
    if runner is not None and runner not in _DIRECT_RUNNERS:
        return beam.Pipeline(options=options)
    if (options.view_as(DirectOptions).direct_running_mode == "multi_processing"
            and tagger_config is not None):
        zygote = forked_workers.start(tagger_config, direct_workers(options))
        if zygote is not None:
            return beam.Pipeline(runner=forked_workers.runner(zygote, options),
                                 options=options)
    from apache_beam.runners.direct.direct_runner import SwitchingDirectRunner

    direct = SwitchingDirectRunner()
    direct.is_interactive()
    return beam.Pipeline(runner=direct, options=options)

def _prepare(argv: list[str] | None):
    """Parse and check everything before any output is touched (RunError: exit 2)."""
    parser = build_parser()
    check_option_names(list(sys.argv[1:] if argv is None else argv), parser)
    args, beam_args = parser.parse_known_args(argv)
    if not (args.input or args.table):
        raise RunError("one of --input or --table is required")
    check_beam_args(beam_args, parser)
    check_worker_environment(beam_args)
    try:
        detectors = check_names(d for d in args.detectors.split(",") if d)
        key, key_source = load_key(args.key_file, args.ephemeral_key)
        if args.rules:  # the rules load where they tag, and here only if asked
            from deid_pipeline.tagger.rules.site import load_site_rules

            load_site_rules(args.rules)
        if args.bias is None:  # the model's own, recorded in run.json as used
            from deid_pipeline.tagger.crf_model import default_bias

            args.bias = default_bias(args.model)
        language = surrogate_language(args)
    except ValueError as exc:
        raise RunError(str(exc)) from exc
    tagger_config = TaggerConfig(
        detectors=detectors, model_path=args.model, bias=args.bias,
        rules_path=absolute(args.rules) if args.rules else None,
    )
    return args, beam_args, key, key_source, tagger_config, language


def run(
    argv: list[str] | None = None, test_pipeline: beam.Pipeline | None = None
) -> dict:
    """Run the job; returns the run summary also written to ``OUTPUT/run.json``.

    With ``--incremental`` the summary goes to ``OUTPUT/runs/<ts>.json`` and
    the tables to partitions (``deid_pipeline/store/incremental.py``).
    """
    args, beam_args, key, key_source, tagger_config, language = _prepare(argv)
    interrupts.raise_if_received()
    versions = _versions(tagger_config)
    pipeline_version = __version__ + (
        f"+{versions['model']}" if "model" in versions else ""
    )
    rewriter = Rewriter(
        mode=args.mode, key=key, policy=args.policy, pipeline_version=pipeline_version,
        as_of_year=args.as_of_year, keep_metadata=metadata_keys(args.keep_metadata),
        review_floor=args.review_floor, language=language,
    )

    # Views kept per options class: Beam asks for one at every transform.
    options = JobOptions(beam_args + quiet_worker_args(beam_args))
    skip_type_inference(options)
    # Beam hands the options to its file systems only when a pipeline is
    # built; the driver matches inputs and creates staging before that, and
    # S3 (endpoint, keys, region) cannot be reached without them.
    FileSystems.set_options(options)
    output = absolute(args.output)
    hl7_target = absolute(args.hl7_output) if args.hl7_output else None
    _check_same_storage(output, hl7_target)
    inputs = (expand_inputs(args.input, args.allow_empty_input, args.recursive)
              if args.input else InputPlan())
    total_bytes = inputs.total_bytes
    job = _Job(
        args, beam_args, options, tagger_config, rewriter, output, hl7_target,
        output_shards(total_bytes, args.output_shards),
        {
            "key": {"source": key_source, "fingerprint": key_fingerprint(key)},
            "versions": versions,
            "pipeline_version": pipeline_version,
        },
        inputs,
    )
    if args.table:  # a research extract's tables (docs/tables.md)
        from deid_pipeline.pipelines.tables_job import run_tables

        return run_tables(job, test_pipeline)
    if args.incremental:
        return _run_incremental(job, total_bytes, test_pipeline)
    try:
        check_layout(output, incremental=False)
    except IncrementalError as exc:
        raise RunError(str(exc)) from exc
    staging = _new_staging_dir(output)
    _log_plan(job, total_bytes, len(args.input))
    try:
        result, elapsed = _execute(job, job.inputs.patterns, staging, test_pipeline)
        summary = _summary(job, result, elapsed, staging)
        _check_outcome(summary, staging)
        publish(staged_tables(staging), staging, output, hl7_target, summary)
    except RunRejectedError:
        raise
    except BaseException as exc:
        left = discard(staging)
        if left:
            exc.left_behind = left  # named by main's message
        raise
    log.debug(
        "published %d documents, %d quarantined",
        summary["records_written"],
        summary["records_quarantined"],
    )
    discard(staging)
    return summary


class RunRejectedError(Exception):
    """The pipeline ran but its outcome must not replace the previous extract.

    ``exit_code``: 3 (the accounting does not balance) or 4 (too much was
    quarantined). This run's tables, quarantine included, stay in
    ``staging`` (protected, like the output) until the next run.
    """

    def __init__(self, message: str, exit_code: int, summary: dict,
                 staging: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.summary = summary
        self.staging = staging


def _check_outcome(summary: dict, staging: str) -> None:
    """Refuse to publish a run that lost records or quarantined too much.

    An unbalanced count is a silent hole in a study; a run that quarantined
    every record (a wrong ``--input-format``, a broken model) would replace
    a good extract with an empty one. ``--max-quarantine-ratio`` moves the
    second line (1 never refuses).
    """
    read, quarantined = summary["records_read"], summary["records_quarantined"]
    if summary["accounted"] is False:
        raise RunRejectedError(
            "records read != written + quarantined", 3, summary, staging
        )
    limit = summary["options"].get("max_quarantine_ratio")
    if not read:
        return
    share = quarantined / read
    if (share > limit) if limit is not None else (quarantined == read):
        what = (
            f"above --max-quarantine-ratio {limit}" if limit is not None
            else "every record (--max-quarantine-ratio 1 to publish anyway)"
        )
        raise RunRejectedError(
            f"{share:.1%} of records quarantined, {what}", 4, summary, staging
        )


def _new_staging_dir(output: str) -> str:
    try:
        return new_staging_dir(output)
    except StagingError as exc:
        raise RunError(str(exc)) from exc


class _Job(NamedTuple):
    """What every step of one run needs, checked and built by ``run``."""

    args: argparse.Namespace
    beam_args: list[str]
    options: PipelineOptions
    tagger_config: TaggerConfig
    rewriter: Rewriter
    output: str
    hl7_target: str | None
    num_shards: int
    provenance: dict
    # The files to read (``deid_pipeline/store/inputs.py``), what was skipped.
    inputs: InputPlan


def _log_plan(job: _Job, total_bytes: int, n_patterns: int) -> None:
    """Beam stays at INFO or above; the plan is logged (counts only)."""
    # Beam logs every element's repr at DEBUG, and rows are dicts holding PHI:
    # whatever the caller's logging, Beam stays at INFO or above.
    beam_logger = logging.getLogger("apache_beam")
    beam_logger.setLevel(max(beam_logger.getEffectiveLevel(), logging.INFO))
    from deid_pipeline.tagger.detectors import effective_detectors  # what runs

    log.debug(
        "input: %d bytes in %d pattern(s); %d shard(s) for persons and "
        "quarantine; chunks of %d documents; detectors %s; mode %s",
        total_bytes,
        n_patterns,
        job.num_shards,
        job.args.chunk_size,
        ",".join(effective_detectors(job.tagger_config)),  # the model's language's
        job.args.mode,
    )


def _execute(
    job: _Job, patterns: list[str], staging: str, test_pipeline, history=None
):
    """Build and run the pipeline into ``staging``; returns (result, seconds).

    A failure deletes staging and re-raises: nothing is published.
    """
    args = job.args
    started = time.time()
    pipeline = test_pipeline or local_pipeline(job.options, job.tagger_config)
    # Spilled documents hold PHI: inside the staging directory, deleted
    # before anything is published (and with staging when the run fails).
    spill = FileSystems.join(staging, "_spill")
    # Every worker step that touches files sets its file systems' options.
    flags = tuple(job.beam_args)
    if job.options.view_as(StandardOptions).runner not in (None, *_DIRECT_RUNNERS):
        # Flink's workers match inputs in their own working directory: a
        # relative --input read nothing there (a run of 0 records, exit 0).
        patterns = [absolute(p) for p in patterns]
    outputs = pipeline | "DeidentifyFiles" >> DeidentifyFiles(
        patterns,
        args.input_format,
        job.tagger_config,
        job.rewriter,
        staging,
        spill_directory=spill,
        chunk_size=args.chunk_size,
        hl7_output=Hl7Output(
            FileSystems.join(staging, "hl7"), args.hl7_z_segments, flags
        )
        if args.hl7_output
        else None,
        max_file_bytes=args.max_file_bytes,
        filesystem_flags=flags,
        link_history=history,
        workers=direct_workers(job.options),
    )
    # Documents and identifiers are written by DeidentifyFiles, chunk by chunk.
    persons_written = outputs.persons | "WritePersons" >> WriteSortedParquet(
        staging, "persons", job.num_shards, flags
    )
    quarantine_written = (
        outputs.quarantine
        | "QuarantineRows" >> beam.Map(quarantine_row)
        | "WriteQuarantine"
        >> WriteSortedParquet(staging, "quarantine", job.num_shards, flags)
    )
    _ = (
        (
            outputs.written | "ChunkCounts" >> beam.Map(lambda w: w.counts),
            persons_written,
            quarantine_written,
        )
        | "AllCounts" >> beam.Flatten()
        | "WriteCounts" >> WriteCounts(staging, flags)
    )
    try:
        interrupts.raise_if_received()
        collect_from_here()  # the start-up's objects are built: freeze them
        with quiet_workers(job.beam_args):
            result = pipeline.run()
            # On Flink: fails if stuck (no record moved, staging not growing).
            wait_for_job(result, job.options, staging=staging)
    except BaseException:
        discard(staging)
        raise
    finally:
        forked_workers.stop()  # its workers have ended with the pipeline
    # Spilled documents go before anything is counted or published.
    delete_spill(spill)
    # Protected outputs owner-only before any leaves staging (or stays there).
    protect_staging(staging, args.mode)
    return result, time.time() - started


def _summary(job: _Job, result, elapsed: float, staging: str) -> dict:
    """run.json's content (no PHI: counts, options, versions, the key's fingerprint)."""
    args = job.args
    counts = read_counts(staging)
    written = counts["documents", ""]
    by_stage = _by(counts, "quarantine")
    # HL7-output failures are messages, counted apart from the records.
    quarantined = sum(
        n for stage, n in by_stage.items() if not stage.startswith(HL7_STAGE_PREFIX)
    )
    read = _counter(result, "records_read")
    summary = {
        "records_read": read,
        "records_written": written,
        "records_quarantined": quarantined,
        # None when the runner reports no metrics: unknown is not balanced.
        "accounted": None if read is None else read == written + quarantined,
        "files_read": _counter(result, "files_read"),
        # Files globs or --recursive matched and the run left out, by reason.
        "files_skipped": dict(sorted(job.inputs.skipped.items())),
        "persons": counts["persons", ""],
        "quarantined_by_stage": by_stage,
        "spans_by_label": _by(counts, "identifiers"),
        "seconds": round(elapsed, 3),
        "documents_per_second": round(written / elapsed, 1) if elapsed else None,
        # CPU the de-identification steps took in the workers' threads
        # (transforms/stage_clock.py); the rest of the job's CPU is the runner's.
        "stage_cpu_seconds": _stage_cpu_seconds(result),
        "options": {
            k: v for k, v in sorted(vars(args).items()) if k not in _SECRET_OPTIONS
        },
        "key": job.provenance["key"],
        "beam_options": redact_beam_args(job.beam_args),
        "versions": job.provenance["versions"],
        "pipeline_version": job.provenance["pipeline_version"],
    }
    if args.hl7_output:
        summary["hl7_output"] = {
            "directory": job.hl7_target,
            "messages_in": _counter(result, "hl7_messages_in"),
            "messages_out": _counter(result, "hl7_messages_out"),
            "reports_tagged_again": _counter(result, "hl7_reports_tagged_again"),
        }
    return summary


def _run_incremental(job: _Job, total_bytes: int, test_pipeline) -> dict:
    """One night's partition: lock, recover, read only new or changed files, commit."""
    return run_night(job, lambda runs, staging: _stage_night(
        job, runs, staging, test_pipeline, total_bytes))


def run_night(job: _Job, stage_night) -> dict:
    """Lock ``job.output``, recover, stage one night, commit and publish it.

    ``stage_night(runs, staging)`` runs and checks the night into staging:
    (summary, run id, manifest entries). The order is the contract of
    ``deid_pipeline/store/incremental.py``: everything staged, then
    ``runs/<ts>.json`` (the commit), then the moves into place.
    """
    output = job.output
    try:
        with OutputLock(output):
            check_layout(output, incremental=True)
            runs = committed_runs(output)
            recover(output, runs)
            staging = _new_staging_dir(output)
            summary, run_id = _stage_partition(
                job, staging, lambda: stage_night(runs, staging))
    except IncrementalError as exc:
        raise RunError(str(exc)) from exc
    log.debug("run %s published %d documents", run_id, summary["records_written"])
    return summary


def _stage_partition(job: _Job, staging: str, stage_night) -> tuple[dict, str]:
    """Run one night into ``staging``, check it, commit and move it into place.

    ``stage_night()`` runs and checks the night: (summary, run id, manifest
    entries). Until the commit a failure or signal deletes ``staging``; after
    it, staging holds the committed partition that the next run's ``recover``
    moves into place.
    """
    try:
        summary, run_id, entries = stage_night()
        # A signal from here on is acted on at the one check before the
        # commit; after it the partition is published whole.
        with interrupts.deferred():
            commit = staged_commit(staging, run_id, summary, entries)
            interrupts.raise_if_received()
    except RunRejectedError:
        raise
    except BaseException:
        discard(staging)
        raise
    with interrupts.deferred():
        if job.hl7_target:
            move_files(FileSystems.join(staging, "hl7"), job.hl7_target)
        write_atomically(FileSystems.join(job.output, "runs", f"{run_id}.json"), commit)
        finish_publish(job.output, staging, run_id)
    return summary, run_id


def _stage_night(job: _Job, runs, staging: str, test_pipeline, total_bytes: int):
    """The night's pipeline into ``staging``; (summary, run id, manifest entries)."""
    output = job.output
    run_id = run_timestamp(runs[-1] if runs else None)
    manifest = load_manifest(output, runs)
    paths, entries, plan = plan_inputs(job.inputs.patterns, manifest, run_id)
    _log_plan(job, total_bytes, len(paths))
    history = link_history(output, runs, staging, tuple(job.beam_args))
    result, elapsed = _execute(
        job, [literal_pattern(p) for p in paths], staging, test_pipeline,
        history,
    )
    summary = _summary(job, result, elapsed, staging)
    summary["files"] = {
        table: sorted(FileSystems.split(p)[1] for p in files)
        for table, files in staged_tables(staging).items()
    }
    summary["incremental"] = {"run": run_id, **plan}
    if job.hl7_target:
        summary["hl7_output"]["files"] = sorted(
            FileSystems.split(p)[1]
            for p in match_files(FileSystems.join(staging, "hl7", "*"))
        )
    _check_outcome(summary, staging)
    return summary, run_id, entries


def _report(summary: dict) -> None:
    """The one-line outcome on stderr (counts only)."""
    read, quarantined = summary["records_read"], summary["records_quarantined"]
    by_stage = ", ".join(f"{s} {n}" for s, n in summary["quarantined_by_stage"].items())
    print(
        f"deid-pipeline run: {read} records read, {summary['records_written']} "
        f"written, {quarantined} quarantined{f' ({by_stage})' if by_stage else ''}, "
        f"{summary['persons']} persons, in {summary['seconds']} s",
        file=sys.stderr,
    )
    skipped = summary.get("files_skipped")
    if skipped:
        what = ", ".join(f"{n} {reason}" for reason, n in skipped.items())
        print(f"deid-pipeline run: files skipped: {what} (run.json files_skipped)",
              file=sys.stderr)
    if summary["accounted"] is None:
        print(
            "deid-pipeline run: warning: the runner reported no record counts; "
            "accounting not checked",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    """Command-line wrapper; returns the exit code a scheduler acts on.

    0 published (quarantined records are reported, not failures), 2 could
    not run, 3 accounting broken, 4 too much quarantined (nothing published
    for either), 130 / 143 interrupted by SIGINT / SIGTERM (nothing
    published, staging removed).
    """
    with handling_signals():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        summary = run(argv)
    except (RunError, FlinkJobStalledError) as exc:
        print(f"deid-pipeline run: error: {exc}", file=sys.stderr)
        return 2
    except RunRejectedError as exc:
        _report(exc.summary)
        print(
            f"deid-pipeline run: error: {exc}; nothing published, the previous "
            f"output is unchanged (this run's tables, PROTECTED, are in "
            f"{exc.staging} until the next run)",
            file=sys.stderr,
        )
        return exc.exit_code
    except BaseException as exc:
        # Beam re-raises what stopped a bundle as a RuntimeError naming the
        # step: the signal this process got says it was an interrupt.
        signum = interrupts.received()
        if not (signum or isinstance(exc, (RunInterrupted, KeyboardInterrupt))):
            raise
        code = 128 + signum if signum else getattr(exc, "exit_code", 130)
        left = getattr(exc, "left_behind", None)
        where = (
            f"; could not remove {left}: it holds PROTECTED input, delete it"
            if left else "; staging removed"
        )
        print(
            f"deid-pipeline run: interrupted ({signal_name(code)}): nothing "
            f"published, the previous output is unchanged{where}",
            file=sys.stderr,
        )
        return code
    _report(summary)
    late = interrupts.received()
    if late:
        # The signal came while publishing, after the point of no return.
        print(
            f"deid-pipeline run: interrupted ({signal_name(128 + late)}) after "
            "the output was published: it is complete",
            file=sys.stderr,
        )
        return 128 + late
    return 0


def signal_name(exit_code: int) -> str:
    """``SIGINT`` for 130, ``SIGTERM`` for 143."""
    import signal

    try:
        return signal.Signals(exit_code - 128).name
    except ValueError:
        return f"exit {exit_code}"


if __name__ == "__main__":
    sys.exit(main())
