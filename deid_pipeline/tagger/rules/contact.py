"""Contact recognizers: phone and fax numbers, e-mail addresses, URLs, IPs."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

from deid_pipeline.tagger.rules.base import (
    _FLAGS,
    _G_NUM,
    Hit,
    Pattern,
    PatternRecognizer,
    _normal_words,
    _trie,
    _window_start,
    _word_regex,
)

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
            Pattern("pager", rf"(?<![a-z])(?:{_trie(pager_words)})(?![a-z])"
                             # "Pager: #1234", "pgr #: 1234": marks in any order.
                             r"(?:[ \t]*(?:#|no\.?(?![a-z])|number|[:=-])){0,3}[ \t]*"
                             # "pager 3-4471": a campus digit, a dash, the line.
                             rf"(?P<phi>(?:\d-)?\d{{4,7}}){_NUM_RIGHT}", **words),
            Pattern("extension", r"(?<![a-z])(?:ext|extension)\.?[ \t]*[#:]?[ \t]*"
                                 rf"(?P<phi>(?:\d-(?=\d{{4}}))?\d{{2,6}}){_NUM_RIGHT}",
                    **words),
            # A number "at #" near a phone word ("paged @ #34219").
            Pattern("at_number",
                    rf"(?:@|at)[ \t]*#[ \t]?(?P<phi>\d{{4,7}}){_NUM_RIGHT}",
                    guard=r"(?<![a-z0-9])(?=[@a])", needs_context=True,
                    confidence=0.9),
            # An extension alone near a phone word ("page Dr. Lin at x4471").
            Pattern("x_extension", rf"x[ \t]?(?P<phi>\d{{4,5}}){_NUM_RIGHT}",
                    guard=r"(?<![a-z0-9])(?=x)", needs_context=True, confidence=0.9),
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
