"""Column actions: one table row in, its research row and identifier rows out.

Each action reuses the one rule the rest of the extract follows:

- ``person``: :func:`deid_pipeline.keys.person_id` of the person key, as
  ``run`` gives a JSONL ``person_key`` (published as ``person_id``);
- ``pseudonym``: the keyed, format-preserving ID surrogate
  (``surrogates.identifiers.IdentifierGenerator``) keyed by the column's
  ``domain`` rather than by a person, so an encounter id is the same
  pseudonym in every table and every run with the same key;
- ``date``/``datetime``: moved by the person's date shift
  (``Rewriter.date_offset``), the offset the dates in the person's text move
  by, so intervals survive across columns and text; kept under the limited
  data set, as the text's dates are;
- ``birth_date``: ``surrogates.years.birth_of``, the persons table's rule;
- ``age``: over 89 becomes 90 (Safe Harbor's single category "90 or older");
- ``zip``: ``surrogates.zip3.safe_harbor_zip3`` (five digits kept under the
  limited data set);
- ``text``: the document flow (tag, rewrite, leak guard) with the row's
  person's column values seeded as a header dictionary, and the ids of their
  pseudonym columns written as those columns' pseudonyms.

A value an action cannot read (a date that is no date) raises
:class:`ColumnError`: the caller quarantines the whole row. Messages name the
column and never its value.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from typing import NamedTuple

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.flow import StageError, quarantine_record
from deid_pipeline.hl7.seed import date_forms, id_forms, name_forms, phone_forms
from deid_pipeline.keys import person_id
from deid_pipeline.labels import category
from deid_pipeline.model import (
    ClinicalDocument,
    DeidentifiedDocument,
    DictionaryEntry,
    PatientDictionary,
    QuarantineRecord,
    Replacement,
)
from deid_pipeline.outputs.rows import identifier_rows
from deid_pipeline.policy import Policy
from deid_pipeline.rewrite import RewriteContext
from deid_pipeline.surrogates.identifiers import IdentifierGenerator, id_key
from deid_pipeline.surrogates.keyed import SurrogateError
from deid_pipeline.surrogates.years import birth_of
from deid_pipeline.surrogates.zip3 import safe_harbor_zip3
from deid_pipeline.tables.policy import Action, ColumnSpec, TablePolicy
from deid_pipeline.tables.read import TableRow

__all__ = ["ColumnError", "RowOutcome", "deidentify_row", "person_key_of",
           "person_row", "pseudonyms_of", "seed_entries", "COLUMNS_STAGE"]

COLUMNS_STAGE = "columns"
_NAME_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "USERNAME"})
_ZIP = re.compile(r"(\d{5})(?:-?\d{4})?")
_US_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_IDS = IdentifierGenerator()
# Column actions whose values are the person's PHI wherever the text has them.
_SEEDED = {Action.ZIP: "ZIP", Action.BIRTH_DATE: "DATE"}
AGE_TOP = 90


class ColumnError(ValueError):
    """A value its column's action cannot read; the row is quarantined whole."""


class RowOutcome(NamedTuple):
    """What one row became.

    Fields:
      table, index: the row (``TableRow``).
      research: the research row (column -> value), None if quarantined.
      identifiers: identifier-view rows (PHI: originals with replacements).
      quarantine: the row's quarantine record when it could not be published.
    """

    table: str
    index: int
    research: dict | None
    identifiers: list[dict]
    quarantine: QuarantineRecord | None


def row_id(table: str, index: int) -> str:
    """The row's id in the identifier view and quarantine: ``table/index``."""
    return f"{table}/{index}"


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None


def person_key_of(policy: TablePolicy, row: TableRow) -> str | None:
    """The row's person key (its person column's value), if any."""
    column = policy.person_column
    return _text(dict(row.values).get(column)) if column else None


def _forms(value: str, label: str) -> list[str]:
    if label in _NAME_LABELS:
        return [f for part in value.split() for f in name_forms(part)] + [value]
    if category(label) == "DATE":
        try:
            return date_forms(_date(value, None).strftime("%Y%m%d"))
        except ColumnError:
            return []
    if label in ("PHONE", "FAX"):
        return phone_forms(value)
    return id_forms(value)


def seed_entries(policy: TablePolicy, row: TableRow) -> list[DictionaryEntry]:
    """Dictionary entries of a row's person, pseudonym, zip, birth and seed columns.

    A column's ``seed`` label overrides its action's.
    """
    entries = []
    values = dict(row.values)
    for name, spec in policy.columns.items():
        label = spec.seed
        if label is None and spec.action == Action.PERSON:
            label = spec.label or "MEDICALRECORD"
        elif label is None and spec.action == Action.PSEUDONYM:
            label = spec.label or "IDNUM"
        elif label is None:
            label = _SEEDED.get(spec.action)
        value = _text(values.get(name))
        if label is None or value is None:
            continue
        field = f"{row.table}.{name}"
        entries.extend(DictionaryEntry(f, label, field)
                       for f in dict.fromkeys(_forms(value, label)) if len(f) >= 3)
    return entries


def _date(value: object, fmt: str | None) -> datetime.date:
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    text = _text(value) or ""
    try:
        if fmt:
            return datetime.datetime.strptime(text, fmt).date()
        m = _US_DATE.fullmatch(text)
        if m:
            return datetime.date(int(m[3]), int(m[1]), int(m[2]))
        return datetime.date.fromisoformat(text[:10] if len(text) > 10 else text)
    except ValueError:
        raise ColumnError("not a date") from None


def _birth(value: object, fmt: str | None) -> datetime.date | int:
    """A date of birth, or its year when that is all the column says."""
    text = _text(value) or ""
    if isinstance(value, int) or re.fullmatch(r"\d{4}", text):
        return int(text)
    return _date(value, fmt)


def _datetime(value: object, fmt: str | None) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    text = _text(value) or ""
    try:
        if fmt:
            return datetime.datetime.strptime(text, fmt)
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ColumnError("not a date and time") from None


def pseudonym(key: bytes, domain: str, label: str, value: object) -> object:
    """The keyed pseudonym of an id in ``domain``: same shape, same type."""
    text = _text(value)
    if text is None:
        return None
    ctx = RewriteContext(key=key, person_id=f"pseudonym-domain:{domain}")
    try:
        fake = _IDS.generate(text, label, ctx)
    except SurrogateError:
        raise ColumnError("no letter or digit to pseudonymise") from None
    return int(fake) if isinstance(value, int) and fake.isdigit() else fake


def pseudonyms_of(policy: TablePolicy, row: TableRow, key: bytes
                  ) -> dict[str, str]:
    """The row's pseudonym columns: id key of each value -> its pseudonym.

    A text of the person that mentions one of these ids gets the column's
    pseudonym in its place (:func:`with_pseudonyms`), so the text and the
    columns name an encounter alike.
    """
    found = {}
    values = dict(row.values)
    for name, spec in policy.columns.items():
        if spec.action != Action.PSEUDONYM:
            continue
        text = _text(values.get(name))
        if text is not None and id_key(text):
            try:
                found[id_key(text)] = str(pseudonym(
                    key, spec.domain or name, spec.label or "IDNUM", text))
            except ColumnError:
                continue
    return found


def with_pseudonyms(text: str, doc: DeidentifiedDocument,
                    pseudonyms: dict[str, str]) -> DeidentifiedDocument:
    """``doc`` with the column pseudonym in place of each ID span that names it.

    The text is rebuilt from the original ``text`` and the replacements.
    """
    if not pseudonyms:
        return doc
    pieces, replacements, end = [], [], 0
    changed = False
    for r in doc.replacements:
        new = r.replacement
        if category(r.span.label) == "ID":
            fake = pseudonyms.get(id_key(r.original))
            if fake is not None and fake != new:
                new, changed = fake, True
        pieces += [text[end:r.span.start], new]
        replacements.append(Replacement(r.span, r.original, new))
        end = r.span.end
    if not changed:
        return doc
    pieces.append(text[end:])
    return dataclasses.replace(doc, text="".join(pieces),
                               replacements=tuple(replacements))


class _Row:
    """One row's de-identification: its person, offset and identifier rows."""

    def __init__(self, table: str, row: TableRow, rewriter: Rewriter,
                 person_key: str | None) -> None:
        self.table, self.row, self.rewriter = table, row, rewriter
        self.doc_id = row_id(table, row.index)
        self.pid = person_id(rewriter.key, person_key) if person_key else None
        self.limited = rewriter.policy == Policy.LIMITED_DATASET
        self.identifiers: list[dict] = []

    @property
    def offset(self) -> int:
        return 0 if self.limited else self.rewriter.date_offset(self.pid)

    def note(self, name: str, label: str, original: object, replacement: object
             ) -> None:
        original = str(original)
        self.identifiers.append({
            "doc_id": f"{self.doc_id}/{name}", "person_id": self.pid or "", "start": 0,
            "end": max(len(original), 1), "label": label,
            "category": category(label), "source": f"column:{name}",
            "confidence": None, "original": original,
            "replacement": "" if replacement is None else str(replacement)})

    def value(self, name: str, spec: ColumnSpec, value: object) -> object:
        action = spec.action
        if action == Action.KEEP:
            return value
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            out = self._apply(name, spec, value)
        except ColumnError as exc:
            raise ColumnError(f"column {name!r} ({action.value}): {exc}") from None
        return out

    def _apply(self, name: str, spec: ColumnSpec, value: object) -> object:
        action = spec.action
        if action == Action.PERSON:
            self.note(name, spec.label or "MEDICALRECORD", value, self.pid)
            return self.pid
        if action == Action.PSEUDONYM:
            label = spec.label or "IDNUM"
            fake = pseudonym(self.rewriter.key, spec.domain or name, label, value)
            self.note(name, label, value, fake)
            return fake
        if action == Action.DATE:
            out = _date(value, spec.format) + datetime.timedelta(days=self.offset)
        elif action == Action.DATETIME:
            out = _datetime(value, spec.format) + datetime.timedelta(days=self.offset)
        elif action == Action.BIRTH_DATE:
            birth = birth_of(_birth(value, spec.format), self.offset,
                             self.rewriter.as_of_year, self.rewriter.policy)
            out = birth.date if spec.form == "date" else birth.year
        elif action == Action.AGE:
            out = _age(value, self.limited)
        elif action == Action.ZIP:
            out = _zip(value, self.limited)
        else:
            raise ColumnError(f"no column action {action.value!r}")
        self.note(name, _LABELS[action], value, out)
        return out


_LABELS = {Action.DATE: "DATE", Action.DATETIME: "DATE", Action.BIRTH_DATE: "DATE",
           Action.AGE: "AGE", Action.ZIP: "ZIP"}


def _age(value: object, limited: bool) -> int:
    try:
        age = float(value) if not isinstance(value, (int, float)) else value
    except (TypeError, ValueError):
        raise ColumnError("not an age") from None
    if age != age or age < 0:
        raise ColumnError("not an age")
    age = int(age)
    return age if limited or age < AGE_TOP else AGE_TOP


def _zip(value: object, limited: bool) -> str:
    text = _text(value) or ""
    if isinstance(value, int):
        text = f"{value:05d}"
    m = _ZIP.fullmatch(text)
    if m is None:
        raise ColumnError("not a ZIP code")
    return m[1] if limited else safe_harbor_zip3(m[1][:3])


def _raw(row: TableRow) -> bytes:
    if row.error:
        return row.raw
    return json.dumps({k: v if isinstance(v, (str, int, float, bool, type(None)))
                       else str(v) for k, v in row.values},
                      ensure_ascii=False).encode("utf-8")


def quarantined(row: TableRow, stage: str, error_type: str, message: str,
                origin: str = "") -> RowOutcome:
    """The whole row to the quarantine (``raw``: the row as JSON, PHI)."""
    record = QuarantineRecord(doc_id=row_id(row.table, row.index), stage=stage,
                              error_type=error_type, error_message=message,
                              raw=_raw(row), origin=origin, source="table")
    return RowOutcome(row.table, row.index, None, [], record)


def _text_column(flow, doc: ClinicalDocument, person_key: str | None,
                 pseudonyms: dict[str, str]
                 ) -> DeidentifiedDocument | QuarantineRecord:
    """``flow.process`` with the person's column pseudonyms put in before the guard."""
    try:
        tagged = flow.tag(doc)
        result = flow.rewrite(tagged, person_key)
        return flow.guard(tagged, with_pseudonyms(doc.text, result, pseudonyms))
    except StageError as error:
        return quarantine_record(error, doc)


def deidentify_row(policy: TablePolicy, row: TableRow, rewriter: Rewriter, flow,
                   seeds: tuple[DictionaryEntry, ...] = (), origin: str = "",
                   pseudonyms: dict[str, str] | None = None) -> RowOutcome:
    """De-identify one row under ``policy``; a failure quarantines it whole.

    ``flow``: a ``DocumentFlow`` with a tagger (only text columns use it);
    ``seeds``: the dictionary of the row's person (all their rows' columns);
    ``pseudonyms``: their pseudonym columns' (:func:`pseudonyms_of`), written
    in the text where it names those ids.
    """
    if row.error:
        return quarantined(row, "read", "InvalidRow", row.error, origin)
    person_key = person_key_of(policy, row)
    if policy.person_column and person_key is None:
        return quarantined(row, COLUMNS_STAGE, "ColumnError",
                           f"column {policy.person_column!r} (person): empty",
                           origin)
    state = _Row(row.table, row, rewriter, person_key)
    values = dict(row.values)
    research: dict = {}
    try:
        for name, spec in policy.published():
            if spec.action == Action.TEXT:
                continue
            out_name = "person_id" if spec.action == Action.PERSON else name
            research[out_name] = state.value(name, spec, values.get(name))
    except ColumnError as exc:
        return quarantined(row, COLUMNS_STAGE, "ColumnError", str(exc), origin)
    dictionary = PatientDictionary(tuple(seeds), person_key)
    for name, spec in policy.published():
        if spec.action != Action.TEXT:
            continue
        text = values.get(name)
        if text is None:
            research[name] = None
            continue
        doc = ClinicalDocument(doc_id=f"{state.doc_id}/{name}", text=str(text),
                               source="table", origin=origin, person_key=person_key,
                               dictionary=dictionary)
        result = _text_column(flow, doc, person_key, pseudonyms or {})
        if isinstance(result, QuarantineRecord):
            return quarantined(row, result.stage, result.error_type,
                               f"column {name!r}: {result.error_message}", origin)
        research[name] = result.text
        state.identifiers.extend(identifier_rows(result))
    ordered = {("person_id" if s.action == Action.PERSON else n): None
               for n, s in policy.published()}
    ordered.update(research)
    return RowOutcome(row.table, row.index, ordered, state.identifiers, None)


def person_row(pid: str, rows: list[tuple[TablePolicy, TableRow]], written: int,
               rewriter: Rewriter) -> dict:
    """The persons-table row of a person key's rows (``persons/``).

    ``birth_year`` from the first readable ``birth_date`` column (the rule of
    every table, ``years.birth_of``), ``zip3`` from the first ``zip`` column.
    """
    birth_year = zip3 = None
    limited = rewriter.policy == Policy.LIMITED_DATASET
    offset = 0 if limited else rewriter.date_offset(pid)
    for policy, row in rows:
        values = dict(row.values)
        for name, spec in policy.columns.items():
            value = values.get(name)
            if _text(value) is None:
                continue
            try:
                if spec.action == Action.BIRTH_DATE and birth_year is None:
                    birth_year = birth_of(_birth(value, spec.format), offset,
                                          rewriter.as_of_year, rewriter.policy).year
                elif spec.action == Action.ZIP and zip3 is None:
                    zip3 = _zip(value, False)
            except ColumnError:
                continue
    return {"person_id": pid, "n_documents": written, "linked_by": ["table"],
            "birth_year": birth_year, "sex": None, "zip3": zip3}
