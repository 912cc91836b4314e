"""The one data model shared by every stage: small frozen dataclasses.

One is a hand-written class: :class:`PatientDictionary` keeps its entries as
columns (see there), immutable and compared by content as the others.

Nothing here carries behaviour beyond geometry helpers. No repr contains text
or values (``repr=False`` on every field that can hold PHI), so an object that
ends up in a log line (Beam logs element reprs at DEBUG) leaks nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import FrozenInstanceError, dataclass, field

from deid_pipeline.labels import check_label


def _reduce_by_fields(self):  # noqa: ANN001, ANN202 - shared __reduce__
    """Pickle as ``(class, field values)``.

    The generic pickling of slotted dataclasses looks the fields up on every
    object and sends a dict per object; spill files hold tens of thousands of
    these per chunk, and this form is several times faster to write and read.
    """
    return (type(self), tuple(getattr(self, name) for name in self.__slots__))


@dataclass(frozen=True, slots=True, order=True)
class PhiSpan:
    """A PHI mention: character offsets into the ORIGINAL text, end exclusive."""

    __reduce__ = _reduce_by_fields

    start: int
    end: int
    label: str
    source: str
    confidence: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"bad span offsets {self.start}..{self.end}")
        check_label(self.label)

    def overlaps(self, other: PhiSpan) -> bool:
        return self.start < other.end and other.start < self.end

    def contains(self, other: PhiSpan) -> bool:
        return self.start <= other.start and other.end <= self.end

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class DictionaryEntry:
    """One identifier known from a structured header, e.g. PID-5 family name."""

    __reduce__ = _reduce_by_fields

    value: str = field(repr=False)
    label: str
    field: str

    def __post_init__(self) -> None:
        check_label(self.label)


class PatientDictionary:
    """Identifiers of the document's patient (and relatives, providers) from its header.

    ``person_key`` is the strong key the header gives (MRN with assigning
    authority); linking and surrogates key on it.

    Held as three columns, ``values``, ``labels`` and ``fields``: a report's
    header expands to hundreds of entries, and every document is pickled
    twice or more between a run's steps (its spill files). Columns pickle as
    three tuples of strings; the :class:`DictionaryEntry` objects
    (``entries``) are made on first use, where a step reads them (tagging),
    and a step that reads the columns only (the leak guard) never makes
    them. Immutable, compared by content, and no repr shows a value.
    """

    __slots__ = ("values", "labels", "fields", "person_key", "_entries")

    values: tuple[str, ...]
    labels: tuple[str, ...]
    fields: tuple[str, ...]
    person_key: str | None

    def __init__(self, entries: Iterable[DictionaryEntry] = (),
                 person_key: str | None = None) -> None:
        entries = tuple(entries)
        _set_columns(self, tuple(e.value for e in entries),
                     tuple(e.label for e in entries),
                     tuple(e.field for e in entries), person_key, entries)

    @classmethod
    def from_columns(cls, values: Sequence[str], labels: Sequence[str],
                     fields: Sequence[str], person_key: str | None = None
                     ) -> PatientDictionary:
        """A dictionary of these columns (each label checked once)."""
        values, labels, fields = tuple(values), tuple(labels), tuple(fields)
        if not len(values) == len(labels) == len(fields):
            raise ValueError("dictionary columns of different lengths")
        for label in set(labels):
            check_label(label)
        dictionary = object.__new__(cls)
        _set_columns(dictionary, values, labels, fields, person_key, None)
        return dictionary

    @property
    def entries(self) -> tuple[DictionaryEntry, ...]:
        """One entry per row, made on first use (two threads may both make them)."""
        entries = self._entries
        if entries is None:
            entries = tuple(map(DictionaryEntry, self.values, self.labels, self.fields))
            object.__setattr__(self, "_entries", entries)
        return entries

    def rows(self) -> Iterator[tuple[str, str, str]]:
        """``(value, label, field)`` of each entry, read from the columns."""
        return zip(self.values, self.labels, self.fields)

    def _key(self) -> tuple:
        return (self.values, self.labels, self.fields, self.person_key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PatientDictionary):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"PatientDictionary(<{len(self.values)} entries>)"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):  # noqa: ANN204 - pickle protocol
        """Pickle the three columns; entries are made again where used."""
        return (_dictionary_from_columns,
                (self.values, self.labels, self.fields, self.person_key))


def _set_columns(dictionary: PatientDictionary, values: tuple[str, ...],
                 labels: tuple[str, ...], fields: tuple[str, ...],
                 person_key: str | None,
                 entries: tuple[DictionaryEntry, ...] | None) -> None:
    for name, value in (("values", values), ("labels", labels), ("fields", fields),
                        ("person_key", person_key), ("_entries", entries)):
        object.__setattr__(dictionary, name, value)


def _dictionary_from_columns(values: tuple[str, ...], labels: tuple[str, ...],
                             fields: tuple[str, ...], person_key: str | None
                             ) -> PatientDictionary:
    return PatientDictionary.from_columns(values, labels, fields, person_key)


@dataclass(frozen=True, slots=True)
class ClinicalDocument:
    """One narrative to de-identify, with what its input told us about it.

    ``source`` is the input format (``physionet``, ``text``, ``jsonl``,
    ``parquet``, ``hl7``); ``origin`` the file it came from; ``person_key`` a
    patient key the input carries (PhysioNet patient number, HL7 MRN).
    ``gold`` holds reference spans when the input is an annotated corpus.
    """

    __reduce__ = _reduce_by_fields

    doc_id: str
    text: str = field(repr=False)
    source: str
    origin: str = ""
    person_key: str | None = field(default=None, repr=False)
    metadata: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    dictionary: PatientDictionary | None = field(default=None, repr=False)
    gold: tuple[PhiSpan, ...] = ()


@dataclass(frozen=True, slots=True)
class Replacement:
    """The audit record of one rewrite: what stood at ``span`` and what replaced it."""

    __reduce__ = _reduce_by_fields

    span: PhiSpan
    original: str = field(repr=False)
    replacement: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class TaggedDocument:
    """A document with its merged PHI spans and the tagger's document confidence."""

    __reduce__ = _reduce_by_fields

    document: ClinicalDocument
    spans: tuple[PhiSpan, ...]
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class DeidentifiedDocument:
    """The research-safe text of a document plus the protected audit of rewrites."""

    __reduce__ = _reduce_by_fields

    doc_id: str
    person_id: str
    source: str
    text: str = field(repr=False)
    confidence: float | None
    replacements: tuple[Replacement, ...] = field(default=(), repr=False)
    metadata: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    pipeline_version: str = ""

    @property
    def n_phi(self) -> int:
        return len(self.replacements)


@dataclass(frozen=True, slots=True)
class QuarantineRecord:
    """A record that failed a stage: kept whole, never written as de-identified.

    ``error_message`` and ``raw`` may contain PHI: they go only to the
    protected quarantine table, never to logs or metric names.
    """

    __reduce__ = _reduce_by_fields

    doc_id: str
    stage: str
    error_type: str
    error_message: str = field(repr=False)
    raw: bytes = field(repr=False)
    origin: str = ""
    source: str = ""
