"""Which header fields hold PHI, and which parts of them: configuration, not code.

Fields are python-hl7-style accessor keys (``PID.5``) with their HL7 data
type; the data type says which component/subcomponent is a family name, an
identifier, a street, a date... Seeding (header -> patient dictionary) and
write-back (header -> surrogates) both walk this one table, so a field that
feeds the dictionary is always a field that gets replaced.

Data types follow v2.5; for the versions around it the PHI components sit at
the same positions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from deid_pipeline.hl7.escapes import Delimiters, escape, unescape
from deid_pipeline.hl7.message import Hl7Message, Segment

__all__ = [
    "ENVELOPE_COUNT",
    "ENVELOPE_FACILITIES",
    "ENVELOPE_KEPT",
    "STRUCTURE_FIELDS",
    "PERSON_KINDS",
    "PERSON_SEGMENTS",
    "code_leaves",
    "kept_as_code",
    "reads_as_code",
    "HeaderField",
    "Leaf",
    "fields_of",
    "header_fields",
    "identifier_label",
    "kind_of_obx",
    "map_field",
    "map_leaves",
    "numbers_of",
    "repetitions",
]


@dataclass(frozen=True, slots=True)
class Leaf:
    """One PHI-bearing position inside a data type.

    ``role`` says how the value is expanded into dictionary forms and how it is
    replaced (``family``/``given``/``middle`` name parts, ``id``, ``date``,
    ``phone``...); ``label`` fixes the PHI label, else the field's label holds.
    ``authority`` and ``code`` leaves (assigning authorities, unit and bed
    codes) are replaced but not entered into the dictionary: they are codes,
    and as words (``PATH``, ``ECHO``, ``B``) they would match ordinary text.
    """

    component: int
    subcomponent: int
    role: str
    label: str | None = None


_NAME = (Leaf(1, 1, "family"), Leaf(2, 1, "given"), Leaf(3, 1, "middle"))
_XCN = (Leaf(1, 1, "id", "IDNUM"), Leaf(2, 1, "family"), Leaf(3, 1, "given"),
        Leaf(4, 1, "middle"), Leaf(9, 1, "authority", "HOSPITAL"),
        Leaf(14, 1, "authority", "HOSPITAL"))

KINDS: dict[str, tuple[Leaf, ...]] = {
    "XPN": _NAME,
    "XCN": _XCN,
    "PPN": (*_XCN, Leaf(15, 1, "date", "DATE")),
    # NDL: a CNN name packed into component 1 as subcomponents, then a location.
    "NDL": (Leaf(1, 1, "id", "IDNUM"), Leaf(1, 2, "family"), Leaf(1, 3, "given"),
            Leaf(1, 4, "middle"), Leaf(2, 1, "date", "DATE"),
            Leaf(3, 1, "date", "DATE"),
            Leaf(4, 1, "code", "DEPARTMENT"), Leaf(5, 1, "room", "ROOM"),
            Leaf(6, 1, "code", "ROOM"), Leaf(7, 1, "facility", "HOSPITAL"),
            Leaf(9, 1, "text", "LOCATION"), Leaf(10, 1, "code", "ROOM"),
            Leaf(11, 1, "text", "LOCATION")),
    "CX": (Leaf(1, 1, "id"), Leaf(4, 1, "authority", "HOSPITAL"),
           Leaf(6, 1, "authority", "HOSPITAL")),
    "XAD": (Leaf(1, 1, "street", "STREET"), Leaf(1, 2, "street", "STREET"),
            Leaf(1, 3, "street", "STREET"), Leaf(2, 1, "street", "STREET"),
            Leaf(3, 1, "city", "CITY"), Leaf(4, 1, "state", "STATE"),
            Leaf(5, 1, "zip", "ZIP"), Leaf(8, 1, "text", "LOCATION"),
            Leaf(9, 1, "text", "LOCATION")),
    "XTN": (Leaf(1, 1, "phone", "PHONE"), Leaf(4, 1, "email", "EMAIL"),
            Leaf(6, 1, "area", "PHONE"), Leaf(7, 1, "local", "PHONE"),
            Leaf(12, 1, "phone", "PHONE")),
    # PL: unit codes (ECHO, PATH, 4W), beds and floors are replaced but not
    # seeded: as words they are everywhere in reports and identify nobody.
    "PL": (Leaf(1, 1, "code", "DEPARTMENT"), Leaf(2, 1, "room", "ROOM"),
           Leaf(3, 1, "code", "ROOM"), Leaf(4, 1, "facility", "HOSPITAL"),
           Leaf(7, 1, "text", "LOCATION"), Leaf(8, 1, "code", "ROOM"),
           Leaf(9, 1, "text", "LOCATION")),
    "HD": (Leaf(1, 1, "facility"), Leaf(2, 1, "authority", "IDNUM")),
    "XON": (Leaf(1, 1, "org"), Leaf(3, 1, "id", "IDNUM"),
            Leaf(6, 1, "authority", "HOSPITAL"), Leaf(10, 1, "id", "IDNUM")),
    "EI": (Leaf(1, 1, "id"), Leaf(2, 1, "authority", "HOSPITAL")),
    "EIP": (Leaf(1, 1, "id"), Leaf(1, 2, "authority", "HOSPITAL"), Leaf(2, 1, "id"),
            Leaf(2, 2, "authority", "HOSPITAL")),
    "TS": (Leaf(1, 1, "date", "DATE"),),
    "DLN": (Leaf(1, 1, "id"), Leaf(3, 1, "date", "DATE")),
    "ST": (Leaf(1, 1, "text"),),
    # TQ quantity/timing: start and end date/time.
    "TQ": (Leaf(4, 1, "date", "DATE"), Leaf(5, 1, "date", "DATE")),
}


@dataclass(frozen=True, slots=True)
class HeaderField:
    """A PHI field: accessor key, data type, default label, and whether it seeds.

    Every listed field is replaced on write-back; ``seed`` False keeps it out of
    the message's patient dictionary (message timestamps: the rules find dates
    anyway, and a dictionary of every timestamp would only slow the tagger).
    A report's own dates (OBR-7/22, TXA-4/6) are added per document instead.
    """

    key: str
    kind: str
    label: str
    seed: bool = True
    segment: str = field(init=False)  # PID of PID.5
    number: int = field(init=False)  # 5 of PID.5

    def __post_init__(self) -> None:
        """Parse the key once: the walk over a message reads it per segment."""
        object.__setattr__(self, "segment", self.key[:3])
        object.__setattr__(self, "number", int(self.key[4:]))


def _f(key: str, kind: str, label: str = "IDNUM", seed: bool = True) -> HeaderField:
    return HeaderField(key, kind, label, seed)


def _ts(key: str, seed: bool = False) -> HeaderField:
    return HeaderField(key, "TS", "DATE", seed)


_LISTED: tuple[HeaderField, ...] = (
    _f("MSH.4", "HD", "HOSPITAL"), _f("MSH.6", "HD", "HOSPITAL"), _ts("MSH.7"),
    _ts("EVN.2"), _ts("EVN.3"), _f("EVN.5", "XCN", "DOCTOR"), _ts("EVN.6"),
    _f("EVN.7", "HD", "HOSPITAL"),
    _f("PID.2", "CX", "MEDICALRECORD"), _f("PID.3", "CX", "MEDICALRECORD"),
    _f("PID.4", "CX", "MEDICALRECORD"), _f("PID.5", "XPN", "PATIENT"),
    _f("PID.6", "XPN", "RELATIVE"), _ts("PID.7", seed=True),
    _f("PID.9", "XPN", "PATIENT"), _f("PID.11", "XAD", "LOCATION"),
    _f("PID.12", "ST", "LOCATION"), _f("PID.13", "XTN", "PHONE"),
    _f("PID.14", "XTN", "PHONE"), _f("PID.18", "CX", "ACCOUNT"),
    _f("PID.19", "ST", "SSN"), _f("PID.20", "DLN", "LICENSE"),
    _f("PID.21", "CX", "IDNUM"), _f("PID.23", "ST", "LOCATION"),
    _ts("PID.29", seed=True), _ts("PID.33"),
    _f("PD1.3", "XON", "HOSPITAL"), _f("PD1.4", "XCN", "DOCTOR"),
    _f("NK1.2", "XPN", "RELATIVE"), _f("NK1.4", "XAD", "LOCATION"),
    _f("NK1.5", "XTN", "PHONE"), _f("NK1.6", "XTN", "PHONE"), _ts("NK1.8"),
    _ts("NK1.9"), _f("NK1.13", "XON", "ORGANIZATION"), _ts("NK1.16"),
    _f("NK1.30", "XPN", "RELATIVE"), _f("NK1.31", "XTN", "PHONE"),
    _f("NK1.32", "XAD", "LOCATION"), _f("NK1.33", "CX", "IDNUM"),
    _f("NK1.37", "ST", "SSN"),
    _f("PV1.3", "PL", "LOCATION"), _f("PV1.6", "PL", "LOCATION"),
    _f("PV1.7", "XCN", "DOCTOR"), _f("PV1.8", "XCN", "DOCTOR"),
    _f("PV1.9", "XCN", "DOCTOR"), _f("PV1.11", "PL", "LOCATION"),
    _f("PV1.17", "XCN", "DOCTOR"), _f("PV1.19", "CX", "IDNUM"),
    _f("PV1.39", "HD", "HOSPITAL"), _f("PV1.42", "PL", "LOCATION"),
    _f("PV1.43", "PL", "LOCATION"), _ts("PV1.44", seed=True), _ts("PV1.45", seed=True),
    _f("PV1.50", "CX", "IDNUM"), _f("PV1.52", "XCN", "DOCTOR"),
    _f("PV1.5", "CX", "IDNUM"),  # preadmit number
    _ts("PV2.8"), _ts("PV2.9"), _f("PV2.13", "XCN", "DOCTOR"),  # referral source
    # Immunizations (VXU), charges (DFT) and appointments (SIU): when and by whom.
    _ts("RXA.3"), _ts("RXA.4"), _f("RXA.10", "XCN", "DOCTOR"), _ts("RXA.22"),
    _f("FT1.20", "XCN", "DOCTOR"), _f("FT1.21", "XCN", "DOCTOR"),
    _f("AIP.3", "XCN", "DOCTOR"),
    _f("ORC.2", "EI"), _f("ORC.3", "EI"), _f("ORC.4", "EI"),
    _f("ORC.7", "TQ", "DATE", seed=False),
    _ts("ORC.9"),
    _f("ORC.10", "XCN", "DOCTOR"), _f("ORC.11", "XCN", "DOCTOR"),
    _f("ORC.12", "XCN", "DOCTOR"), _f("ORC.13", "PL", "LOCATION"),
    _f("ORC.14", "XTN", "PHONE"), _ts("ORC.15"), _f("ORC.19", "XCN", "DOCTOR"),
    _f("ORC.21", "XON", "HOSPITAL"), _f("ORC.22", "XAD", "LOCATION"),
    _f("ORC.23", "XTN", "PHONE"), _f("ORC.24", "XAD", "LOCATION"),
    _f("OBR.2", "EI"), _f("OBR.3", "EI"), _ts("OBR.6"), _ts("OBR.7"),
    _ts("OBR.8"), _f("OBR.10", "XCN", "DOCTOR"), _ts("OBR.14"),
    _f("OBR.16", "XCN", "DOCTOR"), _f("OBR.17", "XTN", "PHONE"),
    _f("OBR.18", "ST"), _f("OBR.19", "ST"), _f("OBR.20", "ST"), _f("OBR.21", "ST"),
    _ts("OBR.22"), _f("OBR.27", "TQ", "DATE", seed=False),
    _f("OBR.28", "XCN", "DOCTOR"),
    _f("OBR.32", "NDL", "DOCTOR"), _f("OBR.33", "NDL", "DOCTOR"),
    _f("OBR.34", "NDL", "DOCTOR"), _f("OBR.35", "NDL", "DOCTOR"), _ts("OBR.36"),
    _ts("OBX.14"), _f("OBX.16", "XCN", "DOCTOR"), _ts("OBX.19"),
    _f("OBX.23", "XON", "HOSPITAL"), _f("OBX.24", "XAD", "LOCATION"),
    _f("OBX.25", "XCN", "DOCTOR"),
    _f("NTE.5", "XCN", "DOCTOR"), _ts("NTE.6"),
    _ts("TXA.4"), _f("TXA.5", "XCN", "DOCTOR"), _ts("TXA.6"),
    _ts("TXA.7"), _ts("TXA.8"), _f("TXA.9", "XCN", "DOCTOR"),
    _f("TXA.10", "XCN", "DOCTOR"), _f("TXA.11", "XCN", "DOCTOR"),
    _f("TXA.12", "EI"), _f("TXA.13", "EI"), _f("TXA.14", "EI"), _f("TXA.15", "EI"),
    _f("TXA.16", "ST"), _f("TXA.22", "PPN", "DOCTOR"), _f("TXA.23", "XCN", "DOCTOR"),
    _f("MRG.1", "CX", "MEDICALRECORD"), _f("MRG.2", "CX", "MEDICALRECORD"),
    _f("MRG.3", "CX", "ACCOUNT"), _f("MRG.5", "CX", "IDNUM"),
    _f("MRG.6", "CX", "IDNUM"),
    _f("MRG.7", "XPN", "PATIENT"),
    # IN1-2/3 (plan and insurance company ids) name the payer, shared by all
    # of its members; the member's own numbers are IN1-36 and IN1-49.
    _f("IN1.4", "XON", "ORGANIZATION"),
    _f("IN1.5", "XAD", "LOCATION"), _f("IN1.6", "XPN", "RELATIVE"),
    _f("IN1.7", "XTN", "PHONE"), _f("IN1.8", "ST", "HEALTHPLAN"),
    _f("IN1.16", "XPN", "RELATIVE"), _ts("IN1.18"), _f("IN1.19", "XAD", "LOCATION"),
    _f("IN1.36", "ST", "HEALTHPLAN"), _f("IN1.49", "CX", "HEALTHPLAN"),
    _f("GT1.2", "CX", "IDNUM"), _f("GT1.3", "XPN", "RELATIVE"),
    _f("GT1.5", "XAD", "LOCATION"), _f("GT1.6", "XTN", "PHONE"),
    _f("GT1.7", "XTN", "PHONE"), _ts("GT1.8"), _f("GT1.12", "ST", "SSN"),
    # The guarantor's employer and contact person. Employer names are replaced
    # but not seeded: "SELF", "RETIRED" or "NONE" would match ordinary text.
    _f("GT1.16", "XPN", "ORGANIZATION", seed=False), _f("GT1.17", "XAD", "LOCATION"),
    _f("GT1.18", "XTN", "PHONE"), _f("GT1.19", "CX", "IDNUM"),
    _f("GT1.44", "XPN", "RELATIVE"), _f("GT1.45", "XPN", "RELATIVE"),
    _f("GT1.46", "XTN", "PHONE"), _f("GT1.51", "XON", "ORGANIZATION", seed=False),
    _f("IN2.1", "CX", "IDNUM"), _f("IN2.2", "ST", "SSN"),
    _f("IN2.3", "XCN", "ORGANIZATION", seed=False), _f("IN2.6", "ST", "HEALTHPLAN"),
    _f("IN2.7", "XPN", "RELATIVE"), _f("IN2.8", "ST", "HEALTHPLAN"),
    _ts("DG1.5"), _f("DG1.16", "XCN", "DOCTOR"),
    _ts("PR1.5"), _f("PR1.11", "XCN", "DOCTOR"), _f("PR1.12", "XCN", "DOCTOR"),
    _f("ROL.4", "XCN", "DOCTOR"), _ts("ROL.5"), _ts("ROL.6"),
    _f("ROL.11", "XAD", "LOCATION"), _f("ROL.12", "XTN", "PHONE"),
    _f("SPM.2", "EIP"), _f("SPM.3", "EIP"), _ts("SPM.18"),
)

# Every other field of HL7 2.5 whose data type holds a person, an address, a
# phone, an organisation or a date, read from hl7apy's tables: senders fill
# fields no hand list foresees (a guarantor's contact person, an appointment's
# contact phone, a plan's effective date), and a value of these types is PHI
# wherever it stands. Organisation names are replaced but not seeded ("SELF",
# "NONE" would match prose); dates are shifted like every header date.
_TYPE_LABELS = {"XPN": "RELATIVE", "XCN": "DOCTOR", "XAD": "LOCATION",
                "XTN": "PHONE", "XON": "ORGANIZATION", "TS": "DATE", "DTM": "DATE",
                "DT": "DATE"}


def _typed_fields(listed: set[str]) -> tuple[HeaderField, ...]:
    import hl7apy

    extra = []
    for name, spec in hl7apy.load_library("2.5").FIELDS.items():
        segment, _, number = name.partition("_")
        kind = spec[2]
        key = f"{segment}.{number}"
        if len(segment) == 3 and number.isdigit() and kind in _TYPE_LABELS and (
                key not in listed):
            extra.append(_ts(key) if _TYPE_LABELS[kind] == "DATE" else
                         _f(key, kind, _TYPE_LABELS[kind], seed=kind != "XON"))
    return tuple(sorted(extra, key=lambda f: (f.segment, f.number)))


@functools.lru_cache(maxsize=1)
def header_fields() -> tuple[HeaderField, ...]:
    """Every PHI field of a header: the hand list, then those HL7 2.5 types as PHI.

    Built on first use: loading hl7apy's tables took 0.05 s of every
    process's start-up, a run over notes included (issue 45).
    """
    return _LISTED + _typed_fields({f.key for f in _LISTED})

# ------------------------------------------------------- what else is kept

# Segments that describe a person or their coverage: every field of these that
# is not a typed PHI field above is written only when HL7 2.5 types it as a
# code (sex, race, marital status, relationship, language: table values that
# identify nobody), else emptied. A sender's free text, an employee number or
# a birth place in a field nobody listed does not reach the output.
PERSON_SEGMENTS = frozenset({"PID", "PD1", "NK1", "GT1", "IN1", "IN2", "MRG"})
# Data types that describe a person wherever they stand (a provider in ORC-12,
# a collector in OBR-10): only their PHI leaves (replaced) and code leaves are
# kept, so a name in an XCN's check digit or a date in its validity range goes.
PERSON_KINDS = frozenset({"XPN", "XCN", "PPN", "NDL", "CX", "XAD", "XTN"})
_CODED_FIELD_TYPES = frozenset({"ID", "IS", "SI", "NM", "CE", "CWE", "CNE"})
_CODE_LEAF_TYPES = frozenset({"ID", "IS", "SI"})
# Untyped fields of person segments kept although not a code type: IN1-3 is
# the insurance company's id, shared by all of its members.
_KEPT_FIELDS = {"IN1": frozenset({3})}


@functools.lru_cache(maxsize=1)
def _library():
    import hl7apy

    return hl7apy.load_library("2.5")


@functools.lru_cache(maxsize=256)
def code_leaves(data_type: str) -> dict[tuple[int, int], frozenset[str] | None]:
    """Positions of ``data_type`` typed as table codes -> the table's values.

    Read from hl7apy's v2.5 structures: ``ID``/``IS``/``SI`` leaves (the name
    type in XPN-7, the identifier type in CX-5, a phone's use code in XTN-2),
    with the values of their HL7 table where HL7 lists them (None for the
    site-defined tables).
    """
    lib = _library()
    out: dict[tuple[int, int], frozenset[str] | None] = {}

    def table(spec) -> frozenset[str] | None:
        values = lib.TABLES.get(spec[4] or "", ("", ()))[1]
        values = frozenset(v.upper() for v in values if v != "...")
        return values or None

    for c, (_, spec, *_rest) in enumerate(lib.DATATYPES_STRUCTS.get(data_type, ()), 1):
        if spec[0] == "leaf":
            if spec[2] in _CODE_LEAF_TYPES:
                out[(c, 1)] = table(spec)
            continue
        for s, (_, sub, *_more) in enumerate(spec[1], 1):
            if sub[0] == "leaf" and sub[2] in _CODE_LEAF_TYPES:
                out[(c, s)] = table(sub)
    return out


def reads_as_code(value: str, values: frozenset[str] | None) -> bool:
    """Whether a code leaf holds a code rather than a sender's free text.

    A value of its table, where HL7 lists one; else anything but a word of
    three letters or more (``MARY`` in a check digit scheme is a name, ``M10``
    a scheme).
    """
    if values is not None:
        return value.upper() in values
    return not (value.isalpha() and len(value) >= 3)


@functools.lru_cache(maxsize=1024)
def kept_as_code(segment: str, number: int) -> bool:
    """Whether an untyped field of a person segment is written as received."""
    if number in _KEPT_FIELDS.get(segment, ()):
        return True
    spec = _library().FIELDS.get(f"{segment}_{number}")
    return spec is not None and spec[2] in _CODED_FIELD_TYPES

@functools.lru_cache(maxsize=1)
def _by_segment() -> dict[str, tuple[HeaderField, ...]]:
    """:func:`header_fields` by segment id."""
    by_segment: dict[str, tuple[HeaderField, ...]] = {}
    for spec in header_fields():
        by_segment[spec.segment] = (*by_segment.get(spec.segment, ()), spec)
    return by_segment

# CX-5 identifier type codes (HL7 table 0203) -> label of the identifier.
_ID_TYPES = {
    "MR": "MEDICALRECORD", "MRN": "MEDICALRECORD", "PI": "MEDICALRECORD",
    "PT": "MEDICALRECORD", "PN": "MEDICALRECORD", "SS": "SSN", "SSN": "SSN",
    "AN": "ACCOUNT", "AND": "ACCOUNT", "VN": "IDNUM", "DL": "LICENSE",
    "HC": "HEALTHPLAN", "MA": "HEALTHPLAN", "MC": "HEALTHPLAN", "MB": "HEALTHPLAN",
    "NH": "HEALTHPLAN", "SR": "IDNUM", "PPN": "IDNUM",
}

# OBX-2 value types that OBX-5 holds PHI of a known shape.
_OBX_KINDS = {
    "DT": "TS", "DTM": "TS", "TS": "TS", "XPN": "XPN", "XCN": "XCN", "XAD": "XAD",
    "XTN": "XTN", "CX": "CX", "PN": "XPN", "CN": "XCN", "AD": "XAD", "TN": "ST",
}
# OBX-5 of these types cannot be de-identified (encapsulated files, references):
# write-back empties them.
OPAQUE_OBX_TYPES = frozenset({"ED", "RP"})
NARRATIVE_OBX_TYPES = frozenset({"TX", "FT", "ST", ""})


# Fields that are the message's structure, not data: delimiters, message type
# and version. Write-back keeps them; the message guard does not read them
# (``MDM`` in MSH-9 would match a patient's initials).
STRUCTURE_FIELDS = frozenset({"MSH.1", "MSH.2", "MSH.9", "MSH.12"})

# Batch envelopes (FHS/BHS ... BTS/FTS) keep only what routes the batch
# (applications, time, ids, counts); facilities get a surrogate, every other
# field (comments, file and batch names, security) is emptied: a vendor
# writes anything there. BTS-1 is rewritten as the count of messages written.
ENVELOPE_KEPT = frozenset({"FHS.3", "FHS.5", "FHS.7", "FHS.11", "FHS.12",
                           "BHS.3", "BHS.5", "BHS.7", "BHS.11", "BHS.12",
                           "BTS.1", "BTS.3", "FTS.1"})
ENVELOPE_FACILITIES = frozenset({"FHS.4", "FHS.6", "BHS.4", "BHS.6"})
ENVELOPE_COUNT = "BTS.1"


@functools.lru_cache(maxsize=256)
def numbers_of(keys: frozenset[str], segment: str) -> frozenset[int]:
    """Field numbers of ``segment`` among accessor ``keys`` (``MSH.9`` -> 9).

    The tables above name fields as keys, as configuration does; the walks
    over a segment's raw fields index by number.
    """
    prefix = segment + "."
    return frozenset(int(k[len(prefix):]) for k in keys if k.startswith(prefix))


def fields_of(segment: str) -> tuple[HeaderField, ...]:
    """Return the PHI fields of a segment id (empty for Z- and other segments)."""
    return _by_segment().get(segment, ())


def kind_of_obx(value_type: str) -> HeaderField | None:
    """Return the structured PHI type of an OBX-5 of value type ``value_type``."""
    kind = _OBX_KINDS.get(value_type)
    if kind is None:
        return None
    label = {"TS": "DATE", "XPN": "PATIENT", "XCN": "DOCTOR", "XAD": "LOCATION",
             "CX": "IDNUM"}.get(kind, "PHONE" if value_type == "TN" else "IDNUM")
    return HeaderField("OBX.5", kind, label, seed=False)


def identifier_label(cx_type: str, default: str) -> str:
    """Label of a CX identifier from its type code (CX-5), else ``default``."""
    return _ID_TYPES.get(cx_type.strip().upper(), default)


def repetitions(raw: str, d: Delimiters) -> list[str]:
    """Split a raw field into its repetitions (at least one)."""
    return raw.split(d.repetition) if d.repetition in raw else [raw]


def leaf_values(rep: str, d: Delimiters, leaves: tuple[Leaf, ...]
                ) -> Iterator[tuple[Leaf, str]]:
    """(leaf, unescaped value) for every non-empty PHI leaf of one repetition."""
    comps = rep.split(d.component)
    ncomp = len(comps)
    for leaf in leaves:
        if leaf.component > ncomp:
            continue
        comp = comps[leaf.component - 1]
        if leaf.subcomponent > 1 or d.subcomponent in comp:
            subs = comp.split(d.subcomponent)
            if leaf.subcomponent > len(subs):
                continue
            comp = subs[leaf.subcomponent - 1]
        if comp and comp != '""':
            yield leaf, unescape(comp, d)


def _map_repetitions(raw: str, d: Delimiters,
                     edit: Callable[[list[str]], bool]) -> str:
    """``raw`` with ``edit(components)`` applied to each repetition in place.

    ``edit`` returns whether it changed anything; an unchanged field is
    returned as the same string (callers test ``is``).
    """
    reps = repetitions(raw, d)
    changed = False
    for r, rep in enumerate(reps):
        comps = rep.split(d.component)
        if edit(comps):
            reps[r] = d.component.join(comps)
            changed = True
    return d.repetition.join(reps) if changed else raw


def map_field(raw: str, d: Delimiters, leaves: tuple[Leaf, ...],
              replace: Callable[[Leaf, str, list[str]], str | None]) -> str:
    """``raw`` with each PHI leaf passed through ``replace(leaf, value, comps)``.

    ``replace`` gets the unescaped value and the repetition's raw components
    (for leaves that depend on a sibling, such as CX-5 for CX-1) and returns
    the new unescaped value, or None to keep the raw leaf as it was.
    """
    def edit(comps: list[str]) -> bool:
        changed = False
        for leaf in leaves:
            if leaf.component > len(comps):
                continue
            ci = leaf.component - 1
            subs = comps[ci].split(d.subcomponent)
            si = leaf.subcomponent - 1
            if si >= len(subs):
                continue
            value = subs[si]
            if not value or value == '""':
                continue
            new = replace(leaf, unescape(value, d), comps)
            if new is None:
                continue
            subs[si] = escape(new, d) if new else ""  # blanking: nothing to escape
            comps[ci] = d.subcomponent.join(subs)
            changed = True
        return changed

    return _map_repetitions(raw, d, edit)


def map_leaves(raw: str, d: Delimiters,
               replace: Callable[[int, int, str], str | None]) -> str:
    """``raw`` with every non-empty leaf passed through ``replace``.

    ``replace(component, subcomponent, value)`` (1-based positions, value
    unescaped) returns the new unescaped value, or None to keep the leaf:
    :func:`map_field` for the leaves no data type names, such as a name a
    sender put into an identifier's check digit.
    """
    def edit(comps: list[str]) -> bool:
        changed = False
        for ci, comp in enumerate(comps):
            subs = comp.split(d.subcomponent)
            for si, value in enumerate(subs):
                if not value or value == '""':
                    continue
                new = replace(ci + 1, si + 1, unescape(value, d))
                if new is not None:
                    subs[si] = escape(new, d) if new else ""
                    comps[ci] = d.subcomponent.join(subs)
                    changed = True
        return changed

    return _map_repetitions(raw, d, edit)


def segment_fields(message: Hl7Message) -> Iterator[tuple[Segment, HeaderField]]:
    """Every (segment, PHI field spec) pair present in the message, in order."""
    for seg in message.segments:
        specs = _by_segment().get(seg.name)
        if not specs:
            continue
        n = len(seg.fields)
        for spec in specs:
            if spec.number < n and seg.fields[spec.number]:
                yield seg, spec
