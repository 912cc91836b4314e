"""The one place where spans from all detectors are reconciled.

Recall comes first: overlapping spans are unioned into one wider span, so a
disagreement between detectors can widen a redaction but never drop one.
"""

from __future__ import annotations

from collections.abc import Iterable

from deid_pipeline.model import PhiSpan

# When overlapping spans disagree on the label, the label of the more specific
# detector wins: the header dictionary knows what a value is, rules know their
# formats, the CRF guesses from context.
_SOURCE_PRIORITY = ("dictionary", "rules", "crf")


def _priority(span: PhiSpan) -> tuple[int, int, str]:
    kind = span.source.split(":", 1)[0]
    rank = (
        _SOURCE_PRIORITY.index(kind)
        if kind in _SOURCE_PRIORITY
        else len(_SOURCE_PRIORITY)
    )
    return (rank, -(span.end - span.start), span.label)


def merge_spans(spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """Union overlapping spans; the result is sorted and non-overlapping.

    The merged span takes the label of its highest-priority member, the
    detectors of all members as its source (``+``-joined) and the highest
    member confidence, since any member alone would have been redacted.
    """
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    groups: list[list[PhiSpan]] = []
    group_end = -1
    for span in ordered:
        if groups and span.start < group_end:
            groups[-1].append(span)
            group_end = max(group_end, span.end)
        else:
            groups.append([span])
            group_end = span.end
    merged = []
    for group in groups:
        if len(group) == 1:
            merged.append(group[0])
            continue
        best = min(group, key=_priority)
        sources = sorted({s.source for s in group})
        confidences = [s.confidence for s in group if s.confidence is not None]
        merged.append(
            PhiSpan(
                start=min(s.start for s in group),
                end=max(s.end for s in group),
                label=best.label,
                source="+".join(sources),
                confidence=max(confidences) if confidences else None,
            )
        )
    return tuple(merged)
