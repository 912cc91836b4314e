"""The Arrow schema of a research table: its published columns, typed, documented.

Names are the policy's (the person column becomes ``person_id``), types follow
the action (dates ``date32``, date-times ``timestamp[us]``, ages ``int64``) or,
for ``keep`` and integer ``pseudonym`` columns, the input's own type (Parquet;
CSV and JSONL columns are strings). Each field has a ``doc`` string, as
``deid_pipeline.schemas`` does: the policy's ``doc`` or the action's.
"""

from __future__ import annotations

import datetime

import pyarrow as pa

from deid_pipeline.tables.policy import Action, TablePolicy

__all__ = ["coerce", "table_schema"]

_DOCS = {
    Action.TEXT: "De-identified text (tagged and rewritten as run's documents).",
    Action.PERSON: "Pseudonymous person id (keyed; as documents.person_id).",
    Action.PSEUDONYM: "Keyed pseudonym of the id (same shape; joins across tables "
                      "and runs with the same key and domain).",
    Action.DATE: "Date shifted by the person's offset (as the dates in their text).",
    Action.DATETIME: "Date and time shifted by the person's offset in days.",
    Action.BIRTH_DATE: "Birth date, Safe Harbor (surrogates.years.birth_of): "
                       "shifted; null (year '90+') over 89.",
    Action.AGE: "Age; ages over 89 are 90 (Safe Harbor: 90 or older).",
    Action.ZIP: "First three ZIP digits; 000 for restricted ZIP3s (Safe Harbor).",
    Action.KEEP: "Kept as written (the policy says it is not PHI).",
}


def _type(action: Action, form: str, input_type: pa.DataType | None) -> pa.DataType:
    if action == Action.KEEP:
        return input_type or pa.string()
    if action == Action.PSEUDONYM and input_type is not None and pa.types.is_integer(
            input_type):
        return input_type
    if action == Action.DATE or (action == Action.BIRTH_DATE and form == "date"):
        return pa.date32()
    if action == Action.DATETIME:
        return pa.timestamp("us")
    if action == Action.AGE:
        return pa.int64()
    return pa.string()


def table_schema(policy: TablePolicy, types: dict[str, pa.DataType]) -> pa.Schema:
    """The research table's schema for ``policy`` over input column ``types``."""
    fields = []
    for name, spec in policy.published():
        out = "person_id" if spec.action == Action.PERSON else name
        doc = spec.doc or _DOCS[spec.action]
        fields.append(pa.field(out, _type(spec.action, spec.form, types.get(name)),
                               nullable=True, metadata={"doc": doc}))
    return pa.schema(fields)


def coerce(value: object, type_: pa.DataType) -> object:
    """``value`` as a value of Arrow ``type_`` (JSONL keep values as strings)."""
    if value is None:
        return None
    if pa.types.is_string(type_) and not isinstance(value, str):
        if isinstance(value, (datetime.date, datetime.datetime)):
            return value.isoformat()
        return str(value)
    return value
