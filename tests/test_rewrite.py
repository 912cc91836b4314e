"""rewrite(): operators, right-to-left offsets, audit records, failing closed."""
# ruff: noqa: D103  (test names say what each test checks)

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_pipeline.model import PhiSpan, Replacement
from deid_pipeline.rewrite import (
    OPERATORS,
    Operator,
    RewriteContext,
    make_operator,
    mask,
    register_operator,
    rewrite,
)

KEY = b"0123456789abcdef0123456789abcdef"
CTX = RewriteContext(key=KEY, person_id="a1b2c3d4e5f6a7b8c9d0", as_of_year=2025)
TEXT = "John Smith seen 07/22/2006 by Dr. Hayes; call 410-322-1419 re MRN 0012345."


def span(text: str, needle: str, label: str) -> PhiSpan:
    start = text.index(needle)
    return PhiSpan(start, start + len(needle), label, "test", 1.0)


SPANS = (span(TEXT, "John Smith", "PATIENT"), span(TEXT, "07/22/2006", "DATE"),
         span(TEXT, "Hayes", "DOCTOR"), span(TEXT, "410-322-1419", "PHONE"),
         span(TEXT, "0012345", "MEDICALRECORD"))


class Explodes(Operator):
    """Raises for PHONE spans, redacts the rest: a stand-in for a failing generator."""

    name = "explodes-for-tests"

    def apply(self, value, span, ctx):  # noqa: D102 - the class docstring says it
        if span.label == "PHONE":
            raise RuntimeError(f"boom on {value}")
        return "X" * len(value)


def test_when_redact_then_label_masks_in_place():
    text, _ = rewrite(TEXT, SPANS, make_operator("redact"), CTX)
    assert text == ("[**PATIENT**] seen [**DATE**] by Dr. [**DOCTOR**]; "
                    "call [**PHONE**] re MRN [**MEDICALRECORD**].")


def test_when_tag_then_value_wrapped_in_its_label():
    text, _ = rewrite(TEXT, SPANS[:1], make_operator("tag"), CTX)
    assert text.startswith("<PATIENT>John Smith</PATIENT> seen 07/22/2006")


def test_when_surrogate_then_no_original_survives_and_audit_is_complete():
    text, audit = rewrite(TEXT, SPANS, make_operator("surrogate"), CTX)
    for s in SPANS:
        assert TEXT[s.start:s.end] not in text
    assert [r.span for r in audit] == list(SPANS)
    assert [r.original for r in audit] == [TEXT[s.start:s.end] for s in SPANS]
    # Every replacement sits where the text says it does, in order.
    rebuilt, pos = [], 0
    for r in audit:
        rebuilt += [TEXT[pos:r.span.start], r.replacement]
        pos = r.span.end
    assert "".join(rebuilt) + TEXT[pos:] == text


def test_when_surrogate_twice_then_byte_identical():
    a = rewrite(TEXT, SPANS, make_operator("surrogate"), CTX)
    b = rewrite(TEXT, SPANS, make_operator("surrogate"),
                RewriteContext(key=KEY, person_id=CTX.person_id, as_of_year=2025))
    assert a == b


def test_when_spans_unsorted_then_audit_in_span_order():
    _, audit = rewrite(TEXT, tuple(reversed(SPANS)), make_operator("redact"), CTX)
    assert [r.span for r in audit] == sorted(SPANS)


def test_when_adjacent_spans_at_both_ends_then_offsets_hold():
    text = "AB"
    spans = (PhiSpan(0, 1, "PATIENT", "t"), PhiSpan(1, 2, "DATE", "t"))
    out, audit = rewrite(text, spans, make_operator("redact"), CTX)
    assert out == "[**PATIENT**][**DATE**]"
    assert audit == (Replacement(spans[0], "A", "[**PATIENT**]"),
                     Replacement(spans[1], "B", "[**DATE**]"))


def test_when_no_spans_then_text_unchanged():
    assert rewrite(TEXT, (), make_operator("surrogate"), CTX) == (TEXT, ())


def test_when_spans_overlap_then_value_error():
    spans = (PhiSpan(0, 10, "PATIENT", "t"), PhiSpan(5, 12, "DOCTOR", "t"))
    with pytest.raises(ValueError, match="overlapping"):
        rewrite(TEXT, spans, make_operator("redact"), CTX)


def test_when_span_beyond_text_then_value_error():
    with pytest.raises(ValueError, match="beyond"):
        rewrite("short", (PhiSpan(0, 10, "PATIENT", "t"),), make_operator("redact"),
                CTX)


def test_when_operator_raises_then_span_masked_not_kept(caplog):
    caplog.set_level("DEBUG", logger="deid_pipeline.rewrite")
    text, audit = rewrite(TEXT, SPANS, Explodes(), CTX)
    phone = next(r for r in audit if r.span.label == "PHONE")
    assert phone.replacement == mask("PHONE") == "[**PHONE**]"
    assert "410-322-1419" not in text and "[**PHONE**]" in text
    assert "XXXXX" in text  # the other spans went through the operator
    # The failure is logged by label and type only, never with the value.
    assert "410-322-1419" not in caplog.text and "boom" not in caplog.text


def test_when_operator_returns_non_text_then_span_masked():
    class ReturnsNone(Operator):
        name = "returns-none-for-tests"

        def apply(self, value, span, ctx):
            return None

    text, _ = rewrite("John", (PhiSpan(0, 4, "PATIENT", "t"),), ReturnsNone(), CTX)
    assert text == "[**PATIENT**]"


def test_when_surrogate_cannot_be_made_then_masked():
    text, audit = rewrite("on Thanksgiving", (PhiSpan(3, 15, "DATE", "t"),),
                          make_operator("surrogate"), CTX)
    assert text == "on [**DATE**]" and audit[0].replacement == "[**DATE**]"
    # A date span the tagger ran into a town: masked, the town not kept.
    note = "lives at 45 Elm St Apt 3, Dorchester MA"
    text, _audit = rewrite(note, (span(note, "3, Dorchester", "DATE"),),
                           make_operator("surrogate"), CTX)
    assert text == "lives at 45 Elm St Apt [**DATE**] MA"


def test_when_limited_dataset_then_dates_kept_names_replaced():
    ctx = RewriteContext(key=KEY, person_id="p", policy="limited-dataset")
    text, _ = rewrite(TEXT, SPANS, make_operator("surrogate"), ctx)
    assert "07/22/2006" in text and "John Smith" not in text


def test_when_operator_name_unknown_then_value_error():
    with pytest.raises(ValueError, match="unknown operator"):
        make_operator("encrypt")
    assert {"redact", "tag", "surrogate"} <= set(OPERATORS)


def test_when_operator_gets_parameters_it_does_not_take_then_rejected_at_construction():
    with pytest.raises(ValueError, match="no parameters"):
        make_operator("redact", template="xx")


def test_when_operator_registered_twice_then_value_error():
    with pytest.raises(ValueError, match="twice"):
        register_operator(type("Again", (Operator,), {"name": "redact",
                                                      "apply": lambda *a: ""}))


def test_when_context_printed_then_key_not_shown():
    assert KEY.decode() not in repr(CTX) and "key" not in repr(CTX)


@pytest.mark.parametrize("kwargs", [
    {"policy": "everything"}, {"key": b""}, {"min_shift_days": 10, "max_shift_days": 5},
])
def test_when_context_invalid_then_value_error(kwargs):
    with pytest.raises(ValueError):
        RewriteContext(**{"key": KEY, "person_id": "p", **kwargs})


def test_when_operator_and_context_pickled_then_they_still_work():
    op, ctx = pickle.loads(pickle.dumps((make_operator("surrogate"), CTX)))
    fresh = rewrite(TEXT, SPANS, make_operator("surrogate"), CTX)
    assert rewrite(TEXT, SPANS, op, ctx) == fresh


@st.composite
def text_and_spans(draw):
    text = draw(st.text(alphabet="abc XYZ019-/.", min_size=1, max_size=60))
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=8)))
    spans = [PhiSpan(a, b, draw(st.sampled_from(["PATIENT", "DATE", "ZIP"])), "t")
             for a, b in zip(cuts[::2], cuts[1::2]) if a < b]
    return text, draw(st.permutations(spans))


@settings(max_examples=100, deadline=None)
@given(case=text_and_spans())
def test_when_random_spans_then_right_to_left_equals_left_to_right(case):
    text, spans = case
    out, audit = rewrite(text, spans, make_operator("redact"), CTX)
    expected, pos = [], 0
    for s in sorted(spans):
        expected += [text[pos:s.start], f"[**{s.label}**]"]
        pos = s.end
    assert out == "".join(expected) + text[pos:]
    assert [r.original for r in audit] == [text[s.start:s.end] for s in sorted(spans)]


def test_when_the_as_of_year_is_pinned_then_ages_are_reckoned_from_it():
    import datetime

    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.run_options import build_parser
    from deid_pipeline.surrogates.dates import whole_years

    # A bare birth year is an age over 89 from 2026 on, not in 2020: from then
    # on it says the cut-off year; either way it moves by the whole years of
    # the person's shift.
    def year_of_birth(as_of_year):
        rewriter = Rewriter("surrogate", b"k" * 32, as_of_year=as_of_year)
        return rewriter.replace_value("1934", "DATE", "a1b2c3")

    years = whole_years(Rewriter("surrogate", b"k" * 32).date_offset("a1b2c3"))
    assert years < 0
    assert year_of_birth(2020) == str(1934 + years)
    assert year_of_birth(2040) == str(1950 + years)
    # Unpinned: this year, fixed when made, and carried to workers by pickling.
    rewriter = Rewriter("surrogate", b"k" * 32)
    assert rewriter.as_of_year == datetime.date.today().year
    assert pickle.loads(pickle.dumps(Rewriter("surrogate", b"k" * 32,
                                              as_of_year=2020))).as_of_year == 2020
    args = build_parser().parse_args(["--input", "x", "--output", "y",
                                      "--as-of-year", "2020"])
    assert args.as_of_year == 2020
    default = build_parser().parse_args(["--input", "x", "--output", "y"])
    assert default.as_of_year == datetime.date.today().year
