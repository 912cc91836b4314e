"""``deid-flink-cluster``: a local Flink session cluster for the FlinkRunner.

Flink comes from PyPI's ``apache-flink`` and ``apache-flink-libraries`` wheels,
which carry a whole distribution (``pyflink/bin``, ``conf``, ``lib``); they pin
an old Beam, so they go ``--no-deps`` into a virtual environment of their own
under a cache directory, never into this project's. Beam's Flink job server
(the jar ``--flink_job_server_jar`` names) is built with Maven from
``deploy/flink/job-server/pom.xml`` (Beam's Java Flink runner from Maven
Central, shaded into one jar) into the same cache. The SDK worker pool
(``--environment_type=EXTERNAL``, ``pipelines/flink_worker_pool.py``) runs on
*this* interpreter, the one that has the package and its model installed,
because EXTERNAL workers get neither ``--setup_file`` nor anything else staged.

Every process started here writes its pid under ``--state-dir``, so ``stop``
ends exactly those (and waits until no JVM of theirs is left), whatever else
runs on the machine.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import yaml

from deid_pipeline.pipelines.flink_worker_pool import serve_worker_pool
from deid_pipeline.runtime.process import one_blas_thread

log = logging.getLogger(__name__)

# One tested combination (docs/flink.md): a Flink 1.19.3 cluster, Beam's Java
# Flink runner 2.62.0 as the job server (the newest whose whole tree Maven
# Central serves), the Python apache-beam the project installs (2.77.0 tested).
FLINK_VERSION = "1.19.3"
FLINK_MINOR = ".".join(FLINK_VERSION.split(".")[:2])
JOB_SERVER_VERSION = "2.62.0"
_JOB_SERVER_JAR = (
    f"beam-runners-flink-{FLINK_MINOR}-job-server-{JOB_SERVER_VERSION}.jar"
)
_CLUSTER_LIB_JAR = f"beam-runners-flink-{FLINK_MINOR}-lib-{JOB_SERVER_VERSION}.jar"
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# 35 s on a quiet 2-core machine; JVMs started at niceness 10 on a machine
# loaded 6 to 8 took over 120 s to register.
START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 30.0
_POOL_PID = "worker-pool.pid"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Written by Flink's flink-daemon.sh, one pid per line, under FLINK_PID_DIR.
_DAEMONS = ("taskexecutor", "standalonesession")


class ClusterError(Exception):
    """The cluster could not be installed, started or reached."""


@dataclass(frozen=True)
class ClusterConfig:
    """Where the cluster lives and how big it is.

    ``state_dir`` holds this cluster's conf, logs and pid files (one cluster
    per state directory); ``cache_dir`` the Flink install and the job server
    jar, shared by every cluster of the same Flink version. Memory sizes are
    Flink's process sizes: modest, for a machine shared with other work.
    """

    state_dir: str
    cache_dir: str
    rest_port: int = 8081
    rpc_port: int = 6123
    worker_pool_port: int = 50000
    taskmanagers: int = 2
    slots: int = 1
    jobmanager_memory: str = "1024m"
    taskmanager_memory: str = "1280m"
    nice: int = 10
    # Beam's runner in the cluster's lib/ (fetch_cluster_lib_jar): one SDK
    # worker per TaskManager for a whole job, not one per stage.
    beam_in_lib: bool = True
    # TaskManager i (and so its SDK workers) confined to one CPU: on one
    # machine, the share a TaskManager on a one-core machine of its own gets.
    pin_taskmanagers: bool = False


def default_cache_dir() -> str:
    """``$DEID_FLINK_CACHE``, else ``~/.cache/deid-pipeline/flink-<version>``."""
    return os.environ.get("DEID_FLINK_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "deid-pipeline", f"flink-{FLINK_VERSION}"
    )


def flink_home(cache_dir: str) -> str:
    """The distribution inside the cache's virtual environment (may not exist yet)."""
    pyver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return os.path.join(cache_dir, "venv", "lib", pyver, "site-packages", "pyflink")


def install_flink(cache_dir: str) -> str:
    """Flink's distribution from PyPI into ``cache_dir`` (once); its home."""
    home = flink_home(cache_dir)
    os.makedirs(cache_dir, exist_ok=True)
    # Two test runs on one machine may start at once: one installs, the
    # other waits and finds the install done.
    with open(os.path.join(cache_dir, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Written last: an install cut short is redone, not used.
        done = os.path.join(cache_dir, f".installed-{FLINK_VERSION}")
        if not os.path.exists(done):
            _install(cache_dir)
            with open(done, "w", encoding="utf-8") as fh:
                fh.write(f"apache-flink=={FLINK_VERSION}\n")
    return home


def _install(cache_dir: str) -> None:
    venv = os.path.join(cache_dir, "venv")
    log.info("installing apache-flink %s into %s", FLINK_VERSION, venv)
    _check_call([sys.executable, "-m", "venv", "--clear", venv], "python -m venv")
    _check_call(
        [
            os.path.join(venv, "bin", "pip"), "install", "-q", "--no-deps",
            f"apache-flink=={FLINK_VERSION}",
            f"apache-flink-libraries=={FLINK_VERSION}",
        ],
        "pip install apache-flink",
    )


def job_server_jar_path(cache_dir: str) -> str:
    """Where the job server jar (``JOB_SERVER_VERSION``) is kept in the cache."""
    return os.path.join(cache_dir, _JOB_SERVER_JAR)


def job_server_pom() -> str:
    """The pom that builds the job server, kept in the repository."""
    return os.path.join(_REPO, "deploy", "flink", "job-server", "pom.xml")


def fetch_job_server_jar(cache_dir: str) -> str:
    """Beam's Flink job server jar, built with Maven into ``cache_dir`` once.

    Maven Central does not serve Beam's prebuilt ``beam-runners-flink-<minor>-
    job-server`` jars; it serves the runner they are made from. The pom in
    ``deploy/flink/job-server`` shades it (and its whole runtime tree) into
    one executable jar. A jar of that name already in Beam's own jar cache
    (``~/.apache_beam/cache/jars``, where Beam tells offline sites to stage
    its jars) is used as it is.
    """
    jar = job_server_jar_path(cache_dir)
    if os.path.exists(jar):
        return jar
    staged = os.path.join(beam_jar_cache(), _JOB_SERVER_JAR)
    if os.path.exists(staged):
        return staged
    return _maven_build(cache_dir, job_server_pom(), _JOB_SERVER_JAR)


def fetch_cluster_lib_jar(cache_dir: str) -> str:
    """Beam's Flink runner without Flink, for the cluster's ``lib/`` (built once).

    ``deploy/flink/job-server/lib/pom.xml``: with Beam on Flink's parent class
    loader, a TaskManager keeps its SDK worker for the whole job
    (``--environment_cache_millis``) instead of starting one per stage.
    """
    return _maven_build(
        cache_dir,
        os.path.join(os.path.dirname(job_server_pom()), "lib", "pom.xml"),
        _CLUSTER_LIB_JAR,
    )


def _maven_build(cache_dir: str, pom: str, name: str) -> str:
    """``mvn package`` of ``pom`` into ``cache_dir/name``, unless it is there."""
    jar = os.path.join(cache_dir, name)
    if os.path.exists(jar):
        return jar
    if shutil.which("mvn") is None:
        raise ClusterError(f"mvn not found: cannot build {name}; put it at {jar}")
    if not os.path.exists(pom):
        raise ClusterError(f"{pom} not found: run from a checkout of the repository")
    os.makedirs(cache_dir, exist_ok=True)
    with open(os.path.join(cache_dir, ".jar.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time, the others wait
        if os.path.exists(jar):
            return jar
        build = os.path.join(cache_dir, "jar-build")
        shutil.rmtree(build, ignore_errors=True)
        started = time.monotonic()
        log.info("building %s with Maven (about 1 to 3 min)", name)
        done = subprocess.run(
            [
                "mvn", "-q", "-B", "-Dstyle.color=never", "-f", pom, "package",
                f"-Dbeam.version={JOB_SERVER_VERSION}",
                f"-Dflink.minor={FLINK_MINOR}",
                f"-DbuildDirectory={build}",
                f"-DoutputDirectory={build}",
            ],
            capture_output=True, text=True, check=False,
        )
        built = os.path.join(build, name)
        if done.returncode != 0 or not os.path.exists(built):
            errors = [
                _ANSI.sub("", line).removeprefix("[ERROR] ")
                for line in done.stdout.splitlines()
                if "ERROR" in line
            ]
            reason = errors[0] if errors else f"mvn exited {done.returncode}"
            raise ClusterError(f"could not build {name}: {reason.strip()}")
        os.replace(built, jar)  # whole or not at all
        shutil.rmtree(build, ignore_errors=True)
        log.info("built %s in %.0f s", name, time.monotonic() - started)
    return jar


def sha256(path: str) -> str:
    """The file's SHA-256, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def beam_jar_cache() -> str:
    """Beam's own jar cache (``~/.apache_beam/cache/jars``)."""
    from apache_beam.utils.subprocess_server import JavaJarServer

    return JavaJarServer.JAR_CACHE


def _set(conf: dict, dotted: str, value) -> None:
    """Set ``a.b.c`` in Flink's nested config.yaml, creating the levels."""
    *parents, last = dotted.split(".")
    node = conf
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def write_conf(home: str, cfg: ClusterConfig, beam_lib: str | None = None) -> str:
    """Write the cluster's conf and lib directories: the shipped ones, our settings.

    The shipped ``env.java.opts.all`` (Java 17's ``--add-opens`` flags) is kept.
    ``lib`` links the distribution's jars, plus ``beam_lib``
    (:func:`fetch_cluster_lib_jar`) when given, with Beam's classes then
    loaded parent-first.
    """
    lib = os.path.join(cfg.state_dir, "lib")
    shutil.rmtree(lib, ignore_errors=True)
    os.makedirs(lib)
    jars = glob.glob(os.path.join(home, "lib", "*.jar"))
    for jar in jars + ([beam_lib] if beam_lib else []):
        os.symlink(jar, os.path.join(lib, os.path.basename(jar)))
    conf_dir = os.path.join(cfg.state_dir, "conf")
    shutil.copytree(os.path.join(home, "conf"), conf_dir, dirs_exist_ok=True)
    path = os.path.join(conf_dir, "config.yaml")
    with open(path, encoding="utf-8") as fh:
        conf = yaml.safe_load(fh)
    for key, value in {
        "jobmanager.rpc.address": "localhost",
        "jobmanager.rpc.port": cfg.rpc_port,
        "jobmanager.memory.process.size": cfg.jobmanager_memory,
        "taskmanager.memory.process.size": cfg.taskmanager_memory,
        # Beam's Python workers run outside the JVM: little managed memory.
        "taskmanager.memory.managed.fraction": 0.2,
        "taskmanager.numberOfTaskSlots": cfg.slots,
        "parallelism.default": cfg.taskmanagers * cfg.slots,
        "rest.port": cfg.rest_port,
        "rest.address": "localhost",
        "rest.bind-address": "localhost",
        "blob.server.port": "0",
        "taskmanager.rpc.port": "0",
        "taskmanager.data.port": 0,
        # A killed TaskManager is noticed in half a minute, not Flink's 50 s
        # default; 10 s failed a job on a 2-core machine whose other core ran
        # the test suite, the niced TaskManager's heartbeat waiting past it.
        "heartbeat.interval": 2000,
        "heartbeat.timeout": 30000,
    }.items():
        _set(conf, key, value)
    if beam_lib:
        # The job's own copy of Beam and its libraries (the job server jar) is
        # not used (with Beam alone parent-first, joda-time's Duration of one
        # loader was refused by the other's): Beam then keeps a TaskManager's
        # SDK worker across the job's stages.
        _set(conf, "classloader.resolve-order", "parent-first")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(conf, fh, default_flow_style=False)
    return conf_dir


def _flink_env(home: str, cfg: ClusterConfig) -> dict:
    env = dict(os.environ)
    env.update(
        FLINK_HOME=home,
        FLINK_CONF_DIR=os.path.join(cfg.state_dir, "conf"),
        FLINK_LOG_DIR=os.path.join(cfg.state_dir, "log"),
        FLINK_PID_DIR=os.path.join(cfg.state_dir, "pids"),
        FLINK_LIB_DIR=os.path.join(cfg.state_dir, "lib"),
    )
    return env


def _check_call(cmd: list[str], what: str, env: dict | None = None) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise ClusterError(f"{what} exited {done.returncode}: {done.stderr[-2000:]}")


def _daemon(home: str, cfg: ClusterConfig, script: str, cpu: int | None = None) -> None:
    """``bin/<script> start`` at the configured niceness (the JVM inherits it).

    ``cpu``: confined to that CPU (``taskset``), the JVM and what it starts.
    """
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    _check_call(
        [*pin, "nice", "-n", str(cfg.nice), os.path.join(home, "bin", script), "start"],
        f"{script} start",
        env=_flink_env(home, cfg),
    )


def _taskmanager_cpu(cfg: ClusterConfig, index: int) -> int | None:
    """The CPU TaskManager ``index`` is confined to, or None (not pinned)."""
    if not cfg.pin_taskmanagers:
        return None
    from deid_pipeline.runtime.process import allowed_cpus

    cpus = allowed_cpus()
    return cpus[index % len(cpus)]


def _start_worker_pool(cfg: ClusterConfig) -> None:
    """:func:`serve_worker_pool` on this interpreter, in a session of its own."""
    with open(os.path.join(cfg.state_dir, "log", "worker-pool.log"), "ab") as out:
        proc = subprocess.Popen(
            [
                "nice", "-n", str(cfg.nice), sys.executable, "-m",
                "deid_pipeline.pipelines.flink_cluster", "worker-pool",
                f"--worker-pool-port={cfg.worker_pool_port}",
            ],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    with open(os.path.join(cfg.state_dir, _POOL_PID), "w", encoding="utf-8") as fh:
        fh.write(f"{proc.pid}\n")


def rest(cfg: ClusterConfig, path: str, timeout: float = 5.0):
    """GET ``path`` of the JobManager's REST API, as JSON."""
    url = f"http://localhost:{cfg.rest_port}{path}"
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
        return json.load(response)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _ready(cfg: ClusterConfig) -> bool:
    try:
        managers = rest(cfg, "/taskmanagers")["taskmanagers"]
    except (OSError, urllib.error.URLError, ValueError, KeyError):
        return False
    # A TaskManager is listed before its slots are: a job submitted then
    # would get fewer slots than the cluster was started with.
    slots = sum(m.get("slotsNumber", 0) for m in managers)
    return (len(managers) >= cfg.taskmanagers
            and slots >= cfg.taskmanagers * cfg.slots
            and _accepts(cfg.worker_pool_port))


def _pids(cfg: ClusterConfig) -> dict[str, list[int]]:
    """Pids this state directory started, by role (from the pid files)."""
    found: dict[str, list[int]] = {}
    pid_dir = os.path.join(cfg.state_dir, "pids")
    for name in sorted(os.listdir(pid_dir)) if os.path.isdir(pid_dir) else ():
        role = next((d for d in _DAEMONS if name.endswith(f"-{d}.pid")), None)
        if role:
            found[role] = _read_pids(os.path.join(pid_dir, name))
    pool = os.path.join(cfg.state_dir, _POOL_PID)
    if os.path.exists(pool):
        found["worker-pool"] = _read_pids(pool)
    return found


def _read_pids(path: str) -> list[int]:
    with open(path, encoding="utf-8") as fh:
        return [int(line) for line in fh if line.strip().isdigit()]


def taskmanager_pids(cfg: ClusterConfig) -> list[int]:
    """The TaskManagers' JVM pids, in start order."""
    return _pids(cfg).get("taskexecutor", [])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def start(cfg: ClusterConfig) -> str | None:
    """Install if needed and start JobManager, TaskManagers and the worker pool.

    Returns the job server jar's path, or None (logged) when it could not be
    fetched: the cluster runs, but FlinkRunner then needs the jar from elsewhere.
    Raises ``ClusterError`` (after stopping what started) if the REST API does
    not report every TaskManager within ``START_TIMEOUT_S``.
    """
    if shutil.which("java") is None:
        raise ClusterError("java not found: Flink needs a Java 11 or 17 runtime")
    if any(alive(p) for pids in _pids(cfg).values() for p in pids):
        raise ClusterError(f"a cluster of {cfg.state_dir} is running: stop it first")
    if _accepts(cfg.rest_port) or _accepts(cfg.worker_pool_port):
        raise ClusterError(
            f"port {cfg.rest_port} or {cfg.worker_pool_port} is taken on localhost"
        )
    home = install_flink(cfg.cache_dir)
    try:
        jar = fetch_job_server_jar(cfg.cache_dir)
    except ClusterError as exc:
        log.warning("%s", exc)
        jar = None
    beam_lib = None
    if cfg.beam_in_lib:
        try:
            beam_lib = fetch_cluster_lib_jar(cfg.cache_dir)
        except ClusterError as exc:
            log.warning("%s: one SDK worker per stage", exc)
    for sub in ("log", "pids"):
        os.makedirs(os.path.join(cfg.state_dir, sub), exist_ok=True)
    write_conf(home, cfg, beam_lib)
    try:
        _daemon(home, cfg, "jobmanager.sh")
        for index in range(cfg.taskmanagers):
            _daemon(home, cfg, "taskmanager.sh", _taskmanager_cpu(cfg, index))
        _start_worker_pool(cfg)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _ready(cfg):
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"{cfg.taskmanagers} TaskManager(s) and the worker pool not "
                    f"ready within {START_TIMEOUT_S:.0f} s; logs in "
                    f"{os.path.join(cfg.state_dir, 'log')}"
                )
            time.sleep(0.5)
    except BaseException:
        stop(cfg)
        raise
    return jar


def add_taskmanager(cfg: ClusterConfig) -> None:
    """One more TaskManager (after one was lost); waits until REST shows it.

    Counts live TaskManager processes, since the REST API lists a lost one
    until its heartbeat times out.
    """
    home = flink_home(cfg.cache_dir)
    _daemon(home, cfg, "taskmanager.sh",
            _taskmanager_cpu(cfg, len(taskmanager_pids(cfg))))
    wanted = sum(alive(p) for p in taskmanager_pids(cfg))
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            listed = len(rest(cfg, "/taskmanagers")["taskmanagers"])
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            listed = -1
        if listed == wanted:
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"{listed} TaskManager(s) registered, not {wanted}")
        time.sleep(0.5)


def stop(cfg: ClusterConfig) -> list[int]:
    """End every process ``cfg.state_dir`` started; returns the pids ended.

    SIGTERM first (the worker pool's whole session, with its SDK workers),
    SIGKILL what is left after ``STOP_TIMEOUT_S``; returns only once none runs.
    """
    pids = _pids(cfg)
    targets = [p for role in pids.values() for p in role if alive(p)]
    for pid in pids.get("worker-pool", []):
        _signal_group(pid, signal.SIGTERM)
    for pid in targets:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while any(alive(p) for p in targets) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in pids.get("worker-pool", []):
        _signal_group(pid, signal.SIGKILL)
    for pid in targets:
        if alive(pid):
            _signal(pid, signal.SIGKILL)
    while any(alive(p) for p in targets):
        time.sleep(0.1)
    for name in os.listdir(os.path.join(cfg.state_dir, "pids")) if os.path.isdir(
        os.path.join(cfg.state_dir, "pids")
    ) else ():
        os.remove(os.path.join(cfg.state_dir, "pids", name))
    if os.path.exists(os.path.join(cfg.state_dir, _POOL_PID)):
        os.remove(os.path.join(cfg.state_dir, _POOL_PID))
    return targets


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def status(cfg: ClusterConfig) -> dict:
    """What runs: processes by role, the REST overview, the pool, the jar."""
    running = {
        role: [p for p in pids if alive(p)] for role, pids in _pids(cfg).items()
    }
    try:
        overview = rest(cfg, "/overview")
    except (OSError, urllib.error.URLError, ValueError):
        overview = None
    jar = job_server_jar_path(cfg.cache_dir)
    return {
        "processes": running,
        "overview": overview,
        "worker_pool": f"localhost:{cfg.worker_pool_port}"
        if _accepts(cfg.worker_pool_port)
        else None,
        "job_server_jar": jar if os.path.exists(jar) else None,
        "flink_home": flink_home(cfg.cache_dir),
    }


def runner_args(cfg: ClusterConfig, jar: str) -> list[str]:
    """The Beam options of ``run`` that submit to this cluster and its pool."""
    return [
        "--runner=FlinkRunner",
        f"--flink_master=localhost:{cfg.rest_port}",
        f"--flink_job_server_jar={jar}",
        # Beam picks its newest Flink when no jar is given; say which one.
        f"--flink_version={FLINK_MINOR}",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{cfg.worker_pool_port}",
        f"--parallelism={cfg.taskmanagers * cfg.slots}",
    ] + (
        # Kept for the job (released 5 s after its last stage); without
        # Beam in lib/ Beam releases each stage's worker at once anyway.
        ["--environment_cache_millis=5000"]
        if os.path.exists(os.path.join(cfg.state_dir, "lib", _CLUSTER_LIB_JAR))
        else []
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deid-flink-cluster",
        description="A local Flink session cluster plus Beam's SDK worker pool, "
        "for deid-pipeline run --runner=FlinkRunner (docs/flink.md).",
    )
    parser.add_argument(
        "command", choices=("start", "stop", "status", "jar", "worker-pool"),
        help="worker-pool: run only the SDK worker pool, in the foreground (one "
        "per TaskManager machine or pod; docs/flink.md)",
    )
    parser.add_argument("--taskmanagers", type=int, default=2)
    parser.add_argument("--slots", type=int, default=1, help="per TaskManager")
    parser.add_argument("--rest-port", type=int, default=8081)
    parser.add_argument("--rpc-port", type=int, default=6123)
    parser.add_argument("--worker-pool-port", type=int, default=50000)
    parser.add_argument("--taskmanager-memory", default="1280m")
    parser.add_argument(
        "--pin-taskmanagers", action="store_true",
        help="confine TaskManager i and its SDK workers to CPU i (mod the CPUs "
        "allowed): on one machine, what a TaskManager of a one-core machine gets "
        "(bench_scaling --runner flink)",
    )
    parser.add_argument(
        "--no-beam-in-lib", dest="beam_in_lib", action="store_false",
        help="leave Beam out of the cluster's lib/ (one SDK worker per stage)",
    )
    parser.add_argument("--cache-dir", default=None, help="default: %s" % (
        default_cache_dir(),))
    parser.add_argument(
        "--state-dir", default=None, help="conf, logs and pids (default: CACHE/cluster)"
    )
    return parser


def config_from_args(args: argparse.Namespace) -> ClusterConfig:
    """The ``ClusterConfig`` the command line describes."""
    cache = os.path.abspath(args.cache_dir or default_cache_dir())
    return ClusterConfig(
        state_dir=os.path.abspath(args.state_dir or os.path.join(cache, "cluster")),
        cache_dir=cache,
        rest_port=args.rest_port,
        rpc_port=args.rpc_port,
        worker_pool_port=args.worker_pool_port,
        taskmanagers=args.taskmanagers,
        slots=args.slots,
        taskmanager_memory=args.taskmanager_memory,
        beam_in_lib=args.beam_in_lib,
        pin_taskmanagers=args.pin_taskmanagers,
    )


def main(argv: list[str] | None = None) -> int:
    """``deid-flink-cluster start|stop|status|jar``; exit 1 on ``ClusterError``."""
    one_blas_thread()  # the worker pool's SDK workers inherit it
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = _parser().parse_args(argv)
    cfg = config_from_args(args)
    try:
        if args.command == "start":
            jar = start(cfg)
            print(f"Flink REST http://localhost:{cfg.rest_port}, "
                  f"{cfg.taskmanagers} TaskManager(s) x {cfg.slots} slot(s); "
                  f"worker pool localhost:{cfg.worker_pool_port}")
            if jar:
                print("run options: " + " ".join(runner_args(cfg, jar)))
            else:
                print("job server jar: not available (see above)")
        elif args.command == "worker-pool":
            serve_worker_pool(cfg.worker_pool_port)
        elif args.command == "stop":
            print(f"stopped {len(stop(cfg))} process(es)")
        elif args.command == "status":
            print(json.dumps(status(cfg), indent=2))
        else:
            jar = fetch_job_server_jar(cfg.cache_dir)
            print(f"job server: Beam {JOB_SERVER_VERSION} FlinkRunner for Flink "
                  f"{FLINK_MINOR} (cluster {FLINK_VERSION}), "
                  f"{os.path.getsize(jar)} bytes, sha256 {sha256(jar)}",
                  file=sys.stderr)
            if args.beam_in_lib:  # what start puts in the cluster's lib/
                lib = fetch_cluster_lib_jar(cfg.cache_dir)
                print(f"cluster lib: {lib}, {os.path.getsize(lib)} bytes, "
                      f"sha256 {sha256(lib)}", file=sys.stderr)
            print(jar)
    except ClusterError as exc:
        print(f"deid-flink-cluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
