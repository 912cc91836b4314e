"""Owner-only files and folders for every output that shows PHI: the one place.

Which outputs are protected (``protected_names``): the identifier view, the
quarantine, the ``--incremental`` link history and input manifest, and in
``--mode tag`` (originals written inline) the documents and HL7 files too;
the review page and the privacy report of ``deid-pipeline report``; the
gateway's identifier and quarantine files (its HL7 files in tag mode) and
its state. Protected files are 0o600 and their folders 0o700, whatever the
umask. Every writer of the batch job, ``compact``, the gateway and the
report uses the helpers here:

- ``write_protected``: a small file written by this process (the report,
  the review page);
- ``make_protected_dirs``: a folder made before files go in it;
- ``protect_tree``: a folder (or file) Beam's workers or pyarrow wrote with
  the umask's modes, tightened after the fact. The batch job writes inside
  its 0o700 staging folder, so no other user can reach a file before its
  mode is set, and it tightens the protected parts of staging before any is
  moved out.

The mode is given when the file is created (``os.open`` with 0o600) and then set
with ``fchmod``, so neither a loose umask (0o022 makes 0o644 of a plain ``open``)
nor a strict one changes it, and there is no moment in which another user could
open the file. The content goes to a new file beside the target that is renamed
over it, so a half-written file never replaces a good one. Directories this
module creates are 0o700; existing ones are the site's and are left as they are.
"""

from __future__ import annotations

import os
import secrets

__all__ = [
    "PROTECTED_DIR_MODE",
    "PROTECTED_FILE_MODE",
    "PROTECTED_TABLES",
    "make_protected_dirs",
    "protect_tree",
    "protected_names",
    "write_protected",
]

PROTECTED_FILE_MODE = 0o600
PROTECTED_DIR_MODE = 0o700

# Output folders that hold original PHI in every mode: the identifier view
# (originals), the quarantine (raw records), the --incremental link history
# (MRN, SSN, name with birth date) and input manifest (paths and hashes of
# the PHI files read).
PROTECTED_TABLES = frozenset({"identifiers", "quarantine"})
ALWAYS_PROTECTED = PROTECTED_TABLES | {"links", "inputs"}
# What ``--mode tag`` adds: its text keeps every original inline.
TAG_MODE_PROTECTED = frozenset({"documents", "hl7"})


def protected_names(mode: str = "surrogate") -> frozenset[str]:
    """Names of the output folders (under ``--output`` or staging) that hold PHI.

    ``persons`` (birth year, sex, ZIP3), ``person_merges`` (ids), ``runs``
    and ``run.json`` (counts, options) are not; ``documents`` and the HL7
    output are only in tag mode.
    """
    return ALWAYS_PROTECTED | (TAG_MODE_PROTECTED if str(mode) == "tag" else set())


def protect_tree(path: str) -> None:
    """Make ``path`` and everything under it owner-only (0o700 / 0o600).

    A local path only; a missing one is no error. Symbolic links are not
    followed (their targets are not ours to change).
    """
    if os.path.islink(path) or not os.path.exists(path):
        return
    if not os.path.isdir(path):
        os.chmod(path, PROTECTED_FILE_MODE)
        return
    os.chmod(path, PROTECTED_DIR_MODE)
    for root, dirs, files in os.walk(path):
        for name in dirs:
            if not os.path.islink(os.path.join(root, name)):
                os.chmod(os.path.join(root, name), PROTECTED_DIR_MODE)
        for name in files:
            if not os.path.islink(os.path.join(root, name)):
                os.chmod(os.path.join(root, name), PROTECTED_FILE_MODE)


def make_protected_dirs(directory: str, tighten: bool = False) -> None:
    """Create the missing folders of ``directory``, each owner-only (0o700).

    Existing parents are left as they are (the site's); with ``tighten`` the
    folder ``directory`` itself is made 0o700 also when it existed (an
    output folder of ours, such as ``DIR/identifiers``).
    """
    _make_dirs(os.path.abspath(directory))
    if tighten:
        os.chmod(directory, PROTECTED_DIR_MODE)


def _make_dirs(directory: str) -> None:
    """Create the missing directories of ``directory``, each owner-only."""
    missing: list[str] = []
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for path in reversed(missing):
        try:
            os.mkdir(path, PROTECTED_DIR_MODE)
        except FileExistsError:
            continue
        # mkdir's mode is cut by the umask; the directory is still empty here.
        os.chmod(path, PROTECTED_DIR_MODE)


def write_protected(path: str, text: str | bytes) -> None:
    """Replace ``path`` by a 0o600 file holding ``text`` (UTF-8; bytes as they are)."""
    target = os.path.abspath(path)
    directory = os.path.dirname(target)
    _make_dirs(directory)
    tmp = os.path.join(
        directory, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp"
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, PROTECTED_FILE_MODE)
    try:
        os.fchmod(fd, PROTECTED_FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
