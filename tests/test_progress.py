"""Progress lines: printed on the interval, counts and rates only."""

import io

from deid_pipeline.progress import Progress


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_when_interval_passes_then_one_line_with_counts_and_rates():
    clock, out = _Clock(), io.StringIO()
    progress = Progress("tag", interval=30, stream=out, clock=clock)
    clock.now = 10
    progress.add(documents=100)
    assert out.getvalue() == ""
    clock.now = 40
    progress.add(documents=100, files=2)
    line = out.getvalue()
    assert line.count("\n") == 1
    assert "documents 200 (5.0/s)" in line and "files 2" in line
