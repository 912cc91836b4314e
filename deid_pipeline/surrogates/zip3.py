"""Safe Harbor's rule for the first three digits of a ZIP code.

45 CFR 164.514(b)(2)(i)(B) lets a de-identified record keep the initial three
digits of a ZIP code only if the geographic unit formed by all ZIP codes with
those three digits holds more than 20,000 people; otherwise they become 000.

Source of the list below: U.S. Department of Health and Human Services, Office
for Civil Rights, "Guidance Regarding Methods for De-identification of Protected
Health Information in Accordance with the HIPAA Privacy Rule" (26 Nov 2012),
Safe Harbor guidance on ZIP codes, which names the 17 restricted three-digit
ZIP codes computed from 2000 Census data. HHS says the list must follow the
"currently publicly available" Census data; update it here if HHS publishes a
newer one.
"""

from __future__ import annotations

from deid_pipeline.tokenizer import is_digits

RESTRICTED_ZIP3: frozenset[str] = frozenset({
    "036", "059", "063", "102", "203", "556", "692", "790", "821",
    "823", "830", "831", "878", "879", "884", "890", "893",
})


def safe_harbor_zip3(zip3: str) -> str:
    """``zip3`` itself, or ``000`` if its area has 20,000 people or fewer."""
    if len(zip3) != 3 or not is_digits(zip3):
        raise ValueError("a ZIP3 is exactly three digits")
    return "000" if zip3 in RESTRICTED_ZIP3 else zip3
