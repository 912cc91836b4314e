"""Header-dictionary detector: any known identifier of the patient in the text is PHI.

The HMS Scrubber / deid.pl idea: what the structured header says about this
patient (names, MRN, birth date, phones, ...) is PHI wherever it appears in the
narrative, whatever the model thinks. Matching works on the one tokenizer's
tokens: case-insensitive, any run of whitespace where the value has a blank,
none where it has none, and whole tokens only, so a short name part never
matches inside another word (``Lee`` is not in ``Leeds``). One pass over the
tokens with an index of first tokens: no per-document regex compilation,
however many forms the header expands into.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from deid_pipeline.detectors import Detector, TaggerConfig, register
from deid_pipeline.model import ClinicalDocument, PatientDictionary, PhiSpan
from deid_pipeline.tokenizer import Token, tokenize

# Single letters would match every article and initial in the note; initials
# are matched only when the dictionary lists them with their period ("J.").
_MIN_LENGTH = 2


@dataclass(frozen=True, slots=True)
class _Form:
    tokens: tuple[str, ...]  # lower-cased
    spaced: tuple[bool, ...]  # whitespace before token k (k >= 1)
    label: str
    field: str


def _form(value: str, label: str, field: str) -> _Form | None:
    tokens = tokenize(value)
    if not tokens or len(value.strip()) < _MIN_LENGTH:
        return None
    spaced = tuple(tokens[k].start > tokens[k - 1].end for k in range(1, len(tokens)))
    return _Form(tuple(t.text.lower() for t in tokens), spaced, label, field)


def index_dictionary(dictionary: PatientDictionary) -> dict[str, list[_Form]]:
    """First lower-cased token -> the forms starting with it, longest first."""
    seen: dict[tuple[tuple[str, ...], tuple[bool, ...], str], _Form] = {}
    for entry in dictionary.entries:
        form = _form(entry.value, entry.label, entry.field)
        if form is not None:
            seen.setdefault((form.tokens, form.spaced, form.label), form)
    index: dict[str, list[_Form]] = defaultdict(list)
    for form in seen.values():
        index[form.tokens[0]].append(form)
    for forms in index.values():
        forms.sort(key=lambda f: (-len(f.tokens), f.label, f.field))
    return index


def _matches(tokens: list[Token], lowered: list[str], i: int, form: _Form) -> bool:
    n = len(form.tokens)
    if i + n > len(tokens):
        return False
    for k in range(1, n):
        if lowered[i + k] != form.tokens[k]:
            return False
        gap = tokens[i + k].start > tokens[i + k - 1].end
        if gap != form.spaced[k - 1]:
            return False
    return True


def find_entries(text: str, dictionary: PatientDictionary) -> list[PhiSpan]:
    """Every occurrence of every dictionary form in ``text``."""
    index = index_dictionary(dictionary)
    if not index:
        return []
    tokens = tokenize(text)
    lowered = [t.text.lower() for t in tokens]
    spans = []
    for i, low in enumerate(lowered):
        for form in index.get(low, ()):
            if _matches(tokens, lowered, i, form):
                end = tokens[i + len(form.tokens) - 1].end
                spans.append(
                    PhiSpan(
                        tokens[i].start,
                        end,
                        form.label,
                        f"dictionary:{form.field}",
                        1.0,
                    )
                )
    return sorted(spans)


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
