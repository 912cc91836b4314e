"""Header-dictionary detector: any known identifier of the patient in the text is PHI.

The HMS Scrubber / deid.pl idea: what the structured header says about this
patient (names, MRN, birth date, phones, ...) is PHI wherever it appears in the
narrative, whatever the model thinks. Matching works on the one tokenizer's
tokens: case-insensitive, any run of whitespace where the value has a blank,
none where it has none, and whole tokens only, so a short name part never
matches inside another word (``Lee`` is not in ``Leeds``). One pass over the
tokens with an index of first tokens: no per-document regex compilation,
however many forms the header expands into, and only the forms whose every
token occurs in the text are indexed at all.
"""

from __future__ import annotations

import bisect
import operator
from collections import defaultdict
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass

from deid_pipeline.model import (
    ClinicalDocument,
    PatientDictionary,
    PhiSpan,
)
from deid_pipeline.tagger.detection import Detector, TaggerConfig
from deid_pipeline.tokenizer import is_digits, token_spans

# Single letters would match every article and initial in the note; initials
# are matched only when the dictionary lists them with their period ("J.").
_MIN_LENGTH = 2


@dataclass(frozen=True, slots=True)
class _Form:
    tokens: tuple[str, ...]  # lower-cased
    spaced: tuple[bool, ...]  # whitespace before token k (k >= 1)
    label: str
    field: str


def _forms(dictionary: PatientDictionary,
           vocabulary: Container[str] | None = None) -> Iterator[_Form]:
    """The entries long enough to search for, as tokens, in entry order.

    With ``vocabulary`` (the lower-cased tokens of a text), only the forms
    whose every token is in it, the only ones that can match that text: a
    header expands into hundreds of forms per report, and a dozen or so
    survive. All values are tokenized in one call over the values joined by
    line breaks (no token spans whitespace, so each value is cut exactly as
    on its own).
    """
    values = dictionary.values  # the columns: no entry object is made
    if vocabulary is None:
        rows = [i for i, value in enumerate(values)
                if len(value.strip()) >= _MIN_LENGTH]
    else:
        rows = _possible_rows(values, vocabulary)
    joined = "\n".join([values[i] for i in rows])
    spans = token_spans(joined)
    starts = [a for a, _ in spans]
    ends = [b for _, b in spans]
    if joined.isascii():  # ASCII lower-casing is per character: one call serves all
        lowered = joined.lower()
        tokens = tuple([lowered[a:b] for a, b in spans])
    else:
        tokens = tuple([joined[a:b].lower() for a, b in spans])
    known = None if vocabulary is None else vocabulary.__contains__
    offset = 0
    first = 0
    labels, fields = dictionary.labels, dictionary.fields
    for i in rows:
        end = offset + len(values[i])
        after = bisect.bisect_left(starts, end, first)
        if after > first and (known is None
                              or all(map(known, tokens[first:after]))):
            # Whitespace before token k: it starts after token k - 1 ends.
            spaced = tuple(map(operator.gt, starts[first + 1:after],
                               ends[first:after - 1]))
            yield _Form(tokens[first:after], spaced, labels[i], fields[i])
        offset, first = end + 1, after


# Every ASCII character but letters, digits and the line break, as a blank:
# what is left of an ASCII value are its letter and digit runs.
_WORD_BREAKS = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) != "\n"}


def _may_occur(value: str, vocabulary: Container[str]) -> bool:
    """False when a letter or digit run of ``value`` is missing from ``vocabulary``.

    In an ASCII value, a maximal run of letters, or of digits, between other
    characters is one token (``06/28/1979``: ``06``, ``28``, ``1979``), so
    this drops most forms before the tokenizer sees them; the others are
    decided token by token in :func:`_forms`. A run of letters and digits
    (``mrn12345``, several tokens) is not looked at here.
    """
    if not value.isascii():
        return True
    return all(word in vocabulary
               for word in value.lower().translate(_WORD_BREAKS).split()
               if word.isalpha() or is_digits(word))


def _possible_rows(values: Sequence[str], vocabulary: Container[str]) -> list[int]:
    """The rows whose values are long enough and :func:`_may_occur` in ``vocabulary``.

    The same test as :func:`_may_occur` per entry, done for all entries at
    once: a message's dictionary has ~300 entries per report, and calling
    it per entry costs about as much as the tokenizing it saves. All values
    are lower-cased and cut into runs in one call each
    (joined by line breaks, which the cut keeps); the runs that are one
    token and not in ``vocabulary`` are the *missing* words, and an ASCII
    entry may occur iff none of its runs is missing. A value with a line
    break of its own would misalign the lines: then each entry is tested
    on its own.
    """
    joined = "\n".join(values)
    cut = joined.lower().translate(_WORD_BREAKS)
    lines = cut.split("\n")
    if len(lines) != len(values):
        return [i for i, value in enumerate(values) if len(value.strip()) >= _MIN_LENGTH
                and _may_occur(value, vocabulary)]
    unknown = set(cut.split())
    if isinstance(vocabulary, (set, frozenset)):
        unknown.difference_update(vocabulary)
    else:
        unknown = {w for w in unknown if w not in vocabulary}
    missing = set(filter(str.isalpha, unknown))
    missing.update(filter(str.isdigit, unknown))
    # Each line's words are made and dropped at once: holding a list per
    # entry would cost more in garbage collection than it saves.
    if joined.isascii():
        return [i for i, (value, line) in enumerate(zip(values, lines, strict=True))
                if missing.isdisjoint(line.split())
                and len(value.strip()) >= _MIN_LENGTH]
    # _may_occur keeps every non-ASCII value (it is decided token by token); a
    # non-ASCII value's line may hold words of any script, which no ASCII
    # value has, so the missing words stay right for the others.
    return [i for i, (value, line) in enumerate(zip(values, lines, strict=True))
            if len(value.strip()) >= _MIN_LENGTH
            and (not value.isascii() or missing.isdisjoint(line.split()))]


def index_dictionary(dictionary: PatientDictionary,
                     vocabulary: Container[str] | None = None,
                     ) -> dict[str, list[_Form]]:
    """First lower-cased token -> the forms starting with it, longest first.

    ``vocabulary`` leaves out the forms that cannot occur in a text with
    those tokens (see :func:`_forms`); the others are indexed as without it.
    """
    seen: dict[tuple[tuple[str, ...], tuple[bool, ...], str], _Form] = {}
    for form in _forms(dictionary, vocabulary):
        seen.setdefault((form.tokens, form.spaced, form.label), form)
    index: dict[str, list[_Form]] = defaultdict(list)
    for form in seen.values():
        index[form.tokens[0]].append(form)
    for forms in index.values():
        forms.sort(key=lambda f: (-len(f.tokens), f.label, f.field))
    return index


def _matches(spans: list[tuple[int, int]], lowered: list[str], i: int,
             form: _Form) -> bool:
    n = len(form.tokens)
    if i + n > len(spans):
        return False
    for k in range(1, n):
        if lowered[i + k] != form.tokens[k]:
            return False
        gap = spans[i + k][0] > spans[i + k - 1][1]
        if gap != form.spaced[k - 1]:
            return False
    return True


def find_entries(text: str, dictionary: PatientDictionary) -> list[PhiSpan]:
    """Every occurrence of every dictionary form in ``text``."""
    spans = token_spans(text)
    if text.isascii():  # ASCII lower-casing is per character: one call serves all
        low = text.lower()
        lowered = [low[a:b] for a, b in spans]
    else:  # a token is lower-cased on its own, as a value's token is in _forms
        lowered = [text[a:b].lower() for a, b in spans]
    index = index_dictionary(dictionary, frozenset(lowered))
    if not index:
        return []
    found = []
    for i, low in enumerate(lowered):
        for form in index.get(low, ()):
            if _matches(spans, lowered, i, form):
                end = spans[i + len(form.tokens) - 1][1]
                found.append(
                    PhiSpan(
                        spans[i][0],
                        end,
                        form.label,
                        f"dictionary:{form.field}",
                        1.0,
                    )
                )
    return sorted(found)


class DictionaryDetector(Detector):
    """Marks every occurrence of a header identifier in the document's narrative."""

    name = "dictionary"
    labels = ()  # whatever labels the header entries carry
    version = "2"

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        if doc.dictionary is None or not doc.dictionary.values:
            return ()
        return tuple(find_entries(doc.text, doc.dictionary))


def from_config(config: TaggerConfig) -> Detector:
    """The detector ``config`` asks for (the registry's ``dictionary``)."""
    return DictionaryDetector()
