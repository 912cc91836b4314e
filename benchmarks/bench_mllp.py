"""Benchmark: the MLLP gateway's sustained throughput and ACK latency, plain and TLS.

Starts two ``deid-pipeline mllp`` processes on free loopback ports, each with
a throw-away key and output directory (so the figures include the fsyncs
before each ACK): one on plain TCP, one on TLS with client certificates
required (``--tls-cert/--tls-key/--tls-client-ca``, certificates made in the
work directory by ``deid_pipeline.mllp.certs``). Then sends the same
generated ORU^R01 reports with 10-40 OBX lines to each: first from one
client, then from several concurrent clients, each on its own connection
and waiting for each ACK as a real sender does. The plain and TLS runs take
turns (in ``--rounds`` rounds, the order swapped each round) so that a
shared machine's load weighs on both alike. Every message is new to each
gateway (no dedup hits), and every ACK is checked to be ``AA`` (written) or
``AE`` (quarantined by the leak guard, counted) for its own MSH-10.

    python -m deid_pipeline.benchmarks.bench_mllp --count 400 --clients 1,4

Prints per client count and transport: messages, seconds, messages/s and
client-side p50/p99 latency (send -> ACK, a TLS connection's handshake
included), the gateway's CPU time per message (its process and workers,
with psutil: what the rate would be on idle CPUs when the machine is
shared), then TLS's rate as a share of plain TCP's (the issue's target:
within 20%), and each gateway's own status line. Figures only, no message
content. Needs psutil and cryptography: the ``test`` extra.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

from deid_pipeline.benchmarks.bench_hl7 import oru_messages
from deid_pipeline.mllp.ack import read_ack
from deid_pipeline.mllp.certs import CertificateAuthority
from deid_pipeline.mllp.security import client_context
from deid_pipeline.mllp.server import FrameReader
from deid_pipeline.mllp.store import mllp_frame
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
                   tls: list[str] | None = None,
                   ) -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, "-m", "deid_pipeline.mllp.cli", "--listen", "127.0.0.1:0",
           "--output", output, "--key-file", key_file, "--detectors",
           detectors, "--status-interval", "0", *(tls or [])]
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


def _connect(port: int, tls: ssl.SSLContext | None) -> socket.socket:
    """A sender's connection, TLS when ``tls`` (handshake done here)."""
    sock = socket.create_connection(("127.0.0.1", port), 60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return tls.wrap_socket(sock, server_hostname="127.0.0.1") if tls else sock


def _send(port: int, messages: list[str], latencies: list[float],
          failures: list[str], refused: list[str],
          tls: ssl.SSLContext | None = None) -> None:
    """Send each message and wait for its ACK; note AE (quarantined) and failures.

    The same client code for plain TCP and TLS, so the two differ by the
    transport only. The first message's latency includes the connection
    (and TLS handshake). An AE is a message the gateway de-identified no
    further than quarantine (the whole-message leak guard's hit): work done
    and acknowledged, so it counts in the rate; anything else (AR, no ACK,
    another id) is a failure.
    """
    started = time.perf_counter()
    with _connect(port, tls) as sock:
        reader = FrameReader(sock, 1 << 20, timeout=120)
        for er7 in messages:
            sock.sendall(mllp_frame(er7.encode("utf-8")))
            reply = reader.next()
            latencies.append(time.perf_counter() - started)
            control = _control_id(er7)
            code, acked = read_ack(reply.data) if reply and reply.kind == "message" \
                else ("", "")
            if (code, acked) == ("AE", control):
                refused.append(control)
            elif (code, acked) != ("AA", control):
                failures.append(control)
            started = time.perf_counter()


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


class _Tally:
    """What the runs of one transport and client count added up to."""

    def __init__(self, clients: int) -> None:
        self.clients = clients
        self.latencies: list[float] = []
        self.refused: list[str] = []
        self.seconds = 0.0
        self.clients_cpu = 0.0
        self.cpu: list[float] | None = [0.0, 0.0]

    def figures(self) -> dict[str, float]:
        count = len(self.latencies)
        figures = {"clients": self.clients, "messages": count,
                   "refused": len(self.refused), "seconds": self.seconds,
                   "rate": count / self.seconds,
                   "p50": _percentile(self.latencies, 0.50),
                   "p99": _percentile(self.latencies, 0.99)}
        per_message = 1000 / count
        figures["clients_cpu_ms"] = self.clients_cpu * per_message
        if self.cpu is not None:
            figures["cpu_ms"] = sum(self.cpu) * per_message
            figures["main_cpu_ms"] = self.cpu[0] * per_message
        return figures


def _phase(port: int, messages: list[str], tally: _Tally, pid: int | None = None,
           tls: ssl.SSLContext | None = None) -> None:
    """Send ``messages`` from ``tally.clients`` concurrent clients; add to ``tally``."""
    cpu_before = _cpu_seconds(pid) if pid else None
    clients_cpu = time.process_time()
    latencies: list[float] = []
    failures: list[str] = []
    clients = tally.clients
    threads = [threading.Thread(target=_send, args=(port, messages[i::clients],
                                                    latencies, failures,
                                                    tally.refused, tls))
               for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tally.seconds += time.perf_counter() - started
    tally.clients_cpu += time.process_time() - clients_cpu
    if failures or len(latencies) != len(messages):
        raise RuntimeError(f"{len(failures)} message(s) not acknowledged AA or AE")
    tally.latencies += latencies
    if cpu_before is None or tally.cpu is None:
        tally.cpu = None
        return
    for i, (after, before) in enumerate(zip(_cpu_seconds(pid), cpu_before,
                                            strict=True)):
        tally.cpu[i] += after - before


def _line(name: str, figures: dict[str, float]) -> str:
    cpu = ""
    if "cpu_ms" in figures:
        cpu = (f"; gateway CPU {figures['cpu_ms']:.1f} ms/message "
               f"({figures['main_cpu_ms']:.1f} in its main process; all "
               f"{os.cpu_count()} CPUs idle: <= "
               f"{os.cpu_count() * 1000 / figures['cpu_ms']:.0f} msg/s)")
    cpu += f"; clients CPU {figures['clients_cpu_ms']:.1f} ms/message"
    return (f"{figures['clients']} client(s), {name}: {figures['messages']} "
            f"messages ({figures['refused']} AE) in {figures['seconds']:.2f} s = "
            f"{figures['rate']:.1f} msg/s, p50 {figures['p50'] * 1000:.1f} ms, "
            f"p99 {figures['p99'] * 1000:.1f} ms{cpu}")


def _make_certificates(work: str) -> tuple[list[str], ssl.SSLContext]:
    """The TLS gateway's options and the senders' context (client certificates)."""
    authority = CertificateAuthority(os.path.join(work, "tls"), "bench")
    server = authority.issue("gateway", server=True)
    client = authority.issue("sender")
    options = ["--tls-cert", server.cert, "--tls-key", server.key,
               "--tls-client-ca", authority.cert]
    return options, client_context(authority.cert, client.cert, client.key)


def run(argv: list[str] | None = None) -> list[dict[str, float]]:
    """Run the benchmark; returns the figures, plain then TLS per client count.

    Each dict has ``transport`` (``plain`` or ``tls``); a TLS dict also has
    ``ratio``, its rate over plain TCP's.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=400,
                        help="messages per client count (default: %(default)s)")
    parser.add_argument("--clients", default="1,4",
                        help="comma-separated concurrent clients (default: "
                        "%(default)s)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="plain and TLS take turns this many times per client "
                        "count, each on a share of the messages (default: "
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
          f"(median {obx[len(obx) // 2]}), each sent to a plain TCP and a TLS "
          f"(client certificates) gateway; detectors {args.detectors}; workers "
          f"{'pinned' if args.pin else 'not pinned'}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    work = tempfile.mkdtemp(prefix="bench-mllp-")
    results: list[dict[str, float]] = []
    gateways: dict[str, tuple[subprocess.Popen, int]] = {}
    try:
        key_file = os.path.join(work, "deid.key")
        with open(key_file, "wb") as fh:
            fh.write(os.urandom(32).hex().encode())
        tls_options, context = _make_certificates(work)
        contexts = {"plain": None, "tls": context}
        for name, options in (("plain", []), ("tls", tls_options)):
            gateways[name] = _start_gateway(os.path.join(work, f"out-{name}"),
                                            key_file, args.workers, args.detectors,
                                            args.pin, options)
        for name, (_proc, port) in gateways.items():
            _phase(port, messages[:WARM_UP], _Tally(1), tls=contexts[name])
        offset = WARM_UP
        for clients in counts:
            batch = messages[offset:offset + args.count]
            offset += args.count
            tallies = {name: _Tally(clients) for name in gateways}
            rounds = max(1, args.rounds)
            for r in range(rounds):
                order = ["plain", "tls"] if r % 2 == 0 else ["tls", "plain"]
                for name in order:
                    proc, port = gateways[name]
                    _phase(port, batch[r::rounds], tallies[name], proc.pid,
                           contexts[name])
            plain, tls = (tallies[n].figures() for n in ("plain", "tls"))
            tls["ratio"] = tls["rate"] / plain["rate"]
            for name, figures in (("plain TCP", plain), ("TLS", tls)):
                figures["transport"] = "tls" if name == "TLS" else "plain"
                results.append(figures)
                print(_line(name, figures), flush=True)
            print(f"{clients} client(s): TLS at {tls['ratio']:.0%} of plain TCP's "
                  f"rate ({tls['ratio'] - 1:+.1%}; target: within 20%)", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        for name, (proc, _port) in gateways.items():
            proc.terminate()
            status = proc.stderr.read().decode().strip().splitlines()
            proc.wait(60)
            if status:
                print(f"gateway ({name}):", status[-1])
        shutil.rmtree(work, ignore_errors=True)
    return results


if __name__ == "__main__":
    run()
