"""Progress lines on stderr for long runs: counts and rates only, never content.

Beam's DirectRunner runs the pipeline inside ``run()``, so the driver cannot
poll counters while it works; each worker process reports what it has done
instead, at most once per interval, keyed by its pid.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# docs/reliability.md promises a line at least every 30 s. A line comes at the
# first count after the interval, so the interval leaves room for the longest
# step between two counts (a part of a long document takes a few seconds).
INTERVAL_SECONDS = 20.0
# The per-process line documents and their parts are counted on: a 50 MB
# document is one document, tagged and rewritten for minutes, so its parts
# (characters tagged, spans rewritten) are counted too.
DOCUMENT_PROGRESS = "deidentify"
LONG_TEXT_CHARS = 100_000  # a document longer than this reports its parts


class Progress:
    """Counts things per process and prints a status line every ``interval`` s."""

    def __init__(
        self,
        what: str,
        interval: float = INTERVAL_SECONDS,
        stream=None,
        clock=time.monotonic,
    ) -> None:
        self._what = what
        self._interval = interval
        self._stream = stream
        self._clock = clock
        self._started = clock()
        self._last = self._started
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._busy = 0  # open busy() blocks
        self._beat: threading.Thread | None = None

    def add(self, **counts: int) -> None:
        """Add to the named counts; print a line if the interval has passed."""
        for name, n in counts.items():
            self.counts[name] = self.counts.get(name, 0) + n
        self._report_if_due()

    def _report_if_due(self) -> None:
        now = self._clock()
        if now - self._last >= self._interval:
            with self._lock:
                if now - self._last < self._interval:
                    return  # the other thread has just printed
                self._last = now
            self.report(now)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Within the block, a line at least every interval, counted or not.

        Counts come from the work itself, and some steps of a huge document
        count nothing for long (one pass of an automaton over 35 MB, the
        merge of 400,000 spans, a spill of them): a daemon thread prints
        the current line when none came for an interval, so a silence never
        means a hang. Blocks nest; the thread ends with the last one.
        """
        with self._lock:
            self._busy += 1
            if self._beat is None:
                self._beat = threading.Thread(target=self._heartbeat, daemon=True,
                                              name=f"progress-{self._what}")
                self._beat.start()
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1

    def _heartbeat(self) -> None:
        while True:
            time.sleep(min(self._interval / 4, 5.0))
            with self._lock:
                if not self._busy:
                    self._beat = None
                    return
            self._report_if_due()

    def mark(self, **counts: int) -> None:
        """Add to the named counts and print a line now, whatever the interval.

        For the start of a long piece of work (a huge document): the interval
        runs from here, so the next line comes at most ``interval`` later.
        """
        for name, n in counts.items():
            self.counts[name] = self.counts.get(name, 0) + n
        self._last = self._clock()
        self.report(self._last)

    def report(self, now: float | None = None) -> str:
        """Print (and return) the current status line."""
        now = self._clock() if now is None else now
        elapsed = max(now - self._started, 1e-9)
        parts = [
            f"{name} {n} ({n / elapsed:.1f}/s)"
            for name, n in sorted(self.counts.items())
        ]
        line = (
            f"deid-pipeline [{self._what} pid {os.getpid()}] "
            f"{elapsed:.0f}s: {', '.join(parts)}"
        )
        print(line, file=self._stream or sys.stderr, flush=True)
        return line


_PROCESS_PROGRESS: dict[str, Progress] = {}


def process_progress(what: str) -> Progress:
    """The one Progress of this process for ``what`` (shared by all DoFn instances)."""
    if what not in _PROCESS_PROGRESS:
        _PROCESS_PROGRESS[what] = Progress(what)
    return _PROCESS_PROGRESS[what]
