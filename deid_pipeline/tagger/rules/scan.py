r"""Faster scans of the recognizers' expressions on ASCII text, same matches.

Why: a recognizer's expression starts with zero-width guards, so CPython's
``re`` finds no first character to skip ahead to and tries a match at every
position of the text; and under ``IGNORECASE`` letters compile to case-blind
literal ops, which the alternation op's quick first-character check does not
look at (it only skips alternatives that start with a plain literal or a
character set), so every alternative is entered wherever a guard holds.
The time went into the regex engine, not into the few matches (issue 45).

On a text of ASCII characters only, every single-character piece of a
pattern matches exactly the ASCII characters it matches, whatever case flags
compiled it, so each piece can be written as the explicit class of those
characters (``[dD]``) and the whole compiled case-sensitively
(:func:`ascii_exact`): the same matches and groups, and alternations that
skip on their first character. The classes are not written by hand: each
piece is asked of ``re`` itself, for each of the 128 ASCII characters. Then
the characters where a match can start, or that can stand right before one,
are read from the parsed pattern (:func:`_first`, :func:`_before`), and
:class:`Scanner` lets ``re`` skip in C to those only, finding the matches
``finditer`` finds. Text that is not ASCII keeps the original expression
(case-blind matching of ``ſ``, ``K`` or ``İ`` is ``re``'s business).

``tests/test_rules_scan.py`` holds the proof: scan equals ``finditer`` on
real, case-changed, hostile and generated texts, and every match starts
where the sets say.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache

# ``re._parser`` is private, but the only way to read a pattern as ``re`` does;
# any surprise from it means the plain expression is used.
from re import _compiler, _parser
from re import _constants as sre  # noqa: N812 - re's own name for it

from deid_pipeline.runtime import data_cache
from deid_pipeline.runtime.kept_table import KeptTable
from deid_pipeline.runtime.regex_programs import compile_regex
from deid_pipeline.tagger.rules.ascii_classes import (
    ASCII,
    UnsupportedError,
    as_class,
    ascii_exact,
    rewrite,
)
from deid_pipeline.tagger.rules.gate import gate_for

# ------------------------------------------------------------ candidate scan

_ALL = frozenset(ASCII)
_ONE_CHAR = (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _one_char(op: object, av: object, state: object, flags: int) -> frozenset[str]:
    """The ASCII characters a single-character op matches (asked of ``re``)."""
    key = (op, repr(av), flags)
    if key not in _ONE_CHAR_SETS:
        _ONE_CHAR_SETS[key] = _one_char_uncached(op, av, state, flags)
    return _ONE_CHAR_SETS[key]


_ONE_CHAR_SETS: dict[tuple[object, str, int], frozenset[str]] = {}


def _one_char_uncached(op: object, av: object, state: object, flags: int
                       ) -> frozenset[str]:
    regex = _compiler.compile(_parser.SubPattern(state, [(op, av)]), flags)
    return frozenset(c for c in ASCII if regex.fullmatch(c))


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
@lru_cache(maxsize=4096)
def _weight(chars: frozenset[str]) -> float:
    return sum(2.3 if c.islower() else 15 if c == " " else 2 if c == "\n"
               else 0.4 if c.isupper() else 0.5 if c.isdigit()
               else 0.2 if c.isprintable() else 0 for c in chars)


# An alternative that starts with no character: skipped without being entered.
_NEVER = r"[^\s\S]"

Guarded = list[tuple[str, list[tuple[str, str]]]]


def dispatch_twin(guarded: Guarded, flags: int,
                  keep: frozenset[str] | None = None) -> re.Pattern[str] | None:
    r"""A recognizer's expression for ASCII text, patterns skipped by first character.

    ``guarded`` is the recognizer's expression in parts: guards, each with
    its patterns as (wrapper group name, body), joined as
    ``guard(?:(?P<p0>body)|...)|...``. Here each pattern is instead
    ``[S](?<=(?=(?P<p0>body))[\s\S])`` with ``S`` the characters it can
    start with: an alternation skips an alternative that starts with a set
    without entering it, and the lookbehind reads the pattern from where it
    starts. Its groups and which pattern matched (the last group to close)
    are the expression's; where its match ends is not: the wrapper group's
    end is. Patterns not in ``keep`` (None: all) never match; their groups
    are still there, so every group keeps its number. None: some part
    cannot be rewritten.
    """
    cased = flags & ~(re.IGNORECASE | re.UNICODE)
    parts = []
    try:
        for guard, items in guarded:
            guard_fast = rewrite(guard, flags & ~re.UNICODE)
            alternatives = []
            starts: set[str] = set()
            for name, body in items:
                plain = rewrite(f"(?P<{name}>{body})", flags & ~re.UNICODE)
                if keep is not None and name not in keep:
                    alternatives.append(_NEVER + plain)
                    continue
                first, empty, _ = _sets(guard_fast + plain, cased)
                starts |= first if not empty else _ALL
                alternatives.append(_skipping(first, empty, plain))
            group = f"{guard_fast}(?:{'|'.join(alternatives)})"
            if not starts:  # every pattern left out: never entered
                parts.append(_NEVER + group)
            else:
                parts.append(_skipping(frozenset(starts), False, group))
        return compile_regex("|".join(parts), cased)
    except (UnsupportedError, re.error):
        return None


def _skipping(first: frozenset[str], empty: bool, source: str) -> str:
    """``source`` as an alternative an alternation skips unless ``first`` is there.

    As written when it can be empty, starts almost anywhere, or has a
    back-reference (refused in a lookbehind).
    """
    if (empty or not first or _weight(first) >= _weight(_ALL) * 0.9
            or _GROUP_REF.search(source) or _OTHER_REFS.search(source)):
        return source
    return f"{as_class(first)}(?<=(?={source})[\\s\\S])"


@lru_cache(maxsize=1024)
def _sets(source: str, flags: int) -> tuple[frozenset[str], bool, frozenset[str]]:
    """:func:`_first` and :func:`_before` of a case-sensitive ``source``."""
    parsed = _parser.parse(source, flags)
    first, empty = _first(parsed, parsed.state, flags)
    if parsed.getwidth()[0] == 0:
        empty = True
    return first, empty, _before(parsed, parsed.state, flags)


# A try of the twin where a scan stops, in plain tries of it (measured on the
# nursing notes: about two).
_TRY = 2


def _cost(sets: list[tuple[frozenset[str], frozenset[str]]], late: list[bool]
          ) -> float:
    """What two scans cost, patterns split by ``late``, in plain tries of the twin.

    Each stop of a scan by first character tries the twin (``_TRY`` plain
    tries); a scan by preceding character stops at each of its
    characters for a check of the next (about one), and tries the twin where
    that holds.
    """
    first = frozenset().union(*(f for (f, _), b in zip(sets, late) if not b))
    before = frozenset().union(*(p for (_, p), b in zip(sets, late) if b))
    second = frozenset().union(*(f for (f, _), b in zip(sets, late) if b))
    return _TRY * _weight(first) + _weight(before) * (
        1 + _TRY * _weight(second) / _weight(_ALL))


def _cheapest(sets: list[tuple[frozenset[str], frozenset[str]]]) -> list[bool]:
    """Which patterns to scan by preceding character (True) rather than by first.

    The split whose scans cost least (:func:`_cost`), found by moving one
    pattern at a time from the best of a few (all by first, all by
    preceding, each its own cheaper way, or by preceding all whose set is
    within one pattern's); a speed matter only, any split is exact.
    """
    starts = [[False] * len(sets), [True] * len(sets),
              [_TRY * _weight(f) > _weight(p) for f, p in sets]]
    # Or each preceding set, with every pattern whose own is within it.
    starts += [[p <= shared for _, p in sets] for shared in {p for _, p in sets}]
    late = min(starts, key=lambda split: _cost(sets, split))
    improved = True
    while improved:
        improved = False
        for i in range(len(sets)):
            moved = [*late[:i], not late[i], *late[i + 1:]]
            if _cost(sets, moved) < _cost(sets, late):
                late, improved = moved, True
    return list(late)


# Bumped when a plan's shape changes; the key also holds this module's
# bytes, so a changed way of planning never reads an old plan.
_PLAN_FORMAT = 1


def _plans_key() -> str:
    return (f"{_PLAN_FORMAT}\0{sys.version}\0"
            f"{data_cache.content_key([__file__])}")


# Scan plans by a digest of what they were planned from (a few hundred per
# process, English and Spanish rules and the variants texts need).
PLANS = KeptTable("scan-plans", _plans_key, 3000)


def _plan(regex: re.Pattern[str], guarded: Guarded | None, flags: int) -> tuple:
    """How :class:`Scanner` scans ``regex``: expressions as sources, sets as strings.

    ``(fast, fast flags, twin, twin flags, twin ends at its last group,
    parts as (source, flags, offset, exact), try the twin at 0, first
    characters, characters before)``; ``fast`` None is ``regex`` itself,
    ``twin`` None is ``fast``. Plain data, so that :data:`PLANS` can keep it.
    """
    fast = ascii_exact(regex)
    own = None if fast is regex else (fast.pattern, fast.flags)
    plain = (*(own or (None, 0)), None, 0, False, (), False, "".join(sorted(_ALL)),
             "".join(sorted(_ALL)))
    if fast is regex and regex.flags & re.IGNORECASE:
        return plain  # not rewritten
    cased = fast.flags
    twin, at_last = fast, False
    units: list[tuple[str | None, frozenset[str], bool, frozenset[str]]] = []
    try:
        if guarded is not None:
            made = dispatch_twin(guarded, flags)
            if made is not None and (made.groupindex, made.groups) == (
                    regex.groupindex, regex.groups):
                twin, at_last = made, True
                units = [(name, *_sets(rewrite(guard, flags & ~re.UNICODE)
                                       + rewrite(f"(?P<{name}>{body})",
                                                  flags & ~re.UNICODE), cased))
                         for guard, items in guarded for name, body in items]
        if not units:
            units = [(None, *_sets(fast.pattern, cased))]
    except Exception:  # noqa: BLE001 - an unread pattern keeps finditer
        units = []
    twin_source = None if twin is fast else (twin.pattern, twin.flags)
    plain = (*plain[:2], *(twin_source or (None, 0)), at_last, *plain[5:])
    if not units:
        return plain
    if any(empty for _, _, empty, _ in units):
        return plain  # an empty match: finditer's rules for it are its own
    first = frozenset().union(*(first for _, first, _, _ in units))
    before = frozenset().union(*(before for _, _, _, before in units))
    sets_found = (*plain[:7], "".join(sorted(first)), "".join(sorted(before)))
    late = _cheapest([(u[1], u[3]) for u in units])
    by_first = [u for u, b in zip(units, late) if not b]
    by_before = [u for u, b in zip(units, late) if b]
    chars = (frozenset().union(*(u[1] for u in by_first)),
             frozenset().union(*(u[3] for u in by_before)))
    if _cost([(u[1], u[3]) for u in units], late) >= _weight(_ALL) * Scanner.WORTH:
        return sets_found
    # Two scans whose patterns can start with one character: the twin
    # decides which is found there.
    alone = not (by_first and by_before) or not (
        frozenset().union(*(u[1] for u in by_first))
        & frozenset().union(*(u[1] for u in by_before)))
    parts = []
    at_zero = False
    for offset, group, found in ((0, by_first, chars[0]), (1, by_before, chars[1])):
        if not group:
            continue
        body = twin.pattern
        if len(group) < len(units):
            narrow = dispatch_twin(guarded, flags, frozenset(u[0] for u in group))
            if narrow is None:
                return sets_found
            body = narrow.pattern
        exact = alone and at_last
        # The match at p, read from inside a lookbehind one character on,
        # so that re's first-character scan (only for a leading set)
        # applies; groups matched in a lookaround are kept. A
        # back-reference, refused there, is read as a superset.
        if _GROUP_REF.search(body):
            body, exact = _without_refs(body, _parser.parse(body, cased)), False
        if _OTHER_REFS.search(body):
            return sets_found
        lead = as_class(found)
        if offset == 1:  # the one before, then one a pattern starts with
            lead += as_class(frozenset().union(*(u[1] for u in group)))
            at_zero = True
        parts.append((f"{lead}(?<=(?={body})[\\s\\S])", cased, offset, exact))
    return (*sets_found[:5], tuple(parts), at_zero, *sets_found[7:])


class _Part:
    """One scan: a set of characters re skips to, and the expression after it.

    ``offset`` is 0 when the character found is where the match starts (by
    first character), 1 when it is the one before (by preceding character).
    ``exact``: the scan's own match has the expression's groups.
    """

    __slots__ = ("search", "offset", "exact")

    def __init__(self, regex: re.Pattern[str], offset: int, exact: bool) -> None:
        self.search = regex.search
        self.offset = offset
        self.exact = exact


class Scanner:
    """``finditer`` of one expression, faster on ASCII text, the same matches.

    On a text that is ASCII only, a case-sensitive twin of the expression
    (:func:`ascii_exact`, or a recognizer's :func:`dispatch_twin`) is run,
    and not at every position: ``re`` scans in C for a character that a
    match can start with (by first character), or that can stand right
    before one (by preceding character), and tries the twin only there.
    Where a match can start is read from the pattern itself (:func:`_first`,
    :func:`_before`), pattern by pattern for a recognizer, never from a list
    kept by hand; each pattern is scanned the cheaper way (by how often the
    characters occur, a speed matter only), and the scans' nearest place
    wins. Text that is not ASCII gets the plain expression.

    Each match found is the expression's own match at that position, as
    ``finditer`` finds them: left to right, the next tried where the last
    ended. For a plain expression it is ``re``'s match of it; for a
    recognizer's twin its groups are the expression's and its whole span
    (group 0) is not: callers read spans from named groups only.
    """

    # Scans are used when they cost less than this share of trying the twin
    # at every character (see _cost); otherwise it is tried everywhere.
    WORTH = 1.0

    def __init__(self, regex: re.Pattern[str], guarded: Guarded | None = None,
                 flags: int = 0, shares: Scanner | None = None) -> None:
        """Prepare the scans of ``regex`` (built once, never per text).

        ``guarded`` and ``flags``: ``regex`` is a recognizer's expression
        of these parts (see :func:`dispatch_twin`), its wrapper groups the
        last to close in each match. The plan of the scans is read from
        :data:`PLANS` when an earlier process made it (reading the patterns
        cost about 0.4 CPU-s of every process's start-up). A text the
        :class:`~.gate.Gate` of ``regex`` (or of ``shares``, a scanner that
        matches wherever this one does) rejects is not scanned.
        """
        self.regex = regex
        self.gate = gate_for(regex) if shares is None else shares.gate
        key = hashlib.sha256(repr((regex.pattern, regex.flags, guarded, flags,
                                   self.WORTH)).encode()).hexdigest()
        plan = PLANS.get(key)
        new = plan is None
        try:
            self._follow(plan if plan is not None else _plan(regex, guarded, flags))
        except (TypeError, ValueError, re.error):  # a damaged plan: made again
            plan, new = None, True
            self._follow(_plan(regex, guarded, flags))
        PLANS.use(key, self._plan, new)

    def _follow(self, plan: tuple) -> None:
        """Take the scans a plan (:func:`_plan`) says, its expressions compiled."""
        (fast, fast_flags, twin, twin_flags, at_last, parts, at_zero, first,
         before) = plan
        self._plan = plan
        self.fast = self.regex if fast is None else compile_regex(fast, fast_flags)
        self._twin = self.fast if twin is None else compile_regex(twin, twin_flags)
        # Where a match of the twin ends: its last group's end, or its end.
        self._at_last = bool(at_last)
        self._parts: tuple[_Part, ...] = tuple(
            _Part(compile_regex(source, part_flags), int(offset), bool(exact))
            for source, part_flags, offset, exact in parts)
        self._at_zero = bool(at_zero)
        # Where a match can start on ASCII text, read from the pattern: its
        # first character, and the one before it (tests check both hold).
        self.first = frozenset(first)
        self.before = frozenset(before)

    @property
    def scans_by_character(self) -> bool:
        """Whether ASCII text is scanned by character.

        Never for an expression that can match empty: it keeps ``finditer``'s
        own rules for those.
        """
        return bool(self._parts)

    def end_of(self, match: re.Match[str]) -> int:
        """Where a match of the twin ends."""
        return match.end(match.lastindex) if self._at_last else match.end()

    def exists(self, text: str) -> bool:
        """Whether the expression matches anywhere in ``text`` (``search``)."""
        if self.gate is not None and not self.gate.passes(text):
            return False
        if not text.isascii():
            return self.regex.search(text) is not None
        return next(self.finditer(text), None) is not None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """The matches of the expression in ``text``, as ``finditer`` finds them."""
        if self.gate is not None and not self.gate.passes(text):
            return
        if not text.isascii():
            yield from self.regex.finditer(text)
            return
        if not self._parts and not self._at_last:
            yield from self._twin.finditer(text)
            return
        first, end = self.cursor(text), self.end_of
        pos = 0
        while (found := first(pos))[1] is not None:
            start, match = found
            yield match
            pos = max(end(match), start + 1)

    def cursor(self, text: str) -> Callable[[int], tuple[int, re.Match[str] | None]]:
        """``first(pos)``: where the first match at or after ``pos`` is, and it.

        For an ASCII ``text`` whose gate passed; ``pos`` never decreasing.
        The match is the expression's own there (groups as :meth:`finditer`'s);
        ``(len(text) + 1, None)`` when there is none. :meth:`finditer` walks
        it from each match's end; a recognizer's patterns scanned apart
        (:class:`~.base.PatternRecognizer`) walk several from one place.
        """
        twin, parts = self._twin, self._parts
        nowhere = len(text) + 1
        if not parts:
            def first_plain(pos: int) -> tuple[int, re.Match[str] | None]:
                match = twin.search(text, pos)
                return (nowhere, None) if match is None else (match.start(), match)
            return first_plain
        # Each scan's next place and its match; valid while at or after pos.
        found: list[tuple[int, re.Match[str] | None]] = [(-1, None)] * len(parts)
        at_zero = self._at_zero

        def first(pos: int) -> tuple[int, re.Match[str] | None]:
            if at_zero and pos == 0:  # no character before the first: no scan finds it
                match = twin.match(text, 0)
                if match is not None:
                    return 0, match
            while True:
                best = nowhere
                chosen = 0
                for k, part in enumerate(parts):
                    place = found[k]
                    if place[0] < pos:
                        scan = part.search(text, max(pos - part.offset, 0))
                        place = found[k] = ((scan.start() + part.offset, scan)
                                            if scan is not None else (nowhere, None))
                    if place[0] < best:
                        best, chosen = place[0], k
                if best == nowhere:
                    return nowhere, None
                match = found[chosen][1]
                if not parts[chosen].exact:
                    match = twin.match(text, best)
                    if match is None:  # the superset's place: no match there
                        pos = best + 1
                        continue
                return best, match

        return first
