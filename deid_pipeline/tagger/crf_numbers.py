"""The CRF's token decisions on numbers the bias alone made PHI.

At a recall bias the model marks the numbers of a note it is least sure of:
fractions (vent settings, pain scores), ages under Safe Harbor's line and
readings in runs of values. A number the best path calls PHI always stays;
these rules unmark only what the bias added and cannot be the value.
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_pipeline.tagger.bio import OUTSIDE, marked
from deid_pipeline.tokenizer import Token, is_digits

__all__ = ["drop_bias_only_numbers"]


def drop_bias_only_numbers(tokens: Sequence[Token], kinds: list[str | None],
                           viterbi: Sequence[str]) -> None:
    """Apply the number rules below, in order, to ``kinds``."""
    _drop_bias_only_fractions(tokens, kinds, viterbi)
    _drop_bias_only_young_ages(tokens, kinds, viterbi)
    _drop_bias_only_impossible_numbers(tokens, kinds, viterbi)
    _drop_bias_only_loose_zips(tokens, kinds, viterbi)


def _drop_bias_only_loose_zips(tokens: Sequence[Token], kinds: list[str | None],
                               viterbi: Sequence[str]) -> None:
    """Unmark a ZIP code only the bias marked that follows no marked place.

    A ZIP code ends an address: a state, town or street is written before it
    (``Lowell, MA 01852``). Five digits after anything else are a reading
    (``CK 60000``). A ZIP on the best path stays.
    """
    for t in marked(kinds):
        kind = kinds[t]
        if kind != "ZIP" or viterbi[t] != OUTSIDE or not is_digits(tokens[t].text):
            continue
        k = t - 1
        if k >= 0 and tokens[k].text in (",", "-"):  # "MA, 01852", "01852-1234"
            k -= 1
        if k < 0 or kinds[k] is None:
            kinds[t] = None


def _fraction_run(tokens: Sequence[Token], t: int) -> tuple[int, int]:
    """The tokens around t joined without blanks that are digits or ``/``.

    At most three tokens each way: callers only ask whether the run is three
    tokens long, and a hostile run of thousands must not cost n² steps.
    """
    lo = hi = t
    while lo > max(t - 3, 0) and tokens[lo - 1].end == tokens[lo].start and (
            is_digits(tokens[lo - 1].text) or tokens[lo - 1].text == "/"):
        lo -= 1
    last = min(t + 3, len(tokens) - 1)
    while hi < last and tokens[hi].end == tokens[hi + 1].start and (
            is_digits(tokens[hi + 1].text) or tokens[hi + 1].text == "/"):
        hi += 1
    return lo, hi


def _drop_bias_only_fractions(tokens: Sequence[Token], kinds: list[str | None],
                              viterbi: Sequence[str]) -> None:
    """Unmark year-less ``5/5``, ``3/10`` that only a negative bias made dates.

    Such fractions are vent settings, pain scores and strengths far more
    often than dates; the rules find the dated ones by their context words,
    and the model still marks those its best path calls dates.
    """
    for t in marked(kinds):
        kind = kinds[t]
        if kind != "DATE" or viterbi[t] != OUTSIDE or not is_digits(tokens[t].text):
            continue
        lo, hi = _fraction_run(tokens, t)
        if hi - lo == 2 and tokens[lo + 1].text == "/" and all(
                len(tokens[i].text) <= 2 for i in (lo, hi)):
            kinds[t] = None


# Safe Harbor's line: an age under it is no PHI (rules/ages.py).
_OLDEST_KEPT_AGE = 89


def _drop_bias_only_young_ages(tokens: Sequence[Token], kinds: list[str | None],
                               viterbi: Sequence[str]) -> None:
    """Unmark ages under 90 that only a negative bias made AGE (``a 69 yr old``).

    The model's AGE is an age over 89, as its gold and the rules have it; at a
    recall bias it also marks the ages every note states, with a confidence
    near 0.1. An age its best path calls AGE stays (a site's model trained
    on every age marks them so).
    """
    for t in marked(kinds):
        kind = kinds[t]
        if (kind == "AGE" and viterbi[t] == OUTSIDE and is_digits(tokens[t].text)
                and int(tokens[t].text) <= _OLDEST_KEPT_AGE):
            kinds[t] = None


_NUMBER_SEPARATORS = frozenset("/.-")
# How far a run of numbers is followed each way (a hostile run of thousands
# of digits and slashes must not cost n² steps).
_NUMBER_RUN_REACH = 8
# An age above this is a value of something else (``CO/CI/SVR 5.5/2.64/902``).
_OLDEST_AGE = 125


def _number_run(tokens: Sequence[Token], t: int) -> tuple[int, int]:
    """The tokens around t joined without blanks that are digits or ``/ . -``."""
    def numeric(i: int) -> bool:
        return is_digits(tokens[i].text) or tokens[i].text in _NUMBER_SEPARATORS

    lo = hi = t
    while (lo > max(t - _NUMBER_RUN_REACH, 0) and tokens[lo - 1].end == tokens[lo].start
           and numeric(lo - 1)):
        lo -= 1
    last = min(t + _NUMBER_RUN_REACH, len(tokens) - 1)
    while hi < last and tokens[hi].end == tokens[hi + 1].start and numeric(hi + 1):
        hi += 1
    return lo, hi


def _could_be_date(groups: Sequence[str]) -> bool:
    """Whether digit groups joined by ``/ . -`` can be written for a date.

    Three digits alone are no date; four are a year (1900-2099) or a
    month and day; a run of three groups or more ends in a day, a
    two-digit year or a year (``3/2/1500``, ``5.5/2.64/902`` are readings).
    """
    if len(groups) == 1:
        group = groups[0]
        if len(group) == 3:
            return False
        if len(group) == 4:
            month, day = int(group[:2]), int(group[2:])
            return 1900 <= int(group) <= 2099 or (1 <= month <= 12 and 1 <= day <= 31)
        return True
    last = groups[-1]
    return not (len(groups) >= 3 and (
        len(last) == 3 or len(last) == 4 and not 1900 <= int(last) <= 2099))


def _drop_bias_only_impossible_numbers(tokens: Sequence[Token], kinds: list[str | None],
                                       viterbi: Sequence[str]) -> None:
    """Unmark numbers that only the bias marked and that cannot be the value.

    At a recall bias the model marks readings in runs of values as dates or
    ages (``CPK 5600``, ``SVR 902``). A date's digits must be writable as a
    date, and an age is at most 125. A number the best path calls PHI stays.
    Phone numbers are left alone: a pager or an extension has four digits.
    """
    for t in marked(kinds):
        kind = kinds[t]
        if (kind not in ("DATE", "AGE") or viterbi[t] != OUTSIDE
                or not is_digits(tokens[t].text)):
            continue
        lo, hi = _number_run(tokens, t)
        groups = [tokens[i].text for i in range(lo, hi + 1)
                  if is_digits(tokens[i].text)]
        if (not _could_be_date(groups) if kind == "DATE"
                else int(tokens[t].text) > _OLDEST_AGE):
            for i in range(lo, hi + 1):
                if kinds[i] == kind and viterbi[i] == OUTSIDE:
                    kinds[i] = None
