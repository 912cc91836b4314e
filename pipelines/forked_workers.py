"""Beam's SDK workers forked from the driver once it has loaded them.

Why: with ``--direct_running_mode=multi_processing`` Beam starts each SDK
worker as a new interpreter, which imports Beam and this package (0.5 s of
CPU) that the driver has just imported too, and then builds its tagger: on
8,000 nursing notes the first document was tagged 1.5 s after the command
started, a part of the run that no number of workers shortens (issue 45).

Here the driver, once it has imported the job (Beam's worker included) and
parsed its options, forks one *zygote*: a copy of itself that builds the
job's tagger while the driver builds the pipeline, and then forks a worker
whenever Beam asks for one. Beam still starts the worker command it is
given, through its own ``SubprocessSdkWorker``; the command is this module's
small ``worker`` client, which hands its environment (Beam's endpoints and
options) and its standard streams to the zygote, waits for the forked
worker, and exits with its status. The forked worker runs Beam's own
``sdk_worker_main`` with that environment and those streams: the same
worker, with nothing to import, its tagger built, and the imported code's
and the model's pages shared with the driver and its siblings until written.

Fails open to Beam's own way: without ``fork`` (Windows, macOS, where
forking a loaded process is unsafe), in a process where other threads run
(one that has run a pipeline before) or without a socket nothing changes,
and a client that cannot reach its zygote (it died, or is not ready within
its time) becomes Beam's usual worker by ``exec``. The zygote lives as long
as the driver's pipe to it, and waits for its workers before it ends, so
that what ``time`` reports for the command includes their CPU and memory.
Only the driver's user can reach the zygote's socket (a 0700 directory).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import struct
import sys
from typing import NoReturn

log = logging.getLogger(__name__)

# The command Beam runs a worker with: this module's client, on this
# interpreter, without the shell Beam puts before it (``exec``).
_CLIENT = "exec {python} -m deid_pipeline.pipelines.forked_workers worker {path}"
_SOCKET_NAME = "zygote.sock"
# What the zygote answers a client with: forked, and a worker's exit status.
_FORKED = b"F"
_LENGTH = struct.Struct(">I")
# How long a client waits for the zygote to take its request (it is still
# loading the tagger, at most a few seconds) before it starts Beam's worker.
_CLIENT_WAIT_SECONDS = 60.0
# How long the driver waits for the zygote to end after the pipeline.
_CLOSE_WAIT_SECONDS = 10.0
# Threads a fork leaves harmless (see forkable), by their kernel names.
_FORK_SAFE_THREADS = frozenset({"jemalloc_bg_thd"})


def supported() -> bool:
    """Whether workers can be forked here: Linux, with ``os.fork``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class Zygote:
    """The driver's handle on its zygote: forked for a tagger, closed."""

    def __init__(self, config: object, workers: int) -> None:
        """Fork the zygote; it builds the tagger for ``config`` (OSError: none).

        The socket is bound before the fork: a client that comes while the
        tagger is being built waits in its backlog.
        """
        import shutil
        import tempfile

        self.directory = tempfile.mkdtemp(prefix="deid-workers-")  # 0700
        self.path = os.path.join(self.directory, _SOCKET_NAME)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)  # fails for a path too long for a socket
            listener.listen(16)
            read_end, self._pipe = os.pipe()
        except OSError:
            listener.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        _flush_streams()  # what the driver buffered is written once, by it
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._pipe)
            _as_zygote(listener, read_end, config, workers)
        listener.close()
        os.close(read_end)

    def command(self) -> str:
        """The worker command Beam is to run (a shell command line)."""
        import shlex

        return _CLIENT.format(python=shlex.quote(sys.executable),
                              path=shlex.quote(self.path))

    def close(self) -> None:
        """End the zygote (its workers have ended) and remove its socket."""
        import shutil
        import time

        try:
            os.close(self._pipe)  # the zygote's cue to end
        except OSError:
            pass
        # It waits for its workers, so that this process's children's CPU
        # and memory (what ``time`` reports) include theirs.
        deadline = time.monotonic() + _CLOSE_WAIT_SECONDS
        while not _ended(self.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not _ended(self.pid):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        shutil.rmtree(self.directory, ignore_errors=True)


def _ended(pid: int) -> bool:
    """Whether child ``pid`` has ended (and is reaped now)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


_STARTED: Zygote | None = None


def forkable() -> bool:
    """Whether this process may be forked: no thread runs but this one.

    A fork copies only the calling thread, and any lock another thread held
    stays held in the copy: after a pipeline has run in a process, gRPC's
    threads are left running, and a worker forked from it hung. jemalloc's
    background thread (pyarrow's allocator) is the exception: jemalloc's own
    fork handlers take care of it (every Beam worker forked here has it).
    """
    import threading

    if threading.active_count() != 1:
        return False
    this = threading.get_native_id()
    try:
        tasks = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return False
    for task in tasks:
        if task == this:
            continue
        try:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as fh:
                name = fh.read().strip()
        except OSError:  # ended meanwhile
            continue
        if name not in _FORK_SAFE_THREADS:
            return False
    return True


def start(config: object, workers: int) -> Zygote | None:
    """The zygote for ``config``'s tagger, forked once a process.

    None where workers cannot be forked: Beam's own then run.
    """
    global _STARTED
    if _STARTED is None and supported():
        if not forkable():
            log.debug("workers not forked: another thread runs in this process")
            return None
        try:
            _STARTED = Zygote(config, workers)
        except OSError as exc:
            log.debug("workers not forked: %s", type(exc).__name__)
            return None
    return _STARTED


def stop() -> None:
    """Close the zygote :func:`start` started, if any."""
    global _STARTED
    if _STARTED is not None:
        _STARTED.close()
        _STARTED = None


def runner(zygote: Zygote, options: object) -> object:
    """Beam's FnApiRunner, as the DirectRunner builds it, with forked workers."""
    from apache_beam.portability import python_urns
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    command = zygote.command().encode()

    class ForkedWorkersRunner(fn_runner.FnApiRunner):
        """The FnApiRunner, each subprocess worker's command replaced."""

        def run_via_runner_api(self, pipeline_proto, options):
            for environment in pipeline_proto.components.environments.values():
                if environment.urn == python_urns.SUBPROCESS_SDK:
                    environment.payload = command
            return super().run_via_runner_api(pipeline_proto, options)

    # As the DirectRunner builds its FnApiRunner: the workers' options.
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    return ForkedWorkersRunner(provision_info=fn_runner.ExtendedProvisionInfo(
        beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)))


# ---------------------------------------------------------------- the client


def _client(path: str) -> int:
    """Have the zygote fork a worker for this environment; its exit status.

    Beam's usual worker is ``exec``-ed instead when the zygote cannot take
    the request.
    """
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(_CLIENT_WAIT_SECONDS)
        connection.connect(path)
        request = json.dumps(dict(os.environ)).encode()
        socket.send_fds(connection, [_LENGTH.pack(len(request))], [0, 1, 2])
        connection.sendall(request)
        forked = connection.recv(1) == _FORKED
    except OSError:
        forked = False
    if not forked:
        connection.close()
        os.execv(sys.executable, [sys.executable, "-m",
                                  "apache_beam.runners.worker.sdk_worker_main"])
    connection.settimeout(None)
    # Killed, this process closes the connection, and the worker ends.
    status = connection.recv(1)
    return status[0] if status else 1


# ---------------------------------------------------------------- the zygote


def _as_zygote(listener: socket.socket, pipe: int, config: object,
               workers: int) -> NoReturn:
    """The forked zygote's life; it exits with its last worker's status."""
    status = 1
    try:
        status = _zygote(listener, pipe, config, workers)
    except BaseException:  # noqa: BLE001 - reported, and the driver goes on
        import traceback

        traceback.print_exc()
    finally:
        _flush_streams()
        os._exit(status)  # a worker's threads are not to be waited for


def _flush_streams() -> None:
    """Write what this process buffered (a closed stream loses it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _zygote(listener: socket.socket, pipe: int, config: object,
            workers: int) -> int:
    """Build the tagger; fork a worker for each client but the last, become that one.

    The last of the job's workers is this process itself: no process stays
    idle beside the workers (its pages would count again in every sum of
    their memory), and with one worker nothing is forked at all. Ends when
    the driver's pipe closes first (the run never asked for its workers).
    """
    import gc
    import selectors

    # The driver's Ctrl-C and SIGTERM are the driver's to handle (its
    # handlers came with the fork); a dead driver closes the pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _logging_of_a_new_worker()
    gc.disable()
    _preload(config)
    gc.freeze()  # what is loaded stays: out of every worker's collections
    gc.enable()
    forks = max(0, workers - 1)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(pipe, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj == pipe:
                if not os.read(pipe, 65536):
                    _reap(block=True)  # the driver is done: so are they
                    return 0
                continue
            connection, _ = listener.accept()
            request = _request(connection)
            if request is None:
                continue
            if forks:
                forks -= 1
                if not os.fork():
                    listener.close()
                    os.close(pipe)
                    os._exit(_as_worker(connection, *request))
                for fd in request[0]:
                    os.close(fd)
                connection.close()
                continue
            # The last worker: this process. Later clients start Beam's own.
            selector.close()
            listener.close()
            os.close(pipe)
            # Then its siblings, which the runner stops after it, are waited
            # for: their CPU and memory count in the driver's children's.
            return _as_worker(connection, *request,
                              after_status=lambda: _reap(block=True))
        _reap(block=False)


def _reap(block: bool) -> None:
    """Wait for ended workers (all of them, if ``block``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return


def _logging_of_a_new_worker() -> None:
    """The root logger as Beam's own worker process has it, not the driver's.

    There Beam's import warning (a missing BigQuery client) configured it:
    Python's default format on stderr, which the driver's filter of worker
    noise knows (``worker_logs.py``). The driver's floor for Beam's loggers
    (INFO: Beam logs elements at DEBUG) is kept.
    """
    import logging

    root = logging.getLogger()
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    for log_filter in root.filters[:]:
        root.removeFilter(log_filter)
    root.setLevel(logging.WARNING)
    logging.basicConfig()


def _preload(config: object) -> None:
    from deid_pipeline.transforms.tag import preload_tagger

    try:
        preload_tagger(config)
    except Exception:  # noqa: BLE001 - each worker then builds it, and reports
        pass


def _request(connection: socket.socket) -> tuple[list[int], dict] | None:
    """A client's standard streams and environment; None if it sent no whole one."""
    try:
        header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, 3)
        request = _read_connection(connection, _LENGTH.unpack(header)[0])
        environment = json.loads(request)
    except (OSError, ValueError, struct.error):
        connection.close()
        return None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        connection.close()
        return None
    return fds, environment


def _as_worker(connection: socket.socket, fds: list[int], environment: dict,
               after_status=None) -> int:
    """Run Beam's SDK worker here, on the client's streams and environment.

    ``after_status`` runs once the client has heard the worker's status.
    """
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(environment)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return _run_worker(connection, after_status)


def _read_connection(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        block = connection.recv(size - len(data))
        if not block:
            raise OSError("the client closed its connection")
        data += block
    return data


def _run_worker(connection: socket.socket, after_status=None) -> int:
    """Beam's SDK worker in this process (a fork, or the zygote); its exit status."""
    import threading
    import traceback

    connection.sendall(_FORKED)
    done = threading.Event()

    def end_with_client() -> None:
        # The client sends nothing more: a read returns when it is gone.
        try:
            connection.recv(1)
        except OSError:
            pass
        if not done.is_set():
            os._exit(1)

    threading.Thread(target=end_with_client, daemon=True,
                     name="forked-worker-client").start()
    status = 0
    try:
        from apache_beam.runners.worker import sdk_worker_main

        sdk_worker_main.main([])
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported like Beam's own worker
        traceback.print_exc()
        status = 1
    finally:
        _flush_streams()
    done.set()
    try:
        connection.sendall(bytes([status & 0xFF]))
    except OSError:
        pass
    if after_status is not None:
        after_status()
    return status


def main(argv: list[str]) -> int:
    """``worker PATH``: the command Beam starts a worker with."""
    role, path = argv
    if role != "worker":
        raise SystemExit(f"forked_workers: unknown role {role!r}")
    try:
        return _client(path)
    except KeyboardInterrupt:
        # Ctrl-C reaches the whole process group: the driver reports it, and
        # the worker ends with this connection. No traceback per worker.
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
