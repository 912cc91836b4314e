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

A command's start-up is the same story earlier: importing Beam, pyarrow and
the tagger and building a pipeline's graph allocate over 100,000 objects
that stay, and the collector walked them in three full collections (a tenth
of a one-document ``run``) to find some 25,000 unreachable ones (4 MB).
:func:`collections_deferred` holds collections off until the work starts.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator

__all__ = ["GC_THRESHOLDS", "allowed_cpus", "collect_from_here",
           "collections_deferred", "one_blas_thread", "settle"]

# Young generation every 10,000 net allocations; the older ones 50 and 100
# times less often (the defaults are 700, 10, 10). Cycles are still
# collected, just in larger, rarer batches.
GC_THRESHOLDS = (10_000, 50, 100)


def settle() -> None:
    """Freeze what is loaded now out of the collector's way; collect less often.

    Call after the models are loaded (and, ideally, one document processed,
    so lazy imports and caches are in place). Idempotent. No full collection
    first: the collector ran through the loading, and one here found six
    unreachable objects in a Beam worker's 114,000 and took 0.06 CPU-s of
    that worker's one-second start-up.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


@contextlib.contextmanager
def collections_deferred() -> Iterator[None]:
    """No cyclic collection in this block until :func:`collect_from_here`.

    For a console command's whole life: it imports and builds with the
    collector off, and turns it on where its work starts; on the way out
    (an error before that too) the collector is on again. What was frozen
    stays so: unfrozen, it was all walked again by the collection at the
    interpreter's exit (a tenth of a second).
    """
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def collect_from_here() -> None:
    """Freeze what start-up built and collect from now on (if it was deferred).

    The start-up's unreachable objects are frozen with the rest rather than
    found by a full collection: a few MB kept, a tenth of a second saved. A
    no-op where collections were never deferred.
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for one thread in this process and those it starts.

    numpy's OpenBLAS starts a thread per CPU when numpy is imported, and
    each spins for a while waiting for work that never comes: 0.1 CPU-s per
    process (a two-process ``run`` spent 0.2 CPU-s so, 10% of a one-document
    run's CPU), taken from the other core's worker or, under ``taskset`` to
    one core, from the job itself. This tool parallelises by processes, one
    per core, and its few matrix products are small; one thread also keeps
    their summation order the same on every machine. A value the user set
    stays. Call before numpy is imported: Beam's worker processes inherit it.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on: its affinity mask, not the machine's count.

    A container or a ``taskset`` often allows fewer CPUs than ``os.cpu_count``
    reports; workers beyond them only take turns.
    """
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))
