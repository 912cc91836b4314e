"""Hostile input: nothing a file holds may raise out of read_hl7 or the write-back.

Arbitrary bytes, and real messages cut, spliced and sprinkled with
delimiters, control bytes and MLLP markers. Whatever is written must parse
with hl7apy, and every message must be accounted for.
"""

from __future__ import annotations

import os

from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_pipeline.hl7.documents import read_hl7
from deid_pipeline.hl7.framing import decode_message, frame_file
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_hl7_file
from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hl7")
SEEDS = [open(os.path.join(FIXTURES, name), "rb").read()
         for name in ("oru_escapes.hl7", "oru_repetitions.hl7", "batch.hl7",
                      "mllp.mllp", "lf_terminators.hl7")]
TAGGER = PhiTagger([DictionaryDetector()])
REWRITER = FakeRewriter()
SETTINGS = settings(max_examples=int(os.environ.get("HL7_FUZZ_EXAMPLES", "60")),
                    deadline=None,
                    derandomize=not os.environ.get("HL7_FUZZ_EXAMPLES"),
                    suppress_health_check=[HealthCheck.too_slow])

_NOISE = st.sampled_from([b"|", b"^", b"~", b"\\", b"&", b"\r", b"\n", b"\x0b",
                          b"\x1c", b"\x00", b"\xff\xfe", b"MSH|", b"\\X4\\",
                          b"\\.br", b"OBX|1|TX|||", b"\xc3", b"FHS|", b"BTS|9"])


@st.composite
def mangled(draw) -> bytes:
    """A real message file with cuts, splices and inserted delimiter noise."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 2))
        pos = draw(st.integers(0, len(data)))
        if op == 0:
            data[pos:pos] = draw(_NOISE)
        elif op == 1:
            del data[pos:pos + draw(st.integers(1, 40))]
        else:
            data = data[:pos]
    return bytes(data)


def _check_read(data: bytes) -> None:
    records = list(read_hl7("fuzz.hl7", data))
    for record in records:
        assert isinstance(record, ClinicalDocument | QuarantineRecord)


def _check_write(data: bytes) -> None:
    result = deidentify_hl7_file("fuzz.hl7", data, TAGGER, REWRITER)
    assert result.messages_in == result.messages_out + len(result.quarantined)
    for frame in frame_file(result.output).frames():
        assert frame.error is None
        text, _ = decode_message(frame.data)
        hl7apy_parse(text.replace("\n", "\r"),
                     validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=True)


@SETTINGS
@given(st.binary(max_size=400))
def test_when_bytes_are_arbitrary_then_nothing_raises(data):
    _check_read(data)
    _check_write(data)


@SETTINGS
@given(st.binary(max_size=200).map(lambda b: b"MSH|^~\\&|" + b))
def test_when_msh_is_followed_by_noise_then_nothing_raises(data):
    _check_read(data)
    _check_write(data)


@SETTINGS
@given(mangled())
def test_when_real_messages_are_mangled_then_output_still_parses(data):
    _check_read(data)
    _check_write(data)
