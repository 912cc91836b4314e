"""A GateGroup (rules/gate.py) answers for many gates from one scan of a document.

Its answers must be each gate's own: on real notes, on notes beyond ASCII,
on hostile texts, in threads, after pickling, from a kept database, and
when Hyperscan cannot take an expression or the whole group.
"""

from __future__ import annotations

import pickle
import re
import threading

import pytest

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.rules import detector as detector_module
from deid_pipeline.tagger.rules import gate as gate_module
from deid_pipeline.tagger.rules.detector import RuleDetector
from deid_pipeline.tagger.rules.gate import GATES, Gate, GateGroup

pytestmark = pytest.mark.skipif(gate_module.hyperscan is None,
                                reason="Hyperscan is not installed")

NOTE = (
    "Pt is a 67 yo man admitted from Mercy Hospital on 3/14/2019. Dr. J. Alvarez "
    "called his wife Maria at 617-555-0199; MRN 4418203. Lives in Quincy, MA "
    "02169 with son David (works as a carpenter at Acme Roofing).\n"
    "NEURO: A+O X3. CV: NSR 80S. Plan: f/u with Dr. Kim on Monday.\n")
HOSTILE = (
    "",
    "\x00\x1c\x1d" * 50,
    "MR\x1cSMITH and o\u2019neil, St.\u00a0Mary\u2019s, \u212aELVIN \u0130STANBUL",
    "\ud800 lone surrogate Dr. Lee \udfff",
    "a" * 20_000 + " Dr. Smith " + "9" * 5_000,
    "\u0661\u0662/\u0663\u0664/\u0662\u0660\u0661\u0669 \uff11\uff12:30",
)


def _individually(gate: Gate, text: str) -> bool:
    """The gate's answer from its own database (no group announced)."""
    assert getattr(gate_module._ANNOUNCED, "group", None) is None  # noqa: SLF001
    return gate.passes(text)


def _answers(group: GateGroup, text: str) -> tuple[list[bool], list[bool]]:
    group.expect(text)
    try:
        grouped = [gate.passes(text) for gate in group.gates]
    finally:
        group.expect(None)
    return grouped, [_individually(gate, text) for gate in group.gates]


@pytest.fixture(scope="module")
def group() -> GateGroup:
    return RuleDetector()._gates  # noqa: SLF001


def test_the_detector_groups_every_recognizer_s_gates(group):
    assert len(group.gates) >= 30
    names = RuleDetector().recognizers
    assert all(r._scanner.gate in group.gates for r in names)  # noqa: SLF001


@pytest.mark.parametrize("text", [NOTE, NOTE.upper(), NOTE.replace("'", "\u2019")
                                  + " caf\u00e9", *HOSTILE])
def test_grouped_answers_are_each_gate_s_own(group, text):
    grouped, alone = _answers(group, text)
    assert grouped == alone
    assert not text.strip() or False in grouped or True in grouped


def test_grouped_answers_on_the_nursing_notes(group, physionet_docs):
    texts = [doc.text for doc in physionet_docs[:300]]
    texts += [t.replace("'", "\u2019") for t in texts[:50]]
    differing = [i for i, text in enumerate(texts)
                 if _answers(group, text)[0] != _answers(group, text)[1]]
    assert differing == []
    # And the group did answer (most gates say no on most notes).
    grouped, _ = _answers(group, texts[0])
    assert grouped.count(False) > len(grouped) // 3


def test_the_detector_finds_the_same_spans_with_the_group_and_without(
        physionet_docs, monkeypatch):
    docs = [ClinicalDocument(doc_id=str(i), text=text, source="test")
            for i, text in enumerate([NOTE, *HOSTILE,
                                      *(d.text for d in physionet_docs[:150])])]
    grouped = RuleDetector()
    monkeypatch.setattr(detector_module, "group_for", lambda gates: None)
    alone = RuleDetector()
    assert alone._gates is None  # noqa: SLF001
    assert [grouped.detect(d) for d in docs] == [alone.detect(d) for d in docs]


def test_only_the_announced_text_is_answered_by_the_group(group):
    gate = group.gates[0]
    piece = NOTE[:40]
    alone = _individually(gate, piece)
    group.expect(NOTE)
    try:
        assert group.found(NOTE) is not None
        assert group.found(piece) is None  # a piece: the gate reads it alone
        assert group.found(str(NOTE.encode().decode())) is None  # equal, not it
        assert gate.passes(piece) == alone
    finally:
        group.expect(None)
    assert group.found(NOTE) is None


def test_each_thread_answers_for_its_own_text(group):
    texts = [NOTE, "CALL 617-555-1234 AFTER 5/6/2020.", "NO PHI HERE AT ALL.",
             NOTE.upper()]
    expected = {text: _answers(group, text)[1] for text in texts}
    errors: list[str] = []
    barrier = threading.Barrier(len(texts))

    def work(text: str) -> None:
        barrier.wait()
        for _ in range(30):
            group.expect(text)
            try:
                got = [gate.passes(text) for gate in group.gates]
            finally:
                group.expect(None)
            if got != expected[text]:
                errors.append(text[:20])

    threads = [threading.Thread(target=work, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_an_expression_hyperscan_cannot_take_answers_for_itself():
    readable = Gate(r"\d{3}-\d{4}", 0)
    unreadable = Gate(r"a # comment\n b", re.VERBOSE)  # no source for Hyperscan
    group = GateGroup([readable, unreadable])
    grouped, alone = _answers(group, "no digits, no ab")
    assert grouped == alone == [False, True]
    group.expect("call 555-1234")
    try:
        found = group.found("call 555-1234")
        assert found is None or 1 not in found[1]
    finally:
        group.expect(None)


def test_a_group_hyperscan_cannot_compile_leaves_every_gate_to_itself(monkeypatch):
    gates = [Gate(r"mrn\W*\d{5,}", re.IGNORECASE), Gate(r"\d{3}-\d{4}", 0)]
    group = GateGroup(gates)
    monkeypatch.setattr(GATES, "get", lambda key: None)
    real = gate_module._compiled  # noqa: SLF001
    monkeypatch.setattr(gate_module, "_compiled", lambda expressions: (
        False if len(expressions) > 1 else real(expressions)))
    for text in ("MRN: 123456", "call 555-1234", "nothing"):
        grouped, alone = _answers(group, text)
        assert grouped == alone
    assert group._databases[False] is False  # noqa: SLF001


def test_a_kept_group_database_is_read_back(monkeypatch):
    gates = [Gate(r"(?<!\w)dr\.?[ \t]+[A-Z][a-z]+", 0), Gate(r"\b\d{5}\b", 0)]
    _answers(GateGroup(gates), "dr. Kim at 02169")  # compiled, to be kept
    fresh = [Gate(g.pattern, g.flags) for g in gates]
    # What this process made, as the next process reads it from the file.
    monkeypatch.setattr(GATES, "get", lambda key: GATES.used().get(key))

    def no_compiling(expressions):
        raise AssertionError("compiled again")

    monkeypatch.setattr(gate_module, "_compiled", no_compiling)
    group = GateGroup(fresh)
    group.expect("dr. Kim at 02169")
    try:
        assert group.found("dr. Kim at 02169") == ({0, 1}, frozenset({0, 1}))
    finally:
        group.expect(None)


def test_a_damaged_kept_group_database_is_compiled_again(monkeypatch):
    gates = [Gate(r"fax[: ]+\d{3}-\d{4}", re.IGNORECASE)]
    monkeypatch.setattr(GATES, "get", lambda key: b"not a database")
    grouped, alone = _answers(GateGroup(gates), "FAX: 555-1234")
    assert grouped == alone == [True]


def test_gates_answer_from_the_group_announced_in_their_thread():
    """Two detectors may share gates: each announces its own group."""
    phone, zip_code = Gate(r"\d{3}-\d{4}", 0), Gate(r"\b\d{5}\b", 0)
    first = GateGroup([phone, phone, zip_code])
    second = GateGroup([zip_code, phone])
    assert first.gates == (phone, zip_code)
    text = "call 555-1234"
    for group in (first, second, first):
        group.expect(text)
        try:
            assert [phone.passes(text), zip_code.passes(text)] == [True, False]
            assert group.found(text) is not None
        finally:
            group.expect(None)
    assert getattr(gate_module._ANNOUNCED, "group", None) is None  # noqa: SLF001


def test_two_detectors_each_answer_from_their_own_group(physionet_docs):
    """The run builds a rule detector before the tagger's: both must read once."""
    early, tagger_s = RuleDetector(), RuleDetector()
    text = physionet_docs[0].text
    for detector in (early, tagger_s):
        group = detector._gates  # noqa: SLF001
        scanned = []
        real = group._scan  # noqa: SLF001
        group._scan = lambda text, real=real: scanned.append(1) or real(text)  # noqa: SLF001
        try:
            detector.detect(ClinicalDocument(doc_id="1", text=text, source="test"))
        finally:
            del group._scan  # noqa: SLF001
        assert scanned == [1]


def test_a_detector_pickles_with_its_group():
    detector = pickle.loads(pickle.dumps(RuleDetector()))
    group = detector._gates  # noqa: SLF001
    scanners = [s for r in detector.recognizers for s in r.scanners()]
    assert all(s.gate in group.index for s in scanners if s.gate is not None)
    doc = ClinicalDocument(doc_id="1", text=NOTE, source="test")
    assert detector.detect(doc) == RuleDetector().detect(doc)


def test_the_same_expressions_at_other_places_read_their_own_database(monkeypatch):
    """A kept database's ids are places in its group: another order is another one."""
    monkeypatch.setattr(GATES, "get", lambda key: GATES.used().get(key))
    phone, unreadable, zip_code = (r"\d{3}-\d{4}", 0), (r"x # y", re.VERBOSE), (
        r"\b\d{5}\b", 0)
    text = "zip 02169 only"
    first = GateGroup([Gate(*phone), Gate(*unreadable), Gate(*zip_code)])
    assert _answers(first, text)[0] == [False, True, True]
    second = GateGroup([Gate(*phone), Gate(*zip_code)])
    assert _answers(second, text)[0] == [False, True]
    third = GateGroup([Gate(*zip_code), Gate(*phone)])
    assert _answers(third, text)[0] == [True, False]


def test_a_group_of_expressions_hyperscan_cannot_take_at_all():
    group = GateGroup([Gate(r"a # b", re.VERBOSE), Gate(r"c # d", re.VERBOSE)])
    assert _answers(group, "anything") == ([True, True], [True, True])
    assert group._databases[False] is False  # noqa: SLF001
