"""Age recognizer: ages over 89 with an age word."""

from __future__ import annotations

import re
from collections.abc import Iterable

from deid_pipeline.tagger.rules.base import _G_NUM, Hit, Pattern, PatternRecognizer

_AGE_UNIT = (r"(?:y(?:ears?|rs?)?[ \t]*-?[ \t]*old|y[ \t]*/[ \t]*o|y\.[ \t]*o\.?"
             r"|yo[mf]?|y(?:ears?|rs?)[ \t]+of[ \t]+age)(?![a-z])")
_LEADING_DIGITS = re.compile(r"\d+")
_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)(?![a-z])"
# Who an age without an age word can be said of (``she is 97 and wants DNR``):
# a pronoun, the patient or a relative. Not a measure (``pt is 100cc
# negative``, ``HR is 97``): the number ends the clause.
_AGE_SUBJECT = (r"(?:he|she|pt|patient|mother|mom|father|dad|husband|wife|"
                r"grand(?:mother|father|ma|pa)|sister|brother|aunt|uncle)")
# Or a person by first name (``Ruth is 97 and wants DNR``): a common first
# name in title case, never a measure's word (``Sat is 97``, ``Temp is 97``:
# not common first names; ``Glucose``: a clinical word).
_NAMED_SUBJECT_FLAGS = frozenset({"fn1"})
_NOT_NAMED_SUBJECT_FLAGS = frozenset({"drug", "dx"})
# A possessive before a number and F makes it a person (``her 95F``) unless a
# fever word follows (``his 101F fever``).
_POSSESSIVE_BEFORE = re.compile(r"(?<![a-z])(?:her|his|their|our|my)[ \t]+$",
                                re.IGNORECASE)
_FEVER_AFTER = re.compile(r"[ \t]*(?:fever|temp|temperature|degrees|orally|po|ax)"
                          r"(?![a-z])", re.IGNORECASE)
# A body temperature in Fahrenheit, never read as an age with the letter F.
FAHRENHEIT_LOW, FAHRENHEIT_HIGH = 94, 108
_CLAUSE_END = (r"(?=[ \t]*(?:[,;!?)\r\n]|\.(?!\d)|$"
               r"|(?:and|but|now|today|tomorrow|last|who|with)(?![a-z])))")
# How an age is said of its subject (``she is 97``, ``pt turns 95 tomorrow``,
# ``she is now 96``; not ``pt now 94,``: a saturation as often).
_AGE_VERB = r"(?:is|turns|turned|will[ \t]+be)(?:[ \t]+now)?"


class AgeRecognizer(PatternRecognizer):
    """Ages over 89, the only ages HIPAA Safe Harbor requires removing.

    An age needs an age word: ``92 yo``, ``95-year-old``, ``aged 91``,
    ``age: 103``, ``in her 90s``, and ``90+ y/o``, the form HIPAA's own
    aggregation and de-identified exports write (the ``+`` goes with it);
    or a person said to be it, the number ending the clause (``she is 97 and
    wants DNR``, ``mother is 94.``, ``Ruth is 97.``), or a number right after a
    titled name (``mrs o'connor 98 wants``, ``Mr. Katz 93, DNR``), or with the
    sex letter (``Przybylski 91F``; not ``T 101F``), or opening a line
    before ``s/p`` (``98 s/p left hip fx``).
    ``BP in the 90s`` is not an age, and ``aged 91 days`` is not over 89 years.
    In words: ``a ninety-two year old``, ``one hundred and one yo``; turning
    it (``pt turns 95 tomorrow``), a birthday's ordinal (``her 100th birthday``).
    """

    def __init__(self, units: Iterable[str] = ()) -> None:
        """Build the age patterns."""
        words = {"guard": r"(?<![a-z])(?=[ai])"}
        patterns = [
            Pattern("unit",
                    rf"(?<![\w./-])(?P<phi>\d{{2,3}}\+?)[ \t]*-?[ \t]*{_AGE_UNIT}",
                    check_negative=False, guard=_G_NUM),
            Pattern("keyword", r"(?<![a-z])age(?:d|[ \t]+of)?[ \t]*[:=]?[ \t]*"
                               r"(?P<phi>\d{2,3}\+?)(?!\w|\.\d|[ \t]*%)", **words),
            Pattern("subject", rf"(?<![a-z]){_AGE_SUBJECT}[ \t]+{_AGE_VERB}[ \t]+"
                               rf"(?P<phi>\d{{2,3}}){_CLAUSE_END}",
                    guard=r"(?<![a-z])(?=[abdfghmpsuw])"),
            # Right after a titled name, no age word ("mrs o'connor 98 wants to
            # stop her meds", "Mr. Katz 93, DNR"): what else a bare number
            # there says of a person is a unit's (negative_after) or a %.
            Pattern("titled", r"(?<![a-z])(?:mr|mrs|ms|miss)\.?[ \t]+(?:[od]'[ \t]?)?"
                              r"[a-z]{2,}(?:-[a-z]+)?[ \t]*,?[ \t]+"
                              r"(?P<phi>\d{2,3})(?!\w|\.\d|[ \t]*%)",
                    guard=r"(?<![a-z])(?=m)", requires=("mr", "ms", "miss")),
            # With the sex letter alone ("Przybylski 91F", "a 93 M with"):
            # never 94F-108F, a temperature in Fahrenheit.
            Pattern("sexed", r"(?<![\w./-])(?P<phi>\d{2,3})[ \t]?(?-i:(?P<sex>[MF]))"
                             r"(?![A-Za-z0-9])", check_negative=False, guard=_G_NUM),
            # Opening a line, the patient's age and history at once ("98 s/p
            # left hip fx"); inside a line a number before s/p is a measure's
            # (``sats 98 s/p suctioning``).
            Pattern("opening", r"(?<![^\n])[ \t]*(?P<phi>\d{2,3}\+?)[ \t]+s/p(?![a-z])",
                    check_negative=False, requires=("s/p",)),
            # In words ("a ninety-two year old man", "one hundred and one yo").
            Pattern("spelled", rf"(?<![a-z])(?P<phi>ninety(?:[- \t]{_ONES})?"
                               rf"|(?:one[ \t]+)?hundred(?:[ \t]+and)?"
                               rf"(?:[- \t]{_ONES})?)[ \t]*-?[ \t]*{_AGE_UNIT}",
                    check_negative=False, guard=r"(?<![a-z])(?=[hno])",
                    requires=("ninety", "hundred")),
            # A birthday's ordinal ("her 100th birthday").
            Pattern("birthday", r"(?<![\w./-])(?P<phi>\d{2,3}(?:st|nd|rd|th))[ \t]+"
                                r"birthday(?![a-z])", check_negative=False,
                    guard=_G_NUM, requires=("birthday",)),
            Pattern("named_subject",
                    r"(?<![\w.'\u2019-])(?P<subj>[a-z]{2,15})[ \t]+is[ \t]+"
                    rf"(?P<phi>\d{{2,3}}){_CLAUSE_END}", requires=(" is ",)),
            Pattern("decade", r"(?<![a-z])(?:in[ \t]+(?:his|her|their)|aged?[ \t]+"
                              r"(?:in[ \t]+(?:his|her|their|the)[ \t]+)?)[ \t]*"
                              r"(?:(?:early|mid|late)[ \t]*-?[ \t]*)?"
                              r"(?P<phi>(?:90|100)'?s)(?!\w)", confidence=0.9,
                    check_negative=False, **words),
        ]
        super().__init__("age", "AGE", patterns, negative_after=[
            *units, "months", "month", "mo", "mos", "yrs ago", "years ago"])

    def validate(self, hit: Hit, text: str) -> bool:
        """Keep only ages 90 to 125 (older is a typo or not an age)."""
        if hit.pattern.name == "spelled":
            return True  # ninety and up by its words
        digits = _LEADING_DIGITS.match(text, hit.start, hit.end)
        if digits is None or not 90 <= int(digits.group()) <= 125:
            return False
        if hit.pattern.name == "sexed" and hit.group("sex") == "F" and (
                FAHRENHEIT_LOW <= int(digits.group()) <= FAHRENHEIT_HIGH):
            # "take her 95F with NSTEMI": after a possessive, a person.
            return (_POSSESSIVE_BEFORE.search(text, max(0, hit.start - 8), hit.start)
                    is not None and _FEVER_AFTER.match(text, hit.whole[1]) is None)
        return hit.pattern.name != "named_subject" or _is_first_name(hit.group("subj"))


def _is_first_name(word: str | None) -> bool:
    """A common first name in title case that is no clinical word."""
    from deid_pipeline.tagger import lexicons

    if not word or not (word[0].isupper() and word[1:].islower()):
        return False
    flags = set(lexicons.load().flags(word.lower()))
    return bool(flags & _NAMED_SUBJECT_FLAGS) and not flags & _NOT_NAMED_SUBJECT_FLAGS
