"""Interrupts end a run; they are never a record's error.

A per-record handler quarantines what fails on a record (errors are data).
An interrupt is not a record's failure: Ctrl-C that landed inside the compiled
CRF decoder (numba's, then) came out of its dispatcher as a ``SystemError`` whose
cause is the ``KeyboardInterrupt``, and a handler catching ``Exception`` took it for
a bad record, quarantined the record (its raw text) and let the run publish
an extract missing it. So every handler that turns an exception into data
asks :func:`reraise_interrupt` first, which looks through the exception's
chain and at whether this process was signalled.

In the driver, :func:`handling_signals` turns SIGINT and SIGTERM into
:class:`RunInterrupted` (a ``BaseException``, so no ``except Exception``
swallows it), remembers the signal, and lets a critical section (publishing)
defer it: inside :func:`deferred` the signal is only recorded, and the
section decides at its own safe points (:func:`raise_if_received`).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator

__all__ = [
    "RunInterrupted",
    "deferred",
    "handling_signals",
    "is_interrupt",
    "raise_if_received",
    "received",
    "reraise_interrupt",
]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(BaseException):
    """The run was told to stop by a signal; ``exit_code`` is the shell's 128+N."""

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        super().__init__(signal.Signals(self.signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_received: int | None = None
_deferring = 0


def received() -> int | None:
    """The first signal this process got while handling them, or None."""
    return _received


def _on_signal(signum: int, _frame) -> None:
    global _received
    if _received is None:
        _received = signum
        for h in logging.getLogger().handlers:
            h.addFilter(_QUIET)
        _stop_children()
    if not _deferring:
        raise RunInterrupted(signum)


class _QuietAfterSignal(logging.Filter):
    """Drops log records once a signal came.

    Beam logs the exception that stopped a bundle, with its traceback, at
    ERROR before re-raising it: after Ctrl-C that is 40 to 150 lines of
    noise above the one line that says what happened.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return _received is None


_QUIET = _QuietAfterSignal()


def _quiet_thread_hook(previous):
    """Beam's worker threads die loudly when their workers are stopped: not news."""

    def hook(args) -> None:
        if _received is None:
            previous(args)

    return hook
_depth = 0


def _stop_children(grace: float = 5.0) -> None:
    """End this process's child processes (Beam's SDK workers) and wait for them.

    Beam's multi-process DirectRunner, on an error in the driver, joins the
    threads that wait for its worker processes, which go on waiting for work:
    a SIGTERM sent to the driver alone hung the run for good. And a worker
    still running after the driver deleted the staging directory could
    write spilled input (PHI) into it again. So the first signal ends them,
    politely and then not, before the run cleans up.
    """
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _gone, alive = psutil.wait_procs(children, timeout=grace)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(alive, timeout=grace)


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`RunInterrupted` in the main thread.

    Re-entrant: an inner block keeps the outer one's handlers and any signal
    already recorded. Outside the main thread (a test calling ``main`` from
    a worker thread) signals cannot be handled; the body runs as it is.
    """
    global _received, _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth:
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    previous = {s: signal.signal(s, _on_signal) for s in _SIGNALS}
    previous_hook = threading.excepthook
    threading.excepthook = _quiet_thread_hook(previous_hook)
    _received = None
    _depth = 1
    try:
        yield
    finally:
        _depth = 0
        _received = None
        threading.excepthook = previous_hook
        for h in logging.getLogger().handlers:
            h.removeFilter(_QUIET)
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Record signals without raising them until the block ends or checks."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1


def raise_if_received() -> None:
    """Raise :class:`RunInterrupted` if a signal came (a deferred section's check)."""
    if _received is not None:
        raise RunInterrupted(_received)


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is or wraps an interrupt, or this process was signalled."""
    if _received is not None:
        return True
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (KeyboardInterrupt, SystemExit, RunInterrupted)):
            return True
        todo += [e.__cause__, e.__context__]
    return False


def reraise_interrupt(exc: BaseException, _element: object = None) -> None:
    """Raise :class:`RunInterrupted` from ``exc`` if it is an interrupt; else return.

    The signature fits Beam's ``on_failure_callback(exception, element)``:
    Beam logs what a callback raises as ``Exception``, but a
    ``BaseException`` goes through and fails the bundle.
    """
    if is_interrupt(exc):
        raise RunInterrupted(_received or signal.SIGINT) from exc
