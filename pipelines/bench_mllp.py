"""Benchmark: the MLLP gateway's sustained throughput and ACK latency.

Starts ``deid-pipeline mllp`` as its own process on a free loopback port
(with a throw-away key and output directory, so the figures include the
fsyncs before each ACK), then sends generated ORU^R01 reports with 10-40
OBX lines through python-hl7's ``MLLPClient``: first from one client, then
from several concurrent clients, each on its own connection and waiting for
each ACK as a real sender does. Every message is new (no dedup hits), and
every ACK is checked to be ``AA`` (written) or ``AE`` (quarantined by the
leak guard, counted) for its own MSH-10.

    python -m deid_pipeline.pipelines.bench_mllp --count 400 --clients 1,4

Prints per client count: messages, seconds, messages/s and client-side
p50/p99 latency (send -> ACK), the gateway's CPU time per message (its
process and workers, with psutil: what the rate would be on idle CPUs when
the machine is shared), and the gateway's own status line. Figures only, no
message content. Needs python-hl7 (and psutil): the ``test`` extra.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from hl7.client import MLLPClient

from deid_pipeline.pipelines.bench_hl7 import oru_messages
from deid_pipeline.tagger.detectors import DEFAULT_DETECTORS

# The detectors the benchmark runs by default: the gateway's own default (the
# CRF model ships with the package), so the figures are what a site gets.
DETECTORS = DEFAULT_DETECTORS
WARM_UP = 20


def _control_id(er7: str) -> str:
    return er7.split("\r", 1)[0].split("|")[9]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _start_gateway(output: str, key_file: str, workers: int | None,
                   detectors: str = ",".join(DETECTORS), pin: bool = True,
                   ) -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, "-m", "deid_pipeline.mllp.cli", "--listen", "127.0.0.1:0",
           "--output", output, "--key-file", key_file, "--detectors",
           detectors, "--status-interval", "0"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if not pin:
        cmd.append("--no-pin-workers")
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    while True:
        line = proc.stderr.readline().decode()
        if not line:
            raise RuntimeError("the gateway did not start")
        found = re.search(r"listening on [^ ]+:(\d+)", line)
        if found:
            return proc, int(found.group(1))


def _send(port: int, messages: list[str], latencies: list[float],
          failures: list[str], refused: list[str]) -> None:
    """Send each message and wait for its ACK; note AE (quarantined) and failures.

    An AE is a message the gateway de-identified no further than quarantine
    (the whole-message leak guard's hit): work done and acknowledged, so it
    counts in the rate; anything else (AR, no ACK, another id) is a failure.
    """
    with MLLPClient("127.0.0.1", port) as client:
        for er7 in messages:
            started = time.perf_counter()
            reply = client.send_message(er7)
            latencies.append(time.perf_counter() - started)
            fields = reply.split(b"\r")[1].split(b"|") if b"\rMSA|" in reply else []
            control = _control_id(er7)
            if fields[1:3] == [b"AE", control.encode()]:
                refused.append(control)
            elif fields[1:3] != [b"AA", control.encode()]:
                failures.append(control)


def _cpu_seconds(pid: int) -> tuple[float, float] | None:
    """CPU time so far of the gateway process and of its workers (needs psutil)."""
    try:
        import psutil
    except ImportError:
        return None
    root = psutil.Process(pid)
    spent = [0.0, 0.0]
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        spent[proc.pid != pid] += times.user + times.system
    return spent[0], spent[1]


def _phase(port: int, messages: list[str], clients: int,
           pid: int | None = None) -> dict[str, float]:
    cpu_before = _cpu_seconds(pid) if pid else None
    clients_cpu = time.process_time()
    latencies: list[float] = []
    failures: list[str] = []
    refused: list[str] = []
    shares = [messages[i::clients] for i in range(clients)]
    threads = [threading.Thread(target=_send,
                                args=(port, share, latencies, failures, refused))
               for share in shares]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    clients_cpu = time.process_time() - clients_cpu
    if failures or len(latencies) != len(messages):
        raise RuntimeError(f"{len(failures)} message(s) not acknowledged AA or AE")
    figures = {"clients": clients, "messages": len(messages), "refused": len(refused),
               "seconds": seconds,
               "rate": len(messages) / seconds, "p50": _percentile(latencies, 0.50),
               "p99": _percentile(latencies, 0.99)}
    per_message = 1000 / len(messages)
    figures["clients_cpu_ms"] = clients_cpu * per_message
    if cpu_before is not None:
        main, workers = (after - before for after, before
                         in zip(_cpu_seconds(pid), cpu_before, strict=True))
        figures["cpu_ms"] = (main + workers) * per_message
        figures["main_cpu_ms"] = main * per_message
    return figures


def run(argv: list[str] | None = None) -> list[dict[str, float]]:
    """Run the benchmark; returns one dict of figures per client count."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=400,
                        help="messages per client count (default: %(default)s)")
    parser.add_argument("--clients", default="1,4",
                        help="comma-separated concurrent clients (default: "
                        "%(default)s)")
    parser.add_argument("--workers", type=int,
                        help="gateway --workers (default: the gateway's default, "
                        "one per CPU)")
    parser.add_argument("--detectors", default=",".join(DETECTORS),
                        help="gateway --detectors (default: %(default)s)")
    parser.add_argument("--no-pin-workers", dest="pin", action="store_false",
                        help="gateway --no-pin-workers (default: pinned, as the "
                        "gateway's default)")
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.clients.split(",")]
    total = WARM_UP + args.count * len(counts)
    messages, source = oru_messages(total, args.seed)
    if len({_control_id(m) for m in messages}) != total:
        raise RuntimeError("generated control ids repeat")
    obx = sorted(m.count("\rOBX|") for m in messages)
    print(f"{total} ORU^R01 messages from {source}, {obx[0]}-{obx[-1]} OBX lines "
          f"(median {obx[len(obx) // 2]}); detectors {args.detectors}; workers "
          f"{'pinned' if args.pin else 'not pinned'}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    work = tempfile.mkdtemp(prefix="bench-mllp-")
    results = []
    try:
        key_file = os.path.join(work, "deid.key")
        with open(key_file, "wb") as fh:
            fh.write(os.urandom(32).hex().encode())
        proc, port = _start_gateway(os.path.join(work, "out"), key_file, args.workers,
                                    args.detectors, args.pin)
        try:
            _phase(port, messages[:WARM_UP], 1)
            offset = WARM_UP
            for clients in counts:
                batch = messages[offset:offset + args.count]
                offset += args.count
                figures = _phase(port, batch, clients, proc.pid)
                results.append(figures)
                cpu = ""
                if "cpu_ms" in figures:
                    cpu = (f"; gateway CPU {figures['cpu_ms']:.1f} ms/message "
                           f"({figures['main_cpu_ms']:.1f} in its main process; all "
                           f"{os.cpu_count()} CPUs idle: <= "
                           f"{os.cpu_count() * 1000 / figures['cpu_ms']:.0f} msg/s)")
                cpu += f"; clients CPU {figures['clients_cpu_ms']:.1f} ms/message"
                print(f"{clients} client(s): {figures['messages']} messages "
                      f"({figures['refused']} AE) in "
                      f"{figures['seconds']:.2f} s = {figures['rate']:.1f} msg/s, "
                      f"p50 {figures['p50'] * 1000:.1f} ms, "
                      f"p99 {figures['p99'] * 1000:.1f} ms{cpu}", flush=True)
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            proc.terminate()
            status = proc.stderr.read().decode().strip().splitlines()
            proc.wait(60)
        if status:
            print("gateway:", status[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


if __name__ == "__main__":
    run()
