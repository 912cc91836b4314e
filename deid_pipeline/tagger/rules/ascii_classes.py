r"""A pattern's single-character pieces written as the ASCII classes ``re`` reads.

Why: on a text of ASCII characters only, every single-character piece of a
pattern matches exactly the ASCII characters it matches, whatever case flags
compiled it, so each piece can be written as the explicit class of those
characters (``[dD]``). The classes are not written by hand: each piece is
asked of ``re`` itself, for each of the 128 ASCII characters.

Two uses: :func:`ascii_exact` compiles the whole case-sensitively (the same
matches and groups, and alternations that skip on their first character:
:mod:`.scan`), and :func:`gate_source` writes every piece so, for another
engine to read as ``re`` does (:mod:`.gate`).
"""

from __future__ import annotations

import re
from functools import lru_cache

# ``re._parser`` is private, but the only way to read a pattern as ``re`` does.
from re import _constants as sre  # noqa: N812 - re's own name for it
from re import _parser

from deid_pipeline.runtime.regex_programs import compile_regex

ASCII = tuple(chr(c) for c in range(128))
# Escapes that match no character (positions): kept as written.
_ZERO_WIDTH_ESCAPES = frozenset("AbBZ")


class UnsupportedError(Exception):
    """A construct the rewrite does not handle; the original expression is kept."""


@lru_cache(maxsize=4096)
def _accepts(piece: str, flags: int) -> frozenset[str]:
    """The ASCII characters one single-character ``piece`` matches under ``flags``."""
    regex = re.compile(piece, flags)
    return frozenset(c for c in ASCII if regex.fullmatch(c))


def _class_char(c: str) -> str:
    """``c`` as written inside a class."""
    if c in "\\]^-[":
        return "\\" + c
    return c if c.isprintable() and c != " " else f"\\x{ord(c):02x}"


@lru_cache(maxsize=4096)
def as_class(chars: frozenset[str]) -> str:
    """A character class of exactly ``chars`` (ASCII), escaped where needed."""
    if not chars:
        return "(?!)"
    if len(chars) == 1:
        return re.escape(next(iter(chars)))
    body = []
    codes = sorted(ord(c) for c in chars)
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        if j - i >= 2:
            body.append(f"{_class_char(chr(codes[i]))}-{_class_char(chr(codes[j]))}")
        else:
            body.extend(_class_char(chr(c)) for c in codes[i:j + 1])
        i = j + 1
    return "[" + "".join(body) + "]"


def _escape_end(source: str, i: int) -> int:
    r"""The end of the escape starting at ``source[i] == '\\'``."""
    if i + 1 >= len(source):
        raise UnsupportedError("trailing backslash")
    c = source[i + 1]
    if c == "x":
        return i + 4
    if c == "u":
        return i + 6
    if c == "U":
        return i + 10
    if c == "N":
        close = source.find("}", i)
        if close < 0:
            raise UnsupportedError("bad \\N")
        return close + 1
    if c == "0":
        j = i + 2
        while j < len(source) and j < i + 4 and source[j] in "01234567":
            j += 1
        return j
    if c.isdigit():
        raise UnsupportedError("numbered back-reference")
    return i + 2


def _class_end(source: str, i: int) -> int:
    """The end of the character class starting at ``source[i] == '['``."""
    j = i + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":
        j += 1
    while j < len(source):
        c = source[j]
        if c == "\\":
            j = _escape_end(source, j)
            continue
        if c == "[":
            # A nested set or set operation ('[[' warns in 3.7+): not ours.
            raise UnsupportedError("'[' inside a class")
        if c == "]":
            return j + 1
        j += 1
    raise UnsupportedError("unterminated class")


_LEADING_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_SCOPED_FLAGS = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]+))?:")


# Any character beyond ASCII, read one byte a character (gate.encoded).
_BEYOND_ASCII = "[\\x80-\\xff]"


def _beyond_ascii(code: int, caseless: bool) -> bool:
    return code >= 128 or caseless and chr(code).isalpha()


@lru_cache(maxsize=4096)
def _may_be_wide(piece: str, flags: int) -> bool:
    r"""Whether a single-character piece can match a character beyond ASCII.

    Read from ``re``'s own parse of it, erring towards yes: a category
    (``\w``, ``\d``, ``\s``), a negation, ``.``, a member beyond ASCII, or
    a letter under IGNORECASE (``k`` matches the Kelvin sign, ``s`` the long
    s). A yes only makes a gate pass more texts.
    """
    try:
        items = list(_parser.parse(piece, flags & ~re.VERBOSE))
    except re.error:
        return True
    if len(items) != 1:
        return True
    op, av = items[0]
    caseless = bool(flags & re.IGNORECASE)
    if op is sre.LITERAL:
        return _beyond_ascii(av, caseless)
    if op is not sre.IN:
        return True  # ., a negated literal, anything else
    for item, value in av:
        if item is sre.LITERAL:
            if _beyond_ascii(value, caseless):
                return True
        elif item is sre.RANGE:
            low, high = value
            if high >= 128 or caseless and any(
                    chr(c).isalpha() for c in range(low, high + 1)):
                return True
        else:  # a negation, a category
            return True
    return False


@lru_cache(maxsize=1024)
def rewrite(source: str, flags: int, every: bool = False, wide: bool = False) -> str:
    r"""The source with every single-character piece written as its ASCII class.

    Pieces inside a case-sensitive scope (``(?-i:...)``) and pieces whose
    class is the same either way (digits, blanks, ``\\d``) are left as they
    are, so the rewrite stays readable in a traceback; ``every`` writes
    them too (and ``.``, and ``{,n}`` as ``{0,n}``), so that the result
    means the same to another engine (:mod:`~deid_pipeline.tagger.rules.gate`)
    on ASCII text. ``wide`` (with ``every``) is for any text, and matches
    wherever the source can: a piece that can match a character beyond ASCII
    also matches every such character, and word boundaries (which engines
    read differently beyond ASCII) are dropped.
    """
    out: list[str] = []
    # The flags in force at each open group, innermost last.
    scopes = [flags]
    i = 0
    n = len(source)
    while i < n:
        c = source[i]
        here = scopes[-1]
        if c == "(":
            if source.startswith("(?P=", i):
                end = source.index(")", i) + 1
                ref = source[i:end]
                # A back-reference compares case-blind under IGNORECASE.
                out.append(f"(?i:{ref})" if here & re.IGNORECASE else ref)
                i = end
                continue
            if source.startswith("(?#", i):
                i = source.index(")", i) + 1
                continue
            scoped = _SCOPED_FLAGS.match(source, i)
            if scoped is not None:
                add, remove = scoped.group(1), scoped.group(2) or ""
                inner = here
                for letter in add:
                    inner |= getattr(re, letter.upper())
                for letter in remove:
                    inner &= ~getattr(re, letter.upper())
                if inner & ~(re.IGNORECASE | re.UNICODE | re.MULTILINE) != (
                        here & ~(re.IGNORECASE | re.UNICODE | re.MULTILINE)):
                    raise UnsupportedError("scoped flags other than i and m")
                # The rewritten pattern is case-sensitive; keep any other
                # scoped flag as written, drop the i.
                kept_add = add.replace("i", "")
                kept_remove = remove.replace("i", "")
                opener = ("(?" + kept_add + (f"-{kept_remove}" if kept_remove else "")
                          + ":")
                out.append("(?:" if opener == "(?:" or opener == "(?-:" else opener)
                scopes.append(inner)
                i = scoped.end()
                continue
            if source.startswith("(?P<", i):
                end = source.index(">", i) + 1
            elif source.startswith(("(?<=", "(?<!"), i):
                end = i + 4
            elif source.startswith(("(?:", "(?=", "(?!", "(?>"), i):
                end = i + 3
            elif source.startswith("(?", i):
                raise UnsupportedError("inline global flags or conditional group")
            else:
                end = i + 1
            out.append(source[i:end])
            scopes.append(here)
            i = end
            continue
        if c == ")":
            if len(scopes) == 1:
                raise UnsupportedError("unbalanced ')'")
            scopes.pop()
            out.append(c)
            i += 1
            continue
        if c in "|^$*+?" or c == "." and not every:
            out.append(c)
            i += 1
            continue
        if c == "{":
            quantifier = re.compile(r"\{\d*(?:,\d*)?\}[?+]?").match(source, i)
            if quantifier is not None:
                written = quantifier.group()
                if every and written[1] == ",":  # {,n} is {0,n} to re only
                    written = "{0," + written[2:]
                out.append(written)
                i = quantifier.end()
                continue
        if c == "\\":
            end = _escape_end(source, i)
            if source[i + 1] in _ZERO_WIDTH_ESCAPES:
                if not (wide and source[i + 1] in "bB"):
                    out.append(source[i:end])
                i = end
                continue
        elif c == "[":
            end = _class_end(source, i)
        else:
            end = i + 1
        piece = source[i:end]
        blind = _accepts(piece, here)
        if not every and blind == _accepts(piece, here & ~re.IGNORECASE):
            out.append(piece)
        elif wide and _may_be_wide(piece, here):
            out.append(f"(?:{as_class(blind)}|{_BEYOND_ASCII})" if blind
                       else _BEYOND_ASCII)
        else:
            out.append(as_class(blind))
        i = end
    if len(scopes) != 1:
        raise UnsupportedError("unbalanced '('")
    return "".join(out)


def ascii_exact(regex: re.Pattern[str]) -> re.Pattern[str]:
    """``regex`` compiled case-sensitively, the same on ASCII text; else itself.

    The result's groups are the original's, by number and by name. It is
    only ever used on a text for which ``text.isascii()`` holds.
    """
    if not regex.flags & re.IGNORECASE and "(?i" not in regex.pattern:
        return regex
    if regex.flags & (re.VERBOSE | re.LOCALE | re.ASCII):
        return regex
    source = regex.pattern
    leading = _LEADING_FLAGS.match(source)
    if leading is not None:  # already in regex.flags
        source = source[leading.end():]
    try:
        source = rewrite(source, regex.flags & ~re.UNICODE)
        fast = compile_regex(source, regex.flags & ~(re.IGNORECASE | re.UNICODE))
    except (UnsupportedError, re.error):
        return regex
    if fast.groupindex != regex.groupindex or fast.groups != regex.groups:
        return regex
    return fast


def gate_source(pattern: str, flags: int, wide: bool = False) -> str | None:
    """``pattern`` as only explicit classes, for :mod:`.gate`; None if not.

    Read on ASCII text only, where it matches where ``pattern`` does; or,
    ``wide``, on any text as UTF-8, where it matches wherever ``pattern`` does.
    """
    if flags & (re.VERBOSE | re.LOCALE):
        return None
    leading = _LEADING_FLAGS.match(pattern)
    if leading is not None:  # already in flags
        pattern = pattern[leading.end():]
    try:
        return rewrite(pattern, flags & ~re.UNICODE, True, wide)
    except (UnsupportedError, re.error):
        return None
