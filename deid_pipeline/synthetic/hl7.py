r"""Synthetic HL7 v2.5 messages with known PHI in headers and narratives.

Kinds: ``oru`` (ORU^R01 radiology or pathology reports: MSH, PID, optional
NK1, PV1, then per report ORC, OBR, 10-40 OBX TX lines and optional NTE),
``mdm`` (MDM^T02: EVN, PID, PV1, TXA and OBX lines of a note) and ``adt``
(ADT^A01/A08: EVN, PID, optional PD1, NK1, PV1, IN1; no narrative).
Identities come from the same Faker-driven factory as the notes, and the
narrative names the very patient, relatives and providers of the header, in
the forms real reports use (upper case, ``Last, First``, MRN and birth date in
the text).

Gold for a report: its narrative is the unescaped OBX-5 values of one OBR
group joined with ``\n``, followed by the group's NTE-3 comments as further
lines (MDM: the OBX-5 values after TXA). The document id is
``<MSH-10>-<OBR-1>`` (MDM: ``<MSH-10>-1``) and gold spans are offsets into
that narrative. Header identifiers are ``(address, value, label)`` with the
address in HL7 notation ``SEG.field.component[.subcomponent]``; a repeated
segment or field repetition other than the first carries its 1-based index in
brackets (``NK1[2].2.1``, ``PID.3[2].1``). Values are unescaped.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.synthetic.context import DocContext
from deid_pipeline.synthetic.formats import format_phone
from deid_pipeline.synthetic.identity import (
    Address,
    IdentityFactory,
    Patient,
    Person,
    derive_seed,
)
from deid_pipeline.synthetic.notes import build_text, check_kinds, new_faker
from deid_pipeline.synthetic.text import AnnotatedText, assemble, concat, wrap_lines

logger = logging.getLogger(__name__)

MESSAGE_KINDS = ("oru", "mdm", "adt")
MIN_OBX_LINES = 10
MAX_OBX_LINES = 40
SEGMENT_TERMINATOR = "\r"

_ESCAPES = {"\\": "\\E\\", "|": "\\F\\", "^": "\\S\\", "&": "\\T\\", "~": "\\R\\"}
_UNESCAPES = {"E": "\\", "F": "|", "S": "^", "T": "&", "R": "~"}

# One field value: plain text, (text, label) to record as a header identifier,
# or a list of components (a list inside a component: subcomponents).
Value = str | tuple[str, str] | list


def escape(value: str) -> str:
    r"""HL7-escape the delimiters of the default encoding characters ``|^~\&``."""
    return "".join(_ESCAPES.get(ch, ch) for ch in value)


def unescape(value: str) -> str:
    """Undo :func:`escape` (the five delimiter escapes; others are kept as is)."""
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if (
            ch == "\\"
            and i + 2 < len(value)
            and value[i + 2] == "\\"
            and value[i + 1] in _UNESCAPES
        ):
            out.append(_UNESCAPES[value[i + 1]])
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class SyntheticMessage:
    """One ER7 message, its report documents with gold spans, and header PHI.

    ``inserted[i]`` holds the values inserted for ``documents[i].gold`` in
    order, so tests can prove every span covers exactly what was written.
    """

    er7: str
    message_id: str
    documents: tuple[ClinicalDocument, ...]
    header_identifiers: tuple[tuple[str, str, str], ...]
    kind: str = ""
    person_key: str = ""
    inserted: tuple[tuple[str, ...], ...] = ()


class Reps:
    """Repetitions of one field (joined with ``~``)."""

    def __init__(self, *values: Value) -> None:
        """Hold the repetitions in order (the first has no index in addresses)."""
        self.values = values


class _Message:
    """Segments under construction plus the header identifiers they carry."""

    def __init__(self) -> None:
        self.segments: list[str] = []
        self.idents: list[tuple[str, str, str]] = []
        self._count: dict[str, int] = {}

    def _enc(self, addr: str, value: Value, depth: int) -> str:
        if isinstance(value, str):
            return escape(value)
        if isinstance(value, tuple):
            text, label = value
            if text:
                self.idents.append((addr, text, label))
            return escape(text)
        sep = "^" if depth == 0 else "&"
        return sep.join(
            self._enc(f"{addr}.{i}", v, depth + 1) for i, v in enumerate(value, 1)
        )

    def _field(self, addr: str, value: Value | Reps) -> str:
        if isinstance(value, Reps):
            return "~".join(
                self._enc(addr if r == 1 else f"{addr}[{r}]", v, 0)
                for r, v in enumerate(value.values, 1)
            )
        # A whole-field identifier keeps the bare field address (PID.7).
        return self._enc(addr, value, 0)

    def seg(self, name: str, fields: dict[int, Value | Reps]) -> None:
        """Add segment ``name`` with ``fields`` (1-based field numbers)."""
        self._count[name] = self._count.get(name, 0) + 1
        n = self._count[name]
        prefix = name if n == 1 else f"{name}[{n}]"
        first = 3 if name == "MSH" else 1
        last = max(fields) if fields else first - 1
        parts = [
            self._field(f"{prefix}.{i}", fields[i]) if i in fields else ""
            for i in range(first, last + 1)
        ]
        if name == "MSH":
            self.segments.append("MSH|^~\\&|" + "|".join(parts))
        else:
            self.segments.append("|".join([name, *parts]))

    def er7(self) -> str:
        """Join the segments, each terminated by a carriage return."""
        return SEGMENT_TERMINATOR.join(self.segments) + SEGMENT_TERMINATOR


# --- field helpers -------------------------------------------------------------


def _ts(d: dt.date, rng: random.Random, seconds: bool = False) -> str:
    h, m = rng.randint(0, 23), rng.randint(0, 59)
    stamp = f"{d.year:04d}{d.month:02d}{d.day:02d}{h:02d}{m:02d}"
    return stamp + (f"{rng.randint(0, 59):02d}" if seconds else "")


def _xpn(p: Person, label: str, middle: bool = True) -> list:
    name: list = [(p.last.upper(), label), (p.first.upper(), label)]
    if middle:
        name.append((p.middle.upper(), label))
    return name


def _xcn(p: Person) -> list:
    provider_id = str(derive_seed(0, p.first, p.last, p.middle) % 9_000_000 + 1_000_000)
    return [
        provider_id,
        (p.last.upper(), "DOCTOR"),
        (p.first.upper(), "DOCTOR"),
        p.middle[0],
        "",
        "",
        "MD",
    ]


def _xad(a: Address, kind: str = "H") -> list:
    return [
        (a.street, "STREET"),
        "",
        (a.city, "CITY"),
        (a.state, "STATE"),
        (a.zip, "ZIP"),
        "USA",
        kind,
    ]


def _xtn(rng: random.Random, digits: str, use: str = "PRN") -> list:
    if rng.random() < 0.5:
        return [(format_phone(digits, rng.choice((0, 1, 3))), "PHONE"), use, "PH"]
    return ["", use, "PH", "", "1", (digits[:3], "PHONE"), (digits[3:], "PHONE")]


_RELATION_TEXT = {
    "SPO": "Spouse",
    "CHD": "Child",
    "SIB": "Sibling",
    "MTH": "Mother",
    "FTH": "Father",
    "EXF": "Extended family",
    "GRD": "Grandchild",
    "FND": "Friend",
    "DOM": "Life partner",
}

_MDM_TYPES = {
    "discharge": ("DS", "18842-5", "Discharge summary"),
    "nursing": ("PN", "34746-8", "Nurse note"),
}
_ORU_CODES = {
    "radiology": ("18782-3", "Radiology Study observation", "RAD", "RIS"),
    "pathology": ("22034-3", "Pathology report", "SP", "COPATH"),
}


class _MessageFactory:
    """Builds messages for one patient at a time from the shared identity factory."""

    def __init__(self, ids: IdentityFactory, age_threshold: int) -> None:
        self.ids = ids
        self.age_threshold = age_threshold

    @property
    def rng(self) -> random.Random:
        return self.ids.rng

    # segments shared by all kinds

    def _msh(
        self,
        m: _Message,
        patient: Patient,
        when: dt.date,
        msg_type: str,
        control_id: str,
        app: str,
    ) -> None:
        rng = self.rng
        hosp = patient.hospital
        facility: Value = (
            [(hosp.name, "HOSPITAL")]
            if rng.random() < 0.5
            else [
                (hosp.code, "HOSPITAL"),
                f"2.16.840.1.113883.3.{rng.randint(100, 9999)}",
                "ISO",
            ]
        )
        m.seg(
            "MSH",
            {
                3: app,
                4: facility,
                5: "DEID",
                6: "RESEARCH",
                7: (_ts(when, rng, seconds=True), "DATE"),
                9: msg_type.split("^"),
                10: control_id,
                11: "P",
                12: "2.5",
            },
        )

    def _pid(self, m: _Message, patient: Patient) -> None:
        rng = self.rng
        hosp = patient.hospital
        mrns: list[Value] = [[(patient.mrn, "MEDICALRECORD"), "", "", hosp.code, "MR"]]
        if rng.random() < 0.4:
            other = rng.choice([h for h in self.ids.hospitals if h != hosp] or [hosp])
            mrns.append([(patient.alt_mrn, "MEDICALRECORD"), "", "", other.code, "MR"])
        phones: list[Value] = [_xtn(rng, patient.phone)]
        if rng.random() < 0.3:
            phones.append(["", "NET", "Internet", (patient.email, "EMAIL")])
        p = patient.person
        fields: dict[int, Value | Reps] = {
            1: "1",
            3: Reps(*mrns),
            5: _xpn(p, "PATIENT"),
            7: (patient.dob.strftime("%Y%m%d"), "DATE"),
            8: p.sex,
            11: _xad(patient.address),
            13: Reps(*phones),
        }
        if rng.random() < 0.5:
            fields[14] = _xtn(rng, patient.work_phone, "WPN")
        fields[18] = [(patient.account, "ACCOUNT"), "", "", hosp.code, "AN"]
        if rng.random() < 0.7:
            fields[19] = (patient.ssn, "SSN")
        m.seg("PID", fields)

    def _nk1(self, m: _Message, patient: Patient) -> None:
        for i, rel in enumerate(patient.relatives, 1):
            if i > 1 and self.rng.random() < 0.5:
                break
            m.seg(
                "NK1",
                {
                    1: str(i),
                    2: _xpn(rel.person, "RELATIVE", middle=False),
                    3: [rel.hl7_code, _RELATION_TEXT[rel.hl7_code], "HL70063"],
                    4: _xad(patient.address) if self.rng.random() < 0.5 else "",
                    5: _xtn(self.rng, rel.phone),
                },
            )

    def _pv1(
        self,
        m: _Message,
        patient: Patient,
        ctx: DocContext,
        patient_class: str,
    ) -> None:
        rng = self.rng
        unit = rng.choice(("MICU", "CCU", "4W", "7N", "SICU", "ED", "RAD", "ONC"))
        fields: dict[int, Value | Reps] = {
            1: "1",
            2: patient_class,
            3: [
                unit,
                (str(rng.randint(100, 999)), "ROOM"),
                str(rng.randint(1, 4)),
                (patient.hospital.code, "HOSPITAL"),
            ],
            7: _xcn(ctx.doctors[-1]),
            19: [(self.ids.digits(9), "IDNUM"), "", "", patient.hospital.code, "VN"],
            44: (_ts(ctx.admit, rng), "DATE"),
        }
        if rng.random() < 0.5:
            fields[8] = _xcn(patient.pcp)
        if rng.random() < 0.4:
            fields[17] = _xcn(ctx.doctors[-1])
        m.seg("PV1", fields)

    def _context(self, patient: Patient, when: dt.date, kind: str) -> DocContext:
        return DocContext(self.ids, patient, when, kind, self.age_threshold)

    def _narrative(
        self,
        patient: Patient,
        when: dt.date,
        kind: str,
        min_tokens: int,
        max_tokens: int,
        case: str | None,
    ) -> tuple[DocContext, AnnotatedText]:
        """Draw a wrapped narrative of 10-40 lines (one OBX each) and its context.

        A draft with too many or too few lines is redrawn with a budget moved
        the right way; the draws stay deterministic.
        """
        for _ in range(8):
            ctx = self._context(patient, when, kind)
            text = build_text(ctx, kind, min_tokens, max_tokens, case)
            text = AnnotatedText(text.text.rstrip(), text.spans, text.values)
            text = wrap_lines(text, self.rng.randint(60, 78))
            n_lines = text.text.count("\n") + 1
            if n_lines > MAX_OBX_LINES:
                max_tokens = max(20, int(max_tokens * 0.8))
                min_tokens = min(min_tokens, max_tokens)
            elif n_lines < MIN_OBX_LINES:
                min_tokens = min(max_tokens, int(min_tokens * 1.3) + 20)
            else:
                break
        return ctx, text

    # kinds

    def oru(
        self, patient: Patient, when: dt.date, control_id: str
    ) -> tuple[_Message, list[tuple[str, AnnotatedText]]]:
        rng = self.rng
        kind = rng.choice(("radiology", "pathology"))
        code, name, service, app = _ORU_CODES[kind]
        m = _Message()
        self._msh(m, patient, when, "ORU^R01^ORU_R01", control_id, app)
        self._pid(m, patient)
        if rng.random() < 0.4:
            self._nk1(m, patient)
        n_groups = 1 if rng.random() < 0.8 else 2
        narratives = []
        for _ in range(n_groups):
            case = "upper" if rng.random() < 0.5 else "as_is"
            narratives.append(
                (case, *self._narrative(patient, when, kind, 90, 330, case))
            )
        self._pv1(m, patient, narratives[0][1], rng.choice(("I", "O", "E")))
        docs: list[tuple[str, AnnotatedText]] = []
        for set_id, (case, ctx, narrative) in enumerate(narratives, 1):
            ordering, reader = ctx.doctors[1], ctx.attending
            placer, filler = self.ids.digits(8), f"{service}{self.ids.digits(7)}"
            observed = _ts(ctx.date, rng)
            m.seg(
                "ORC",
                {
                    1: "RE",
                    2: (placer, "IDNUM"),
                    3: (filler, "IDNUM"),
                    5: "CM",
                    9: (observed, "DATE"),
                    12: _xcn(ordering),
                },
            )
            service_id = (
                [str(rng.randint(70000, 79999)), ctx.exams[0], "CPT"]
                if kind == "radiology"
                else ["88305", "SURGICAL PATHOLOGY", "CPT"]
            )
            m.seg(
                "OBR",
                {
                    1: str(set_id),
                    2: (placer, "IDNUM"),
                    3: (filler, "IDNUM"),
                    4: service_id,
                    7: (observed, "DATE"),
                    14: (_ts(ctx.date, rng), "DATE") if kind == "pathology" else "",
                    16: _xcn(ordering),
                    22: (_ts(ctx.date, rng), "DATE"),
                    24: service,
                    25: "F",
                    32: [
                        [
                            str(rng.randint(1000, 99999)),
                            (reader.last.upper(), "DOCTOR"),
                            (reader.first.upper(), "DOCTOR"),
                        ]
                    ],
                },
            )
            lines = narrative.text.split("\n")
            for i, line in enumerate(lines, 1):
                m.seg(
                    "OBX", {1: str(i), 2: "TX", 3: [code, name, "LN"], 5: line, 11: "F"}
                )
            if rng.random() < 0.35:
                comments = [
                    ctx.render(rng.choice(_NTE_TEMPLATES))
                    for _ in range(rng.randint(1, 2))
                ]
                notes = [assemble(c, case) for c in comments]
                for i, note in enumerate(notes, 1):
                    m.seg("NTE", {1: str(i), 2: "L", 3: note.text})
                narrative = concat([narrative, *notes])
            docs.append((str(set_id), narrative))
        return m, docs

    def mdm(
        self, patient: Patient, when: dt.date, control_id: str
    ) -> tuple[_Message, list[tuple[str, AnnotatedText]]]:
        rng = self.rng
        kind = rng.choice(("discharge", "nursing"))
        doc_type, code, name = _MDM_TYPES[kind]
        m = _Message()
        self._msh(m, patient, when, "MDM^T02^MDM_T02", control_id, "EPIC")
        m.seg("EVN", {1: "T02", 2: (_ts(when, rng), "DATE")})
        self._pid(m, patient)
        case = rng.choice(("as_is", "upper")) if kind == "discharge" else None
        ctx, narrative = self._narrative(patient, when, kind, 100, 330, case)
        self._pv1(m, patient, ctx, "I")
        m.seg(
            "TXA",
            {
                1: "1",
                2: doc_type,
                3: "TX",
                4: (_ts(when, rng), "DATE"),
                5: _xcn(ctx.attending),
                9: _xcn(ctx.doctors[1]),
                12: [(f"{doc_type}{self.ids.digits(9)}", "IDNUM")],
                17: "AU",
                19: "AV",
            },
        )
        for i, line in enumerate(narrative.text.split("\n"), 1):
            m.seg("OBX", {1: str(i), 2: "TX", 3: [code, name, "LN"], 5: line, 11: "F"})
        return m, [("1", narrative)]

    def adt(
        self, patient: Patient, when: dt.date, control_id: str, event: str
    ) -> tuple[_Message, list[tuple[str, AnnotatedText]]]:
        rng = self.rng
        m = _Message()
        self._msh(m, patient, when, f"ADT^{event}^ADT_A01", control_id, "EPIC")
        m.seg("EVN", {1: event, 2: (_ts(when, rng), "DATE")})
        self._pid(m, patient)
        if rng.random() < 0.5:
            m.seg("PD1", {4: _xcn(patient.pcp)})
        self._nk1(m, patient)
        ctx = self._context(patient, when, "discharge")
        self._pv1(m, patient, ctx, "I")
        if rng.random() < 0.6:
            spouse = next((r for r in patient.relatives if r.hl7_code == "SPO"), None)
            insured = (
                _xpn(spouse.person, "RELATIVE", middle=False)
                if spouse and rng.random() < 0.4
                else _xpn(patient.person, "PATIENT", middle=False)
            )
            m.seg(
                "IN1",
                {
                    1: "1",
                    2: [f"PLAN{rng.randint(100, 999)}"],
                    3: [str(rng.randint(10000, 99999))],
                    4: (
                        patient.employer + " Health Plan"
                        if rng.random() < 0.3
                        else rng.choice(_INSURERS),
                        "ORGANIZATION",
                    ),
                    16: insured,
                    17: ["SPO" if insured[0][1] == "RELATIVE" else "SEL"],
                    36: (patient.healthplan, "HEALTHPLAN"),
                },
            )
        return m, []


_INSURERS = (
    "Blue Cross Blue Shield",
    "Aetna",
    "UnitedHealthcare",
    "Cigna",
    "Humana",
    "Harvard Pilgrim Health Care",
    "Tufts Health Plan",
    "Kaiser Permanente",
    "Medicare",
    "Medicaid",
)

_NTE_TEMPLATES = (
    "[Results called to|Critical result called to|Report discussed with] {dr} at "
    "{time} "
    "on {date:today,full}[ by {att:name}|]",
    "[Electronically signed by|Signed by|Verified by] {att:name}[, MD|] "
    "{date:today,full}"
    "[ {time}|]",
    "[Copy to|cc:] {pcp:name}[, fax {phone:fax}|]",
    "[Amended report|Corrected report|Addendum added] {date:future,full}: [see above|"
    "clarification of laterality|additional findings]",
    "[Questions|For questions call] {phone:hosp}",
)


def iter_messages(
    count: int, seed: int, kinds: Iterable[str] = MESSAGE_KINDS, age_threshold: int = 90
) -> Iterator[SyntheticMessage]:
    """Yield ``count`` messages; several consecutive ones often share a patient."""
    if count < 0:
        raise ValueError("count must be >= 0")
    chosen = check_kinds(kinds, MESSAGE_KINDS)
    fake = new_faker(seed, "hl7-pool")
    ids = IdentityFactory(fake)
    factory = _MessageFactory(ids, age_threshold)
    produced = 0
    patient_index = 0
    while produced < count:
        fake.seed_instance(derive_seed(seed, "hl7-patient", patient_index))
        rng = ids.rng
        patient = ids.patient(key=f"synthetic:{seed}:hl7:{patient_index}")
        when = patient.encounter
        plan: list[str] = []
        if "adt" in chosen and rng.random() < 0.5:
            plan.append("A01")
        plan += [
            rng.choice(chosen) for _ in range(rng.choices((1, 2, 3), (5, 3, 2))[0])
        ]
        for step in plan:
            if produced >= count:
                break
            produced += 1
            control_id = f"SYN{seed & 0xFFFFFFFF:08X}{produced:06d}"
            if step in ("A01", "adt"):
                event = "A01" if step == "A01" else rng.choice(("A01", "A08"))
                msg, docs = factory.adt(patient, when, control_id, event)
                kind = "adt"
            elif step == "oru":
                msg, docs = factory.oru(patient, when, control_id)
                kind = "oru"
            else:
                msg, docs = factory.mdm(patient, when, control_id)
                kind = "mdm"
            documents = tuple(
                text.document(
                    f"{control_id}-{set_id}",
                    source="hl7",
                    origin="deid_pipeline.synthetic.hl7",
                    person_key=patient.key,
                    kind=kind,
                )
                for set_id, text in docs
            )
            yield SyntheticMessage(
                er7=msg.er7(),
                message_id=control_id,
                documents=documents,
                header_identifiers=tuple(msg.idents),
                kind=kind,
                person_key=patient.key,
                inserted=tuple(text.values for _, text in docs),
            )
            when += dt.timedelta(days=rng.randint(0, 2))
        patient_index += 1
    logger.info(
        "generated %d synthetic HL7 messages for %d patients", produced, patient_index
    )


def generate_messages(
    count: int, seed: int, kinds: Sequence[str] = MESSAGE_KINDS, age_threshold: int = 90
) -> list[SyntheticMessage]:
    """Make ``count`` HL7 v2.5 messages (ER7, CR-terminated segments), seed-stable.

    ``kinds`` restricts the message kinds (``oru``, ``mdm``, ``adt``).
    """
    return list(iter_messages(count, seed, kinds, age_threshold))
