"""Header-field recognizers: the patient's name after ``Patient:`` in a report."""

from __future__ import annotations

import re

from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer

_PART = r"(?:[A-Z][A-Za-z'\u2019-]+|[A-Z]\.)"
# The field's label at a line start, or after a gap of blanks in a header row
# ("Date: 1/2/03   Patient: ..."), then one to three name parts, and an
# optional comma and first name ("Brown, Edward").
_LABEL = (r"(?:^|(?<=[ \t]{2})|(?<=[.;][ \t]))[ \t]*"
          r"(?i:patient(?:[ \t]+name)?|pt(?:[ \t]+name)?|name)[ \t]*:[ \t]*")
_VALUE = (rf"(?P<phi>{_PART}(?:[ \t]+{_PART}){{0,2}}"
          rf"(?:[ \t]*,[ \t]*{_PART}(?:[ \t]+{_PART})?)?)")
# What ends a header field's value: a gap, a line end, a bracket, or the next
# field of the row (", DOB 1/2/45", ". MRN 123").
_END = (r"(?=[ \t]{2,}|[ \t]*(?:\r?\n|$)|[ \t]*\(|[.,;]?[ \t]*"
        r"(?i:dob|d\.o\.b|date[ \t]+of[ \t]+birth|age|mrn|record|med[ \t]+rec)\b"
        r"|[.,;][ \t]*(?:\r?\n|$))")


class PatientFieldRecognizer(PatternRecognizer):
    """``Patient: Brown, DOB ...``, ``Pt: Wu, Edward   VJ489734``: a report's header.

    Reports, letters and imaging headers name the patient in a labelled
    field; the surname is often a common word (``Brown``, ``Snow``,
    ``Cross``) that no name rule would take alone. The value must end where a
    header field ends (two blanks, a line end, a bracket or the next field:
    ``, DOB``), be written in capitals or title case, and each word be a
    listed first name or surname or an initial: ``Pt: Alert and oriented``,
    ``Patient: Afebrile`` and ``Name: Unknown`` are no names.
    """

    def __init__(self) -> None:
        super().__init__("patient_field", "PATIENT", [
            Pattern("field", _LABEL + _VALUE + _END, confidence=0.9)],
            prefilter=r"(?i)(?:patient|pt|name)[ \t]*:", flags=re.MULTILINE)

    def validate(self, hit: Hit, text: str) -> bool:
        """Every word a listed name or an initial (see above)."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        words = re.findall(r"[A-Za-z'\u2019-]+", text[hit.start:hit.end])
        return all(_reads_as_name_part(lex, w) for w in words)


def _reads_as_name_part(lex, word: str) -> bool:
    """A listed name (any band: ``Brown``) or an initial.

    Not a word unknown to the lists: findings are (``Afebrile``,
    ``Tachycardic``, ``Ambulating``).
    """
    if len(word) == 1:
        return True
    key = word.lower().split("-")[0].strip("'\u2019")
    flags = lex.flags(key)
    return any(f[:2] in ("fn", "ln") for f in flags)
