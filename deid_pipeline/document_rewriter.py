"""The per-document rewrite step, Beam-free: tagged document -> research text.

Shared by the Beam surrogate stage, the MLLP gateway and tests, so every path
computes person ids and replacements the same way.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import cached_property

from deid_pipeline import __version__, leak_guard
from deid_pipeline.keys import person_id
from deid_pipeline.labels import builtin_label, category, is_site_label
from deid_pipeline.linking.keys import fallback_person_key, record_person_key
from deid_pipeline.model import DeidentifiedDocument, PhiSpan, TaggedDocument
from deid_pipeline.policy import Mode, Policy, member_of
from deid_pipeline.rewrite import (
    RewriteContext,
    make_operator,
    replacement_of,
    rewrite,
)
from deid_pipeline.surrogates import ENGLISH, Originals, check_language
from deid_pipeline.surrogates.dates import person_offset
from deid_pipeline.tagger.confidence import DEFAULT_REVIEW_FLOOR, HeldForReviewError

_NAME_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "USERNAME"})


def originals_of(*tagged: TaggedDocument) -> Originals:
    """What the surrogates of these documents must not spell.

    Every header value of their dictionaries and every tagged span's text:
    a surrogate equal to one of them would put a real value of the same
    message back into the output under another role.
    """
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for t in tagged:
        doc = t.document
        dictionary = doc.dictionary
        if dictionary is not None:
            # A header name's forms ("Smith, John", "J. Smith") are made of its
            # parts, each an entry too: the one-word entries are enough.
            for value, label, _field in dictionary.rows():
                if value not in seen and (value.isalpha()
                                          or label not in _NAME_LABELS):
                    seen.add(value)
                    pairs.append((value, label))
        pairs.extend((value, builtin_label(s.label, value)) for s in t.spans
                     for value in (doc.text[s.start:s.end],))
    return Originals.of(pairs)


def _capital_after_first(value: str) -> bool:
    """Whether a word after the first of ``value`` starts with a capital."""
    return any(w[:1].isupper() for w in value.split()[1:])


# Sources whose metadata is the input's own keys, passed through as written.
_PASSED_THROUGH = frozenset({"jsonl", "parquet"})


@dataclass(frozen=True)
class Rewriter:
    """Picklable rewrite configuration: mode, policy and the run's secret key."""

    mode: Mode
    key: bytes
    policy: Policy = Policy.SAFE_HARBOR
    pipeline_version: str = __version__
    # Ages over 89 and two-digit years are reckoned from it. None: this year,
    # fixed when the rewriter is made (a run that crosses midnight on New
    # Year's Eve stays consistent; workers get the driver's).
    as_of_year: int | None = None
    # The input keys (JSONL keys, Parquet columns) whose values the research
    # extract publishes. Nothing de-identifies them: an "mrn" or "name" key
    # would reach the research output as written, so none is kept unless named.
    keep_metadata: frozenset[str] = frozenset()
    # A document whose confidence (tagger/confidence.py) is below it is held
    # for review instead of published; 0 publishes every document.
    review_floor: float = DEFAULT_REVIEW_FLOOR
    # Whose surrogates: ``en`` or ``es`` (names, places, ids, day-first
    # dates); ``run`` takes the model's recorded language unless --language.
    language: str = ENGLISH

    def __post_init__(self) -> None:
        check_language(self.language)
        object.__setattr__(self, "mode", member_of(Mode, self.mode, "mode"))
        object.__setattr__(self, "policy", member_of(Policy, self.policy, "policy"))
        if self.as_of_year is None:
            object.__setattr__(self, "as_of_year", datetime.date.today().year)
        object.__setattr__(self, "keep_metadata", frozenset(self.keep_metadata))
        object.__setattr__(self, "_last_context", ("", None))

    @cached_property
    def _operator(self):
        # Built once per process (validation, Faker instances), not per document.
        return make_operator(self.mode)

    def person_id_for(
        self, tagged: TaggedDocument, person_key: str | None = None
    ) -> str:
        """Person id from the linked key, else the record's own key, else the doc."""
        doc = tagged.document
        key = person_key or record_person_key(doc) or fallback_person_key(doc)
        return person_id(self.key, key)

    def replace_value(self, value: str, label: str, pid: str,
                      avoid: Originals | None = None) -> str:
        """Rewrite one structured value (an HL7 header field) as its narrative twin.

        Uses the same operator and context as the narrative, so a surname in
        PID-5 and the same surname in the report text get the same surrogate.
        ``avoid``: the message's originals (see :func:`originals_of`).
        """
        span = PhiSpan(0, len(value), label, "header", 1.0)
        return replacement_of(self._operator, value, span, self._context(pid, avoid))

    def date_offset(self, pid: str) -> int:
        """The person's date shift in days, as the narrative's dates get it.

        The research tables' birth years (``surrogates.years``) move by it.
        """
        return person_offset(self._new_context(pid))

    def _new_context(self, pid: str, avoid: Originals | None = None
                     ) -> RewriteContext:
        return RewriteContext(key=self.key, person_id=pid, policy=self.policy,
                              as_of_year=self.as_of_year, avoid=avoid,
                              language=self.language)

    def _context(self, pid: str, avoid: Originals | None = None) -> RewriteContext:
        """The person's context, kept while the same person's values come in.

        An HL7 header asks for a few dozen values of one person in a row.
        """
        last = self._last_context
        if last[0] != pid or last[1] is None or last[1].avoid is not avoid:
            last = (pid, self._new_context(pid, avoid))
            # One tuple assigned at once: a thread reading it sees either.
            object.__setattr__(self, "_last_context", last)
        return last[1]

    def hold_if_unsure(self, tagged: TaggedDocument) -> None:
        """Raise HeldForReviewError if the tagger's confidence is below the floor.

        Tag mode is itself a review format: nothing is held.
        """
        confidence = tagged.confidence
        if (self.mode != Mode.TAG and confidence is not None
                and confidence < self.review_floor):
            raise HeldForReviewError(
                f"confidence {confidence:.3f} below the review floor "
                f"{self.review_floor:g}")

    def guard(
        self, tagged: TaggedDocument, result: DeidentifiedDocument
    ) -> DeidentifiedDocument:
        """Raise LeakDetectedError if a removed PHI value is still in ``result``.

        Tag mode writes originals inline on purpose (a review format, not a
        research output), so there is nothing to guard.
        """
        if self.mode == Mode.TAG:
            return result
        return leak_guard.check(tagged, result, self.policy)

    def rewrite(
        self, tagged: TaggedDocument, person_key: str | None = None,
        avoid: Originals | None = None,
    ) -> DeidentifiedDocument:
        """Rewrite the document's spans; no surrogate spells one of ``avoid``.

        ``avoid`` defaults to the document's own originals; an HL7 message
        passes all of its reports' (a street surrogate in one report must
        not spell a doctor's name tagged in another), the batch run those of
        all the documents of the person (``transforms.chunks.PersonOriginals``).
        """
        doc = tagged.document
        pid = self.person_id_for(tagged, person_key)
        ctx = self._new_context(pid, avoid if avoid is not None
                                else originals_of(tagged))
        spans = tagged.spans
        if self.mode != "tag" and any(is_site_label(s.label) for s in spans):
            # A label map's ``keep`` labels are the site's to keep: not
            # rewritten, so not guarded either (tag mode still shows them).
            # Unless the span names more than its first word: a kinship span
            # the model ran into a name (``madre Carmen``) would keep the
            # name; such a span is rewritten, which for a keep label masks it.
            spans = tuple(s for s in spans if category(s.label) != "KEEP"
                          or _capital_after_first(doc.text[s.start:s.end]))
        text, replacements = rewrite(doc.text, spans, self._operator, ctx)
        # A .txt file's byte order mark is kept in the document (its offsets
        # are the file's); the research text starts without it.
        text = text.removeprefix("\ufeff")
        metadata = doc.metadata
        if doc.source in _PASSED_THROUGH:
            metadata = tuple((k, v) for k, v in metadata if k in self.keep_metadata)
        if doc.source == "hl7":
            # Structured header columns worth keeping (sex, shifted visit dates,
            # birth year), shifted with the same per-person shift as the text.
            from deid_pipeline.hl7.documents import header_columns

            metadata = metadata + header_columns(doc, self, pid, ctx.avoid)
        return DeidentifiedDocument(
            doc_id=doc.doc_id,
            person_id=pid,
            source=doc.source,
            text=text,
            confidence=tagged.confidence,
            replacements=replacements,
            metadata=metadata,
            pipeline_version=self.pipeline_version,
        )
