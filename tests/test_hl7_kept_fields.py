"""One value, one surrogate in the fields write-back keeps (issue 29, second half).

Senders copy a birth date into a query's QPD-6, a report date into SFT-2, a
ZIP into MSH-17. Those fields are kept as they are, so the whole-message
guard found the original there and held the message back although the
value had a surrogate elsewhere. Now the copy gets the same surrogate.
Values are Faker's; assertions compare, never print them.
"""

from __future__ import annotations

import pytest
from faker import Faker

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger(create(TaggerConfig(detectors=("rules", "dictionary"))))
REWRITER = Rewriter("surrogate", key=b"kept-fields-test-key-0123456789ab")


def _person(seed: int) -> dict[str, str]:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return {"family": fake.last_name().upper(), "given": fake.first_name().upper(),
            "dob": fake.date_of_birth(minimum_age=30, maximum_age=80)
            .strftime("%Y%m%d"),
            "street": fake.street_address(), "city": fake.city(),
            "state": fake.state_abbr(), "zip": fake.zipcode(),
            "mrn": str(fake.random_number(digits=8, fix_len=True))}


def _field(er7: str, segment: str, number: int) -> str:
    seg = parse_message(er7).first(segment)
    return seg.get(number) if seg is not None else ""


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_when_a_query_copies_the_birth_date_then_it_gets_the_shifted_one(seed):
    p = _person(seed)
    text = ("MSH|^~\\&|IIS|IIS|||20240312101500||RSP^K11^RSP_K11|Q1|P|2.5.1\r"
            "MSA|AA|Q0\r"
            f"QPD|Z44^Request Evaluated History^CDCPHINVS|Q9|{p['mrn']}^^^MPI^MR|"
            f"{p['family']}^{p['given']}^^^^^L||{p['dob']}|F\r"
            f"PID|1||{p['mrn']}^^^MPI^MR||{p['family']}^{p['given']}^^^^^L||"
            f"{p['dob']}|F\r")
    result = deidentify_message(text, TAGGER, REWRITER, "q.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    leaked = p["dob"] in result.er7
    same = _field(result.er7, "QPD", 6) == _field(result.er7, "PID", 7)
    assert (leaked, same) == (False, True)


@pytest.mark.parametrize("seed", [5, 17])
def test_when_sft2_spells_a_date_of_the_report_then_it_gets_the_same_surrogate(seed):
    p = _person(seed)
    text = ("MSH|^~\\&|LAB|H|||20240312101500||ORU^R01|S1|P|2.5.1\r"
            "SFT|Acme Lab Systems|03/05/2024|LabWare|4.1\r"
            f"PID|1||{p['mrn']}^^^H^MR||{p['family']}^{p['given']}||{p['dob']}|F\r"
            "OBR|1|ORD1|FIL1|88304^SURG PATH^CPT|||20240312090000\r"
            "OBX|1|TX|||Specimen received 03/05/2024, grossed the same day.\r")
    result = deidentify_message(text, TAGGER, REWRITER, "s.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    shifted = _field(result.er7, "SFT", 2)
    found = ("03/05/2024" in result.er7, bool(shifted),
             shifted in _field(result.er7, "OBX", 5))
    assert found == (False, True, True)


@pytest.mark.parametrize("seed", [7, 23])
def test_when_msh17_holds_the_patients_zip_then_it_gets_the_zip_surrogate(seed):
    p = _person(seed)
    text = (f"MSH|^~\\&|ADT|H|||20240312101500||ADT^A04|A1|P|2.5|||AL|NE|{p['zip']}\r"
            "EVN|A04|20240312101500\r"
            f"PID|1||{p['mrn']}^^^H^MR||{p['family']}^{p['given']}||{p['dob']}|F|||"
            f"{p['street']}^^{p['city']}^{p['state']}^{p['zip']}\r")
    result = deidentify_message(text, TAGGER, REWRITER, "z.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    address = _field(result.er7, "PID", 11).split("^")
    same = _field(result.er7, "MSH", 17) == address[4]
    assert (same, address[4] == p["zip"]) == (True, False)


def test_when_the_copy_stands_inside_a_longer_leaf_then_still_quarantined():
    p = _person(41)
    text = ("MSH|^~\\&|IIS|IIS|||20240312101500||RSP^K11^RSP_K11|Q1|P|2.5.1\r"
            f"QPD|Z44^Request^CDCPHINVS|Q9|{p['mrn']}^^^MPI^MR||"
            f"born {p['dob']} per mother|F\r"
            f"PID|1||{p['mrn']}^^^MPI^MR||{p['family']}^{p['given']}||{p['dob']}|F\r")
    result = deidentify_message(text, TAGGER, REWRITER, "q.hl7")
    (record,) = result.quarantined
    assert record.stage == "leak_guard"
    assert "segment 2 (QPD) field 5" in record.error_message
