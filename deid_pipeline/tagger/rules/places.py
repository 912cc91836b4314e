"""Place recognizers: institutions by a facility noun, a saint or a facility cue."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer, _trie
from deid_pipeline.tagger.rules.names import _name_key
from deid_pipeline.tagger.rules.scan import Scanner

# The word before a facility that says it is one (``transferred to``,
# ``films from``, ``seen at``, ``Dr. X of``); people are not "in" an initialism.
_FACILITY_CUE = r"(?i:(?<![A-Za-z])(?:from|at|to|of|via|@)[ \t]+(?:the[ \t]+)?)"
_POSSESSIVES = frozenset({"'s", "\u2019s"})
_CUE_BEFORE = re.compile(_FACILITY_CUE + r"$")


class InstitutionRecognizer(PatternRecognizer):
    """Institutions named by a shape the CRF sees too rarely to learn.

    ``the Zagaria campus``, ``on mackerer campus`` (a name before
    ``campus``, ``pavilion`` or ``building``) and ``St. Mary's`` (a saint's
    name after ``St``). The name must not be an English word (``main
    campus``, ``leave building``), and the saint must be a first name:
    ``ST elevation`` and ``ST changes`` are ECG findings.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        nouns = _trie(config.get("institution_nouns", ("campus",)))
        super().__init__("institutions", "HOSPITAL", [
            Pattern("campus", rf"(?<![\w'])(?P<phi>[A-Za-z][A-Za-z'-]{{2,}})"
                              rf"(?=[ \t]+(?:{nouns})(?![\w]))", confidence=0.8),
            Pattern("saint", r"(?<![\w'])(?P<phi>(?:st|saint)\.?[ \t]+"
                             r"(?P<name>[A-Za-z]{3,})(?:'s)?)(?![\w'])",
                    confidence=0.8),
        ], prefilter=rf"(?:{nouns})|(?<![a-z])(?:st\b|saint)")

    def validate(self, hit: Hit, text: str) -> bool:
        """A campus name unknown to English; a saint that is a first name."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        if hit.pattern.name == "saint":
            name = (hit.group("name") or "").lower()
            # A possessive, or a facility cue before a titled name, makes a
            # common first name a saint's hospital too: "of ST. JOHN'S", "to
            # St Paul" (but "NSR to ST low" is a rhythm).
            written = hit.group("name") or ""
            common = 5 if (text[hit.end - 2:hit.end].lower() in _POSSESSIVES
                           or written.istitle() and _CUE_BEFORE.search(
                               text, max(0, hit.start - 12), hit.start)) else 4
            return lex.english_band(name) <= common and "fn1" in lex.flags(name)
        word = _name_key(text[hit.start:hit.end])
        return lex.english_band(word) <= 2


_NAME_WORD = r"[A-Z][A-Za-z'\u2019-]+"
# ``transferred to KWMC``: capitals ending as facility initialisms end
# (Hospital, Medical Center, Health Center, Memorial Hospital), after a cue.
_INITIALISM = re.compile(
    rf"{_FACILITY_CUE}(?P<phi>[A-Z]{{1,4}}(?:MC|HC|MH|H))(?![\w'\u2019-])(?<=[A-Z]{{3}})")
# Where the initialism shapes below can start: a word (or ``@``). One guard
# for them all is a third of their time (see Pattern.guard).
_AT_WORD = {"confidence": 0.7, "guard": r"(?<![\w/])(?=[A-Za-z@])"}
# ``transferred to RJ``, ``med-flighted to bx``: any short initialism after a
# verb that moves a patient between institutions. The verb, not the letters,
# says facility; the units and services such verbs also lead to (``to MICU``,
# ``sent to CT``) are rules.json ``places.care_units``.
_MOVED = (r"(?i:admit(?:ted)?|adm|transferr?ed|transfer(?:ring)?|trans|tx(?:'?e?d)?|"
          r"(?:med[- ]?|life[- ]?|air[- ]?)?flighted|airlifted|flown|sent|brought|"
          r"referred|arrival|arrived|presented|discharged|d/c'?e?d)")
_MOVED_INITIALISM = re.compile(
    rf"(?<![\w/]){_MOVED}[ \t]+(?i:to|from|at)[ \t]+(?:(?i:the)[ \t]+)?"
    r"(?P<phi>[A-Za-z]{2,5})(?![\w'\u2019/-])")
# ``knows he is in RJ``, ``"I'm at the RJ"``: where a patient says, or knows,
# they are (orientation to place).
_ORIENTED_INITIALISM = re.compile(
    r"(?<![\w/])(?i:(?:(?:knows?|thinks?|believes?|says?|states?|aware)[ \t]+"
    r"(?:that[ \t]+)?"
    r"(?:he|she|they|i|pt|patient)(?:[ \t]+(?:is|am|are|was)|'s|'m)"
    r"|i'm|i[ \t]+am)[ \t]+(?:in|at)[ \t]+(?:the[ \t]+)?)"
    r"(?P<phi>[A-Za-z]{2,5})(?![\w'\u2019/-])")
# ``Dr. C. Lambert of BRHFB``, ``seen by dr j. davila at nlc``: a doctor's
# hospital by its letters.
_DOCTOR_INITIALISM = re.compile(
    r"(?<![\w/])(?i:dr\.?|doctor)[ \t]+"
    # ``Dr. aware of BP``: a word that says what the doctor did, not a name.
    r"(?!(?i:aware|notified|informed|paged|called|updated|made|here|also|is|was|has)"
    r"(?![\w'-]))"
    r"(?:[A-Za-z]\.?[ \t]+)?[A-Za-z][A-Za-z'-]+"
    r"(?:[ \t]+[A-Za-z]\.|[ \t]+[A-Z][A-Za-z'-]+)?[ \t]+(?i:of|at|from)[ \t]+"
    r"(?:(?i:the)[ \t]+)?"
    r"(?P<phi>[A-Za-z]{2,5})(?![\w'\u2019/-])")
# ``SEEN BY GBMC NURSE FOR ARRANGEMENTS``: an agency's or hospital's letters
# before the person it sends (a nurse, a liaison, a rehab screener).
_AGENCY_INITIALISM = re.compile(
    r"(?<![\w/])(?i:seen|evaluated|visited|screened|assessed)[ \t]+(?i:by)[ \t]+"
    r"(?:(?i:the|an?)[ \t]+)?(?P<phi>[A-Za-z]{2,5})[ \t]+"
    r"(?i:nurse|rn|liaison|screener|rep|representative|coordinator)(?![\w'])")
# ``transfer to Quartermain 2``, ``plan: HOBOKEN 2 this am``, ``Per Mission 3
# RN``: a ward, a building's name and a floor.
_WARD = re.compile(
    rf"(?<![\w/])(?:{_MOVED}[ \t]+(?i:to|from)|(?i:plan)[ \t]*:|(?i:per))[ \t]+"
    r"(?:(?i:the)[ \t]+)?(?P<phi>[A-Za-z][A-Za-z'-]{2,})"
    r"(?=[ \t]+\d{1,2}(?![\w/%:.,-]))")
# ``at RJ cath lab``, ``BROUGHT TO RJ ER``, ``ED at RJ``: an initialism beside
# the part of a hospital a patient is in.
_HOSPITAL_PART = r"(?:ED|ER|EW|OR|ICU|CCU|MICU|SICU|CSRU|(?i:cath[ \t]+lab|clinic))"
_INITIALISM_BEFORE_PART = re.compile(
    rf"(?<![\w/])(?i:to|at|from|@)[ \t]+(?P<phi>[A-Za-z]{{2,5}})[ \t]+{_HOSPITAL_PART}"
    r"(?![\w'\u2019/-])")
_INITIALISM_AFTER_PART = re.compile(
    rf"(?<![\w/]){_HOSPITAL_PART}[ \t]+(?i:at|@|of)[ \t]+(?P<phi>[A-Za-z]{{2,5}})"
    r"(?![\w'\u2019/-])")
# ``from Baltimore VA``: a Veterans Affairs hospital by its town (the town is
# the PHI: "VA" names no one).
_VETERANS = re.compile(
    rf"{_FACILITY_CUE}(?P<phi>{_NAME_WORD}(?:[ \t]+{_NAME_WORD})?)[ \t]+"
    r"(?:VA|V\.A\.|VAMC|VAH)(?![\w'\u2019-])")
# ``Pruitt & Lowe Clinic``: two names joined before a practice noun.
_PARTNERS = re.compile(
    r"(?<![\w'\u2019-])(?P<phi>(?P<a>[A-Za-z][A-Za-z'\u2019-]+)[ \t]*(?:&|(?P<and>and))"
    r"[ \t]*(?P<b>[A-Za-z][A-Za-z'\u2019-]+))[ \t]+(?i:clinics?|associates|group|"
    r"practice|physicians|pediatrics|surgeons|medical[ \t]+(?:group|associates))"
    r"(?![\w])")
# ``Mercy Hospital of Lakemont``: the place after a facility and ``of``, up to
# a word no place name holds (``HOSPITAL OF AMARILLO BY PATRICIA OLSEN MD``:
# the doctor is another span).
_FUNCTION_WORD = r"(?i:of|by|and|for|on|at|in|with|to|from|the|via|per|was|is)"
_FACILITY_OF = re.compile(
    r"(?i:hospital|medical[ \t]+center|clinic|infirmary|health[ \t]+center)"
    rf"[ \t]+(?i:of)[ \t]+(?:(?i:the)[ \t]+)?(?P<phi>{_NAME_WORD}"
    rf"(?:[ \t]+(?!{_FUNCTION_WORD}\b){_NAME_WORD}){{0,2}})")

# ``at the Wexner heart clinic``, ``referred to Lahey Clinic``: a name, perhaps
# a kind of care, then a clinic's noun, after a facility cue.
_NAMED_CLINIC = re.compile(
    rf"{_FACILITY_CUE}(?P<phi>{_NAME_WORD})(?:[ \t]+[A-Za-z'\u2019]+)?[ \t]+"
    r"(?i:clinic|center|centre|institute)(?![\w'\u2019-])")
# Clinics named for a specialty, not a person or a place (Dermatology Clinic).
_SPECIALTY = re.compile(r"(?i:.*(?:ology|iatry|iatrics|pedics|ics|ery))$")


class FacilityRecognizer(PatternRecognizer):
    """Hospitals by the shapes other genres write them in.

    An initialism ending as facility initialisms do (``KWMC``, ``SVHC``,
    ``LGH``) after a facility cue (``transferred to``, ``films from``, ``Dr.
    X of``); a town before ``VA``; two names joined by ``&`` before
    ``Clinic`` or ``Associates``; the place after ``Hospital of``. The
    initialism must not be a clinical abbreviation (rules.json
    ``places.not_facility_initialisms``: ``PMH``, ``ETOH``, ``LVH``) or an
    English word (``WITH``, ``COUGH``); names must be surnames or words English
    rarely uses (``Heart & Vascular Clinic`` is a service). The facility words
    themselves are not tagged, as annotators leave them out (``Baltimore VA``:
    ``Baltimore``).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._not_initialisms = frozenset(
            w.lower() for w in config.get("not_facility_initialisms", ()))
        super().__init__("facilities", "HOSPITAL", [
            # The initialism last: one that fails its check ("from NORTH")
            # must not hide a town before VA starting there.
            Pattern("veterans", _VETERANS.pattern, confidence=0.8,
                    requires=(" va", "\tva", " v.a.", "\tv.a.")),
            Pattern("partners", _PARTNERS.pattern, confidence=0.8,
                    requires=("clinic", "associates", "group", "practice",
                              "physicians", "pediatrics", "surgeons")),
            Pattern("facility_of", _FACILITY_OF.pattern, confidence=0.8,
                    requires=("hospital", "center", "clinic", "infirmary")),
            Pattern("named_clinic", _NAMED_CLINIC.pattern, confidence=0.8,
                    requires=("clinic", "center", "centre", "institute")),
            Pattern("initialism", _INITIALISM.pattern, confidence=0.8),
            Pattern("initialism_before_part", _INITIALISM_BEFORE_PART.pattern,
                    **_AT_WORD),
            Pattern("initialism_after_part", _INITIALISM_AFTER_PART.pattern,
                    **_AT_WORD),
        ], flags=0)
        self._care_units = _care_units(config)

    def validate(self, hit: Hit, text: str) -> bool:
        """The initialism or names pass the lexicon checks of the class docstring."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        value = text[hit.start:hit.end]
        kind = hit.pattern.name
        if kind in _CAPITALS_SAY_NAME and not _line_has_lower(text, hit.start):
            return False
        if kind == "initialism":
            lower = value.lower()
            return lower not in self._not_initialisms and lex.english_band(lower) <= 2
        if kind in ("initialism_before_part", "initialism_after_part"):
            return _initialism_in_context(lex, self._care_units, value)
        if kind == "named_clinic":
            return self._clinic_name(lex, value, _line_has_lower(text, hit.start))
        if kind == "partners":
            names = (hit.group("a") or "", hit.group("b") or "")
            if hit.group("and") and not all(n[:1].isupper() for n in names):
                return False
            # Two surnames, one of them rare in English ("Young & Garcia
            # Clinic"; "Heart & Vascular" has neither).
            surnames = [any(f.startswith("ln") for f in lex.flags(_name_key(n)))
                        for n in names]
            return all(surnames) and any(_reads_as_name(lex, n) for n in names)
        # A town's last word names it ("Lake Jennifer", "East Orange" are
        # towns; "Heart" alone is not).
        last = value.split()[-1]
        return _reads_as_name(lex, last) or bool(
            _TOWN_FLAGS & set(lex.flags(last.lower())))

    def _clinic_name(self, lex: Any, word: str, mixed_case: bool) -> bool:
        """A clinic's name: a surname or rare word, not a specialty or a drug.

        ``Wexner``, ``Kellogg``, ``Mayo``; not ``Dermatology``, ``Coumadin``,
        ``Wound`` or ``Pain``. In a line of capitals only a long word
        (``CHF CLINIC``, ``ENT CLINIC`` are services).
        """
        lower = re.sub(r"['\u2019]s$", "", _name_key(word))  # Women's Center
        if not (mixed_case or len(lower) >= 6) or _SPECIALTY.match(lower):
            return False
        if lower in self._care_units or lower in self._not_initialisms:
            return False
        return _reads_as_name(lex, lower) and not (
            {"drug", "dx"} & set(lex.flags(lower)))


class TransferRecognizer(PatternRecognizer):
    """A short initialism after a verb that moves a patient: ``transferred to RJ``.

    Or where a patient says they are (``knows he is in RJ``), after a
    doctor's name (``Dr. C. Lambert of BRHFB``), or before the nurse it
    sends (``SEEN BY GBMC NURSE``).

    Staff name the hospital a patient came from or went to by its letters,
    and the letters alone say nothing (``RJ`` is no facility ending, and web
    text spells most letter pairs); the verb does. Apart from the facility
    recognizer, whose patterns would start inside this one's match (``SENT
    TO ED AT RJ``: ``ED at RJ`` is theirs).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._care_units = _care_units(config)
        super().__init__("transfers", "HOSPITAL", [
            # The ward first: a short building name is an initialism's shape too.
            Pattern("ward", _WARD.pattern, **_AT_WORD),
            Pattern("moved_initialism", _MOVED_INITIALISM.pattern, **_AT_WORD),
            Pattern("oriented_initialism", _ORIENTED_INITIALISM.pattern, **_AT_WORD),
            Pattern("doctor_initialism", _DOCTOR_INITIALISM.pattern, **_AT_WORD),
            Pattern("agency_initialism", _AGENCY_INITIALISM.pattern, **_AT_WORD),
        ], flags=0)

    def validate(self, hit: Hit, text: str) -> bool:
        """The letters pass :func:`_initialism_in_context`; a ward reads as a name."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        value = text[hit.start:hit.end]
        if hit.pattern.name == "ward":
            return _ward_name(lex, self._care_units, value)
        return _initialism_in_context(lex, self._care_units, value)


def _care_units(config: Mapping[str, Any]) -> frozenset[str]:
    """rules.json ``places.care_units`` and ``not_facility_initialisms``, lower case."""
    return frozenset(w.lower() for key in ("care_units", "not_facility_initialisms")
                     for w in config.get(key, ()))


def _ward_name(lex: Any, care_units: frozenset[str], value: str) -> bool:
    """A building's name before a floor: no unit, drug or common English word.

    A word English rarely uses, or a town or surname not common as a word
    (``Quartermain``, ``Hoboken``); ``to Tele 4``, ``per PS 5``, ``plan: Lasix
    40`` are a unit, a vent setting and a dose.
    """
    key = value.lower()
    flags = set(lex.flags(key))
    named = bool(flags & {"town", "uscity", "city", "ln1", "ln2"})
    if key in care_units or {"drug", "dx"} & flags and not named:
        return False  # the lists call many surnames a drug or a finding too
    band = lex.english_band(key)
    return band <= 3 or band <= 4 and named


@lru_cache(maxsize=4)
def _anagrams(care_units: frozenset[str]) -> frozenset[str]:
    """The letters of every care unit of four or more, sorted (``MCIU`` is MICU)."""
    return frozenset("".join(sorted(u)) for u in care_units if len(u) >= 4)


def _initialism_in_context(lex: Any, care_units: frozenset[str], value: str) -> bool:
    """Letters that are no unit, service, common English word, drug or finding.

    Written in capitals or in lower case (``admitted to bidmc``), not in
    title case: ``Transferred to Ms`` is a title.
    """
    lower = value.lower()
    # Web text spells most letter pairs somewhere (``rj``, ``da``): short
    # ones are refused only as the common words ``to him``, ``to bed`` are.
    if lower in care_units or lex.english_band(lower) > (4 if len(lower) <= 3 else 3):
        return False
    # Intensive care units by any name or slip (``VICU``, ``MCIU`` for MICU).
    if lower.endswith("cu") or "".join(sorted(lower)) in _anagrams(care_units):
        return False
    if {"drug", "dx", "state", "stab"} & set(lex.flags(lower)):
        return False
    return value.isupper() or value.islower()


# Patterns that read capitals as a name's: evidence only where the line also
# has lower case (nursing notes written all in capitals say nothing by it).
_CAPITALS_SAY_NAME = frozenset({"initialism"})


def _line_has_lower(text: str, at: int) -> bool:
    """Whether the line holding offset ``at`` has a lower-case letter."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)]
    return any(c.islower() for c in line)


def _reads_as_name(lex: Any, word: str) -> bool:
    """A surname, or a word English rarely uses (``Pruitt``, not ``Heart``)."""
    lower = _name_key(word)
    band = lex.english_band(lower)
    return band <= 2 or band <= 4 and any(f.startswith("ln") for f in lex.flags(lower))


# Words after which an employer's name does not go on ("Microsoft as engineer").
_CLAUSE_WORD = (r"(?i:as|since|until|when|while|where|who|which|but|so|because|now|"
                r"then|part|full|time|and|or|x)")
# ``works at harford memorial``, ``works for Vista Health``, ``his business
# Genentech``, ``CEO of IBM``: where a person works, named after the verb, the
# noun or the post that says so, up to a function word or a clause's end.
_EMPLOYER = re.compile(
    r"(?<![\w/])(?i:(?:works?|working|worked|employed|employee|student|studies)"
    r"(?:[ \t]+as[ \t]+an?[ \t]+[a-z]+(?:[ \t]+[a-z]+)?)?[ \t]+(?:at|for|by)"
    r"|(?:ceo|cfo|coo|president|vice[ \t]+president|vp|owner|co-?owner|founder|"
    r"co-?founder|chairman|director|manager|partner)[ \t]+(?:of|at|for)"
    r"|(?:his|her|their|own|family|pt'?s|patient'?s)[ \t]+(?:business|company|"
    r"employer|firm|store|shop|restaurant)[ \t]*,?"
    r"|(?P<bare>employer)(?:[ \t]+is|[ \t]*[,:])?)"
    r"[ \t]+(?:(?i:the|an?)[ \t]+)?"
    rf"(?P<phi>[A-Za-z][A-Za-z&'-]+(?:[ \t]+(?:&[ \t]+)?"
    rf"(?!(?:{_FUNCTION_WORD}|{_CLAUSE_WORD})\b)[A-Za-z][A-Za-z&'-]*){{0,2}})")
# The capitalised words that open an employer's name on a line with lower case
# (``Genentech`` of ``Genentech called today``; ``Stop & Shop``).
_CAPITALISED_RUN = re.compile(
    r"[A-Z][A-Za-z&'-]*(?:[ \t]+(?:&[ \t]+)?[A-Z][A-Za-z&'-]*)*")
_EMPLOYER_FIRST_BAND = 3  # "works at home", "at night", "for a bank": words


class EmployerRecognizer(PatternRecognizer):
    """Where a person works: ``works at harford memorial``, ``CEO of IBM``.

    An employer narrows a patient down as a town does (PhysioNet marks it a
    location). The first word must be rare in English (``Genentech``,
    ``Harford``; not ``home``, ``night``, ``school``), or, capitalised on a
    line that also has lower case, a little commoner (``Microsoft``).
    """

    def __init__(self) -> None:
        super().__init__("employers", "ORGANIZATION", [
            Pattern("employer", _EMPLOYER.pattern, **_AT_WORD)], flags=0)

    def validate(self, hit: Hit, text: str) -> bool:
        """The first word reads as a name, not as a word (see the class docstring)."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        first = text[hit.start:hit.end].split()[0]
        if hit.group("bare") and not first[:1].isupper():
            return False  # "employer notified"
        titled = first[:1].isupper() and _line_has_lower(text, hit.start)
        if titled:  # the name ends where its capitals do
            hit.end = _CAPITALISED_RUN.match(text, hit.start, hit.end).end()
            if " & " in text[hit.start:hit.end]:
                return True  # Stop & Shop: two words joined, a business
        key = first.lower()
        if {"drug", "dx"} & set(lex.flags(key)):
            return False
        band = lex.english_band(key)
        return band <= _EMPLOYER_FIRST_BAND or band == 4 and titled


_UNIVERSITY = re.compile(
    r"(?<![\w'])(?:univ(?:ersity)?\.?|u\.?)(?:[ \t]*(?P<of>of)[ \t]+|[ \t]+)"
    r"(?P<place>[a-z]+)(?:[ \t]+(?P<second>[a-z]+))?(?![\w'])", re.IGNORECASE)
# Scanned as finditer finds them, faster (rules/scan.py).
_UNIVERSITY_SCAN = Scanner(_UNIVERSITY)


def _named_university(lex: Any, text: str, match: re.Match) -> bool:
    """A university named after a person or a place no list holds.

    ``University of Hudson``, ``UNIV OF DELANEY``: after the whole word
    (``univ``, ``university``) and ``of`` any word English rarely uses that is
    no drug or finding names the institution. After a bare ``U`` the word must
    be a listed name, written with a capital, with no number before the ``U``
    (``U Hudson scale``; not ``10 U Humalog``, ``U of urine``).
    """
    word = match.group("place")
    key = word.lower()
    flags = set(lex.flags(key))
    if {"drug", "dx"} & flags or lex.english_band(key) > 4:
        return False
    head = match.group(0).split(None, 1)[0].rstrip(".").lower()
    if head.startswith("univ") and match.group("of"):
        return True
    named = any(f[:2] in ("fn", "ln") for f in flags)
    before = text[max(0, match.start() - 8):match.start()]
    return (named and match.group(0)[0] == "U" and word[0].isupper()
            and lex.english_band(key) <= 3 and not re.search(r"\d[ \t]*$", before))


class UniversityRecognizer(PatternRecognizer):
    """A university named after a state, city or person: ``U of MD``, ``U Honolulu``.

    The academic medical centres patients come from; staff write them without
    a facility noun (``per U Maryland scale``). The place must be a US state
    or city by the lexicon, a state code needs the ``of`` (``u of pt``, ``U of
    urine`` and ``tell u or me`` never match), and so does a city after a
    lower-case ``u`` after a number (``10 u boston`` would be units). Other
    hospitals' universities are named after people and places no list holds
    (:func:`_named_university`).
    """

    def __init__(self) -> None:
        super().__init__("universities", "HOSPITAL", [
            Pattern("university", _UNIVERSITY.pattern, confidence=0.9)])

    def scanners(self) -> tuple[Scanner, ...]:
        """Its expression's scans and the universities' scan."""
        return (*super().scanners(), _UNIVERSITY_SCAN)

    def analyze(self, text: str) -> list[PhiSpan]:
        """A HOSPITAL span for each university whose place is a state."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        for match in _UNIVERSITY_SCAN.finditer(text):
            first = match.group("place").lower()
            second = (match.group("second") or "").lower()
            if second and any(len(parts) == 2 and "state" in flags
                              for parts, flags in lex.phrases.get((first, second), ())):
                end = match.end("second")
            elif {"state", "stab"} & set(lex.flags(first)) and (
                    match.group("of") or "state" in lex.flags(first)):
                end = match.end("place")
            elif "uscity" in lex.flags(first) and len(first) >= 4 and (
                    match.group(0)[:1] != "u" or match.group("of")
                    or not re.search(r"\d[ \t]*$", text[max(0, match.start() - 8):
                                                         match.start()])):
                end = match.end("place")  # U Honolulu, U of Miami, univ chicago
            elif _named_university(lex, text, match):
                end = match.end("place")  # University of Hudson, U Hudson
                second_word = match.group("second") or ""
                if (second_word[:1].isupper() and len(second_word) > 3
                        and lex.english_band(second.lower()) <= 3
                        and not {"drug", "dx"} & set(lex.flags(second))):
                    end = match.end("second")  # University of Notre Dame
            else:
                continue
            spans.append(PhiSpan(match.start(), end, self.label, self.source,
                                 self.patterns[0].confidence))
        return spans


_PLACE_WORD = r"[A-Z][A-Za-z'.-]*"
# After a residence cue: "Dayton, OH", "Ellicott City, Maryland", "Ohio", "New York".
_RESIDENCE_PLACE = re.compile(
    rf"(?P<city>(?:{_PLACE_WORD}[ \t]+){{0,2}}{_PLACE_WORD})[ \t]*,[ \t]*"
    r"(?P<state>[A-Z]{2}|[A-Za-z]+(?:[ \t]+[A-Za-z]+)?)(?![\w'])"
    r"|(?P<alone>[A-Za-z]+)(?:[ \t]+(?P<second>[A-Za-z]+))?(?![\w'])")
_TOWN_FLAGS = frozenset({"city", "uscity", "town"})
# A town or state code by itself after a residence cue (see _place_alone).
_PLACE_ALONE = re.compile(
    r"(?P<place>[A-Z][A-Za-z'-]+(?:[ ][A-Z][A-Za-z'-]+){0,2})(?![\w'])")
# Cues after which units, titles, people and states follow as often as towns
# (``from ED``, ``was in SR``, ``trip to see``): only a world city is read.
_WEAK_RESIDENCE_CUES = frozenset({"from", "returned", "was", "were", "been", "trip",
                                  "traveled", "travelled", "vacation", "stayed"})
_VOWELS = re.compile(r"[aeiouy]", re.IGNORECASE)


class ResidenceRecognizer(PatternRecognizer):
    """Where a person lives or comes from: ``lives in Ohio``, ``from Dayton, OH``.

    After a residence cue (``lives in``, ``from``, ``moved to``: rules.json
    ``places.residence_cues``), a state named in full (the lexicon's states,
    two-word ones too), or a town, a comma and a state (a two-letter code in
    capitals, or a name). ``from ED, MD aware`` and ``from home, PA to
    see`` fail because the town must be a listed town not common in English,
    or a word unknown to every list, and a state code is only ever taken
    after a town and a comma.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        cues = _trie(config.get("residence_cues", ("lives in", "moved to")))
        self._not_towns = frozenset(w.lower() for w in config.get("not_towns", ()))
        super().__init__("residence", "STATE", [
            Pattern("cue", rf"(?<![a-z])(?:{cues})[ \t]+(?=[a-z])", confidence=0.8)],
            prefilter=rf"(?:{cues})")

    @property
    def labels(self) -> tuple[str, ...]:
        """The town and the state."""
        return ("CITY", "STATE")

    def analyze(self, text: str) -> list[PhiSpan]:
        """CITY and STATE spans for each cue followed by a place."""
        if not self.applies(text):
            return []
        from deid_pipeline.tagger import lexicons

        lex = None
        spans = []
        confidence = self.patterns[0].confidence
        for cue in self._scanner.finditer(text):
            # The scan's whole match is its one pattern's wrapper group.
            place = _RESIDENCE_PLACE.match(text, cue.end("p0"))
            if place is None:
                continue
            lex = lex or lexicons.load()
            if place.group("city") is not None:
                state_end = _state_end(lex, place, "state")
                if state_end is None or not (
                        _reads_as_town(lex, place.group("city"))
                        or _plain_state_code(place, state_end, self._not_towns)):
                    # "moved from Nairobi, SOB and HR 124": no state after the
                    # comma, so the town is read by itself.
                    spans.extend(self._place_alone(lex, text, cue, confidence))
                    continue
                spans.append(PhiSpan(place.start("city"), place.end("city"), "CITY",
                                     self.source, confidence))
                spans.append(PhiSpan(place.start("state"), state_end, "STATE",
                                     self.source, confidence))
                continue
            state_end = _state_end(lex, place, "alone")
            if state_end is not None:
                spans.append(PhiSpan(place.start("alone"), state_end, "STATE",
                                     self.source, confidence))
            else:
                spans.extend(self._place_alone(lex, text, cue, confidence))
        return spans

    def _place_alone(self, lex: Any, text: str, cue: re.Match[str], confidence: float
                     ) -> list[PhiSpan]:
        """After ``lives in``, ``resident of``: a state code, or a town by itself.

        ``Lives in MA with husband``; ``RESIDENT OF NORTH POTOMAC``. The town
        is written with capitals and reads as a town (:func:`_reads_as_town`);
        a code is a state's in capitals. After ``from`` or ``returned to``,
        where units, titles and people follow as often (``from ED``, ``from
        PA``, ``call from Florence``), only a world city of one capitalised word
        that is no common name (:func:`_world_city_alone`: ``from Soweto,``).
        """
        place = _PLACE_ALONE.match(text, cue.end("p0"))
        if place is None:
            return []
        value = place.group("place")
        words = value.split()
        if cue.group("p0").split()[0].lower() in _WEAK_RESIDENCE_CUES:
            start = place.start("place")
            pair = " ".join(words[:2])
            if (len(words) > 1 and _listed_city(lex, pair)
                    and _CLAUSE_END.match(text, start + len(pair))):
                return [PhiSpan(start, start + len(pair), "CITY", self.source,
                                confidence)]  # "was in Guatemala City until"
            end = start + len(words[0])
            return [PhiSpan(start, end, "CITY", self.source,
                            confidence)] if _world_city_alone(
                lex, words[0], text, end, self._not_towns) else []
        if len(words[0]) == 2:  # a code, then anything ("LIVES IN NH WITH SON")
            code = words[0]
            return [PhiSpan(place.start("place"), place.start("place") + 2, "STATE",
                            self.source, confidence)] if (
                code.isupper() and "stab" in lex.flags(code.lower())) else []
        while words and not (_reads_as_town(lex, " ".join(words))
                             and not {w.lower() for w in words} & self._not_towns):
            words.pop()  # "Dorchester With" -> "Dorchester"
        if not words:
            return []
        end = place.start("place") + len(" ".join(words))
        if text[place.start("place"):end] != " ".join(words):
            return []  # words split by tabs or runs of spaces: leave to the CRF
        return [PhiSpan(place.start("place"), end, "CITY", self.source, confidence)]


# What may follow a town named by itself after ``from``: the clause ends, or
# the sentence goes on to what came with the person (``from Tokyo with fever``).
_CLAUSE_END = re.compile(r"[ \t]*(?:[,.;:)]|-[ \t]|\n|$)"
                         r"|[ \t]+(?:with|and|for|last|after|yesterday|until|when"
                         r")(?![a-z])")


def _world_city_alone(lex: Any, word: str, text: str, end: int,
                      not_towns: frozenset[str]) -> bool:
    """``from Soweto,``: a listed city of the world, where ``from`` is ambiguous.

    Capitalised in mixed case (not ``FROM OR``), listed as a city, no more
    common in English than band 4, no common first name or surname (``from
    Florence``, ``from Jackson`` may be a caller), nor a country (no PHI), a
    drug or a unit; the clause ends after it.
    """
    key = word.lower()
    flags = set(lex.flags(key))
    return (len(word) >= 4 and word[:1].isupper() and word[1:].islower()
            and "city" in flags and lex.english_band(key) <= 4
            and not flags & {"fn1", "fn2", "ln1", "drug", "dx", "country"}
            and key not in not_towns and _CLAUSE_END.match(text, end) is not None)


def _listed_city(lex: Any, pair: str) -> bool:
    """Whether two words are a city of the world as the lexicon lists it."""
    words = tuple(pair.lower().split())
    return any(parts == words and "city" in flags
               for parts, flags in lex.phrases.get(words, ()))


def _state_end(lex: Any, place: re.Match[str], group: str) -> int | None:
    """Where the state named by ``group`` (and a second word) ends; None if no state.

    A two-letter code counts only written in capitals after a town
    (``group`` "state"); a name in any case (``ohio``, ``New York``).
    """
    value = place.group(group)
    words = value.split()
    first = words[0].lower()
    second = (words[1] if len(words) > 1 else place.group("second") or "").lower()
    if second and any(len(parts) == 2 and "state" in flags
                      for parts, flags in lex.phrases.get((first, second), ())):
        return place.end(group) if len(words) > 1 else place.end("second")
    flags = set(lex.flags(first))
    if len(first) == 2:
        return place.start(group) + 2 if (
            group == "state" and value == value.upper() and "stab" in flags) else None
    return place.start(group) + len(words[0]) if "state" in flags else None


# State codes that are also English or clinical words (OR, ME, MS, CT, SC,
# NC, MD, PA): after one of them a town must read as a town by the lexicon.
_AMBIGUOUS_CODES = frozenset("""
al ar co ct de ga hi id in la ma md me mo ms mt nc ne oh ok or pa sc va wa
""".split())


def _plain_state_code(place: re.Match[str], state_end: int,
                      not_towns: frozenset[str]) -> bool:
    """``Clam Lake, WI``: a code no word shares vouches for a titled town.

    (A town of common words, ``Long Lake``, fails :func:`_reads_as_town`.)
    Units and places of a hospital (``FROM ICU, NY AWARE``: rules.json
    ``places.not_towns``) are no town.
    """
    code = place.group("state")
    words = place.group("city").split()
    return (state_end - place.start("state") == 2
            and code.lower() not in _AMBIGUOUS_CODES
            and all(len(w) >= 3 and w[0].isupper() and (w.istitle() or w.isupper())
                    and w.lower() not in not_towns for w in words))


def _reads_as_town(lex: Any, city: str) -> bool:
    """A listed town not more common as an English word, or an unknown word.

    A town of several words may be listed as a whole (``Ellicott City``).
    """
    words = tuple(w.lower().rstrip(".") for w in city.split())
    if len(words) > 1 and any(parts == words and _TOWN_FLAGS & set(flags)
                              for parts, flags in lex.phrases.get(words[:2], ())):
        return True
    last = words[-1]
    band = lex.english_band(last)
    if band == 0:
        return len(last) >= 4 and bool(_VOWELS.search(last))
    return band <= 4 and bool(_TOWN_FLAGS & set(lex.flags(last)))


# ``Parkville, MD 20999``: an address line's tail, in any case but the code's.
_ADDRESS_TAIL = re.compile(
    r"(?<![\w'])(?P<city>[A-Za-z][A-Za-z'.-]*(?:[ \t]+[A-Za-z][A-Za-z'.-]*){0,2})"
    r"(?:[ \t]*,[ \t]*|[ \t]+)(?P<state>[A-Z]{2})[ \t]+(?P<zip>\d{5}(?:-\d{4})?)"
    r"(?![\w-])")


class AddressTailRecognizer(PatternRecognizer):
    """The town, state code and ZIP code that end a US address line.

    A comma (or not: ``Dorchester MA 02124``), a state code in capitals and
    five digits (or ZIP+4) are a shape clinical text has no other use for;
    the code must be a state's (lexicon ``stab``). The town is the titled or
    capitalised words before the comma (up to three, after the street's
    comma; without a comma there must be one), and is tagged only
    when it reads as a name, not a unit (``ICU, MD 12345`` keeps ``ICU``).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._not_towns = frozenset(w.lower() for w in config.get("not_towns", ()))
        super().__init__("address", "ZIP", [
            Pattern("tail", _ADDRESS_TAIL.pattern, confidence=0.9)],
            prefilter=r"[A-Z]{2}[ \t]+\d{5}", flags=0)

    @property
    def labels(self) -> tuple[str, ...]:
        """The town, the state and the ZIP code."""
        return ("CITY", "STATE", "ZIP")

    def analyze(self, text: str) -> list[PhiSpan]:
        """CITY, STATE and ZIP spans for each address tail."""
        if not self.applies(text):
            return []
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        confidence = self.patterns[0].confidence
        for match in _ADDRESS_TAIL.finditer(text):
            if "stab" not in lex.flags(match.group("state").lower()):
                continue
            words = [w for w in match.group("city").split()]
            # The town's words: the titled or capitalised ones at the end.
            keep = len(words)
            while keep > 0 and words[keep - 1][0].isupper() \
                    and words[keep - 1].lower() not in self._not_towns:
                keep -= 1
            town = None
            if keep < len(words):
                first = words[keep]
                start = match.end("city") - len(" ".join(words[keep:]))
                if text[start:match.end("city")].split() == words[keep:] and \
                        first[0].isupper():
                    town = PhiSpan(start, match.end("city"), "CITY", self.source,
                                   confidence)
            # Without the comma only a town before the code makes it an address
            # ("given MA 12345 units" is none).
            if town is None and "," not in text[match.end("city"):match.start("state")]:
                continue
            if town is not None:
                spans.append(town)
            spans.append(PhiSpan(match.start("state"), match.end("state"), "STATE",
                                 self.source, confidence))
            spans.append(PhiSpan(match.start("zip"), match.end("zip"), "ZIP",
                                 self.source, confidence))
        return spans
