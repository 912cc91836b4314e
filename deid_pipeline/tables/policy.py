"""A table's column policy: one action per column, validated strictly.

A site writes one policy file per table (YAML or JSON), e.g.::

    columns:
      note_id: {action: pseudonym, domain: note}
      patient_id: person
      encounter_id: {action: pseudonym, domain: encounter}
      note_date: date
      text: text

The file is read into pydantic models that forbid unknown keys (DESIGN.md:
one validated model for every file a site writes): an unknown action, an
option an action does not take, a misspelt key is an error naming it, before
any record is read. :func:`check_header` then checks the policy against the
table's own columns (a column the policy names that the table lacks is an
error; an undeclared column is dropped, or an error with ``undeclared: error``).
"""

from __future__ import annotations

import enum
import json
import os
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deid_pipeline.labels import LABELS

__all__ = [
    "Action",
    "ColumnSpec",
    "PolicyError",
    "TablePolicy",
    "check_header",
    "load_policy",
]


class PolicyError(ValueError):
    """A column policy that cannot be used; the message names the culprit."""


class Action(str, enum.Enum):
    """What a column becomes in the research table."""

    TEXT = "text"  # de-identified with the tagger, as run's documents
    PERSON = "person"  # the person key; published as person_id
    PSEUDONYM = "pseudonym"  # keyed, format-preserving, stable across tables
    DATE = "date"  # shifted by the person's offset; Arrow date32
    DATETIME = "datetime"  # shifted by the person's offset; Arrow timestamp
    BIRTH_DATE = "birth_date"  # Safe Harbor (surrogates.years.birth_of)
    AGE = "age"  # ages over 89 grouped as 90
    ZIP = "zip"  # ZIP3, restricted ZIP3s to 000
    KEEP = "keep"  # published as written
    DROP = "drop"  # not published (the default for an undeclared column)


# Which options each action takes (any other is an error naming it).
_OPTIONS: dict[Action, frozenset[str]] = {
    Action.TEXT: frozenset(),
    Action.PERSON: frozenset({"label"}),
    Action.PSEUDONYM: frozenset({"domain", "label"}),
    Action.DATE: frozenset({"format"}),
    Action.DATETIME: frozenset({"format"}),
    Action.BIRTH_DATE: frozenset({"format", "form"}),
    Action.AGE: frozenset(),
    Action.ZIP: frozenset(),
    Action.KEEP: frozenset(),
    Action.DROP: frozenset(),
}
# Options every action takes.
_COMMON = frozenset({"action", "doc", "seed"})


class ColumnSpec(BaseModel):
    """One column's action and its options.

    ``domain``: the id space a pseudonym is keyed in (default: the column's
    name); columns of several tables with one domain join. ``label``: the
    PHI label of a pseudonym or person value (IDNUM, MEDICALRECORD, ...).
    ``format``: a ``strptime`` format of a date column (default: ISO, US
    ``M/D/YYYY``, ``YYYYMMDD``). ``form``: a birth date published as a
    shifted ``date`` or its ``year`` (string, ``90+`` over 89). ``seed``: a
    label; the value is looked for in the row's text as header values are
    (a name column: ``PATIENT``). ``doc``: the column's doc string.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)

    action: Action
    domain: str | None = None
    label: str | None = None
    format: str | None = None
    form: Literal["date", "year"] = "date"
    seed: str | None = None
    doc: str | None = None

    @field_validator("label", "seed")
    @classmethod
    def _known_label(cls, value: str | None) -> str | None:
        if value is not None and value not in LABELS:
            raise ValueError(f"unknown label {value!r}")
        return value


class TablePolicy(BaseModel):
    """A table's validated policy: its columns' specs, in the policy's order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    columns: dict[str, ColumnSpec] = Field(min_length=1)
    undeclared: Literal["drop", "error"] = "drop"
    version: str | None = None
    comment: str | None = None

    @property
    def person_column(self) -> str | None:
        """The column holding the person key, if the table has one."""
        found = [n for n, s in self.columns.items() if s.action == Action.PERSON]
        return found[0] if found else None

    def published(self) -> list[tuple[str, ColumnSpec]]:
        """The columns the research table has, in policy order (drop left out)."""
        return [(n, s) for n, s in self.columns.items() if s.action != Action.DROP]


def _spec(path: str, name: str, raw: object) -> dict:
    """A column's raw spec as a dict, its options checked against its action."""
    spec = {"action": raw} if isinstance(raw, str) else raw
    if not isinstance(spec, dict):
        raise PolicyError(f"column policy {path}: column {name!r} must be an action "
                          "name or a mapping with an 'action'")
    action = spec.get("action")
    try:
        action = Action(action)
    except ValueError:
        known = ", ".join(a.value for a in Action)
        raise PolicyError(f"column policy {path}: column {name!r}: unknown action "
                          f"{action!r} (known: {known})") from None
    extra = sorted(set(spec) - _COMMON - _OPTIONS[action])
    if extra:
        raise PolicyError(f"column policy {path}: column {name!r}: action "
                          f"{action.value!r} takes no option {extra[0]!r}")
    return spec


def parse_policy(path: str, data: object) -> TablePolicy:
    """Validate a policy's parsed content (a mapping); PolicyError names the fault."""
    if not isinstance(data, dict):
        raise PolicyError(f"column policy {path}: must be a mapping with 'columns'")
    columns = data.get("columns")
    if isinstance(columns, dict):
        data = {**data, "columns": {str(n): _spec(path, str(n), s)
                                    for n, s in columns.items()}}
    try:
        policy = TablePolicy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        what = ("unknown key" if first["type"] == "extra_forbidden"
                else first["msg"])
        raise PolicyError(f"column policy {path}: {where}: {what}") from None
    persons = [n for n, s in policy.columns.items() if s.action == Action.PERSON]
    if len(persons) > 1:
        raise PolicyError(f"column policy {path}: more than one person column "
                          f"({', '.join(persons)})")
    shifted = [n for n, s in policy.columns.items()
               if s.action in (Action.DATE, Action.DATETIME, Action.BIRTH_DATE)]
    if shifted and not persons:
        raise PolicyError(f"column policy {path}: date column {shifted[0]!r} needs "
                          "a person column (dates shift by the person's offset)")
    return policy


def load_policy(path: str) -> TablePolicy:
    """Read a policy file (``.yaml``/``.yml`` as YAML, anything else as JSON)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise PolicyError(f"cannot read column policy {path!r}: {exc.strerror}"
                          ) from exc
    try:
        if os.path.splitext(path)[1].lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise PolicyError(f"column policy {path}: not valid "
                          f"{'YAML' if path.endswith(('yaml', 'yml')) else 'JSON'}: "
                          f"{type(exc).__name__}") from None
    return parse_policy(path, data)


def check_header(table: str, policy: TablePolicy, header: list[str]) -> list[str]:
    """Check ``policy`` against a table's columns; returns the undeclared ones.

    A column the policy names that the table lacks is an error; so is an
    undeclared column when the policy says ``undeclared: error`` (else they
    are dropped and run.json lists them).
    """
    missing = [n for n in policy.columns if n not in header]
    if missing:
        raise PolicyError(f"table {table}: the policy names column {missing[0]!r}, "
                          "which the table does not have")
    undeclared = [c for c in header if c not in policy.columns]
    if undeclared and policy.undeclared == "error":
        raise PolicyError(f"table {table}: column {undeclared[0]!r} is not in the "
                          "policy (undeclared: error)")
    return undeclared
