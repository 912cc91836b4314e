"""Compiled regular expressions read back from disk, not compiled again.

Why: building the rule detector compiles about 650 expressions (each
recognizer, its ASCII twin and its scans, issue 45), and each new mix of
patterns a text needs compiles another during the run: about 0.6 CPU-s of
every process's start-up went into ``re``'s pure-Python parser and
compiler. What ``re.compile`` makes of a pattern depends on the pattern, the
flags and the interpreter only: this module keeps the compiler's output (the
program ``_sre`` runs and the group tables) in the data cache
(:mod:`deid_pipeline.runtime.data_cache`), under a key of the interpreter's
version and ``_sre``'s magic number, and hands it to ``_sre.compile`` as
``re`` itself does. The pattern built is the one ``re.compile`` builds
(``==`` compares patterns by flags and program; ``tests/test_regex_programs.py``
checks every rule expression).

Anything unexpected (a missing or foreign cache file, another interpreter's
``_sre``) costs only the compile: :func:`compile_regex` always returns what
``re.compile`` would.
"""

from __future__ import annotations

import _sre
import re
import sys
from array import array
from re import _compiler, _parser

from deid_pipeline.runtime.kept_table import KeptTable

# What a program file holds: (pattern, flags) -> the arguments of
# ``_sre.compile`` after the pattern (flags, code, groups, groupindex,
# indexgroup), the code as the bytes of an array of _sre's code words (a
# list of ints held ten times the memory for as long as the process lived).
# Bumped when that shape changes.
_FORMAT = 2
_CODE_TYPE = next(t for t in "IL" if array(t).itemsize == _sre.CODESIZE)


def _key() -> str:
    return (f"{_FORMAT}\0{sys.version}\0{_sre.MAGIC}\0{_sre.CODESIZE}"
            f"\0{_sre.MAXREPEAT}\0{_sre.MAXGROUPS}")


# A file keeps at most 6,000 programs: those of the last process that added
# one, then those it read (the English and Spanish rules together are about
# 1,500).
PROGRAMS = KeptTable("regex-programs", _key, 6000)


def _program(pattern: str, flags: int) -> tuple:
    """What ``re._compiler.compile`` passes to ``_sre.compile`` for ``pattern``."""
    parsed = _parser.parse(pattern, flags)
    code = array(_CODE_TYPE, _compiler._code(parsed, flags)).tobytes()
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (flags | parsed.state.flags, code, parsed.state.groups - 1,
            groupindex, tuple(indexgroup))


def compile_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, its program read from the cache if kept."""
    flags = int(flags)
    if not PROGRAMS.enabled or not isinstance(pattern, str) or flags & re.DEBUG:
        return re.compile(pattern, flags)
    key = (pattern, flags)
    program = PROGRAMS.get(key)
    new = program is None
    if new:
        try:
            program = _program(pattern, flags)
        except re.error:
            return re.compile(pattern, flags)  # raises re's own error
    try:
        final_flags, code, groups, groupindex, indexgroup = program
        words = array(_CODE_TYPE)
        words.frombytes(code)
        regex = _sre.compile(pattern, final_flags, words.tolist(), groups,
                             groupindex, indexgroup)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        PROGRAMS.enabled = False  # a program this interpreter does not take
        return re.compile(pattern, flags)
    PROGRAMS.use(key, program, new)
    return regex


def save() -> None:
    """Keep the programs compiled in this process, if any was new.

    Called once a detector is built and after the documents that compiled a
    new mix; a no-op when nothing was compiled since the last call.
    """
    PROGRAMS.save()
