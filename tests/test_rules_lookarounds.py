"""The gate reads the lookarounds at a match's edges as text (rules/lookarounds.py).

Each rewrite must only widen what an expression matches: a gate that
rejected a text holding a match would hide PHI. Checked on the rewrites
themselves, on random texts against ``re``, and on every recognizer's
expression over real notes; and that the gates did get tighter, which is
the point (issue 45).
"""

from __future__ import annotations

import random
import re

import pytest

from deid_pipeline.tagger.rules.ascii_classes import UnsupportedError
from deid_pipeline.tagger.rules.detector import RuleDetector
from deid_pipeline.tagger.rules.lookarounds import widened
from deid_pipeline.tagger.rules.scan import Scanner


@pytest.mark.parametrize("source, expected", [
    (r"a(?=b)", r"a(?:b)"),
    (r"(?<=x)a", r"(?:x)a"),
    (r"(?<![a-z])a(?![a-z])", r"(?:^|[^a-z])a(?:$|[^a-z])"),
    (r"(?<!\.)a", r"(?:^|[^\.])a"),
    # A negative test of more than one character cannot be written so.
    (r"(?<![a-z]{2})a(?!bc)", r"a"),
    # One lookaround an edge: both at one place cannot both be text.
    (r"a(?=b)(?=c)", r"a(?:c)"),
    (r"(?<!x)(?<=y)a", r"(?:y)a"),
    # Another zero-width piece ends the edge: its place would move.
    (r"a(?=b)\b", r"a\b"),
    (r"\b(?<=x)a", r"\ba"),
    # Into a group's alternatives, not into a repeated one.
    (r"(?:a|(?<=x)b)c", r"(?:a|(?:x)b)c"),
    (r"(?:(?<=x)a)+", r"(?:a)+"),
    # Inside a lookaround made text, its own edge goes on.
    (r"a(?=b(?=c))", r"a(?:b(?:c))"),
    (r"(?<=(?<=w)x)a", r"(?:(?:w)x)a"),
    (r"(?<=x(?=y))a", r"(?:x)a"),
    # In the middle, dropped (as Hyperscan drops it).
    (r"a(?=b)c", r"ac"),
    (r"(?<=x)(?=y)", r"(?:x)(?:y)"),
    (r"(?P<n>a)[ \t]+(?P=n)(?![\w'])", r"(?P<n>a)[ \t]+(?P=n)(?:$|[^\w'])"),
])
def test_the_edges_become_text_and_the_rest_is_dropped(source, expected):
    assert widened(source) == expected


def test_what_it_cannot_read_is_refused():
    for source in (r"(?(1)a|b)", r"(a", r"a)"):
        with pytest.raises(UnsupportedError):
            widened(source)


def _hyperscan_finds(source: str, text: str) -> bool:
    hyperscan = pytest.importorskip("hyperscan")
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[source.encode()], ids=[0], elements=1,
                     flags=[hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_ALLOWEMPTY])
    found = []
    database.scan(text.encode(), match_event_handler=lambda *a: found.append(1))
    return bool(found)


def test_random_texts_never_lose_a_match():
    """``re`` finds a match, so the widened expression's gate must too."""
    patterns = [r"(?<![a-b])ab(?=[ ]c)", r"(?<=c )a+(?![b])", r"(?<=a)(?=b)",
                r"(?:(?<![c])a|b(?<=b))c?(?=a|b)", r"(?<!a)(?<=[bc])a(?=a)(?!ab)",
                r"a(?=b(?=c))|(?<=(?<=c)b)a"]
    rng = random.Random(45)
    for pattern in patterns:
        source = widened(pattern)
        for _ in range(300):
            text = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 12)))
            if re.search(pattern, text):
                assert _hyperscan_finds(source, text), (pattern, text)


def test_every_recognizer_s_gate_passes_every_note_it_matches_in(physionet_docs):
    """On the shared corpus: a note with a match is never gated out."""
    detector = RuleDetector()
    scanners = [s for r in detector.recognizers for s in r.scanners()
                if s.gate is not None]
    for doc in physionet_docs[::3]:
        for scanner in scanners:
            if scanner.regex.search(doc.text):
                assert scanner.gate.passes(doc.text), scanner.regex.pattern[:60]


def test_the_gates_read_lookarounds_tighter_than_hyperscan_alone():
    """What the rewrite is for: gates that say no where no shape is."""
    by_name = {r.name: r._scanner.gate for r in RuleDetector().recognizers}  # noqa: SLF001
    # Lower-case words and no name shape: the names gate read ``[a-z]{3,}``.
    quiet = "pt resting in bed, no complaints. vss, afebrile.\n"
    assert not by_name["names"].passes(quiet)
    assert by_name["names"].passes(quiet + "son bill called.\n")
    # A blood pressure is no date: the date gate read ``20/70`` in ``120/70``.
    vitals = "BP 120/70, HR 110, RR 22, SAT 97% ON 2L.\n"
    assert not by_name["date"].passes(vitals)
    assert by_name["date"].passes(vitals + "SEEN ON 3/14.\n")
    scanner = Scanner(re.compile(r"(?<![a-z])dr\.?[ \t]+(?P<n>[a-z]+)(?![a-z])",
                                 re.IGNORECASE))
    assert not scanner.gate.passes("adr. x1 drx")
    assert [m.span("n") for m in scanner.finditer("seen by Dr. Kim")] == [(12, 15)]
