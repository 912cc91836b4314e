"""Surrogates in a batch file avoid every original of the file, not of one message.

An auditor reads the whole file: a surrogate drawn for the second message's
clinician that spells the first message's patient's given name is a value of
that patient in the output. Every message of a file is now tagged before any
is rewritten, and the originals of all of them reach each rewrite
(``avoid``). Names are Faker's and never printed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from faker import Faker

from deid_pipeline.hl7.documents import build_documents, header_columns
from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_hl7_file, deidentify_message
from deid_pipeline.surrogates import Originals
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger([DictionaryDetector()])


def _names(seed: int) -> tuple[str, str, str, str]:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return (fake.last_name().upper(), fake.first_name().upper(),
            fake.last_name().upper(), fake.last_name().upper())


def _message(n: int, family: str, given: str, doctor: str) -> str:
    return (f"MSH|^~\\&|LAB|HOSP|||2024031{n}0800||ORU^R01|B{n}|P|2.5\r"
            f"PID|1||{7100000 + n}^^^HOSP^MR||{family}^{given}||1961031{n}|F\r"
            f"OBR|1|O{n}|F{n}|88304^SURG PATH^CPT|||2024031{n}0700|||||||||"
            f"{900 + n}^{doctor}^ALMA\r"
            "OBX|1|TX|||Specimen received in formalin.\r")


@dataclass(frozen=True)
class _PoolDraw(FakeRewriter):
    """Draws, for one clinician, a name that is another patient's, unless avoided.

    What a keyed pool draw does by chance; the real rewriter then draws
    again when ``avoid`` holds the drawn name.
    """

    clinician: str = ""
    drawn: str = ""

    def replace_value(self, value, label, pid, avoid=None):
        if value.upper() == self.clinician and not (
                avoid is not None and avoid.spelled_by(self.drawn)):
            return self.drawn.title()
        return super().replace_value(value, label, pid, avoid)


@pytest.mark.parametrize("seed", [2, 8, 13])
def test_when_a_batch_is_written_then_no_surrogate_spells_another_message(seed):
    family1, given1, doctor1, _ = _names(seed)
    family2, given2, doctor2, _ = _names(seed + 100)
    data = ("FHS|^~\\&|LAB|HOSP|||20240320\rBHS|^~\\&|LAB|HOSP|||20240320\r"
            + _message(1, family1, given1, doctor1)
            + _message(2, family2, given2, doctor2) + "BTS|2\rFTS|1\r").encode()
    rewriter = _PoolDraw(clinician=doctor2, drawn=given1)
    result = deidentify_hl7_file("batch.hl7", data, TAGGER, rewriter)
    assert (result.messages_in, result.messages_out) == (2, 2)
    leaked = given1.encode() in result.output.upper()
    assert not leaked


def test_when_one_message_is_sent_alone_then_only_its_originals_are_known():
    """The gateway sees one message at a time: the draw stands (nothing to avoid)."""
    family1, given1, _, _ = _names(5)
    family2, given2, doctor2, _ = _names(105)
    result = deidentify_message(_message(2, family2, given2, doctor2), TAGGER,
                                _PoolDraw(clinician=doctor2, drawn=given1), "m.hl7")
    assert result.ok
    drawn = given1 in result.er7.upper()
    assert drawn


def _pid7(er7: str) -> str:
    (pid,) = [s for s in er7.replace("\n", "\r").split("\r") if s.startswith("PID|")]
    return pid.split("|")[7]


@pytest.mark.parametrize("seed", [3, 21])
def test_when_a_shifted_birth_date_is_another_patients_then_only_its_year_is_written(
        seed):
    """One shift per person, never redrawn: a collision keeps the shifted year."""
    family1, given1, doctor1, _ = _names(seed)
    family2, given2, doctor2, _ = _names(seed + 100)
    second = _message(2, family2, given2, doctor2)
    alone = deidentify_message(second, TAGGER, FakeRewriter(), "m.hl7")
    shifted = _pid7(alone.er7)
    first = _message(1, family1, given1, doctor1).replace("|19610311|",
                                                         f"|{shifted}|")
    data = ("FHS|^~\\&|LAB|HOSP|||20240320\rBHS|^~\\&|LAB|HOSP|||20240320\r"
            + first + second + "BTS|2\rFTS|1\r").encode()
    result = deidentify_hl7_file("batch.hl7", data, TAGGER, FakeRewriter())
    assert (result.messages_in, result.messages_out) == (2, 2)
    out = result.output.decode()
    assert shifted not in out
    assert shifted[:4] in [_pid7(m) for m in out.split("MSH|")[1:]]


def test_when_a_shifted_birth_date_is_an_original_then_research_keeps_its_year():
    """The research extract's columns follow the header: the year, not the day."""
    family, given, doctor, _ = _names(34)
    (doc, *_) = build_documents(parse_message(_message(3, family, given, doctor)))
    rewriter = FakeRewriter()
    alone = dict(header_columns(doc, rewriter, "p-34"))
    shifted = alone["birth_date_shifted"].replace("-", "")
    avoid = Originals.of([(shifted, "DATE")])
    in_batch = dict(header_columns(doc, rewriter, "p-34", avoid))
    assert "birth_date_shifted" not in in_batch
    assert in_batch["birth_year"] == alone["birth_year"] == shifted[:4]
