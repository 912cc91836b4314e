"""Beam's worker processes keep quiet at the default verbosity (``-v`` shows them).

With ``--direct_running_mode=multi_processing`` each worker is a Python
process that shares this process's stderr. Each logged about 25 lines of
start-up and shut-down chatter (channels established, state cache, harness
exiting, an import warning about BigQuery) over the run's one-line summary.
Two things silence it:

- ``--default_sdk_harness_log_level=ERROR`` (a Beam option, added unless the
  user gave one): the workers log errors only once their options are read;
- during the pipeline, this process's stderr goes through a pipe that drops
  the lines Beam's workers print in Python's default log format before their
  options are read (``INFO:__main__:...``, ``WARNING:root:...``): everything
  else (tracebacks, progress lines, this tool's own log format) passes.

Only the DirectRunner's multi-processing mode starts such workers here; other
runners log on their own machines.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator

# What Beam's worker processes print before their log level is set: Python's
# default format (``logging.basicConfig``), which this tool never uses.
WORKER_NOISE = re.compile(rb"^(DEBUG|INFO|WARNING):(root|__main__|apache_beam[\w.]*):")
LOG_LEVEL_OPTION = "--default_sdk_harness_log_level"
# The driver relays what workers log through this logger.
RELAY_LOGGER = "apache_beam.runners.portability.local_job_service"


def verbose() -> bool:
    """True when the command line asked for more logging (``-v``: INFO or less)."""
    return logging.getLogger().getEffectiveLevel() <= logging.INFO


def multi_processing(beam_args: list[str]) -> bool:
    """True when ``beam_args`` ask the DirectRunner for worker processes."""
    words = " ".join(beam_args).replace("=", " ").split()
    return any(a == "--direct_running_mode" and b == "multi_processing"
               for a, b in zip(words, words[1:]))


def quiet_worker_args(beam_args: list[str]) -> list[str]:
    """Beam options to add so that workers log errors only (none with ``-v``)."""
    given = any(a.split("=", 1)[0] == LOG_LEVEL_OPTION for a in beam_args)
    if given or verbose() or not multi_processing(beam_args):
        return []
    return [f"{LOG_LEVEL_OPTION}=ERROR"]


@contextlib.contextmanager
def quiet_workers(beam_args: list[str]) -> Iterator[None]:
    """Drop worker start-up log lines from stderr while the pipeline runs."""
    if verbose() or not multi_processing(beam_args):
        yield
        return
    logging.getLogger(RELAY_LOGGER).setLevel(logging.ERROR)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        read_end, write_end = os.pipe()
    except OSError:  # no stderr to filter: nothing to silence either
        yield
        return
    pump = threading.Thread(target=_pump, args=(read_end, saved), daemon=True)
    pump.start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe's last writer here: the pump sees its end
        pump.join(timeout=5)
        if not pump.is_alive():  # else a worker still holds the pipe: leave it
            os.close(saved)


def _pump(read_end: int, target: int) -> None:
    """Copy lines from ``read_end`` to ``target``, but Beam's worker noise."""
    with os.fdopen(read_end, "rb", buffering=0) as source:
        pending = b""
        while True:
            try:
                block = source.read(65536)
            except OSError:
                return
            if not block:
                break
            pending += block
            *lines, pending = pending.split(b"\n")
            _write(target, b"".join(line + b"\n" for line in lines
                                    if not WORKER_NOISE.match(line)))
        if not WORKER_NOISE.match(pending):
            _write(target, pending)


def _write(target: int, data: bytes) -> None:
    """Write all of ``data``; a closed stderr loses it (nothing to tell)."""
    try:
        while data:
            data = data[os.write(target, data):]
    except OSError:
        pass
