"""Owner-only files for outputs that show PHI (the review page, the privacy report).

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

__all__ = ["PROTECTED_DIR_MODE", "PROTECTED_FILE_MODE", "write_protected"]

PROTECTED_FILE_MODE = 0o600
PROTECTED_DIR_MODE = 0o700


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


def write_protected(path: str, text: str) -> None:
    """Replace ``path`` by a 0o600 file holding ``text`` (UTF-8)."""
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
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fd = -1
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
