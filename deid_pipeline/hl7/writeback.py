"""De-identified HL7 out: the same messages, framing and structure, no PHI.

Per message: parse, seed, tag each report, rewrite it, then write the
rewritten text back field by field (re-escaped) and replace every PHI header
field with the rewriter's surrogate for the same value, so the header and
the narrative agree (``SMITH`` in PID-5 and "Mr. Smith" in the report become
the same surrogate). A message that fails any step is quarantined with its
stage and a PHI-free reason and is not written; the rest of the file is.

A value the header seeds that a sender copied whole into any other field
(an order number in OBR-29, an MRN in MSH-10, a mother's names in PID-21's
components) gets the same surrogate there. No surrogate spells an original of
the message; the batch job also passes each person's originals from every
document of the run (``person_originals``), so none spells an original of
the same person's other messages either. Z-segments (site-defined) are
written as their bare segment id unless the caller keeps them. Before a
message is written, a leak guard reads the whole output message (every
field, component and subcomponent, kept Z-segments included) for every
value seeded from the header and every value removed from the narrative:
anything the field table does not cover (a vendor Z-segment with the
patient's name, a free-text field) and any surrogate that spells an original
sends the message to quarantine instead of the output (docs/hl7-audit.md).

This module holds the order of the steps per message and per file; each
step is its own module: :mod:`~deid_pipeline.hl7.narrative` (report text),
:mod:`~deid_pipeline.hl7.header` (typed fields), :mod:`~deid_pipeline.hl7.copies`
(copied values), :mod:`~deid_pipeline.hl7.guard` (the message guard) and
:mod:`~deid_pipeline.hl7.envelope` (batch headers).

Nothing here logs or prints: callers count results.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from deid_pipeline.document_rewriter import originals_of
from deid_pipeline.flow import DocumentFlow, StageError, stage
from deid_pipeline.flow import quarantine_record as stage_quarantine
from deid_pipeline.hl7.contracts import (
    PersonKeys,
    SupportsRewrite,
    Tagger,
    WritebackError,
)
from deid_pipeline.hl7.copies import (
    replace_found,
    replace_seeded,
    replaced_labels,
    seeded_values,
)
from deid_pipeline.hl7.documents import (
    SOURCE,
    build_documents,
    message_id,
    parse_hl7_message,
    quarantine_record,
)
from deid_pipeline.hl7.envelope import envelope_renderer
from deid_pipeline.hl7.framing import (
    MessageFrame,
    declared_charset,
    decode_message,
    encode_message,
    frame_file,
    render,
)
from deid_pipeline.hl7.guard import (
    GuardedValues,
    output_guard,
    replace_telling_control_id,
)
from deid_pipeline.hl7.header import (
    HeaderRewriter,
    empty_unlisted_person_parts,
    replace_header,
)
from deid_pipeline.hl7.message import Hl7Message, Hl7ParseError, parse_message
from deid_pipeline.hl7.narrative import piece_texts, write_narrative
from deid_pipeline.hl7.seed import seed_dictionary
from deid_pipeline.model import (
    DeidentifiedDocument,
    PatientDictionary,
    QuarantineRecord,
    TaggedDocument,
)
from deid_pipeline.policy import Mode
from deid_pipeline.readers.byte_order import narrow
from deid_pipeline.surrogates import Originals

__all__ = [
    "Z_SEGMENT_MODES",
    "Hl7FileResult",
    "MessageResult",
    "PersonKeys",
    "SupportsRewrite",
    "Tagger",
    "WritebackError",
    "deidentify_hl7_file",
    "deidentify_message",
]


@dataclass(frozen=True, slots=True)
class MessageResult:
    r"""One message's outcome: its de-identified form and documents, or quarantine.

    ``er7`` uses ``\r`` segment terminators; ``data`` is ``er7`` encoded in
    the input's character set (what a file or MLLP peer gets).
    """

    er7: str | None
    data: bytes | None
    documents: tuple[DeidentifiedDocument, ...] = ()
    quarantined: tuple[QuarantineRecord, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the message was de-identified (not quarantined)."""
        return self.er7 is not None


@dataclass(frozen=True, slots=True)
class Hl7FileResult:
    """A de-identified file: same framing, quarantined messages left out.

    ``messages_in == messages_out + len(quarantined)`` always holds;
    ``skipped`` counts the runs of stray bytes (no letter or digit) before
    the first message that were left out instead of quarantined.
    """

    output: bytes
    documents: tuple[DeidentifiedDocument, ...]
    quarantined: tuple[QuarantineRecord, ...]
    messages_in: int
    messages_out: int
    skipped: int = 0


# ---------------------------------------------------------------- message


# What happens to Z-segments (site-defined, so no field table can say which of
# their fields hold PHI): "empty" writes each as its bare segment id, "keep"
# writes it as received and relies on the leak guard, which only knows the
# header's values.
Z_SEGMENT_MODES = ("empty", "keep")


def _empty_z_segments(message: Hl7Message) -> None:
    for seg in message.segments:
        if seg.name.startswith("Z"):
            del seg.fields[1:]


def _fallback_key(origin: str, message: Hl7Message) -> str:
    """Key a message without an MRN as its own person (all its reports agree)."""
    return f"hl7-message:{os.path.basename(origin)}:{message.control_id}"


class _Tagged(NamedTuple):
    """A message parsed, seeded and tagged: what its rewrite starts from.

    ``keys`` holds each report's person key (as ``Rewriter.rewrite`` takes
    it); ``segment_names`` the segment ids the written message must keep.
    """

    message: Hl7Message
    reports: list
    dictionary: PatientDictionary
    tagged: list[TaggedDocument]
    keys: list[str | None]
    segment_names: list[str]
    codec: str


def _tag(text: str, codec: str, flow: DocumentFlow, origin: str,
         person_keys: PersonKeys | None = None) -> _Tagged:
    with stage("parse"):
        message, reports = parse_hl7_message(text)
        segment_names = [s.name for s in message.segments]
    with stage("seed"):
        dictionary = seed_dictionary(message)
        docs = build_documents(message, origin, codec, reports, dictionary)
        key = dictionary.person_key or _fallback_key(origin, message)
    with stage("tag"):
        tagged = flow.reconcile([flow.tag(doc) for doc in docs])
        # A message without an MRN: its reports are each the person the
        # document path (and its linking) made them, so both outputs use the
        # same surrogates.
        keys: list[str | None] = [key] * len(tagged)
        if person_keys is not None:
            for i, t in enumerate(tagged):
                known, linked = person_keys(t)
                if known:
                    keys[i] = linked
    return _Tagged(message, reports, dictionary, tagged, keys, segment_names, codec)


def _avoid(messages: list[_Tagged], rewriter: SupportsRewrite,
           person_originals: Mapping[str, Originals] | None) -> Originals:
    """The originals no surrogate of ``messages`` may spell.

    One set for all the reports written together: those of one message, so
    none of their surrogates spells another's (for one report it is the set
    the document path makes), or those of a whole file (a batch), so none
    spells a value of another patient an auditor reads in the same file.
    With their persons' originals (every document of theirs in the run) it
    holds the set the document path rewrites each of their reports with.
    Computed once per file: the union of a large batch is not copied per
    message.
    """
    parts = [originals_of(*(t for m in messages for t in m.tagged))]
    if person_originals:
        pids = {rewriter.person_id_for(t, k) for m in messages
                for t, k in zip(m.tagged, m.keys, strict=True)}
        parts += [person_originals[p] for p in sorted(pids) if p in person_originals]
    return parts[0] if len(parts) == 1 else Originals.union(parts)


def _rewrite(tagged: _Tagged, flow: DocumentFlow, avoid: Originals,
             z_segments: str = "empty") -> tuple[str, tuple]:
    message, dictionary, rewriter = tagged.message, tagged.dictionary, flow.rewriter
    deids = [flow.rewrite(t, k, avoid)
             for t, k in zip(tagged.tagged, tagged.keys, strict=True)]
    # The same document-level guard as the Parquet path: a report whose text
    # still holds a removed value fails the whole message (fail closed).
    for t, deid in zip(tagged.tagged, deids, strict=True):
        flow.guard(t, deid)
    with stage("leak_guard"):
        pid = rewriter.person_id_for(tagged.tagged[0], tagged.keys[0])
    with stage("write"):
        for report, deid in zip(tagged.reports, deids, strict=True):
            write_narrative(message, report, piece_texts(report, deid))
        header = HeaderRewriter(rewriter, pid, avoid)
        replace_header(message, header)
        replace_seeded(message, seeded_values(dictionary), header)
        empty_unlisted_person_parts(message)
        if z_segments == "empty":
            _empty_z_segments(message)
    if rewriter.mode != Mode.TAG:  # tag mode keeps PHI inline
        with stage("leak_guard"):
            guarded = GuardedValues(dictionary, tagged.tagged, deids,
                                    rewriter.policy,
                                    [v for (_, kind), v in header.cache.items()
                                     if kind == "<ts>"])
            replace_telling_control_id(message, guarded, header)
            try:
                output_guard(message, guarded)
            except WritebackError:
                # A sender's copy, in a kept field, of a value replaced
                # elsewhere gets the same surrogate; what is left still goes
                # to quarantine.
                replace_found(message, replaced_labels(header, dictionary, deids),
                              header, guarded.found)
                output_guard(message, guarded)
    with stage("write"):
        er7 = message.to_er7()
        check = parse_message(er7)
        if [s.name for s in check.segments] != tagged.segment_names:
            raise WritebackError("rewritten message does not keep its segments")
    # Rewriter.rewrite already added the header research columns.
    return er7, tuple(deids)


def _decoded(message: str | bytes) -> tuple[str, str, bytes]:
    """``(text, codec, raw bytes for quarantine)`` of a message as given."""
    if isinstance(message, bytes):
        text, codec = decode_message(message)
        return text, codec, message
    raw = message.encode("utf-8", "replace")
    return message, declared_charset(raw) or "utf-8", raw


def _quarantined(error: StageError, origin: str, ordinal: int,
                 raw: bytes) -> QuarantineRecord:
    """The quarantine record of a message whose stage failed, in PHI-free words.

    A parse error's and a write-back error's messages are written to be
    PHI-free (an ACK may carry them); any other error is named, not quoted.
    """
    exc = error.cause
    if isinstance(exc, Hl7ParseError):
        message = str(exc)
    elif isinstance(exc, WritebackError):
        error = StageError(exc.stage, exc)  # it knows its stage best
        message = str(exc)
    else:
        message = f"unexpected {error.error_type} at {error.stage}"
    return stage_quarantine(error, None, doc_id=message_id(origin, ordinal),
                            raw=raw, origin=origin, source=SOURCE, message=message)


def deidentify_message(message: str | bytes, tagger: Tagger, rewriter: SupportsRewrite,
                       origin: str = "", ordinal: int = 1,
                       z_segments: str = "empty",
                       person_keys: PersonKeys | None = None,
                       person_originals: Mapping[str, Originals] | None = None,
                       ) -> MessageResult:
    """De-identify one message (what an MLLP gateway calls per frame).

    ``z_segments`` is one of :data:`Z_SEGMENT_MODES`; ``person_keys`` gives
    the person of a report that the batch job linked (default: every report
    is the person of the message's MRN, else of the message);
    ``person_originals`` maps person ids to the originals of all their
    documents in the batch run, which no surrogate of theirs may spell
    (default: only the message's own, all a gateway can know).

    ``message`` as bytes is decoded like a file's message (MSH-18, else UTF-8,
    else cp1252/Latin-1) and ``data`` comes back in the same encoding; as
    ``str`` it is used as is and ``data`` is UTF-8 unless MSH-18 says
    otherwise. Never raises: failures come back in ``quarantined``.
    """
    raw = message if isinstance(message, bytes) else b""
    flow = DocumentFlow(tagger, rewriter)
    try:  # fail closed: every step below is a stage, its error a StageError
        with stage("read"):
            text, codec, raw = _decoded(message)
        tagged = _tag(text, codec, flow, origin, person_keys)
        with stage("tag"):
            avoid = _avoid([tagged], rewriter, person_originals)
        er7, documents = _rewrite(tagged, flow, avoid, z_segments)
        return MessageResult(er7, encode_message(er7, codec), documents)
    except StageError as error:
        record = _quarantined(error, origin, ordinal, raw)
    return MessageResult(None, None, (), (record,))


# ------------------------------------------------------------------- file


def deidentify_hl7_file(path: str, data: bytes, tagger: Tagger,
                        rewriter: SupportsRewrite, z_segments: str = "empty",
                        person_keys: PersonKeys | None = None,
                        person_originals: Mapping[str, Originals] | None = None,
                        ) -> Hl7FileResult:
    """De-identify every message of one file; the output keeps the input's framing.

    ``person_keys`` and ``person_originals`` as for :func:`deidentify_message`.
    Never raises on input: unframeable content and failed messages are
    quarantined and left out of ``output``.
    """
    data, wide = narrow(data)  # UTF-16/32 with a mark: worked on as UTF-8
    framed = frame_file(data)
    results: dict[int, MessageResult] = {}
    quarantined: list[QuarantineRecord] = []
    documents: list[DeidentifiedDocument] = []
    frames = list(framed.frames())
    flow = DocumentFlow(tagger, rewriter)
    failed: dict[int, QuarantineRecord] = {}
    ready: list[tuple[MessageFrame, _Tagged]] = []
    for frame in frames:
        if frame.error is not None:
            failed[frame.ordinal] = quarantine_record(path, frame.ordinal, "read",
                                                      "FramingError", frame.error,
                                                      frame.data)
            continue
        try:
            with stage("read"):
                text, codec, _ = _decoded(frame.data)
            ready.append((frame, _tag(text, codec, flow, path, person_keys)))
        except StageError as error:
            failed[frame.ordinal] = _quarantined(error, path, frame.ordinal,
                                                 frame.data)
    # Every message of the file is tagged before any is rewritten, so no
    # surrogate spells an original of another message of the same file.
    avoid = _avoid([t for _, t in ready], rewriter, person_originals)
    for frame, tagged in ready:
        try:
            er7, docs = _rewrite(tagged, flow, avoid, z_segments)
            with stage("write"):
                data = encode_message(er7, tagged.codec)
            results[frame.ordinal] = MessageResult(er7, data, docs)
        except StageError as error:
            failed[frame.ordinal] = _quarantined(error, path, frame.ordinal,
                                                 frame.data)
    for frame in frames:  # in file order, as before
        if frame.ordinal in failed:
            quarantined.append(failed[frame.ordinal])
        elif frame.ordinal in results:
            documents.extend(results[frame.ordinal].documents)
    render_envelope, written = envelope_renderer(rewriter)

    def render_message(frame: MessageFrame) -> bytes | None:
        result = results.get(frame.ordinal)
        if result is None or result.data is None:
            return None
        written[0] += 1
        return result.data

    output, count = render(framed.parts, render_message, render_envelope)
    if wide is not None and count:
        output = wide.widen(output)  # written back as it came
    return Hl7FileResult(output=output, documents=tuple(documents),
                         quarantined=tuple(quarantined), messages_in=len(frames),
                         messages_out=count, skipped=framed.skipped)

