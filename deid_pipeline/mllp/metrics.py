"""Gateway counters and latency percentiles, printed as one status line.

Counts and timings only: outcomes (``AA``, ``AE``, ``AR``), duplicates,
quarantine by stage, forward failures, open connections, peers refused (by
reason: address, connection limit, TLS handshake) and connections dropped
at the idle timeout. Nothing here ever sees a message, so the status line
cannot carry PHI.

Latencies (frame received -> ACK sent) go into log-spaced histograms, so
memory stays fixed however long the gateway runs and a percentile is exact
to within one bucket (5 %).
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable

__all__ = ["GatewayMetrics", "LatencyHistogram"]


class LatencyHistogram:
    """Latencies in buckets growing by 5 % from 50 us to about 2 minutes."""

    _BASE = 50e-6
    _RATIO = 1.05
    _BUCKETS = 310

    def __init__(self) -> None:
        self.counts = [0] * self._BUCKETS
        self.total = 0

    def add(self, seconds: float) -> None:
        if seconds <= self._BASE:
            index = 0
        else:
            index = int(math.log(seconds / self._BASE, self._RATIO)) + 1
        self.counts[min(index, self._BUCKETS - 1)] += 1
        self.total += 1

    def percentile(self, q: float) -> float | None:
        """Upper edge of the bucket holding the ``q`` quantile (seconds)."""
        if not self.total:
            return None
        rank = max(1, math.ceil(q * self.total))
        seen = 0
        for index, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return self._BASE * self._RATIO ** index
        return self._BASE * self._RATIO ** (self._BUCKETS - 1)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


class GatewayMetrics:
    """Thread-safe counters for the status line (per window and since start)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.started = clock()
        self._window_start = self.started
        self._window = LatencyHistogram()
        self._all = LatencyHistogram()
        self.outcomes: Counter[str] = Counter()
        self.quarantine: Counter[str] = Counter()
        self.duplicates = 0
        self.forward_failures = 0
        self.store_failures = 0
        self.connections = 0
        self.connections_total = 0
        self.refused: Counter[str] = Counter()
        self.timeouts = 0

    def record(self, code: str, seconds: float, duplicate: bool = False) -> None:
        """One answered frame: its ACK code and its latency."""
        with self._lock:
            self.outcomes[code] += 1
            self.duplicates += duplicate
            self._window.add(seconds)
            self._all.add(seconds)

    def quarantined(self, stage: str) -> None:
        with self._lock:
            self.quarantine[stage] += 1

    def forward_failed(self) -> None:
        with self._lock:
            self.forward_failures += 1

    def store_failed(self) -> None:
        with self._lock:
            self.store_failures += 1

    def connection(self, opened: bool) -> None:
        with self._lock:
            self.connections += 1 if opened else -1
            self.connections_total += opened

    def refuse(self, reason: str) -> None:
        """A peer turned away: ``address``, ``limit`` or ``handshake``."""
        with self._lock:
            self.refused[reason] += 1

    def timed_out(self) -> None:
        """A connection dropped for not completing a frame within the timeout."""
        with self._lock:
            self.timeouts += 1

    def status_line(self, final: bool = False) -> str:
        """The status line; starts a new rate/latency window unless ``final``.

        Periodic lines give the last window's rate and latency; the final
        line gives them over the whole run.
        """
        with self._lock:
            now = self._clock()
            if final:
                span, hist, what = now - self.started, self._all, "stopped after"
            else:
                span, hist, what = now - self._window_start, self._window, "last"
                self._window_start = now
                self._window = LatencyHistogram()
            rate = hist.total / span if span > 0 else 0.0
            total = sum(self.outcomes.values())
            stages = ", ".join(f"{s} {n}" for s, n in sorted(self.quarantine.items()))
            refused = ", ".join(f"{r} {n}" for r, n in sorted(self.refused.items()))
            parts = [
                f"mllp: {what} {span:.1f}s: {rate:.1f} msg/s, "
                f"p50 {_ms(hist.percentile(0.5))}, p99 {_ms(hist.percentile(0.99))}",
                f"total {total}: AA {self.outcomes['AA']} (duplicates "
                f"{self.duplicates}), AE {self.outcomes['AE']}, "
                f"AR {self.outcomes['AR']}",
                f"quarantined {sum(self.quarantine.values())}"
                + (f" ({stages})" if stages else ""),
                f"forward failures {self.forward_failures}, store failures "
                f"{self.store_failures}",
                f"connections {self.connections} open, {self.connections_total} total",
                f"refused {sum(self.refused.values())}"
                + (f" ({refused})" if refused else "")
                + f", idle timeouts {self.timeouts}",
            ]
            return " | ".join(parts)

    def snapshot(self) -> dict[str, object]:
        """The counters as plain values (tests, benchmark)."""
        with self._lock:
            return {
                "outcomes": dict(self.outcomes),
                "duplicates": self.duplicates,
                "quarantine": dict(self.quarantine),
                "forward_failures": self.forward_failures,
                "store_failures": self.store_failures,
                "connections": self.connections,
                "refused": dict(self.refused),
                "timeouts": self.timeouts,
                "p50": self._all.percentile(0.5),
                "p99": self._all.percentile(0.99),
            }
