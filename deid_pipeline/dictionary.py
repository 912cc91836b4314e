"""Header-dictionary detector: any known identifier of the patient in the text is PHI.

The HMS Scrubber / deid.pl idea: what the structured header says about this
patient (names, MRN, birth date, phones, ...) is PHI wherever it appears in the
narrative, whatever the model thinks. Matching is case-insensitive and
tolerant of whitespace runs, and anchored at word boundaries so a short name
part never matches inside another word.
"""

from __future__ import annotations

import re

from deid_pipeline.detectors import Detector, TaggerConfig, register
from deid_pipeline.model import ClinicalDocument, PatientDictionary, PhiSpan

# Single letters would match every article and initial in the note; initials
# are matched only when the dictionary lists them with their period ("J.").
_MIN_LENGTH = 2


def _pattern_for(value: str) -> str:
    parts = [re.escape(p) for p in value.split()]
    body = r"\s+".join(parts)
    # \b only where the value starts/ends with a word character.
    left = r"(?<!\w)" if value[:1].isalnum() else ""
    right = r"(?!\w)" if value[-1:].isalnum() else ""
    return left + body + right


def compile_dictionary(
    dictionary: PatientDictionary,
) -> list[tuple[re.Pattern, str, str]]:
    """One case-insensitive pattern per distinct (value, label), longest first."""
    seen: dict[tuple[str, str], str] = {}
    for entry in dictionary.entries:
        value = " ".join(entry.value.split())
        if len(value) < _MIN_LENGTH:
            continue
        seen.setdefault((value.lower(), entry.label), entry.field)
    ordered = sorted(seen.items(), key=lambda kv: -len(kv[0][0]))
    return [
        (re.compile(_pattern_for(value), re.IGNORECASE), label, fld)
        for (value, label), fld in ordered
    ]


class DictionaryDetector(Detector):
    """Marks every occurrence of a header identifier in the document's narrative."""

    name = "dictionary"
    labels = ()  # whatever labels the header entries carry
    version = "1"

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        if doc.dictionary is None or not doc.dictionary.entries:
            return ()
        spans = []
        for pattern, label, fld in compile_dictionary(doc.dictionary):
            for m in pattern.finditer(doc.text):
                spans.append(
                    PhiSpan(m.start(), m.end(), label, f"dictionary:{fld}", 1.0)
                )
        return tuple(sorted(spans))


@register("dictionary")
def _make_dictionary(config: TaggerConfig) -> Detector:
    return DictionaryDetector()
