r"""Faster scans of the recognizers' expressions on ASCII text, same matches.

Why: under ``IGNORECASE`` CPython's ``re`` compiles letters to case-blind
literal ops, which the alternation op's quick first-character check does not
look at (it only skips alternatives that start with a plain literal or a
character set), so every alternative of a big alternation is entered at every
guarded position. On a text of ASCII characters only, every single-character
piece of a pattern matches exactly the ASCII characters it matches, whatever
case flags compiled it, so each piece can be written as the explicit class of
those characters (``[dD]``) and the whole compiled case-sensitively: the same
matches, the same groups, and alternations that skip on their first character.

The classes are not written by hand: :func:`ascii_exact` reads a pattern's
source piece by piece and asks ``re`` itself, for each piece and each of the
128 ASCII characters, whether the piece matches it under the pattern's flags.
Text that is not ASCII keeps the original expression (case-blind matching of
``ſ``, ``K`` or ``İ`` is ``re``'s business, not ours).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

# ``re._parser`` is private, but the only way to read a pattern as ``re`` does;
# any surprise from it means the plain expression is used.
from re import _compiler, _parser
from re import _constants as sre  # noqa: N812 - re's own name for it

_ASCII = tuple(chr(c) for c in range(128))
# Escapes that match no character (positions): kept as written.
_ZERO_WIDTH_ESCAPES = frozenset("AbBZ")


class _UnsupportedError(Exception):
    """A construct the rewrite does not handle; the original expression is kept."""


@lru_cache(maxsize=4096)
def _accepts(piece: str, flags: int) -> frozenset[str]:
    """The ASCII characters one single-character ``piece`` matches under ``flags``."""
    regex = re.compile(piece, flags)
    return frozenset(c for c in _ASCII if regex.fullmatch(c))


def _class_char(c: str) -> str:
    """``c`` as written inside a class."""
    if c in "\\]^-[":
        return "\\" + c
    return c if c.isprintable() and c != " " else f"\\x{ord(c):02x}"


def _as_class(chars: frozenset[str]) -> str:
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
        raise _UnsupportedError("trailing backslash")
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
            raise _UnsupportedError("bad \\N")
        return close + 1
    if c == "0":
        j = i + 2
        while j < len(source) and j < i + 4 and source[j] in "01234567":
            j += 1
        return j
    if c.isdigit():
        raise _UnsupportedError("numbered back-reference")
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
            raise _UnsupportedError("'[' inside a class")
        if c == "]":
            return j + 1
        j += 1
    raise _UnsupportedError("unterminated class")


_LEADING_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_SCOPED_FLAGS = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]+))?:")


def _rewrite(source: str, flags: int) -> str:
    r"""The source with every single-character piece written as its ASCII class.

    Pieces inside a case-sensitive scope (``(?-i:...)``) and pieces whose
    class is the same either way (digits, blanks, ``\\d``) are left as they
    are, so the rewrite stays readable in a traceback.
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
                    raise _UnsupportedError("scoped flags other than i and m")
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
                raise _UnsupportedError("inline global flags or conditional group")
            else:
                end = i + 1
            out.append(source[i:end])
            scopes.append(here)
            i = end
            continue
        if c == ")":
            if len(scopes) == 1:
                raise _UnsupportedError("unbalanced ')'")
            scopes.pop()
            out.append(c)
            i += 1
            continue
        if c in "|^$*+?.":
            out.append(c)
            i += 1
            continue
        if c == "{":
            quantifier = re.compile(r"\{\d*(?:,\d*)?\}[?+]?").match(source, i)
            if quantifier is not None:
                out.append(quantifier.group())
                i = quantifier.end()
                continue
        if c == "\\":
            end = _escape_end(source, i)
            if source[i + 1] in _ZERO_WIDTH_ESCAPES:
                out.append(source[i:end])
                i = end
                continue
        elif c == "[":
            end = _class_end(source, i)
        else:
            end = i + 1
        piece = source[i:end]
        blind = _accepts(piece, here)
        if blind == _accepts(piece, here & ~re.IGNORECASE):
            out.append(piece)
        else:
            out.append(_as_class(blind))
        i = end
    if len(scopes) != 1:
        raise _UnsupportedError("unbalanced '('")
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
        source = _rewrite(source, regex.flags & ~re.UNICODE)
        fast = re.compile(source, regex.flags & ~(re.IGNORECASE | re.UNICODE))
    except (_UnsupportedError, re.error):
        return regex
    if fast.groupindex != regex.groupindex or fast.groups != regex.groups:
        return regex
    return fast


# ------------------------------------------------------------ candidate scan

_ALL = frozenset(_ASCII)
_ONE_CHAR = (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _one_char(op: object, av: object, state: object, flags: int) -> frozenset[str]:
    """The ASCII characters a single-character op matches (asked of ``re``)."""
    regex = _compiler.compile(_parser.SubPattern(state, [(op, av)]), flags)
    return frozenset(c for c in _ASCII if regex.fullmatch(c))


def _first(items: list, state: object, flags: int) -> tuple[frozenset[str], bool]:
    """The characters a match of ``items`` can start with; whether it can be empty.

    Assertions are skipped (a superset); any op not known here gives every
    character and "maybe empty", so the answer is never too small.
    """
    found: set[str] = set()
    for op, av in items:
        if op in _ONE_CHAR:
            return frozenset(found | _one_char(op, av, state, flags)), False
        if op is sre.BRANCH:
            chars, empty = set(), False
            for alternative in av[1]:
                more, maybe = _first(alternative, state, flags)
                chars |= more
                empty |= maybe
        elif op is sre.SUBPATTERN:
            _, add, remove, sub = av
            chars, empty = _first(sub, state, (flags | add) & ~remove)
        elif op is sre.ATOMIC_GROUP:
            chars, empty = _first(av, state, flags)
        elif op in _REPEATS:
            low, _, sub = av
            chars, empty = _first(sub, state, flags)
            empty = empty or low == 0
        elif op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        else:
            return _ALL, True
        found |= chars
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _before(items: list, state: object, flags: int) -> frozenset[str]:
    r"""The characters that can stand right before a match of ``items`` (not at 0).

    Read from the lookbehinds the match must pass before it consumes
    anything: ``(?<![\\w.])`` leaves every character but those, ``(?<=[a-z]-)``
    only ``-``. Every branch of an alternation must say; anything else leaves
    every character.
    """
    for op, av in items:
        if op is sre.ASSERT_NOT and av[0] == -1 and len(av[1]) == 1 \
                and av[1][0][0] in _ONE_CHAR:
            return _ALL - _one_char(*av[1][0], state, flags)
        if op is sre.ASSERT and av[0] == -1 and av[1] and av[1][-1][0] in _ONE_CHAR:
            return _one_char(*av[1][-1], state, flags)
        if op is sre.BRANCH:
            chars: set[str] = set()
            for alternative in av[1]:
                chars |= _before(alternative, state, flags)
            return frozenset(chars)
        if op is sre.SUBPATTERN:
            return _before(av[3], state, (flags | av[1]) & ~av[2])
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        return _ALL
    return _ALL


_GROUP_REF = re.compile(r"\(\?P=(\w+)\)")
_OTHER_REFS = re.compile(r"\(\?\(|\\[1-9]")


def _group_widths(items: list, widths: dict[int, tuple[int, int]]) -> None:
    """Record the least and most characters each numbered group can match."""
    for op, av in items:
        if op is sre.SUBPATTERN:
            if av[0] is not None:
                widths[av[0]] = av[3].getwidth()
            _group_widths(av[3], widths)
        elif op is sre.BRANCH:
            for alternative in av[1]:
                _group_widths(alternative, widths)
        elif op in _REPEATS:
            _group_widths(av[2], widths)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            _group_widths(av[1], widths)
        elif op is sre.ATOMIC_GROUP:
            _group_widths(av, widths)


def _without_refs(source: str, parsed: _parser.SubPattern) -> str:
    """``source`` with each ``(?P=name)`` as any run of its group's widths.

    A superset: whatever text the group matched, the run matches it. re
    refuses a back-reference inside a lookbehind, and the scan by first
    character reads the expression from inside one.
    """
    widths: dict[int, tuple[int, int]] = {}
    _group_widths(parsed, widths)
    names = parsed.state.groupdict

    def run(ref: re.Match[str]) -> str:
        low, high = widths[names[ref.group(1)]]
        return f"[\\s\\S]{{{low},{high}}}"

    return _GROUP_REF.sub(run, source)


# Roughly how often each ASCII character occurs in English notes, in percent:
# a scan stops at every occurrence of its set, so the sum is its cost.
def _weight(chars: frozenset[str]) -> float:
    return sum(2.3 if c.islower() else 15 if c == " " else 2 if c == "\n"
               else 0.4 if c.isupper() else 0.5 if c.isdigit()
               else 0.2 if c.isprintable() else 0 for c in chars)


def dispatch_twin(guarded: list[tuple[str, list[tuple[str, str]]]], flags: int
                  ) -> re.Pattern[str] | None:
    r"""A recognizer's expression for ASCII text, patterns skipped by first character.

    ``guarded`` is the recognizer's expression in parts: guards, each with
    its patterns as (wrapper group name, body), joined as
    ``guard(?:(?P<p0>body)|...)|...``. Here each pattern is instead
    ``[S](?<=(?=(?P<p0>body))[\s\S])`` with ``S`` the characters it can
    start with: an alternation skips an alternative that starts with a set
    without entering it, and the lookbehind reads the pattern from where it
    starts. Its groups and which pattern matched (the last group to close)
    are the expression's; where its match ends is not: the wrapper group's
    end is. None: some part cannot be rewritten.
    """
    cased = flags & ~(re.IGNORECASE | re.UNICODE)
    parts = []
    try:
        for guard, items in guarded:
            alternatives = []
            for name, body in items:
                plain = _rewrite(f"(?P<{name}>{body})", flags & ~re.UNICODE)
                alone = re.compile(_rewrite(guard, flags & ~re.UNICODE) + plain, cased)
                parsed = _parser.parse(alone.pattern, cased)
                first, empty = _first(parsed, parsed.state, cased)
                skipping = f"{_as_class(first)}(?<=(?={plain})[\\s\\S])"
                if empty or not first or _weight(first) >= _weight(_ALL) * 0.9:
                    alternatives.append(plain)
                    continue
                try:
                    re.compile(skipping, cased)
                except re.error:  # a back-reference: refused in a lookbehind
                    alternatives.append(plain)
                    continue
                alternatives.append(skipping)
            parts.append(f"{_rewrite(guard, flags & ~re.UNICODE)}"
                         f"(?:{'|'.join(alternatives)})")
        return re.compile("|".join(parts), cased)
    except (_UnsupportedError, re.error):
        return None


class Scanner:
    """``finditer`` of one expression, faster on ASCII text, the same matches.

    On a text that is ASCII only, :func:`ascii_exact`'s case-sensitive twin
    is run, and not at every position: ``re`` scans in C for a character
    that a match can start with (``first``), or that can stand right before
    one (``before``), and tries the expression only there. Where a match
    starts is known from the pattern itself (:func:`_first`, :func:`_before`),
    never from a list kept by hand; the choice of the two is by how often
    their characters occur, a speed matter only.

    Each match found is the expression's own match at that position, as
    ``finditer`` finds them: left to right, the next tried where the last
    ended. Its groups are the expression's; its whole span (group 0) is not:
    callers read spans from named groups only.
    """

    # A scan is used when the characters it stops at are less than this share
    # of a text's (by _weight); otherwise the twin is tried everywhere.
    WORTH = 0.5

    def __init__(self, regex: re.Pattern[str],
                 twin: re.Pattern[str] | None = None) -> None:
        """Prepare the scans of ``regex`` (built once, never per text).

        ``twin``: a :func:`dispatch_twin` of it, whose matches end where
        their last group to close ends.
        """
        self.regex = regex
        self.fast = ascii_exact(regex)
        if twin is not None and (twin.groupindex != regex.groupindex
                                 or twin.groups != regex.groups):
            twin = None
        self._twin = twin if twin is not None else self.fast
        # Where a match of the twin ends: its last group's end, or its end.
        self._at_last = twin is not None
        self._by_first: re.Pattern[str] | None = None
        self._by_before: re.Pattern[str] | None = None
        self._exact = True
        # Where a match can start on ASCII text, read from the pattern: its
        # first character, and the one before it (tests check both hold).
        self.first: frozenset[str] = _ALL
        self.before: frozenset[str] = _ALL
        try:
            parsed = _parser.parse(self.fast.pattern, self.fast.flags)
            low, _ = parsed.getwidth()
            first, empty = _first(parsed, parsed.state, self.fast.flags)
            before = _before(parsed, parsed.state, self.fast.flags)
        except Exception:  # noqa: BLE001 - an unread pattern keeps finditer
            low, empty = 0, True
        # An empty match (finditer's rules for it are its own), a pattern not
        # read or not rewritten: the plain expression, everywhere.
        if low == 0 or empty or not first or (
                self.fast is regex and regex.flags & re.IGNORECASE):
            self._twin, self._at_last = self.fast, False
            return
        self.first, self.before = first, before
        body = self._twin.pattern
        flags = self._twin.flags
        by_before = _weight(before)
        by_first = _weight(first)
        if _OTHER_REFS.search(body):
            by_first = _weight(_ALL)
        if min(by_first, by_before) >= _weight(_ALL) * self.WORTH:
            return
        if by_first <= by_before:
            # The match at p, read from inside a lookbehind one character on,
            # so that re's first-character scan (only for a leading set)
            # applies; groups matched in a lookaround are kept. With a
            # back-reference, a superset is read there and the match is
            # made again at each place it finds.
            self._exact = _GROUP_REF.search(body) is None
            inner = body if self._exact else _without_refs(
                body, _parser.parse(body, flags))
            self._by_first = re.compile(
                f"{_as_class(first)}(?<=(?={inner})[\\s\\S])", flags)
        else:
            self._by_before = re.compile(f"{_as_class(before)}(?={body})", flags)

    def _end(self, match: re.Match[str]) -> int:
        """Where a match of the twin ends."""
        return match.end(match.lastindex) if self._at_last else match.end()

    def exists(self, text: str) -> bool:
        """Whether the expression matches anywhere in ``text`` (``search``)."""
        if not text.isascii():
            return self.regex.search(text) is not None
        if self._by_first is not None:
            return self._by_first.search(text) is not None
        if self._by_before is not None:
            return (self._twin.match(text) is not None
                    or self._by_before.search(text) is not None)
        return self._twin.search(text) is not None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """The matches of the expression in ``text``, as ``finditer`` finds them."""
        if not text.isascii():
            yield from self.regex.finditer(text)
            return
        end = self._end
        pos = 0
        if self._by_first is not None:
            scan = self._by_first.search
            if self._exact:
                while (match := scan(text, pos)) is not None:
                    yield match
                    pos = max(match.end(match.lastindex), match.start() + 1)
                return
            again = self._twin.match
            while (place := scan(text, pos)) is not None:
                match = again(text, place.start())
                if match is None:
                    pos = place.start() + 1
                    continue
                yield match
                pos = max(end(match), match.start() + 1)
            return
        if self._by_before is None and not self._at_last:
            yield from self._twin.finditer(text)
            return
        if self._by_before is None:
            search = self._twin.search
            while (match := search(text, pos)) is not None:
                yield match
                pos = max(end(match), match.start() + 1)
            return
        match = self._twin.match(text, 0)
        if match is not None:
            yield match
            pos = end(match)
        scan = self._by_before.search
        while (match := scan(text, max(pos - 1, 0))) is not None:
            yield match
            pos = max(match.end(match.lastindex), match.start() + 2)
