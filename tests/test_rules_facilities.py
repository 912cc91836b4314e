"""Hospitals, places and identifiers as other genres write them (issue 28).

Values come from Faker (seeded), never from the genre set's pools, so these
tests say the rules are generic shapes; each table has negative rows of
clinical text with the same shape.
"""

from __future__ import annotations

import pytest
from faker import Faker
from test_rules import _check

from deid_pipeline.tagger.rules import RuleDetector


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector()


def _fake(seed: int) -> Faker:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return fake


# Letters that are also units (litres, hours, grams, units, times, metres).
CHECK_LETTERS = ("L", "H", "G", "U", "X", "M")


@pytest.mark.parametrize("letter", CHECK_LETTERS)
@pytest.mark.parametrize(("cue", "label"), [
    ("Acct", "ACCOUNT"), ("Member ID", "HEALTHPLAN"), ("RECORD #:", "MEDICALRECORD")])
def test_when_long_id_ends_in_unit_letter_then_tagged(detector, letter, cue, label):
    """``113374-L`` is an account with a check letter, not 113,374 litres."""
    fake = _fake(ord(letter))
    digits = fake.numerify("%#####" + "#" * (ord(letter) % 3))
    value = f"{digits}-{letter}"
    _check(detector, "id_near", f"{cue} {value}. Follow up", [(value, label)])


def _initialism(fake: Faker, ending: str) -> str:
    """A facility initialism of a Faker town (``Lake Jennifer`` -> ``LJMC``)."""
    return "".join(w[0] for w in fake.city().split()).upper() + ending


@pytest.mark.parametrize(("seed", "ending"), [(1, "MC"), (2, "H"), (3, "HC"),
                                              (4, "MH"), (5, "GH"), (6, "MC")])
@pytest.mark.parametrize("before", ["transferred to ", "outside films from ",
                                    "Referred by Dr. {last} of ", "seen at "])
def test_when_initialism_after_facility_cue_then_hospital(detector, seed, ending,
                                                          before):
    """``films from KWMC``: an initialism ending as facilities' do, after a cue."""
    fake = _fake(seed)
    name = _initialism(fake, ending)
    text = before.format(last=fake.last_name()) + name + " for review."
    _check(detector, "facilities", text, [(name, "HOSPITAL")])


@pytest.mark.parametrize("seed", range(5))
def test_when_town_before_va_or_after_hospital_of_then_tagged(detector, seed):
    """``from Lake Jennifer VA``, ``Mercy Hospital of Lake Jennifer``: the town."""
    fake = _fake(seed)
    town = fake.city()
    _check(detector, "facilities", f"outside films from {town} VA today",
           [(town, "HOSPITAL")])
    _check(detector, "facilities", f"Sent from Mercy Hospital of {town}.",
           [(town, "HOSPITAL")])
    doctor = f"{fake.first_name()} {fake.last_name()}".upper()
    _check(detector, "facilities",
           f"FOLLOWED AT UNIVERSITY HOSPITAL OF {town.upper()} BY {doctor} MD",
           [(town.upper(), "HOSPITAL")])
    upper = town.upper()
    _check(detector, "facilities", f"CARE RECEIVED @ {upper} VA.",
           [(upper, "HOSPITAL")])


@pytest.mark.parametrize("seed", range(5))
def test_when_two_surnames_before_clinic_then_hospital(detector, seed):
    """``Pruitt & Lowe Clinic``: both names; the practice noun is left out."""
    fake = _fake(seed)
    a, b = fake.last_name(), fake.last_name()
    for text, value in ((f"seen at {a} & {b} Clinic yesterday", f"{a} & {b}"),
                        (f"{a.upper()} & {b.upper()} ASSOCIATES",
                         f"{a.upper()} & {b.upper()}"),
                        (f"f/u with {a} and {b} Medical Group", f"{a} and {b}")):
        _check(detector, "facilities", text, [(value, "HOSPITAL")])


@pytest.mark.parametrize("name", ["Wexner", "Lahey", "Geisinger", "Marshfield",
                                  "Kellogg", "Ochsner"])
def test_when_a_name_and_a_clinic_noun_follow_a_cue_then_hospital(detector, name):
    """``at the Wexner heart clinic``: the name, not the noun nor the care.

    Names of real clinics and centres: surnames or words English rarely uses
    (a common word, ``at the Young clinic``, is left to the model).
    """
    for text, value in ((f"f/u at the {name} heart clinic on 10/23", name),
                        (f"referred to {name} Clinic for second opinion", name),
                        (f"SEEN AT THE {name.upper()} EYE CENTER", name.upper())):
        if len(name) < 6 and value.isupper():
            continue  # short capitals in a line of capitals: a service's letters
        _check(detector, "facilities", text, [(value, "HOSPITAL")])


@pytest.mark.parametrize(("text", "expected"), [
    ("REFERRED BY DR. ADAMS OF ST. JOHN'S.", [("ST. JOHN'S", "HOSPITAL")]),
    ("transferred to St Paul for cath", [("St Paul", "HOSPITAL")]),
    ("HR 110, NSR to ST low 100's", []),
    ("ST changes in V2-V4, ST elevation", []),
])
def test_when_saint_with_possessive_or_cue_then_hospital(detector, text, expected):
    """A common first name after ``St`` is a hospital with a possessive or a cue."""
    _check(detector, "institutions", text, expected)


# Codes no English or clinical word shares (see places._AMBIGUOUS_CODES).
PLAIN_CODES = ("WI", "TX", "MN", "IA", "ND", "NJ", "NY", "FL", "KY", "AZ")


@pytest.mark.parametrize("seed", range(6))
def test_when_titled_town_and_plain_state_code_after_cue_then_tagged(detector, seed):
    """``resident of Clam Lake, WI``: a code no word shares vouches for the town."""
    fake = _fake(seed)
    town, code = fake.city(), PLAIN_CODES[seed]
    for text, city in ((f"62 y/o resident of {town}, {code} admitted", town),
                       (f"PT FROM {town.upper()}, {code} FOR CP", town.upper())):
        _check(detector, "residence", text, [(city, "CITY"), (code, "STATE")])


@pytest.mark.parametrize("seed", range(6))
def test_when_address_ends_in_state_and_zip_then_town_state_zip(detector, seed):
    """``Parkville, MD 20999``: the tail of a Faker address line."""
    fake = _fake(seed)
    street, town = fake.street_address(), fake.city()
    code = fake.state_abbr(include_territories=False,
                           include_freely_associated_states=False)
    zipcode = fake.zipcode()
    for text in (f"Home: {street}, {town}, {code} {zipcode}. Member ID on file",
                 f"HOME: {street.upper()}, {town.upper()}, {code} {zipcode}."):
        city = town.upper() if text.isupper() else town
        _check(detector, "address", text,
               [(city, "CITY"), (code, "STATE"), (zipcode, "ZIP")])
    # No comma before the code: a town must stand before it.
    _check(detector, "address", f"moved to {town} {code} {zipcode} with son",
           [(town, "CITY"), (code, "STATE"), (zipcode, "ZIP")])


def test_when_no_town_and_no_comma_before_a_code_and_five_digits_then_no_address(
        detector):
    _check(detector, "address", "given MA 12345 units; ICU MD 12345", [])


@pytest.mark.parametrize("seed", range(6))
def test_when_patient_header_field_then_name_tagged(detector, seed):
    """``Patient: Brown, DOB ...``: a labelled header field's name, common or not."""
    fake = _fake(seed)
    first, last = fake.first_name(), fake.last_name()
    dob = fake.date_of_birth().strftime("%m/%d/%Y")
    for text, value in ((f"Patient: {last}, DOB {dob}. MRN on file", last),
                        (f"PT: {last.upper()}, {first.upper()}   MRN 1234567",
                         f"{last.upper()}, {first.upper()}"),
                        (f"Date: {dob}   Pt: {first} {last[0]}.\nHISTORY: fall",
                         f"{first} {last[0]}.")):
        _check(detector, "patient_field", text, [(value, "PATIENT")])


@pytest.mark.parametrize("seed", range(4))
def test_when_id_has_check_letter_or_patient_word_then_tagged(detector, seed):
    """``MED REC NO.: 320215-M``; ``Pt: Ryan Hess   146963954-C`` (no ID word)."""
    fake = _fake(seed)
    digits, letter = fake.numerify("%#####"), fake.random_uppercase_letter()
    value = f"{digits}-{letter}"
    _check(detector, "id", f"MED REC NO.: {value}\nADMITTED",
           [(value, "MEDICALRECORD")])
    coded = f"{fake.lexify('??').upper()}-{fake.numerify('%######')}"
    _check(detector, "id_near", f"Pt: {fake.name()}   {coded}\nHISTORY: fall",
           [(coded, "MEDICALRECORD")])


# Clinical text with the shapes above, per recognizer: nothing is tagged.
NEGATIVE_ROWS = [
    # id_near: doses and volumes keep their units (fewer than six digits).
    ("id_near", "plan: NS 1000-L over 8 hr"),
    ("id_near", "per ID plan heparin 25000-u/250"),
    ("id_near", "plan 2000-cc"),
    # facilities: abbreviations, units, services and visual acuity.
    ("facilities", "hx of ETOH abuse, hx of LVH, from PMH; returned from OSH"),
    ("facilities", "RETURNED FROM CATH LAB AT NOON; ADMITTED TO CCU VIA THE CATH LAB"),
    ("facilities", "RATE TO PH 7.30, to NPH 10 units, PT FROM WITH FAMILY"),
    ("facilities", "referred to Heart & Vascular Clinic; ENT & Allergy Associates"),
    ("facilities", "VA 20/40 OU; left VA improved; Hospital of choice per family"),
    ("facilities", "patient and family group meeting"),
    # clinics named for their care, not for a person or a place.
    ("facilities", "f/u at the Dermatology Clinic, at the Coumadin clinic, at "
                   "the Wound Center, at the Infusion Center, at the Women's "
                   "Health Center"),
    ("facilities", "FOLLOWS AT THE CHF CLINIC AND AT THE ENT CLINIC"),
    # capitals in a line of capitals say nothing (nursing notes).
    ("facilities", "PT TRANSFERRED TO KWMC FOR CATH"),
    # residence: a unit before the comma, or a code that is also a word (MS).
    ("residence", "transferred from ICU, NY aware"),
    ("residence", "FROM CCU, TX TEAM AWARE"),
    ("residence", "from Cath, MN"),
    ("residence", "from West, MS admitted"),
    # address: vitals and labs; no state code between a comma and five digits.
    ("address", "bp 120/80, HR 88, IN 12345"),
    ("address", "plt 150, ph 7.35, PT 12345"),
    ("address", "tx from OSH, XY 12345"),
    ("address", "pt weighs 80 kg, DM 12345"),
    # patient_field: findings and orders after "Pt:" are no names.
    ("patient_field", "Pt: Alert and oriented x3, MAE"),
    ("patient_field", "Name: Unknown"),
    ("patient_field", "Pt: Stable overnight."),
    ("patient_field", "PT: NPO AFTER MIDNIGHT"),
    ("patient_field", "Patient: Afebrile   Vitals: stable"),
]


@pytest.mark.parametrize(("recognizer", "text"), NEGATIVE_ROWS)
def test_when_clinical_text_has_the_shape_then_not_tagged(detector, recognizer, text):
    """Doses, units, abbreviations, services and findings keep their words."""
    _check(detector, recognizer, text, [])


def _letters(fake: Faker, n: int) -> str:
    """A hospital's letters from a Faker town and company (``Lake Jen`` -> ``LJ``)."""
    words = (fake.city() + " " + fake.company()).replace("-", " ").split()
    return "".join(w[0] for w in words if w[0].isalpha())[:n].upper()


# Seeds whose letters are no common word, unit or state code (seed 0 draws SS).
@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("before", [
    "Pt was transferred to {x} for cath.", "47 yo man admitted to {x} w/ chest pain.",
    "TRANS TO {x} 5/6. DOPAMINE WEANED.",
    "He was med-flighted to {x} and went to cath.",
    "PT RECENTLY ADM TO THE {x} FOR SBO.", "referred to {x} for second opinion",
    "transfered from {x} after arrest"])
def test_when_letters_follow_a_transfer_verb_then_hospital(detector, seed, before):
    """``transferred to RJ``: the verb says facility, whatever the letters."""
    fake = _fake(100 + seed)
    letters = _letters(fake, 2 + seed % 3)
    _check(detector, "transfers", before.format(x=letters), [(letters, "HOSPITAL")])


@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("shape", ["PCP: Dr. {i}. {last} of {x}.",
                                   "seen by dr {i}. {last} at {x}?",
                                   "Referred by Dr {first} {last} from {x} for review"])
def test_when_letters_follow_a_doctors_name_then_hospital(detector, seed, shape):
    fake = _fake(200 + seed)
    letters = _letters(_fake(100 + seed), 2 + seed % 3)
    text = shape.format(i=fake.first_name()[0], first=fake.first_name(),
                        last=fake.last_name(), x=letters)
    _check(detector, "transfers", text, [(letters, "HOSPITAL")])


@pytest.mark.parametrize("seed", range(1, 5))
@pytest.mark.parametrize("shape", ["Transfer to {w} {n} for further care.",
                                   "plan: {W} {n} this am, pain control",
                                   "Per {w} {n} RN, UO only 20cc"])
def test_when_a_building_and_a_floor_follow_a_transfer_then_ward(detector, seed, shape):
    """``transfer to Quartermain 2``: a building named after a town or a donor."""
    fake = _fake(300 + seed)
    word = fake.last_name()
    text = shape.format(w=word, W=word.upper(), n=1 + seed)
    value = word.upper() if "{W}" in shape else word
    _check(detector, "transfers", text, [(value, "HOSPITAL")])


def test_when_a_unit_dose_or_setting_has_a_number_then_no_ward(detector):
    _check(detector, "transfers",
           "plan: Lasix 40 iv; transfer to Tele 4; per PS 5; "
           "per protocol 2; plan: CT 2 days; transferred to bed 2", [])


def test_when_a_doctor_is_of_a_service_then_not_tagged(detector):
    _check(detector, "transfers",
           "Dr. Smith of GI aware; Dr K at HS; Dr. Lee of renal; "
           "Dr Jones at bedside", [])
    # What a doctor did is no name: ``Dr. aware of BP``.
    _check(detector, "transfers",
           "dr. aware of bp; Dr aware of HR; DR NOTIFIED OF UO; dr. paged at hs", [])


@pytest.mark.parametrize(("text", "value"), [
    ("pt was transferred to da for treatment.", "da"),
    ("REFERRED TO rj. ARRIVED IN TRANSFER", "rj"),
    ("admitted to bx w/ sudden onset cp", "bx"),
    ("neuro: alert, knows he is in kw, that it is march", "kw"),
    ('S: "I know I\'m in TJ and it is 2016."', "TJ"),
    ('s/o: "i\'m at the mhb." pt now oriented', "mhb")])
def test_when_letters_are_written_in_lower_case_or_said_then_they_count_too(
        detector, text, value):
    """Staff write letters in lower case too; orientation says where one is."""
    _check(detector, "transfers", text, [(value, "HOSPITAL")])


@pytest.mark.parametrize(("text", "value"), [
    ("PT SENT TO ED AT RJ. WAS SOMNOLENT", "RJ"),
    ("BROUGHT TO KW ER + FOR MI.", "KW"),
    ("RI AMI, to TJ cath lab, 3VD", "TJ")])
def test_when_letters_stand_beside_a_hospital_part_then_hospital(detector, text, value):
    _check(detector, "facilities", text, [(value, "HOSPITAL")])


@pytest.mark.parametrize("text", [
    "Pt transferred to MICU, then to OR, then to CCU; sent to CT and IR.",
    "PT TRANSFERRED TO ICU FROM ED. SENT TO CT. BROUGHT TO OR.",
    "Pt admitted to CSRU s/p CABG. Tx to floor. Discharged to home with VNA.",
    "transferred to rehab, sent to snf, brought to ew.",
    "Discharged to SNF. Sent to EP lab. Referred to PT and OT.",
    "INTUBATED AND TRANSFERRED TO THE MCIU. plan: ? transfer to vicu",
    "Spec sent to BB on hold. Referred to him and to us.",
    "Was transferred to Ms Lee's care; referred to dr lee; knows he is in pain",
    "Transferred to MA with family",  # a state code is the residence rule's
])
def test_when_a_transfer_verb_leads_to_a_unit_then_not_tagged(detector, text):
    _check(detector, "transfers", text, [])


@pytest.mark.parametrize(("text", "expected"), [
    ("PT CONSIDERING DNR. SEEN BY LEQO NURSE FOR ARRANGEMENTS", [("LEQO", "HOSPITAL")]),
    ("seen by kwmc liaison for rehab screening", [("kwmc", "HOSPITAL")]),
    # The nurses a unit or a service sends are not an institution's.
    ("SEEN BY VNA NURSE; seen by IV nurse; evaluated by PICC RN; seen by CHF nurse",
     []),
])
def test_when_letters_name_who_sent_a_nurse_then_hospital(detector, text, expected):
    """``SEEN BY GBMC NURSE``: an agency's or hospital's letters before its nurse."""
    _check(detector, "transfers", text, expected)
