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
from deid_pipeline.tagger.rules.gate import GATES, Gate, encoded
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
    verdicts = [r._scanner.gate.passes(PLAIN_NOTE) for r in recognizers]  # noqa: SLF001
    assert verdicts.count(False) >= 2 * len(verdicts) // 3


def test_most_rule_scans_are_skipped_on_a_note_with_a_curly_quote_too():
    """Beyond ASCII the gate reads UTF-8: one ’ must not cost every scan."""
    recognizers = RuleDetector().recognizers
    text = PLAIN_NOTE + "PT\u2019S WIFE AT BEDSIDE, 37.5\u00b0C.\n"
    verdicts = [r._scanner.gate.passes(text) for r in recognizers]  # noqa: SLF001
    assert verdicts.count(False) >= 2 * len(verdicts) // 3


def test_a_phone_number_opens_its_gate():
    by_name = {r.name: r._scanner.gate for r in RuleDetector().recognizers}  # noqa: SLF001
    assert not by_name["phone"].passes(PLAIN_NOTE)
    assert by_name["phone"].passes(PLAIN_NOTE + "CALL 617-555-1234.\n")


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
    assert scanner.gate.passes(matching)


@pytest.mark.parametrize("pattern, flags, matching, other", [
    (r"(?P<k>k\w+)", re.IGNORECASE, "\u212aelvin", "elvin"),
    (r"mi\w+", re.IGNORECASE, "M\u0130LLER", "MALLER"),
    (r"\bmr\b[ \t]+\w+", re.IGNORECASE, "mr Mu\u00f1oz", "\u00e9mr x"),
    (r"(?<!\w)\d{3}-\d{4}", 0, "tel \u0665\u0665\u0665-\uff11\uff12\uff13\uff14",
     "tel 55-1234"),
    (r"dr\s+\w+", re.IGNORECASE, "Dr\u00a0G\u00f3mez", "Dr-Gomez"),
    (r"[a-z]+[\u2019']s[ \t]+wife", re.IGNORECASE, "Smith\u2019s wife",
     "Smith\u2019 wife"),
    (r"\u00b0f", re.IGNORECASE, "98.6\u00b0F", "98.6 F\u2019"),
    # A word boundary between ’ and é is re's, not Hyperscan's (é is no word
    # character to it): the gate drops boundaries beyond ASCII.
    (r"\b\w\b", 0, "\u2019\u00e9\u2019", "\u2019\u2019"),
    (r"[^\W\d_]{2,}[ \t]+\d{5}", 0, "S\u00e3o Paulo 01310", "n\u00ba 12"),
])
def test_beyond_ascii_the_gate_never_hides_a_match(pattern, flags, matching, other):
    scanner = _gated(pattern, flags)
    for text in (matching, other, f"x {matching} y\n", matching.upper(),
                 matching.lower()):
        assert [m.regs for m in scanner.finditer(text)] == [
            m.regs for m in scanner.regex.finditer(text)], (pattern, text)
    assert scanner.gate.passes(matching)


def test_a_lone_surrogate_is_one_byte_beyond_ascii_too():
    scanner = _gated(r"dr\.?[ \t]+(?P<n>[A-Z]\w+)", re.IGNORECASE)
    text = "seen by Dr. Kim \ud800"
    assert scanner.gate.passes(text)
    assert [m.span("n") for m in scanner.finditer(text)] == [(12, 15)]
    for other in ("Dr \ud800x", "Dr x\ud800yz", "\ud800Dr Kim"):
        assert [m.regs for m in scanner.finditer(other)] == [
            m.regs for m in scanner.regex.finditer(other)]


def test_random_texts_of_a_pattern_s_own_characters():
    """Texts made of exactly the characters a pattern reads, against finditer."""
    patterns = [(r"(?<!\w)(?P<d>\d{1,2})[/-](?P<m>\d{1,2})(?:[/-](?P<y>\d{2,4}))?"
                 r"(?![\w/])", 0),
                (r"(?<![a-z])(?:dr|drs)\.?[ \t]+[a-z]{2,}(?:[ \t]*,[ \t]*md)?",
                 re.IGNORECASE),
                (r"\s{2,}[a-z]{,3}\S", re.IGNORECASE)]
    rng = random.Random(45)
    alphabet = ("0123456789/-.,dDrRsSmM \t\n\x1c\x1f\x0bxa"
                "\u00e9\u2019\u017f\u0130\u0131\u0661\uff12\u00a0\u0085\u2028")
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
    assert scanner.gate.passes("anything")


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
            results[index] = [scanner.gate.passes(t) for t in texts * 5][:60]
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
    scanner.gate.passes("MRN: 1234567")
    copy = pickle.loads(pickle.dumps(scanner))
    assert copy.gate is not scanner.gate
    assert copy.gate.passes("MRN: 1234567")
    assert not copy.gate.passes("no number here")


@pytest.mark.parametrize("damaged", [b"not a database", (b"not a database", (0,)),
                                     ("not bytes", (0,)), (b"", "not ids")])
def test_a_damaged_kept_database_is_compiled_again(monkeypatch, damaged):
    pattern = r"(?<![a-z])wife[ \t]+(?P<n>[A-Z][a-z]+)"
    key = Gate(pattern, 0)._key(False)  # noqa: SLF001
    monkeypatch.setitem(GATES.stored(), key, damaged)
    gate = Gate(pattern, 0)
    assert gate.passes("his wife Anna")
    assert not gate.passes("his wife")
    assert GATES.used()[key] != damaged


def test_a_gate_that_fails_to_scan_passes_every_text(monkeypatch):
    """A CPU or build Hyperscan cannot scan on costs speed, never a match."""
    scanner = _gated(r"(?<![a-z])wife[ \t]+(?P<n>[A-Z][a-z]+)")
    assert not scanner.gate.passes("no one")

    def broken(database: object) -> object:
        raise gate_module.hyperscan.error("no scratch")

    monkeypatch.setattr(gate_module, "_scratch", broken)
    assert scanner.gate.passes("no one")
    assert [m.span("n") for m in scanner.finditer("his wife Anna")] == [(9, 13)]


def test_without_hyperscan_every_text_is_scanned(monkeypatch):
    monkeypatch.setattr(gate_module, "hyperscan", None)
    scanner = Scanner(re.compile(r"dr\.?[ \t]+(?P<n>[A-Z]\w+)", re.IGNORECASE))
    assert scanner.gate is None
    assert [m.span("n") for m in scanner.finditer("seen by Dr. Kim")] == [(12, 15)]


def test_the_last_text_s_bytes_are_kept_by_identity():
    text = "seen by dr kim " * 3
    first, wide = encoded(text)
    assert encoded(text)[0] is first and not wide
    other = "".join(["seen by dr kim "] * 3)  # equal, another object
    assert encoded(other)[0] == first and encoded(other)[0] is not first
    # One byte a character beyond ASCII: a piece's count is its count of bytes.
    assert encoded("Dr. Mu\u00f1oz \u2019s") == (b"Dr. Mu\xf1oz \x80s", True)
    assert encoded("bad \ud800 half") == (b"bad \x80 half", True)


@pytest.mark.parametrize("module", ["ascii_classes", "lookarounds"])
def test_a_changed_rewrite_never_reads_databases_written_the_old_way(
        tmp_path, monkeypatch, module):
    import importlib

    rewriting = importlib.import_module(f"deid_pipeline.tagger.rules.{module}")
    before = gate_module._gates_key()  # noqa: SLF001
    changed = tmp_path / f"{module}.py"
    with open(rewriting.__file__, encoding="utf-8") as fh:
        changed.write_text(fh.read() + "\n# another way of writing a gate\n")
    monkeypatch.setattr(rewriting, "__file__", str(changed))
    assert gate_module._gates_key() != before  # noqa: SLF001


def test_an_expression_past_hyperscan_s_length_is_left_out_of_its_group():
    """One refused expression failed the whole group, and every gate scanned alone."""
    words = "|".join(f"w{k:05d}x" for k in range(2_500))  # ~20,000 characters
    long_gate = Gate(rf"(?<![a-z])(?:{words})\b", re.IGNORECASE)
    short_gate = Gate(r"(?<!\w)mrn[ \t]*\d{5,}", re.IGNORECASE)
    assert gate_module._gate_source(long_gate, False) is None  # noqa: SLF001
    group = gate_module.GateGroup([long_gate, short_gate])
    loaded = group._load(False)  # noqa: SLF001
    assert loaded is not False and loaded[1] == frozenset({1})
    group.expect("seen today, MRN 123456.")
    try:
        assert short_gate.passes("seen today, MRN 123456.")
        assert long_gate.passes("seen today, MRN 123456.")  # unread: passes all
        assert not short_gate.passes("seen today.")
    finally:
        group.expect(None)
