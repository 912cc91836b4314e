"""Benchmark: where a document's time goes, stage by stage, against the whole job.

Times the Beam-free stage functions in a fresh process (CPU time, as the
job's is counted, so other load on the machine does not inflate them) over the
same documents the job reads: parse, seed, tag split by detector (each timed
inside the tag calls), the view+merge rest and the chunks' reconcile, link,
surrogate, leak guard, write, and ``load``, the one-off loads a job does
once (the tagger's model, lexicons, rules and kernels, the rewriter). The
baseline, measured in the same run, is one ``run`` job on 1 worker over those documents
(``bench_scaling.run_set``): its CPU-ms per document in its process tree, of
which the stage functions are a share and Beam (encoding, data plane,
shuffles, its start-up) the rest. The job also times its own steps
(``run.json``'s ``stage_cpu_seconds``, ``transforms/stage_clock.py``): the
share from those is one run's, at one moment, where the stage functions
timed apart moved it by several points with the machine. Until 2026-11-30
the loads were counted as Beam's; ``--rounds`` prints the share all three
ways. A second job over one document of the set measures the start-up alone
(imports, the
pipeline's construction, the model and lexicons, in the client and in the
worker), so the rest splits into start-up and per-document cost::

    python -m deid_pipeline.benchmarks.bench_stages --docs 2000 --nursing

The baseline runs ``multi_processing`` with one SDK worker (a client and a
worker process, each importing Beam and loading the tagger);
``--single-mode in_memory`` runs it in one process, as ``run`` does by
default. ``--pyinstrument OUT.html`` also profiles one in-process
(``in_memory``) run. ``--rounds 3`` measures all of it three times in turn
(the job, its start-up, the stage functions) and prints the median of each
figure with its range: on a shared machine one round's share moved by ten
points, as much from the stage functions' timing as from the job's. The
stage functions run in a fresh process each round, as cold as the job's
worker.
Only counts and timings are printed; never document content.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from typing import TypeVar

from deid_pipeline.benchmarks.bench_inputs import (
    Bench,
    new_parser,
    prepare,
    workspace,
    write_json,
)
from deid_pipeline.benchmarks.bench_scaling import (
    RunFigures,
    run_job,
    run_set,
    summary,
)
from deid_pipeline.tagger.detectors import TaggerConfig

T = TypeVar("T")

STAGES = (
    "load",
    "parse",
    "seed",
    "tag",
    "link",
    "surrogate",
    "leak_guard",
    "write",
)


class _Timed:
    """A detector whose ``analyze`` calls add their time to ``tag:<name>``."""

    def __init__(self, detector, seconds: dict[str, float]) -> None:
        self._detector = detector
        self._seconds = seconds
        self._key = f"tag:{detector.name}"

    def __getattr__(self, name: str):
        return getattr(self._detector, name)

    def analyze(self, doc):
        t0 = time.process_time()
        try:
            return self._detector.analyze(doc)
        finally:
            self._seconds[self._key] = (self._seconds.get(self._key, 0.0)
                                        + time.process_time() - t0)


def time_stages(
    files: Sequence[str], config: TaggerConfig, key: bytes, limit: int, scratch: str
) -> tuple[dict[str, float], int]:
    """Seconds per stage of the Beam-free functions over up to ``limit`` documents.

    Reads ``files`` in order until ``limit`` documents. The tag stage is split
    by detector (``tag:rules``, ``tag:dictionary``, ``tag:crf``: each timed
    inside the tag calls), the rest of ``PhiTagger.tag`` (visible view,
    merge) and the job's last tag step, each chunk's documents reconciled
    (``tag:reconcile``; until 2026-12-01 it was counted as Beam's). The
    one-off loads (rules, lexicons, the model, their compiled kernels and scan
    gates, the rewriter: building them and what the first
    documents load on first use) are the ``load`` stage, once a job; then the
    garbage collector is set as a worker sets it (``settle``): with the
    default thresholds the stages ran slower here than in the job. Returns
    (seconds by stage, documents timed).
    """
    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.flow import DocumentFlow
    from deid_pipeline.hl7.documents import build_documents, parse_hl7_message
    from deid_pipeline.hl7.framing import decode_message, frame_file
    from deid_pipeline.linking.graph import link_record, resolve
    from deid_pipeline.linking.keys import document_key
    from deid_pipeline.model import ClinicalDocument
    from deid_pipeline.outputs.rows import document_row, identifier_rows
    from deid_pipeline.readers.formats import read_records
    from deid_pipeline.run_options import DEFAULT_CHUNK_SIZE
    from deid_pipeline.runtime.process import settle
    from deid_pipeline.store.tables import SCHEMAS, sort_key, write_table_file
    from deid_pipeline.tagger.tagging import PhiTagger

    seconds: dict[str, float] = {}

    def add(stage: str, t0: float) -> float:
        now = time.process_time()
        seconds[stage] = seconds.get(stage, 0.0) + now - t0
        return now

    docs: list[ClinicalDocument] = []
    firsts: list[int] = []  # where each file's documents start
    for path in files:
        if len(docs) >= limit:
            break
        firsts.append(len(docs))
        with open(path, "rb") as fh:
            data = fh.read()
        if path.endswith(".hl7"):
            t0 = time.process_time()
            for frame in frame_file(data).frames():
                text, codec = decode_message(frame.data)
                message, reports = parse_hl7_message(text)
                t0 = add("parse", t0)
                docs.extend(build_documents(message, path, codec, reports))
                t0 = add("seed", t0)
                if len(docs) >= limit:
                    break
        else:
            t0 = time.process_time()
            docs.extend(
                r for r in read_records(path, data) if isinstance(r, ClinicalDocument)
            )
            add("parse", t0)
    docs = docs[:limit]

    t0 = time.process_time()
    tagger = PhiTagger.from_config(config)
    rewriter = Rewriter(mode="surrogate", key=key)
    warm = docs[:3]
    for doc in warm:  # warm-up: lazy loads and first-use caches
        rewriter.rewrite(tagger.tag(doc))
    loading = time.process_time() - t0
    settle()  # the collector as a worker sets it once its tagger is loaded
    # Each detector is timed inside the tag calls themselves: timed again in a
    # second pass it met warm caches (the CRF's features of every text), and
    # the first pass's cache misses were counted as the view and the merge.
    detectors = tagger.detectors
    tagger.detectors = tuple(_Timed(d, seconds) for d in detectors)
    t0 = time.process_time()
    tagged = [tagger.tag(doc) for doc in docs]
    tag_total = time.process_time() - t0
    tagger.detectors = detectors
    seconds["tag:view+merge"] = max(
        0.0, tag_total - sum(v for k, v in seconds.items() if k.startswith("tag:"))
    )
    # The tag stage's last step: each chunk's documents lend each other what
    # they found (one message's reports, one patient's notes), in the job's
    # chunks (a file's documents, DEFAULT_CHUNK_SIZE at a time).
    t0 = time.process_time()
    tagged = [t for chunk in _chunks(len(tagged), firsts, DEFAULT_CHUNK_SIZE)
              for t in DocumentFlow.reconcile(tagged[chunk])]
    add("tag:reconcile", t0)
    t0 = time.process_time()
    records = [link_record(t) for t in tagged]
    t0 = add("link:records", t0)
    assignments = {a.doc_key: a for a in resolve(records)}
    add("link:resolve", t0)
    results = []
    for t in tagged:
        t0 = time.process_time()
        person = assignments[document_key(t.document)]
        result = rewriter.rewrite(t, person_key=person.person_key)
        t0 = add("surrogate", t0)
        try:
            results.append(rewriter.guard(t, result))
        except Exception:  # noqa: BLE001 - a leak quarantines the doc, as in the job
            pass
        add("leak_guard", t0)
    t0 = time.process_time()
    for table, rows in (
        ("documents", [document_row(r) for r in results]),
        ("identifiers", [row for r in results for row in identifier_rows(r)]),
    ):
        rows.sort(key=sort_key(table))
        write_table_file(
            os.path.join(scratch, f"{table}.parquet"), SCHEMAS[table], rows
        )
    add("write", t0)
    # The warm-up documents are timed again below; their own share is not a load.
    each = (tag_total + seconds.get("surrogate", 0.0)) / max(len(docs), 1)
    seconds["load"] = max(0.0, loading - len(warm) * each)
    return seconds, len(docs)


def _chunks(total: int, firsts: Sequence[int], size: int) -> list[slice]:
    """The job's chunks of ``total`` documents: each file's, ``size`` at a time."""
    ends = [*firsts[1:], total]
    return [slice(start, min(start + size, end))
            for first, end in zip(firsts, ends) for start in range(first, end, size)]


def profile_in_memory(
    patterns: Sequence[str], detectors, key_file: str, workdir: str, path: str
) -> str:
    """Profile one in-process (``in_memory``) run; returns the text report."""
    from pyinstrument import Profiler

    from deid_pipeline.pipelines.job import run

    argv = []
    for pattern in patterns:
        argv += ["--input", pattern]
    argv += [
        "--output",
        os.path.join(workdir, "out-profile"),
        "--key-file",
        key_file,
        "--detectors",
        ",".join(detectors),
        "--direct_running_mode=in_memory",
    ]
    profiler = Profiler(interval=0.002)
    profiler.start()
    run(argv)
    profiler.stop()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(profiler.output_html())
    return profiler.output_text(unicode=False, color=False, show_all=False)

# ---------------------------------------------------------------- report


def one_document_input(bench: Bench, directory: str) -> str | None:
    """A JSONL file of the N set's first note, or None if the set has none."""
    for path in bench.inputs.files(False):
        if path.endswith(".jsonl"):
            with open(path, encoding="utf-8") as fh:
                first = fh.readline()
            os.makedirs(directory, exist_ok=True)
            one = os.path.join(directory, "one.jsonl")
            with open(one, "w", encoding="utf-8") as fh:
                fh.write(first)
            return one
    return None


def run_startup(bench: Bench, model: str | None,
                single_mode: str = "multi_processing") -> RunFigures | None:
    """The baseline's job over one document: its start-up, measured alone."""
    one = one_document_input(bench, os.path.join(bench.workdir, "startup-input"))
    if one is None:
        return None
    return run_job(
        "1 doc 1w", [one], 1, 0, 1, single_mode, bench.detectors,
        bench.key_file, bench.workdir, ["--model", model] if model else [],
    )


def report_startup(
    stage_ms: float, baseline: RunFigures, startup: RunFigures
) -> dict:
    """Print the job's CPU as start-up plus per document, by process.

    Per document is what the N run used beyond the one-document run's,
    divided by the documents beyond the first; Beam's share of it is what
    the stage functions do not take.
    """
    worker = baseline.tree_cpu - baseline.driver_cpu
    fixed_worker = startup.tree_cpu - startup.driver_cpu
    per_doc = (
        1000 * (baseline.tree_cpu - startup.tree_cpu)
        / max(baseline.documents - startup.documents, 1)
    )
    print(
        f"  the N run's CPU by process: client {baseline.driver_cpu:.2f} s, "
        f"worker {worker:.2f} s; a 1-document run (start-up): client "
        f"{startup.driver_cpu:.2f} s, worker {fixed_worker:.2f} s, "
        f"{startup.tree_cpu:.2f} CPU-s in all"
    )
    if per_doc > 0:
        print(
            f"  beyond start-up the job used {per_doc:.2f} CPU-ms/doc: "
            f"{stage_ms / per_doc:.0%} in the stage functions"
        )
    return {
        "startup_cpu": startup.tree_cpu,
        "startup_driver_cpu": startup.driver_cpu,
        "per_document_cpu_ms": per_doc,
    }


def report_stages(
    stages: dict[str, float], stage_docs: int, baseline: RunFigures | None
) -> dict:
    """Print each stage's share and ms/doc, and their sum against ``baseline``."""
    total = sum(stages.values())
    if total:
        print()
        print(
            f"per-stage share of time (Beam-free stage functions, one process, "
            f"{stage_docs} documents of the N set; {1000 * total / stage_docs:.2f} "
            f"ms/doc in all):"
        )
        # Pipeline order; the tag detectors in the order they run.
        for stage in sorted(stages, key=lambda s: STAGES.index(s.split(":")[0])):
            once = " (once a job)" if stage == "load" else ""
            print(
                f"  {stage:<16}{100 * stages[stage] / total:>6.1f} %"
                f"{1000 * stages[stage] / stage_docs:>9.3f} ms/doc{once}"
            )
        if baseline:
            stage_ms = 1000 * total / stage_docs
            tree_ms = 1000 * baseline.tree_cpu / baseline.documents
            print(
                f"  the 1-worker N run used {tree_ms:.2f} CPU-ms/doc in its process "
                f"tree: {stage_ms / tree_ms:.0%} in the stage functions (their "
                "one-off loads included), the rest "
                "in Beam (encoding, data plane, shuffles, start-up)"
            )
    if baseline and baseline.stage_cpu is not None:
        print(
            f"  timed inside the job, its de-identification steps took "
            f"{baseline.stage_cpu:.2f} of its {baseline.tree_cpu:.2f} CPU-s: "
            f"Beam's share {in_job_share(baseline):.0%}"
        )
    return {"stage_seconds": stages, "stage_documents": stage_docs}


def fresh_process(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a new interpreter (spawned), its result returned.

    The stage functions are timed with the caches a worker starts with: in
    this process a second round met the first's (the CRF's features of every
    text, the chunk and scan caches) and timed a third faster, which the
    share then counted as Beam's.
    """
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(function, *args).result()


def measure_stages(
    bench: Bench, model: str | None, limit: int, baseline: RunFigures | None
) -> dict:
    """Time the stages over up to ``limit`` documents of the N set; print them."""
    config = TaggerConfig(detectors=bench.detectors, model_path=model)
    scratch = os.path.join(bench.workdir, "stage-scratch")
    os.makedirs(scratch, exist_ok=True)
    try:
        stages, stage_docs = fresh_process(
            time_stages, bench.inputs.files(False), config, bench.key, limit, scratch
        )
    except Exception as exc:  # noqa: BLE001 - keep the run figures already measured
        print(f"benchmark: per-stage timing failed: {type(exc).__name__}: {exc}")
        stages, stage_docs = {}, 0
    return report_stages(stages, stage_docs, baseline)


def profile(bench: Bench, path: str) -> None:
    """Profile one in_memory run of the N set; print the top of the report."""
    patterns = bench.inputs.patterns(False)
    text = profile_in_memory(
        patterns, bench.detectors, bench.key_file, bench.workdir, path
    )
    print()
    print(f"pyinstrument, one in_memory run of the N set ({path}):")
    print("\n".join(text.splitlines()[:60]))


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    """``--pyinstrument HTML``."""
    parser.add_argument(
        "--pyinstrument",
        metavar="HTML",
        help="also profile one in_memory run of the N set with "
        "pyinstrument (HTML to this path, top of the text report "
        "printed)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = new_parser("bench_stages", __doc__, docs=2000)
    add_profile_argument(parser)
    parser.add_argument(
        "--single-mode",
        default="multi_processing",
        choices=("multi_processing", "in_memory"),
        help="runner mode of the 1-worker baseline (default: multi_processing, a "
        "client and one SDK worker; in_memory: one process, as run's default)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, metavar="N",
        help="measure the job, its start-up and the stage functions N times in "
        "turn and print each figure's median and range (default: 1)",
    )
    return parser


def measure_round(bench: Bench, args: argparse.Namespace) -> tuple[dict, RunFigures]:
    """The job, its start-up and the stage functions, measured once; printed."""
    print("running N 1w (the baseline) ...", end=" ", flush=True)
    baseline = run_set(bench, "N 1w", False, 1, args.single_mode, args.model)
    print(f"{baseline.pipeline_seconds:.1f} s, {baseline.tree_cpu:.1f} CPU-s",
          flush=True)
    print("running 1 doc 1w (start-up) ...", end=" ", flush=True)
    startup = run_startup(bench, args.model, args.single_mode)
    print(f"{startup.tree_cpu:.1f} CPU-s" if startup else "no note in the set",
          flush=True)
    figures = measure_stages(bench, args.model, args.docs, baseline)
    if startup and figures.get("stage_documents"):
        figures.update(report_startup(stage_ms(figures, False), baseline, startup))
    return figures, baseline


def stage_ms(figures: dict, loads: bool = True) -> float:
    """The stage functions' ms a document in a round's figures.

    With ``loads`` the one-off loads are counted in, as the job's own are.
    """
    seconds = figures["stage_seconds"]
    total = sum(seconds.values()) - (0.0 if loads else seconds.get("load", 0.0))
    return 1000 * total / figures["stage_documents"]


def in_job_share(baseline: RunFigures) -> float | None:
    """Beam's share of the job's CPU, its steps timed inside the job itself.

    One run, one moment: what ``run.json``'s ``stage_cpu_seconds`` (the
    workers' threads in the de-identification steps, the tagger's load
    included) leaves of the job's CPU. The stage functions timed apart, in
    another process a minute later, moved the share by several points with
    the machine.
    """
    if baseline.stage_cpu is None or not baseline.tree_cpu:
        return None
    return 1 - baseline.stage_cpu / baseline.tree_cpu


def report_rounds(rounds: list[tuple[dict, RunFigures]]) -> dict:
    """Print each figure's median over the rounds, with its range."""
    rows = [{"stage_ms": stage_ms(figures),
             "unloaded_ms": stage_ms(figures, False),
             "job_cpu_ms": 1000 * baseline.tree_cpu / baseline.documents,
             "startup_cpu": figures.get("startup_cpu", 0.0),
             "in_job": in_job_share(baseline)}
            for figures, baseline in rounds if figures.get("stage_documents")]
    if not rows:
        return {}
    for row in rows:
        row["beam_share"] = 1 - row["stage_ms"] / row["job_cpu_ms"]
        # As this benchmark counted until 2026-11-30: the loads as Beam's.
        row["beam_share_with_loads"] = 1 - row["unloaded_ms"] / row["job_cpu_ms"]
    if all(row["in_job"] is not None for row in rows):
        for row in rows:
            row["beam_share_in_job"] = row["in_job"]
    print()
    print(f"over {len(rows)} rounds (each: the job, its start-up, the stage "
          "functions, in turn), median (range):")
    medians = {}
    for name, text, scale, unit in (
            ("beam_share", "Beam's share of the job's CPU", 100, "%"),
            ("beam_share_with_loads", "the same, the one-off loads counted as "
             "Beam's", 100, "%"),
            ("beam_share_in_job", "the same, the steps timed inside the job",
             100, "%"),
            ("stage_ms", "stage functions", 1, " ms/doc"),
            ("job_cpu_ms", "the job", 1, " CPU-ms/doc"),
            ("startup_cpu", "start-up", 1, " CPU-s")):
        if name not in rows[0]:
            continue
        values = [row[name] for row in rows]
        medians[name] = statistics.median(values)
        print(f"  {text}: {scale * medians[name]:.2f}{unit} "
              f"({scale * min(values):.2f}-{scale * max(values):.2f})")
    return {"rounds": rows, "medians": medians}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns (and prints) the figures."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    with workspace(args.workdir) as workdir:
        bench = prepare(args, 1, workdir, "bench_stages")
        rounds = []
        for number in range(1, args.rounds + 1):
            if args.rounds > 1:
                print(f"\nround {number} of {args.rounds}")
            rounds.append(measure_round(bench, args))
        figures, baseline = rounds[-1]
        if args.rounds > 1:
            figures.update(report_rounds(rounds))
        if args.pyinstrument:
            profile(bench, args.pyinstrument)
        figures.update(summary(bench, args), baseline=asdict(baseline))
        write_json(args.json, figures)
        return figures


if __name__ == "__main__":
    main(sys.argv[1:])
