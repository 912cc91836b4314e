"""The SDK worker pool of a Flink cluster: Beam's pool, fixed for shared TaskManagers.

``deid-flink-cluster worker-pool`` (and ``start``, which runs it beside the
cluster) serves :func:`serve_worker_pool`: Beam's ``worker_pool_main`` pool
with the fixes :func:`_worker_pool_class` describes (one pool for several
TaskManagers of one machine, each SDK worker on this interpreter and on its
TaskManager's CPUs, its output in the pool's log, its exit logged).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading

log = logging.getLogger(__name__)


def _worker_pool_class():
    """Beam's SDK worker pool, fixed for TaskManagers that share one pool.

    Flink's TaskManagers each number the SDK workers they ask for from 1
    (``1-1``, ``2-1``, ...), so two TaskManagers on one machine sharing one
    pool ask for workers of the same id. Beam's pool keeps one process per
    id: the second replaced the first in its table, and when one TaskManager
    released its worker (``StopWorker``, at the end of its stage) the pool
    killed the *other* TaskManager's worker, mid-bundle: that TaskManager
    logged ``FnApiControlClient ... CANCELLED: client cancelled`` and its
    task failed three minutes later (``No client connected within
    timeout``), with no Python traceback anywhere. Here each worker is
    kept with its TaskManager's control endpoint: a TaskManager shuts its
    endpoint before it sends ``StopWorker``, so of the workers of that id
    the one to stop is the one whose endpoint is gone.

    Each worker gets the CPU affinity of the TaskManager it serves (when that
    TaskManager runs on this machine): confining a TaskManager to some CPUs
    confines its Python work too, which is where a Beam job's CPU goes.

    Also: each worker runs on this interpreter (Beam's runs whatever
    ``python`` is first on ``PATH``: with one lacking the package the job
    hung at RUNNING for good), its stdout goes to the pool's log (Beam's
    went to a pipe nobody read, which blocks a worker that prints 64 KiB),
    and its exit status is logged.
    """
    from apache_beam.runners.worker import worker_pool_main

    base = worker_pool_main.BeamFnExternalWorkerPoolServicer

    class WorkerPool(base):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self._lock = threading.Lock()
            # worker id -> [(process, control endpoint)]
            self._workers: dict[str, list[tuple[subprocess.Popen, str]]] = {}

        def StartWorker(self, request, context):  # noqa: N802 (gRPC's name)
            from apache_beam.portability.api import beam_fn_api_pb2

            self._reap()
            endpoint = request.control_endpoint.url
            command = sdk_worker_command(
                endpoint, request.worker_id, self._state_cache_size,
                self._data_buffer_time_limit_ms,
            )
            env = dict(os.environ, PYTHONFAULTHANDLER="1")
            try:
                proc = subprocess.Popen(
                    command, stdout=sys.stderr.fileno(), close_fds=True, env=env,
                )
            except OSError as exc:
                return beam_fn_api_pb2.StartWorkerResponse(error=str(exc))
            cpus = _listener_affinity(endpoint)
            if cpus is not None:
                try:
                    os.sched_setaffinity(proc.pid, cpus)
                except OSError:  # it already ended: its exit is logged
                    pass
            log.info("started SDK worker %s (pid %d) for %s on CPUs %s",
                     request.worker_id, proc.pid, endpoint,
                     sorted(cpus) if cpus is not None else "any")
            with self._lock:
                self._workers.setdefault(request.worker_id, []).append(
                    (proc, endpoint))
                # Beam's own table, which its exit hook ends: all of them.
                self._worker_processes[f"{request.worker_id}@{endpoint}"] = proc
            return beam_fn_api_pb2.StartWorkerResponse()

        def StopWorker(self, request, context):  # noqa: N802
            from apache_beam.portability.api import beam_fn_api_pb2

            with self._lock:
                workers = self._workers.get(request.worker_id, [])
                gone = [w for w in workers if not _accepts_url(w[1])]
                # One worker of that id, or none whose endpoint closed yet.
                stop = gone or (workers if len(workers) == 1 else [])
                for w in stop:
                    workers.remove(w)
                    self._worker_processes.pop(f"{request.worker_id}@{w[1]}", None)
                if not workers:
                    self._workers.pop(request.worker_id, None)
            for proc, endpoint in stop:
                log.info("stopping SDK worker %s (pid %d) of %s", request.worker_id,
                         proc.pid, endpoint)
                worker_pool_main.kill_process_gracefully(proc)
            if not stop and workers:
                log.warning("StopWorker %s: %d workers of that id still connected; "
                            "each ends when its TaskManager closes its endpoint",
                            request.worker_id, len(workers))
            self._reap()
            return beam_fn_api_pb2.StopWorkerResponse()

        def _reap(self) -> None:
            """Forget (and log) workers that ended on their own."""
            with self._lock:
                for worker_id, workers in list(self._workers.items()):
                    for w in list(workers):
                        code = w[0].poll()
                        if code is not None:
                            workers.remove(w)
                            self._worker_processes.pop(f"{worker_id}@{w[1]}", None)
                            log.log(logging.INFO if code == 0 else logging.WARNING,
                                    "SDK worker %s (pid %d) exited %d", worker_id,
                                    w[0].pid, code)
                    if not workers:
                        del self._workers[worker_id]

    return WorkerPool


def sdk_worker_command(endpoint: str, worker_id: str, state_cache_size: int,
                       data_buffer_time_limit_ms: int) -> list[str]:
    """The SDK worker Beam's pool starts, on this interpreter."""
    code = (
        "from apache_beam.runners.worker.sdk_worker import SdkHarness; "
        f"SdkHarness({endpoint!r}, worker_id={worker_id!r}, "
        f"state_cache_size={state_cache_size}, "
        f"data_buffer_time_limit_ms={data_buffer_time_limit_ms}).run()"
    )
    return [sys.executable, "-c", code]


def _listener_affinity(endpoint: str) -> set[int] | None:
    """CPUs allowed to the local process listening on ``endpoint``'s port.

    None when no process of this machine listens there (a remote
    TaskManager) or it cannot be read: the worker then runs anywhere.
    """
    import psutil

    try:
        port = int(endpoint.rpartition(":")[2])
        for conn in psutil.net_connections(kind="tcp"):
            listening = conn.status == psutil.CONN_LISTEN and conn.pid
            if listening and conn.laddr.port == port:
                return set(os.sched_getaffinity(conn.pid))
    except (ValueError, OSError, psutil.Error):
        pass
    return None


def _accepts_url(endpoint: str) -> bool:
    """Whether ``host:port`` accepts a TCP connection now."""
    host, _, port = endpoint.rpartition(":")
    try:
        with socket.create_connection((host or "localhost", int(port)), timeout=1):
            return True
    except (OSError, ValueError):
        return False


def serve_worker_pool(port: int) -> None:
    """The SDK worker pool (:func:`_worker_pool_class`) on ``port``, until signalled."""
    pool = _worker_pool_class()
    address, server = pool.start(use_process=True, port=port)
    log.info("SDK worker pool at %s (python %s)", address, sys.executable)
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    while not stopped.wait(1.0):
        pass
    server.stop(5)
    sys.exit(0)  # Beam's exit hook ends the workers still running
