"""The whole-message leak guard of HL7 write-back (issue 18).

It reads every field, component and subcomponent of the output message,
rewritten fields included, against every value seeded from the header and
every value removed from the narrative.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger([DictionaryDetector()])
HEAD = ("MSH|^~\\&|LAB|H|||20240101||ORU^R01|G1|P|2.5\r"
        "PID|1||7712093^^^H^MR||QUENTIN^MIRABEL||19610314|F\r"
        "NK1|1|ASHGROVE^TOBIAS|SPO^Spouse^HL70063\r"
        "OBR|1|ORD5|FIL5|88304^SURG PATH^CPT|||20240101090000\r")


@dataclass(frozen=True)
class _EchoingRewriter(FakeRewriter):
    """Writes the spouse's real given name as the patient's surrogate surname."""

    def replace_value(self, value, label, pid, avoid=None):
        if value.upper() == "QUENTIN":
            return "TOBIAS"
        return super().replace_value(value, label, pid, avoid)


def test_when_a_rewritten_field_spells_an_original_then_quarantined():
    result = deidentify_message(HEAD + "OBX|1|TX|||Stable.\r", TAGGER,
                                _EchoingRewriter(), "g.hl7")
    (record,) = result.quarantined
    assert record.stage == "leak_guard"
    assert record.error_message == "RELATIVE value left in segment 2 (PID) field 5"


@pytest.mark.parametrize("extra,where", [
    # A name inside the text of a coded OBX-5 (CE), an EI and a CX component.
    ("OBX|1|CE|1234-5^INTERP^L||POS^Positive, called Tobias Ashgrove^L\r",
     "segment 5 (OBX) field 5"),
    ("OBX|1|TX|||Stable.\rSPM|1|S1&LAB^P2&LAB&Mirabel note\r",
     "segment 6 (SPM) field 2"),
    ("OBX|1|TX|||Stable.\rAL1|1||A1^per mother of Mirabel Quentin\r",
     "segment 6 (AL1) field 3"),
])
def test_when_a_seeded_name_stands_inside_a_component_then_quarantined(extra, where):
    result = deidentify_message(HEAD + extra, TAGGER, FakeRewriter(), "g.hl7")
    (record,) = result.quarantined
    assert record.stage == "leak_guard"
    assert record.error_message.endswith(f"value left in {where}")


def test_when_a_name_is_in_an_nte_then_it_is_rewritten_and_the_message_written():
    result = deidentify_message(HEAD + "NTE|1|L|Called Tobias Ashgrove at home.\r",
                                TAGGER, FakeRewriter(), "g.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    assert "tobias" not in result.er7.lower() and "ashgrove" not in result.er7.lower()


def test_when_control_id_spells_a_report_date_then_it_gets_a_surrogate():
    text = (HEAD.replace("|G1|", "|RAD-20240101-0042|")
            + "OBX|1|TX|||Stable.\r")
    result = deidentify_message(text, TAGGER, FakeRewriter(), "g.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    control = parse_message(result.er7).control_id
    assert "20240101" not in control and len(control) == len("RAD-20240101-0042")
    # The documents keep the input's id: the join key of both outputs.
    assert [d.doc_id for d in result.documents] == ["RAD-20240101-0042-1"]


def test_when_tag_mode_then_no_guard_since_originals_are_written_on_purpose():
    @dataclass(frozen=True)
    class _Tagging(FakeRewriter):
        mode: str = "tag"

    result = deidentify_message(HEAD + "OBX|1|TX|||Stable.\r", TAGGER, _Tagging(),
                                "g.hl7")
    assert result.ok


def test_when_a_doctors_initials_spell_the_message_type_then_still_written():
    # MORROW^MAX^DEAN seeds the initials "MDM"; MSH-9 is structure, not data.
    text = ("MSH|^~\\&|EHR|H|||20240101||MDM^T02^MDM_T02|G9|P|2.5\r"
            "PID|1||7712093^^^H^MR||QUENTIN^MIRABEL||19610314|F\r"
            "TXA|1|CN|TX|20240101||||||123^MORROW^MAX^DEAN\r"
            "OBX|1|TX|||Stable.\r")
    result = deidentify_message(text, TAGGER, FakeRewriter(), "g.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    assert parse_message(result.er7).message_type == "MDM^T02"


def test_when_an_old_age_is_also_a_lab_value_then_the_message_is_written():
    """A removed age (``100``) is no leak in a glucose of 100: numbers that short
    are left to each report's document guard, which knows its surrogates."""
    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.tagger.detectors import TaggerConfig, create

    tagger = PhiTagger(create(TaggerConfig(detectors=("rules", "dictionary"))))
    message = (HEAD + "OBX|1|TX|||Pt is a 100 year old woman, comfortable.\r"
               "OBX|2|NM|2345-7^GLUCOSE^LN||100|mg/dL|70-110\r")
    result = deidentify_message(message, tagger, Rewriter("surrogate", key=b"k" * 32),
                                "g.hl7")
    assert result.ok, result.quarantined
    assert "100 year old" not in result.er7
    assert "|100|mg/dL|" in result.er7
