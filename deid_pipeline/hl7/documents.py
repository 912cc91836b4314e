"""HL7 messages -> ClinicalDocuments: one per report, with the header's dictionary.

ORU^R01 carries one report per OBR group (its OBX text lines and NTE
comments), MDM^T02 one document (TXA plus its OBX lines). A message without
a report (ADT, or any message with neither OBR nor TXA) still gives one
*header document* (doc id ``<MSH-10>-0``), whose text is its OBX/NTE text if
it has any and is empty otherwise: every message read is a record, so the run
accounts for it, its header reaches linking, and its structured columns
reach the research extract.

Every narrative character maps back to the field it came from
(:class:`NarrativePiece`), which is how rewritten text is written back.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from deid_pipeline.hl7.dates import parse_written_date, shift_ts
from deid_pipeline.hl7.escapes import unescape
from deid_pipeline.hl7.fields import NARRATIVE_OBX_TYPES, repetitions
from deid_pipeline.hl7.framing import decode_message, frame_file
from deid_pipeline.hl7.message import Hl7Message, Hl7ParseError, parse_message
from deid_pipeline.hl7.seed import date_forms, seed_dictionary
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    QuarantineRecord,
)
from deid_pipeline.readers.byte_order import narrow
from deid_pipeline.runtime.interrupts import reraise_interrupt
from deid_pipeline.surrogates import Originals
from deid_pipeline.surrogates.years import birth_of, parse_birth
from deid_pipeline.tokenizer import is_digits

__all__ = [
    "COLUMN_KEYS",
    "NarrativePiece",
    "Report",
    "build_documents",
    "extract_reports",
    "header_columns",
    "parse_hl7_message",
    "read_hl7",
]

SOURCE = "hl7"


@dataclass(frozen=True, slots=True)
class NarrativePiece:
    """Where narrative ``[start, end)`` came from: one field repetition.

    ``segment`` is the 0-based segment index (id ``name``), ``field`` the field
    number and ``repetition`` the 0-based repetition.
    The whole repetition is one piece: TX/FT/ST values have no components, so
    a separator character in them is text.
    """

    start: int
    end: int
    segment: int
    name: str
    field: int
    repetition: int

    @property
    def address(self) -> str:
        """python-hl7 style address, e.g. ``OBX.5`` (repetition not included)."""
        return f"{self.name}.{self.field}"


@dataclass(frozen=True, slots=True)
class Report:
    """One report of a message: id, narrative, and where each line came from.

    ``kind`` is ``report`` (ORU OBR group), ``note`` (MDM) or ``header``;
    ``group`` the segment indices that belong to it (OBR to the next OBR).
    """

    doc_id: str
    set_id: str
    kind: str
    text: str
    pieces: tuple[NarrativePiece, ...]
    group: tuple[int, ...]

    def locate(self, offset: int) -> NarrativePiece | None:
        """Return the piece holding narrative character ``offset`` (None: a break)."""
        starts = [p.start for p in self.pieces]
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and self.pieces[i].start <= offset < self.pieces[i].end:
            return self.pieces[i]
        return None


def _value_type(message: Hl7Message, seg_fields: list[str]) -> str:
    raw = seg_fields[2] if len(seg_fields) > 2 else ""
    return message.component(raw, 1).strip().upper() if raw else ""


def _narrative(message: Hl7Message, indices: list[int]
               ) -> tuple[str, tuple[NarrativePiece, ...]]:
    d = message.delimiters
    lines: list[str] = []
    pieces: list[NarrativePiece] = []
    pos = 0
    narrative: dict[str, bool] = {}  # OBX-2 as written -> narrative type (TX...)
    for i in indices:
        seg = message.segments[i]
        if seg.name == "OBX":
            raw_type = seg.get(2)
            is_text = narrative.get(raw_type)
            if is_text is None:
                is_text = narrative[raw_type] = (_value_type(message, seg.fields)
                                                 in NARRATIVE_OBX_TYPES)
            if not is_text:
                continue
            number = 5
            if seg.get(5) == "" and seg.get(2) == "":
                continue
        elif seg.name == "NTE":
            number = 3
        else:
            continue
        for r, rep in enumerate(repetitions(seg.get(number), d)):
            text = unescape(rep, d)
            if lines:
                pos += 1  # the "\n" joining lines
            pieces.append(NarrativePiece(pos, pos + len(text), i, seg.name, number, r))
            lines.append(text)
            pos += len(text)
    return "\n".join(lines), tuple(pieces)


def extract_reports(message: Hl7Message) -> list[Report]:
    """Split a message into its reports, in order (at least one: see the module doc)."""
    segments = message.segments
    control = message.control_id
    names = [s.name for s in segments]
    text_segments = [i for i, n in enumerate(names) if n in ("OBX", "NTE")]
    if "TXA" in names:
        text, pieces = _narrative(message, text_segments)
        return [Report(f"{control}-1", "1", "note", text, pieces,
                       tuple(range(len(segments))))]
    obrs = [i for i, n in enumerate(names) if n == "OBR"]
    if not obrs:
        text, pieces = _narrative(message, text_segments)
        return [Report(f"{control}-0", "0", "header", text, pieces,
                       tuple(range(len(segments))))]
    set_ids = [unescape(segments[i].get(1), message.delimiters).strip() for i in obrs]
    if any(not s for s in set_ids) or len(set(set_ids)) != len(set_ids):
        set_ids = [str(n) for n in range(1, len(obrs) + 1)]
    reports = []
    for k, start in enumerate(obrs):
        end = obrs[k + 1] if k + 1 < len(obrs) else len(segments)
        # Text before the first OBR (patient notes) belongs to the first report.
        lo = 0 if k == 0 else start
        members = [i for i in text_segments if lo <= i < end]
        text, pieces = _narrative(message, members)
        reports.append(Report(f"{control}-{set_ids[k]}", set_ids[k], "report", text,
                              pieces, tuple(range(start, end))))
    return reports


def _first_component(message: Hl7Message, name: str, number: int,
                     component: int = 1) -> str:
    seg = message.first(name)
    return message.component(seg.get(number), component).strip() if seg is not None \
        else ""


def _segment_component(message: Hl7Message, index: int | None, number: int,
                       component: int = 1) -> str:
    if index is None:
        return ""
    return message.component(message.segments[index].get(number), component).strip()


def _metadata(message: Hl7Message, report: Report, codec: str
              ) -> tuple[tuple[str, str], ...]:
    """Columns that are not PHI: copied as they are into the research extract."""
    obr = next((i for i in report.group if message.segments[i].name == "OBR"), None)
    if report.kind == "note":
        report_type = (_first_component(message, "TXA", 2, 2)
                       or _first_component(message, "TXA", 2))
        status = _first_component(message, "TXA", 17)
    else:
        report_type = (_segment_component(message, obr, 4, 2)
                       or _segment_component(message, obr, 4))
        status = _segment_component(message, obr, 25)
    pairs = (
        ("hl7_message_type", message.message_type),
        ("hl7_version", message.version),
        ("hl7_charset", codec),
        ("hl7_document", report.kind),
        ("report_type", report_type),
        ("ordering_service", _segment_component(message, obr, 24)
         or _first_component(message, "PV1", 10)),
        ("result_status", status),
        ("sex", _first_component(message, "PID", 8).upper()),
        ("patient_class", _first_component(message, "PV1", 2).upper()),
        # What the sender got wrong and the parser accepted (message.QUIRKS).
        ("hl7_accepted", ",".join(message.quirks)),
    )
    return tuple((k, v) for k, v in pairs if v)


# Per report dates: offered to the dictionary of that report only, and the
# source of its observation/report date columns.
_REPORT_DATES = {"OBR": (7, 22), "TXA": (4, 6)}


def _report_dates(message: Hl7Message, report: Report) -> list[tuple[str, str]]:
    """(form, field) of every date form of the report's own dates, in order."""
    out: list[tuple[str, str]] = []
    for i in report.group:
        seg = message.segments[i]
        for number in _REPORT_DATES.get(seg.name, ()):
            raw = message.component(seg.get(number), 1)
            forms = date_forms(raw)
            if forms:
                field = f"{seg.name}.{number}"
                out.extend((form, field) for form in forms)
    return out


def build_documents(message: Hl7Message, origin: str = "", codec: str = "utf-8",
                    reports: list[Report] | None = None,
                    dictionary: PatientDictionary | None = None,
                    ) -> list[ClinicalDocument]:
    """ClinicalDocuments of a parsed message (one per report), seeded dictionaries."""
    if reports is None:
        reports = extract_reports(message)
    if dictionary is None:
        dictionary = seed_dictionary(message)
    docs = []
    dates: set[str] | None = None  # the dictionary's DATE values, lower-cased
    for report in reports:
        own = _report_dates(message, report)
        doc_dictionary = dictionary
        if own:
            if dates is None:
                dates = {e.value.lower() for e in dictionary.entries
                         if e.label == "DATE"}
            # The YYYYMMDD form always goes in with its field: the date columns
            # look it up by field even when another field had the same day.
            # Entries are made only for the forms that go in (a few of ~60).
            extra = tuple(DictionaryEntry(form, "DATE", field) for form, field in own
                          if len(form) == 8 and is_digits(form)
                          or form.lower() not in dates)
            doc_dictionary = PatientDictionary(dictionary.entries + extra,
                                               dictionary.person_key)
        docs.append(ClinicalDocument(
            doc_id=report.doc_id, text=report.text, source=SOURCE, origin=origin,
            person_key=dictionary.person_key,
            metadata=_metadata(message, report, codec), dictionary=doc_dictionary,
        ))
    return docs


def _check_patients(message: Hl7Message, reports: list[Report]) -> None:
    """Refuse a report message about several patients (one dictionary, one id)."""
    if reports[0].kind == "header":
        return
    count = sum(1 for s in message.segments if s.name == "PID")
    if count > 1:
        raise Hl7ParseError(f"{count} patients (PID segments) in one report message")


def parse_hl7_message(text: str) -> tuple[Hl7Message, list[Report]]:
    """Parse and split into reports, refusing what cannot be de-identified safely."""
    message = parse_message(text)
    reports = extract_reports(message)
    _check_patients(message, reports)
    return message, reports


def message_id(origin: str, ordinal: int) -> str:
    """The quarantine doc id of message ``ordinal`` of a file (its name, no path)."""
    return f"{os.path.basename(origin) or 'message'}#{ordinal}"


def quarantine_record(origin: str, ordinal: int, stage: str, error_type: str,
                      message: str, raw: bytes) -> QuarantineRecord:
    """Make the quarantine record of message ``ordinal`` of a file (PHI-free text)."""
    return QuarantineRecord(
        doc_id=message_id(origin, ordinal), stage=stage,
        error_type=error_type, error_message=message, raw=raw, origin=origin,
        source=SOURCE,
    )


def read_hl7(path: str, data: bytes) -> Iterator[ClinicalDocument | QuarantineRecord]:
    """Every report of every message in one file; failed messages as quarantine.

    Never raises: a message that cannot be framed or decoded is quarantined at
    ``read``, one that cannot be parsed at ``parse``, and the rest of the file
    goes on.
    """
    data, _ = narrow(data)  # UTF-16/32 with a mark: read as UTF-8
    try:
        frames = list(frame_file(data).frames())
    except Exception as exc:  # noqa: BLE001 - framing bugs must not lose the file
        reraise_interrupt(exc)
        yield quarantine_record(path, 0, "read", type(exc).__name__,
                                "file could not be framed", data)
        return
    for frame in frames:
        if frame.error is not None:
            yield quarantine_record(path, frame.ordinal, "read", "FramingError",
                                    frame.error, frame.data)
            continue
        try:
            text, codec = decode_message(frame.data)
        except Exception as exc:  # noqa: BLE001 - never expected; fail closed
            reraise_interrupt(exc)
            yield quarantine_record(path, frame.ordinal, "read", type(exc).__name__,
                                    "message could not be decoded", frame.data)
            continue
        try:
            message, reports = parse_hl7_message(text)
            docs = build_documents(message, path, codec, reports)
        except Hl7ParseError as exc:
            yield quarantine_record(path, frame.ordinal, "parse", "Hl7ParseError",
                                    str(exc), frame.data)
            continue
        except Exception as exc:  # noqa: BLE001 - message text may hold PHI: not kept
            reraise_interrupt(exc)
            yield quarantine_record(path, frame.ordinal, "parse", type(exc).__name__,
                                    f"unexpected {type(exc).__name__} while parsing",
                                    frame.data)
            continue
        yield from docs


# ------------------------------------------------------------ header columns

COLUMN_KEYS = ("birth_year", "birth_date_shifted", "admit_date_shifted",
               "discharge_date_shifted", "observation_date_shifted",
               "report_date_shifted", "age_90_or_over")
_COLUMN_FIELDS = (
    ("birth_date_shifted", ("PID.7",)),
    ("admit_date_shifted", ("PV1.44",)),
    ("discharge_date_shifted", ("PV1.45",)),
    ("observation_date_shifted", ("OBR.7", "TXA.4")),
    ("report_date_shifted", ("OBR.22", "TXA.6")),
)


def _raw_date(dictionary: PatientDictionary, field: str) -> str | None:
    """Find the ``YYYYMMDD`` form the seeder writes first for a date field."""
    for value, label, entry_field in dictionary.rows():
        if entry_field == field and label == "DATE":
            if len(value) == 8 and is_digits(value):
                return value
    return None


def header_columns(doc: ClinicalDocument, rewriter, person_id: str,
                   avoid: Originals | None = None) -> tuple[tuple[str, str], ...]:
    """Date columns for the research extract, shifted like the narrative's dates.

    Computed after the rewrite (they need the person's shift), from the raw
    dates the document's dictionary holds. The birth columns are the persons
    table's (:func:`~deid_pipeline.surrogates.years.birth_of`): ``birth_year``
    is ``90+`` and ``birth_date_shifted`` absent for a person over 89 under
    the safe-harbor policy, and ``age_90_or_over`` says the age reckoned at
    the run's ``as_of_year``. Keys: :data:`COLUMN_KEYS` (only those with a
    value). A shifted date that is, to the day, an original of ``avoid``
    (another patient's birth date in the same batch) is left out, as the
    header writes only its year (``HeaderRewriter.date``).
    """
    if doc.dictionary is None:
        return ()

    def replace(text: str, label: str) -> str:
        return rewriter.replace_value(text, label, person_id)

    raw = {}
    for key, fields in _COLUMN_FIELDS:
        value = next((v for f in fields if (v := _raw_date(doc.dictionary, f))), None)
        if value:
            raw[key] = value
    dob = raw.pop("birth_date_shifted", None)
    birth = birth_of(parse_birth(dob) if dob else None,
                     rewriter.date_offset(person_id), rewriter.as_of_year,
                     rewriter.policy)
    out: list[tuple[str, str]] = []
    if birth.year is not None:
        out.append(("birth_year", birth.year))
    if birth.date is not None and not _is_original(birth.date, avoid):
        out.append(("birth_date_shifted", birth.date.isoformat()))
    if birth.over_89:
        out.append(("age_90_or_over", "true"))
    for key, value in raw.items():
        shifted = shift_ts(value, replace)
        when = parse_written_date(shifted) if shifted else None
        if when is not None and not _is_original(when, avoid):
            out.append((key, when.isoformat()))
    return tuple(out)


def _is_original(when: date, avoid: Originals | None) -> bool:
    return avoid is not None and avoid.spelled_by(when.strftime("%Y%m%d"))
