"""Site rules: a hospital's own words and patterns, in a file, without code.

``run --rules FILE`` (and ``evaluate``, ``train``) reads a JSON file:

- ``deny``: label -> phrases that are always PHI of that label (the wards,
  the local towns), found as whole words in any case;
- ``allow``: words never PHI: a span of the rules or the CRF whose whole text
  is one of them is dropped (the header dictionary's are kept: a value of the
  patient's own header is PHI whatever a site says);
- ``patterns``: extra regular expressions, each with a ``name``, a ``label``
  and optional ``context`` words (then it fires only with one of them near on
  its line) and ``confidence``;
- ``version`` and ``comment``: free text.

The file is validated strictly before any record is read, as Presidio's
pydantic models forbid unknown keys: a misspelt key, an unknown label or a
regular expression that does not compile is an error naming it, never a
silent default. The sha256 of the file's bytes goes into the rule detector's
version (and so into run.json), so a run says which site rules it used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from deid_pipeline.labels import LABELS
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.detection import Detection, Detector
from deid_pipeline.tagger.rules.base import (
    _BLANKS,
    Pattern,
    PatternRecognizer,
    _normal_words,
    _trie,
)

_TOP_KEYS = frozenset({"version", "comment", "deny", "allow", "patterns"})
_PATTERN_KEYS = frozenset({"name", "regex", "label", "context", "confidence"})
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


class SiteRulesError(ValueError):
    """A site rules file that cannot be used; the message names the culprit."""


@dataclass(frozen=True, slots=True)
class SitePattern:
    """One extra pattern of a site: a regex, its label, optional context words."""

    name: str
    regex: str
    label: str
    context: tuple[str, ...] = ()
    confidence: float = 0.9


@dataclass(frozen=True, slots=True)
class SiteRules:
    """A validated site rules file; ``sha256`` is of the file's bytes."""

    deny: tuple[tuple[str, str], ...]
    allow: frozenset[str]
    patterns: tuple[SitePattern, ...]
    sha256: str
    version: str = ""

    def recognizers(self) -> tuple[PatternRecognizer, ...]:
        """The deny list (one recognizer per label) and the extra patterns."""
        out: list[PatternRecognizer] = []
        by_label: dict[str, list[str]] = {}
        for phrase, label in self.deny:
            by_label.setdefault(label, []).append(phrase)
        for label, phrases in sorted(by_label.items()):
            out.append(PatternRecognizer(f"site_deny_{label.lower()}", label, [Pattern(
                "phrase", rf"(?<![\w])(?:{_trie(phrases)})(?![\w])",
                check_negative=False)]))
        for p in self.patterns:
            out.append(PatternRecognizer(f"site_{p.name}", p.label, [Pattern(
                p.name, p.regex, confidence=p.confidence,
                needs_context=bool(p.context), context=p.context,
                check_negative=False)]))
        return tuple(out)

    def allowed(self, text: str, span: PhiSpan) -> bool:
        """Whether ``span``'s whole text is an allowlist word (so never PHI)."""
        value = _BLANKS.sub(" ", text[span.start:span.end].strip()).lower()
        return value in self.allow


def _fail(path: str, what: str) -> SiteRulesError:
    return SiteRulesError(f"site rules {path}: {what}")


def _strings(path: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, f"{key} must be a list of non-empty strings")
    return value


def _label(path: str, key: str, label: Any) -> str:
    if label not in LABELS:
        raise _fail(path, f"{key}: unknown label {label!r} (known: "
                          f"{', '.join(LABELS)})")
    return label


def _pattern(path: str, index: int, item: Any) -> SitePattern:
    where = f"patterns[{index}]"
    if not isinstance(item, Mapping):
        raise _fail(path, f"{where} must be an object")
    unknown = sorted(set(item) - _PATTERN_KEYS)
    if unknown:
        raise _fail(path, f"{where}: unknown key {unknown[0]!r} (known: "
                          f"{', '.join(sorted(_PATTERN_KEYS))})")
    for key in ("name", "regex", "label"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise _fail(path, f"{where}: {key!r} is required (a string)")
    name = item["name"]
    if not _NAME.fullmatch(name):
        raise _fail(path, f"{where}: name {name!r} must be letters, digits, _ or -")
    where = f"pattern {name!r}"
    label = _label(path, where, item["label"])
    try:
        re.compile(item["regex"])
    except re.error as exc:
        raise _fail(path, f"{where}: regex does not compile: {exc}") from None
    confidence = item.get("confidence", 0.9)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or (
            not 0 < confidence <= 1):
        raise _fail(path, f"{where}: confidence must be a number in (0, 1]")
    context = _strings(path, f"{where}: context", item.get("context", []))
    return SitePattern(name, item["regex"], label, tuple(context), float(confidence))


def parse_site_rules(data: bytes, path: str = "<rules>") -> SiteRules:
    """Validate a site rules file's bytes (see the module doc for the keys)."""
    try:
        config = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise _fail(path, "must be a JSON object")
    unknown = sorted(set(config) - _TOP_KEYS)
    if unknown:
        raise _fail(path, f"unknown key {unknown[0]!r} (known: "
                          f"{', '.join(sorted(_TOP_KEYS))})")
    deny_config = config.get("deny", {})
    if not isinstance(deny_config, dict):
        raise _fail(path, "deny must be an object: label -> list of phrases")
    deny = []
    for label, phrases in deny_config.items():
        _label(path, "deny", label)
        deny.extend((p, label) for p in sorted(_normal_words(
            _strings(path, f"deny.{label}", phrases))))
    allow = frozenset(_normal_words(_strings(path, "allow", config.get("allow", []))))
    items = config.get("patterns", [])
    if not isinstance(items, list):
        raise _fail(path, "patterns must be a list")
    patterns = tuple(_pattern(path, i, item) for i, item in enumerate(items))
    names = [p.name for p in patterns]
    if len(set(names)) < len(names):
        raise _fail(path, "two patterns have the same name")
    version = config.get("version", "")
    if not isinstance(version, str):
        raise _fail(path, "version must be a string")
    return SiteRules(tuple(deny), allow, patterns,
                     hashlib.sha256(data).hexdigest(), version)


@lru_cache(maxsize=8)
def _load(path: str, stamp: tuple[int, int]) -> SiteRules:
    with open(path, "rb") as fh:
        return parse_site_rules(fh.read(), path)


def load_site_rules(path: str) -> SiteRules:
    """Read and validate ``path`` (cached per file, size and mtime).

    Raises:
      SiteRulesError: the file is unreadable or invalid; the message names
        the key, label or pattern at fault.

    """
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise SiteRulesError(f"site rules {path}: {exc.strerror}") from None
    return _load(path, (stat.st_size, stat.st_mtime_ns))


def drop_allowed(text: str, spans: Sequence[PhiSpan],
                 site: SiteRules) -> tuple[PhiSpan, ...]:
    """``spans`` less those whose whole text is one of the site's allow words."""
    if not site.allow:
        return tuple(spans)
    return tuple(s for s in spans if not site.allowed(text, s))


class AllowListed(Detector):
    """Another detector's spans less the site's allow words.

    Wraps the CRF (and any detector but the header dictionary and the rules,
    which filter their own) so that a site's never-PHI words are never
    redacted, whichever detector proposed them. Everything else, the CRF's
    ``posterior`` included, is the wrapped detector's.
    """

    def __init__(self, inner: Detector, site: SiteRules) -> None:
        self.inner = inner
        self.site = site
        self.name = inner.name
        self.labels = inner.labels
        self.version = inner.version

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "site"):  # not yet set (unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        return drop_allowed(doc.text, self.inner.detect(doc), self.site)

    def analyze(self, doc: ClinicalDocument) -> Detection:
        return self._filtered(doc, self.inner.analyze(doc))

    def decode(self, doc: ClinicalDocument, *args: Any, **kwargs: Any) -> Detection:
        """The CRF's decode at a bias, filtered (``evaluate``'s bias sweep)."""
        return self._filtered(doc, self.inner.decode(doc, *args, **kwargs))

    def _filtered(self, doc: ClinicalDocument, found: Detection) -> Detection:
        return dataclasses.replace(
            found, spans=drop_allowed(doc.text, found.spans, self.site))


def site_report(docs: Sequence[ClinicalDocument], site: SiteRules) -> list[str]:
    """How each site rule fares on gold documents: counts, never text.

    Per deny label and pattern, the spans it finds and how many overlap a
    gold span; for the allow list, the gold spans it would drop.
    """
    lines = [f"site rules sha256 {site.sha256}"]
    for recognizer in site.recognizers():
        found = right = 0
        for doc in docs:
            for span in recognizer.analyze(doc.text):
                found += 1
                right += any(g.start < span.end and span.start < g.end
                             for g in doc.gold)
        lines.append(f"{recognizer.name}: {found} found, {right} on gold PHI")
    dropped = sum(site.allowed(doc.text, g) for doc in docs for g in doc.gold)
    lines.append(f"allow: {len(site.allow)} words, {dropped} gold spans are one")
    return lines
