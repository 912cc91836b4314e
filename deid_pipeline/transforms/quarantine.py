"""Dead letters: every per-record stage sends its failures here, as data.

Beam's ``with_exception_handling`` hands us ``(element, (type, repr, traceback))``.
That tuple holds PHI (the record and often the message), so it becomes a
``QuarantineRecord`` for the protected quarantine table and is never logged;
only the stage name and exception type reach counters.
"""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.metrics import Metrics

from deid_pipeline.interrupts import reraise_interrupt
from deid_pipeline.model import ClinicalDocument, QuarantineRecord, TaggedDocument


def _identify(element: object) -> tuple[str, bytes, str, str]:
    """Doc id, raw bytes, origin and source of whatever element failed."""
    if isinstance(element, tuple) and element:  # (tagged document, person)
        element = element[0]
    if isinstance(element, TaggedDocument):
        element = element.document
    if isinstance(element, ClinicalDocument):
        raw = json.dumps(
            {
                "id": element.doc_id,
                "text": element.text,
                "metadata": dict(element.metadata),
            },
            ensure_ascii=False,
        )
        return element.doc_id, raw.encode("utf-8"), element.origin, element.source
    path = getattr(getattr(element, "metadata", None), "path", None)
    if path is not None:  # a fileio.ReadableFile
        return path, b"", path, ""
    return "<unknown>", repr(element).encode("utf-8", "replace"), "", ""


def to_quarantine(stage: str, dead_letter: tuple) -> QuarantineRecord:
    """Turn a Beam dead-letter tuple into a quarantine record for ``stage``."""
    element, (exc_type, exc_repr, _traceback) = dead_letter
    doc_id, raw, origin, source = _identify(element)
    Metrics.counter("deid", f"quarantined_{stage}").inc()
    return QuarantineRecord(
        doc_id=doc_id,
        stage=stage,
        error_type=getattr(exc_type, "__name__", "Error"),
        error_message=exc_repr,
        raw=raw,
        origin=origin,
        source=source,
    )


def apply_stage(pcoll: beam.PCollection, stage: str, dofn: beam.DoFn):
    """Run ``dofn`` with per-record dead letters; returns (ok, quarantine)."""
    ok, failed = pcoll | stage.capitalize() >> beam.ParDo(dofn).with_exception_handling(
        main_tag="ok", dead_letter_tag="quarantine", exc_class=Exception, partial=False,
        on_failure_callback=reraise_interrupt,
    )
    quarantined = failed | f"Quarantine{stage.capitalize()}" >> beam.Map(
        lambda d, s=stage: to_quarantine(s, d)
    )
    return ok, quarantined
