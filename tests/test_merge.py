"""The one merge policy: overlaps widen, labels follow the most specific detector."""

from deid_pipeline.merge import merge_spans
from deid_pipeline.model import PhiSpan


def test_when_spans_overlap_then_union_keeps_both_extents():
    merged = merge_spans(
        [
            PhiSpan(0, 5, "DOCTOR", "crf", 0.6),
            PhiSpan(3, 10, "PATIENT", "dictionary:PID.5", 1.0),
        ]
    )
    assert merged == (PhiSpan(0, 10, "PATIENT", "crf+dictionary:PID.5", 1.0),)


def test_when_spans_are_disjoint_or_adjacent_then_kept_apart_and_sorted():
    spans = [
        PhiSpan(10, 12, "DATE", "rules:date"),
        PhiSpan(0, 4, "DOCTOR", "crf"),
        PhiSpan(4, 8, "DOCTOR", "crf"),
    ]
    assert merge_spans(spans) == tuple(sorted(spans))


def test_when_chain_of_overlaps_then_one_span():
    spans = [
        PhiSpan(0, 4, "DATE", "crf"),
        PhiSpan(3, 7, "DATE", "rules:date"),
        PhiSpan(6, 9, "PHONE", "crf"),
    ]
    (merged,) = merge_spans(spans)
    assert (merged.start, merged.end, merged.label) == (0, 9, "DATE")


def test_when_identical_spans_then_deduplicated():
    s = PhiSpan(2, 6, "PHONE", "rules:phone", 1.0)
    assert merge_spans([s, s]) == (s,)
