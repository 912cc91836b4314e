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
from collections import defaultdict
from collections.abc import Container, Iterator
from dataclasses import dataclass

from deid_pipeline.detectors import Detector, TaggerConfig, register
from deid_pipeline.model import ClinicalDocument, PatientDictionary, PhiSpan
from deid_pipeline.tokenizer import token_spans

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
    on its own), and a form is dropped at its first unknown token.
    """
    entries = [e for e in dictionary.entries if len(e.value.strip()) >= _MIN_LENGTH]
    if vocabulary is not None:
        entries = [e for e in entries if _may_occur(e.value, vocabulary)]
    joined = "\n".join(e.value for e in entries)
    # ASCII lower-casing is per character, so one call serves every token.
    lowered = joined.lower() if joined.isascii() else None
    spans = token_spans(joined)
    starts = [a for a, _ in spans]
    offset = 0
    first = 0
    for entry in entries:
        end = offset + len(entry.value)
        after = bisect.bisect_left(starts, end, first)
        tokens = []
        for k in range(first, after):
            a, b = spans[k]
            token = lowered[a:b] if lowered is not None else joined[a:b].lower()
            if vocabulary is not None and token not in vocabulary:
                break
            tokens.append(token)
        else:
            if tokens:
                spaced = tuple(spans[k][0] > spans[k - 1][1]
                               for k in range(first + 1, after))
                yield _Form(tuple(tokens), spaced, entry.label, entry.field)
        offset, first = end + 1, after


def _may_occur(value: str, vocabulary: Container[str]) -> bool:
    """False when a word of ``value`` is a token missing from ``vocabulary``.

    An ASCII word of letters only, or of digits only, is one token, so this
    drops most forms before the tokenizer sees them; the others are decided
    token by token in :func:`_forms`, as before.
    """
    if not value.isascii():
        return True
    return all(word in vocabulary for word in value.lower().split()
               if word.isalpha() or word.isdigit())


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
        if doc.dictionary is None or not doc.dictionary.entries:
            return ()
        return tuple(find_entries(doc.text, doc.dictionary))


@register("dictionary")
def _make_dictionary(config: TaggerConfig) -> Detector:
    return DictionaryDetector()
