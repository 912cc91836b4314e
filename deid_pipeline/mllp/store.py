r"""Durable output of the gateway: rolled files written by one group-commit thread.

Layout under the output directory::

    hl7/          de-identified messages, MLLP-framed (0x0B ... 0x1C 0x0D);
                  PROTECTED in ``--mode tag`` (originals inline)
    identifiers/  PROTECTED: one JSON line per replaced PHI span (original kept)
    quarantine/   PROTECTED: one JSON line per refused frame (raw bytes kept)
    state/        owner-only: dedup index and its salt, the gateway's lock

Protected folders are 0o700 and their files 0o600 whatever the umask
(``outputs.protected``); at start they are tightened with what is in them.

Files are written as ``<stem>.<ext>.part`` and renamed to ``<stem>.<ext>``
when they roll (by size, message count or age) or the gateway stops, so a
consumer that globs ``hl7/*.hl7`` only ever sees complete files. The three
files of one stem hold the same messages' output.

Durability: connection threads hand a :class:`Commit` to one committer
thread and wait on its future. The committer takes every commit waiting,
writes them, fsyncs the data files (in parallel), then writes and fsyncs
the dedup index lines, then resolves the futures: an ACK is only sent for
output that is on disk, and the index never names a message whose output
is not. Many connections share each fsync (group commit), which is what
makes a few hundred messages a second possible on a disk that takes
milliseconds per fsync.

A crash can leave a ``.part`` file whose last record is cut short: at the
next start it is cut back to its last complete record (that record's
sender was never answered) and renamed.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from deid_pipeline.outputs.protected import (
    PROTECTED_DIR_MODE,
    PROTECTED_FILE_MODE,
    protect_tree,
    protected_names,
)

__all__ = [
    "HL7_DIR",
    "IDENTIFIERS_DIR",
    "QUARANTINE_DIR",
    "STATE_DIR",
    "Commit",
    "Store",
    "StoreError",
    "mllp_frame",
]

logger = logging.getLogger(__name__)

HL7_DIR = "hl7"
IDENTIFIERS_DIR = "identifiers"
QUARANTINE_DIR = "quarantine"
STATE_DIR = "state"
INDEX_FILE = "seen.log"
LOCK_FILE = "gateway.lock"
PART = ".part"

SB, EB, CR = b"\x0b", b"\x1c", b"\r"
_FRAME_END = EB + CR
# Directory, file extension, record terminator, permissions (PHI: owner only).
_KINDS = {
    HL7_DIR: (".hl7", _FRAME_END, 0o755, 0o644),
    IDENTIFIERS_DIR: (".jsonl", b"\n", PROTECTED_DIR_MODE, PROTECTED_FILE_MODE),
    QUARANTINE_DIR: (".jsonl", b"\n", PROTECTED_DIR_MODE, PROTECTED_FILE_MODE),
}
_MAX_BATCH = 512


def mllp_frame(data: bytes) -> bytes:
    """Wrap one message in the MLLP block (how messages sit in the hl7 files)."""
    return SB + data + _FRAME_END


class StoreError(OSError):
    """Output could not be made durable (disk full, permissions, store closed)."""


@dataclass(eq=False)
class Commit:
    """What one message adds to the output; resolved when it is on disk.

    ``hl7`` is the framed message (or empty), ``identifiers`` and
    ``quarantine`` whole JSON lines, ``index`` whole dedup-index lines, which
    are written only after everything else of the same batch is synced.
    """

    hl7: bytes = b""
    identifiers: bytes = b""
    quarantine: bytes = b""
    index: bytes = b""
    future: Future = field(default_factory=Future)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _RolledFile:
    """One ``.part`` file of a kind, opened lazily on first write."""

    def __init__(self, directory: str, suffix: str, mode: int) -> None:
        self.directory = directory
        self.suffix = suffix
        self.mode = mode
        self.fd: int | None = None
        self.path = ""
        self.size = 0
        self.records = 0

    def open(self, stem: str) -> None:
        self.path = os.path.join(self.directory, stem + self.suffix + PART)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND,
                          self.mode)
        if self.mode == PROTECTED_FILE_MODE:  # PHI: owner-only whatever the umask
            os.fchmod(self.fd, self.mode)
        _fsync_dir(self.directory)
        self.size = self.records = 0

    def write(self, data: bytes, records: int) -> None:
        _write_all(self.fd, data)
        self.size += len(data)
        self.records += records

    def truncate(self, size: int) -> None:
        """Cut back a batch that failed half-way (best effort)."""
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, size)
                self.size = size
            except OSError:
                pass

    def close(self) -> None:
        """Sync, close and publish under the final name."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(self.path, self.path[: -len(PART)])
        _fsync_dir(self.directory)


def _recover(directory: str, terminator: bytes) -> int:
    """Publish the ``.part`` files a stopped gateway left, cut to complete records.

    Returns the number of files published.
    """
    published = 0
    for name in sorted(os.listdir(directory)):
        if not name.endswith(PART):
            continue
        path = os.path.join(directory, name)
        with open(path, "rb") as fh:
            data = fh.read()
        end = data.rfind(terminator)
        keep = end + len(terminator) if end >= 0 else 0
        if keep == 0:
            os.unlink(path)
            continue
        if keep < len(data):
            logger.warning("cut %d bytes of an unfinished record from %s",
                           len(data) - keep, name)
            with open(path, "r+b") as fh:
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(path, path[: -len(PART)])
        published += 1
    _fsync_dir(directory)
    return published


class Store:
    """The gateway's output directory and its committer thread."""

    def __init__(self, root: str, roll_bytes: int = 64 << 20,
                 roll_messages: int = 10_000, roll_seconds: float = 3600.0,
                 mode: str = "surrogate") -> None:
        """``mode`` is the rewrite mode: in ``tag`` the HL7 files are protected."""
        self.root = os.path.abspath(root)
        self.roll_bytes = roll_bytes
        self.roll_messages = roll_messages
        self.roll_seconds = roll_seconds
        protected = protected_names(mode)
        self._modes = {
            kind: (PROTECTED_DIR_MODE, PROTECTED_FILE_MODE) if kind in protected
            else (dir_mode, file_mode)
            for kind, (_e, _t, dir_mode, file_mode) in _KINDS.items()
        }
        self._files = {kind: _RolledFile(os.path.join(self.root, kind), ext,
                                         self._modes[kind][1])
                       for kind, (ext, _t, _d, _m) in _KINDS.items()}
        self._stem: str | None = None
        self._opened_at = 0.0
        self._sequence = 0
        self._index_fd: int | None = None
        self._lock_fd: int | None = None
        self._queue: queue.SimpleQueue[Commit | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._syncer: ThreadPoolExecutor | None = None
        self._closed = threading.Event()
        self._submit_lock = threading.Lock()

    @property
    def index_path(self) -> str:
        return os.path.join(self.root, STATE_DIR, INDEX_FILE)

    @property
    def state_dir(self) -> str:
        return os.path.join(self.root, STATE_DIR)

    def open(self) -> None:
        """Create the layout, take the lock, recover leftovers, start the committer.

        Raises :class:`StoreError` when another gateway holds the directory.
        """
        os.makedirs(self.root, exist_ok=True)
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        self._lock_fd = os.open(os.path.join(self.state_dir, LOCK_FILE),
                                os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise StoreError(f"another gateway is writing to {self.root}") from None
        protect_tree(self.state_dir)
        for kind, (_ext, terminator, _d, _m) in _KINDS.items():
            directory = os.path.join(self.root, kind)
            dir_mode = self._modes[kind][0]
            os.makedirs(directory, mode=dir_mode, exist_ok=True)
            if dir_mode == PROTECTED_DIR_MODE:
                # PHI: tighten a folder made by someone else, and the files
                # an earlier gateway (or an older version) left in it.
                protect_tree(directory)
            _recover(directory, terminator)

    def start(self, index_fd: int) -> None:
        """Start committing; ``index_fd`` is the dedup index opened for append."""
        self._index_fd = index_fd
        self._syncer = ThreadPoolExecutor(len(_KINDS), thread_name_prefix="mllp-fsync")
        self._thread = threading.Thread(target=self._run, name="mllp-committer",
                                        daemon=True)
        self._thread.start()

    def submit(self, commit: Commit) -> Future:
        """Queue ``commit``; its future resolves once it is durable."""
        with self._submit_lock:
            if self._closed.is_set():
                commit.future.set_exception(StoreError("the store is closed"))
            else:
                self._queue.put(commit)
        return commit.future

    def close(self) -> None:
        """Write what is queued, publish the open files, release the lock."""
        with self._submit_lock:
            if self._closed.is_set():
                return
            self._closed.set()
            self._queue.put(None)
        if self._thread is not None:
            self._thread.join()
        if self._syncer is not None:
            self._syncer.shutdown()
        if self._index_fd is not None:
            os.close(self._index_fd)
            self._index_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------ committer

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException:  # a bug here must not leave senders waiting forever
            logger.exception("the committer stopped")
            self._closed.set()
            raise
        finally:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None and not item.future.done():
                    item.future.set_exception(StoreError("the store is closed"))

    def _loop(self) -> None:
        running = True
        while running:
            timeout = None
            if self._stem is not None:
                timeout = max(0.05,
                              self._opened_at + self.roll_seconds - time.monotonic())
            try:
                first = self._queue.get(timeout=timeout)
            except queue.Empty:
                self._roll_if_due()
                continue
            batch: list[Commit] = []
            item: Commit | None = first
            while True:
                if item is None:
                    running = False
                else:
                    batch.append(item)
                if len(batch) >= _MAX_BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._commit(batch)
            self._roll_if_due()
        self._roll()

    def _new_stem(self) -> str:
        while True:
            self._sequence += 1
            stem = (time.strftime("mllp-%Y%m%dT%H%M%SZ", time.gmtime())
                    + f"-{os.getpid()}-{self._sequence:04d}")
            taken = [os.path.join(f.directory, stem + f.suffix + end)
                     for f in self._files.values() for end in ("", PART)]
            if not any(os.path.exists(p) for p in taken):
                return stem

    def _file(self, kind: str) -> _RolledFile:
        handle = self._files[kind]
        if handle.fd is None:
            if self._stem is None:
                self._stem = self._new_stem()
                self._opened_at = time.monotonic()
            handle.open(self._stem)
        return handle

    def _commit(self, batch: list[Commit]) -> None:
        touched: list[_RolledFile] = []
        sizes: dict[str, int] = {}
        try:
            for kind, attr in ((HL7_DIR, "hl7"), (IDENTIFIERS_DIR, "identifiers"),
                               (QUARANTINE_DIR, "quarantine")):
                chunks = [getattr(c, attr) for c in batch if getattr(c, attr)]
                if not chunks:
                    continue
                handle = self._file(kind)
                sizes[kind] = handle.size
                handle.write(b"".join(chunks), len(chunks))
                touched.append(handle)
            if len(touched) > 1:
                list(self._syncer.map(lambda h: os.fsync(h.fd), touched))
            elif touched:
                os.fsync(touched[0].fd)
            index = b"".join(c.index for c in batch if c.index)
            if index:
                _write_all(self._index_fd, index)
                os.fsync(self._index_fd)
        except OSError as exc:
            logger.error("could not write %d message(s): %s", len(batch),
                         exc.strerror or type(exc).__name__)
            for kind, size in sizes.items():
                self._files[kind].truncate(size)
            error = StoreError(f"output not written: {exc.strerror or 'I/O error'}")
            for c in batch:
                c.future.set_exception(error)
            self._roll()
            return
        for c in batch:
            c.future.set_result(None)

    def _roll_if_due(self) -> None:
        if self._stem is None:
            return
        hl7 = self._files[HL7_DIR]
        if (hl7.size >= self.roll_bytes or hl7.records >= self.roll_messages
                or time.monotonic() - self._opened_at >= self.roll_seconds):
            self._roll()

    def _roll(self) -> None:
        """Publish the current files; the next write starts a new stem.

        Output already synced stays where it is if publishing fails (a
        ``.part`` file is published at the next start), so this only logs.
        """
        for handle in self._files.values():
            try:
                handle.close()
            except OSError as exc:
                logger.error("could not publish an output file: %s",
                             exc.strerror or type(exc).__name__)
        self._stem = None
