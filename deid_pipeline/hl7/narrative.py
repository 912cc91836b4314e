"""Narrative write-back: a rewritten report's text back into its OBX/NTE fields.

Every narrative character maps to the field repetition it came from
(:class:`~deid_pipeline.hl7.documents.NarrativePiece`); each piece a
replacement touches is rebuilt and re-escaped in place, the rest of the
message is left as it was.
"""

from __future__ import annotations

from deid_pipeline.hl7.contracts import WritebackError
from deid_pipeline.hl7.documents import Report
from deid_pipeline.hl7.escapes import escape
from deid_pipeline.hl7.fields import repetitions
from deid_pipeline.hl7.message import Hl7Message
from deid_pipeline.model import DeidentifiedDocument

__all__ = ["piece_texts", "write_narrative"]


def piece_texts(report: Report, deid: DeidentifiedDocument) -> dict[int, str]:
    """Compute the new text of every narrative piece a replacement touches.

    A replacement is written whole into the piece where it starts (or the
    next piece, when it starts on a line break); the characters it covers in
    later pieces are removed, so a name wrapped across two OBX lines leaves
    nothing behind.
    """
    text = report.text
    reps = sorted(deid.replacements, key=lambda r: (r.span.start, r.span.end))
    rebuilt: list[str] = []
    cursor = 0
    for r in reps:
        start, end = r.span.start, r.span.end
        if start < cursor or end > len(text) or text[start:end] != r.original:
            raise WritebackError(f"report {report.set_id}: replacements overlap or do "
                                 "not match the text", "surrogate")
        rebuilt.append(text[cursor:start])
        rebuilt.append(r.replacement)
        cursor = end
    rebuilt.append(text[cursor:])
    if "".join(rebuilt) != deid.text:
        raise WritebackError(f"report {report.set_id}: rewritten text does not match "
                             "its replacements", "surrogate")
    pieces = report.pieces
    owners: dict[int, int] = {}  # replacement index -> piece that gets its text
    touched: set[int] = set()
    for i, r in enumerate(reps):
        covered = [k for k, p in enumerate(pieces)
                   if p.end > r.span.start and p.start < r.span.end]
        if covered:  # else only line breaks between fields were covered
            owners[i] = covered[0]
            touched.update(covered)
    out: dict[int, str] = {}
    for k in sorted(touched):
        p = pieces[k]
        parts: list[str] = []
        cur = p.start
        for i, r in enumerate(reps):
            if r.span.end <= p.start or r.span.start >= p.end:
                continue
            if r.span.start >= cur:
                parts.append(text[cur:r.span.start])
            if owners.get(i) == k:
                parts.append(r.replacement)
            cur = max(cur, min(r.span.end, p.end))
        parts.append(text[cur:p.end])
        out[k] = "".join(parts)
    return out


def write_narrative(message: Hl7Message, report: Report,
                    texts: dict[int, str]) -> None:
    """Write :func:`piece_texts`' texts, escaped, into the report's fields."""
    d = message.delimiters
    for k, new in texts.items():
        piece = report.pieces[k]
        seg = message.segments[piece.segment]
        reps = repetitions(seg.get(piece.field), d)
        reps[piece.repetition] = escape(new, d)
        seg.set(piece.field, d.repetition.join(reps))

