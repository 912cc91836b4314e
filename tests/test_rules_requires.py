"""Pattern.requires is a speed hint only: it never changes what a rule finds.

One of a pattern's ``requires`` words must be in every text the pattern
matches in (case aside);
then leaving the pattern out of the expression for a text without it cannot
change a span. Checked on every pattern match (before any validation) over
the samples, lines written for each pattern with a requirement, and, when
present, the PhysioNet nursing notes.
"""

from __future__ import annotations

import copy
import glob
import json
import os
import re

import pytest

from deid_pipeline.tagger.rules.detector import RuleDetector

ROOT = os.path.join(os.path.dirname(__file__), "..")

# A line each pattern with a requirement matches (and near misses).
LINES = (
    "Pt transferred from Baltimore VA this am.",
    "Seen at Elkton V.A. before.",
    "Followed by Pruitt & Lowe Clinic; Smith and Jones Associates call.",
    "Discharged to Mercy Hospital of Lakemont; the clinic of the Wexner.",
    "Referred to Lahey Clinic, seen at the Wexner heart clinic last week.",
    "Thank you for seeing VILLA, LISA today. Thanks for evaluating Mr. Ode.",
    "CLINIC OF HOPE; VA nurse; VAMC; hospital  of  Saint Louis.",
    "Nguyen, 45 yo F. Sato 101 y/o. harpreet singh's mom. Tran family. Okafor FAMILY.",
    "baby Hope born. patel baby born. Baby Boy Okafor. Kowalczyk, 72 y.o. man.",
    "mrs o'connor 98 wants to stop meds. Mr. Katz 93, DNR. MISS LEE 91.",
)


def _texts() -> list[str]:
    texts = list(LINES)
    for path in sorted(glob.glob(os.path.join(ROOT, "samples", "notes", "*.txt"))):
        with open(path, encoding="utf-8") as fh:
            texts.append(fh.read())
    with open(os.path.join(ROOT, "samples", "notes.jsonl"), encoding="utf-8") as fh:
        texts.extend(json.loads(line)["text"] for line in fh if line.strip())
    return texts


def _required(detector: RuleDetector):
    for recognizer in detector.recognizers:
        for index, words in recognizer._requires:  # noqa: SLF001
            yield recognizer, index, words


def _check(texts: list[str]) -> int:
    detector = RuleDetector()
    checked = 0
    for recognizer, index, words in _required(detector):
        group = f"p{index}"
        for text in texts:
            for match in recognizer.regex.finditer(text):
                if match.group(group) is not None:
                    checked += 1
                    lower = text.lower()
                    assert any(w in lower for w in words), (
                        f"{recognizer.name}.{recognizer.patterns[index].name} matched "
                        "a text without its requirement")
    return checked


def test_every_requirement_holds_where_its_pattern_matches():
    assert any(True for _ in _required(RuleDetector())), "no pattern has requires"
    assert _check(_texts()) >= len(LINES)


def test_spans_equal_those_of_the_recognizers_without_requirements():
    fast = RuleDetector().recognizers
    plain = [copy.copy(r) for r in fast]  # the packaged rules are shared
    for recognizer in plain:
        recognizer._requires = ()  # noqa: SLF001
    assert sum(len(r._requires) for r in fast) >= 5  # noqa: SLF001
    for text in _texts():
        for a, b in zip(fast, plain):
            same = a.analyze(text) == b.analyze(text)
            assert same, a.name


def test_requirements_hold_on_the_nursing_notes(physionet_docs):
    checked = _check([doc.text for doc in physionet_docs])
    assert checked > 0, checked


def test_a_bad_requirement_is_a_clear_error():
    from deid_pipeline.tagger.rules.base import Pattern, PatternRecognizer

    for bad in (("",), ("clínica",)):
        with pytest.raises(ValueError, match="requires takes non-empty ASCII words"):
            PatternRecognizer("x", "DOCTOR", [Pattern("p", r"\d+", requires=bad)])


def test_a_text_not_in_ascii_is_never_spared():
    """Case-blind matching differs from str.lower outside ASCII (a dotless ı)."""
    from deid_pipeline.tagger.rules.base import Pattern, PatternRecognizer

    recognizer = PatternRecognizer("x", "HOSPITAL", [
        Pattern("p", r"(?P<phi>[A-Z]\w+)[ \t]+clinic", requires=("clinic",))],
        flags=re.IGNORECASE)
    assert [s.start for s in recognizer.analyze("seen at Lahey Clınic")] == [8]
    assert recognizer.analyze("seen at Lahey hospital") == []


def test_a_text_s_requirements_are_answered_for_that_text_only():
    """Kept for the last text asked about (by identity), never for another."""
    from deid_pipeline.tagger.rules.base import holds_any

    first = "Baby Hope born at 0310, to NICU."
    assert holds_any(first, ("baby",)) and not holds_any(first, ("thank",))
    other = "".join(["Thank you for seeing ", "Mr. Ode today."])
    assert holds_any(other, ("thank", "x")) and not holds_any(other, ("baby",))
    assert holds_any(first, ("baby",)) and not holds_any(first, ("thank", "x"))
