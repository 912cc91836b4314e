"""Which messages are already written: a resend after a lost ACK is not written twice.

A message is known by its sender (MSH-3, MSH-4) and control id (MSH-10),
which HL7 makes unique per sending system. The index keeps a salted hash of
them, never the values (MSH-4 names a facility), in an append-only file
``state/seen.log``: one line ``<key> <state> <unix time>`` per change, fsynced
by the store's committer after the output it stands for. The salt is made at
the first start and kept in ``state/dedup.salt``, so the index does not
depend on the de-identification key and survives a key change.

States: ``W`` written to the output but not yet acknowledged downstream
(``--forward``), ``A`` done. A resend of a done message is answered ``AA``
without being written; a resend of a written one is forwarded again but
not written again. Entries older than the retention window are dropped at
start (the file is compacted then) and while running.

Two connections sending the same message at once (a sender that gave up
on one connection and resends on another) are serialised: the second waits
for the first and then sees its outcome.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict

from deid_pipeline.mllp.ack import MessageHeader

__all__ = ["DONE", "WRITTEN", "DedupIndex"]

DONE = "A"
WRITTEN = "W"
SALT_FILE = "dedup.salt"
_RANK = {WRITTEN: 1, DONE: 2}


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DedupIndex:
    """The seen-message index: loaded at start, updated as commits land."""

    def __init__(self, path: str, retention_seconds: float,
                 clock=time.time) -> None:
        self.path = path
        self.retention = retention_seconds
        self._clock = clock
        self._salt = b""
        self._seen: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._inflight: set[str] = set()
        self._cond = threading.Condition()

    def load(self) -> int:
        """Read the salt and the index, compact the file, open it for appending.

        Returns the append file descriptor (the store writes through it).
        """
        directory = os.path.dirname(self.path)
        self._salt = self._load_salt(os.path.join(directory, SALT_FILE))
        horizon = self._clock() - self.retention
        entries: dict[str, tuple[str, float]] = {}
        try:
            with open(self.path, "rb") as fh:
                for raw in fh:
                    parts = raw.split()
                    if len(parts) != 3 or not raw.endswith(b"\n"):
                        continue  # a line cut short by a crash
                    key, state = parts[0].decode("ascii", "replace"), parts[1].decode(
                        "ascii", "replace")
                    try:
                        when = float(parts[2])
                    except ValueError:
                        continue
                    if state not in _RANK or when < horizon:
                        continue
                    old = entries.get(key)
                    if old is None or _RANK[state] >= _RANK[old[0]]:
                        entries[key] = (state, when)
        except FileNotFoundError:
            pass
        self._seen = OrderedDict(sorted(entries.items(), key=lambda kv: kv[1][1]))
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(b"".join(self._line(k, s, t) for k, (s, t) in self._seen.items()))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)
        _fsync_dir(directory)
        return os.open(self.path, os.O_WRONLY | os.O_APPEND)

    @staticmethod
    def _load_salt(path: str) -> bytes:
        try:
            with open(path, "rb") as fh:
                salt = fh.read()
            if len(salt) >= 16:
                return salt
        except FileNotFoundError:
            pass
        salt = secrets.token_bytes(32)
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, salt)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(os.path.dirname(path))
        return salt

    def __len__(self) -> int:
        return len(self._seen)

    def key(self, header: MessageHeader) -> str:
        """The salted hash naming a message: sender and control id."""
        parts = (header.raw(3), header.raw(4), header.control_id)
        message = "\x1f".join(parts).encode("utf-8", "surrogateescape")
        return hmac.new(self._salt, message, hashlib.sha256).hexdigest()[:32]

    def claim(self, key: str) -> str | None:
        """Take ``key`` for this thread; returns its state (None: never written).

        Blocks while another connection is handling the same message. Every
        claim must be followed by :meth:`release`.
        """
        with self._cond:
            while key in self._inflight:
                self._cond.wait()
            self._inflight.add(key)
            entry = self._seen.get(key)
            return entry[0] if entry else None

    def release(self, key: str, state: str | None = None) -> None:
        """Give ``key`` back, recording ``state`` once its index line is durable."""
        with self._cond:
            if state is not None:
                now = self._clock()
                self._seen[key] = (state, now)
                self._seen.move_to_end(key)
                horizon = now - self.retention
                while self._seen:
                    oldest = next(iter(self._seen.values()))
                    if oldest[1] >= horizon:
                        break
                    self._seen.popitem(last=False)
            self._inflight.discard(key)
            self._cond.notify_all()

    def line(self, key: str, state: str) -> bytes:
        """The index line recording ``state`` for ``key`` (written by the store)."""
        return self._line(key, state, self._clock())

    @staticmethod
    def _line(key: str, state: str, when: float) -> bytes:
        return f"{key} {state} {when:.0f}\n".encode("ascii")
