"""Settings for a long-running worker process, applied once its models are loaded.

A worker (an MLLP gateway engine, a Beam SDK worker tagging documents) loads
a few hundred thousand objects that live as long as it does (the CRF model's
tables, lexicons, name tables), then fills per-process caches. Every
collection of the oldest generation walked them all again. And a document
allocates tens of thousands of short-lived objects but leaves no reference
cycles behind (``gc.collect`` found none after 800 HL7 messages), so the
default thresholds collected the young generations dozens of times per
document for nothing. Together that was ~5% of a message's CPU in the
gateway.
"""

from __future__ import annotations

import gc
import os

__all__ = ["GC_THRESHOLDS", "allowed_cpus", "settle"]

# Young generation every 10,000 net allocations; the older ones 50 and 100
# times less often (the defaults are 700, 10, 10). Cycles are still
# collected, just in larger, rarer batches.
GC_THRESHOLDS = (10_000, 50, 100)


def settle() -> None:
    """Freeze what is loaded now out of the collector's way; collect less often.

    Call after the models are loaded (and, ideally, one document processed,
    so lazy imports and caches are in place). Idempotent.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on: its affinity mask, not the machine's count.

    A container or a ``taskset`` often allows fewer CPUs than ``os.cpu_count``
    reports; workers beyond them only take turns.
    """
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))
