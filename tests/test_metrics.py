"""DESIGN.md's metrics against numbers computed by hand."""

import pytest

from deid_pipeline.evaluation.metrics import evaluate, is_bare_year
from deid_pipeline.model import PhiSpan


def span(text, sub, label, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(sub, start + 1)
    return PhiSpan(start, start + len(sub), label, "test")


TEXT = "Mr John Smith seen 7/22/2006 by Dr Lee in 1992 at Calvert."


def test_when_prediction_is_perfect_then_all_scores_are_one():
    gold = [span(TEXT, "John Smith", "PATIENT"), span(TEXT, "7/22/2006", "DATE")]
    result = evaluate([(TEXT, gold, gold)])
    assert result.all.binary_token.as_dict()["f1"] == 1.0
    assert result.all.strict_phrase.recall == 1.0


def test_when_tokens_missed_and_extra_then_binary_counts_by_hand():
    gold = [
        span(TEXT, "John Smith", "PATIENT"),
        span(TEXT, "7/22/2006", "DATE"),
        span(TEXT, "Lee", "DOCTOR"),
        span(TEXT, "1992", "DATE"),
    ]
    # Predicted: only "Smith", the date, and "seen" (a false positive).
    pred = [
        span(TEXT, "Smith", "PATIENT"),
        span(TEXT, "7/22/2006", "DATE"),
        span(TEXT, "seen", "PATIENT"),
    ]
    result = evaluate([(TEXT, gold, pred)])
    b = result.all.binary_token
    # Gold tokens: John Smith 7 22 2006 Lee 1992 = 7; found Smith 7 22 2006 = 4.
    assert (b.tp, b.fp, b.fn) == (4, 1, 3)
    assert b.precision == pytest.approx(4 / 5)
    assert b.recall == pytest.approx(4 / 7)
    # HIPAA: the bare year 1992 is ignored on both sides.
    h = result.hipaa.binary_token
    assert (h.tp, h.fp, h.fn) == (4, 1, 2)
    # Confusion and per-label recall.
    assert result.all.confusion[("PATIENT", "O")] == 1  # John
    assert result.all.confusion[("O", "PATIENT")] == 1  # seen
    assert result.all.label_recall()["DOCTOR"] == 0.0
    assert result.all.label_recall()["DATE"] == pytest.approx(3 / 4)


def test_when_phrase_boundaries_differ_then_strict_misses_and_relaxed_hits():
    gold = [span(TEXT, "John Smith", "PATIENT")]
    pred = [span(TEXT, "John", "PATIENT"), span(TEXT, "Smith", "DOCTOR")]
    result = evaluate([(TEXT, gold, pred)])
    strict = result.all.strict_phrase
    assert (strict.tp, strict.fp, strict.fn) == (0, 2, 1)
    relaxed = result.all.relaxed_phrase
    # Both predictions overlap a gold NAME (same category); the gold is found.
    assert relaxed.precision == 1.0 and relaxed.recall == 1.0


def test_when_label_category_differs_then_phrase_is_wrong_but_token_is_right():
    gold = [span(TEXT, "Calvert", "LOCATION")]
    pred = [span(TEXT, "Calvert", "DOCTOR")]
    result = evaluate([(TEXT, gold, pred)])
    assert result.all.binary_token.recall == 1.0
    assert result.all.strict_phrase.recall == 0.0
    hosp = evaluate([(TEXT, gold, [span(TEXT, "Calvert", "HOSPITAL")])])
    assert hosp.all.strict_phrase.recall == 1.0


@pytest.mark.parametrize(
    "value, bare",
    [
        ("1992", True),
        ("'92", True),
        ("92", True),
        ("7/22", False),
        ("July 1992", False),
    ],
)
def test_when_date_is_only_a_year_then_it_is_bare(value, bare):
    text = f"in {value} ok"
    assert is_bare_year(text, span(text, value, "DATE")) is bare


def test_when_no_spans_at_all_then_scores_are_defined():
    result = evaluate([("nothing here", [], [])])
    assert result.all.binary_token.precision == 1.0
    assert result.all.binary_token.recall == 1.0
    assert result.documents == 1
