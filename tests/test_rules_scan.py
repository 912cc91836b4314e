"""The rule scans (rules/scan.py) are a speed matter only: the same matches.

Every recognizer's :class:`Scanner` must find what ``finditer`` of its own
expression finds (every group's span, and which pattern), on the samples,
their case variants, hostile texts, generated texts and, when present, the
PhysioNet nursing notes; and the characters it scans for must hold at every
match start (the candidate set is a superset).
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_pipeline.tagger.rules.ascii_classes import ascii_exact
from deid_pipeline.tagger.rules.detector import RuleDetector
from deid_pipeline.tagger.rules.es import ALL_KINDS, spanish_recognizers
from deid_pipeline.tagger.rules.scan import Scanner

ROOT = os.path.join(os.path.dirname(__file__), "..")

HOSTILE = (
    "0123456789/" * 2000,
    "1/2/3/4/5/6/7/8/9/10/11/12/2019-3-4-5-" * 300,
    "Dr. " * 5000,
    "Mr" * 10000,
    "İstanbul İİ Dr. İlker İ. Öz seen 3/4/2019 by Dr. Straße ß ＭＲＮ：１２３４５６７ "
    "１２/０３/２０１９ tel ５５５-１２３-４５６７ Mr. Groß age ９２ "
    "\u212aelvin \u017fmith " * 50,
    "MR. SMITH (SON) DR K. JONES, MD mrs a. b. c. thank you for seeing VILLA, LISA "
    "lives in Boston, MA 02114 tel (617) 555-1234 x123 MRN: A1234567 at 10.0.0.1 " * 50,
)


def _samples() -> list[str]:
    texts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "samples", "notes", "*.txt"))):
        with open(path, encoding="utf-8") as fh:
            texts.append(fh.read())
    with open(os.path.join(ROOT, "samples", "notes.jsonl"), encoding="utf-8") as fh:
        texts.extend(json.loads(line)["text"] for line in fh if line.strip())
    return texts


def _recognizers():
    return (*RuleDetector().recognizers, *spanish_recognizers(kinds=ALL_KINDS))


def _found(matches) -> list[tuple]:
    # Group 0 of a scan is not the match (see Scanner): named groups only.
    return [(m.regs[1:], m.lastindex) for m in matches]


def _by_pattern(matches, by_index) -> list[tuple]:
    """Each match as its pattern and the spans of that pattern's named groups.

    A pattern scanned alone numbers its groups apart from the joined
    expression; their names (``p3``, ``p3_phi``) are the same.
    """
    found = []
    for match in matches:
        i = by_index[match.lastindex]
        found.append((i, sorted((name, match.span(name)) for name in match.re.groupindex
                                if name == f"p{i}" or name.startswith(f"p{i}_"))))
    return found


def _check(texts) -> int:
    compared = 0
    for recognizer in _recognizers():
        scanner = recognizer._scanner  # noqa: SLF001
        prefilter = recognizer._prefilter  # noqa: SLF001
        every = tuple(range(len(recognizer.patterns)))
        for text in texts:
            if prefilter is not None:
                assert prefilter.exists(text) == (
                    prefilter.regex.search(text) is not None), recognizer.name
            plain = list(recognizer.regex.finditer(text))
            assert _found(scanner.finditer(text)) == _found(plain), recognizer.name
            # The patterns that pass their own gates, scanned apart (rules/streams.py).
            apart = recognizer._streams.matches(text, scanner, every)  # noqa: SLF001
            if apart is not None:
                walked = [entry for match, by_index in apart
                          for entry in _by_pattern([match], by_index)]
                assert walked == _by_pattern(
                    plain, recognizer._by_index), recognizer.name  # noqa: SLF001
            if text.isascii():
                for match in plain:
                    start = match.start()
                    assert text[start] in scanner.first, recognizer.name
                    assert start == 0 or text[start - 1] in scanner.before, (
                        recognizer.name)
            compared += 1
    return compared


def test_scans_find_what_finditer_finds_on_samples_and_case_variants():
    texts = _samples()
    assert _check([*texts, *(t.upper() for t in texts), *(t.swapcase() for t in texts),
                   *(t.lower() for t in texts)])


def test_scans_find_what_finditer_finds_on_hostile_texts():
    assert _check(HOSTILE)


def test_most_recognizers_scan_faster_than_finditer():
    """The point of it: a scan by character, not the plain expression."""
    scanners = [r._scanner for r in _recognizers()]  # noqa: SLF001
    assert all(s.fast.flags & re.IGNORECASE == 0 for s in scanners)
    scanned = [s for s in scanners if s._parts]  # noqa: SLF001
    assert len(scanned) >= len(scanners) // 2


def test_scans_on_the_nursing_notes(physionet_docs):
    assert _check([doc.text for doc in physionet_docs]) > 0


_TOKENS = st.sampled_from([
    " ", "  ", "\n", "\t", ".", ",", ":", "-", "/", "(", ")", "'", "#", "@", "&", "+",
    "0", "1", "2", "9", "12", "2019", "617", "555-1234", "3/4", "7/22/19",
    "Dr", "dr", "DR", "Mr", "mrs", "MS", "miss", "son", "wife", "Daughter", "per",
    "aware", "md", "RN", "np", "MRN", "id", "tel", "fax", "x", "pager", "bp",
    "Smith", "SMITH", "smith", "Anna", "K", "J", "a", "b", "i", "VA", "clinic",
    "Hospital", "lives in", "from", "Boston", "MA", "Jan", "march", "the", "th",
    "thank you for seeing", "age", "yo", "www.", "http://", ".org", "İ", "ß", "\u212a",
    "de", "marzo", "C/", "CP", "tfno", "12345678Z", "X1234567L",
])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=60).map("".join))
def test_scans_find_what_finditer_finds_on_generated_texts(text):
    _check([text])


@pytest.mark.parametrize("source, flags", [
    (r"(?<![\w.])(?:dr|doctor)\.?[ \t]+(?P<n>[A-Z][a-z]+)", re.IGNORECASE),
    (r"(?P<s>[/.-])\d+(?P=s)", re.IGNORECASE),
    (r"[^a-z0-9]k(?-i:[a-z])[\w-]{2}", re.IGNORECASE),
    (r"\bst\.?\s+(?i:mary)", 0),
])
def test_the_case_sensitive_twin_matches_where_the_original_does(source, flags):
    regex = re.compile(source, flags)
    twin = ascii_exact(regex)
    assert not twin.flags & re.IGNORECASE
    alphabet = "adkmorstyADKMORSTY0129./- \t_\n"
    import random

    rng = random.Random(45)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert [m.regs for m in twin.finditer(text)] == [
            m.regs for m in regex.finditer(text)]


def test_a_text_not_in_ascii_keeps_the_plain_expression():
    """Case-blind ``k`` matches the Kelvin sign: the twin must never see it."""
    regex = re.compile(r"(?P<w>k\w+)", re.IGNORECASE)
    scanner = Scanner(regex)
    text = "\u212aelvin and kelvin"
    assert [m.span("w") for m in scanner.finditer(text)] == [(0, 6), (11, 17)]


def test_scans_of_the_expressions_less_a_required_pattern():
    """A text without a pattern's required word gets an expression without it."""
    texts = [*_samples(), *HOSTILE[-2:]]
    checked = 0
    for recognizer in RuleDetector().recognizers:
        for index, _ in recognizer._requires:  # noqa: SLF001
            kept = [i for i in range(len(recognizer.patterns)) if i != index]
            if not kept:  # a one-pattern recognizer: no expression is left
                continue
            regex, _ = recognizer.compiled(kept)
            scanner = recognizer.scan_of(kept, regex)
            for text in texts:
                assert _found(scanner.finditer(text)) == _found(regex.finditer(text))
            checked += 1
    assert checked >= 5


def test_module_scans_find_what_finditer_finds():
    """The names' and universities' own expressions, scanned: whole matches too."""
    from deid_pipeline.tagger.rules import names, places

    name_rule = next(r for r in RuleDetector().recognizers if r.name == "names")
    pairs = [(names._MORE_DOCTORS, names._MORE_DOCTORS_SCAN),  # noqa: SLF001
             (names._FULL_NAME, names._FULL_NAME_SCAN),  # noqa: SLF001
             (places._UNIVERSITY, places._UNIVERSITY_SCAN),  # noqa: SLF001
             (name_rule._cue_after, name_rule._cue_after_scan),  # noqa: SLF001
             *((scan.regex, scan) for _, _, scan in name_rule._owner_cues)]  # noqa: SLF001
    texts = [*_samples(), *HOSTILE,
             "Drs Ames, Kim and Ode; JOHN SMITH aware; U of Iowa",
             "Nguyen, 45 yo F. Tran family; Carol's husband; Obi, 62, post-op (MRN 1)"]
    for regex, scanner in pairs:
        for text in [*texts, *(t.upper() for t in texts)]:
            assert [m.regs for m in scanner.finditer(text)] == [
                m.regs for m in regex.finditer(text)], regex.pattern[:40]


_HINT_TOKENS = st.sampled_from(["a", "Z", "-", "1", "0", "12", "1234", " ", "x-", "\n",
                                "é", "١", "_", "/", "\u212a"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_HINT_TOKENS, max_size=30).map("".join))
def test_the_id_near_hint_finds_a_text_when_its_plain_form_does(text):
    from deid_pipeline.tagger.rules.ids import _MIXED_HINT

    plain = re.compile(r"[a-z]-?\d{4}|\d{4}-[a-z]", re.IGNORECASE)
    hint = re.compile(_MIXED_HINT, re.IGNORECASE)
    assert (hint.search(text) is None) == (plain.search(text) is None)
