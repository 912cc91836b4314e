"""Beam's SDK workers forked from a process that has already loaded them.

Why: with ``--direct_running_mode=multi_processing`` Beam starts each SDK
worker as a new interpreter, which imports Beam and this package (0.4 s of
CPU) only once the driver has imported and built the job (0.7 s), and then
builds its tagger: on 8,000 nursing notes the first document was tagged
1.5 s after the command started, a part of the run that no number of
workers shortens (issue 45).

Here the driver starts one *zygote* as its first step, on the other core,
while it imports Beam itself: a process that imports what a worker needs,
receives the job's tagger settings, builds that tagger, and then forks a
worker whenever Beam asks for one. Beam still starts the worker command it
is given, through its own ``SubprocessSdkWorker``; the command is this
module's small ``worker`` client, which hands its environment (Beam's
endpoints and options) and its standard streams to the zygote, waits for
the forked worker, and exits with its status. The forked worker runs Beam's
own ``sdk_worker_main`` with that environment and those streams: the same
worker, its imports done and its tagger built (the model's and lexicons'
pages shared with its siblings until written).

Fails open to Beam's own way: without ``fork`` (Windows, macOS, where
forking a loaded process is unsafe) nothing changes, and a client that
cannot reach its zygote (it failed to start, died, or is not ready within
its time) becomes Beam's usual worker by ``exec``. The zygote lives as long
as the driver's pipe to it, and waits for its workers before it ends, so
that what ``time`` reports for the command includes their CPU and memory.
Only the driver's user can reach the zygote's socket (a 0700 directory).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

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


def supported() -> bool:
    """Whether workers can be forked here: Linux, with ``os.fork``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def wanted(argv: list[str]) -> bool:
    """Whether the command line ``argv`` runs on the DirectRunner's worker processes.

    Read off the words alone (nothing is parsed yet): ``run`` with
    ``--direct_running_mode=multi_processing`` and no other runner.
    """
    if not supported() or "run" not in argv:
        return False
    words = " ".join(argv).replace("=", " ").split()
    pairs = dict(zip(words, words[1:]))
    runner = pairs.get("--runner", "DirectRunner")
    return (pairs.get("--direct_running_mode") == "multi_processing"
            and runner in ("DirectRunner", "SwitchingDirectRunner"))


class Zygote:
    """The driver's handle on its zygote: started, given the tagger, closed."""

    def __init__(self) -> None:
        import subprocess
        import tempfile

        self.directory = tempfile.mkdtemp(prefix="deid-workers-")  # 0700
        self.path = os.path.join(self.directory, _SOCKET_NAME)
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, "zygote", self.path],
            stdin=subprocess.PIPE, close_fds=True)
        self._configured = False

    @property
    def pid(self) -> int:
        """The zygote's process id (its workers' parent)."""
        return self._process.pid

    def command(self) -> str:
        """The worker command Beam is to run (a shell command line)."""
        import shlex

        return _CLIENT.format(python=shlex.quote(sys.executable),
                              path=shlex.quote(self.path))

    def preload(self, config: object, workers: int) -> None:
        """Hand the job's tagger settings and worker count over (once).

        The zygote builds that tagger; until then it forks no worker (a
        client waits in its backlog).
        """
        import pickle

        if self._configured:
            return
        self._configured = True
        data = pickle.dumps((config, workers))
        try:
            self._process.stdin.write(_LENGTH.pack(len(data)) + data)
            self._process.stdin.flush()
        except OSError:  # it is gone: clients start Beam's own workers
            pass

    def close(self) -> None:
        """End the zygote (its workers have ended) and remove its socket."""
        import shutil
        import subprocess

        try:
            self._process.stdin.close()
        except OSError:
            pass
        if not self._configured:
            self._process.kill()  # loading still, for a run that never ran
        try:
            # It waits for its workers, so that this process's children's
            # CPU and memory (what ``time`` reports) include theirs.
            self._process.wait(timeout=_CLOSE_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


_STARTED: Zygote | None = None


def start() -> Zygote | None:
    """Start this process's zygote (once); None where workers cannot be forked."""
    global _STARTED
    if _STARTED is None and supported():
        try:
            _STARTED = Zygote()
        except OSError:
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


def _read_exactly(stream, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        block = stream.read(size - len(data))
        if not block:
            return None
        data += block
    return data


def _zygote(path: str) -> int:
    """Load; fork a worker for each client but the last, and become that one.

    The last of the job's workers is this process itself: no process stays
    idle beside the workers (its pages would count again in every sum of
    their memory), and with one worker nothing is forked at all. Ends when
    the driver's pipe closes first (the run never asked for its workers).
    """
    import gc
    import pickle
    import selectors

    # The driver's Ctrl-C is the driver's to handle; a dead driver closes
    # the pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)  # at once: clients wait in its backlog meanwhile
        listener.listen(16)
    except OSError:  # a path too long for a socket: Beam's own workers, then
        return 0
    gc.disable()
    _import_worker()
    stdin = sys.stdin.buffer
    header = _read_exactly(stdin, _LENGTH.size)
    if header is None:
        return 0
    payload = _read_exactly(stdin, _LENGTH.unpack(header)[0])
    if payload is None:
        return 0
    config, workers = pickle.loads(payload)
    _preload(config)
    gc.freeze()  # what is loaded stays: out of every worker's collections
    gc.enable()
    forks = max(0, workers - 1)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(stdin, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.fileobj is stdin:
                if not stdin.read1(65536):
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
                    os._exit(_as_worker(connection, *request))
                for fd in request[0]:
                    os.close(fd)
                connection.close()
                continue
            # The last worker: this process. Later clients start Beam's own.
            selector.close()
            listener.close()
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


def _import_worker() -> None:
    """What every SDK worker of a deid-pipeline job imports.

    Beam's import warnings (a missing BigQuery client) are kept off the
    driver's terminal, as its own workers' are (``worker_logs.py``).
    """
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        from apache_beam.runners.worker import sdk_worker_main  # noqa: F401

        from deid_pipeline.pipelines import job  # noqa: F401 - every DoFn's module
    finally:
        root.setLevel(level)


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
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    done.set()
    try:
        connection.sendall(bytes([status & 0xFF]))
    except OSError:
        pass
    if after_status is not None:
        after_status()
    return status


def main(argv: list[str]) -> int:
    """``zygote PATH`` (started by the driver) or ``worker PATH`` (by Beam)."""
    role, path = argv
    if role == "zygote":
        status = _zygote(path)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(status)  # a worker's threads are not to be waited for
    return _client(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
