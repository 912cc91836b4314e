"""The one data model shared by every stage: small frozen dataclasses.

Nothing here carries behaviour beyond geometry helpers. No repr contains text
or values (``repr=False`` on every field that can hold PHI), so an object that
ends up in a log line (Beam logs element reprs at DEBUG) leaks nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class PatientDictionary:
    """Identifiers of the document's patient (and relatives, providers) from its header.

    ``person_key`` is the strong key the header gives (MRN with assigning
    authority); linking and surrogates key on it.
    """

    entries: tuple[DictionaryEntry, ...] = ()
    person_key: str | None = None

    def __reduce__(self):  # noqa: ANN204 - pickle protocol
        """Pickle the entries as three columns.

        A report's header expands to hundreds of entries and every spill file
        carries them; columns pickle four times faster than entry objects.
        """
        entries = self.entries
        return (_dictionary_from_columns,
                (tuple(e.value for e in entries), tuple(e.label for e in entries),
                 tuple(e.field for e in entries), self.person_key))


def _dictionary_from_columns(values: tuple[str, ...], labels: tuple[str, ...],
                             fields: tuple[str, ...], person_key: str | None
                             ) -> PatientDictionary:
    return PatientDictionary(tuple(map(DictionaryEntry, values, labels, fields)),
                             person_key)


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
