"""The CRF's token decisions after decoding, in English.

The model marks tokens at a recall bias; these rules, written against the
development notes' errors, unmark what the bias alone made PHI and is
almost never PHI (common words, weekdays, year-less fractions, ages under
90), and widen what it found to what must go with it (every occurrence of a
name, all of a multi-word place, the initial beside a name), never across a
sentence's end. English word lists and US places: another language's model
skips them (:class:`~deid_pipeline.tagger.crf.CrfDetector`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from deid_pipeline.labels import category
from deid_pipeline.tagger import allowlist, lexicons, world_places
from deid_pipeline.tagger.bio import OUTSIDE, marked
from deid_pipeline.tagger.crf_numbers import drop_bias_only_numbers
from deid_pipeline.tagger.name_extents import (
    FIRST_NAME_MAX_BAND,
    first_name_before_name,
    first_name_words,
)
from deid_pipeline.tagger.rules.detector import default_config
from deid_pipeline.tokenizer import Token, is_digits


def adjust_english(tokens: Sequence[Token], kinds: list[str | None],
                   confidences: list[float], viterbi: Sequence[str],
                   propagate: bool = True) -> None:
    """Apply every English token rule, in order, to ``kinds`` and ``confidences``.

    ``kinds[t]``: the PHI kind of token t at the bias (None: not PHI);
    ``viterbi``: the best path's tags, which no rule overrules.
    """
    _drop_common_words(tokens, kinds, viterbi)
    _drop_bias_only_disease_eponyms(tokens, kinds, viterbi)
    _drop_bias_only_caseless_words(tokens, kinds, viterbi)
    _drop_weekdays(tokens, kinds)
    _drop_bias_only_rate_units(tokens, kinds, viterbi)
    _drop_bias_only_ordinal_counts(tokens, kinds, viterbi)
    _drop_bias_only_after_how(tokens, kinds, viterbi)
    drop_bias_only_numbers(tokens, kinds, viterbi)
    _drop_clinical_places(tokens, kinds)
    _drop_world_regions(tokens, kinds)
    if propagate:
        _propagate(tokens, kinds, confidences, viterbi)
    _widen_to_places(tokens, kinds, confidences)
    _widen_to_initials(tokens, kinds, confidences)
    _widen_over_hyphens(tokens, kinds, confidences)
    _widen_to_first_names(tokens, kinds, confidences)
    _widen_to_given_names(tokens, kinds, confidences)
    _end_at_sentences(tokens, kinds)


# A word this common in English (wordfreq Zipf >= 5: "will", "may", "bill") is
# not propagated from one occurrence to the others: it is too often not PHI.
_PROPAGATE_MAX_ENGLISH_BAND = 4


# Kinds whose tokens are pieces of a longer value (``PORTAL`` of a URL, a
# mailbox's name, letters of an ID): never propagated to a word standing alone.
_FRAGMENT_CATEGORIES = frozenset({"CONTACT", "ID"})


def _propagate(tokens: Sequence[Token], kinds: list[str | None],
               confidences: list[float], viterbi: Sequence[str]) -> None:
    """Mark every occurrence of a word found as PHI elsewhere in the document.

    A name is often spelled out once with its cue ("son David") and then
    alone ("David called"); the model finds the first and misses the rest.
    Only letter tokens of two or more letters that are not common English
    words, and that the best path calls PHI, are propagated, with the label
    and confidence of their best occurrence: a word only the recall bias
    marked (``neo``, ``aline``) is too unsure to be copied everywhere. The
    seeds do not depend on the bias, so the result stays monotone in it.
    A piece of a URL, e-mail or ID is no seed: ``portal`` of
    ``http://portal.example.org`` is the word portal elsewhere.
    """
    seeds: dict[str, tuple[float, str]] = {}
    for t in marked(kinds):
        kind = kinds[t]
        if (viterbi[t] != OUTSIDE
                and category(kind) not in _FRAGMENT_CATEGORIES):
            text = tokens[t].text
            if len(text) > 1 and text.isalpha():
                key = text.lower()
                if key not in seeds or confidences[t] > seeds[key][0]:
                    seeds[key] = (confidences[t], kind)
    if not seeds:
        return
    lex = lexicons.load()
    seeds = {k: v for k, v in seeds.items()
             if lex.english_band(k) <= _PROPAGATE_MAX_ENGLISH_BAND
             and not lexicons.is_clinical_word(lex.flags(k))}
    for t, tok in enumerate(tokens):
        if kinds[t] is None and len(tok.text) > 1:
            seed = seeds.get(tok.text.lower())
            if seed is not None:
                confidences[t], kinds[t] = seed


# Zipf >= 6. Zipf 5 was measured (development hold-out folds 3 and 4, plain
# and 3 swapped copies each): 7 false-positive tokens fewer a set in fold 4
# ("MANY", "MARK", "green stool"), and a name lost in each of fold 3's
# copies ("JOHN S. WHITE, RRT", "p michael"): names are Zipf-5 words too.
_COMMON_WORD_BAND = 6

# The kinds of a place the model may give an anatomical phrase, and the
# lexicon flags that make a word a place's or a person's own.
_PLACE_KINDS = frozenset({"LOCATION", "CITY"})
_PLACE_OR_NAME_FLAGS = ("town", "city", "uscity", "state", "country", "fn", "ln")


def _drop_clinical_places(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """Unmark a "place" that is an anatomical phrase (``CAVOATRIAL JUNCTION``).

    In capitals after ``at the`` an anatomical phrase looks to the model like a
    town (``TIP AT THE CAVOATRIAL JUNCTION``), and its surrogate, two town
    names, destroys a clinical fact. A run of place tokens is no place when
    its last word is clinical vocabulary that is no listed name (``junction``:
    a diagnosis and drug word) and none of its other words is a place's or a
    person's word (``Grand Junction``, ``Carson City`` stay: ``grand`` and
    ``carson`` are listed names).
    """
    lex = lexicons.load()
    t, n = 0, len(tokens)
    while t < n:
        if kinds[t] not in _PLACE_KINDS:
            t += 1
            continue
        end = t
        while end + 1 < n and kinds[end + 1] in _PLACE_KINDS:
            end += 1
        words = [tokens[i].text.lower() for i in range(t, end + 1)]
        if (words[-1].isalpha() and lexicons.is_clinical_word(lex.flags(words[-1]))
                and not any(f.startswith(_PLACE_OR_NAME_FLAGS)
                            for w in words[:-1] for f in lex.flags(w))):
            for i in range(t, end + 1):
                kinds[i] = None
        t = end + 1


def _drop_world_regions(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """Unmark a continent, world region or country (``to rural Asia``, ``from Ghana``).

    A clinician's travel or origin question names one, and the model, unsure
    of a capitalised word after ``to`` or ``from``, marks it. The lower-case
    words the model ran into it (``rural``) go with it. After a person title
    or a kin word it is a name and stays (``daughter Asia``).
    """
    n = len(tokens)
    for t in range(n):
        size = 0 if kinds[t] is None else world_places.marked_size(tokens, kinds, t)
        if not size:
            continue
        if _after_person_title(tokens, t) or (
                t > 0 and tokens[t - 1].text.lower() in _kin_words()):
            continue
        start = t
        while start > 0 and kinds[start - 1] is not None and (
                tokens[start - 1].text.isalpha() and tokens[start - 1].text.islower()):
            start -= 1
        for k in range(start, t + size):
            kinds[k] = None


def _drop_common_words(tokens: Sequence[Token], kinds: list[str | None],
                       viterbi: Sequence[str]) -> None:
    """Unmark very common English words that only a negative bias made PHI.

    Lowering the O score marks whatever the model is least sure of, and in
    notes that includes ``and``, ``will`` or ``home`` next to a name. A word
    this common (wordfreq Zipf >= 6) is PHI only when the best path says so.
    """
    lex = lexicons.load()
    for t in marked(kinds):
        if (viterbi[t] == OUTSIDE
                and lex.english_band(tokens[t].text.lower()) >= _COMMON_WORD_BAND):
            kinds[t] = None


# Zipf >= 4: "manage", "variant", "guide"; a word of the lexicons' name or
# US place lists is not one of them, whatever its band.
_LOWER_WORD_BAND = 4
_NAME_OR_US_PLACE_FLAGS = ("fn", "ln", "town", "uscity", "state", "stab", "country")
# What does not save a common word in capitals (``MANY``: a town, a rare name).
_RARE_NAME_OR_TOWN_FLAGS = frozenset(("fn3", "ln3", "town"))
_RARE_NAME_FLAGS = frozenset(("fn3", "ln3"))  # nor in lower case (``plan from rounds``)
# A common word in lower case after one of these is a noun, even a listed name.
_DETERMINERS = frozenset("a an the his her their its my your our this that".split())


def _drop_bias_only_caseless_words(tokens: Sequence[Token], kinds: list[str | None],
                                   viterbi: Sequence[str]) -> None:
    """Unmark a common English word whose case says nothing, marked by the bias only.

    At the recall bias the model marks the word it is least sure of in a
    short text it has no context for: ``How to manage X?`` lost ``manage``
    as a place (a Belgian town: only the world-city list has it), and
    ``kawasaki coronary aneurysm`` its ``coronary``. A word written in lower
    case, common in English (Zipf >= 4) or a drug or diagnosis word, in no
    list of common names or US places, and no part of a longer value (no word beside
    it marked with its kind) is PHI only when the best path says so.
    ``p michael``, ``lives in dover`` and ``son will`` keep theirs (listed
    names and towns), and so does the ``regional`` of ``hornitos regional``.
    A run of such words of one kind goes as a whole when every word of it is
    one (``silverman-anderson [score newborn]``, ``sanders [skeletal
    maturity]``: what the model took for a hospital after an eponym). After
    a determiner a common lower-case word goes even when listed (``a walker``),
    and so does a listed one standing alone with nothing before it that
    makes it a name or a place (``stone analysis shows``, ``70 kg man``,
    ``bp rose``); after a title, kin word, initial or first name (``mrs
    wood``, ``son, bill``, ``p. young``, ``will price``) or a place's
    preposition (``lives in dover``) it stays.
    Capitals (three letters or more) are as caseless: ``AT LENGTH`` was a
    hospital, ``ASKING MANY`` a profession; there a rare name or a small
    town does not save a common word, a common name (``MARK``) does.
    """
    lex = lexicons.load()

    def unmarkable(t: int, alone: bool) -> bool:
        word = tokens[t].text
        if viterbi[t] != OUTSIDE or not word.isalpha() or not (
                word.islower() or word.isupper() and len(word) > 2):
            return False
        capitals, word = word.isupper(), word.lower()
        flags = lex.flags(word)
        if not (lex.english_band(word) >= _LOWER_WORD_BAND
                or lexicons.is_clinical_word(flags)):
            return False
        if not capitals and t and tokens[t - 1].text.lower() in _DETERMINERS:
            return True  # "a walker", "the hope is": a noun, whatever lists say
        flags = [f for f in flags if f not in (
            _RARE_NAME_OR_TOWN_FLAGS if capitals else _RARE_NAME_FLAGS)]
        if not any(f.startswith(_NAME_OR_US_PLACE_FLAGS) for f in flags):
            return True
        return not capitals and alone and not _named_here(tokens, t, flags)

    n = len(kinds)
    end = 0
    for t in list(marked(kinds)):
        if t < end:
            continue  # inside the run just read
        kind = kinds[t]
        end = t + 1
        while end < n and kinds[end] == kind:
            end += 1
        alone = end - t == 1 and not _marked_beside(tokens, kinds, t)
        if all(unmarkable(k, alone) for k in range(t, end)):
            for k in range(t, end):
                kinds[k] = None


# Words before a place's name (``lives in dover``, ``from york``).
_PLACE_PREPOSITIONS = frozenset({"in", "from", "at", "to", "near", "of"})
_PLACE_FLAGS = ("town", "uscity", "city", "state", "stab", "country")


def _marked_beside(tokens: Sequence[Token], kinds: Sequence[str | None],
                   t: int) -> bool:
    """Whether a token beside t is marked, a comma between (``keithville, la``)."""
    for step in (-1, 1):
        k = t + step
        if 0 <= k < len(kinds) and tokens[k].text == ",":
            k += step
        if 0 <= k < len(kinds) and kinds[k] is not None:
            return True
    return False


def _named_here(tokens: Sequence[Token], t: int, flags: Sequence[str]) -> bool:
    """Whether the words beside lower-case token t make it a name or a place.

    Before it a title, staff title or kin word (a comma between: ``son,
    bill``), an initial (``p. young``, ``d ross``), a listed first name
    (``will price``), or a place's preposition when the word is a listed
    place; after it an initial (``george r.``).
    """
    if _is_initial(tokens, t + 1, lower=True):
        return True
    k = t - 1
    if k > 0 and tokens[k].text == ",":
        k -= 1
    if k < 0:
        return False
    before = tokens[k].text.lower()
    if before in _person_cue_words() or _after_person_title(tokens, t):
        return True
    if _is_bare_lower_initial(tokens, k) or _is_initial(tokens, k - 1, lower=True):
        return True
    if before in _PLACE_PREPOSITIONS:
        return any(f.startswith(_PLACE_FLAGS) for f in flags)
    return before.isalpha() and any(
        f in ("fn1", "fn2") for f in lexicons.load().flags(before))


@lru_cache(maxsize=1)
def _person_cue_words() -> frozenset[str]:
    """Titles, staff and doctor titles and kin words of rules.json."""
    names = default_config()["names"]
    return frozenset(w.lower() for key in ("titles", "staff_titles", "doctor_titles",
                                           "relations") for w in names.get(key, ()))


def _drop_bias_only_disease_eponyms(tokens: Sequence[Token], kinds: list[str | None],
                                    viterbi: Sequence[str]) -> None:
    """Unmark a disease eponym that only the bias marked and no title precedes.

    The allowlist drops an eponym in its clinical context; a clinician also
    writes the disease by its eponym alone (``hashimoto and levothyroxine``),
    where nothing but the model's doubt made it a name. The eponyms the list
    allows in the possessive alone (``'s``: Hashimoto, Crohn, Raynaud) are
    diseases first; such a word is PHI when the best path says so or after
    ``Dr.``/``Mr.``.
    """
    diseases = _disease_eponyms()
    for t in marked(kinds):
        if (viterbi[t] == OUTSIDE
                and tokens[t].text.lower() in diseases
                and not _after_person_title(tokens, t)):
            kinds[t] = None


def _after_person_title(tokens: Sequence[Token], t: int) -> bool:
    """Token ``t`` follows ``Dr``, ``Mr.`` or another person title."""
    k = t - 1
    if k >= 0 and tokens[k].text == ".":
        k -= 1
    return k >= 0 and tokens[k].text.lower() in allowlist.PERSON_TITLES


@lru_cache(maxsize=1)
def _disease_eponyms() -> frozenset[str]:
    """One-word eponyms the allowlist takes in the possessive alone."""
    return frozenset(e.words[0] for entries in allowlist.load().values()
                     for e in entries if e.possessive and len(e.words) == 1)


# Flags of a multi-word place name (Bel Air, Glen Burnie, New Hampshire).
_PLACE_PHRASE_KINDS = (("state", "STATE"), ("country", "COUNTRY"), ("town", "CITY"),
                       ("uscity", "CITY"), ("city", "CITY"))


def _widen_to_places(tokens: Sequence[Token], kinds: list[str | None],
                     confidences: list[float]) -> None:
    """Mark all of a multi-word place name of which any word is marked.

    The model often finds one word of "Bel Air" (and may call it a name):
    half a place name left in clear still names the place. The whole name
    takes the place kind and the surest confidence of its marked words.
    """
    if next(marked(kinds), None) is None:
        return
    lowers = [tok.text.lower() for tok in tokens]
    for i, k, flags in lexicons.phrase_matches(lowers, lexicons.load()):
        hits = [t for t in range(i, i + k) if kinds[t] is not None]
        kind = next((kind for flag, kind in _PLACE_PHRASE_KINDS if flag in flags),
                    None)
        if not hits or kind is None or len(hits) == k and all(
                kinds[t] == kind for t in hits):
            continue
        confidence = max(confidences[t] for t in hits)
        for t in range(i, i + k):
            kinds[t] = kind
            confidences[t] = max(confidences[t], confidence)


NAME_KINDS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "USERNAME"})


def _widen_to_first_names(tokens: Sequence[Token], kinds: list[str | None],
                          confidences: list[float]) -> None:
    """Mark the listed first name written right before a marked name.

    First in a line or a question, a first name has no context before it and
    the model marks the surname it knows the shape of but not the name
    (``Sean O'Brien had Epley at ...``), leaving the first name in clear
    beside a redacted surname. A capitalised word one space before a name,
    written in the same case, listed as a first name, no more common in
    English than band 4 and no clinical word, of three letters or more,
    takes the name's kind.
    """
    lex = None
    for t in range(1, len(tokens)):
        kind = kinds[t]
        if kind not in NAME_KINDS or kinds[t - 1] is not None:
            continue
        word, name = tokens[t - 1], tokens[t]
        if name.start - word.end != 1 or not (len(word.text) > 2 and word.text.isalpha()
                                              and word.text[:1].isupper()):
            continue  # not "21 CM MARK": two letters are a unit or shorthand
        if word.text.isupper() and len(word.text) > 1:
            if not name.text.isupper():
                continue
        elif name.text.isupper() and len(name.text) > 2:
            continue
        lex = lex or lexicons.load()
        if first_name_before_name(word.text, lex, *_first_name_words()):
            kinds[t - 1] = kind
            confidences[t - 1] = max(confidences[t - 1], confidences[t])


def _same_case(a: str, b: str) -> bool:
    """Both words lower case, both capitals, or both capitalised."""
    return (a.islower() and b.islower() or a.isupper() and b.isupper()
            or a[:1].isupper() and a[1:].islower() and b[:1].isupper()
            and b[1:].islower())


def _widen_over_hyphens(tokens: Sequence[Token], kinds: list[str | None],
                        confidences: list[float]) -> None:
    """Mark the other half of a hyphenated name of which one half is marked.

    The model knows one half of ``Oyelowo-Price`` or ``Shapiro-Goldfarb``
    and stops at the hyphen, leaving the other in clear. The other half
    takes the name's kind when it touches the hyphen, is written in the same
    case and reads as a name: listed as one and no more common in English
    than band 4, or a word English hardly uses; never a clinical word, a
    title or a kin word (not ``SMITH-AWARE``, ``JONES-NEW ORDERS``).
    """
    lex = None
    changed = True
    while changed:
        changed = False
        # The word before each hyphen next to a marked name: a few a note.
        names = [t for t in marked(kinds) if kinds[t] in NAME_KINDS]
        around = sorted({t for m in names for t in (m, m - 2)
                         if 0 <= t < len(tokens) - 2 and tokens[t + 1].text == "-"})
        for t in around:
            a, dash, b = tokens[t], tokens[t + 1], tokens[t + 2]
            if a.end != dash.start or dash.end != b.start:
                continue
            if kinds[t + 1] is not None:
                continue
            if kinds[t] in NAME_KINDS and kinds[t + 2] is None:
                named, other = t, t + 2
            elif kinds[t + 2] in NAME_KINDS and kinds[t] is None:
                named, other = t + 2, t
            else:
                continue
            word = tokens[other].text
            if not (word.isalpha() and len(word) > 1
                    and _same_case(word, tokens[named].text)):
                continue
            lex = lex or lexicons.load()
            key = word.lower()
            flags = lex.flags(key)
            band = lex.english_band(key)
            listed = any(f in ("fn1", "fn2", "ln1", "ln2") for f in flags)
            if key in _not_first_names() or lexicons.is_clinical_word(flags) or not (
                    listed and band <= FIRST_NAME_MAX_BAND
                    or len(word) > 2 and band <= 2):
                continue
            kinds[other] = kinds[t + 1] = kinds[named]
            confidences[other] = confidences[t + 1] = max(confidences[other],
                                                          confidences[named])
            changed = True


def _widen_to_given_names(tokens: Sequence[Token], kinds: list[str | None],
                          confidences: list[float]) -> None:
    """Mark the other name of ``Surname, Given`` when the model marked one.

    A list or a header writes the surname first; the model marks one of the
    two. The word after the comma and one space, in the surname's case,
    ending the name (a dash, a comma or the end follows), takes the name's
    kind when it is a listed first name no more common in English than band
    4, or a word no English list has (``Tran, Linh -``); the word before the
    comma when it is a listed surname, however common, and the marked word
    a listed first name, no eponym, not in capitals (``was white, michael
    discharged``; not ``RLQ PAIN, ALVARADO SCORE``). Never a
    clinical word, a title or a kin word (not ``Smith, RN -``, ``Jones,
    Cardiology,``).
    """
    lex = lexicons.load()

    def reads(word: str, given: bool) -> bool:
        key = word.lower()
        flags = lex.flags(key)
        if key in _not_first_names() or lexicons.is_clinical_word(flags):
            return False
        if not given:
            return any(f in ("ln1", "ln2") for f in flags)
        return lex.english_band(key) == 0 or (
            lex.english_band(key) <= FIRST_NAME_MAX_BAND
            and any(f in ("fn1", "fn2") for f in flags))

    eponyms = allowlist.load().words
    for m in [t for t in marked(kinds) if kinds[t] in NAME_KINDS]:
        for t, other in ((m, m + 2), (m - 2, m - 2)):
            if t < 0 or t + 2 >= len(tokens) or kinds[other] is not None:
                continue
            surname, comma, given = tokens[t], tokens[t + 1], tokens[t + 2]
            word = tokens[other].text
            if (comma.text != "," or comma.start != surname.end
                    or given.start != comma.end + 1
                    or not (word.isalpha() and len(word) > 2)
                    or not _same_case(surname.text, given.text)):
                continue
            if other == t + 2 and t + 3 < len(tokens) and (
                    tokens[t + 3].text not in ("-", ",")):
                continue
            if other == t and (given.text.isupper() or given.text.lower() in eponyms
                               or not any(f in ("fn1", "fn2")
                                          for f in lex.flags(given.text.lower()))):
                continue  # not "RLQ PAIN, ALVARADO SCORE 7"
            if reads(word, given=other == t + 2):
                kinds[other] = kinds[m]
                confidences[other] = max(confidences[other], confidences[m])


@lru_cache(maxsize=1)
def _first_name_words() -> tuple[frozenset[str], frozenset[str]]:
    """Words refused as first names (person titles too); common-word first names."""
    refused, common = first_name_words(default_config()["names"])
    return refused | allowlist.PERSON_TITLES, common


def _not_first_names() -> frozenset[str]:
    """Titles, staff titles, kin words and rules.json's not_names."""
    return _first_name_words()[0]


# Lower-case letters that are words or abbreviations before a stop ("smith a.
# fib"), never read as a lower-case name's initial.
_NOT_LOWER_INITIALS = frozenset("aio")


def _is_initial(tokens: Sequence[Token], t: int, lower: bool = False) -> bool:
    """Token t is one capital letter with its full stop right after it (``G.``).

    With ``lower`` (the name beside it is written in lower case: ``christine
    y.``) a lower-case letter too, but for ``a``, ``i`` and ``o``. Not when a
    letter follows the stop unspaced: ``M.D.``, ``R.N.`` are credentials, not
    an initial of the name before them.
    """
    if not (0 <= t < len(tokens) - 1 and len(tokens[t].text) == 1):
        return False
    letter = tokens[t].text
    return (("A" <= letter <= "Z"
             or lower and "a" <= letter <= "z" and letter not in _NOT_LOWER_INITIALS)
            and tokens[t + 1].text == "."
            and tokens[t + 1].start == tokens[t].end
            and not (t + 2 < len(tokens) and tokens[t + 2].start == tokens[t + 1].end
                     and tokens[t + 2].text.isalpha()))


def _widen_to_initials(tokens: Sequence[Token], kinds: list[str | None],
                       confidences: list[float]) -> None:
    """Mark the initial written against a marked name (``G. Johnson``, ``Anna S.``).

    The model learns the initials of the corpus's doctors as strings (the
    same few letters before the same surnames) and misses another letter
    before another surname; an initial left in clear beside a redacted name
    still narrows it down. The initial takes the name's kind and confidence.
    """
    for t in marked(kinds):
        kind = kinds[t]
        if kind not in NAME_KINDS:
            continue
        # "G. Johnson": the initial two tokens back, a blank or two after its stop;
        # "Anna S.": the next token, a blank or two after the name.
        for i, gap in ((t - 2, tokens[t].start - tokens[t - 1].end),
                       (t + 1, tokens[min(t + 1, len(tokens) - 1)].start
                        - tokens[t].end)):
            if (1 <= gap <= 2 and kinds[i] is None
                    and _is_initial(tokens, i, lower=tokens[t].text.islower())):
                kinds[i] = kind
                confidences[i] = confidences[t]
        # "per d ross": a lower-case letter alone, a blank before a lower-case
        # name (not "a", "i", "o", nor a letter glued to what precedes it: the
        # "s" of "pt's michael").
        i = t - 1
        if (i >= 0 and kinds[i] is None and tokens[t].text.islower()
                and tokens[t].start - tokens[i].end == 1
                and _is_bare_lower_initial(tokens, i)):
            kinds[i] = kind
            confidences[i] = confidences[t]
        # "Kevin M with CHF": a capital alone after a title-case name, then a
        # lower-case word or a clause's end (not "I", nor capitals running on).
        i = t + 1
        if (i < len(tokens) and kinds[i] is None and tokens[t].text.istitle()
                and tokens[i].start - tokens[t].end == 1
                and _is_bare_initial(tokens, i)):
            kinds[i] = kind
            confidences[i] = confidences[t]


_CLAUSE_ENDS = frozenset(",;:?!)")


def _is_bare_lower_initial(tokens: Sequence[Token], t: int) -> bool:
    """Token t is one lower-case letter (not a, i, o) standing alone before a blank."""
    letter = tokens[t].text
    return (len(letter) == 1 and "a" <= letter <= "z"
            and letter not in _NOT_LOWER_INITIALS
            and (t == 0 or tokens[t - 1].end < tokens[t].start))


def _is_bare_initial(tokens: Sequence[Token], t: int) -> bool:
    """Token t is one capital (not ``I``) before a lower-case word or a clause end."""
    letter = tokens[t].text
    if not (len(letter) == 1 and "A" <= letter <= "Z" and letter != "I"):
        return False
    if t + 1 == len(tokens):
        return True
    after = tokens[t + 1]
    if after.start == tokens[t].end:
        return after.text in _CLAUSE_ENDS or after.text in ("'", "\u2019")
    return after.text[:1].islower()


# Days of the week are in no HIPAA category, yet stand where names and dates
# do ("going home on MON", "?CABG FRIDAY 10/7"). "Sat" and "Sun" are left to
# the model: they are also a verb and a surname.
_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur thurs fri".split())


def _drop_weekdays(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """Unmark days of the week, whatever the model called them."""
    for t in marked(kinds):
        if tokens[t].text.lower() in _WEEKDAYS:
            kinds[t] = None


# A unit of time or dose after a word of rate (``per day``, ``twice a day``,
# ``2 g every 8 hours``) is a rate, not a name: ``day`` and ``week`` are
# surnames the model marks at the bias in a question it has no context for.
_RATE_WORDS = frozenset({"per", "a", "an", "each", "every", "/"})
_RATE_UNITS = frozenset(
    "day days week weeks month months year years hour hours hr hrs minute "
    "minutes min mins night nights shift shifts dose doses kg".split())


def _drop_bias_only_rate_units(tokens: Sequence[Token], kinds: list[str | None],
                               viterbi: Sequence[str]) -> None:
    """Unmark a lower-case unit after ``per``, ``a`` or ``every`` only the bias marked.

    A capitalised one stays (``per Day``: a doctor's orders), as does one on
    the best path.
    """
    for t in marked(kinds):
        if (t > 0 and viterbi[t] == OUTSIDE
                and tokens[t].text in _RATE_UNITS
                and tokens[t - 1].text.lower() in _RATE_WORDS):
            kinds[t] = None


# What an ordinal counts when it is no day of a month ("the 4th dose").
_COUNTED = _RATE_UNITS | frozenset(
    "time times attempt attempts try unit units bag bags liter liters cycle "
    "cycles round rounds trimester line lines set sets stick sticks".split())
_ORDINAL_ENDS = frozenset({"st", "nd", "rd", "th"})


def _drop_bias_only_ordinal_counts(tokens: Sequence[Token], kinds: list[str | None],
                                   viterbi: Sequence[str]) -> None:
    """Unmark an ordinal before what it counts that only the bias made a date.

    ``the 4th dose``, ``on the 3rd day of abx``: a day of the month stands
    alone (``changed on the 19th``) or with a month, never before a count
    noun. One on the best path stays.
    """
    for t in marked(kinds):
        if t >= len(tokens) - 2:
            break
        number, suffix, noun = tokens[t], tokens[t + 1], tokens[t + 2]
        if (kinds[t] == "DATE" and viterbi[t] == OUTSIDE and viterbi[t + 1] == OUTSIDE
                and is_digits(number.text) and len(number.text) <= 2
                and number.end == suffix.start and suffix.text in _ORDINAL_ENDS
                and noun.text in _COUNTED):
            kinds[t] = None
            if kinds[t + 1] == "DATE":
                kinds[t + 1] = None


def _drop_bias_only_after_how(tokens: Sequence[Token], kinds: list[str | None],
                              viterbi: Sequence[str]) -> None:
    """Unmark a lower-case word after ``how`` that only the bias marked.

    ``how long``, ``how soon``, ``how often``: a question's adverb, never a
    name (``Long`` is a surname). A capitalised word (``ask how Frank is``)
    and one on the best path stay.
    """
    for t in marked(kinds):
        word = tokens[t].text
        if (t > 0 and viterbi[t] == OUTSIDE and word.islower()
                and tokens[t - 1].text.lower() == "how"):
            kinds[t] = None


@lru_cache(maxsize=1)
def _kin_words() -> frozenset[str]:
    return frozenset(default_config()["names"]["relations"])


_SENTENCE_MARKS = frozenset("?!")


def _end_at_sentences(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """No model span holds a kin word, nor the full stop before one.

    ``PT IS A RETIRED EDITOR. BROTHER ANGEL``: the model carried PROFESSION
    over the full stop into ``BROTHER``. As one value, ``EDITOR. BROTHER``
    was then searched for in the whole document, and a surrogate ``...
    editor`` before another untouched ``. brother`` spelled it: the leak
    guard quarantined a document of 40,000 notes. A kin word (rules.json
    ``names.relations``) is a cue, never part of a value (no gold span of the
    development notes holds one), and a stop before it ends the sentence.
    Other stops stay: ``St. Mary``, ``Mass. General`` are one name. A
    question or exclamation mark always ends a sentence: ``in Dayton?`` was
    one span, and its surrogate took the question away.
    """
    kin = _kin_words()
    last = len(tokens) - 1
    for t in marked(kinds):
        word = tokens[t].text
        if word.lower() in kin or set(word) <= _SENTENCE_MARKS or (
                word == "." and t < last and tokens[t + 1].text.lower() in kin):
            kinds[t] = None
