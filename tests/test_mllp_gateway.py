"""The MLLP gateway end to end, driven by python-hl7's MLLPClient (issue 8).

Each test starts a real gateway on a free loopback port (in-process, or as a
subprocess for SIGTERM) and checks what a sender and an honest broker see:
ACKs, files on disk, quarantine, dedup, and bytes equal to the batch run.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import hl7
import pytest
from hl7.client import MLLPClient
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.hl7.writeback import deidentify_hl7_file
from deid_pipeline.keys import load_key
from deid_pipeline.mllp import EngineConfig, GatewayConfig, MllpGateway
from deid_pipeline.synthetic import generate_messages
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

# The detectors every gateway test and the benchmark use. The CRF model is not
# shipped yet; switch to deid_pipeline.tagger.detectors.DEFAULT_DETECTORS when it is.
DETECTORS = ("rules", "dictionary")

SB, EB, CR = b"\x0b", b"\x1c", b"\r"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "deid.key"
    path.write_bytes(b"mllp-gateway-test-key-0123456789abcdef")
    return str(path)


@pytest.fixture(scope="module")
def messages():
    generated = generate_messages(500, 2024, ("oru", "mdm"))
    assert len({m.message_id for m in generated}) == 500
    return generated


def _config(key_file, output, **overrides) -> GatewayConfig:
    key, _how = load_key(key_file)
    engine = EngineConfig(TaggerConfig(detectors=DETECTORS), "surrogate", key)
    options = {"port": 0, "workers": 0, "status_interval": 0}
    options.update(overrides)
    return GatewayConfig(output_dir=str(output), engine=engine, **options)


def _ack_fields(reply: bytes) -> tuple[str, str]:
    """MSA-1 and MSA-2 of an ACK, read with python-hl7 (not our parser)."""
    assert reply.startswith(SB) and reply.endswith(EB + CR), reply[:20]
    message = hl7.parse(reply[1:-2].decode("latin-1"))
    msa = message.segment("MSA")
    return str(msa[1]), str(msa[2])


def _written(output) -> dict[str, list[bytes]]:
    """Every de-identified message on disk, by MSH-10 (a list: resends show)."""
    found: dict[str, list[bytes]] = {}
    directory = os.path.join(output, "hl7")
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as fh:
            data = fh.read()
        for frame in frame_file(data).frames():
            assert frame.error is None, name
            control_id = frame.data.split(b"\r", 1)[0].split(b"|")[9].decode()
            found.setdefault(control_id, []).append(frame.data)
    return found


def _jsonl_count(output, kind: str) -> int:
    directory = os.path.join(output, kind)
    total = 0
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), "rb") as fh:
            total += sum(1 for line in fh if line.strip())
    return total


class _Frames:
    """Whole MLLP frames from a raw socket (several may come back in one read)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending = b""

    def next(self, timeout: float = 10.0) -> bytes:
        deadline = time.monotonic() + timeout
        while EB + CR not in self.pending:
            left = deadline - time.monotonic()
            assert left > 0, "no frame in time"
            select.select([self.sock], [], [], left)
            chunk = self.sock.recv(65536)
            assert chunk, "connection closed"
            self.pending += chunk
        end = self.pending.index(EB + CR) + 2
        frame, self.pending = self.pending[:end], self.pending[end:]
        return frame


def _field(er7: str, address: str) -> str:
    """The value at a python-hl7-style address (``NK1[2].5.6``, ``PID.3[2].1``)."""
    parts = address.split(".")
    match = re.fullmatch(r"([A-Z0-9]{3})(?:\[(\d+)\])?", parts[0])
    name, seg_index = match.group(1), int(match.group(2) or 1)
    segments = [s for s in er7.split("\r") if s.startswith(name + "|")]
    if len(segments) < seg_index:
        return ""
    fields = segments[seg_index - 1].split("|")
    if name == "MSH":
        fields.insert(1, "|")
    match = re.fullmatch(r"(\d+)(?:\[(\d+)\])?", parts[1])
    number, rep = int(match.group(1)), int(match.group(2) or 1)
    if number >= len(fields):
        return ""
    reps = fields[number].split("~")
    value = reps[rep - 1] if rep <= len(reps) else ""
    for level, sep in zip(parts[2:], "^&", strict=False):
        pieces = value.split(sep)
        value = pieces[int(level) - 1] if int(level) <= len(pieces) else ""
    return value


def _hl7apy_parse_all(texts: list[str]) -> int:
    for text in texts:
        hl7apy_parse(text.strip("\r\n"), validation_level=VALIDATION_LEVEL.TOLERANT,
                     find_groups=False)
    return len(texts)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def _contains_word(text: str, value: str) -> bool:
    pattern = r"(?<![^\W_])" + re.escape(value.lower()) + r"(?![^\W_])"
    return re.search(pattern, text) is not None


# ------------------------------------------------------------------ tests


def test_when_500_messages_over_4_connections_then_acked_written_and_equal_to_batch(
        tmp_path, key_file, messages):
    output = tmp_path / "gw"
    gateway = MllpGateway(_config(key_file, output, workers=2),
                          status_stream=io.StringIO())
    host, port = gateway.start()
    try:
        def send(share):
            acks = []
            with MLLPClient(host, port) as client:
                for m in share:
                    acks.append((m.message_id, client.send_message(m.er7)))
            return acks

        with ThreadPoolExecutor(4) as pool:
            results = pool.map(send, [messages[i::4] for i in range(4)])
            acks = [a for share in results for a in share]
    finally:
        gateway.shutdown()

    # 500 ACKs, each naming its own message, AA but for the few the
    # whole-message leak guard holds back (AE): a value the tagger found in
    # one report and missed in another (a phone written with spaces).
    assert len(acks) == 500
    codes = {mid: _ack_fields(reply) for mid, reply in acks}
    assert all(code[1] == mid for mid, code in codes.items())
    refused = [mid for mid, reply in acks if codes[mid][0] != "AA"]
    assert len(refused) <= 500 // 100
    for mid, reply in acks:
        if mid in refused:
            assert codes[mid][0] == "AE"
            assert "not de-identified (leak_guard)" in reply.decode("utf-8")
    accepted = sorted(mid for mid in codes if mid not in refused)
    snapshot = gateway.metrics.snapshot()
    assert snapshot["outcomes"].get("AA") == len(accepted)
    assert snapshot["duplicates"] == 0
    messages = [m for m in messages if m.message_id in set(accepted)]

    # The accepted messages on disk, once each, parsed by hl7apy; files published.
    written = _written(output)
    assert sorted(written) == accepted
    assert all(len(copies) == 1 for copies in written.values())
    assert not [n for d in ("hl7", "identifiers") for n in os.listdir(output / d)
                if n.endswith(".part")]
    assert _jsonl_count(output, "identifiers") > 500
    # hl7apy takes ~45 ms a message: parse in two processes while the batch runs.
    texts = [data.decode("utf-8") for (data,) in written.values()]
    parsers = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    parsed = [parsers.submit(_hl7apy_parse_all, texts[i::2]) for i in range(2)]

    # Same bytes as the batch path with the same key.
    key, _how = load_key(key_file)
    tagger = PhiTagger.from_config(TaggerConfig(detectors=DETECTORS))
    rewriter = Rewriter("surrogate", key)
    surrogate_words: set[str] = set()
    for m in messages:
        batch = deidentify_hl7_file(f"{m.message_id}.hl7", m.er7.encode("utf-8"),
                                    tagger, rewriter)
        assert batch.messages_out == 1
        (frame,) = frame_file(batch.output).frames()
        assert written[m.message_id][0] == frame.data, m.message_id
        for doc in batch.documents:
            for r in doc.replacements:
                surrogate_words |= _words(r.replacement)
        out = frame.data.decode("utf-8")
        for address, _value, _label in m.header_identifiers:
            surrogate_words |= _words(_field(out, address))

    assert sum(f.result() for f in parsed) == len(accepted)
    parsers.shutdown()

    # No header identifier left (a surrogate may spell some other original).
    leaked = []
    for m in messages:
        text = written[m.message_id][0].decode("utf-8").lower()
        for address, value, label in m.header_identifiers:
            if label == "STATE" or _words(value) <= surrogate_words:
                continue
            if _contains_word(text, value):
                leaked.append((m.message_id, address, label))
    assert not leaked, f"{len(leaked)} header values left: {leaked[:5]}"


def test_when_batch_run_on_same_messages_then_gateway_bytes_are_identical(
        tmp_path, key_file, messages):
    from deid_pipeline.pipelines.job import run

    # One message per patient: ``run`` also keeps a person's surrogates off the
    # originals of the person's other messages, which a gateway never sees.
    by_patient = {}
    for m in messages:
        mrn = next(v for f, v, _label in m.header_identifiers if f == "PID.3.1")
        by_patient.setdefault(mrn, m)
    sample = list(by_patient.values())[:20]
    assert len(sample) == 20
    inputs = tmp_path / "in"
    inputs.mkdir()
    for m in sample:
        (inputs / f"{m.message_id}.hl7").write_bytes(m.er7.encode("utf-8"))
    run(["--input", f"{inputs}/*.hl7", "--output", str(tmp_path / "out"),
         "--hl7-output", str(tmp_path / "hl7"), "--key-file", key_file,
         "--detectors", ",".join(DETECTORS)])

    output = tmp_path / "gw"
    with MllpGateway(_config(key_file, output), status_stream=io.StringIO()) as gw:
        with MLLPClient(*gw.address) as client:
            codes = {m.message_id: _ack_fields(client.send_message(m.er7))[0]
                     for m in sample}
    written = _written(output)
    assert set(codes.values()) == {"AA"}
    for m in sample:
        batch = (tmp_path / "hl7" / f"{m.message_id}.hl7").read_bytes()
        assert written[m.message_id] == [batch]


def test_when_frames_are_malformed_then_ar_or_ae_and_connection_stays_usable(
        tmp_path, key_file, messages):
    good = [m for m in messages if m.kind == "oru"][:3]
    msh = good[0].er7.split("\r", 1)[0].replace(good[0].message_id, "BROKEN-1")
    broken_body = msh + "\rPID|1||123^^^H^MR||DOE^JANE\rnot a segment at all\r"
    mrn = next(v for f, v, _label in good[1].header_identifiers if f == "PID.3.1")
    # A field the field table misses, with the MRN inside text (a whole leaf
    # equal to it would get its surrogate): the whole-message guard's hit.
    leaky = good[1].er7 + f"AL1|1||noted under {mrn} by pharmacy\r"
    output = tmp_path / "gw"
    with MllpGateway(_config(key_file, output), status_stream=io.StringIO()) as gw:
        # python-hl7's client: garbage, then a good message on the same connection.
        with MLLPClient(*gw.address) as client:
            assert _ack_fields(client.send_message("hello, not HL7")) == ("AR", "")
            assert _ack_fields(client.send_message(broken_body)) == ("AE", "BROKEN-1")
            reply = client.send_message(leaky)
            assert _ack_fields(reply) == ("AE", good[1].message_id)
            assert mrn not in reply.decode("latin-1")
            assert "not de-identified (leak_guard)" in reply.decode("latin-1")
            hl7apy_parse(reply[1:-2].decode("latin-1"),
                         validation_level=VALIDATION_LEVEL.TOLERANT)
            assert _ack_fields(client.send_message(good[0].er7)) == (
                "AA", good[0].message_id)
        # Raw socket: framing defects.
        with socket.create_connection(gw.address) as sock:
            frames = _Frames(sock)
            sock.sendall(b"junk without a start block" + EB + CR)
            assert _ack_fields(frames.next())[0] == "AR"
            cut = good[2].er7.encode()[:300]
            sock.sendall(SB + cut + SB + good[2].er7.encode() + EB + CR)
            assert _ack_fields(frames.next()) == ("AR", good[2].message_id)
            assert _ack_fields(frames.next()) == ("AA", good[2].message_id)
            # A message split over many small writes is one frame.
            data = SB + good[1].er7.replace(good[1].message_id, "SPLIT-1").encode()
            for i in range(0, len(data), 97):
                sock.sendall(data[i:i + 97])
                time.sleep(0.001)
            sock.sendall(EB + CR)
            assert _ack_fields(frames.next()) == ("AA", "SPLIT-1")
    written = _written(output)
    assert set(written) == {good[0].message_id, good[2].message_id, "SPLIT-1"}
    # Every refused frame is kept in the protected quarantine.
    assert _jsonl_count(output, "quarantine") == 5
    snapshot = gw.metrics.snapshot()
    assert snapshot["outcomes"]["AR"] == 3 and snapshot["outcomes"]["AE"] == 2


def test_when_message_is_resent_then_it_is_written_once_even_after_restart(
        tmp_path, key_file, messages):
    m = messages[7]
    output = tmp_path / "gw"
    with MllpGateway(_config(key_file, output), status_stream=io.StringIO()) as gw:
        for _ in range(2):  # two connections: a sender that reconnected
            with MLLPClient(*gw.address) as client:
                assert _ack_fields(client.send_message(m.er7)) == ("AA", m.message_id)
        with ThreadPoolExecutor(3) as pool:  # and three at the same time
            replies = list(pool.map(
                lambda _: MLLPClient(*gw.address).send_message(m.er7), range(3)))
        assert all(_ack_fields(r) == ("AA", m.message_id) for r in replies)
    assert gw.metrics.snapshot()["duplicates"] == 4
    with MllpGateway(_config(key_file, output), status_stream=io.StringIO()) as gw:
        with MLLPClient(*gw.address) as client:
            assert _ack_fields(client.send_message(m.er7)) == ("AA", m.message_id)
    assert gw.metrics.snapshot()["duplicates"] == 1
    assert len(_written(output)[m.message_id]) == 1


class _Downstream:
    """A minimal MLLP receiver that answers with the code it is told."""

    def __init__(self):
        self.code = "AA"
        self.received: list[bytes] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = self.server.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                sock, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock):
        frames = _Frames(sock)
        with sock:
            while True:
                try:
                    frame = frames.next(timeout=30)
                except (AssertionError, OSError):
                    return
                data = frame[1:-2]
                self.received.append(data)
                control = data.split(b"\r", 1)[0].split(b"|")[9].decode()
                ack = (f"MSH|^~\\&|DOWN|DOWN|DEID|DEID|20240101||ACK|"
                       f"X{len(self.received)}|P|2.5\rMSA|{self.code}|{control}\r")
                sock.sendall(SB + ack.encode() + EB + CR)

    def close(self):
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self.server.close()


def test_when_forwarding_then_aa_only_after_downstream_aa_and_no_second_write(
        tmp_path, key_file, messages):
    m = messages[3]
    downstream = _Downstream()
    output = tmp_path / "gw"
    config = _config(key_file, output, forward=downstream.address,
                     forward_timeout=5.0)
    try:
        with MllpGateway(config, status_stream=io.StringIO()) as gw:
            with MLLPClient(*gw.address) as client:
                downstream.code = "AE"
                assert _ack_fields(client.send_message(m.er7)) == ("AR", m.message_id)
                downstream.code = "AA"
                assert _ack_fields(client.send_message(m.er7)) == ("AA", m.message_id)
                assert _ack_fields(client.send_message(m.er7)) == ("AA", m.message_id)
            downstream.close()  # downstream gone: the sender is told to retry
            with MLLPClient(*gw.address) as client:
                other = messages[4]
                assert _ack_fields(client.send_message(other.er7))[0] == "AR"
    finally:
        downstream.close()
    written = _written(output)
    assert len(written[m.message_id]) == 1
    assert downstream.received == written[m.message_id] * 2
    assert gw.metrics.snapshot()["forward_failures"] == 2


def test_when_status_interval_passes_then_a_counts_only_line_is_printed(
        tmp_path, key_file, messages):
    stream = io.StringIO()
    with MllpGateway(_config(key_file, tmp_path / "gw", status_interval=0.3),
                     status_stream=stream) as gw:
        with MLLPClient(*gw.address) as client:
            for m in messages[:5]:
                client.send_message(m.er7)
            client.send_message("not hl7")
        time.sleep(0.5)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2
    assert re.search(r"msg/s, p50 [\d.]+ ms, p99 [\d.]+ ms", lines[0])
    assert lines[-1].startswith("mllp: stopped after")
    assert "AA 5 (duplicates 0), AE 0, AR 1" in lines[-1]
    assert "quarantined 1 (read 1)" in lines[-1]
    text = stream.getvalue().lower()
    for m in messages[:5]:
        assert not [v for _f, v, label in m.header_identifiers
                    if label in ("PATIENT", "MEDICALRECORD", "SSN")
                    and v.lower() in text]


def test_when_sigterm_while_clients_send_then_every_acked_message_is_on_disk(
        tmp_path, key_file, messages):
    output = tmp_path / "gw"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get(
        "PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "deid_pipeline.mllp.cli", "--listen", "127.0.0.1:0",
         "--output", str(output), "--key-file", key_file, "--detectors",
         ",".join(DETECTORS), "--workers", "1", "--status-interval", "0.5"],
        stderr=subprocess.PIPE, env=env)
    try:
        port = None
        deadline = time.monotonic() + 60
        lines = []
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline().decode()
            assert line, "gateway exited: " + "".join(lines)
            lines.append(line)
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            port = int(found.group(1)) if found else None
        acked: list[str] = []
        lock = threading.Lock()
        started = threading.Event()

        def client(share):
            try:
                with MLLPClient("127.0.0.1", port) as c:
                    for m in share:
                        reply = c.send_message(m.er7)
                        if not reply:
                            return
                        if _ack_fields(reply) == ("AA", m.message_id):
                            with lock:
                                acked.append(m.message_id)
                                if len(acked) >= 40:
                                    started.set()
            except OSError:
                return

        threads = [threading.Thread(target=client, args=(messages[i::4],))
                   for i in range(4)]
        for t in threads:
            t.start()
        assert started.wait(60)
        proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(60)
        rest = proc.stderr.read().decode()
        assert proc.wait(60) == 0, rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(acked) < len(messages), "the gateway stopped after every message"
    written = _written(output)
    assert not [mid for mid in acked if mid not in written]
    assert all(len(copies) == 1 for copies in written.values())
    assert "mllp: stopped after" in rest
    assert not [n for n in os.listdir(output / "hl7") if n.endswith(".part")]
    # stderr carries counts, never message content.
    stderr = ("".join(lines) + rest).lower()
    for m in messages[:len(acked)]:
        assert not [v for _f, v, label in m.header_identifiers
                    if label in ("PATIENT", "MEDICALRECORD", "SSN")
                    and v.lower() in stderr]
