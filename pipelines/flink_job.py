"""Waiting for a job on Flink: one that makes no progress fails, with a reason.

Beam's portable runner waits for a Flink job for as long as Flink says it
runs. A job whose SDK workers never start (a worker pool whose ``python``
lacks the package, a pool that is gone) stays RUNNING for good: Beam's Java
side asks for the worker again every two minutes and logs at INFO. Here the
job is watched while it runs; when for ``stall_seconds`` none of its
vertices changes state or moves a record or a byte (the JobManager's REST
API) *and* the run's staging directory gains no file or byte, the job is
cancelled and :class:`FlinkJobStalledError` says why (the run then publishes
nothing, as for any failed run).

Flink's counts alone are not progress enough: a Beam stage on Flink's batch
runner is one bundle per task, and its records reach Flink's counters only
when the bundle ends. The tagging stage of 50,000 notes on one TaskManager
moved no record for over 600 s while it worked, and was cancelled. Its
workers write a spill file per chunk into staging as they go, and so does
every other long stage (spilled inputs, Parquet files): shared storage the
submitting machine sees (docs/flink.md), so the watch reads it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

log = logging.getLogger(__name__)

# Longer than any step of the job on a loaded 2-core machine (a new SDK
# worker imports Beam and loads the model in 5 to 15 s; a chunk is tagged
# in well under a minute); $DEID_FLINK_STALL_SECONDS changes it, 0 = never.
DEFAULT_STALL_SECONDS = 600.0
POLL_SECONDS = 5.0
_METRICS = ("read-records", "write-records", "read-bytes", "write-bytes")


class FlinkJobStalledError(RuntimeError):
    """The Flink job made no progress for the allowed time and was cancelled."""


def stall_seconds() -> float:
    """``$DEID_FLINK_STALL_SECONDS``, else :data:`DEFAULT_STALL_SECONDS`."""
    value = os.environ.get("DEID_FLINK_STALL_SECONDS")
    return float(value) if value else DEFAULT_STALL_SECONDS


def rest_url(options) -> str | None:
    """The JobManager's REST URL of a FlinkRunner job, or None (not Flink, local)."""
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        StandardOptions,
    )

    runner = options.view_as(StandardOptions).runner or ""
    if not str(runner).endswith("FlinkRunner"):
        return None
    master = options.view_as(FlinkRunnerOptions).flink_master or ""
    if not master or master.startswith("["):  # [auto], [local]: Beam's own
        return None
    return (master if "://" in master else f"http://{master}").rstrip("/")


def _get(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
        return json.load(response)


def _flink_job(base: str, beam_job_id: str) -> dict | None:
    """The Flink job Beam's job server submitted for ``beam_job_id``.

    Beam's job id is the Flink job's name, ``_`` and a UUID.
    """
    jobs = _get(f"{base}/jobs/overview")["jobs"]
    mine = [j for j in jobs if beam_job_id.startswith(f"{j['name']}_")]
    return max(mine, key=lambda j: j["start-time"]) if mine else None


def progress(base: str, jid: str) -> tuple:
    """What changes while a job makes progress: vertex states and I/O counts."""
    job = _get(f"{base}/jobs/{jid}")
    return job["state"], tuple(
        (v["id"], v["status"], *(v.get("metrics", {}).get(m, 0) for m in _METRICS))
        for v in job["vertices"]
    )


def directory_activity(directory: str) -> tuple[int, int]:
    """(files, bytes) under ``directory``: it grows while a job writes there.

    Local directories are walked; any other file system (``gs://``, ``s3://``)
    is listed with Beam's ``FileSystems``, whose ``*`` there spans ``/``.
    """
    if "://" not in directory:
        files = size = 0
        for root, _dirs, names in os.walk(directory):
            for name in names:
                try:
                    size += os.stat(os.path.join(root, name)).st_size
                except OSError:  # deleted between listing and stat
                    continue
                files += 1
        return files, size
    from apache_beam.io.filesystems import FileSystems

    found = FileSystems.match([directory.rstrip("/") + "/*"])[0].metadata_list
    return len(found), sum(m.size_in_bytes for m in found)


class _Watch(threading.Thread):
    def __init__(self, base: str, beam_job_id: str, limit: float,
                 activity: Callable[[], object] | None = None) -> None:
        super().__init__(name="flink-stall-watch", daemon=True)
        self.base, self.beam_job_id, self.limit = base, beam_job_id, limit
        self.activity = activity or (lambda: None)
        self.done = threading.Event()
        self.stalled: str | None = None

    def run(self) -> None:
        last, since, jid = None, time.monotonic(), None
        while not self.done.wait(POLL_SECONDS):
            try:
                if jid is None:
                    job = _flink_job(self.base, self.beam_job_id)
                    if job is None:
                        continue
                    jid, since = job["jid"], time.monotonic()
                now = progress(self.base, jid), self.activity()
            except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
                log.debug("Flink REST or staging not answering: %s", exc)
                continue
            if now[0][0] != "RUNNING" or now != last:
                last, since = now, time.monotonic()
                continue
            if time.monotonic() - since >= self.limit:
                self.stalled = jid
                self._cancel(jid)
                return

    def _cancel(self, jid: str) -> None:
        request = urllib.request.Request(
            f"{self.base}/jobs/{jid}?mode=cancel", method="PATCH"
        )
        try:
            urllib.request.urlopen(request, timeout=10).close()  # noqa: S310
        except (OSError, urllib.error.URLError) as exc:
            log.warning("could not cancel Flink job %s: %s", jid, exc)


def wait_until_finish(result, options, limit: float | None = None,
                      staging: str | None = None) -> None:
    """``result.wait_until_finish()``; on Flink, :class:`FlinkJobStalledError` if stuck.

    ``limit``: seconds without progress (default :func:`stall_seconds`);
    ``staging``: the directory the job writes into (its growth is progress).
    """
    base = rest_url(options)
    limit = stall_seconds() if limit is None else limit
    job_id = getattr(result, "_job_id", None)
    if base is None or not limit or not job_id:
        result.wait_until_finish()
        return
    watch = _Watch(base, job_id, limit,
                   (lambda: directory_activity(staging)) if staging else None)
    watch.start()
    try:
        result.wait_until_finish()
    except Exception:
        if watch.stalled:
            raise _stalled(watch, limit) from None
        raise
    finally:
        watch.done.set()
        watch.join()
    if watch.stalled:  # cancelled, and Beam returned its state
        raise _stalled(watch, limit)


def _stalled(watch: _Watch, limit: float) -> FlinkJobStalledError:
    return FlinkJobStalledError(
        f"Flink job {watch.stalled} made no progress for {limit:.0f} s (no record "
        "moved, nothing written to staging) and was cancelled: its SDK workers "
        "never started or stopped working. Check "
        "the worker pool named by --environment_config (running, with "
        "deid-pipeline installed in the python it starts workers with) and "
        "the TaskManagers' logs; nothing was published"
    )
