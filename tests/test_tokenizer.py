"""The one tokenizer: offsets must always point back at the original text."""

import pytest
from hypothesis import example, given
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


_ANY_TEXT = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=300),
    st.text(max_size=300),
    st.lists(st.sampled_from(
        ["a", "Z", "1", " ", "_", "-", "\u2019", "\u00e9", "e\u0301", "\u00b2",
         "\u0663", "\uff11", "\u00a0", "\u2028", "\ud800", "\U0001f600", "\u00df",
         "\u0130", "\u01c5", "\u00ba", "\x1c"]), max_size=60).map("".join),
)


@given(_ANY_TEXT)
@example("Paciente de 87 a\u00f1os, n\u00ba hist\u00f3rico 12345, Dra. Mu\u00f1oz")
@example("x\u00b2 + PT\u2019S 3\u0663\uff11\ud800")
def test_when_any_text_then_the_fast_cut_is_the_expressions(text):
    # Text is cut from character classes with numpy, not match by match (beyond
    # ASCII each distinct character's class is asked of re): every control
    # character, blank, symbol, superscript and foreign digit must come out as
    # re cuts it.
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
