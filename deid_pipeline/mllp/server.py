r"""The MLLP gateway: live HL7 in, de-identified HL7 out, one ACK per message.

Per frame (0x0B ... 0x1C 0x0D) received on a connection:

1. read its MSH; if there is none usable, quarantine the frame and answer
   ``AR`` (nothing to acknowledge by id);
2. if the same message (sender + MSH-10) was already written, answer ``AA``
   again without writing it (a resend after a lost ACK);
3. de-identify it (:mod:`deid_pipeline.mllp.worker`); if that fails,
   quarantine it and answer ``AE`` with a PHI-free reason;
4. write the message and its identifier rows and wait until they are
   fsynced (:mod:`deid_pipeline.mllp.store`);
5. with ``forward``, send it downstream and wait for an ``AA`` for its
   MSH-10 (if none comes, answer ``AR`` so the sender retries; the output is
   not written twice);
6. record it in the dedup index and answer ``AA`` with MSA-2 = MSH-10.

A connection is served by its own thread, one frame at a time (MLLP
senders wait for each ACK), so a connection keeps its order; connections
run side by side and share the de-identification workers and the fsyncs.
A bad frame is answered and the connection goes on.

Stopping (SIGTERM): the listening socket closes, each connection finishes
the message it is working on, answers it and closes; frames not fully
received are dropped unanswered, so their senders resend them; then the
output files are synced and published. No message is ACKed before its
output is on disk, so none is ACKed and lost.

Who may connect (:mod:`deid_pipeline.mllp.security`): a peer outside
``allow_from`` or beyond ``max_connections`` is closed by the accept loop
before a byte is read; with ``tls`` the connection's thread completes the
handshake (client certificate required when a client CA is set) within the
handshake deadline before reading a frame. ``idle_timeout`` is a per-frame
deadline, not a per-read one: from the previous ACK (or the handshake) a
whole frame must arrive within it, however many bytes trickle in, so a
slow-loris sender cannot hold a connection open. Refusals and drops are
logged by address and reason and counted in the status line.

Nothing here logs message content: logs and the status line carry counts,
stages and peer addresses only.
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TextIO

from deid_pipeline.mllp.ack import (
    ACCEPT,
    ERROR,
    REJECT,
    AckError,
    MessageHeader,
    build_ack,
    read_ack,
    read_header,
)
from deid_pipeline.mllp.dedup import DONE, WRITTEN, DedupIndex
from deid_pipeline.mllp.metrics import GatewayMetrics
from deid_pipeline.mllp.security import (
    HandshakeError,
    Network,
    TlsFiles,
    check_listen,
    describe_tls_error,
    refusal,
    tls_accept,
)
from deid_pipeline.mllp.store import Commit, Store, StoreError, mllp_frame
from deid_pipeline.mllp.worker import (
    ORIGIN,
    Deidentifier,
    EngineConfig,
    WorkerError,
    quarantine_line,
)
from deid_pipeline.model import QuarantineRecord

__all__ = ["Frame", "FrameReader", "FrameTimeoutError", "GatewayConfig", "MllpGateway"]

logger = logging.getLogger(__name__)

SB, EB, CR = b"\x0b", b"\x1c", b"\r"
_POLL = 0.2
_WHITESPACE = b" \t\r\n"
# The longest a TLS handshake may take (a real one takes milliseconds): also
# how long a peer stalling one can hold up a SIGTERM drain.
HANDSHAKE_SECONDS = 30.0


@dataclass(frozen=True)
class GatewayConfig:
    """Options of one gateway (the ``deid-pipeline mllp`` flags)."""

    output_dir: str
    engine: EngineConfig
    host: str = "127.0.0.1"
    port: int = 2575
    forward: tuple[str, int] | None = None
    workers: int = 0
    pin_workers: bool = True
    roll_bytes: int = 64 << 20
    roll_messages: int = 10_000
    roll_seconds: float = 3600.0
    status_interval: float = 30.0
    dedup_days: float = 7.0
    max_frame_bytes: int = 16 << 20
    forward_timeout: float = 30.0
    drain_seconds: float = 60.0
    # Who may connect (see module docstring and mllp.security).
    tls: TlsFiles | None = None
    allow_from: tuple[Network, ...] = ()  # empty: any address
    max_connections: int = 64
    idle_timeout: float = 300.0  # per frame; 0: no deadline
    insecure_plain_tcp: bool = False

    @property
    def handshake_timeout(self) -> float:
        """Seconds a TLS handshake may take: the idle timeout, at most 30."""
        return min(self.idle_timeout or HANDSHAKE_SECONDS, HANDSHAKE_SECONDS)


# ------------------------------------------------------------------- frames


@dataclass(frozen=True, slots=True)
class Frame:
    """One unit to answer: ``kind`` is ``message`` or a framing defect.

    Defects: ``junk`` (bytes ended by 0x1C without a start block),
    ``unterminated`` (a start block followed by another start block),
    ``oversize`` (more than the frame limit; its bytes are not kept).
    """

    kind: str
    data: bytes = b""


class FrameTimeoutError(TimeoutError):
    """No whole frame within the reader's deadline (raised by :class:`FrameReader`)."""


class FrameReader:
    """Cuts MLLP frames out of a socket's byte stream.

    Bytes between frames that are only whitespace are ignored; other bytes
    before a start block without an end block are dropped (nobody framed
    them, so nobody waits for an answer). ``stopping`` is polled while
    waiting for data: once it is true and no frame is complete, the reader
    ends, dropping any partial frame unanswered.

    ``timeout`` is a deadline for each whole frame, counted from the call
    to :meth:`next`: bytes that arrive do not extend it. The socket may be
    a TLS socket in timeout mode: decrypted bytes it holds are read without
    waiting, and a read that times out on a TLS record not yet complete is
    retried until the deadline.
    """

    def __init__(self, sock: socket.socket, max_bytes: int,
                 stopping=lambda: False, timeout: float | None = None) -> None:
        self.sock = sock
        self.max_bytes = max_bytes
        self.stopping = stopping
        self.timeout = timeout
        self.buffer = bytearray()
        self.discarding = False

    def next(self) -> Frame | None:
        """The next frame, or None at end of stream or when stopping.

        Raises :class:`FrameTimeoutError` when ``timeout`` passes without a whole
        frame.
        """
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        pending = getattr(self.sock, "pending", None)  # TLS: decrypted, unread
        while True:
            if self.stopping():
                return None
            frame = self._cut()
            if frame is not None:
                return frame
            wait = _POLL
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    raise FrameTimeoutError("no complete MLLP frame in time")
            if not (pending and pending()):
                readable, _, _ = select.select([self.sock], [], [], wait)
                if not readable:
                    continue
            try:
                chunk = self.sock.recv(1 << 16)
            except (TimeoutError, ssl.SSLWantReadError):
                continue  # a TLS record not complete yet
            if not chunk:
                return None
            self.buffer += chunk

    def _drop(self, end: int) -> None:
        """Remove ``buffer[:end]`` and a CR right after it."""
        if self.buffer[end:end + 1] == CR:
            end += 1
        del self.buffer[:end]

    def _cut(self) -> Frame | None:
        buf = self.buffer
        while True:
            end = buf.find(EB)
            if self.discarding:
                if end < 0:
                    buf.clear()
                    return None
                self._drop(end + 1)
                self.discarding = False
                return Frame("oversize")
            start = buf.find(SB)
            if end >= 0 and (start < 0 or end < start):
                junk = bytes(buf[:end])
                self._drop(end + 1)
                if junk.strip(_WHITESPACE):
                    return Frame("junk", junk)
                continue
            if start < 0:
                if len(buf) > self.max_bytes:
                    buf.clear()
                return None
            if start > 0:
                del buf[:start]
            end = buf.find(EB, 1)
            restart = buf.find(SB, 1)
            if restart >= 0 and (end < 0 or restart < end):
                data = bytes(buf[1:restart])
                del buf[:restart]
                return Frame("unterminated", data)
            if end >= 0:
                data = bytes(buf[1:end])
                self._drop(end + 1)
                if len(data) > self.max_bytes:
                    return Frame("oversize")
                return Frame("message", data)
            if len(buf) > self.max_bytes:
                buf.clear()
                self.discarding = True
            return None


# --------------------------------------------------------------- forwarding


class Forwarder:
    """One connection's link to the downstream MLLP endpoint (opened lazily).

    With ``tls`` (a client context, :func:`~deid_pipeline.mllp.security.client_context`)
    the link is TLS, the server checked against ``server_name`` (default:
    the address's host).
    """

    def __init__(self, address: tuple[str, int], timeout: float,
                 max_bytes: int, tls: ssl.SSLContext | None = None,
                 server_name: str | None = None) -> None:
        self.address = address
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.tls = tls
        self.server_name = server_name or address[0]
        self.sock: socket.socket | None = None
        self.reader: FrameReader | None = None

    def send(self, data: bytes) -> str | None:
        """Send one message; None when downstream answered AA for its MSH-10.

        Otherwise returns a PHI-free reason and drops the connection (the
        next message opens a new one).
        """
        control_id = read_header(data).control_id
        try:
            if self.sock is None:
                sock = socket.create_connection(self.address, self.timeout)
                if self.tls is not None:
                    sock = self.tls.wrap_socket(sock, server_hostname=self.server_name)
                self.sock = sock
                self.reader = FrameReader(self.sock, self.max_bytes,
                                          timeout=self.timeout)
            self.sock.sendall(mllp_frame(data))
            while True:
                frame = self.reader.next()
                if frame is None:
                    raise ConnectionError("downstream closed the connection")
                if frame.kind == "message":
                    break
            code, acked = read_ack(frame.data)
        except (OSError, AckError) as exc:
            self.close()
            reason = f"TLS: {describe_tls_error(exc)}" \
                if isinstance(exc, ssl.SSLError) else type(exc).__name__
            return f"downstream did not acknowledge ({reason})"
        if acked != control_id:
            self.close()
            return "downstream acknowledged another message"
        if code != ACCEPT:
            return f"downstream answered {code or 'nothing'}"
        return None

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None
                self.reader = None


# ------------------------------------------------------------------ gateway


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_DEFECTS = {
    "junk": "bytes ended by an MLLP end block without a start block",
    "unterminated": "MLLP block not terminated before the next one",
    "oversize": "frame larger than the gateway accepts",
}


class MllpGateway:
    """The server: accept loop, one thread per connection, committer, status."""

    def __init__(self, config: GatewayConfig,
                 status_stream: TextIO | None = None) -> None:
        self.config = config
        self.metrics = GatewayMetrics()
        self.store = Store(config.output_dir, config.roll_bytes, config.roll_messages,
                           config.roll_seconds, mode=config.engine.mode)
        self.dedup = DedupIndex(self.store.index_path, config.dedup_days * 86400)
        self.deidentifier = Deidentifier(config.engine, config.workers,
                                         config.pin_workers)
        self._status = status_stream if status_stream is not None else sys.stderr
        self._status_lock = threading.Lock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._listener: socket.socket | None = None
        self._threads: set[threading.Thread] = set()
        self._threads_lock = threading.Lock()
        self._accept_thread: threading.Thread | None = None
        self._status_thread: threading.Thread | None = None
        self._ordinal = itertools.count(1)
        self._tls: ssl.SSLContext | None = None
        self.address: tuple[str, int] = (config.host, config.port)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> tuple[str, int]:
        """Open the output, start the workers, listen; returns the bound address.

        Raises before anything is accepted: ValueError (plain TCP beyond
        loopback not asked for, a TLS file that cannot be loaded), OSError
        (address in use, output directory held by another gateway),
        WorkerError (no tagger).
        """
        config = self.config
        check_listen(config.host, config.tls is not None, config.insecure_plain_tcp)
        if config.tls is not None:
            self._tls = config.tls.server_context()
        self.store.open()
        index_fd = None
        try:
            index_fd = self.dedup.load()
            self.deidentifier.start()
            family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
            listener = socket.create_server((self.config.host, self.config.port),
                                            family=family, backlog=64)
        except BaseException:
            self.deidentifier.close()
            self.store.close()
            if index_fd is not None:
                os.close(index_fd)
            raise
        self.store.start(index_fd)
        self._listener = listener
        self.address = listener.getsockname()[:2]
        self._accept_thread = threading.Thread(target=self._accept_loop,
                                               name="mllp-accept", daemon=True)
        self._accept_thread.start()
        if self.config.status_interval > 0:
            self._status_thread = threading.Thread(target=self._status_loop,
                                                   name="mllp-status", daemon=True)
            self._status_thread.start()
        return self.address

    def request_stop(self) -> None:
        """Ask the gateway to stop; :meth:`shutdown` then drains and closes."""
        self._stopping.set()

    def shutdown(self) -> None:
        """Stop accepting, drain in-flight messages, sync and publish the output."""
        if self._stopped.is_set():
            return
        self._stopping.set()
        if self._accept_thread is not None:
            self._accept_thread.join()
        deadline = time.monotonic() + self.config.drain_seconds
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        unfinished = sum(t.is_alive() for t in threads)
        if unfinished:
            logger.warning("%d connection(s) still busy after %.0fs; their "
                           "messages are not acknowledged", unfinished,
                           self.config.drain_seconds)
        self.store.close()
        self.deidentifier.close()
        self._stopped.set()
        if self._status_thread is not None:
            self._status_thread.join()
        self._write_status(self.metrics.status_line(final=True))

    def __enter__(self) -> MllpGateway:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -------------------------------------------------------------- threads

    def _accept_loop(self) -> None:
        listener = self._listener
        try:
            while not self._stopping.is_set():
                readable, _, _ = select.select([listener], [], [], _POLL)
                if not readable:
                    continue
                try:
                    sock, peer = listener.accept()
                except OSError:
                    continue
                # Only this loop adds threads: the count cannot grow meanwhile.
                with self._threads_lock:
                    busy = len(self._threads)
                refused = refusal(peer[0], self.config.allow_from, busy,
                                  self.config.max_connections)
                if refused is not None:
                    self._refused(peer, *refused)  # counted before the peer sees it
                    sock.close()
                    continue
                thread = threading.Thread(target=self._serve, args=(sock, peer),
                                          name=f"mllp-{peer[0]}:{peer[1]}",
                                          daemon=True)
                with self._threads_lock:
                    self._threads.add(thread)
                thread.start()
        finally:
            listener.close()

    def _refused(self, peer: tuple, counter: str, reason: str) -> None:
        self.metrics.refuse(counter)
        logger.warning("refused %s:%s: %s", peer[0], peer[1], reason)

    def _reply(self, sock: socket.socket, ack: bytes) -> None:
        """Send an ACK; a peer that does not take it within the timeout is dropped."""
        sock.settimeout(self.config.idle_timeout or None)
        try:
            sock.sendall(mllp_frame(ack))
        finally:
            sock.settimeout(_POLL)

    def _status_loop(self) -> None:
        while not self._stopping.wait(self.config.status_interval):
            self._write_status(self.metrics.status_line())

    def _write_status(self, line: str) -> None:
        with self._status_lock:
            try:
                self._status.write(line + "\n")
                self._status.flush()
            except (OSError, ValueError):
                pass

    def _serve(self, sock: socket.socket, peer: tuple) -> None:
        """Serve one connection: TLS handshake if configured, then frame by frame.

        The handshake runs here, in the connection's thread, so a peer that
        stalls it holds one connection slot until ``handshake_timeout``,
        never the accept loop.
        """
        self.metrics.connection(True)
        forwarder = None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                sock = tls_accept(self._tls, sock, self.config.handshake_timeout,
                                  f"{peer[0]}:{peer[1]}")
            # Reads wait in select, at most _POLL in a TLS record's recv.
            sock.settimeout(_POLL)
            reader = FrameReader(sock, self.config.max_frame_bytes,
                                 self._stopping.is_set,
                                 timeout=self.config.idle_timeout or None)
            if self.config.forward is not None:
                forwarder = Forwarder(self.config.forward, self.config.forward_timeout,
                                      self.config.max_frame_bytes)
            while True:
                frame = reader.next()
                if frame is None:
                    break
                started = time.perf_counter()
                code, ack, duplicate = self._answer(frame, forwarder)
                self._reply(sock, ack)
                self.metrics.record(code, time.perf_counter() - started, duplicate)
        except HandshakeError as exc:
            if exc.attempted:
                self._refused(peer, "handshake", str(exc))
            else:
                logger.info("%s:%s %s", peer[0], peer[1], exc)
        except FrameTimeoutError:
            self.metrics.timed_out()
            logger.warning("dropped %s:%s: no complete frame within %gs "
                           "(--idle-timeout)", peer[0], peer[1],
                           self.config.idle_timeout)
        except OSError as exc:
            logger.info("connection from %s:%s ended: %s", peer[0], peer[1],
                        type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - the text could hold PHI: type only
            logger.error("connection from %s:%s closed after an unexpected %s",
                         peer[0], peer[1], type(exc).__name__)
        finally:
            if forwarder is not None:
                forwarder.close()
            sock.close()
            self.metrics.connection(False)
            with self._threads_lock:
                self._threads.discard(threading.current_thread())

    # ------------------------------------------------------------- messages

    def _answer(self, frame: Frame, forwarder: Forwarder | None
                ) -> tuple[str, bytes, bool]:
        """Handle one frame: ``(ACK code, ACK bytes, was a duplicate)``."""
        ordinal = next(self._ordinal)
        received_at = _utc_now()
        header: MessageHeader | None = None
        reason = ""
        try:
            header = read_header(frame.data)
        except AckError as exc:
            reason = str(exc)
        if frame.kind != "message":
            reason = _DEFECTS[frame.kind]
        if frame.kind != "message" or header is None:
            self._refuse(frame, ordinal, received_at, header, reason)
            return REJECT, build_ack(header, REJECT, reason), False
        key = self.dedup.key(header)
        state = self.dedup.claim(key)
        recorded = None
        try:
            if state == DONE or (state == WRITTEN and forwarder is None):
                return ACCEPT, build_ack(header, ACCEPT), True
            outcome = self.deidentifier.run(frame.data, ordinal, received_at,
                                            header.control_id)
            if not outcome.ok:
                self.store.submit(Commit(quarantine=outcome.quarantine)).result()
                self.metrics.quarantined(outcome.stage)
                return ERROR, build_ack(header, ERROR, outcome.reason), False
            if state is None:
                state = DONE if forwarder is None else WRITTEN
                self.store.submit(Commit(
                    hl7=mllp_frame(outcome.data), identifiers=outcome.identifiers,
                    index=self.dedup.line(key, state))).result()
                recorded = state
            if state == WRITTEN:
                failure = forwarder.send(outcome.data)
                if failure is not None:
                    self.metrics.forward_failed()
                    ack = build_ack(header, REJECT, failure + "; resend")
                    return REJECT, ack, False
                self.store.submit(Commit(index=self.dedup.line(key, DONE))).result()
                recorded = DONE
            return ACCEPT, build_ack(header, ACCEPT), False
        except StoreError:
            self.metrics.store_failed()
            return REJECT, build_ack(header, REJECT, "output could not be written; "
                                     "resend later"), False
        except WorkerError as exc:
            return REJECT, build_ack(header, REJECT, f"{exc}; resend"), False
        finally:
            self.dedup.release(key, recorded)

    def _refuse(self, frame: Frame, ordinal: int, received_at: str,
                header: MessageHeader | None, reason: str) -> None:
        """Keep a frame that is answered AR in the quarantine (best effort)."""
        record = QuarantineRecord(
            doc_id=f"{ORIGIN}#{ordinal}", stage="read", error_type="FramingError",
            error_message=reason, raw=frame.data, origin=ORIGIN, source="hl7")
        control_id = header.control_id if header is not None else ""
        try:
            self.store.submit(Commit(
                quarantine=quarantine_line(record, received_at, control_id))).result()
        except StoreError:
            self.metrics.store_failed()
            return
        self.metrics.quarantined("read")
