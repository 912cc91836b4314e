"""Beam's DoFn spec scans and option views computed once, its bundles ended promptly."""

from __future__ import annotations

import gc
import pickle

import apache_beam as beam
from apache_beam.coders import VarIntCoder
from apache_beam.options.pipeline_options import (
    PipelineOptions,
    StandardOptions,
    TypeOptions,
)
from apache_beam.runners.worker import statesampler
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms import userstate
from apache_beam.transforms.timeutil import TimeDomain

import deid_pipeline.transforms  # noqa: F401 - installs the remembered scan
from deid_pipeline.transforms.beam_costs import (
    SAMPLER_PERIOD_MS,
    JobOptions,
    PromptStateSampler,
    RememberedSpecs,
)
from deid_pipeline.transforms.write import _WriteCountsFn

_SCAN = userstate.get_dofn_specs.scan  # Beam's own


class _CountingDoFn(beam.DoFn):
    """A stateful DoFn: a bag of counts and a timer that flushes them."""

    SEEN = userstate.BagStateSpec("seen", VarIntCoder())
    FLUSH = userstate.TimerSpec("flush", TimeDomain.WATERMARK)

    def process(self, element, seen=beam.DoFn.StateParam(SEEN),
                flush=beam.DoFn.TimerParam(FLUSH)):
        seen.add(element[1])
        flush.set(0)

    @userstate.on_timer(FLUSH)
    def flushed(self, seen=beam.DoFn.StateParam(SEEN)):
        yield sum(seen.read())


def _counted(scan):
    calls = []

    def counting(dofn):
        calls.append(id(dofn))
        return scan(dofn)

    return counting, calls


def test_importing_the_transforms_makes_beam_remember_each_dofns_specs():
    assert isinstance(userstate.get_dofn_specs, RememberedSpecs)
    first = userstate.get_dofn_specs
    from deid_pipeline.transforms.beam_costs import install

    install()  # again: not wrapped twice
    assert userstate.get_dofn_specs is first and first.scan is _SCAN
    assert statesampler.StateSampler is PromptStateSampler


def test_a_remembered_answer_is_beams_own_for_stateful_and_plain_dofns():
    remembered = RememberedSpecs(_SCAN)
    dofns = [_CountingDoFn(), beam.Map(len).fn, _WriteCountsFn("/tmp/out", ())]
    for dofn in dofns:
        for _ in range(3):
            assert remembered(dofn) == _SCAN(dofn)
    states, timers = remembered(dofns[0])
    assert states == {_CountingDoFn.SEEN} and timers == {_CountingDoFn.FLUSH}
    assert userstate.is_stateful_dofn(dofns[0])
    assert not userstate.is_stateful_dofn(dofns[1])


def test_each_dofn_object_is_scanned_once_while_it_lives():
    scan, calls = _counted(_SCAN)
    remembered = RememberedSpecs(scan)
    one, other = _CountingDoFn(), _CountingDoFn()
    for _ in range(9):  # as often as Beam asks about one transform
        remembered(one)
        remembered(other)
    assert sorted(calls) == sorted([id(one), id(other)])
    del one
    gc.collect()
    assert list(remembered.known) == [id(other)]


def test_callers_get_sets_of_their_own():
    remembered = RememberedSpecs(_SCAN)
    dofn = _CountingDoFn()
    states, _ = remembered(dofn)
    states.clear()
    assert {s.name for s in remembered(dofn)[0]} == {"seen"}


def test_a_pipeline_runs_with_the_remembered_scan():
    scan, calls = _counted(_SCAN)
    remembered = RememberedSpecs(scan)
    before, userstate.get_dofn_specs = userstate.get_dofn_specs, remembered
    try:
        with beam.Pipeline(options=JobOptions(["--runner=DirectRunner"])) as p:
            out = (p | beam.Create([("a", 1), ("a", 2), ("b", 5)])
                   | beam.ParDo(_CountingDoFn()))
            assert_that(out, equal_to([3, 5]))
    finally:
        userstate.get_dofn_specs = before
    # Each object scanned once, however often Beam asked about it.
    assert len(calls) == len(set(calls)) > 0


def test_job_options_keep_one_view_that_reads_and_writes_the_shared_values():
    flags = ["--runner=DirectRunner", "--direct_num_workers=2"]
    options = JobOptions(flags)
    view = options.view_as(StandardOptions)
    assert options.view_as(StandardOptions) is view
    assert view.runner == "DirectRunner"
    options.view_as(TypeOptions).pipeline_type_check = False
    view.runner = "FlinkRunner"  # a write through one view is seen by all
    assert options.view_as(StandardOptions).runner == "FlinkRunner"
    assert options.view_as(TypeOptions).pipeline_type_check is False
    plain = PipelineOptions(flags)
    plain.view_as(StandardOptions).runner = "FlinkRunner"
    plain.view_as(TypeOptions).pipeline_type_check = False
    assert options.get_all_options() == plain.get_all_options()


def test_job_options_pickle_without_their_views():
    options = JobOptions(["--direct_num_workers=2"])
    options.view_as(StandardOptions).runner = "DirectRunner"
    back = pickle.loads(pickle.dumps(options))
    assert "_views" not in back.__dict__
    assert back.view_as(StandardOptions).runner == "DirectRunner"
    assert back.get_all_options() == options.get_all_options()


def test_a_bundles_sampler_sleeps_at_most_the_short_period_unless_asked_otherwise():
    from apache_beam.utils.counters import CounterFactory

    # As a bundle processor makes it: Beam's default period is 200 ms.
    made = statesampler.StateSampler("fnapi-step-1", CounterFactory())
    assert isinstance(made, PromptStateSampler)
    assert made.sampling_period_ms == SAMPLER_PERIOD_MS < 200
    assert statesampler.StateSampler("x", CounterFactory(), 5).sampling_period_ms == 5
    made.start()
    with made.scoped_state("step", "process"):
        pass
    made.stop()  # joins the sampling thread
    assert made.finished
