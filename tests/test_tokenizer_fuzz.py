"""Property-based fuzzing: the tokenizer and every reader survive arbitrary input.

A nightly job meets bytes nobody planned for. These properties say what must
hold for ANY input: the tokenizer never raises and its offsets always cut
the text it was given; a reader never raises and yields only documents and
quarantine records (a bad record becomes data, never an exception).
"""

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.readers.formats import FORMATS, decode_text, read_records
from deid_pipeline.tokenizer import metric_tokens, token_spans, tokenize

FUZZ = settings(max_examples=500, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
READER_FUZZ = settings(max_examples=300, deadline=None,
                       suppress_health_check=[HealthCheck.too_slow])

# Text with the characters that have broken tokenizers elsewhere: surrogates
# never (str from bytes cannot hold them), but every category of code point,
# combining marks, zero-width and bidi controls, line separators, NUL.
_NASTY = st.sampled_from(
    ["\x00", "\r\n", "\r", "\u2028", "\u2029", "\u0085", "\u200b", "\u200d",
     "\u202e", "\ufeff", "\u00a0", "e\u0301", "\U0001f600", "\uff11", "\u0663",
     "_", "ǅ", "ß", "İ", "\u0345", "\t", "\x0b", "\x0c"]
)
TEXT = st.one_of(
    st.text(),
    st.lists(st.one_of(_NASTY, st.text(max_size=5)), max_size=40).map("".join),
)


def _check_tokens(text: str) -> None:
    tokens = tokenize(text)
    prev_end = 0
    for tok in tokens:
        assert text[tok.start : tok.end] == tok.text
        assert tok.start >= prev_end and tok.end > tok.start
        # Between tokens there is only whitespace: nothing is silently skipped.
        assert re.fullmatch(r"\s*", text[prev_end : tok.start])
        prev_end = tok.end
    assert re.fullmatch(r"\s*", text[prev_end:])
    assert token_spans(text) == [(t.start, t.end) for t in tokens]
    for start, end in metric_tokens(text):
        assert re.fullmatch(r"[A-Za-z0-9]+", text[start:end])


@FUZZ
@given(TEXT)
@example("")
@example("MRN12345 seen 7/22/2006\u2028call 617\u200b555-0142")
@example("\x00" * 10)
def test_when_any_text_tokenized_then_offsets_round_trip(text):
    _check_tokens(text)


@FUZZ
@given(st.binary(max_size=400))
@example(b"\xff\xfe\xc3(")
@example(b"\xef\xbb\xbf")
@example(b"\x81\x8d\x8f\x90\x9d")  # the five bytes cp1252 does not map
def test_when_any_bytes_decoded_and_tokenized_then_offsets_round_trip(data):
    text = decode_text(data)
    assert isinstance(text, str)
    text.encode("utf-8")  # never a lone surrogate: Parquet could not store it
    _check_tokens(text)


def _formats() -> list:
    params = []
    for fmt in ("auto",) + FORMATS:
        marks = ()
        if fmt == "hl7":
            try:
                import deid_pipeline.hl7.documents  # noqa: F401
            except ImportError as exc:
                marks = pytest.mark.skip(reason=f"HL7 reader not importable: {exc}")
        params.append(pytest.param(fmt, marks=marks))
    return params


# Bytes built from the pieces readers split on, so the fuzzer reaches past
# the first check of each format instead of failing it at byte one.
_PIECES = st.sampled_from(
    [b"MSH|^~\\&|", b"MSH|", b"PID|1||123^^^H^MR||DOE^JOHN|", b"OBR|1|", b"OBX|1|TX|||",
     b"NTE|1||", b"TXA|1|", b"FHS|^~\\&", b"BHS|", b"BTS|", b"|", b"^", b"~", b"\\",
     b"&", b"\\X0D\\", b"\\.br\\", b"\\H\\", b"\r", b"\n", b"\r\n", b"\x0b", b"\x1c",
     b"\x00", b"\xff", b"\xef\xbb\xbf", b"ORU^R01", b"ADT^A01", b"MDM^T02", b"2.5",
     b'{"id": "a", "text": "b"}', b'{"id": ', b'"text": ', b"}", b"{", b'"',
     b"START_OF_RECORD=1||||1||||\n", b"||||END_OF_RECORD", b"PAR1",
     b"Seen 7/22/2006 call 617-555-0142.", b" "]
)
BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.one_of(_PIECES, st.binary(max_size=4)), max_size=30).map(b"".join),
)


@READER_FUZZ
@pytest.mark.parametrize("fmt", _formats())
@given(data=BYTES, name=st.sampled_from(
    ["x.txt", "x.hl7", "x.jsonl", "x.parquet", "x.text", "x", ".hidden", "x.mllp"]))
@example(data=b"", name="x.txt")
@example(data=b"\x0bMSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBR|1\r",
         name="x.hl7")
def test_when_any_bytes_read_then_only_documents_or_quarantine(fmt, data, name):
    path = f"/in/{name}"
    records = list(read_records(path, data, fmt))
    for record in records:
        assert isinstance(record, (ClinicalDocument, QuarantineRecord))
        if isinstance(record, QuarantineRecord):
            assert record.error_message and record.error_type and record.stage
            assert isinstance(record.raw, bytes)
        else:
            assert isinstance(record.text, str) and isinstance(record.doc_id, str)
