"""``--input`` patterns -> the files a run reads: one rule for directories.

Checked on the driver before anything is written (a ``ValueError`` here is
exit 2):

- A pattern that names a directory (``notes``, ``notes/``; on an object
  store, a pattern ending in ``/``) is refused with a hint that reads its
  input files (``'notes/*.txt'``), unless ``--recursive``: then every file
  under it is read, but for hidden, annotation and documentation files.
- A wildcard pattern (``notes/*``, ``notes/**``) reads what it matches, but
  for hidden, annotation and documentation files, as a shell's ``*`` would skip
  hidden files: a folder of notes often holds its gold beside them
  (``samples/notes/gold.jsonl``), and reading it doubled every document.
- A file named as it is (no wildcard) is read whatever it is: naming it is
  deliberate.

Hidden: a name below the pattern's fixed part that starts with ``.``
(unless the pattern asks for such names, ``notes/.*``). Annotation: BRAT
standoff ``*.ann``, PhysioNet's gold ``*.phrase``, and gold JSONL (a
``.jsonl``/``.ndjson``/``.json`` file whose first record has ``spans``, the
format ``samples/README.md`` describes), compressed or not. Documentation: a
README, LICENSE, CHANGELOG or COPYING file, or a ``.md``/``.rst`` page.

A pattern from which something was skipped, and a directory read with
``--recursive``, reach the pipeline as the literal paths of the files kept
(``literal_pattern``), so the workers' own matching reads exactly them; a
pattern from which nothing was skipped is passed on as it is.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.store.files import is_local, is_local_directory
from deid_pipeline.store.incremental import literal_pattern

WILDCARDS = "*?["
# Standoff annotation files that are never notes (BRAT, PhysioNet gold).
ANNOTATION_SUFFIXES = (".ann", ".phrase")
# A folder's documentation beside its notes (README.md, LICENSE): never a note.
DOCUMENTATION_SUFFIXES = (".md", ".markdown", ".rst")
DOCUMENTATION_NAMES = ("readme", "license", "licence", "changelog", "copying")
# Files whose first record is looked at for gold spans.
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSED = (".gz", ".bz2")
# Suffixes of the input formats (docs/input-formats.md), for the hint.
INPUT_SUFFIXES = {".txt", ".text", ".hl7", ".er7", ".mllp", ".jsonl", ".ndjson",
                  ".parquet"}
# How much of a JSON file's first line is parsed to tell gold from notes
# (the rest of a longer line is only searched for the key).
_HEAD_BYTES = 8 * 1024 * 1024
_SPANS_KEY = re.compile(rb'"spans"\s*:\s*\[')


@dataclass
class InputPlan:
    """What a run reads: patterns for the pipeline, their size, what was skipped."""

    patterns: list[str] = field(default_factory=list)
    total_bytes: int = 0
    files: int = 0
    # Reason ("hidden", "annotation", "documentation") -> files skipped.
    skipped: Counter = field(default_factory=Counter)


def has_wildcard(pattern: str) -> bool:
    return any(ch in pattern for ch in WILDCARDS)


def is_directory_pattern(pattern: str) -> bool:
    """A pattern that names a directory: local and one, or ending in ``/``."""
    if has_wildcard(pattern):
        return False
    if is_local(pattern):
        return is_local_directory(pattern.removeprefix("file://") or ".")
    return pattern.endswith("/")


def _strip_compression(name: str) -> str:
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_gold_json(first_line: bytes) -> bool:
    r"""True if a JSON file's first line (whole or cut) is a record with gold spans.

    A line cut before its end cannot be parsed: then a ``"spans": [`` in it
    decides, which inside a JSON string would be escaped (``\"spans\"``).
    """
    first = first_line.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:  # cut, or not JSON at all
        return first.startswith((b"{", b"[")) and bool(_SPANS_KEY.search(first))
    if isinstance(record, list) and record:  # a .json array of records
        record = record[0]
    return isinstance(record, dict) and isinstance(record.get("spans"), list)


def _gold_json_file(path: str) -> bool:
    """Reads ``path`` (decompressed) to the end of its first record's line.

    At most ``_HEAD_BYTES`` are kept; past them the rest of the line is only
    searched for the ``spans`` key, a block at a time.
    """
    try:
        with FileSystems.open(path, compression_type=CompressionTypes.AUTO) as fh:
            head = b""
            while len(head) < _HEAD_BYTES:
                block = fh.read(1 << 16)
                if not block:
                    return is_gold_json(head)
                head += block
                if b"\n" in head.lstrip(b"\xef\xbb\xbf \t\r\n"):
                    return is_gold_json(head)
            if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
                return False
            if _SPANS_KEY.search(head):
                return True
            tail = head[-64:]
            while not _SPANS_KEY.search(tail):
                block = fh.read(1 << 20)
                if not block:
                    return False
                line_end = block.find(b"\n")
                tail = tail[-64:] + (block if line_end < 0 else block[:line_end])
                if line_end >= 0:
                    return bool(_SPANS_KEY.search(tail))
            return True
    except Exception:  # noqa: BLE001 - unreadable: the read stage quarantines it
        return False


def annotation_reason(path: str) -> str | None:
    """``"annotation"`` if ``path`` is a gold / annotation file, else None."""
    name = _strip_compression(os.path.basename(path).lower())
    if name.endswith(ANNOTATION_SUFFIXES):
        return "annotation"
    if name.endswith(JSON_SUFFIXES) and _gold_json_file(path):
        return "annotation"
    return None


def _fixed_prefix(pattern: str) -> str:
    """The pattern's directory part before its first wildcard (with ``/``)."""
    cut = min((pattern.index(ch) for ch in WILDCARDS if ch in pattern),
              default=len(pattern))
    return pattern[: pattern.rfind("/", 0, cut) + 1]


def _hidden(path: str, prefix: str, pattern: str) -> bool:
    """A name below ``prefix`` starts with ``.`` and the pattern asks for none."""
    asks = pattern[len(prefix):]
    if asks.startswith(".") or "/." in asks:
        return False
    below = path[len(prefix):] if path.startswith(prefix) else os.path.basename(path)
    return any(part.startswith(".") for part in below.split("/") if part)


def documentation_reason(path: str) -> str | None:
    """``"documentation"`` for a README, a licence or a Markdown page, else None."""
    name = _strip_compression(os.path.basename(path).lower())
    if (name.endswith(DOCUMENTATION_SUFFIXES)
            or name.split(".")[0] in DOCUMENTATION_NAMES):
        return "documentation"
    return None


def skip_reason(path: str, prefix: str, pattern: str) -> str | None:
    """Why a file a wildcard or a directory matched is not read, or None."""
    if _hidden(path, prefix, pattern):
        return "hidden"
    return annotation_reason(path) or documentation_reason(path)


def _broken_links(pattern: str) -> list[str]:
    """Local-only: dangling links a wildcard matches (Beam lists none of them).

    Kept as literal patterns so that the read stage still counts each one.
    """
    if not is_local(pattern):
        return []
    local = pattern.removeprefix("file://")
    return [p for p in glob.glob(local, recursive=True)
            if os.path.islink(p) and not os.path.exists(p)]


def _walk(directory: str) -> tuple[list, list[str]]:
    """Every file's metadata under ``directory`` and the dangling links in it."""
    if not is_local(directory):
        base = directory.rstrip("/") + "/"
        (match,) = FileSystems.match([base + "**"])
        return list(match.metadata_list), []
    local = directory.removeprefix("file://")
    paths, broken = [], []
    for root, dirs, names in os.walk(local):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.islink(path) and not os.path.exists(path):
                broken.append(path)
            else:
                paths.append(path)
    found = []
    for i in range(0, len(paths), 1000):
        batch = paths[i: i + 1000]
        matches = FileSystems.match([literal_pattern(p) for p in batch])
        found += [m for match in matches for m in match.metadata_list]
    return found, broken


def directory_hint(directory: str) -> str:
    """What to give instead of a directory: globs of its input files' suffixes."""
    base = directory.rstrip("/")
    suffixes: set[str] = set()
    nested = False
    if is_local(directory):
        local = base.removeprefix("file://") or "/"
        for entry in sorted(os.scandir(local), key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                nested = True
            elif annotation_reason(entry.path) is None:
                name = entry.name
                stem, ext = os.path.splitext(_strip_compression(name))
                suffixes.add(name[len(stem):] if ext else "")
    # A README.md beside the notes is not suggested when input files are there.
    known = {s for s in suffixes if _strip_compression(s).lower() in INPUT_SUFFIXES}
    globs = [
        f"--input '{base}/*{suffix}'" for suffix in sorted(known or suffixes)
        if suffix
    ]
    if "" in suffixes or not globs:
        globs = [f"--input '{base}/*'"]
    hint = " ".join(globs) + " to read its files"
    if nested:
        hint += " (not its subfolders)"
    return f"{hint}, or --recursive to read every file under it"


def plan_inputs(
    patterns: list[str], allow_empty: bool = False, recursive: bool = False,
    warn=None,
) -> InputPlan:
    """Check ``patterns`` and say what the run reads (``ValueError``: exit 2)."""
    plan = InputPlan()
    wanted: list[str] = []
    for pattern in patterns:
        if is_directory_pattern(pattern):
            if not recursive:
                raise ValueError(
                    f"input {pattern!r} is a directory; give "
                    f"{directory_hint(pattern)}"
                )
            found, broken = _walk(pattern)
            prefix = pattern.rstrip("/") + "/"
            _keep(plan, pattern, prefix + "**", prefix, found, broken,
                  literal=True)
            if not found and not broken and not allow_empty:
                raise ValueError(
                    f"input directory {pattern!r} holds no files "
                    "(--allow-empty-input to run anyway)")
            continue
        wanted.append(pattern)
    try:
        matches = FileSystems.match(wanted) if wanted else []
    except Exception as exc:  # noqa: BLE001 - no storage, bucket or credentials
        raise ValueError(f"cannot list input {wanted!r}: {exc}") from exc
    for pattern, match in zip(wanted, matches):
        files = [m for m in match.metadata_list if not is_local_directory(m.path)]
        if not has_wildcard(pattern):
            if not files:
                raise ValueError(f"input {pattern!r} does not exist")
            plan.patterns.append(pattern)
            plan.files += len(files)
            plan.total_bytes += sum(m.size_in_bytes for m in files)
            continue
        kept = _keep(plan, pattern, pattern, _fixed_prefix(pattern), files,
                     _broken_links(pattern), literal=False)
        if kept:
            continue
        skipped = ""
        if files:
            skipped = (f" but {len(files)} hidden, annotation or documentation "
                       "file(s), skipped")
        if not allow_empty:
            raise ValueError(
                f"input {pattern!r} matched no input files{skipped} "
                "(--allow-empty-input to run anyway)"
            )
        if warn is not None:
            warn(f"{pattern!r} matched no input files{skipped}")
    return plan


def _keep(plan: InputPlan, pattern: str, glob_pattern: str, prefix: str,
          files: list, broken: list[str], literal: bool) -> int:
    """Add the files of one input the rule keeps; returns how many it keeps.

    ``glob_pattern`` is what was matched (``DIR/**`` for a directory),
    ``prefix`` its fixed directory part; ``literal``: always list the files.
    """
    kept = []
    for m in sorted(files, key=lambda m: m.path):
        reason = skip_reason(m.path, prefix, glob_pattern)
        if reason:
            plan.skipped[reason] += 1
        else:
            kept.append(m)
    links = [p for p in sorted(broken) if not _hidden(p, prefix, glob_pattern)]
    if literal or len(kept) < len(files):
        plan.patterns += [literal_pattern(m.path) for m in kept]
        plan.patterns += [literal_pattern(p) for p in links]
    elif kept or links:
        plan.patterns.append(pattern)
    plan.files += len(kept)
    plan.total_bytes += sum(m.size_in_bytes for m in kept)
    return len(kept) + len(links)
