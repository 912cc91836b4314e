"""Progress lines: printed on the interval, counts and rates only."""

import io
import time

from deid_pipeline.runtime.progress import Progress


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


def _wait_for(predicate, limit=20.0):
    deadline = time.monotonic() + limit
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def test_when_busy_and_nothing_counted_then_lines_still_come_and_stop_after():
    """One step of a huge document may count nothing for minutes: a line still comes."""
    stream = io.StringIO()
    progress = Progress("deidentify", interval=0.2, stream=stream)
    progress.add(characters_tagged=100)
    with progress.busy():
        with progress.busy():  # nested: the inner end does not stop the lines
            pass
        # No count in the block: only the heartbeat can print.
        assert _wait_for(lambda: stream.getvalue().count("\n") >= 3)
    lines = stream.getvalue().splitlines()
    assert all("characters_tagged 100" in line for line in lines)
    # After the block the heartbeat ends: no more lines.
    assert _wait_for(lambda: progress._beat is None, limit=5.0)
    after = stream.getvalue()
    time.sleep(0.6)
    assert stream.getvalue() == after


def test_when_not_busy_then_no_line_without_a_count():
    stream = io.StringIO()
    Progress("deidentify", interval=0.1, stream=stream).add(documents=1)
    time.sleep(0.4)
    assert stream.getvalue() == ""
