"""The shared pattern machinery of the rule recognizers.

:class:`Pattern` (one named regular expression and how far it is trusted),
:class:`Hit` (a candidate match seen through its own pattern's groups) and
:class:`PatternRecognizer` (patterns joined into one compiled expression, with
context and negative words and ``validate``/``invalidate`` hooks), plus the
keyword and window helpers every recognizer family uses. The families live in
their own modules; nothing here knows a PHI kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deid_pipeline.labels import check_label
from deid_pipeline.model import PhiSpan
from deid_pipeline.runtime.regex_programs import compile_regex
from deid_pipeline.tagger.rules.gate import Gate
from deid_pipeline.tagger.rules.scan import Scanner
from deid_pipeline.tagger.rules.streams import PatternStreams

_FLAGS = re.IGNORECASE
_GROUP_DEF = re.compile(r"\(\?P<(\w+)>")
_GROUP_REF = re.compile(r"\(\?P=(\w+)\)")
_BLANKS = re.compile(r"\s+")

# Speed guards (see Pattern.guard): where a number, or a word, starts.
_G_NUM = r"(?<!\w)(?=\d)"


# A scan, its group number -> pattern map, and the patterns it scans.
Expression = tuple[Scanner, dict[int, int], tuple[int, ...]]

# ------------------------------------------------------------------ helpers

# The last text asked about: itself, lower-cased, and its answers by words.
_HOLDS: tuple[str, str, dict[tuple[str, ...], bool]] = ("", "", {})


def holds_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether lower-cased ``text`` contains any of ``words`` (lower-case).

    A dozen recognizers ask this of each note, several the same words: the
    text is lower-cased once and each answer kept while the text is the
    last one asked about (lower-casing it for every recognizer was 3% of
    the rules' time, issue 45). One slot, replaced whole: thread-safe.
    """
    global _HOLDS  # noqa: PLW0603 - one slot, replaced whole
    held = _HOLDS
    if held[0] is not text:
        held = _HOLDS = (text, text.lower(), {})
    answer = held[2].get(words)
    if answer is None:
        lower = held[1]
        answer = held[2][words] = any(w in lower for w in words)
    return answer



def _normal_words(words: Iterable[str]) -> set[str]:
    """Lower-case keywords with blank runs collapsed (the form rules.json uses)."""
    return {" ".join(w.lower().split()) for w in words if w.strip()}


def _trie(words: Iterable[str]) -> str:
    """Build one regex matching any of ``words``, factored as a trie.

    A flat alternation of a hundred keywords tries each one at every word
    start; the trie follows only the letters actually there. Longer keywords
    win (``mr no`` over ``mr``) because optional tails are greedy. A blank in
    a keyword matches any run of blanks or none (``mr #`` matches ``MR#``).
    """
    root: dict[str, dict] = {}
    for word in _normal_words(words):
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [(r"[ \t]*" if ch == " " else re.escape(ch)) + emit(child)
                    for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def _word_regex(words: Iterable[str], compounds: bool = True
                ) -> re.Pattern[str] | None:
    """Compile keywords to match as whole words only (``hr`` never in ``three``).

    A boundary is required only on a side where the keyword begins or ends with
    a letter or digit, so ``mr #`` still matches in ``mr#1234``. With
    ``compounds=False`` a keyword that starts a hyphenated word is not that
    word: the negative word ``x`` (times) is not the ``x`` of ``x-ray 8/23``.
    """
    classes: dict[tuple[bool, bool], list[str]] = {}
    for word in _normal_words(words):
        classes.setdefault((word[0].isalnum(), word[-1].isalnum()), []).append(word)
    end = r"(?![a-z0-9])" if compounds else r"(?![a-z0-9]|-[a-z])"
    alts = [(r"(?<![a-z0-9])" if left else "") + f"(?:{_trie(group)})"
            + (end if right else "")
            for (left, right), group in sorted(classes.items())]
    return compile_regex("|".join(alts), _FLAGS) if alts else None


def _window_start(text: str, start: int, width: int) -> int:
    """Return where the ``width`` characters before ``start`` begin on its line.

    The newline search is bounded by ``width``, so a context check costs O(1)
    per candidate even on a line of 100,000 characters.
    """
    lo = max(0, start - width)
    newline = text.rfind("\n", lo, start)
    return newline + 1 if newline >= 0 else lo


def _clause_start(text: str, start: int, width: int) -> int:
    """Like :func:`_window_start`, also stopping at ``. ``, ``; `` and ``(``.

    Negative words count only in the candidate's own clause: in ``pain
    improved. Seen 7/22`` the date is a date.
    """
    lo = _window_start(text, start, width)
    for sep in (". ", "; ", "("):
        i = text.rfind(sep, lo, start)
        if i >= 0:
            lo = i + len(sep)
    return lo


def _window_end(text: str, end: int, width: int) -> int:
    """Return where the ``width`` characters after ``end`` stop on its line."""
    hi = min(len(text), end + width)
    newline = text.find("\n", end, hi)
    return newline if newline >= 0 else hi


# ------------------------------------------------------------ core classes


@dataclass(frozen=True, slots=True)
class Pattern:
    r"""One named regular expression of a recognizer, and how far it is trusted.

    ``needs_context`` patterns (a bare 9-digit SSN, an undelimited phone
    number) fire only with one of the recognizer's context words nearby, or of
    ``context`` when the pattern needs its own. A group named ``phi`` marks
    the part of the match that is PHI (the ID after ``MRN:``); without one,
    the whole match is. ``check_negative`` False exempts unambiguous shapes (a
    date with a four-digit year) from the recognizer's negative words.

    ``guard`` is a zero-width regex that holds wherever a match can start, such
    as ``(?<!\w)(?=\d)`` for a number. It is a speed hint only: consecutive
    patterns with the same guard are tried only where it holds, so a dozen
    date shapes cost one failed check inside a word instead of a dozen.

    ``requires`` are words one of which, in any case, is in every text the
    pattern matches in (``clinic`` for ``Pruitt & Lowe Clinic``). Also a speed
    hint: on an ASCII text without any of them the pattern is left out of the
    expression, which is then tried at every word start with one alternative
    fewer. Plain substrings of the lower-cased text, because a regex search
    (case-blind, or with a lookbehind at every character) cost as much as it
    saved; a non-ASCII text, where case-blind matching differs from
    ``str.lower``, is never spared. They must hold wherever the pattern
    matches, so the spans are the same (``tests/test_rules_requires.py``).
    """

    name: str
    regex: str
    confidence: float = 1.0
    needs_context: bool = False
    context: tuple[str, ...] = ()
    check_negative: bool = True
    guard: str = ""
    requires: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pattern:
        """Build a pattern from its JSON form (``name``, ``regex``, options)."""
        return cls(
            name=str(data["name"]),
            regex=str(data["regex"]),
            confidence=float(data.get("confidence", 1.0)),
            needs_context=bool(data.get("needs_context", False)),
            context=tuple(data.get("context", ())),
            check_negative=bool(data.get("check_negative", True)),
            guard=str(data.get("guard", "")),
            requires=tuple(str(w) for w in data.get("requires", ())),
        )


class Hit:
    """A candidate match, seen through its own pattern's group names.

    A recognizer joins its patterns into one regular expression and renames
    each pattern's groups apart; a hit undoes that, so hooks ask for
    ``hit.group("m")`` whichever pattern matched. ``start``/``end`` are the
    PHI part (group ``phi`` if any), :attr:`whole` the full match. Read
    ``match`` through named groups only: on ASCII text it comes from a scan
    (:class:`~deid_pipeline.tagger.rules.scan.Scanner`) whose group 0 is not
    the pattern's match.
    """

    __slots__ = ("pattern", "match", "start", "end", "_prefix", "_groups")

    def __init__(self, pattern: Pattern, match: re.Match[str], index: int,
                 groups: frozenset[str]) -> None:
        """Wrap ``match`` of ``pattern``, the recognizer's pattern ``index``."""
        self.pattern = pattern
        self.match = match
        self._prefix = f"p{index}_"
        self._groups = groups
        phi = f"p{index}_phi" if "phi" in groups else f"p{index}"
        self.start, self.end = match.span(phi)

    def group(self, name: str) -> str | None:
        """Return the text of group ``name``; None if absent or unmatched."""
        if name not in self._groups:
            return None
        return self.match.group(self._prefix + name)

    def span(self, name: str) -> tuple[int, int]:
        """Offsets of group ``name``; (-1, -1) if absent or unmatched."""
        if name not in self._groups:
            return -1, -1
        return self.match.span(self._prefix + name)

    @property
    def whole(self) -> tuple[int, int]:
        """Offsets of the whole match, keyword included."""
        return self.match.span(self._prefix[:-1])


class PatternRecognizer:
    """Finds one kind of formulaic PHI with compiled patterns and hooks.

    Subclasses override :meth:`validate` (is the value well formed: a real
    date, a possible SSN?), :meth:`invalidate` (does the context make it a
    dose, a blood pressure, a vent setting?) and :meth:`label_for` (PHONE or
    FAX). Context is looked for on the match's own line only, a bounded number
    of characters before (and, for required context, after) it.
    """

    def __init__(self, name: str, label: str, patterns: Sequence[Pattern], *,
                 context: Iterable[str] = (),
                 negative_before: Iterable[str] = (),
                 negative_after: Iterable[str] = (),
                 context_before: int = 40, context_after: int = 20,
                 negative_window: int = 24, prefilter: str | None = None,
                 flags: int = _FLAGS) -> None:
        """Compile ``patterns`` into one regular expression, once.

        ``negative_before`` words in the clause up to ``negative_window``
        characters before a match, or ``negative_after`` words right after it,
        reject it. A text where ``prefilter`` (a fast regex every match must
        contain) finds nothing is skipped without running the patterns.
        """
        if not patterns:
            raise ValueError(f"recognizer {name!r} has no patterns")
        self.name = name
        self.label = check_label(label)
        self.source = f"rules:{name}"
        self.patterns = tuple(patterns)
        self.context_before = context_before
        self.context_after = context_after
        self.negative_window = negative_window
        self._context = _word_regex(context)
        self._pattern_context = {i: _word_regex(p.context)
                                 for i, p in enumerate(self.patterns) if p.context}
        self._negative_before = _word_regex(negative_before, compounds=False)
        after = _trie(negative_after)
        self._negative_after = (
            compile_regex(rf"[ \t]*(?:{after})(?![a-z0-9])", _FLAGS) if after else None)
        self._groups = [frozenset(_GROUP_DEF.findall(p.regex)) for p in self.patterns]
        self.flags = flags
        try:
            self.regex, self._by_index = self.compiled(range(len(self.patterns)))
            self._scanner = self.scan_of(range(len(self.patterns)), self.regex)
            self._prefilter = (Scanner(compile_regex(prefilter, flags)) if prefilter
                               else None)
        except re.error as exc:
            raise ValueError(f"recognizer {name!r}: bad pattern: {exc}") from exc
        for pattern in self.patterns:
            if not all(w and w.isascii() for w in pattern.requires):
                raise ValueError(f"recognizer {name!r}: pattern {pattern.name!r}: "
                                 "requires takes non-empty ASCII words")
        self._requires = tuple((i, tuple(w.lower() for w in p.requires))
                               for i, p in enumerate(self.patterns) if p.requires)
        # The scan of each set of patterns left out, as texts need them.
        self._without: dict[tuple[int, ...], Expression | None] = {}
        self._all = (self._scanner, self._by_index, tuple(range(len(self.patterns))))
        self._streams = PatternStreams(self)

    def expression_source(self, indices: Iterable[int]) -> str:
        """One expression of the patterns at ``indices``, each in its wrapper group.

        (:meth:`_guarded`); compiled with :attr:`flags`.
        """
        return "|".join(
            f"{guard}(?:{'|'.join(f'(?P<{name}>{body})' for name, body in items)})"
            for guard, items in self._guarded(indices))

    def compiled(self, indices: Iterable[int]
                 ) -> tuple[re.Pattern[str], dict[int, int]]:
        """:meth:`expression_source` compiled; group number -> pattern index."""
        regex = compile_regex(self.expression_source(indices), self.flags)
        # The pattern's wrapper group closes last, so lastindex names it.
        by_index = {number: int(name[1:]) for name, number in regex.groupindex.items()
                    if name[1:].isdigit()}
        return regex, by_index

    def _guarded(self, indices: Iterable[int]
                 ) -> list[tuple[str, list[tuple[str, str]]]]:
        """The patterns at ``indices`` by guard: (guard, [(wrapper, body)]).

        Each pattern's groups are renamed apart (``p3_phi``); its wrapper
        group is ``p3``. Consecutive patterns with one guard share it.
        """
        guarded: list[tuple[str, list[tuple[str, str]]]] = []
        for i in indices:
            pattern = self.patterns[i]
            body = _GROUP_DEF.sub(rf"(?P<p{i}_\1>", pattern.regex)
            body = _GROUP_REF.sub(rf"(?P=p{i}_\1)", body)
            if guarded and guarded[-1][0] == pattern.guard:
                guarded[-1][1].append((f"p{i}", body))
            else:
                guarded.append((pattern.guard, [(f"p{i}", body)]))
        return guarded

    def scan_of(self, indices: Iterable[int], regex: re.Pattern[str],
                shares: Scanner | None = None) -> Scanner:
        """The scan of ``regex``, the expression of the patterns at ``indices``."""
        return Scanner(regex, self._guarded(indices), self.flags, shares)

    def _expression(self, text: str) -> Expression | None:
        """The scan for ``text``, less the patterns whose requirement it lacks.

        With the group number -> pattern map and the patterns scanned; None
        when no pattern is left.
        """
        if not self._requires or not text.isascii():
            return self._all
        missing = tuple(i for i, words in self._requires
                        if not holds_any(text, words))
        if not missing:
            return self._all
        if missing not in self._without:
            kept = [i for i in range(len(self.patterns)) if i not in missing]
            if kept:
                regex, by_index = self.compiled(kept)
                # Fewer patterns match only where all do: all's gate serves.
                self._without[missing] = (
                    self.scan_of(kept, regex, self._scanner), by_index, tuple(kept))
            else:
                self._without[missing] = None
        return self._without[missing]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PatternRecognizer:
        """Build a plain recognizer from JSON (the ``custom`` list of rules.json)."""
        return cls(
            name=str(data["name"]),
            label=str(data["label"]),
            patterns=[Pattern.from_dict(p) for p in data["patterns"]],
            context=data.get("context", ()),
            negative_before=data.get("negative_before", ()),
            negative_after=data.get("negative_after", ()),
        )

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label this recognizer can emit."""
        return (self.label,)

    def scanners(self) -> tuple[Scanner, ...]:
        """The scans this recognizer runs over a whole text (their gates are grouped).

        A subclass that scans with more adds them; one left out only reads
        the text for its own gate (:class:`~.gate.GateGroup`).
        """
        return tuple(s for s in (self._scanner, self._prefilter) if s is not None)

    def gates(self) -> tuple[Gate, ...]:
        """Every gate this recognizer asks about a text: its scans', its patterns'."""
        return tuple(gate for gate in (*(s.gate for s in self.scanners()),
                                       *self._streams.gates) if gate is not None)

    def applies(self, text: str) -> bool:
        """Tell whether ``text`` can hold a match at all (a cheap pre-check)."""
        return self._prefilter is None or self._prefilter.exists(text)

    def analyze(self, text: str) -> list[PhiSpan]:
        """Find all spans of this recognizer's kind in ``text``, in text order."""
        gate = self._scanner.gate  # every scan below matches only where it passes
        if gate is not None and not gate.passes(text) or not self.applies(text):
            return []
        expression = self._expression(text)
        if expression is None:
            return []
        scanner, by_index, kept = expression
        matches = self._streams.matches(text, scanner, kept)
        if matches is None:
            matches = ((match, by_index) for match in scanner.finditer(text))
        spans = []
        for match, by_index in matches:  # noqa: B020 - each match's own map
            i = by_index[match.lastindex]
            pattern = self.patterns[i]
            hit = Hit(pattern, match, i, self._groups[i])
            if hit.end <= hit.start:
                continue
            if pattern.needs_context and not self.has_context(
                    text, hit, self._pattern_context.get(i, self._context)):
                continue
            if not self.validate(hit, text) or self.invalidate(hit, text):
                continue
            start, end = self.trim(text, hit.start, hit.end)
            if end > start:
                spans.append(PhiSpan(start, end, self.label_for(hit, text),
                                     self.source, pattern.confidence))
        return spans

    def has_context(self, text: str, hit: Hit,
                    words: re.Pattern[str] | None = None) -> bool:
        """Tell whether a context word stands near the match on its line."""
        words = words or self._context
        if words is None:
            return False
        start, end = hit.whole
        lo = _window_start(text, start, self.context_before)
        hi = _window_end(text, end, self.context_after)
        return bool(words.search(text, lo, start) or words.search(text, end, hi))

    def negative_context(self, text: str, hit: Hit) -> bool:
        """Tell whether a negative word precedes, or a unit follows, the match."""
        start, end = hit.whole
        if self._negative_after is not None and self._negative_after.match(text, end):
            return True
        if self._negative_before is not None:
            lo = _clause_start(text, start, self.negative_window)
            if self._negative_before.search(text, lo, start):
                return True
        return False

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the matched value itself is well formed (always, by default)."""
        return True

    def invalidate(self, hit: Hit, text: str) -> bool:
        """Check whether context shows the match is not PHI (negative words)."""
        return hit.pattern.check_negative and self.negative_context(text, hit)

    def label_for(self, hit: Hit, text: str) -> str:
        """Choose the label of a hit; one recognizer may emit several."""
        return self.label

    def trim(self, text: str, start: int, end: int) -> tuple[int, int]:
        """Adjust a span's offsets (URLs drop trailing punctuation); identity."""
        return start, end
