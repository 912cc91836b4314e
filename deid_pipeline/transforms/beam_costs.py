"""What Beam does over and over in a run, done once; and a wait it need not make.

Measured in a one-note ``run`` (issue 45), after imports:

- ``userstate.get_dofn_specs`` (does a DoFn use state or timers?) reads the
  signature of every method of the DoFn, and Beam asks it about nine times
  per transform: when the ``ParDo`` is made, applied and translated, in the
  direct runner's checks and in each bundle processor. 385 scans for 43
  ParDo transforms: 0.30 s of 1.8 s. A DoFn's methods and their defaults are
  fixed once it is made, so :class:`RememberedSpecs` keeps the answer per
  DoFn object (a copy of it each time: callers get sets of their own).
- ``PipelineOptions.view_as`` builds an argument parser and parses the flags
  again on every call; the pipeline asks for its type-check options at every
  transform it applies (337 calls, 0.16 s). :class:`JobOptions` keeps one
  view per options class. A view holds no values of its own (it reads and
  writes the options' shared dict), so the kept view is what a new one
  would be.
- At the end of each bundle Beam joins the thread that samples which step is
  running, and the thread first finishes its current sleep, which grows to
  200 ms in a bundle of a second or more: 15 bundles left a run idle 0.04-0.19
  s, a one-note run's 2.8 s included. :class:`PromptStateSampler` sleeps at
  most 20 ms (0.02-0.06 s a run), a wake-up of microseconds every 20 ms.

None of them changes what Beam computes: only how often, or how long a
bundle's end waits.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.worker import statesampler
from apache_beam.transforms import userstate

__all__ = ["JobOptions", "PromptStateSampler", "RememberedSpecs", "install"]

# The longest sleep of a bundle's state sampler (Beam's default: 200 ms).
SAMPLER_PERIOD_MS = 20


class JobOptions(PipelineOptions):
    """``PipelineOptions`` whose views are made once per options class."""

    def view_as(self, cls):  # noqa: ANN001, ANN201 - Beam's signature
        # Set through __dict__: PipelineOptions.__setattr__ takes only options.
        views = self.__dict__.setdefault("_views", {})
        view = views.get(cls)
        if view is None:
            view = views[cls] = super().view_as(cls)
        return view

    def __getstate__(self) -> dict:
        """As Beam pickles options, without the kept views (made again on use)."""
        state = dict(super().__getstate__())
        state.pop("_views", None)
        return state


class RememberedSpecs:
    """``get_dofn_specs`` answered from a scan per DoFn object, kept while it lives."""

    remembers = True

    def __init__(self, scan: Callable[[Any], tuple[set, set]]) -> None:
        """``scan``: Beam's own ``get_dofn_specs``."""
        self.scan = scan
        self.__doc__ = scan.__doc__
        # id(dofn) -> (a reference that dies with it, its state and timer specs).
        self.known: dict[int, tuple[weakref.ref, tuple[frozenset, frozenset]]] = {}

    def __call__(self, dofn: Any) -> tuple[set, set]:
        key = id(dofn)
        entry = self.known.get(key)
        if entry is None or entry[0]() is not dofn:
            states, timers = self.scan(dofn)
            try:
                alive = weakref.ref(dofn, lambda _: self.known.pop(key, None))
            except TypeError:  # an object without weak references: scanned
                return states, timers
            entry = self.known[key] = (alive, (frozenset(states), frozenset(timers)))
        states, timers = entry[1]
        return set(states), set(timers)


class PromptStateSampler(statesampler.StateSampler):
    """Beam's state sampler, sleeping at most ``SAMPLER_PERIOD_MS`` between samples.

    A bundle processor makes it with Beam's default period; a caller that
    names a period keeps it.
    """

    def __init__(self, prefix: str, counter_factory: Any,
                 sampling_period_ms: int = SAMPLER_PERIOD_MS) -> None:
        super().__init__(prefix, counter_factory, sampling_period_ms)


_LOCK = threading.Lock()


def install() -> None:
    """Make Beam scan each DoFn for state and timers once, and end bundles promptly.

    Idempotent; every process that builds or runs our pipelines calls it
    (importing :mod:`deid_pipeline.transforms` does), client and workers.
    A worker's first bundle processor may be made before it imports our
    package: that one keeps Beam's sampler.
    """
    with _LOCK:
        if not getattr(userstate.get_dofn_specs, "remembers", False):
            userstate.get_dofn_specs = RememberedSpecs(userstate.get_dofn_specs)
        if not issubclass(statesampler.StateSampler, PromptStateSampler):
            statesampler.StateSampler = PromptStateSampler
