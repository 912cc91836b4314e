"""The parser benchmark script runs and prints its figures (speed is not asserted:
targets are shown by the benchmark's printout, never by a timed test)."""

from __future__ import annotations

from deid_pipeline.benchmarks import bench_hl7


def test_when_benchmark_runs_then_it_prints_both_rates_and_the_ratio(capsys):
    figures = bench_hl7.run(["--count", "6", "--min-seconds", "0.3"])
    printed = capsys.readouterr().out
    assert "messages/s" in printed and "ratio" in printed
    assert figures["messages"] == 6
    assert figures["ratio"] > 0
