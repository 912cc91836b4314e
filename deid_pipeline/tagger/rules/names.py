"""Name recognizers: the shapes nursing notes write staff, patients and kin in."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.generations import Generations
from deid_pipeline.tagger.intervals import Intervals
from deid_pipeline.tagger.name_extents import first_name_words, with_first_names
from deid_pipeline.tagger.rules.ages import FAHRENHEIT_HIGH, FAHRENHEIT_LOW
from deid_pipeline.tagger.rules.base import (
    _FLAGS,
    Hit,
    Pattern,
    PatternRecognizer,
    _normal_words,
    _trie,
)
from deid_pipeline.tagger.rules.scan import Scanner

_NAME = r"(?:[OoDd]'[ \t]?)?[A-Za-z]{3}[A-Za-z'-]*(?![\w'])"
_SHORT_NAME = r"[A-Za-z]{2}[A-Za-z'-]*(?![\w'])"
# Not after a letter, digit or the marks of clinical shorthand: the "V." of
# "N/V. ABD", the "I." of "D+I.", the "O." of "A&O." are not initials.
_NOT_SHORTHAND = r"(?<![\w.'/+&-])"
# Where a relation word may also start: after a label and a hyphen.
_AFTER_LABEL = r"(?<=[a-z]{3}-)"
_VOWEL = re.compile(r"[aeiouy]")


def word_is_titled(text: str, hit: Hit) -> bool:
    """Whether the hit's word is written ``Xxxx`` (capital, then lower case)."""
    word = text[hit.start:hit.end]
    return word[:1].isupper() and word[1:].replace("'", "").replace("-", "").islower()


def _name_key(word: str) -> str:
    """The lexicon key of a name as written.

    No ``O'``/``D'``, the first half of a hyphenated name, lower case.
    """
    return re.sub(r"^[OoDd]'[ \t]?", "", word).split("-")[0].lower()


# A capitalised word (or an O'/D' name in any case) right after a name.
# After a title and an initial (``Dr. H. Bridges``, ``MR K SMITH``).
# Who did something, before an initial: "CVL BY B. WHITE", "PER L. WHITE PA";
# the initial and a common surname are then a name, not "E. coli".
_CUE_BEFORE_INITIAL = re.compile(r"(?<![\w/])(?:by|per|with|w/)[ \t]+$", re.I)
_FIRST_NAME_BEFORE = re.compile(
    r"(?<![\w'.])(?P<first>[A-Z][a-z]{2,}|[A-Z]{3,})[ \t]+$")
_SURNAME_AFTER_INITIAL = re.compile(
    r"(?:\.[ \t]*|[ \t]+)(?P<name>[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?|[A-Z]{3,})(?![\w'-])")
_SURNAME_AFTER = re.compile(
    r"[ \t]+(?P<name>[OoDd]'[A-Za-z]{2,}(?:-[A-Za-z]+)?(?![\w'])"
    r"|[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?(?![\w']))")


def _reads_as_surname(word: str, lex: Any, capitalised: bool = False) -> bool:
    """Whether ``word`` can be a surname.

    A listed one not more common as an English word, or an unknown word that
    is not shorthand. ``O'Driscoll`` always can. ``capitalised`` words (a
    capital in mixed-case text) may be as common as English band 4
    (``Cole``, ``Lange``).
    """
    if re.match(r"[OoDd]'", word):
        return True
    key = _name_key(word)
    flags = lex.flags(key)
    if "drug" in flags or "dx" in flags or _PLACE_FLAGS & set(flags):
        return False
    band = lex.english_band(key)
    if band == 0 or band == 1 and not any(f[:2] in ("ln", "fn") for f in flags):
        # Short words unknown to every list, or that English hardly uses
        # (band 1, ``Oduya``), are unit names (MICU, cvicu) unless written
        # like a name (Nuzo).
        titled = word[:1].isupper() and word[1:].islower()
        return bool(_VOWEL.search(key)) and (
            len(key) >= 6 or (len(key) >= 3 and titled))
    names = {f for f in flags if f[:2] in ("ln", "fn")}
    limit = 4 if capitalised else 3
    return (band <= limit and bool(names & {"ln1", "ln2", "fn1", "fn2"})) or (
        band <= 2 and bool(names))


# Two-letter first names that are as often shorthand before a letter.
_NOT_SHORT_FIRST = frozenset({"jr", "sr", "po", "pr", "dr", "st"})
# "mr." or "mrs." with its full stop, right before the name.
_STOPPED_TITLE = re.compile(r"(?<![a-z])mrs?\.[ \t]*$", re.IGNORECASE)


# A past deed of a person right after a name: "son Will called".
_PERSON_DID = re.compile(r"[ \t]+(?:called|visited|came|phoned|stayed|brought|spoke|"
                         r"arrived|asked|left|went)(?![a-z])", re.IGNORECASE)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _misspelt(word: str, lex: Any, band: int) -> bool:
    """Whether one letter added, dropped, changed or two swapped make a word.

    A word of English ``band`` or commoner (3: ``notified``, ``torah``; 4:
    ``visited``). Notes typed in capitals misspell (``SON VISTED``, ``WIFE
    UPDATTED``): a word no list knows after a relation is then no name; a
    capitalised one is only if a commoner word is that close (``niece
    Tovah``, ``caregiver Remedios``).
    """
    w = word.lower()
    variants = set()
    for i in range(len(w) + 1):
        variants.update(w[:i] + c + w[i:] for c in _LETTERS)
        if i < len(w):
            variants.add(w[:i] + w[i + 1:])
            variants.update(w[:i] + c + w[i + 1:] for c in _LETTERS if c != w[i])
        if i < len(w) - 1:
            variants.add(w[:i] + w[i + 1] + w[i] + w[i + 2:])
    return any(lex.english_band(v) >= band for v in variants)


def _line_has_lower(text: str, at: int) -> bool:
    """Whether the line holding offset ``at`` has a lower-case letter."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return any(c.islower() for c in text[start:end if end >= 0 else len(text)])


def _line_has_capital(text: str, at: int) -> bool:
    """Whether the line holding offset ``at`` has a capital letter."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return any(c.isupper() for c in text[start:end if end >= 0 else len(text)])


# Said of the person (``daughter is Shaniqua``; not ``friend is Muslim``).
_IS = (r"(?:(?:is|was)[ \t]+(?!(?:muslim|jewish|catholic|christian|hindu|buddhist|"
       r"asian|hispanic|latin[ao]|irish|baptist|russian)(?![a-z])))?")
# The age words after a number ("45 yo", "72 y/o", "90 year-old", "61yoF").
_AGE_WORDS = (r"(?:yo[mf]?|y/o|y\.o\.?|y(?:ea)?rs?[ \t]*-?[ \t]*old)(?![a-z])")


class NameRecognizer(PatternRecognizer):
    """Names in the shapes nursing notes write them.

    ``N. GRANDONE aware`` (an initial and a surname: staff), ``HO Falco``
    (a staff title and a name), ``MRS BRUCER`` (a title and a surname: the
    patient) and ``son bill`` (a relation and a first name: a relative);
    ``mr K`` and ``Dr. K`` (a title and a capital alone); ``BEA TURA aware``
    and ``per DOUGLASS`` (listed names before or after a reporting cue,
    staff); ``AGNES MUNROE`` (a first name and a surname, no cue). The
    shape alone is not enough (``E. coli``, ``MS changes``, ``son
    called``), so the word must look like a name to the lexicons: a
    surname or first name not more common as an English word, and never a
    drug or a diagnosis after an initial. The CRF misses these shapes where
    the corpus has few; they do not vary between hospitals.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        titles = _trie(config.get("titles", ("mr", "mrs", "ms", "miss")))
        staff = _trie(config.get("staff_titles", ("dr", "doctor")))
        relations = _trie(config.get("relations", ("son", "daughter", "wife")))
        doctors = _trie(config.get("doctor_titles", ("dr", "doctor")))
        before = _trie(config.get("cues_before_name", ("per",)))
        after = _trie(config.get("cues_after_name", ("aware",)))
        self._doctor = re.compile(rf"(?:{doctors})\.?[ \t]*$", _FLAGS)
        # Names before a cue are read back from the cue (see analyze).
        self._cue_after = re.compile(rf"(?<=[ \t])(?:{after})(?![a-z])", _FLAGS)
        self._cue_after_scan = Scanner(self._cue_after)
        # What is said of a patient, read back to their name (see _owners):
        # each cue starts at a character it consumes, so a search skips to it.
        # Scanned by character and gated like the shapes (rules/scan.py).
        self._owner_cues = tuple((kind, needle, Scanner(cue)) for kind, needle, cue in (
            ("kin", "'s", re.compile(
                rf"'s[ \t]+(?:{relations}|family|parents)(?![a-z])", _FLAGS)),
            ("family", "family", re.compile(r"family(?![a-z])", _FLAGS)),
            ("aged", "", re.compile(rf"\d{{1,3}}(?:[ \t]*-?[ \t]*{_AGE_WORDS}"
                                    r"|[ \t]?(?-i:[MF])(?![A-Za-z0-9]))", _FLAGS)),
            # An age alone between commas (``Ignatius Obi, 62, post-op``).
            ("aged", ",", re.compile(r"(?<=,[ \t])(?:1[01]\d|120|[1-9]?\d)(?=,[ \t])")),
            ("record", "mrn", re.compile(r"[(,][ \t]*mrn(?![a-z])", _FLAGS))))
        # Listed as names by some list, yet a test, a unit or a service there.
        self._not_names = frozenset(_normal_words(config.get("not_names", ())))
        self._first_name_words = first_name_words(config)
        # Every shape starts at a letter that is not inside shorthand: one
        # guard for all of them (a tenth of the time, the same matches).
        word_start = {"confidence": 0.8, "guard": rf"{_NOT_SHORTHAND}(?=[a-z])"}
        # A capital alone after a title, not the A of "MS A&O" (mental status).
        initial = r"(?P<phi>(?-i:[A-Z]))(?![\w'&+/])"
        relation_body = (rf"(?:{relations})(?:[ \t]*[,:(-][ \t]*|[ \t]+{_IS})"
                         rf"(?!(?:{titles}|{staff}|{relations})(?![a-z]))(?P<phi>{_SHORT_NAME})")
        super().__init__("names", "DOCTOR", [
            Pattern("initial",
                    rf"{_NOT_SHORTHAND}(?P<phi>[A-Za-z]\.[ \t]+{_NAME})",
                    **word_start),
            Pattern("title", rf"{_NOT_SHORTHAND}(?:{titles})(?:\.[ \t]*|[ \t]+)"
                    rf"(?P<phi>{_NAME})", **word_start),
            Pattern("staff", rf"{_NOT_SHORTHAND}(?:{staff})(?:\.[ \t]*|[ \t]+{_IS})"
                    rf"(?P<phi>{_NAME}(?:-{_NAME})?)", **word_start),
            # Not a title after the relation: "wife, Mrs. Okonjo" is the
            # title's (the match would hide it).
            Pattern("relation", rf"{_NOT_SHORTHAND}{relation_body}", **word_start),
            Pattern("title_initial", rf"{_NOT_SHORTHAND}(?:{titles})(?:\.[ \t]*|[ \t]+)"
                    rf"{initial}", **word_start),
            # The same typed in lower case ("mr a remained on same doses"):
            # mr or mrs (ms is mental status too), on a line without capitals.
            Pattern("title_initial_lower", rf"{_NOT_SHORTHAND}(?-i:mrs?)\.?[ \t]+"
                    r"(?P<phi>(?-i:[a-z]))(?=\.?[ \t]+(?-i:[a-z]{2,}))", **word_start),
            Pattern("doctor_initial", rf"{_NOT_SHORTHAND}(?:{doctors})"
                    rf"(?:\.[ \t]*|[ \t]+){initial}", **word_start),
            # Only the first name is consumed (validate widens the hit to the
            # initial), so "Valerie B. Mitchell" still gives "B. Mitchell".
            Pattern("first_initial",
                    rf"{_NOT_SHORTHAND}(?-i:(?P<first>[A-Z][a-z]+)"
                    r"(?=[ \t]+[A-Z]\.(?P<initial_end>)(?![\w'])))", **word_start),
            # No full stop (``labs for Mohammed A from 3/2``): a lower-case
            # word or a clause's end after the capital, never ``I``.
            Pattern("first_initial_bare",
                    rf"{_NOT_SHORTHAND}(?-i:(?P<first>[A-Z][a-z]{{2,}})"
                    r"(?=[ \t][A-HJ-Z](?P<initial_end>)(?:[ \t]+[a-z]|[,;:?!)]|$)))",
                    **word_start),
            # The same typed all in lower case (``was bobby p. discharged``):
            # only on a line without capitals, where case says nothing.
            Pattern("first_initial_lower",
                    rf"{_NOT_SHORTHAND}(?-i:(?P<first>[a-z]{{3,}})"
                    r"(?=[ \t]+[a-z]\.(?P<initial_end>)(?![\w'.])))", **word_start),
            # The relation after the name, in brackets: "and TIM (SON)",
            # "Joan (HCP)", "Called Joe (husband)".
            Pattern("relation_after", rf"{_NOT_SHORTHAND}(?P<phi>{_SHORT_NAME})"
                    rf"[ \t]*\([ \t]*(?:pt'?s[ \t]+)?(?:{relations})[ \t]*\)",
                    **word_start),
            # A family by its name in the plural: "the Hendersons want".
            Pattern("family_plural", r"the[ \t]+(?P<phi>(?-i:[A-Z][a-z]{3,}s))"
                    r"(?![\w'])", **word_start, requires=("the",)),
            # Not a relation or title after the cue (``per niece Tovah``: theirs).
            Pattern("cue_before", rf"{_NOT_SHORTHAND}(?:{before})[ \t]+(?!(?:"
                    rf"{relations}|{titles}|{staff})(?![a-z]))(?P<phi>{_NAME})",
                    **word_start),
            # A referral letter's patient: "Thank you for seeing VILLA, LISA".
            Pattern("seeing", r"thank(?:s|[ \t]+you)[ \t]+for[ \t]+"
                    r"(?:seeing|evaluating)"
                    r"[ \t]+(?:(?:mr|mrs|ms|miss)\.?[ \t]+)?"
                    rf"(?P<phi>(?=(?-i:[A-Z])){_NAME}(?:,?[ \t]+(?=(?-i:[A-Z]))"
                    rf"(?:{_NAME}|[A-Za-z]\.|[A-Za-z](?![\w'])))?)", **word_start,
                    requires=("thank",)),
            # A newborn by name ("baby Hope born at", "Baby Boy Okafor",
            # "patel baby born"): the patient.
            Pattern("baby", rf"{_NOT_SHORTHAND}baby[ \t]+(?:(?:boy|girl)[ \t]+)?"
                    rf"(?P<phi>{_NAME})", **word_start, requires=("baby",)),
            Pattern("named_baby", rf"{_NOT_SHORTHAND}(?P<phi>{_NAME})[ \t]+baby"
                    r"[ \t]+(?:boy|girl|born)(?![a-z])", **word_start,
                    requires=("baby",)),
            # A section label may be hyphened to the relation ("COPING-SISTER
            # ,ANDREA", "SOCIAL-wife"). The same shape after a hyphen, last:
            # no other shape starts there, and under the word-start guard of
            # the others the relation costs one alternative, not a guard of
            # its own tried at every character (a third of this rule's time).
            Pattern("relation", rf"{_AFTER_LABEL}{relation_body}",
                    **{**word_start, "guard": rf"{_AFTER_LABEL}(?=[a-z])"}),
        ], prefilter=r"[a-z]\.|mr|ms|mi|[a-z]{3}")

    @property
    def labels(self) -> tuple[str, ...]:
        """Staff, patient and relative names."""
        return ("DOCTOR", "PATIENT", "RELATIVE")

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the word after the cue looks like a name to the lexicons.

        After a staff title a second word that reads as a surname (``Dr Will
        Cole``, ``Dr. Sarah O'Driscoll``) is taken too: the hit is widened to
        it, and the pair vouches for a first name as common as ``Will``.
        """
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        name = hit.pattern.name
        if name == "title_initial_lower":
            return not _line_has_capital(text, hit.start)
        if name in ("title_initial", "doctor_initial"):
            after = _SURNAME_AFTER_INITIAL.match(text, hit.end)
            if after is not None and self._surname_after_initial(
                    after.group("name"), lex):
                hit.end = after.end()  # Dr. H. Bridges: the surname too
            return True
        if name in ("first_initial", "first_initial_bare"):
            hit.end = hit.span("initial_end")[1]
            return self._first_name(hit.group("first") or "", lex,
                                    stricter=name == "first_initial_bare")
        if name == "first_initial_lower":
            hit.end = hit.span("initial_end")[1]
            return (not _line_has_capital(text, hit.start)
                    and self._first_name(hit.group("first") or "", lex, stricter=True))
        word = text[hit.start:hit.end]
        if word.endswith("'s") and len(word) > 4:  # per Dr. White's order
            hit.end -= 2
            word = word[:-2]
        if name == "named_baby":
            return self._reads_as_owner(word, lex, strict=True)
        if name == "family_plural":
            return self._family_plural(word, lex)
        if name == "cue_before":
            return len(word) >= 4 and self._cue_name(word, lex)
        if name == "seeing":
            first = _name_key(re.split(r"[ \t,]+", word)[0])
            names = {f for f in lex.flags(first) if f[:2] in ("fn", "ln")}
            band = lex.english_band(first)
            return band <= 2 or band <= 5 and bool(names)
        if hit.pattern.name == "initial":
            word = word[2:].lstrip()
        raw, word = word, _name_key(word)
        if word in self._not_names:  # "Jessica M. MRN": a field label after it
            return False
        flags = lex.flags(word)
        band = lex.english_band(word)
        if name == "baby" and (raw.isupper() or lexicons.is_clinical_word(flags)):
            return False  # "2 Baby ASA": a drug's shorthand, not a newborn
        if name == "baby" and _BOY_OR_GIRL.search(text, hit.whole[0], hit.start):
            # "Baby boy Oyelaran": the family's name, listed or no English word.
            return band <= 2 or band <= 4 and any(f[:2] in ("fn", "ln") for f in flags)
        if hit.pattern.name in ("relation", "relation_after", "baby"):
            # So does a capitalised word no list knows or English hardly uses
            # (``foster mother Yevgenia``, ``niece Tovah``; in a line of
            # capitals ``GIRLFRIEND DESHAWNA``, two vowels or more: not
            # ``FATHER CABG``) or a rare surname (``son-in-law Rafferty``);
            # and any common first name written with a capital that did what only a
            # person does (``NEPHEW WILL CALLED``: no modal is; not ``son and
            # grandson both visited``).
            titled = raw[:1].isupper() and raw[1:].islower() or (
                raw.isupper() and not _line_has_lower(text, hit.start)
                and len(word) >= 5 and len(_VOWEL.findall(word)) >= 2)
            first = any(f.startswith("fn") for f in flags)
            return (band <= 4 and first) or (band == 5 and "fn1" in flags) or (
                "fn1" in flags and raw[:1].isupper()
                and _PERSON_DID.match(text, hit.end)
            ) or titled and (
                band <= 1 and set(flags) <= {"w1"} and len(word) >= 4
                and bool(_VOWEL.search(word))
                and not _misspelt(word, lex, 3 if raw.isupper() else 4)
                or 0 < band <= 2 and any(f.startswith("ln") for f in flags)
                and not lexicons.is_clinical_word(flags))
        if hit.pattern.name == "staff":
            surname = _SURNAME_AFTER.match(text, hit.end)
            # A first name, not a function word some list holds (``RN. the
            # Hendersons``): as common as ``Will`` only if a common first name.
            first = band <= 5 and any(f.startswith("fn") for f in flags) or (
                band == 6 and "fn1" in flags)
            if surname is not None and first and (
                    _reads_as_surname(surname.group("name"), lex, capitalised=True)
                    or _staff_common_surname(raw, surname.group("name"), lex)):
                hit.end = surname.end()
                return True
            return self._staff_name(word, flags, band, bool(self._doctor.search(
                text, hit.whole[0], hit.start)))
        if hit.pattern.name == "initial" and ("drug" in flags or "dx" in flags):
            # "BY B. WHITE", "Jessica E. Brown": after a cue or a first name,
            # a listed name written as one, as common as a common surname
            # ("with E. coli", "by S. aureus" are no listed names; "per L.
            # hand surgery" is lower case).
            names = set(flags) & {"ln1", "ln2", "fn1", "fn2"}
            return raw[:1].isupper() and word not in self._not_names and (
                band <= 4 and bool(names) or band == 5 and "ln1" in names) and (
                self._cue_or_first_name_before(text, hit.start, lex))
        surname = {f for f in flags if f.startswith("ln") or f.startswith("fn")}
        # "Mrs. Park": a capitalised word after a title may be as common as
        # English band 5 (capitals say nothing in "MRS PARK" or "mrs park"),
        # and so after "mr." or "mrs." with its full stop ("mr. brown"; not
        # "ms.", which ends "IMPROVEMENT IN MS." as often).
        capitalised = hit.pattern.name == "title" and word_is_titled(text, hit)
        stopped = hit.pattern.name == "title" and _STOPPED_TITLE.search(
            text, max(0, hit.start - 8), hit.start) is not None
        limit = 5 if capitalised or stopped else 4
        # A capitalised word English rarely uses after a title is a surname
        # the lists lack ("Mrs. Okonjo").
        return band == 0 or (band <= limit and bool(
            surname & {"ln1", "ln2", "fn1", "fn2"})) or (band <= 2 and (
                bool(surname) or capitalised))

    def _family_plural(self, word: str, lex: Any) -> bool:
        """``Hendersons``: a listed surname with an s that English hardly uses.

        Not ``the Browns`` or ``the Smiths`` (words too, band 3), nor a drug,
        a diagnosis or a catheter in the plural (``the Foleys``).
        """
        stem = word[:-1].lower()
        flags = set(lex.flags(stem))
        return (lex.english_band(word.lower()) <= 2 and stem not in self._not_names
                and stem not in _SIZED_DEVICES
                and bool(flags & {"ln1", "ln2"}) and not flags & {"drug", "dx"}
                and lex.english_band(stem) <= 4)

    def _reads_as_owner(self, word: str, lex: Any, strict: bool = False) -> bool:
        """Whether a word a relative, a family or an age is said of reads as a name.

        Listed as a first name or surname no more common in English than band
        4, or a word English hardly uses (band 2 or rarer), never a clinical
        word. ``strict`` (a family's or a newborn's name, a shape common words
        take: ``Foster family``, ``Nuclear family``, ``EXTUBATE FAMILY``): a
        listed name of band 3 or rarer.
        """
        from deid_pipeline.tagger import lexicons

        key = _name_key(word)
        flags = lex.flags(key)
        band = lex.english_band(key)
        names = set(flags) & {"ln1", "ln2", "fn1", "fn2"}
        return (key not in self._not_names and not lexicons.is_clinical_word(flags)
                and (band <= (3 if strict else 4) and bool(names)
                     or band <= 2 and not strict))

    def _owners(self, text: str, found: list[PhiSpan]) -> list[PhiSpan]:
        """The patient read back from what is said of them.

        Whose relative it is (``harpreet singh's mom``, ``Carol's husband``:
        of two words the first only if it reads as a name too), a family by
        its name (``Tran family``) and the person an age or a record number
        is given for, first in a line or a sentence or after for/in/of
        (``Nguyen, 45 yo F``, ``for Ottoline Przybylski 91F``, ``Maeve
        D'Arcy, MRN 0091``). Found from the cue backwards: a search per
        cue, not a try at every word.
        """
        from deid_pipeline.tagger import lexicons

        lex = None
        spans = []
        lower = None
        for kind, needle, scan in self._owner_cues:
            if needle:
                lower = lower if lower is not None else text.lower()
                if needle not in lower:
                    continue
            for cue in scan.finditer(text):
                at = cue.start()
                if kind in ("family", "aged") and at and text[at - 1].isalnum():
                    continue  # "Smithfamily"; "x110 yo"
                lo = max(text.rfind("\n", 0, at) + 1, at - 64)
                before = _OWNER_BEFORE[kind].search(text, lo, at)
                both = False  # a name in lower case: both words must read as one
                if before is None and kind == "aged":
                    before = _LOWER_CASE_AGED.search(text, lo, at)
                    both = True
                if before is None:
                    continue
                start, end = before.span("last")
                if any(s.start < end and start < s.end for s in (*found, *spans)):
                    continue
                if kind == "aged" and _SEX_LETTER_CUE.fullmatch(cue.group()) and (
                        not _sexed_age(cue.group(), before.group("last"))):
                    continue
                lex = lex or lexicons.load()
                strict = kind == "family"
                first = before.group("first")
                if first and lexicons.is_clinical_word(lex.flags(_name_key(first))):
                    continue  # "Sickle Cell 22F": a clinical phrase, no name
                named_first = bool(first) and self._reads_as_owner(first, lex)
                if not (self._reads_as_owner(before.group("last"), lex, strict)
                        or kind == "aged" and named_first and not both
                        and _common_listed_surname(before.group("last"), lex)):
                    continue  # "Soo-ah Park 29F": a common surname after a name
                if named_first:
                    start = before.start("first")
                elif both:
                    continue
                spans.append(PhiSpan(start, end, "PATIENT", self.source,
                                     self.patterns[0].confidence))
        return spans

    def _cue_or_first_name_before(self, text: str, at: int, lex: Any) -> bool:
        """``by``/``per``/``with`` or a common first name right before ``at``."""
        lo = max(0, at - 24)
        if _CUE_BEFORE_INITIAL.search(text, lo, at) is not None:
            return True
        first = _FIRST_NAME_BEFORE.search(text, lo, at)
        return first is not None and self._first_name(first.group("first"), lex)

    def _surname_after_initial(self, word: str, lex: Any) -> bool:
        """The word after ``Dr. H.``: a surname, however else the lists know it.

        The shape is strict (a title, one capital, the word), so the word
        may be a diagnosis or a drug by the noisy lists (``Bridges``,
        ``Jones``); it must be listed as a name and not be a common English
        word (``Will``, ``Stable``) or shorthand the lists call a name.
        """
        key = _name_key(word)
        if key in self._not_names:
            return False
        band = lex.english_band(key)
        names = set(lex.flags(key)) & {"ln1", "ln2", "fn1", "fn2"}
        return band <= 2 or band <= 4 and bool(names) or band == 5 and "ln1" in names

    def _first_name(self, word: str, lex: Any, stricter: bool = False) -> bool:
        """A common first name before an initial (``Anna S.``), not ``Vitamin K.``.

        The shape (a capitalised word, a capital and a period) is strict, so
        a common first name may be a common word too (``John``, band 5), but
        never a diagnosis: the shape is also ``Hepatitis B.``, ``Stage I.``,
        ``Lead V.`` (the drug flag is too noisy to use: it holds ``John``).
        In lower case, or without the full stop (``stricter``), the shape
        vouches less: one band stricter.
        """
        key = word.lower()
        flags = set(lex.flags(key))
        band = lex.english_band(key) + stricter
        if len(key) == 2:  # Ed M., Al B.: a first name first (not Mr, Pt, Jr, Po)
            return key not in _NOT_SHORT_FIRST and "fn1" in flags and band <= 5
        return (key not in self._not_names and "dx" not in flags
                and ("fn1" in flags and band <= 5 or "fn2" in flags and band <= 4))

    def _staff_name(self, word: str, flags: Sequence[str], band: int,
                    doctor_title: bool) -> bool:
        """Whether ``word`` after a staff title reads as a name.

        A name in the lexicons, or an unknown word that does not read like
        shorthand (CXR), a verb or a plural (paged, sats); after a doctor's
        title (``dr small``, ``Dr. Brown``) a common surname is still one.
        """
        if band <= 4 and {"fn1", "fn2", "ln1", "ln2"} & set(flags):
            return True
        if band == 5 and {"fn1", "ln1"} & set(flags) and (
                word not in self._not_names) and doctor_title:
            return True
        return band <= 2 and len(word) >= 4 and bool(_VOWEL.search(word)) and (
            not word.endswith(("ed", "ing", "ly", "s")))

    def _more_doctors(self, text: str) -> list[PhiSpan]:
        """The second and later names after ``Drs``, each checked as after ``Dr``.

        The first name is the ``staff`` shape's; a list stops at the first
        word that does not read as a name (``Drs Ames and team``).
        """
        from deid_pipeline.tagger import lexicons

        spans = []
        for match in _MORE_DOCTORS_SCAN.finditer(text):
            lex = lexicons.load()
            start, end = match.span("more")
            for word in _LISTED_NAME.finditer(text, start, end):
                if word.group().lower() == "and":
                    continue
                key = _name_key(word.group())
                if not self._staff_name(key, lex.flags(key), lex.english_band(key),
                                        True):
                    break
                spans.append(PhiSpan(word.start(), word.end(), self.label,
                                     self.source, self.patterns[0].confidence))
        return spans

    def scanners(self) -> tuple[Scanner, ...]:
        """Its expression's scans, the cue scan and the doctors' and full names'."""
        return (*super().scanners(), self._cue_after_scan, _MORE_DOCTORS_SCAN,
                _FULL_NAME_SCAN, *(scan for _, _, scan in self._owner_cues))

    def analyze(self, text: str) -> list[PhiSpan]:
        """The shapes after a cue, then the one or two names before ``aware``.

        ``BEA TURA aware``: found from the cue backwards, which costs a search
        per cue rather than a try at every word. Both words must read as
        listed names (:func:`_reads_as_listed_name`); of two where only the
        second does (``BIGEMINY Tura``), only the second is taken.
        """
        spans = super().analyze(text)
        if not self.applies(text):
            return spans
        spans.extend(s for s in self._more_doctors(text)
                     if not any(o.start < s.end and s.start < o.end for o in spans))
        from deid_pipeline.tagger import lexicons

        lex = None
        for cue in self._cue_after_scan.finditer(text):
            lo = max(text.rfind("\n", 0, cue.start()) + 1, cue.start() - 64)
            names = _NAMES_BEFORE_CUE.search(text, lo, cue.start())
            if names is None or any(s.end > names.start() and s.start < names.end()
                                    for s in spans):
                continue  # no name, or a shape above found it already
            lex = lex or lexicons.load()
            if not self._cue_name(names.group("last"), lex):
                continue
            start = names.start("last")
            first = names.group("first")
            if first is not None and self._cue_name(first, lex):
                start = names.start("first")
            spans.append(PhiSpan(start, names.end("last"), self.label, self.source,
                                 self.patterns[0].confidence))
        spans.extend(self._owners(text, spans))
        spans.extend(self._full_names(text, spans))
        spans = with_first_names(text, spans, *self._first_name_words)
        spans.sort()
        return spans

    def _full_names(self, text: str, found: list[PhiSpan]) -> list[PhiSpan]:
        """``AGNES MUNROE``: a first name and a surname with no cue at all.

        Only where both words are listed names rare as English words
        (:func:`_reads_as_full_name`); what a shape above found is left to it.
        """
        from deid_pipeline.tagger import lexicons

        lex = None
        spans = []
        taken = Intervals((s.start, s.end) for s in found)
        for pair in _FULL_NAME_SCAN.finditer(text):
            start, end = pair.span()
            if taken.overlaps(start, end):
                continue
            lex = lex or lexicons.load()
            key = (id(lex), pair.group("first"), pair.group("last"))
            reads = _FULL_NAME_READS.get(key)
            if reads is None:
                reads = _reads_as_full_name(key[1], key[2], lex)
                _FULL_NAME_READS.put(key, reads)
            if reads:
                spans.append(PhiSpan(start, end, self.label, self.source,
                                     self.patterns[0].confidence))
        return spans

    def _cue_name(self, word: str, lex: Any) -> bool:
        """A listed name (:func:`_reads_as_listed_name`), not a ``not_names`` word."""
        return (_name_key(word) not in self._not_names
                and _reads_as_listed_name(word, lex))

    def label_for(self, hit: Hit, text: str) -> str:
        """PATIENT after a title, RELATIVE after a relation, otherwise DOCTOR."""
        return {"title": "PATIENT", "title_initial": "PATIENT", "seeing": "PATIENT",
                "baby": "PATIENT", "named_baby": "PATIENT", "family_plural": "PATIENT",
                "title_initial_lower": "PATIENT",
                "relation": "RELATIVE", "relation_after": "RELATIVE"}.get(
                    hit.pattern.name, "DOCTOR")


# Two capitalised words of four letters or more (``AGNES MUNROE``, ``Agnes
# Munroe``): checked as a listed first name then a listed surname.
# "Drs Ferullo and Saeed", "Drs. Kim, Patel and Ngata": the names after the first.
_MORE_DOCTORS = re.compile(
    rf"(?<![a-z])drs\.?[ \t]+{_NAME}(?P<more>(?:[ \t]*(?:,[ \t]*(?:and|&)?|/|&|and)"
    rf"[ \t]*{_NAME}){{1,3}})", _FLAGS)
_LISTED_NAME = re.compile(_NAME)
_FULL_NAME = re.compile(
    r"(?<![\w'&/.-])(?P<first>[A-Z][a-z]{3,}|[A-Z]{4,})[ \t]+"
    r"(?P<last>[A-Z][a-z]{3,}|[A-Z]{4,})(?![\w'&/-])")
# Scanned as finditer finds them, faster (rules/scan.py).
_MORE_DOCTORS_SCAN = Scanner(_MORE_DOCTORS)
_FULL_NAME_SCAN = Scanner(_FULL_NAME)
# What _reads_as_full_name said of a pair, by lexicon: in notes in capitals
# every two long words are a pair (six a note), and the same ones recur
# (``NEURO ALERT``); the lexicon look-ups cost more than the scan.
_FULL_NAME_READS = Generations(20_000)
_PLACE_FLAGS = frozenset({"city", "uscity", "state", "stab", "country"})
_CAPITALISED = r"[A-Z][^\W\d_A-Z]{2,}"
_OWNER_BEFORE = {
    "kin": re.compile(rf"(?:{_NOT_SHORTHAND}(?P<first>{_NAME})[ \t]+)?{_NOT_SHORTHAND}"
                      r"(?P<last>[A-Za-z]{3}[A-Za-z-]*)$"),
    "family": re.compile(rf"{_NOT_SHORTHAND}"
                         r"(?-i:(?P<last>[A-Z](?:[a-z]{2,}|[A-Z]{2,})))(?P<first>)"
                         r"[ \t]+$"),
    # First in a line or a sentence, or after for/in/of; the given name before
    # the surname if it reads as one too (letters of any script after the capital).
    "aged": re.compile(r"(?:(?<![^\n])|(?<=[.;!?][ \t])|(?<=[.;!?][ \t]{2})"
                       r"|(?<=\b[Ff]or[ \t])|(?<=\b[Ii]n[ \t])|(?<=\b[Oo]f[ \t]))"
                       rf"(?:(?P<first>{_CAPITALISED}(?:-[A-Za-z][^\W\d_A-Z]+)?)"
                       r"[ \t]+)?"
                       rf"(?P<last>(?:[OD]'[ \t]?)?{_CAPITALISED}"
                       r"(?:[-'][A-Z][^\W\d_A-Z]+)?)"
                       r"[ \t]*(?:,|\((?:the[ \t]+|an?[ \t]+)?)?[ \t]*$"),
}
# "francesca russo 81F": a query typed in lower case names its patient first
# on its line; two words, each of which must read as a name.
# After "pt", and with a short word between (``pt ngo thi lan, 66F``,
# ``aoife ní bhriain 19F``), taken with the two.
_LOWER_CASE_AGED = re.compile(r"(?<![^\n])(?:(?:my[ \t]+)?(?:pt|patient)[ \t]+)?"
                              r"(?P<first>[a-z][^\W\d_A-Z]{2,})[ \t]+"
                              r"(?:[a-z][^\W\d_A-Z]{1,2}[ \t]+)?"
                              r"(?P<last>[a-z][^\W\d_A-Z]{2,})[ \t]*,?[ \t]*$")
# A record number is given for the person named right before it, in the
# places an age is (``Maeve D'Arcy, MRN 00917734``).
_OWNER_BEFORE["record"] = _OWNER_BEFORE["aged"]
# An age with the sex letter and no age word (``78M``, ``29 F``; not ``98 yoF``).
_SEX_LETTER_CUE = re.compile(r"\d{1,3}[ \t]?[MF]")
_BOY_OR_GIRL = re.compile(r"(?:boy|girl)[ \t]+$", re.IGNORECASE)
# No one is older: a larger number before M or F is a size or a count.
_OLDEST = 120


def _sexed_age(cue: str, word: str) -> bool:
    """Whether ``45M`` after ``word`` is an age and a sex, not a size or a fever.

    Not ``Foley 16F`` (a French size), ``Tmax 101F`` (Fahrenheit), ``Ward 300M``.
    """
    years = int(re.match(r"\d+", cue).group())
    if years > _OLDEST or word.lower() in _SIZED_DEVICES:
        return False
    return cue[-1] == "M" or not FAHRENHEIT_LOW <= years <= FAHRENHEIT_HIGH
# Catheters and tubes sized in French (``Foley 16F``): no age follows them.
_SIZED_DEVICES = frozenset({"foley", "coude", "dobhoff", "salem", "hickman", "groshong",
                            "quinton", "mahurkar", "malecot", "broviac", "cordis",
                            "pleurx", "pigtail"})
_NAMES_BEFORE_CUE = re.compile(
    rf"(?:{_NOT_SHORTHAND}(?P<first>{_NAME})[ \t]+)?{_NOT_SHORTHAND}"
    rf"(?P<last>{_NAME})[ \t]+$")


def _staff_common_surname(first: str, last: str, lex: Any) -> bool:
    """``Dr. Art White``: a common surname that is a word, after a title and name.

    Both written with a capital in mixed case, the first a common listed first
    name, the second a common listed surname no more frequent in English than
    band 5 (``White``, ``Brown``, ``Long``), whatever other lists also hold it
    (drug and diagnosis words, towns); never a state or a country.
    """
    if not (first[:1].isupper() and first[1:].islower()):
        return False
    key = _name_key(last)
    flags = set(lex.flags(key))
    return (bool({"fn1", "fn2"} & set(lex.flags(_name_key(first))))
            and bool({"ln1", "ln2"} & flags) and lex.english_band(key) <= 5
            and not {"state", "stab", "country"} & flags)


def _common_listed_surname(word: str, lex: Any) -> bool:
    """A listed common surname that is also a word (``Park``, ``Kim``, ``Young``)."""
    key = _name_key(word)
    flags = set(lex.flags(key))
    return (bool(flags & {"ln1", "ln2"}) and lex.english_band(key) <= 5
            and not flags & {"state", "stab", "country"})


def _reads_as_listed_name(word: str, lex: Any) -> bool:
    """A listed name not common as an English word and never a drug or diagnosis.

    For a name with no title before it (``per DOUGLASS``, ``BEA TURA
    aware``), where ``neurosurgery aware`` and ``per protocol`` are the
    usual readings: an unknown word is not enough.
    """
    key = _name_key(word)
    flags = set(lex.flags(key))
    return (lex.english_band(key) <= 3 and not flags & {"drug", "dx"}
            and bool(flags & {"fn1", "fn2", "fn3", "ln1", "ln2", "ln3"}))


def _reads_as_full_name(first: str, last: str, lex: Any) -> bool:
    """A common first name then a listed surname, both listed names (above).

    Or a first name that is no English word then one of the commonest
    surnames, however common a word that is.

    The first name must be among the more common ones (the lists also hold
    ``Swallow`` and ``Rabbi``: ``SWALLOW EVAL``, ``RABBI KLEIN``) and the
    surname not a place (``Ellicott City``); in ALL-CAPS notes four letters
    keep out the shorthand pairs the lists hold (``MED PRN``, ``FEM ALINE``).
    """
    if not _reads_as_listed_name(first, lex):
        return False
    last_flags = lex.flags(last.lower())
    if not _reads_as_listed_name(last, lex):
        # A surname that is also a common word (``NICOLE YOUNG``, ``Raven
        # White``) after a first name that is no English word at all.
        return ("fn1" in lex.flags(first.lower())
                and lex.english_band(first.lower()) <= 3
                and "ln1" in last_flags and lex.english_band(last.lower()) <= 5
                and not {"state", "stab", "country", "uscity"} & set(last_flags))
    return (bool({"fn1", "fn2"} & set(lex.flags(first.lower())))
            and any(f.startswith("ln") for f in last_flags)
            and not _PLACE_FLAGS & set(last_flags))


def _reads_as_first_name(word: str, lex: Any) -> bool:
    """A listed first name not more common as an English word, or an unknown word."""
    key = word.lower()
    band = lex.english_band(key)
    if band == 0:
        return len(key) >= 3 and bool(_VOWEL.search(key))
    return band <= 4 and any(f.startswith("fn") for f in lex.flags(key))
