r"""The per-message work: one frame in, its output records out (Beam-free).

:class:`Engine` wraps :func:`deid_pipeline.hl7.writeback.deidentify_message`
with the tagger and rewriter built once, and turns its result into exactly
what the store writes (the message bytes and the JSON lines), so the
gateway's connection threads do no per-span work.

The work is CPU-bound Python, so threads alone would use one core.
:class:`Deidentifier` runs engines either in the calling thread
(``workers=0``) or in a pool of worker processes that each build the tagger
and rewriter once at start (the model is loaded once per process, as Beam
does per worker) and are then fed raw frames. Either way the bytes are the
same: every surrogate is a pure function of the key and the message. A
message is de-identified alone, so its surrogates avoid the originals of
the message only, not those of the same person's other messages (which
``run`` also avoids): on such a collision ``run`` writes other bytes.
"""

from __future__ import annotations

import base64
import json
import logging
import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import Synchronized

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.message import Hl7ParseError
from deid_pipeline.hl7.writeback import WritebackError, deidentify_message
from deid_pipeline.model import DeidentifiedDocument, QuarantineRecord
from deid_pipeline.outputs.rows import identifier_rows
from deid_pipeline.policy import Mode, Policy
from deid_pipeline.runtime.process import allowed_cpus, settle
from deid_pipeline.tagger.confidence import DEFAULT_REVIEW_FLOOR
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

__all__ = [
    "ORIGIN",
    "Deidentifier",
    "Engine",
    "EngineConfig",
    "Outcome",
    "WorkerError",
    "quarantine_line",
]

logger = logging.getLogger(__name__)

# The origin every gateway message gets: constant, so the same message gives
# the same bytes whichever connection or restart it arrives on.
ORIGIN = "mllp"
# Errors whose messages the core writes from positions and stages only: safe
# to send back in an ACK. Anything else is named by its type alone.
_PHI_FREE_MESSAGES = frozenset({Hl7ParseError.__name__, WritebackError.__name__,
                                "FramingError"})
# A small message with made-up values: run once at start so lazy imports and
# caches are ready before the first real message.
_WARM_UP = (
    "MSH|^~\\&|WARMUP|WARMUP|DEID|DEID|20000101000000||ORU^R01^ORU_R01|WARMUP-1|P|2.5\r"
    "PID|1||0000001^^^WARMUP^MR||DOE^JANE||19700101|F\r"
    "OBR|1|||11111-1^REPORT^LN\r"
    "OBX|1|TX|11111-1^REPORT^LN||Jane Doe was seen on 01/02/2000 by Dr. Roe.\r"
).encode("ascii")


class WorkerError(RuntimeError):
    """A worker process died; the frame was not processed (PHI-free message)."""


@dataclass(frozen=True)
class EngineConfig:
    """Everything a worker process needs to build its engine (picklable)."""

    tagger: TaggerConfig
    mode: Mode
    key: bytes = field(repr=False)
    policy: Policy = Policy.SAFE_HARBOR
    as_of_year: int | None = None  # None: this year (see Rewriter)
    review_floor: float = DEFAULT_REVIEW_FLOOR
    z_segments: str = "empty"  # hl7.writeback.Z_SEGMENT_MODES
    language: str = "en"  # whose surrogates (see Rewriter)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One frame's result, ready to write.

    ``data`` is the de-identified message (None when quarantined), in the
    input's character set; ``control_id`` its MSH-10. ``identifiers`` and
    ``quarantine`` are JSON lines for the protected files. ``stage``,
    ``error_type`` and ``reason`` describe a quarantine without PHI.
    """

    data: bytes | None
    control_id: str = ""
    identifiers: bytes = b""
    quarantine: bytes = b""
    documents: int = 0
    spans: int = 0
    stage: str = ""
    error_type: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.data is not None


def identifier_lines(documents: tuple[DeidentifiedDocument, ...]) -> bytes:
    """The identifier-view rows (same columns as the ``identifiers`` table)."""
    lines = [json.dumps(row, ensure_ascii=False)
             for doc in documents for row in identifier_rows(doc)]
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def quarantine_line(record: QuarantineRecord, received_at: str,
                    control_id: str = "") -> bytes:
    """A quarantine row (the ``quarantine`` table's columns, ``raw`` in base64)."""
    row = {
        "doc_id": record.doc_id,
        "stage": record.stage,
        "error_type": record.error_type,
        "error_message": record.error_message,
        "raw": base64.b64encode(record.raw).decode("ascii"),
        "origin": record.origin,
        "source": record.source,
        "control_id": control_id,
        "received_at": received_at,
    }
    return (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")


def safe_reason(record: QuarantineRecord) -> str:
    """Why a message was refused, in words that can go into an ACK."""
    if record.error_type in _PHI_FREE_MESSAGES:
        return f"not de-identified ({record.stage}): {record.error_message}"
    return f"not de-identified ({record.stage}): {record.error_type}"


class Engine:
    """The tagger and rewriter of one process, and the per-frame work."""

    def __init__(self, config: EngineConfig) -> None:
        self.tagger = PhiTagger.from_config(config.tagger)
        self.rewriter = Rewriter(config.mode, config.key, config.policy,
                                 as_of_year=config.as_of_year,
                                 review_floor=config.review_floor,
                                 language=config.language)
        self.z_segments = config.z_segments

    def warm_up(self) -> None:
        """Run one message through, then settle the process (see ``process``)."""
        self.process(_WARM_UP, 0, "")
        settle()

    def process(self, raw: bytes, ordinal: int, received_at: str,
                control_id: str = "") -> Outcome:
        """De-identify one frame's content; never raises on input."""
        result = deidentify_message(raw, self.tagger, self.rewriter, ORIGIN, ordinal,
                                    self.z_segments)
        if result.ok:
            spans = sum(len(d.replacements) for d in result.documents)
            return Outcome(result.data, control_id,
                           identifier_lines(result.documents),
                           documents=len(result.documents), spans=spans)
        record = result.quarantined[0]
        lines = b"".join(quarantine_line(q, received_at, control_id)
                         for q in result.quarantined)
        return Outcome(None, control_id, quarantine=lines, stage=record.stage,
                       error_type=record.error_type, reason=safe_reason(record))


# ------------------------------------------------------------ process pool

_ENGINE: Engine | None = None


def _init_worker(config: EngineConfig, slots: Synchronized | None) -> None:
    """Build this process's engine; leave signals to the parent.

    A Ctrl-C or a SIGTERM sent to the whole process group must not kill a
    worker half-way through a message: the parent drains and then stops
    the pool itself. With ``slots`` (a shared counter) the worker first
    takes the next slot and stays on that CPU (see :func:`cpu_of_slot`).
    """
    global _ENGINE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if slots is not None:
        with slots.get_lock():
            slot = slots.value
            slots.value += 1
        _pin_to(cpu_of_slot(slot, allowed_cpus()))
    _ENGINE = Engine(config)
    _ENGINE.warm_up()


def cpu_of_slot(slot: int, cpus: list[int]) -> int:
    """The CPU of the worker in ``slot``: round robin over the allowed CPUs."""
    return cpus[slot % len(cpus)]


def _pin_to(cpu: int) -> None:
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):  # not Linux, or not allowed: run unpinned
        logger.debug("could not pin a worker to CPU %d", cpu)


def _process_in_worker(raw: bytes, ordinal: int, received_at: str,
                       control_id: str) -> Outcome:
    return _ENGINE.process(raw, ordinal, received_at, control_id)


def _ready() -> bool:
    return _ENGINE is not None


class Deidentifier:
    """Runs :class:`Engine` work in this thread or in worker processes."""

    def __init__(self, config: EngineConfig, workers: int = 0,
                 pin: bool = True) -> None:
        """``pin``: give each worker a CPU of its own when there are enough.

        A worker that stays on one core keeps its model, lexicons and caches
        in that core's caches: on the reference machine the gateway ran 0-7%
        more messages/s with its two workers pinned than floating (more when
        the machine was busier). With more workers than CPUs, none is pinned.
        """
        self.config = config
        self.workers = workers
        self.pin = pin and 0 < workers <= len(allowed_cpus())
        self._engine: Engine | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._replacing = threading.Lock()

    def start(self) -> None:
        """Build the engine(s) and wait until every worker is ready."""
        if self.workers <= 0:
            self._engine = Engine(self.config)
            self._engine.warm_up()
            return
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn, not fork: the gateway has threads running by the time a
        # broken pool is replaced, and forking a threaded process is unsafe.
        context = multiprocessing.get_context("spawn")
        slots = context.Value("i", 0) if self.pin else None
        pool = ProcessPoolExecutor(self.workers, mp_context=context,
                                   initializer=_init_worker,
                                   initargs=(self.config, slots))
        # Submitting one task per worker at once starts every worker now.
        try:
            for future in [pool.submit(_ready) for _ in range(self.workers)]:
                future.result()
        except BrokenProcessPool:
            pool.shutdown(wait=False, cancel_futures=True)
            raise WorkerError("the de-identification workers could not start (their "
                              "error is printed above)") from None
        return pool

    def run(self, raw: bytes, ordinal: int, received_at: str,
            control_id: str = "") -> Outcome:
        """De-identify one frame; raises :class:`WorkerError` if a worker died."""
        if self._engine is not None:
            return self._engine.process(raw, ordinal, received_at, control_id)
        pool = self._pool
        if pool is None:
            raise WorkerError("the de-identification workers are stopped")
        try:
            return pool.submit(_process_in_worker, raw, ordinal, received_at,
                               control_id).result()
        except BrokenProcessPool:
            self._replace(pool)
            raise WorkerError("a de-identification worker stopped") from None

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Start a new pool once for all the connections that saw ``broken`` fail."""
        with self._replacing:
            if self._pool is not broken:
                return
            logger.error("a de-identification worker died; starting new workers")
            self._pool = None
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
