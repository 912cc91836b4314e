"""Paths through Beam's FileSystems: local disk, s3://, gs:// and hdfs:// alike.

Every file the job lists, reads, writes, moves or deletes outside the
pipeline (staging, spill, publish, run.json, the tables' row counts) goes
through these helpers, so that a runner's workers and the driver write to the
same shared storage. Object stores have no directories and no atomic rename:
a "directory" here is a path prefix, a file appears whole when its upload
ends, and a rename is a copy then a delete. What only a local file system
offers (an atomic directory swap, a directory with no files) is used only
when the path is local, and says so.
"""

from __future__ import annotations

import os
import uuid

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from deid_pipeline.outputs.protected import make_protected_dirs, protect_tree

_RAW = CompressionTypes.UNCOMPRESSED

# The job's Beam options as given (``--s3_endpoint_url=...``, ...), carried by
# every DoFn that touches files; None leaves the worker's file systems as set.
FileSystemFlags = tuple[str, ...] | None


def use_filesystem_flags(flags: FileSystemFlags) -> None:
    """Give Beam's file systems in this process the job's options (from ``setup``).

    Beam does so itself only in an SDK harness started by its boot program
    (``sdk_worker_main``: Docker and process environments). A worker of a
    plain ``worker_pool_main`` (``--environment_type=EXTERNAL``) starts the
    harness directly with no options, and its first s3:// path fails with
    "Must provide one of client or options".
    """
    if flags is not None:
        FileSystems.set_options(PipelineOptions(list(flags)))


def is_local(path: str) -> bool:
    """True for a path on this machine's file system (no scheme, or file://)."""
    return FileSystems.get_scheme(path) in (None, "file")


def is_local_directory(path: str) -> bool:
    """Local-only: a local path that is a directory (never for another scheme).

    Beam's local ``match`` returns a directory named literally (``--input
    notes``) as a match: it is not an input file, and reading it failed.
    """
    return is_local(path) and os.path.isdir(path)


def owner_only(path: str) -> None:
    """Local-only: make ``path`` and all under it owner-only (0700 / 0600).

    Protected outputs (``deid_pipeline.outputs.protected.protected_names``)
    and staging hold PHI; Beam's workers and pyarrow write with the umask's
    modes (0644 under the usual 022), readable by every user of the machine.
    On an object store access is the bucket's policy: no-op.
    """
    if is_local(path):
        protect_tree(_local(path))


def make_protected_directory(path: str) -> None:
    """Local-only: ``path`` as an owner-only directory (made, or tightened).

    Missing parents (the output directory of a first run) are made as any
    other folder, with the umask's mode: only ``path`` holds PHI. A no-op on
    an object store.
    """
    if is_local(path):
        local = os.path.abspath(_local(path))
        os.makedirs(os.path.dirname(local), exist_ok=True)
        make_protected_dirs(local, tighten=True)


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def absolute(path: str) -> str:
    """Local-only: a relative local path made absolute; other paths unchanged.

    ``os.path.abspath`` would turn ``s3://b/x`` into ``$PWD/s3:/b/x``.
    """
    return os.path.abspath(path) if is_local(path) else path


def match_files(pattern: str) -> list[str]:
    """Paths of the files ``pattern`` matches, sorted (one listing)."""
    (match,) = FileSystems.match([pattern])
    return sorted(m.path for m in match.metadata_list)


def list_files(directory: str, pattern: str = "*") -> list[str]:
    """Paths of the files directly in ``directory`` matching ``pattern``, sorted."""
    return match_files(FileSystems.join(directory, pattern))


def move(sources: list[str], targets: list[str]) -> None:
    """Rename each source to its target (one request batch; none is no error)."""
    if sources:
        FileSystems.rename(sources, targets)


def delete_files(paths: list[str]) -> None:
    """Delete the files ``paths`` (one request batch; none is no error)."""
    if paths:
        FileSystems.delete(paths)


def delete_tree(prefix: str) -> None:
    """Remove ``prefix`` and everything under it; nothing there is no error."""
    if is_local(prefix):
        if FileSystems.exists(prefix):
            FileSystems.delete([prefix])
        return
    # Object stores delete "a directory" as every object under "prefix/".
    FileSystems.delete([prefix.rstrip("/") + "/"])


def write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` as the whole file ``path`` (parents made as needed)."""
    with FileSystems.create(path, compression_type=_RAW) as channel:
        channel.write(data)


def read_bytes(path: str) -> bytes:
    """The whole file ``path``."""
    with FileSystems.open(path, compression_type=_RAW) as channel:
        return channel.read()


def write_atomically(path: str, data: bytes) -> None:
    """Write ``path`` so that a reader sees the old file, none, or all of ``data``.

    Written beside it under a temporary name then renamed: a local rename is
    atomic, and an object store's copy makes the object appear whole.
    """
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    write_bytes(tmp, data)
    FileSystems.rename([tmp], [path])


def delete_file(path: str) -> None:
    """Remove the file ``path`` if it exists."""
    if FileSystems.exists(path):
        FileSystems.delete([path])


def make_directory(path: str) -> None:
    """Local-only: create the directory ``path`` if missing; a no-op elsewhere.

    An object store has no directories: a prefix exists once a file is under
    it. Locally an output directory is there even when no file was written.
    """
    if is_local(path) and not FileSystems.exists(path):
        FileSystems.mkdirs(path)


def move_files(source: str, target: str) -> list[str]:
    """Move every file directly in ``source`` into ``target``, same names.

    A file of the same name in ``target`` is replaced; others stay. Returns
    the names moved.
    """
    make_directory(target)
    sources = list_files(source)
    names = [FileSystems.split(path)[1] for path in sources]
    move(sources, [FileSystems.join(target, n) for n in names])
    return names


def replace_directory(source: str, target: str, trash: str) -> None:
    """Local-only: swap directory ``target`` for ``source`` by two renames.

    ``target`` moves to ``trash`` (deleted after) and ``source`` takes its
    place, so a reader never sees a table partly old and partly new. Only a
    local file system renames directories, and atomically.
    """
    had_old = FileSystems.exists(target)
    if had_old:
        FileSystems.rename([target], [trash])
    FileSystems.rename([source], [target])
    if had_old:
        FileSystems.delete([trash])
