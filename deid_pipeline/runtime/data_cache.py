"""Parsed package data kept on disk between processes, keyed by its content.

A run parsed about 560,000 lexicon lines, the Brown clusters and geonames'
JSON before it tagged its first note (about 2.5 s, on every run and in every
worker process), to build the same dicts each time. :func:`cached` builds a
value once per content of its source files and keeps it as a ``marshal``
file; later processes read it back in a fifth of the time. The key is the
sources' bytes, the format and the interpreter's cache tag, so a changed
lexicon or another Python rebuilds, and an unreadable, truncated or
unwritable cache only costs the build: the value is always what ``build``
returns. ``$DEID_PIPELINE_CACHE`` moves the cache (``off`` disables it);
the default is ``~/.cache/deid-pipeline/data``, owner-only.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

CACHE_ENV = "DEID_PIPELINE_CACHE"
# Bumped when what a cached file holds changes shape.
FORMAT = 1


def cache_dir() -> str | None:
    """Where cached data lives; None when ``$DEID_PIPELINE_CACHE`` is ``off``."""
    configured = os.environ.get(CACHE_ENV, "")
    if configured.lower() == "off":
        return None
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "deid-pipeline", "data")


def content_key(sources: Sequence[str], extra: str = "") -> str:
    """A digest of the sources' bytes, ``extra``, the format and the interpreter."""
    head = f"{FORMAT}\0{sys.implementation.cache_tag}\0{extra}"
    digest = hashlib.sha256(head.encode())
    for path in sources:
        with open(path, "rb") as fh:
            digest.update(hashlib.file_digest(fh, "sha256").digest())
    return digest.hexdigest()[:32]


def _read(path: str) -> object:
    with open(path, "rb") as fh:
        data = fh.read()
    # Hundreds of thousands of new tuples would start the cycle collector
    # many times over objects that hold no cycle.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return marshal.loads(data)
    finally:
        if enabled:
            gc.enable()


def _write(directory: str, path: str, value: object) -> None:
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(marshal.dumps(value))
        os.replace(tmp, path)  # atomic: a reader sees all of it or nothing
    except BaseException:
        os.unlink(tmp)
        raise


def _path(directory: str, name: str, key: str) -> str:
    digest = hashlib.sha256(f"{FORMAT}\0{key}".encode()).hexdigest()[:32]
    return os.path.join(directory, f"{name}-{digest}.marshal")


def load(name: str, key: str) -> object | None:
    """The value last :func:`store`d under ``name`` and ``key``; None if none.

    For values a process adds to as it goes (not a function of files, as
    :func:`cached`'s are): ``key`` says which interpreter or format they
    are for.
    """
    directory = cache_dir()
    if directory is None:
        return None
    try:
        return _read(_path(directory, name, key))
    except (OSError, EOFError, ValueError, TypeError):
        return None


def store(name: str, key: str, value: object) -> None:
    """Keep ``value`` (plain data) for :func:`load`; a failed write is ignored."""
    directory = cache_dir()
    if directory is None:
        return
    try:
        _write(directory, _path(directory, name, key), value)
    except (OSError, ValueError):
        pass  # a read-only home: the value is built again next time


def cached(name: str, sources: Sequence[str], build: Callable[[], T],
           extra: str = "") -> T:
    """``build()``, read from the cache when these sources were built before.

    ``build`` must return plain data (dicts, lists, tuples, sets, strings,
    numbers) and depend only on the ``sources`` files and ``extra``.
    """
    directory = cache_dir()
    if directory is None:
        return build()
    try:
        path = os.path.join(directory, f"{name}-{content_key(sources, extra)}.marshal")
    except OSError:
        return build()
    try:
        return _read(path)  # type: ignore[return-value]
    except (OSError, EOFError, ValueError, TypeError):
        pass  # absent, truncated or foreign: built again below
    value = build()
    try:
        _write(directory, path, value)
    except (OSError, ValueError):
        pass  # a read-only home still gets the right value, built each time
    return value
