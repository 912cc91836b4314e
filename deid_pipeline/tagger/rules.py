"""High-precision rule recognizers for formulaic PHI: contacts, IDs, dates, ages.

(And the formulaic shapes of names, checked against the lexicons: see
:class:`NameRecognizer`.)

Shaped like Presidio's ``PatternRecognizer``: one small object per PHI kind
with a label, regular expressions compiled once at construction, optional
context words and ``validate``/``invalidate`` hooks. The CRF finds names and
places; these rules find what has a format, where a pattern plus a structural
check (a real calendar date, an SSN area, an IPv4 octet) beats a guess.

Precision comes first here because the CRF and the central merge already lean
towards recall: a rule firing on ``120/80`` or ``1/2 NS`` would redact the
clinical content a research extract exists for. So every shape that clinical
shorthand imitates (``7/22`` versus ``5/5 strength``, ``555-1234`` versus
``900-1300 cc``) is checked against the words around it, on its own line.

The shapes, which do not change between hospitals, live here with their
validators. The words around them (context and negative words, units, ID
keywords and the label each implies), which do, live in ``data/rules.json``,
read once; :meth:`RuleDetector.from_dict` builds a detector from a hospital's
own copy, and the file's ``version`` is part of the detector version.

Speed: each recognizer runs one compiled regular expression over the whole
text and Python runs only per candidate, never per token. Patterns carry
zero-width guards so a dozen shapes cost one failed check inside a word, use
bounded or possessive repetition, and start only at run boundaries, so the
scan stays linear even on a 100,000-character line of digits and slashes.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from deid_pipeline.labels import check_label
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.detectors import Detector, TaggerConfig, register

__all__ = [
    "AgeRecognizer",
    "DateRecognizer",
    "EmailRecognizer",
    "Hit",
    "IdRecognizer",
    "IpRecognizer",
    "NameRecognizer",
    "Pattern",
    "PatternRecognizer",
    "PhoneRecognizer",
    "RuleDetector",
    "SsnRecognizer",
    "UrlRecognizer",
    "build_recognizers",
    "default_config",
]

# Bumped when a recognizer's code changes what it finds; rules.json has its own
# version and the detector reports both.
CODE_VERSION = "6"

_FLAGS = re.IGNORECASE
_GROUP_DEF = re.compile(r"\(\?P<(\w+)>")
_GROUP_REF = re.compile(r"\(\?P=(\w+)\)")
_BLANKS = re.compile(r"\s+")

# Speed guards (see Pattern.guard): where a number, or a word, starts.
_G_NUM = r"(?<!\w)(?=\d)"


# ------------------------------------------------------------------ helpers


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


def _word_regex(words: Iterable[str]) -> re.Pattern[str] | None:
    """Compile keywords to match as whole words only (``hr`` never in ``three``).

    A boundary is required only on a side where the keyword begins or ends with
    a letter or digit, so ``mr #`` still matches in ``mr#1234``.
    """
    classes: dict[tuple[bool, bool], list[str]] = {}
    for word in _normal_words(words):
        classes.setdefault((word[0].isalnum(), word[-1].isalnum()), []).append(word)
    alts = [(r"(?<![a-z0-9])" if left else "") + f"(?:{_trie(group)})"
            + (r"(?![a-z0-9])" if right else "")
            for (left, right), group in sorted(classes.items())]
    return re.compile("|".join(alts), _FLAGS) if alts else None


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
    """

    name: str
    regex: str
    confidence: float = 1.0
    needs_context: bool = False
    context: tuple[str, ...] = ()
    check_negative: bool = True
    guard: str = ""

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
        )


class Hit:
    """A candidate match, seen through its own pattern's group names.

    A recognizer joins its patterns into one regular expression and renames
    each pattern's groups apart; a hit undoes that, so hooks ask for
    ``hit.group("m")`` whichever pattern matched. ``start``/``end`` are the
    PHI part (group ``phi`` if any), :attr:`whole` the full match.
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
        self._negative_before = _word_regex(negative_before)
        after = _trie(negative_after)
        self._negative_after = (re.compile(rf"[ \t]*(?:{after})(?![a-z0-9])", _FLAGS)
                                if after else None)
        guarded: list[tuple[str, list[str]]] = []
        self._groups: list[frozenset[str]] = []
        for i, pattern in enumerate(self.patterns):
            body = _GROUP_DEF.sub(rf"(?P<p{i}_\1>", pattern.regex)
            body = _GROUP_REF.sub(rf"(?P=p{i}_\1)", body)
            self._groups.append(frozenset(_GROUP_DEF.findall(pattern.regex)))
            if guarded and guarded[-1][0] == pattern.guard:
                guarded[-1][1].append(f"(?P<p{i}>{body})")
            else:
                guarded.append((pattern.guard, [f"(?P<p{i}>{body})"]))
        source = "|".join(f"{guard}(?:{'|'.join(bodies)})" for guard, bodies in guarded)
        try:
            self.regex = re.compile(source, flags)
            self._prefilter = re.compile(prefilter, flags) if prefilter else None
        except re.error as exc:
            raise ValueError(f"recognizer {name!r}: bad pattern: {exc}") from exc
        # The pattern's wrapper group closes last, so lastindex names it.
        self._by_index = {self.regex.groupindex[f"p{i}"]: i
                          for i in range(len(self.patterns))}

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

    def applies(self, text: str) -> bool:
        """Tell whether ``text`` can hold a match at all (a cheap pre-check)."""
        return self._prefilter is None or self._prefilter.search(text) is not None

    def analyze(self, text: str) -> list[PhiSpan]:
        """Find all spans of this recognizer's kind in ``text``, in text order."""
        if not self.applies(text):
            return []
        spans = []
        for match in self.regex.finditer(text):
            i = self._by_index[match.lastindex]
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


# -------------------------------------------------------------------- phone

# A number starts at a run boundary: not inside a longer number, decimal,
# ratio or word, and it ends before more digits (a glued "x12" extension is ok).
_NUM_LEFT = r"(?<![\w+./])(?<!\d-)"
_NUM_RIGHT = r"(?![^\Wx]|[./-]\d)"
_SEP = r"[ \t]*[-.][ \t]*"
_EXT = r"(?:[ \t]*,?[ \t]*(?:x|ext\.?|extension)[ \t]*[.#:]?[ \t]*\d{1,6}(?!\d))?"
_PHONE_PARTS = re.compile(r"\d+")


class PhoneRecognizer(PatternRecognizer):
    """US phone and fax numbers in the forms clinical notes write them.

    Ten digits with separators (``617-555-1234``, ``(617) 555-1234``,
    ``+1 617 555 1234``, ``410 392 0780``) need no context; the blank-separated
    form needs an area code's first digit and not two round groups (``500 300
    1500`` is a column of totals). A dashed seven-digit ``555-1234``
    needs none either, but is dropped when it reads as a range of round
    numbers (``900-1300``) and no phone word is near, or when a vital-sign or
    ID word precedes it. Undelimited digits need a phone word nearby; pager
    numbers need their keyword. The label is FAX when the nearest contact
    word before the number on its line, or the word right after it, says fax.
    """

    STRONG = frozenset({"paren", "plus1", "nanp", "extension"})

    def __init__(self, config: Mapping[str, Any], units: Iterable[str] = ()) -> None:
        """Build the phone patterns with the words of ``config``."""
        pager_words = _normal_words(config.get("pager_keywords", ("pager",)))
        initials = "".join(sorted({w[0] for w in pager_words} | {"e"}))
        words = {"guard": rf"(?<![a-z])(?=[{initials}])", "confidence": 0.9}
        lead = {"guard": r"(?<!\w)(?=[(+1])", "check_negative": False}
        num = {"guard": _G_NUM, "confidence": 0.9}
        patterns = [
            Pattern("paren", r"(?<![\w+])(?:\+?1[ \t]*[-.]?[ \t]*)?\(\d{3}\)[ \t]*\d{3}"
                             rf"(?:{_SEP}|[ \t]?)\d{{4}}(?!\d){_EXT}", **lead),
            Pattern("plus1", r"(?<![\w+])\+1[ \t.-]*\d{3}[ \t.-]*\d{3}[ \t.-]*\d{4}"
                             rf"(?!\d){_EXT}", **lead),
            Pattern("nanp", rf"{_NUM_LEFT}(?:1{_SEP})?\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{4}}"
                            f"{_NUM_RIGHT}{_EXT}", guard=_G_NUM, check_negative=False),
            Pattern("nanp_blank", rf"{_NUM_LEFT}\d{{3}}[ \t]{{1,2}}"
                                  rf"(?P<tail>\d{{3}}{_SEP}\d{{4}}){_NUM_RIGHT}{_EXT}",
                    **num),
            Pattern("seven", rf"{_NUM_LEFT}(?P<tail>\d{{3}}-\d{{4}}){_NUM_RIGHT}{_EXT}",
                    **num),
            Pattern("spaced", rf"{_NUM_LEFT}\(?[2-9]\d{{2}}\)?[ \t]{{1,2}}"
                              rf"(?P<tail>\d{{3}}[ \t]{{1,2}}\d{{4}})"
                              f"{_NUM_RIGHT}{_EXT}", **num),
            Pattern("digits", rf"{_NUM_LEFT}(?:\d{{3}}[ \t.-]?)?\d{{3}}[ \t.]?\d{{4}}"
                              f"{_NUM_RIGHT}{_EXT}", needs_context=True, **num),
            Pattern("pager", rf"(?<![a-z])(?:{_trie(pager_words)})(?![a-z])[ \t]*"
                             r"(?:#|no\.?|number)?[ \t]*[:=-]?[ \t]*"
                             rf"(?P<phi>\d{{4,7}}){_NUM_RIGHT}", **words),
            Pattern("extension", r"(?<![a-z])(?:ext|extension)\.?[ \t]*[#:]?[ \t]*"
                                 rf"(?P<phi>\d{{2,6}}){_NUM_RIGHT}", **words),
        ]
        super().__init__("phone", "PHONE", patterns,
                         context=config.get("context", ()),
                         negative_before=config.get("negative_before", ()),
                         negative_after=units, context_before=30, context_after=15,
                         prefilter=r"\d{3}")
        self._fax = _word_regex(config.get("fax_context", ("fax",)))
        self._fax_after = re.compile(
            r"[ \t]*[(\[]?[ \t]*(?:fax|facsimile)(?![a-z])", _FLAGS)

    @property
    def labels(self) -> tuple[str, ...]:
        """PHONE, and FAX for numbers a fax word introduces."""
        return ("PHONE", "FAX")

    def invalidate(self, hit: Hit, text: str) -> bool:
        """Drop weak shapes that read as a range, a vital sign or an ID."""
        if hit.pattern.name in self.STRONG:
            return False
        tail = hit.group("tail")
        if tail is not None and not self.has_context(text, hit):
            first, second = (int(x) for x in _PHONE_PARTS.findall(tail))
            if first % 10 == 0 and second % 10 == 0:
                return True  # 900-1300: round numbers are a range, not a line
        return self.negative_context(text, hit)

    def label_for(self, hit: Hit, text: str) -> str:
        """Say FAX if the closest contact word before it, or one after, is fax."""
        if self._fax is None or self._context is None:
            return self.label
        start, end = hit.whole
        if self._fax_after.match(text, end):
            return "FAX"
        last = None
        for last in self._context.finditer(
                text, _window_start(text, start, self.context_before), start):
            pass
        if last is not None and self._fax.fullmatch(last.group()):
            return "FAX"
        return self.label


# --------------------------------------------------------- e-mail, URL, IP


class EmailRecognizer(PatternRecognizer):
    """E-mail addresses; bounded parts keep the scan linear on long word runs."""

    def __init__(self) -> None:
        """Build the single e-mail pattern."""
        super().__init__("email", "EMAIL", [Pattern(
            "address", r"(?<![\w.%+-])[a-z0-9._%+-]{1,64}@(?:[a-z0-9-]{1,63}\.){1,8}"
                       r"[a-z]{2,24}(?![\w-])", check_negative=False)],
            prefilter="@")


_URL_TAIL = r"(?:[/?#][^\s<>\"'()\[\]{}]{0,2000})?"


class UrlRecognizer(PatternRecognizer):
    """Web addresses: with a scheme, with ``www.``, or a bare domain and known TLD.

    Bare domains need one of ``config["tlds"]``, so clinical shorthand with
    dots (``p.o.``, ``q.i.d.``) never looks like a host name.
    """

    _TRAILING = ".,;:!?'\")]"

    def __init__(self, config: Mapping[str, Any]) -> None:
        """Build the URL patterns with the TLD list of ``config``."""
        tlds = _trie(config.get("tlds", ("com", "org", "net", "edu", "gov")))
        # Possessive labels: a long dotted run is consumed once, never re-split.
        label = r"[a-z0-9-]{1,63}+"
        left = r"(?<![\w.@/-])"
        host = {"guard": rf"{left}(?=[a-z0-9])", "check_negative": False}
        patterns = [
            Pattern("scheme", r"(?<!\w)(?:https?|ftp)://[^\s<>\"'()\[\]{}]{1,2000}",
                    check_negative=False, guard=r"(?<!\w)(?=[fh])"),
            Pattern("www", rf"{left}www\.(?:{label}\.){{1,8}}[a-z]{{2,24}}(?![\w-])"
                           f"{_URL_TAIL}", **host),
            Pattern("domain", rf"{left}(?:{label}\.){{1,8}}(?:{tlds})(?![\w-]|\.\w)"
                              f"{_URL_TAIL}", confidence=0.9, **host),
        ]
        super().__init__("url", "URL", patterns)
        self._hint = re.compile(rf"\.(?:{tlds})(?![\w-])", _FLAGS)

    def applies(self, text: str) -> bool:
        """Tell whether ``text`` has ``://``, ``www.`` or a known TLD."""
        return ("://" in text or "www." in text or "WWW." in text
                or self._hint.search(text) is not None)

    def trim(self, text: str, start: int, end: int) -> tuple[int, int]:
        """Drop sentence punctuation the greedy tail took (``see x.org.``)."""
        while end > start and text[end - 1] in self._TRAILING:
            end -= 1
        return start, end


class IpRecognizer(PatternRecognizer):
    """IPv4 addresses with octets <= 255, and IPv6 addresses that parse."""

    def __init__(self) -> None:
        """Build the IPv4 and IPv6 candidate patterns."""
        patterns = [
            Pattern("ipv4", r"(?<![\w./])(?P<a>\d{1,3})\.(?P<b>\d{1,3})\.(?P<c>\d{1,3})"
                            r"\.(?P<d>\d{1,3})(?!\w|[./]\d)", check_negative=False,
                    guard=_G_NUM),
            Pattern("ipv6", r"(?<![\w:.])(?=[0-9a-f:]{0,39}::|(?:[0-9a-f]{1,4}:){7})"
                            r"(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:.])",
                    check_negative=False, guard=r"(?<![\w:.])(?=[0-9a-f:])"),
        ]
        super().__init__("ip", "IPADDR", patterns)
        # Case-sensitive, class-first hints: the regex engine skips ahead in C.
        self._quad = re.compile(r"\d\.\d{1,3}\.\d{1,3}\.\d")
        self._hex8 = re.compile(r"[0-9A-Fa-f]{1,4}:(?:[0-9A-Fa-f]{1,4}:){6}")

    def applies(self, text: str) -> bool:
        """Tell whether ``text`` has a dotted quad, ``::`` or eight hex groups."""
        return ("::" in text or self._quad.search(text) is not None
                or self._hex8.search(text) is not None)

    def validate(self, hit: Hit, text: str) -> bool:
        """Check octets <= 255, or that an IPv6 candidate parses."""
        if hit.pattern.name == "ipv4":
            return all(int(hit.group(g) or 0) <= 255 for g in "abcd")
        value = text[hit.start:hit.end]
        if sum(1 for part in value.split(":") if part) < 2:
            return False  # "::" or "a::" alone is punctuation, not an address
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            return False
        return True


# ---------------------------------------------------------------------- SSN


class SsnRecognizer(PatternRecognizer):
    """US Social Security numbers: dashed anywhere, other layouts by an SSN word.

    Numbers the SSA never issues are rejected: area 000, 666 or 9xx, group
    00, serial 0000.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        """Build the SSN patterns with the context words of ``config``."""
        left = r"(?<![\w.-])"
        weak = {"confidence": 0.9, "needs_context": True, "guard": _G_NUM}
        patterns = [
            Pattern("dashed", rf"{left}(?P<a>\d{{3}})-(?P<g>\d{{2}})-(?P<s>\d{{4}})"
                              r"(?![\w-]|\.\d)", check_negative=False, guard=_G_NUM),
            Pattern("spaced", rf"{left}(?P<a>\d{{3}})[ .](?P<g>\d{{2}})[ .]"
                              r"(?P<s>\d{4})(?!\w|\.\d)", **weak),
            Pattern("digits", rf"{left}(?P<a>\d{{3}})(?P<g>\d{{2}})(?P<s>\d{{4}})"
                              r"(?!\w|\.\d)", **weak),
        ]
        super().__init__("ssn", "SSN", patterns,
                         context=config.get("context", ("ssn",)),
                         context_before=30, context_after=10,
                         prefilter=r"\d{3}[ .-]?\d{2}[ .-]?\d{4}")

    def validate(self, hit: Hit, text: str) -> bool:
        """Apply the SSA structural rules to area, group and serial."""
        area, group, serial = hit.group("a"), hit.group("g"), hit.group("s")
        return (area is not None and area not in ("000", "666")
                and not area.startswith("9") and group != "00" and serial != "0000")


# --------------------------------------------------------------------- date

_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
           "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH = (r"(?<![a-z])(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|"
          r"may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|"
          r"nov(?:ember)?|dec(?:ember)?)(?![a-z])(?P<dot>\.)?")
_ORD = r"(?P<ord>st|nd|rd|th)"
_YEAR4 = r"(?:19|20)\d{2}"
# Not inside a number, ratio or decimal; a dot after a word is fine ("unit.8/31").
_DATE_LEFT = r"(?<![\w/])(?<![^a-z]\.)"
# Not followed by more of a number, unless by a second date ("10/15-10/16").
_DATE_RIGHT = r"(?![\d/]|\.\d|-\d(?!\d?/\d))"
_MONTH_WORDS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "month",
)
# Shift names follow dates ("7/22 days: stable"); these units do not unmake one.
_SPAN_UNITS = frozenset({"day", "days", "wk", "wks", "week", "weeks"})
# Marks that, right before a number, make it a quantity or a setting.
_QUANTITY_MARKS = "+#~^*=<>$\u00d7"


def _valid_day(month: int, day: int, year: int | None = None) -> bool:
    """Check a calendar date; without a year February 29 is allowed."""
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and day == 29 and year is not None:
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _DAYS_IN_MONTH[month - 1]


def _is_fraction(month: int, day: int) -> bool:
    """Tell whether m/d reads as a simple fraction (1/2, 2/3, 3/4)."""
    return day in (2, 3, 4) and month < day


class DateRecognizer(PatternRecognizer):
    """Dates in the numeric and named forms of clinical notes, never bare years.

    Every candidate must be a real calendar date. Forms without a four-digit
    year, above all ``m/d``, are what clinical shorthand imitates (``1/2 NS``,
    ``5/5 strength``, ``PSV 10/5``, ``pain 8/10``, ``CO/CI 5-6/2.5``), so
    they are dropped when a vital-sign, ventilator, exam or pain word precedes
    them in their clause, a unit or clinical word follows them, they are a
    simple fraction or a pain score, they sit in a numeric range or after a
    quantity mark, or an FiO2 percentage follows. A date word right before
    (``on``, ``since``, ``admitted``) outweighs the negative words. ``m-d``
    is taken only after such a word. Named months that are also words or
    abbreviations (``may``, ``mar``, ``dec``) need a year, an ordinal, a
    period or a date word before them.
    """

    SHORT = frozenset({"mdy", "myy", "md", "md_dash"})

    def __init__(self, config: Mapping[str, Any], units: Iterable[str] = ()) -> None:
        """Build the date patterns with the date words of ``config``."""
        num = {"guard": _G_NUM}
        named = {"guard": r"(?<![a-z])(?=[adfjmnos])", "check_negative": False}
        full = {"check_negative": False, **num}
        patterns = [
            Pattern("iso", rf"(?<![\w/.-])(?P<y>{_YEAR4})(?P<s>[-/.])(?P<m>\d{{1,2}})"
                           rf"(?P=s)(?P<d>\d{{1,2}}){_DATE_RIGHT}", **full),
            Pattern("mdy", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})(?P<s>[/-])(?P<d>\d{{1,2}})"
                           rf"(?P=s)(?P<y>\d{{4}}|\d{{2}}){_DATE_RIGHT}", **num),
            Pattern("mdy_dot", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})\.(?P<d>\d{{1,2}})\."
                               rf"(?P<y>{_YEAR4}){_DATE_RIGHT}", **full),
            Pattern("dmy_sep", rf"{_DATE_LEFT}(?P<d>\d{{1,2}})(?P<s>[-/ ]){_MONTH}"
                               r"(?P=s)(?P<y>\d{4}|\d{2})(?!\w)", **full),
            Pattern("dmy", rf"{_DATE_LEFT}(?P<d>\d{{1,2}}){_ORD}?[ \t]*(?:of[ \t]+)?"
                           rf"{_MONTH}(?:[ \t]*,?[ \t]*(?P<y>{_YEAR4})(?!\w))?",
                    **full),
            Pattern("my4", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<y>{_YEAR4})"
                           f"{_DATE_RIGHT}", **full),
            Pattern("myy", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<y>3[2-9]|[4-9]\d)"
                           rf"{_DATE_RIGHT}(?!')", confidence=0.8, **num),
            Pattern("md", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}})"
                          f"{_DATE_RIGHT}", confidence=0.9, **num),
            Pattern("md_dash", r"(?<![\w/.-])(?P<m>\d{1,2})-(?P<d>\d{1,2})"
                               r"(?![\d/-]|\.\d)", confidence=0.7, **num),
            Pattern("mdy_named", rf"{_MONTH}[ \t]*[,-]?[ \t]*(?P<d>\d{{1,2}}){_ORD}?"
                                 rf"(?!\w)(?:[ \t]*,?[ \t]*(?P<y>{_YEAR4})(?!\w))?",
                    **named),
            Pattern("month_year", rf"{_MONTH}[ \t]*,?[ \t]*(?:of[ \t]+)?"
                                  rf"(?P<y>{_YEAR4}|'\d{{2}})(?!\w)", **named),
            Pattern("ordinal", rf"(?<![a-z])the[ \t]+(?P<phi>(?P<d>\d{{1,2}}){_ORD}"
                               rf"(?:[ \t]+of[ \t]+{_MONTH})?)(?!\w)", confidence=0.9,
                    needs_context=True, context=_MONTH_WORDS, check_negative=False,
                    guard=r"(?<![a-z])(?=the)"),
        ]
        units = [u for u in units if u not in _SPAN_UNITS]
        super().__init__("date", "DATE", patterns,
                         negative_before=config.get("negative_before", ()),
                         negative_after=[*units, *config.get("negative_after", ())],
                         context_before=40, context_after=40, negative_window=24)
        self._ambiguous = frozenset(config.get("ambiguous_months", ("may", "mar")))
        self._pain = _word_regex(config.get("pain_context", ("pain",)))
        strong = _trie(config.get("strong_before", ("on", "since")))
        self._strong = re.compile(rf"(?<![a-z0-9])(?:{strong})[ \t]*[:,]?[ \t]*$",
                                  _FLAGS)
        dash = _trie(config.get("dash_context", ("on", "since")))
        self._dash_before = re.compile(rf"(?<![a-z0-9])(?:{dash})[ \t]+$", _FLAGS)
        follow = _trie(config.get("dash_follow", ("at", "for")))
        self._dash_after = re.compile(
            rf"[ \t]*(?:$|[.,;:)\]]|[ \t](?:{follow})(?![a-z])|[ \t]+\d)",
            _FLAGS | re.MULTILINE)
        # A real m/d and a range word just before: "8/2 - 8/10" is two dates.
        self._date_before = re.compile(
            r"(?<![\d/])(?P<m>\d{1,2})/(?P<d>\d{1,2})[ \t]*(?:-|to|thru|or|and|&)"
            r"[ \t]*$", _FLAGS)
        self._range_before = re.compile(r"\d[ \t]*-[ \t]*$")
        self._range_after = re.compile(r"[ \t]*-[ \t]*\d(?!\d?/\d)")
        self._times_before = re.compile(r"(?:^|[\s\d])[x\u00d7][ \t]*$|%[ \t,;]*$",
                                        _FLAGS)
        # Ventilator settings come with an FiO2: "5/5, 40%", "10/5 c 35%".
        self._percent_after = re.compile(
            r"[ \t]*\)?[ \t]*[,;&]?[ \t]*(?:c|with|w/?|@|on|and)?[ \t]*\.?\d+"
            r"(?:\.\d+)?[ \t]*%", _FLAGS)
        self._clause_end = re.compile(r"[ \t]*(?:$|[.,;:)\]]|-[^\d])", re.MULTILINE)
        self._header_colon = re.compile(r":(?!\d)")

    def has_context(self, text: str, hit: Hit,
                    words: re.Pattern[str] | None = None) -> bool:
        """Count a month named in the match itself (``the 22nd of July``)."""
        return hit.group("mon") is not None or super().has_context(text, hit, words)

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the month, day and year make a real calendar date."""
        name = hit.group("mon")
        month = _MONTHS[name[:3].lower()] if name else int(hit.group("m") or 0)
        year_text = hit.group("y")
        year = int(year_text) if year_text and len(year_text) == 4 else None
        if year is not None and not 1850 <= year <= 2150:
            return False
        day = hit.group("d")
        if day is None:
            return 1 <= month <= 12
        if not name and hit.pattern.name == "ordinal":
            return 1 <= int(day) <= 31
        return _valid_day(month, int(day), year)

    def invalidate(self, hit: Hit, text: str) -> bool:
        """Drop the clinical look-alikes of short dates (see the class doc)."""
        start, end = hit.whole
        strong = self._strong_before(text, start)
        if hit.group("mon") is not None:
            return self._invalid_named(hit, text, strong)
        name = hit.pattern.name
        if name not in self.SHORT or (name == "mdy" and len(hit.group("y")) == 4):
            return False
        if end < len(text) and text[end].isalpha():
            return True  # 1/2NS, 10/5PEEP, 2/2cm
        lo = _window_start(text, start, 12)
        if name == "md_dash" and not (self._dash_before.search(text, lo, start)
                                      and self._dash_after.match(text, end)):
            return True  # 2-3 L, q 2-3 hours, ICP 6-7
        if self._times_before.search(text, lo, start):
            return True  # 500x12/5, 50% 5/5
        prev = text[lo:start].rstrip(" \t")
        if prev and prev[-1] in _QUANTITY_MARKS:
            return True  # +3/6 murmur, #4/10
        date_before = self._is_date_before(text, lo, start)
        if not date_before and (self._range_before.search(text, lo, start)
                                or self._range_after.match(text, end)):
            return True  # CO/CI 4-6/2-4
        if self._percent_after.match(text, end):
            return True  # CPAP 5/5, 40%
        if name in ("md", "md_dash") and not date_before:
            month, day = int(hit.group("m")), int(hit.group("d"))
            fraction = (_is_fraction(month, day)
                        and not self._header_colon.match(text, end))
            if fraction and not (strong and self._clause_end.match(text, end)):
                return True  # 1/2 NS, 3/4 of the way up; "Labs 3/4:" is a date
            if day == 10 and month <= 10 and self._pain_near(text, start, end):
                return True  # had 3/10 incisional pain
        if self._negative_after is not None and self._negative_after.match(text, end):
            return True
        if strong or date_before:
            return False
        return self.negative_context(text, hit)

    def is_lookalike(self, text: str, start: int, end: int) -> bool:
        """Whether a short date found by another detector is a look-alike.

        Look-alikes are what this recognizer rejects at ``start:end``: ``PSV
        10/5``, ``pain 8/10``, ``1/2 NS``. The candidate is re-read from the
        start of its run of digits and separators, so a span covering only
        ``5`` of ``10/5`` is judged as ``10/5``. Forms this recognizer does
        not read as a short date are not look-alikes: the caller keeps them.
        """
        # A short date is at most 10 characters: look no further back, so a
        # hostile run of digits and slashes costs no more than a date.
        floor = max(start - 10, 0)
        while start > floor and (text[start - 1].isdigit() or text[start - 1] in "/-"):
            start -= 1
        match = self.regex.match(text, start)
        if match is None:
            return False
        i = self._by_index[match.lastindex]
        pattern = self.patterns[i]
        if pattern.name not in self.SHORT:
            return False
        hit = Hit(pattern, match, i, self._groups[i])
        if hit.start >= end or hit.end <= start:
            return False
        # Context only: an impossible day (2/31/14) is a typo more often
        # than a look-alike, and the CRF read it as a date.
        return self.invalidate(hit, text)

    def _strong_before(self, text: str, start: int) -> bool:
        """Tell whether a date word (on, since, admitted, ...) comes just before."""
        return bool(self._strong.search(text, _window_start(text, start, 24), start))

    def _is_date_before(self, text: str, lo: int, start: int) -> bool:
        """Tell whether a real m/d and a range word precede: ``8/2 - 8/10``."""
        m = self._date_before.search(text, lo, start)
        if m is None:
            return False
        month, day = int(m.group("m")), int(m.group("d"))
        return _valid_day(month, day) and not _is_fraction(month, day)

    def _pain_near(self, text: str, start: int, end: int) -> bool:
        """Tell whether a pain word is around an x/10: a score, not October."""
        if self._pain is None:
            return False
        lo = _clause_start(text, start, 40)
        hi = _window_end(text, end, 30)
        return bool(self._pain.search(text, lo, start)
                    or self._pain.search(text, end, hi))

    def _invalid_named(self, hit: Hit, text: str, strong: bool) -> bool:
        """Drop ``dec 10 mg`` (a dose), and ``may 2`` without more to go on."""
        end = hit.whole[1]
        year = hit.group("y")
        # A four-digit, apostrophe or dash-joined year settles it ("22-Dec-06");
        # "2 may 10" could still be a count, a verb and a dose.
        if year is not None and (len(year) > 2 or hit.group("s") in ("-", "/")):
            return False
        if self._negative_after is not None and self._negative_after.match(text, end):
            return True
        word = hit.group("mon").lower()
        if word in self._ambiguous and not (hit.group("ord") or hit.group("dot")):
            return not strong
        return False


# ---------------------------------------------------------------------- age

_AGE_UNIT = (r"(?:y(?:ears?|rs?)?[ \t]*-?[ \t]*old|y[ \t]*/[ \t]*o|y\.[ \t]*o\.?"
             r"|yo[mf]?|y(?:ears?|rs?)[ \t]+of[ \t]+age)(?![a-z])")
_LEADING_DIGITS = re.compile(r"\d+")


class AgeRecognizer(PatternRecognizer):
    """Ages over 89, the only ages HIPAA Safe Harbor requires removing.

    An age needs an age word: ``92 yo``, ``95-year-old``, ``aged 91``,
    ``age: 103``, ``in her 90s``. ``BP in the 90s`` is not an age, and
    ``aged 91 days`` is not over 89 years.
    """

    def __init__(self, units: Iterable[str] = ()) -> None:
        """Build the age patterns."""
        words = {"guard": r"(?<![a-z])(?=[ai])"}
        patterns = [
            Pattern("unit", rf"(?<![\w./-])(?P<phi>\d{{2,3}})[ \t]*-?[ \t]*{_AGE_UNIT}",
                    check_negative=False, guard=_G_NUM),
            Pattern("keyword", r"(?<![a-z])age(?:d|[ \t]+of)?[ \t]*[:=]?[ \t]*"
                               r"(?P<phi>\d{2,3})(?!\w|\.\d|[ \t]*%)", **words),
            Pattern("decade", r"(?<![a-z])(?:in[ \t]+(?:his|her|their)|aged?[ \t]+"
                              r"(?:in[ \t]+(?:his|her|their|the)[ \t]+)?)[ \t]*"
                              r"(?:(?:early|mid|late)[ \t]*-?[ \t]*)?"
                              r"(?P<phi>(?:90|100)'?s)(?!\w)", confidence=0.9,
                    check_negative=False, **words),
        ]
        super().__init__("age", "AGE", patterns, negative_after=[
            *units, "months", "month", "mo", "mos", "yrs ago", "years ago"])

    def validate(self, hit: Hit, text: str) -> bool:
        """Keep only ages 90 to 125 (older is a typo or not an age)."""
        digits = _LEADING_DIGITS.match(text, hit.start, hit.end)
        return digits is not None and 90 <= int(digits.group()) <= 125


# ---------------------------------------------------------------------- IDs

_ID_VALUE = r"(?P<phi>(?:[a-z]{1,3}-?)?\d(?:-?\d){3,29}[a-z]{0,2})(?![\w-])"
_ID_MARKERS = (r"(?:[ \t]*(?:#|:|no\.?(?![a-z])|num(?:ber)?\.?(?![a-z])|"
               r"nbr(?![a-z])|id(?![a-z])|is(?![a-z])))*")


class IdRecognizer(PatternRecognizer):
    """Identifiers a keyword introduces: ``MRN: 1234567``, ``Acct 12345``.

    The keyword picks the label (MEDICALRECORD, ACCOUNT, HEALTHPLAN, LICENSE,
    IDNUM) and is not part of the span. An ID needs four digits or more, so
    ``account 2`` or ``unit no 12`` is never tagged.
    """

    def __init__(self, keywords: Mapping[str, Iterable[str]]) -> None:
        """Build one keyword trie over every label's keywords."""
        self._label_of: dict[str, str] = {}
        for label, words in keywords.items():
            check_label(label)
            for word in _normal_words(words):
                self._label_of[self._key(word)] = label
        if not self._label_of:
            raise ValueError("the id recognizer needs keywords")
        every = [w for words in keywords.values() for w in words]
        initials = "".join(sorted({w[0] for w in _normal_words(every)}))
        pattern = Pattern(
            "keyword", rf"(?<![a-z0-9])(?P<kw>{_trie(every)})(?![a-z]){_ID_MARKERS}"
                       rf"[ \t]*[:#=.-]?[ \t]*{_ID_VALUE}",
            guard=rf"(?<![a-z0-9])(?=[{re.escape(initials)}])")
        super().__init__("id", "IDNUM", [pattern])

    @staticmethod
    def _key(word: str) -> str:
        return _BLANKS.sub("", word.lower())

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label a keyword maps to."""
        return tuple(sorted(set(self._label_of.values())))

    def label_for(self, hit: Hit, text: str) -> str:
        """Use the label its keyword maps to."""
        return self._label_of.get(self._key(hit.group("kw") or ""), self.label)


# -------------------------------------------------------------------- names

_NAME = r"(?:[OoDd]'[ \t]?)?[A-Za-z]{3}[A-Za-z'-]*(?![\w'])"
_SHORT_NAME = r"[A-Za-z]{2}[A-Za-z'-]*(?![\w'])"
# Not after a letter, digit or the marks of clinical shorthand: the "V." of
# "N/V. ABD", the "I." of "D+I.", the "O." of "A&O." are not initials.
_NOT_SHORTHAND = r"(?<![\w.'/+&-])"
_VOWEL = re.compile(r"[aeiouy]")


def word_is_titled(text: str, hit: Hit) -> bool:
    """Whether the hit's word is written ``Xxxx`` (capital, then lower case)."""
    word = text[hit.start:hit.end]
    return word[:1].isupper() and word[1:].replace("'", "").replace("-", "").islower()


def _name_key(word: str) -> str:
    """The lexicon key of a name as written.

    No ``O'``/``D'``, the first half of a hyphenated name, lower case.
    """
    return re.sub(r"^[OoDd]'[ \t]?", "", word).split("-")[0].lower()


# A capitalised word (or an O'/D' name in any case) right after a name.
_SURNAME_AFTER = re.compile(
    r"[ \t]+(?P<name>[OoDd]'[A-Za-z]{2,}(?:-[A-Za-z]+)?(?![\w'])"
    r"|[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?(?![\w']))")


def _reads_as_surname(word: str, lex: Any, capitalised: bool = False) -> bool:
    """Whether ``word`` can be a surname.

    A listed one not more common as an English word, or an unknown word that
    is not shorthand. ``O'Driscoll`` always can. ``capitalised`` words (a
    capital in mixed-case text) may be as common as English band 4
    (``Cole``, ``Lange``).
    """
    if re.match(r"[OoDd]'", word):
        return True
    key = _name_key(word)
    flags = lex.flags(key)
    if "drug" in flags or "dx" in flags or {"city", "uscity", "state", "stab",
                                            "country"} & set(flags):
        return False
    band = lex.english_band(key)
    if band == 0:
        # Short words unknown to every list are unit names (MICU, cvicu)
        # unless written like a name (Nuzo).
        titled = word[:1].isupper() and word[1:].islower()
        return bool(_VOWEL.search(key)) and (
            len(key) >= 6 or (len(key) >= 3 and titled))
    names = {f for f in flags if f[:2] in ("ln", "fn")}
    limit = 4 if capitalised else 3
    return (band <= limit and bool(names & {"ln1", "ln2", "fn1", "fn2"})) or (
        band <= 2 and bool(names))


class NameRecognizer(PatternRecognizer):
    """Names in the shapes nursing notes write them.

    ``N. GRANDONE aware`` (an initial and a surname: staff), ``HO Falco``
    (a staff title and a name), ``MRS BRUCER`` (a title and a surname: the
    patient) and ``son bill`` (a relation and a first name: a relative);
    ``mr K`` and ``Dr. K`` (a title and a capital alone); ``BEA TURA aware``
    and ``per DOUGLASS`` (listed names before or after a reporting cue,
    staff); ``AGNES MUNROE`` (a first name and a surname, no cue). The
    shape alone is not enough (``E. coli``, ``MS changes``, ``son
    called``), so the word must look like a name to the lexicons: a
    surname or first name not more common as an English word, and never a
    drug or a diagnosis after an initial. The CRF learns these
    too, but misses them where the corpus has few; these shapes do not vary
    between hospitals.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        titles = _trie(config.get("titles", ("mr", "mrs", "ms", "miss")))
        staff = _trie(config.get("staff_titles", ("dr", "doctor")))
        relations = _trie(config.get("relations", ("son", "daughter", "wife")))
        doctors = _trie(config.get("doctor_titles", ("dr", "doctor")))
        before = _trie(config.get("cues_before_name", ("per",)))
        after = _trie(config.get("cues_after_name", ("aware",)))
        self._doctor = re.compile(rf"(?:{doctors})\.?[ \t]*$", _FLAGS)
        # Names before a cue are read back from the cue (see analyze).
        self._cue_after = re.compile(rf"(?<=[ \t])(?:{after})(?![a-z])", _FLAGS)
        # Listed as names by some list, yet a test, a unit or a service there.
        self._not_names = frozenset(_normal_words(config.get("not_names", ())))
        # Every shape starts at a letter that is not inside shorthand: one
        # guard for all of them (a tenth of the time, the same matches).
        word_start = {"confidence": 0.8, "guard": rf"{_NOT_SHORTHAND}(?=[a-z])"}
        # A capital alone after a title, not the A of "MS A&O" (mental status).
        initial = r"(?P<phi>(?-i:[A-Z]))(?![\w'&+/])"
        super().__init__("names", "DOCTOR", [
            Pattern("initial",
                    rf"{_NOT_SHORTHAND}(?P<phi>[A-Za-z]\.[ \t]+{_NAME})",
                    **word_start),
            Pattern("title", rf"{_NOT_SHORTHAND}(?:{titles})(?:\.[ \t]*|[ \t]+)"
                    rf"(?P<phi>{_NAME})", **word_start),
            Pattern("staff", rf"{_NOT_SHORTHAND}(?:{staff})(?:\.[ \t]*|[ \t]+)"
                    rf"(?P<phi>{_NAME}(?:-{_NAME})?)", **word_start),
            Pattern("relation", rf"{_NOT_SHORTHAND}(?:{relations})"
                    rf"(?:[ \t]*[,:(][ \t]*|[ \t]+)(?P<phi>{_SHORT_NAME})",
                    **word_start),
            Pattern("title_initial", rf"{_NOT_SHORTHAND}(?:{titles})(?:\.[ \t]*|[ \t]+)"
                    rf"{initial}", **word_start),
            Pattern("doctor_initial", rf"{_NOT_SHORTHAND}(?:{doctors})"
                    rf"(?:\.[ \t]*|[ \t]+){initial}", **word_start),
            Pattern("cue_before", rf"{_NOT_SHORTHAND}(?:{before})[ \t]+"
                    rf"(?P<phi>{_NAME})", **word_start),
        ], prefilter=r"[a-z]\.|mr|ms|mi|[a-z]{3}")

    @property
    def labels(self) -> tuple[str, ...]:
        """Staff, patient and relative names."""
        return ("DOCTOR", "PATIENT", "RELATIVE")

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the word after the cue looks like a name to the lexicons.

        After a staff title a second word that reads as a surname (``Dr Will
        Cole``, ``Dr. Sarah O'Driscoll``) is taken too: the hit is widened to
        it, and the pair vouches for a first name as common as ``Will``.
        """
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        name = hit.pattern.name
        if name in ("title_initial", "doctor_initial"):
            return True
        word = text[hit.start:hit.end]
        if name == "cue_before":
            return len(word) >= 4 and self._cue_name(word, lex)
        if hit.pattern.name == "initial":
            word = word[2:].lstrip()
        word = _name_key(word)
        flags = lex.flags(word)
        band = lex.english_band(word)
        if hit.pattern.name == "relation":
            return (band <= 4 and any(f.startswith("fn") for f in flags)) or (
                band == 5 and "fn1" in flags)
        if hit.pattern.name == "staff":
            surname = _SURNAME_AFTER.match(text, hit.end)
            if surname is not None and any(f.startswith("fn") for f in flags) and (
                    _reads_as_surname(surname.group("name"), lex, capitalised=True)):
                hit.end = surname.end()
                return True
            return self._staff_name(word, flags, band, bool(self._doctor.search(
                text, hit.whole[0], hit.start)))
        if hit.pattern.name == "initial" and ("drug" in flags or "dx" in flags):
            return False
        surname = {f for f in flags if f.startswith("ln") or f.startswith("fn")}
        # "Mrs. Park": a capitalised word after a title may be as common as
        # English band 5 (capitals say nothing in "MRS PARK" or "mrs park").
        titled = hit.pattern.name == "title" and word_is_titled(text, hit)
        limit = 5 if titled else 4
        return band == 0 or (band <= limit and bool(
            surname & {"ln1", "ln2", "fn1", "fn2"})) or (band <= 2 and bool(surname))

    def _staff_name(self, word: str, flags: Sequence[str], band: int,
                    doctor_title: bool) -> bool:
        """Whether ``word`` after a staff title reads as a name.

        A name in the lexicons, or an unknown word that does not read like
        shorthand (CXR), a verb or a plural (paged, sats); after a doctor's
        title (``dr small``, ``Dr. Brown``) a common surname is still one.
        """
        if band <= 4 and {"fn1", "fn2", "ln1", "ln2"} & set(flags):
            return True
        if band == 5 and {"fn1", "ln1"} & set(flags) and (
                word not in self._not_names) and doctor_title:
            return True
        return band <= 2 and len(word) >= 4 and bool(_VOWEL.search(word)) and (
            not word.endswith(("ed", "ing", "ly", "s")))

    def _more_doctors(self, text: str) -> list[PhiSpan]:
        """The second and later names after ``Drs``, each checked as after ``Dr``.

        The first name is the ``staff`` shape's; a list stops at the first
        word that does not read as a name (``Drs Ames and team``).
        """
        from deid_pipeline.tagger import lexicons

        spans = []
        for match in _MORE_DOCTORS.finditer(text):
            lex = lexicons.load()
            start, end = match.span("more")
            for word in _LISTED_NAME.finditer(text, start, end):
                if word.group().lower() == "and":
                    continue
                key = _name_key(word.group())
                if not self._staff_name(key, lex.flags(key), lex.english_band(key),
                                        True):
                    break
                spans.append(PhiSpan(word.start(), word.end(), self.label,
                                     self.source, self.patterns[0].confidence))
        return spans

    def analyze(self, text: str) -> list[PhiSpan]:
        """The shapes after a cue, then the one or two names before ``aware``.

        ``BEA TURA aware``: found from the cue backwards, which costs a search
        per cue rather than a try at every word. Both words must read as
        listed names (:func:`_reads_as_listed_name`); of two where only the
        second does (``BIGEMINY Tura``), only the second is taken.
        """
        spans = super().analyze(text)
        if not self.applies(text):
            return spans
        spans.extend(s for s in self._more_doctors(text)
                     if not any(o.start < s.end and s.start < o.end for o in spans))
        from deid_pipeline.tagger import lexicons

        lex = None
        for cue in self._cue_after.finditer(text):
            lo = max(text.rfind("\n", 0, cue.start()) + 1, cue.start() - 64)
            names = _NAMES_BEFORE_CUE.search(text, lo, cue.start())
            if names is None or any(s.end > names.start() and s.start < names.end()
                                    for s in spans):
                continue  # no name, or a shape above found it already
            lex = lex or lexicons.load()
            if not self._cue_name(names.group("last"), lex):
                continue
            start = names.start("last")
            first = names.group("first")
            if first is not None and self._cue_name(first, lex):
                start = names.start("first")
            spans.append(PhiSpan(start, names.end("last"), self.label, self.source,
                                 self.patterns[0].confidence))
        spans.extend(self._full_names(text, spans))
        spans.sort()
        return spans

    def _full_names(self, text: str, found: list[PhiSpan]) -> list[PhiSpan]:
        """``AGNES MUNROE``: a first name and a surname with no cue at all.

        Only where both words are listed names rare as English words
        (:func:`_reads_as_full_name`); what a shape above found is left to it.
        """
        from deid_pipeline.tagger import lexicons

        lex = None
        spans = []
        for pair in _FULL_NAME.finditer(text):
            start, end = pair.span()
            if any(s.end > start and s.start < end for s in found):
                continue
            lex = lex or lexicons.load()
            if _reads_as_full_name(pair.group("first"), pair.group("last"), lex):
                spans.append(PhiSpan(start, end, self.label, self.source,
                                     self.patterns[0].confidence))
        return spans

    def _cue_name(self, word: str, lex: Any) -> bool:
        """A listed name (:func:`_reads_as_listed_name`), not a ``not_names`` word."""
        return (_name_key(word) not in self._not_names
                and _reads_as_listed_name(word, lex))

    def label_for(self, hit: Hit, text: str) -> str:
        """PATIENT after a title, RELATIVE after a relation, otherwise DOCTOR."""
        return {"title": "PATIENT", "title_initial": "PATIENT",
                "relation": "RELATIVE"}.get(hit.pattern.name, "DOCTOR")


class CredentialNameRecognizer(PatternRecognizer):
    """Staff signing with a credential.

    ``florencia cooke np``, ``DAN A. FORMAN-LYONS, RRT``, ``Andrwe O'connell
    MD``. The credential is found first (a cheap search), then the one or two words
    before it on its line are read: the last must read as a surname and not
    as a place (``Annapolis, MD`` is a state), the first is kept only if it
    reads as a first name. ``by MD``, ``4L NP`` or ``renal MD`` fail the
    lexicon checks.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        credentials = _trie(config.get("credentials", ("md", "rn", "np")))
        super().__init__("credentials", "DOCTOR", [
            Pattern("credential", rf"{_NOT_SHORTHAND}(?:{credentials})(?![\w])",
                    confidence=0.8)])

    def analyze(self, text: str) -> list[PhiSpan]:
        """A DOCTOR span for the name before each credential that has one."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        for match in self.regex.finditer(text):
            # "Lutherville, MD 21093": a state code before a ZIP, and the name
            # before it a town; still PHI, labelled as what it is.
            label = "CITY" if _ZIP_AFTER.match(text, match.end()) else self.label
            lo = max(text.rfind("\n", 0, match.start()) + 1, match.start() - 64)
            name = _NAME_BEFORE_CREDENTIAL.search(text, lo, match.start())
            if name is None or not _reads_as_surname(name.group("last"), lex):
                continue
            start = name.start("last")
            first = name.group("first")
            if first is not None and _reads_as_first_name(first, lex):
                start = name.start("first")
            spans.append(PhiSpan(start, name.end("last"), label, self.source,
                                 self.patterns[0].confidence))
        return spans

    @property
    def labels(self) -> tuple[str, ...]:
        """Staff names, and towns before a state code and a ZIP."""
        return ("DOCTOR", "CITY")


# Two capitalised words of four letters or more (``AGNES MUNROE``, ``Agnes
# Munroe``): checked as a listed first name then a listed surname.
# "Drs Ferullo and Saeed", "Drs. Kim, Patel and Ngata": the names after the first.
_MORE_DOCTORS = re.compile(
    rf"(?<![a-z])drs\.?[ \t]+{_NAME}(?P<more>(?:[ \t]*(?:,[ \t]*(?:and|&)?|/|&|and)"
    rf"[ \t]*{_NAME}){{1,3}})", _FLAGS)
_LISTED_NAME = re.compile(_NAME)
_FULL_NAME = re.compile(
    r"(?<![\w'&/.-])(?P<first>[A-Z][a-z]{3,}|[A-Z]{4,})[ \t]+"
    r"(?P<last>[A-Z][a-z]{3,}|[A-Z]{4,})(?![\w'&/-])")
_PLACE_FLAGS = frozenset({"city", "uscity", "state", "stab", "country"})
_NAMES_BEFORE_CUE = re.compile(
    rf"(?:{_NOT_SHORTHAND}(?P<first>{_NAME})[ \t]+)?{_NOT_SHORTHAND}"
    rf"(?P<last>{_NAME})[ \t]+$")
_ZIP_AFTER = re.compile(r"[ \t]*\d{5}(?:-\d{4})?(?!\d)")
_NAME_BEFORE_CREDENTIAL = re.compile(
    rf"(?:(?<![\w'])(?P<first>[A-Za-z]{{2,}})[ \t]+(?:[A-Za-z]\.?[ \t]+)?)?"
    rf"(?<![\w'])(?P<last>{_NAME}(?:-{_NAME})?)[ \t]*,?[ \t]*$")


def _reads_as_listed_name(word: str, lex: Any) -> bool:
    """A listed name not common as an English word and never a drug or diagnosis.

    For a name with no title before it (``per DOUGLASS``, ``BEA TURA
    aware``), where ``neurosurgery aware`` and ``per protocol`` are the
    usual readings: an unknown word is not enough.
    """
    key = _name_key(word)
    flags = set(lex.flags(key))
    return (lex.english_band(key) <= 3 and not flags & {"drug", "dx"}
            and bool(flags & {"fn1", "fn2", "fn3", "ln1", "ln2", "ln3"}))


def _reads_as_full_name(first: str, last: str, lex: Any) -> bool:
    """A common first name then a listed surname, both listed names (above).

    The first name must be among the more common ones (the lists also hold
    ``Swallow`` and ``Rabbi``: ``SWALLOW EVAL``, ``RABBI KLEIN``) and the
    surname not a place (``Ellicott City``); in ALL-CAPS notes four letters
    keep out the shorthand pairs the lists hold (``MED PRN``, ``FEM ALINE``).
    """
    if not (_reads_as_listed_name(first, lex) and _reads_as_listed_name(last, lex)):
        return False
    last_flags = lex.flags(last.lower())
    return (bool({"fn1", "fn2"} & set(lex.flags(first.lower())))
            and any(f.startswith("ln") for f in last_flags)
            and not _PLACE_FLAGS & set(last_flags))


def _reads_as_first_name(word: str, lex: Any) -> bool:
    """A listed first name not more common as an English word, or an unknown word."""
    key = word.lower()
    band = lex.english_band(key)
    if band == 0:
        return len(key) >= 3 and bool(_VOWEL.search(key))
    return band <= 4 and any(f.startswith("fn") for f in lex.flags(key))


class InstitutionRecognizer(PatternRecognizer):
    """Institutions named by a shape the CRF sees too rarely to learn.

    ``the Zagaria campus``, ``on mackerer campus`` (a name before
    ``campus``, ``pavilion`` or ``building``) and ``St. Mary's`` (a saint's
    name after ``St``). The name must not be an English word (``main
    campus``, ``leave building``), and the saint must be a first name:
    ``ST elevation`` and ``ST changes`` are ECG findings.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        nouns = _trie(config.get("institution_nouns", ("campus",)))
        super().__init__("institutions", "HOSPITAL", [
            Pattern("campus", rf"(?<![\w'])(?P<phi>[A-Za-z][A-Za-z'-]{{2,}})"
                              rf"(?=[ \t]+(?:{nouns})(?![\w]))", confidence=0.8),
            Pattern("saint", r"(?<![\w'])(?P<phi>(?:st|saint)\.?[ \t]+"
                             r"(?P<name>[A-Za-z]{3,})(?:'s)?)(?![\w'])",
                    confidence=0.8),
        ], prefilter=rf"(?:{nouns})|(?<![a-z])(?:st\b|saint)")

    def validate(self, hit: Hit, text: str) -> bool:
        """A campus name unknown to English; a saint that is a first name."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        if hit.pattern.name == "saint":
            name = (hit.group("name") or "").lower()
            return lex.english_band(name) <= 4 and "fn1" in lex.flags(name)
        word = _name_key(text[hit.start:hit.end])
        return lex.english_band(word) <= 2


_UNIVERSITY = re.compile(
    r"(?<![\w'])(?:univ(?:ersity)?\.?|u\.?)(?:[ \t]*(?P<of>of)[ \t]+|[ \t]+)"
    r"(?P<place>[a-z]+)(?:[ \t]+(?P<second>[a-z]+))?(?![\w'])", re.IGNORECASE)


class UniversityRecognizer(PatternRecognizer):
    """A university named after a state: ``U of MD``, ``UOf Maryland``, ``U of Ohio``.

    The academic medical centres patients come from; staff write them without
    a facility noun (``per U Maryland scale``). The place must be a US state
    by the lexicon, and a state code needs the ``of``: ``u of pt``, ``U of
    urine`` and ``tell u or me`` never match.
    """

    def __init__(self) -> None:
        super().__init__("universities", "HOSPITAL", [
            Pattern("university", _UNIVERSITY.pattern, confidence=0.9)])

    def analyze(self, text: str) -> list[PhiSpan]:
        """A HOSPITAL span for each university whose place is a state."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        for match in _UNIVERSITY.finditer(text):
            first = match.group("place").lower()
            second = (match.group("second") or "").lower()
            if second and any(len(parts) == 2 and "state" in flags
                              for parts, flags in lex.phrases.get((first, second), ())):
                end = match.end("second")
            elif {"state", "stab"} & set(lex.flags(first)) and (
                    match.group("of") or "state" in lex.flags(first)):
                end = match.end("place")
            else:
                continue
            spans.append(PhiSpan(match.start(), end, self.label, self.source,
                                 self.patterns[0].confidence))
        return spans


# ----------------------------------------------------------------- detector


@lru_cache(maxsize=1)
def _packaged_rules_text() -> str:
    path = resources.files("deid_pipeline").joinpath("data/rules.json")
    return path.read_text(encoding="utf-8")


def default_config() -> dict[str, Any]:
    """Return the packaged ``data/rules.json``, a fresh copy a caller may edit."""
    return json.loads(_packaged_rules_text())


def build_recognizers(config: Mapping[str, Any]) -> tuple[PatternRecognizer, ...]:
    """Build every built-in recognizer, plus ``custom`` ones, from ``config``."""
    units = tuple(config.get("units", ()))
    recognizers: list[PatternRecognizer] = [
        PhoneRecognizer(config.get("phone", {}), units),
        EmailRecognizer(),
        UrlRecognizer(config.get("url", {})),
        IpRecognizer(),
        SsnRecognizer(config.get("ssn", {})),
        DateRecognizer(config.get("date", {}), units),
        AgeRecognizer(units),
        IdRecognizer(config.get("ids", {})),
        NameRecognizer(config.get("names", {})),
        CredentialNameRecognizer(config.get("names", {})),
        InstitutionRecognizer(config.get("places", {})),
        UniversityRecognizer(),
    ]
    recognizers.extend(PatternRecognizer.from_dict(c) for c in config.get("custom", ()))
    return tuple(recognizers)


@lru_cache(maxsize=1)
def _default_rules() -> tuple[tuple[PatternRecognizer, ...], str]:
    config = default_config()
    return build_recognizers(config), str(config.get("version", "0"))


def is_date_lookalike(text: str, start: int, end: int) -> bool:
    """Whether the packaged date rules call a short date a clinical look-alike.

    See :meth:`DateRecognizer.is_lookalike`; it holds the CRF's dates to the
    same standard as the rules'.
    """
    recognizers, _ = _default_rules()
    dates = next(r for r in recognizers if isinstance(r, DateRecognizer))
    return dates.is_lookalike(text, start, end)


class RuleDetector(Detector):
    """Runs every rule recognizer over a document; spans sorted, overlaps kept.

    Overlaps (an SSN-shaped MRN, a date inside a URL) are left to the central
    merge, which widens rather than drops. Recognizers never change after
    construction, so one detector serves every thread of a worker, and the
    packaged ones are compiled once per process however many detectors exist.
    """

    name = "rules"

    def __init__(self, recognizers: Sequence[PatternRecognizer] | None = None,
                 data_version: str = "custom") -> None:
        """Use ``recognizers``, or the packaged ones from rules.json."""
        if recognizers is None:
            recognizers, data_version = _default_rules()
        self.recognizers = tuple(recognizers)
        self.labels = tuple(sorted({label for r in self.recognizers
                                    for label in r.labels}))
        self.version = f"{CODE_VERSION}+data{data_version}"

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> RuleDetector:
        """Build a detector from a rules.json-shaped mapping (a site's own words)."""
        return cls(build_recognizers(config), str(config.get("version", "0")))

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        """Return every recognizer's spans, sorted by offsets."""
        text = doc.text
        spans: list[PhiSpan] = []
        for recognizer in self.recognizers:
            spans.extend(recognizer.analyze(text))
        spans.sort()
        return tuple(spans)


@register("rules")
def _make_rules(config: TaggerConfig) -> Detector:
    return RuleDetector()
