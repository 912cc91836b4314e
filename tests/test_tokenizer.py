"""The one tokenizer: offsets must always point back at the original text."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deid_pipeline.tokenizer import _TOKEN, metric_tokens, token_spans, tokenize


@pytest.mark.parametrize(
    "text, expected",
    [
        ("MRN12345", ["MRN", "12345"]),
        ("7/22/2006", ["7", "/", "22", "/", "2006"]),
        ("Dr. O'Brien", ["Dr", ".", "O", "'", "Brien"]),
        ("  BP 120/80\r\n", ["BP", "120", "/", "80"]),
        ("Zoë Müller", ["Zoë", "Müller"]),
        ("", []),
        ("a_b", ["a", "_", "b"]),
    ],
)
def test_when_text_is_tokenized_then_letters_digits_and_symbols_split(text, expected):
    assert [t.text for t in tokenize(text)] == expected


@given(st.text(max_size=300))
def test_when_any_text_then_offsets_round_trip(text):
    tokens = tokenize(text)
    assert all(text[t.start : t.end] == t.text for t in tokens)
    assert [(t.start, t.end) for t in tokens] == token_spans(text)
    # Tokens cover every non-space character exactly once, in order.
    covered = "".join(t.text for t in tokens)
    assert covered == "".join(text.split())


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_when_ascii_text_then_the_fast_cut_is_the_expressions(text):
    # ASCII text is cut from character classes with numpy, not match by match:
    # every control character, blank and symbol must come out as re cuts it.
    assert tokenize(text) == [(m[0], *m.span()) for m in _TOKEN.finditer(text)]
    assert token_spans(text) == [m.span() for m in _TOKEN.finditer(text)]


def test_when_metric_tokens_then_alnum_runs_only():
    text = "Seen 7/22 by Dr. Smith-Jones, MRN12345."
    assert [text[s:e] for s, e in metric_tokens(text)] == [
        "Seen",
        "7",
        "22",
        "by",
        "Dr",
        "Smith",
        "Jones",
        "MRN12345",
    ]
