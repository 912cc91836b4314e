"""Benchmark: HL7 parsing + seeding throughput against hl7apy, same messages, one core.

Measures what the read stage does per message (frame, decode, parse, split
into reports, seed the patient dictionary, build the ClinicalDocuments) and,
on the same messages in the same run, hl7apy's plain
``parse_message(find_groups=True)``, and prints both in messages/s and their
ratio. Input: generated ORU^R01 reports with 10-40 OBX lines (the project's
synthetic generator; a built-in sample builder if it is not installed).

    python -m deid_pipeline.benchmarks.bench_hl7 --count 300

Prints figures only: no message content.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse_message

from deid_pipeline.hl7.documents import read_hl7


def _obx_lines(er7: str) -> int:
    return er7.count("\rOBX|")


def oru_messages(count: int, seed: int) -> tuple[list[str], str]:
    """``count`` ORU^R01 messages with 10-40 OBX lines, and where they came from.

    The generator gives some reports two OBR groups (up to 80 OBX lines);
    those are left out so the figure is for the message size the issue names.
    """
    try:
        from deid_pipeline.synthetic.hl7 import generate_messages
    except ImportError:
        from deid_pipeline.hl7.testing import sample_oru

        return [sample_oru(seed + k)[0] for k in range(count)], \
            "deid_pipeline.hl7.testing.sample_oru"
    messages: list[str] = []
    batch = 0
    while len(messages) < count:
        for m in generate_messages(count, seed + batch, ("oru",)):
            if 10 <= _obx_lines(m.er7) <= 40 and len(messages) < count:
                messages.append(m.er7)
        batch += 1
    return messages, "deid_pipeline.synthetic.hl7"


def _rate(work: Callable[[object], object], items: Sequence, min_seconds: float
          ) -> float:
    """Messages per second of ``work`` over ``items``, repeated for ``min_seconds``."""
    done = 0
    start = time.perf_counter()
    while True:
        for item in items:
            work(item)
        done += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / elapsed


def _ours(data: bytes) -> None:
    records = list(read_hl7("bench.hl7", data))
    if not records or not hasattr(records[0], "dictionary"):
        raise RuntimeError("a benchmark message was quarantined")


def _hl7apy(er7: str) -> None:
    hl7apy_parse_message(er7, validation_level=VALIDATION_LEVEL.TOLERANT,
                         find_groups=True)


def run(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark; returns the figures it prints."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200, help="distinct messages")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--min-seconds", type=float, default=3.0,
                        help="minimum measuring time per parser")
    args = parser.parse_args(argv)

    messages, origin = oru_messages(args.count, args.seed)
    encoded = [m.encode("utf-8") for m in messages]
    obx = [_obx_lines(m) for m in messages]
    # Warm up both (imports, hl7apy's reference tables, regex caches).
    for data, er7 in zip(encoded[:5], messages[:5], strict=True):
        _ours(data)
        _hl7apy(er7)
    ours = _rate(_ours, encoded, args.min_seconds)
    theirs = _rate(_hl7apy, messages, args.min_seconds)
    figures = {"messages": len(messages), "ours_msgs_per_s": ours,
               "hl7apy_msgs_per_s": theirs, "ratio": ours / theirs}
    print(f"input: {len(messages)} ORU^R01 messages from {origin}, "
          f"{min(obx)}-{max(obx)} OBX lines (mean {sum(obx) / len(obx):.1f})")
    print(f"deid_pipeline.hl7 parse + seed + documents: {ours:10.1f} messages/s")
    print(f"hl7apy parse_message(find_groups=True):     {theirs:10.1f} messages/s")
    print(f"ratio: {ours / theirs:.1f}x (one core, same messages, same run)")
    return figures


if __name__ == "__main__":
    run(sys.argv[1:])
