"""Span lookups that replaced per-span scans (quadratic on long documents)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.eponym_spans import drop_eponyms
from deid_pipeline.tagger.intervals import Intervals

_PAIR = st.tuples(st.integers(0, 60), st.integers(0, 10)).map(
    lambda p: (p[0], p[0] + p[1]))


@given(st.lists(_PAIR, max_size=12), st.lists(_PAIR, min_size=1, max_size=12))
def test_when_asked_then_same_answers_as_a_scan_of_every_interval(pairs, queries):
    intervals = Intervals(pairs)
    for start, end in queries:
        assert intervals.overlaps(start, end) == any(
            e > start and s < end for s, e in pairs)
        assert intervals.contains(start, end) == any(
            s <= start and end <= e for s, e in pairs)
        assert intervals.overlapping(start, end) == sorted(
            (s, e) for s, e in pairs if e > start and s < end)


def test_when_no_intervals_then_nothing_overlaps_or_contains():
    assert not Intervals([]).overlaps(0, 5)
    assert not Intervals([]).contains(3, 3)


def test_when_eponyms_repeat_in_a_long_text_then_each_span_is_judged_alone():
    """Many eponym regions and many spans: the lookup keeps the per-span rule."""
    sign = "Positive Babinski sign on the left. Parkinson's disease stable.\n"
    doctor = "Seen by Dr. Babinski today.\n"
    text = sign * 300
    spans = [PhiSpan(k * len(sign) + a, k * len(sign) + b, label, "crf", 0.6)
             for k in range(300)
             for a, b, label in ((9, 17, "DOCTOR"), (36, 47, "PATIENT"))]
    assert drop_eponyms(text, spans) == ()  # the sign and the disease, every time
    # Once the surname is also a doctor's, tagged after a title, it is kept
    # everywhere: a value tagged elsewhere is never dropped.
    text += doctor
    spans.append(PhiSpan(len(text) - len(doctor) + 12, len(text) - len(doctor) + 20,
                         "DOCTOR", "crf", 0.9))
    kept = drop_eponyms(text, spans)
    assert {text[s.start:s.end] for s in kept} == {"Babinski"}
    assert len(kept) == 301
