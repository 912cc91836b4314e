"""Long-running workers settle their process once the models are loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from deid_pipeline.runtime.process import GC_THRESHOLDS, allowed_cpus

_REPORT = "import gc\nprint(gc.get_freeze_count(), *gc.get_threshold())\n"


def _settled_after(code: str) -> tuple[int, tuple[int, ...]]:
    """(objects frozen, GC thresholds) in a fresh interpreter after ``code``.

    A child process: freezing is process-wide and for good.
    """
    out = subprocess.run([sys.executable, "-c", code + _REPORT], capture_output=True,
                         text=True, check=True, timeout=120)
    frozen, *thresholds = map(int, out.stdout.split())
    return frozen, tuple(thresholds)


def test_a_fresh_interpreter_is_not_settled():
    frozen, thresholds = _settled_after("")
    assert frozen == 0 and thresholds != GC_THRESHOLDS


def test_when_a_gateway_engine_warms_up_then_its_process_is_settled():
    frozen, thresholds = _settled_after(
        "from deid_pipeline.tagger.detectors import TaggerConfig\n"
        "from deid_pipeline.mllp.worker import Engine, EngineConfig\n"
        "Engine(EngineConfig(TaggerConfig(('rules', 'dictionary')), 'surrogate',\n"
        "                    b'k' * 32)).warm_up()\n")
    assert frozen > 10_000 and thresholds == GC_THRESHOLDS


def test_settling_a_loaded_worker_walks_its_heap_in_no_full_collection():
    # The collector ran through the loading: a full collection here found
    # next to nothing, at 0.06 CPU-s of every worker's start-up.
    full = subprocess.run([sys.executable, "-c", (
        "import gc\n"
        "from deid_pipeline.tagger.detectors import TaggerConfig\n"
        "from deid_pipeline.tagger.tagging import PhiTagger\n"
        "from deid_pipeline.runtime.process import settle\n"
        "PhiTagger.from_config(TaggerConfig(('rules', 'dictionary')))\n"
        "full = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start'\n"
        "                    and info['generation'] == 2 and full.append(2))\n"
        "settle()\n"
        "print(len(full), gc.get_freeze_count())\n")],
        capture_output=True, text=True, check=True, timeout=120).stdout.split()
    assert int(full[0]) == 0 and int(full[1]) > 10_000


def test_when_a_beam_worker_loads_its_tagger_then_its_process_is_settled():
    frozen, thresholds = _settled_after(
        "from apache_beam.utils import shared\n"
        "from deid_pipeline.tagger.detectors import TaggerConfig\n"
        "from deid_pipeline.transforms.tag import acquire_tagger\n"
        "acquire_tagger(shared.Shared(), TaggerConfig(('rules', 'dictionary')))\n")
    assert frozen > 10_000 and thresholds == GC_THRESHOLDS


def test_the_cpus_a_process_may_use_follow_its_affinity_mask():
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no affinity masks here")
    assert allowed_cpus() == sorted(os.sched_getaffinity(0))
    one = min(os.sched_getaffinity(0))
    out = subprocess.run(
        [sys.executable, "-c",
         f"import os; os.sched_setaffinity(0, {{{one}}})\n"
         "import argparse\n"
         "from deid_pipeline.mllp.cli import add_arguments\n"
         "parser = add_arguments(argparse.ArgumentParser())\n"
         "print(parser.parse_args(['--output', 'x']).workers)\n"],
        capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["1"]


_RUN_REPORTING_GC = """\
import gc, json, sys
import apache_beam as beam
seen = {}
run = beam.Pipeline.run
def reporting_run(self, *args, **kwargs):
    seen.update(enabled=gc.isenabled(), frozen=gc.get_freeze_count(),
                full=gc.get_stats()[2]["collections"])
    return run(self, *args, **kwargs)
beam.Pipeline.run = reporting_run
from deid_pipeline.pipelines.entry import main
before = gc.get_stats()[2]["collections"]
code = main(sys.argv[1:])
seen["full"] -= before
print(json.dumps({**seen, "code": code, "after_enabled": gc.isenabled()}))
"""


def test_a_run_collects_nothing_until_its_pipeline_runs(tmp_path):
    """Start-up (imports, the graph) without full collections; the run itself with."""
    samples = os.path.join(os.path.dirname(__file__), "..", "samples", "notes.jsonl")
    out = subprocess.run(
        [sys.executable, "-c", _RUN_REPORTING_GC, "run", "--input", samples,
         "--output", str(tmp_path / "out"), "--ephemeral-key",
         "--detectors", "rules,dictionary"],
        capture_output=True, text=True, timeout=300, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0
    # The command's imports and the graph were walked by no full collection,
    assert seen["full"] == 0
    # and they are frozen out of the way once collections start, before any
    # document is read.
    assert seen["enabled"] and seen["frozen"] > 50_000
    # Collections are on again once the command returns.
    assert seen["after_enabled"]


# Threads named as the process is: OpenBLAS's are (pyarrow's jemalloc one is not).
_THREADS_AFTER_NUMPY = (
    "import os\n"
    "import numpy\n"
    "name = open('/proc/self/comm').read()\n"
    "unnamed = [t for t in os.listdir('/proc/self/task')\n"
    "           if open(f'/proc/self/task/{t}/comm').read() == name]\n"
    "print(len(unnamed), os.environ.get('OPENBLAS_NUM_THREADS'))\n"
)


def _threads_after_numpy(prelude: str, **env: str) -> tuple[int, str]:
    """(unnamed threads once numpy is loaded, OPENBLAS_NUM_THREADS), fresh interpreter.

    ``prelude`` may load numpy itself (the console's ``--help`` does).
    """
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", prelude + _THREADS_AFTER_NUMPY],
                         capture_output=True, text=True, check=True, timeout=120,
                         env={**environ, **env})
    threads, value = out.stdout.split()
    return int(threads), value


_ENTRY_HELP = (
    "import contextlib, io\n"
    "from deid_pipeline.pipelines.entry import main\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
    "    main(['--help'])\n"
)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or len(allowed_cpus()) < 2,
                    reason="counts threads in /proc; OpenBLAS starts none on one CPU")
def test_after_the_console_entry_numpy_starts_no_blas_threads():
    # Bare, numpy's OpenBLAS starts a spinning thread per further CPU.
    bare, _ = _threads_after_numpy("")
    assert bare > 1
    threads, value = _threads_after_numpy(_ENTRY_HELP)
    assert (threads, value) == (1, "1")


def test_the_console_entry_keeps_a_blas_thread_count_the_user_set():
    _, value = _threads_after_numpy(_ENTRY_HELP, OPENBLAS_NUM_THREADS="2")
    assert value == "2"
