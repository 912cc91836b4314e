"""The one merge policy: overlaps widen, labels follow the most specific detector."""

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.merge import Occurrences, merge_spans, with_occurrences


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


def test_when_a_rule_only_guesses_its_label_then_the_models_label_wins():
    # "Heather reports ...": the subject rule finds the name, not whose it is.
    merged = merge_spans([PhiSpan(0, 7, "RELATIVE", "crf", 0.6),
                          PhiSpan(0, 7, "PATIENT", "rules:subjects", 0.7)])
    assert merged == (PhiSpan(0, 7, "RELATIVE", "crf+rules:subjects", 0.7),)
    # Alone, it keeps its own.
    assert merge_spans([PhiSpan(0, 7, "PATIENT", "rules:subjects", 0.7)])[0].label == (
        "PATIENT")


def test_when_identical_spans_then_deduplicated():
    s = PhiSpan(2, 6, "PHONE", "rules:phone", 1.0)
    assert merge_spans([s, s]) == (s,)


# --------------------------------------------------------------- reconcile

from deid_pipeline.leak_guard import Suspect, find_leaks  # noqa: E402
from deid_pipeline.model import DictionaryEntry, PatientDictionary  # noqa: E402
from deid_pipeline.tagger.merge import PROPAGATED, reconcile  # noqa: E402

NOTE = (
    "Pt seen with son David Moss at bedside. Moss called at 1400 re: plan.\n"
    "MOSS, DAVID to visit tomorrow; call back 617-555-0142.\n"
    "Pt is 74 yo, born 1950. Lives in Moss Landing area since 1950.\n"
)


def _at(text, needle, start=0):
    i = text.index(needle, start)
    return i, i + len(needle)


def test_when_a_name_is_found_once_then_its_other_occurrences_are_marked():
    found = [PhiSpan(*_at(NOTE, "David Moss"), "RELATIVE", "crf", 0.7)]
    spans = reconcile(NOTE, found)
    texts = [NOTE[s.start:s.end] for s in spans]
    assert texts == ["David Moss"]  # the full value only: "Moss" alone is not it
    moss = [PhiSpan(*_at(NOTE, "Moss", NOTE.index("Moss called")), "RELATIVE",
                    "crf", 0.6)]
    spans = reconcile(NOTE, moss)
    # Case-insensitive, whole words: "Moss", "MOSS", "Moss" (Landing) all marked.
    assert [NOTE[s.start:s.end].lower() for s in spans] == ["moss"] * 4
    assert [s.source for s in spans].count(PROPAGATED) == 3
    assert all(s.label == "RELATIVE" and s.confidence == 0.6 for s in spans)


def test_when_values_are_kept_by_policy_or_too_short_then_not_propagated():
    found = [
        PhiSpan(*_at(NOTE, "74"), "AGE", "rules:age"),
        PhiSpan(*_at(NOTE, "1950"), "DATE", "rules:date"),
        PhiSpan(*_at(NOTE, "Pt"), "PATIENT", "crf"),
    ]
    assert reconcile(NOTE, found) == merge_spans(found)


def test_when_a_two_digit_date_is_found_then_marked_where_it_reads_as_a_date():
    """Too short for the value search, ``1/2`` is sought where it is a date."""
    note = ("IABP d/c 1/2 and pressors d/c 1/2, extubated on 1/2. Given 1/2 NS at "
            "75/hr, 1/2 tab tylenol; took 1/2 of meal. Strength 5/5, PS 1/2.5.\n"
            "Next HD 1/2 (transfer to floor 1/21).")
    found = [PhiSpan(*_at(note, "1/2", note.index("on 1/2") + 3), "DATE",
                     "rules:date", 0.9)]
    spans = reconcile(note, found)
    marked = [note[s.start - 4:s.end + 3] for s in spans]
    assert marked == ["d/c 1/2 an", "d/c 1/2, e", " on 1/2. G", " HD 1/2 (t"]
    assert [s.source for s in spans].count(PROPAGATED) == 3
    assert all(s.label == "DATE" and s.confidence == 0.9 for s in spans)


def test_when_two_short_dates_are_found_then_each_is_marked_where_it_stands():
    """One pass for all of them: each value's own occurrences, in text order."""
    note = ("CXR 3/4, echo 1/2; repeat CXR 3/4 and echo 1/2. Strength 5/5, "
            "took 3/4 of meal, 1/2 NS given. Seen 3/4.")
    found = [PhiSpan(*_at(note, "3/4", 4), "DATE", "rules:date", 0.8),
             PhiSpan(*_at(note, "1/2", note.index("echo 1/2") + 5), "DATE",
                     "crf", 0.7)]
    spans = reconcile(note, found)
    assert [(note[s.start:s.end], s.start, s.confidence) for s in spans] == [
        ("3/4", 4, 0.8), ("1/2", note.index("echo 1/2") + 5, 0.7),
        ("3/4", note.index("CXR 3/4 and") + 4, 0.8),
        ("1/2", note.index("echo 1/2.") + 5, 0.7),
        ("3/4", note.index("Seen 3/4") + 5, 0.8)]


def test_when_a_header_phone_is_written_differently_then_every_form_is_marked():
    text = "Call 617-555-0142 or (617) 555 0142 or 6175550142, not 61755501423."
    header = PatientDictionary(
        entries=(DictionaryEntry("617.555.0142", "PHONE", "PID.13"),))
    spans = reconcile(text, [], header)
    assert [text[s.start:s.end] for s in spans] == [
        "617-555-0142", "617) 555 0142", "6175550142"]
    assert all(s.label == "PHONE" and s.source == PROPAGATED for s in spans)


def test_after_reconcile_the_leak_guard_finds_nothing_outside_the_spans():
    found = [PhiSpan(*_at(NOTE, "Moss"), "RELATIVE", "crf"),
             PhiSpan(*_at(NOTE, "617-555-0142"), "PHONE", "rules:phone")]
    spans = reconcile(NOTE, found)
    suspects = [Suspect(NOTE[s.start:s.end], s.label) for s in spans]
    assert find_leaks(NOTE, suspects, [(s.start, s.end) for s in spans]) == {}
    assert find_leaks(NOTE, suspects) != {}  # the guard would see them


def test_when_occurrences_are_held_as_integers_then_merged_as_the_spans_would_be():
    # Occurrences keeps a million propagated places as integers; merged in
    # text order with the detectors' spans, the result must be what merging
    # the same PhiSpans would give (labels, sources, confidences included).
    found = Occurrences()
    found.add("DOCTOR", 0.4, [(30, 35), (0, 5), (12, 12)])  # an empty match is dropped
    found.add("PATIENT", 0.9, [(0, 5), (40, 48)])
    assert len(found) == 4
    assert [(s.start, s.end, s.label) for s in found.spans()] == [
        (0, 5, "DOCTOR"), (0, 5, "PATIENT"), (30, 35, "DOCTOR"), (40, 48, "PATIENT")]
    detected = merge_spans([PhiSpan(3, 9, "DOCTOR", "crf", 0.7),
                            PhiSpan(44, 46, "PATIENT", "rules:names", None)])
    assert with_occurrences(detected, found) == merge_spans(
        [*detected, *found.spans()])
    assert with_occurrences(detected, found)[0] == PhiSpan(
        0, 9, "DOCTOR", "crf+propagated", 0.9)
    assert with_occurrences(detected, Occurrences()) is detected
