"""A recognizer's patterns scanned apart give its joined expression's matches.

``tests/test_rules_scan.py`` compares them with ``finditer`` of the joined
expression for every recognizer on samples, case variants, hostile,
generated and real texts. Here: the alternation's rules on small cases
made to test them, that the patterns are scanned apart where they should
be (the point: issue 45), and that it survives pickling.
"""

from __future__ import annotations

import pickle

import pytest

from deid_pipeline.tagger.rules import streams as streams_module
from deid_pipeline.tagger.rules.base import Pattern, PatternRecognizer
from deid_pipeline.tagger.rules.detector import RuleDetector

pytest.importorskip("hyperscan")


def _recognizer(*regexes: str) -> PatternRecognizer:
    return PatternRecognizer("t", "DOCTOR", [
        Pattern(f"p{i}", regex, guard=r"(?<![a-z])", check_negative=False)
        for i, regex in enumerate(regexes)])


def _walked(recognizer: PatternRecognizer, text: str) -> list[tuple[int, tuple]]:
    every = tuple(range(len(recognizer.patterns)))
    apart = recognizer._streams.matches(text, recognizer._scanner, every)  # noqa: SLF001
    assert apart is not None, "scanned joined"
    return [(by_index[m.lastindex], m.span(f"p{by_index[m.lastindex]}"))
            for m, by_index in apart]


def _joined(recognizer: PatternRecognizer, text: str) -> list[tuple[int, tuple]]:
    by_index = recognizer._by_index  # noqa: SLF001
    return [(by_index[m.lastindex], m.span(f"p{by_index[m.lastindex]}"))
            for m in recognizer.regex.finditer(text)]


@pytest.mark.parametrize("regexes, text", [
    # At one place the first pattern in order wins, however long the other.
    ((r"ab", r"abcd", r"zz"), "abcd abcd"),
    ((r"abcd", r"ab", r"zz"), "abcd ab"),
    # A later pattern's match inside an earlier one's is never found...
    ((r"abc", r"bc", r"zz"), "abc bc"),
    # ... but one starting where the last ended is.
    ((r"ab", r"cd", r"zz"), "ab abcd cd"),
    # Overlapping matches of one pattern: the next from where one ends.
    ((r"aba", r"zz", r"qq"), "ababa aba"),
    # A pattern absent from the text (its gate says no) changes nothing.
    ((r"x\d", r"y\d", r"ab"), "x1 ab x2 ab"),
])
def test_the_alternation_s_rules_hold(regexes, text):
    recognizer = _recognizer(*regexes)
    assert _walked(recognizer, text) == _joined(recognizer, text)


def test_where_every_pattern_passes_the_joined_scan_runs():
    recognizer = _recognizer(r"ab", r"cd")
    every = (0, 1)
    scanner = recognizer._scanner  # noqa: SLF001
    assert recognizer._streams.matches("ab cd", scanner, every) is None  # noqa: SLF001
    assert recognizer._streams.matches("ab \u00e9", scanner, every) is None  # noqa: SLF001
    assert [s.start for s in recognizer.analyze("ab cd ab")] == [0, 3, 6]


def test_a_pattern_that_can_match_empty_keeps_the_joined_scan():
    """``finditer``'s rules for an empty match are its own: not walked apart."""
    recognizer = _recognizer(r"ab", r"cd", r"x?")
    every = (0, 1, 2)
    scanner = recognizer._scanner  # noqa: SLF001
    assert recognizer._streams.matches("cd cd", scanner, every) is None  # noqa: SLF001
    assert [(s.start, s.end) for s in recognizer.analyze("cd cd")] == [(0, 2), (3, 5)]


def test_the_names_scan_runs_only_the_shapes_a_note_can_hold(monkeypatch):
    """The point: a note with one name shape scans that shape alone."""
    detector = RuleDetector()
    names = next(r for r in detector.recognizers if r.name == "names")
    walked = []
    real = streams_module._walk  # noqa: SLF001
    def counted(text, scans):
        walked.append(len(scans))
        return real(text, scans)

    monkeypatch.setattr(streams_module, "_walk", counted)
    note = ("Pt resting comfortably, vss. Son Bill called, updated on plan.\n"
            "Afebrile, tolerating diet, ambulating with PT.\n")
    spans = detector.detect(_doc(note))
    assert [note[s.start:s.end] for s in spans if s.source == "rules:names"] == ["Bill"]
    assert walked and max(walked) <= 2
    assert len(names._streams.gates) == len(names.patterns)  # noqa: SLF001


def test_the_gate_group_covers_every_pattern_s_gate():
    """One scan a note answers for them all: none is left to scan alone."""
    detector = RuleDetector()
    group = detector._gates  # noqa: SLF001
    gates = [g for r in detector.recognizers for g in r._streams.gates]  # noqa: SLF001
    assert len(gates) > 50
    loaded = group._load(False)  # noqa: SLF001
    assert loaded is not False
    assert all(group.index[g] in loaded[1] for g in gates)
    # Beyond ASCII the patterns are never scanned apart, and the gates answer
    # alone (compiled together they took ten times as long).
    assert group._load(True) is False  # noqa: SLF001


def test_a_pickled_detector_scans_apart_the_same():
    detector = RuleDetector()
    note = "Mrs. Okafor seen 3/14 by Dr. Kim; son Bill (HCP) aware. BP 120/70."
    before = detector.detect(_doc(note))
    copy = pickle.loads(pickle.dumps(detector))
    names = next(r for r in copy.recognizers if r.name == "names")
    assert not names._streams._scans  # noqa: SLF001 - built again where needed
    assert copy.detect(_doc(note)) == before


def _doc(text: str):
    from deid_pipeline.model import ClinicalDocument

    return ClinicalDocument(doc_id="n1", text=text, source="jsonl")
