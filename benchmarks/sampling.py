"""What a benchmark run costs the machine: memory, CPU by process and by role.

:class:`TreeSampler` follows one process and its descendants (peak summed RSS,
CPU seconds, and the CPU everything else on the machine used meanwhile);
:class:`RoleSampler` sums every process's CPU by what it is (the ``run``
client, Flink's JobManager and TaskManagers, Beam's job server, SDK workers);
:func:`calibrate` measures how far pure CPU work scales on this machine now.
Both samplers read psutil from a thread of their own. Used by ``bench_scaling``
and ``bench_large_document``; never reads document content.
"""

from __future__ import annotations

import multiprocessing
import threading
import time


class TreeSampler:
    """Samples a process and all its descendants: peak summed RSS, CPU seconds.

    RSS is summed over the processes at each sample (shared pages count once
    per process, so this is an upper bound of what the tree holds). CPU time
    of processes that exit between samples is kept at their last sample. The
    CPU used by everything outside the tree (other jobs on the machine) is
    measured too, from the machine's total.
    """

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        import psutil

        self._psutil = psutil
        self._root = psutil.Process(pid)
        self._interval = interval
        self._cpu: dict[int, float] = {}
        self._procs: dict[int, object] = {}
        self.peak_rss = 0
        self.peak_root_rss = 0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._machine_start = self._machine_cpu()

    def _machine_cpu(self) -> float:
        t = self._psutil.cpu_times()
        return sum(
            getattr(t, name, 0.0)
            for name in ("user", "nice", "system", "irq", "softirq", "steal")
        )

    def _sample(self) -> None:
        psutil = self._psutil
        try:
            procs = [self._root] + self._root.children(recursive=True)
        except psutil.Error:
            return
        rss = 0
        alive = 0
        for proc in procs:
            # Reuse Process objects: psutil tells pid reuse apart by create time.
            proc = self._procs.setdefault(proc.pid, proc)
            try:
                with proc.oneshot():
                    own = proc.memory_info().rss
                    times = proc.cpu_times()
                rss += own
                if proc is self._root:
                    self.peak_root_rss = max(self.peak_root_rss, own)
                self._cpu[proc.pid] = times.user + times.system
                alive += 1
            except psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_processes = max(self.peak_processes, alive)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self._interval)

    def start(self) -> TreeSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def tree_cpu(self) -> float:
        return sum(self._cpu.values())

    @property
    def root_cpu(self) -> float:
        return self._cpu.get(self._root.pid, 0.0)

    @property
    def machine_cpu(self) -> float:
        return self._machine_cpu() - self._machine_start


# What each process of a run is, from its command line (first match wins).
_ROLES = (
    # First: the client's own command line names the job server jar.
    ("run (client)", "deid_pipeline.pipelines.job"),
    ("run (client)", "deid_pipeline.pipelines.entry"),
    ("flink jobmanager", "StandaloneSessionClusterEntrypoint"),
    ("flink taskmanagers", "TaskManagerRunner"),
    ("beam job server", "FlinkJobServerDriver"),
    ("beam job server", "-job-server-"),
    ("sdk workers", "SdkHarness("),
    ("sdk workers", "sdk_worker_main"),
    ("worker pool", "flink_cluster worker-pool"),
)


class RoleSampler:
    """CPU seconds of every process on the machine, summed by role.

    A Flink run's work is spread over processes outside the job's own tree
    (JobManager, TaskManagers, the worker pool and its SDK workers): this
    tells which of them the CPU went to. A process's last sample counts, so
    one that ends between samples loses at most ``interval`` of its time.
    """

    def __init__(self, interval: float = 0.5) -> None:
        import psutil

        self._psutil = psutil
        self._interval = interval
        self._start: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._sample(baseline=True)

    def _role(self, cmdline: list[str]) -> str:
        line = " ".join(cmdline)
        return next((role for role, mark in _ROLES if mark in line), "other")

    def _sample(self, baseline: bool = False) -> None:
        # Attributes a process cannot give (it ended, a zombie) come as None.
        for proc in self._psutil.process_iter(["cmdline", "cpu_times"]):
            times = proc.info["cpu_times"]
            if times is None:
                continue
            cpu = times.user + times.system
            if baseline:
                self._start[proc.pid] = cpu
                continue
            # A process that has exited and is not yet reaped (a zombie) shows
            # no command line but all its CPU: it keeps the role it was seen in.
            cmdline = proc.info["cmdline"]
            known = self._last.get(proc.pid)
            role = (self._role(cmdline or []) if cmdline or known is None
                    else known[0])
            self._last[proc.pid] = (role, cpu)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def start(self) -> RoleSampler:
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        """CPU seconds by role since the sampler was made."""
        self._stop.set()
        self._thread.join()
        self._sample()
        totals: dict[str, float] = {}
        for pid, (role, cpu) in self._last.items():
            used = cpu - self._start.get(pid, 0.0)
            totals[role] = totals.get(role, 0.0) + used
        return {role: round(cpu, 1) for role, cpu in sorted(totals.items())}


def _busy(seconds: float) -> int:
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        for _ in range(10_000):
            n += 1
    return n


def calibrate(processes: int, seconds: float = 2.0) -> float | None:
    """Speed-up of ``processes`` busy-looping processes over one (ideal = processes).

    Pure CPU, no shared data: the most any job can scale on this machine now
    (hyperthread siblings, CPU quotas and other load all show here).
    """
    if processes < 2:
        return None
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes) as pool:
        pool.map(_busy, [0.2] * processes)  # start-up out of the measurement
        one = pool.map(_busy, [seconds])[0]
        many = pool.map(_busy, [seconds] * processes)
    return sum(many) / one
