"""Address surrogates that say nothing of the original: ZIP+4, PO boxes.

A ZIP+4 surrogate never keeps the original's ZIP5. The header seeds a ZIP+4
also as its ZIP5 (``seed.zip_forms``: reports write it so), and Safe Harbor
keeps the ZIP3: one draw in a hundred of the other two digits gave the ZIP5
back, and the message guard held the message back (an insurer's address in
IN1-5 of a real ADT capture). A street whose only
number is one digit (an insurer's ``PO BOX 7``) kept it and got a name in
front (``PEREZ PO BOX 7``): the guard found the original inside. Values are
Faker's; nothing is printed.
"""

from __future__ import annotations

from faker import Faker

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.tagger.dictionary import DictionaryDetector
from deid_pipeline.tagger.tagging import PhiTagger

TAGGER = PhiTagger([DictionaryDetector()])
REWRITER = Rewriter(mode="surrogate", key=b"zip-plus-four-test-key-0123456789")


def _adt(fake: Faker, n: int) -> tuple[str, str]:
    zip4 = fake.zipcode_plus4()
    text = (f"MSH|^~\\&|ADT|HOSP|||20240301080{n % 10}||ADT^A08|Z{n}|P|2.3\r"
            f"PID|1||{4400000 + n}^^^HOSP^MR||{fake.last_name().upper()}^"
            f"{fake.first_name().upper()}||19700101|F|||"
            f"{fake.building_number()} {fake.street_name()}^^{fake.city()}^"
            f"{fake.state_abbr()}^{zip4}\r")
    return text, zip4


def test_when_zip_plus_four_is_replaced_then_its_zip5_is_not_kept():
    fake = Faker("en_US")
    fake.seed_instance(44)
    kept, written = 0, 0
    for n in range(300):
        text, zip4 = _adt(fake, n)
        result = deidentify_message(text, TAGGER, REWRITER, f"m{n}.hl7")
        written += result.ok
        kept += result.ok and zip4[:5] in result.er7
    assert (written, kept) == (300, 0)


def test_when_an_insurer_has_a_one_digit_po_box_then_the_digit_is_replaced():
    fake = Faker("en_US")
    fake.seed_instance(45)
    kept, written = 0, 0
    for n in range(100):
        box = f"PO BOX {fake.random_int(0, 9)}"
        text = (f"MSH|^~\\&|ADT|HOSP|||202403010800||ADT^A08|Y{n}|P|2.3\r"
                f"PID|1||{4500000 + n}^^^HOSP^MR||{fake.last_name().upper()}^"
                f"{fake.first_name().upper()}||19700101|F\r"
                f"IN1|1|PPO|44^^^PAYER|{fake.company()}|{box}^^{fake.city()}^"
                f"{fake.state_abbr()}^{fake.zipcode()}\r")
        result = deidentify_message(text, TAGGER, REWRITER, f"b{n}.hl7")
        written += result.ok
        kept += result.ok and f"|{box}^" in result.er7
    assert (written, kept) == (100, 0)
