"""The gate (rules/gate.py) skips a rule's scan only where it cannot match.

``tests/test_rules_scan.py`` compares every recognizer's scan, gate
included, with ``finditer`` of its expression on samples, case variants,
hostile, generated and real texts. Here: that the gate does skip texts,
that characters and syntax ``re`` and Hyperscan read differently never make
it skip a match, and that it survives threads, pickling, a damaged cache and
a platform without Hyperscan.
"""

from __future__ import annotations

import pickle
import random
import re
import threading

import pytest

from deid_pipeline.tagger.rules import gate as gate_module
from deid_pipeline.tagger.rules.ascii_classes import gate_source
from deid_pipeline.tagger.rules.detector import RuleDetector
from deid_pipeline.tagger.rules.gate import GATES, Gate, ascii_bytes
from deid_pipeline.tagger.rules.scan import Scanner

# A nursing note with no PHI in it (the shape of the PhysioNet notes).
PLAIN_NOTE = (
    "NEURO: ALERT AND ORIENTED X3, MAE, FOLLOWS COMMANDS. C/O INCISIONAL PAIN, "
    "MEDICATED WITH MSO4 2MG IV WITH GOOD EFFECT.\n"
    "CV: NSR 80S, NO ECTOPY. BP STABLE 110-130/60S. K+ 3.9, REPLETED.\n"
    "RESP: LUNGS CLEAR, DIMINISHED AT BASES. SATS 95-97% ON 4L NC.\n"
    "GI/GU: ABD SOFT, +BS. FOLEY PATENT FOR CLEAR YELLOW URINE.\n"
    "PLAN: CONTINUE TO MONITOR, ADVANCE DIET AS TOLERATED.\n")


def _gated(pattern: str, flags: int = 0) -> Scanner:
    scanner = Scanner(re.compile(pattern, flags))
    assert scanner.gate is not None
    return scanner


def test_most_rule_scans_are_skipped_on_a_note_without_phi():
    """The point of it: on a plain note most recognizers' gates say no."""
    recognizers = RuleDetector().recognizers
    data = ascii_bytes(PLAIN_NOTE)
    verdicts = [r._scanner.gate.passes(data) for r in recognizers]  # noqa: SLF001
    assert verdicts.count(False) >= 2 * len(verdicts) // 3


def test_a_phone_number_opens_its_gate():
    by_name = {r.name: r._scanner.gate for r in RuleDetector().recognizers}  # noqa: SLF001
    assert not by_name["phone"].passes(ascii_bytes(PLAIN_NOTE))
    assert by_name["phone"].passes(ascii_bytes(PLAIN_NOTE + "CALL 617-555-1234.\n"))


@pytest.mark.parametrize("pattern, flags, matching, other", [
    # re's \s takes the file and group separators; Hyperscan's does not.
    (r"mr\s(?P<n>[a-z]+)", re.IGNORECASE, "MR\x1cSMITH", "MRSMITH"),
    # \u escapes are re's syntax, not Hyperscan's.
    (r"[a-z]+[\u2019']s[ \t]+wife", re.IGNORECASE, "Smith's wife", "Smiths wife"),
    (r"o\u2019|o'", 0, "o'neil", "oneil"),
    # {,n} is a repeat to re and four characters to Hyperscan.
    (r"#x{,2}y", 0, "#y and #xxy", "#xxxy"),
    (r"(?i:dr)\.?[ \t]+(?-i:[A-Z])\w+", 0, "dR. Kim", "dr. kim"),
    (r"(?<![\w.])(?:st|saint)\.?\s+(?P<x>[A-Z][a-z]+)", re.IGNORECASE,
     "st. Mary", "1st Mary"),
    (r"(?P<s>[/.-])\d+(?P=s)\d{4}", 0, "3/14/2019", "3/14-2019x"),
    (r"^pt name:.*$", re.IGNORECASE | re.MULTILINE, "hx\nPT NAME: x\n", "pt: x"),
    (r"\bmrn\b\W*(?P<id>\d{5,})\Z", re.IGNORECASE, "MRN: 123456", "mrn:123"),
    (r"(?<=[a-z]\d)\d{3}", 0, "a1234", "1234"),
    (r"note.end", re.DOTALL, "note\nend", "noteend"),
])
def test_what_re_and_hyperscan_read_differently_never_hides_a_match(
        pattern, flags, matching, other):
    scanner = _gated(pattern, flags)
    for text in (matching, other, f"x {matching} y\n", matching.upper()):
        assert [m.regs for m in scanner.finditer(text)] == [
            m.regs for m in scanner.regex.finditer(text)], (pattern, text)
    assert scanner.gate.passes(ascii_bytes(matching))


def test_random_texts_of_a_pattern_s_own_characters():
    """Texts made of exactly the characters a pattern reads, against finditer."""
    patterns = [(r"(?<!\w)(?P<d>\d{1,2})[/-](?P<m>\d{1,2})(?:[/-](?P<y>\d{2,4}))?"
                 r"(?![\w/])", 0),
                (r"(?<![a-z])(?:dr|drs)\.?[ \t]+[a-z]{2,}(?:[ \t]*,[ \t]*md)?",
                 re.IGNORECASE),
                (r"\s{2,}[a-z]{,3}\S", re.IGNORECASE)]
    rng = random.Random(45)
    alphabet = "0123456789/-.,dDrRsSmM \t\n\x1c\x1f\x0bxa"
    for pattern, flags in patterns:
        scanner = _gated(pattern, flags)
        for _ in range(400):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            assert [m.regs for m in scanner.finditer(text)] == [
                m.regs for m in scanner.regex.finditer(text)], (pattern, text)


def test_a_pattern_the_gate_cannot_read_is_scanned_everywhere():
    regex = re.compile(r"dr \s* (?P<n>\w+)  # verbose", re.VERBOSE | re.IGNORECASE)
    assert gate_source(regex.pattern, regex.flags) is None
    scanner = Scanner(regex)
    assert [m.span("n") for m in scanner.finditer("seen by Dr Kim")] == [(11, 14)]
    assert scanner.gate.passes(b"anything")


def test_gates_on_many_threads_at_once():
    """Each thread has its own scratch: Hyperscan's may serve one scan at a time."""
    scanner = _gated(r"(?<!\w)\d{1,2}/\d{1,2}/\d{2,4}(?!\w)")
    texts = [PLAIN_NOTE * (k % 3 + 1) + ("on 3/4/19" if k % 2 else "")
             for k in range(60)]
    expected = [bool(list(scanner.finditer(t))) for t in texts]
    results: dict[int, list[bool]] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            results[index] = [scanner.gate.passes(t.encode()) for t in texts * 5][:60]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(results[i] == expected for i in range(4))


def test_a_scanner_and_its_gate_pickle():
    scanner = _gated(r"(?i:mrn)[ \t]*:?[ \t]*(?P<id>\d{6,})")
    scanner.gate.passes(b"MRN: 1234567")
    copy = pickle.loads(pickle.dumps(scanner))
    assert copy.gate is not scanner.gate
    assert copy.gate.passes(b"MRN: 1234567")
    assert not copy.gate.passes(b"no number here")


def test_a_damaged_kept_database_is_compiled_again(monkeypatch):
    pattern = r"(?<![a-z])wife[ \t]+(?P<n>[A-Z][a-z]+)"
    key = Gate(pattern, 0)._key  # noqa: SLF001
    monkeypatch.setitem(GATES.stored(), key, b"not a database")
    gate = Gate(pattern, 0)
    assert gate.passes(b"his wife Anna")
    assert not gate.passes(b"his wife")
    assert GATES.used()[key] != b"not a database"


def test_a_gate_that_fails_to_scan_passes_every_text(monkeypatch):
    """A CPU or build Hyperscan cannot scan on costs speed, never a match."""
    scanner = _gated(r"(?<![a-z])wife[ \t]+(?P<n>[A-Z][a-z]+)")
    assert not scanner.gate.passes(b"no one")

    def broken(database: object) -> object:
        raise gate_module.hyperscan.error("no scratch")

    monkeypatch.setattr(gate_module, "_scratch", broken)
    assert scanner.gate.passes(b"no one")
    assert [m.span("n") for m in scanner.finditer("his wife Anna")] == [(9, 13)]


def test_without_hyperscan_every_text_is_scanned(monkeypatch):
    monkeypatch.setattr(gate_module, "hyperscan", None)
    scanner = Scanner(re.compile(r"dr\.?[ \t]+(?P<n>[A-Z]\w+)", re.IGNORECASE))
    assert scanner.gate is None
    assert [m.span("n") for m in scanner.finditer("seen by Dr. Kim")] == [(12, 15)]


def test_the_last_text_s_bytes_are_kept_by_identity():
    text = "seen by dr kim " * 3
    first = ascii_bytes(text)
    assert ascii_bytes(text) is first
    other = "".join(["seen by dr kim "] * 3)  # equal, another object
    assert ascii_bytes(other) == first and ascii_bytes(other) is not first
