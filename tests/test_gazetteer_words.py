"""The gazetteer's words of a text, and where its matches may begin.

``_Words`` reads words, offsets and gaps from one split of the text, and
``_matches`` passes over words that cannot begin an entry. Both must give
what the plain ways give: every match of the word expression with its
span, each word folded on its own, and a match tried at every word that
begins an entry, every ``st`` and every hyphened word.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_pipeline.tagger import gazetteers
from deid_pipeline.tagger.gazetteers import _WORD, GazetteerDetector, _Words


def _fold_one_by_one(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        lower = word.lower()
        if "'" in lower or "\u2019" in lower:
            lower = gazetteers._POSSESSIVE.sub("", lower)  # noqa: SLF001
        lower = gazetteers._FOLD.get(lower, lower)  # noqa: SLF001
        if out and out[-1] == "st" and len(lower) > 3 and lower[-1] == "s":
            lower = lower[:-1]
        out.append(lower)
    return out


def _matches_at_every_word(detector: GazetteerDetector, words: _Words):
    """Every word that begins an entry, ``st`` or a hyphened one is tried."""
    firsts = detector.gazetteer.firsts
    folded, hyphened = words.folded, words.hyphened
    i = 0
    while i < len(folded):
        word = folded[i]
        found = None
        if word in firsts:
            found = detector._longest_at(words, i)  # noqa: SLF001
        if found is None and i in hyphened:
            found = detector._compound(words, i)  # noqa: SLF001
        if found is None and word == "st":
            found = detector._saint_initial(words, i)  # noqa: SLF001
        if found is None:
            i += 1
            continue
        yield found
        i = found.end


_PIECES = st.sampled_from([
    "St", "Saint", "Mary's", "MARY\u2019S", "Mt", "&", "Sinai", "-", "'", "_", ".",
    " ", "  ", "\n", ",", "\u00e9", "caf\u00e9", "\u0130", "\u212a", "12", "02169",
    "Boston", "MA", "from", "in", "General", "Hospital", "x", "\t", "\u2019s",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_words_offsets_and_gaps_are_the_expression_s(text):
    words = _Words(text)
    found = list(_WORD.finditer(text))
    assert words.raw == [m[0] for m in found]
    assert words.spans == [m.span() for m in found]
    assert len(words) == len(found)
    for i in range(1, len(found)):
        assert words.gap(i) == text[found[i - 1].end():found[i].start()]
    assert words.folded == _fold_one_by_one(words.raw)


def _gazetteer_texts(count: int) -> list[str]:
    """Texts of the gazetteer's own words, cues, joins and case variants."""
    rng = random.Random(45)
    entries = list(gazetteers.load().entries)
    filler = ["pt", "was", "seen", "at", "from", "in", "to", "lives", "the", "and",
              "BP", "stable", "home", "via", "MD", "PA", "02169", "St", "A."]
    joins = [" ", " ", " ", "-", ", ", ". ", "'s ", "\n", " & "]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.5:
                words = list(rng.choice(entries))
                if rng.random() < 0.3:
                    words = words[:-1] or words  # an entry cut short
            else:
                words = [rng.choice(filler)]
            case = rng.choice((str.title, str.upper, str.lower, str))
            parts.append(rng.choice(joins).join(case(w) for w in words))
        texts.append("".join(p + rng.choice(joins) for p in parts))
    return texts


def test_matches_are_those_of_trying_every_word_that_may_begin_one():
    detector = GazetteerDetector()
    texts = _gazetteer_texts(1500)
    differing = [text for text in texts
                 if list(detector._matches(_Words(text)))  # noqa: SLF001
                 != list(_matches_at_every_word(detector, _Words(text)))]
    assert differing == []
    # The texts do hold matches of every kind the detector gives.
    labels = {m.label for text in texts
              for m in detector._matches(_Words(text))}  # noqa: SLF001
    assert labels == {"HOSPITAL", "CITY", "STATE"}


def test_matches_on_the_nursing_notes(physionet_docs):
    detector = GazetteerDetector()
    for doc in physionet_docs[:400]:
        words = _Words(doc.text)
        assert list(detector._matches(words)) == list(  # noqa: SLF001
            _matches_at_every_word(detector, _Words(doc.text)))


def test_a_folded_word_is_kept_and_the_memo_stays_bounded(monkeypatch):
    memo = gazetteers._FoldedWords()  # noqa: SLF001
    monkeypatch.setattr(memo, "limit", 3)
    monkeypatch.setattr(gazetteers, "_FOLDED", memo)
    words = ["Saint", "Mary's", "Ctr", "Hosp", "Saint", "Med", "Mary's"]
    assert gazetteers._folded(words) == _fold_one_by_one(words)  # noqa: SLF001
    assert len(memo) <= 3
    assert len(memo.previous) <= 3
