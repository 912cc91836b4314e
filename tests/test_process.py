"""Long-running workers settle their process once the models are loaded."""

from __future__ import annotations

import subprocess
import sys

from deid_pipeline.process import GC_THRESHOLDS

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
        "from deid_pipeline.detectors import TaggerConfig\n"
        "from deid_pipeline.mllp.worker import Engine, EngineConfig\n"
        "Engine(EngineConfig(TaggerConfig(('rules', 'dictionary')), 'surrogate',\n"
        "                    b'k' * 32)).warm_up()\n")
    assert frozen > 10_000 and thresholds == GC_THRESHOLDS


def test_when_a_beam_worker_loads_its_tagger_then_its_process_is_settled():
    frozen, thresholds = _settled_after(
        "from apache_beam.utils import shared\n"
        "from deid_pipeline.detectors import TaggerConfig\n"
        "from deid_pipeline.transforms.tag import acquire_tagger\n"
        "acquire_tagger(shared.Shared(), TaggerConfig(('rules', 'dictionary')))\n")
    assert frozen > 10_000 and thresholds == GC_THRESHOLDS
