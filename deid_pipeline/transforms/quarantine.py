"""Dead letters: a per-record stage's failure leaves its DoFn as a quarantine row.

The per-document flow raises ``flow.StageError`` and makes the row
(``flow.quarantine_record``); this module only counts it by stage and sends
it to a DoFn's ``quarantine`` output. The row holds PHI (the record and
often the message), so it goes to the protected quarantine table and is
never logged; only the stage name reaches counters.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.metrics import Metrics

from deid_pipeline.flow import StageError, quarantine_record
from deid_pipeline.model import QuarantineRecord

QUARANTINE = "quarantine"


def quarantined(record: QuarantineRecord) -> beam.pvalue.TaggedOutput:
    """``record`` counted by its stage, for the DoFn's ``quarantine`` output."""
    Metrics.counter("deid", f"quarantined_{record.stage}").inc()
    return beam.pvalue.TaggedOutput(QUARANTINE, record)


def dead_letter(error: StageError, element: object) -> beam.pvalue.TaggedOutput:
    """The quarantine output of ``element``, which failed with ``error``."""
    return quarantined(quarantine_record(error, element))


def with_quarantine(pcoll: beam.PCollection, label: str, dofn: beam.DoFn):
    """Run ``dofn`` (which yields ``dead_letter``s); returns (ok, quarantine)."""
    out = pcoll | label >> beam.ParDo(dofn).with_outputs(QUARANTINE, main="ok")
    return out.ok, out[QUARANTINE]
