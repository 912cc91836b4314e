"""Numbers and codes: phones, fax, SSNs and every other identifier.

All keep the original's length and character classes (digit for digit, letter
for letter in the same case, punctuation and spaces where they were) and are
never equal to the original. They are keyed on the letters and digits alone,
so ``123-45-6789`` and ``123456789`` get the same surrogate digits.
"""

from __future__ import annotations

import random
import re

from deid_pipeline.surrogates.base import SurrogateGenerator
from deid_pipeline.surrogates.keyed import SurrogateContext, SurrogateError, seed_of
from deid_pipeline.surrogates.text import has_alnum, random_like, redraw, refuse_words


def _rng(ctx: SurrogateContext, label: str, value: str) -> random.Random:
    return random.Random(seed_of(ctx.key, ctx.person_id, label, id_key(value)))


# Words that name the identifier rather than being part of it ("MRN 0012-34").
# Only words of 3+ letters: a 2-letter run ("NO", "ID") may be part of a plate.
ID_WORDS = frozenset({"mrn", "acct", "account", "ssn", "number", "record", "member",
                      "policy", "license", "plate", "serial", "accession", "specimen",
                      "device", "vin"})
_ID_TOKENS = re.compile(r"[^\W\d_]+|[^a-zA-Z]+")


def shape_like(value: str, rng: random.Random) -> str:
    """``random_like`` that keeps words naming the ID (``MRN``, ``Acct``)."""
    return "".join(t if t.casefold() in ID_WORDS else random_like(t, rng)
                   for t in _ID_TOKENS.findall(value))


def id_key(value: str) -> str:
    """Letters and digits only, upper case, without words like ``MRN``.

    That is what two spellings of one ID share (``MRN 0012-34``, ``001234``).
    """
    return "".join(c for t in _ID_TOKENS.findall(value) if t.casefold() not in ID_WORDS
                   for c in t if c.isalnum()).upper()


def _fill_digits(value: str, digits: str) -> str:
    """Write ``digits`` into the digit positions of ``value``, in order."""
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in value)


class IdentifierGenerator(SurrogateGenerator):
    """Same shape, new characters: for MRNs, accounts, licences, plates, ..."""

    labels = ("MEDICALRECORD", "ACCOUNT", "LICENSE", "HEALTHPLAN", "IDNUM", "DEVICE",
              "BIOID", "VEHICLE")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return a random value of the same shape, different from ``value``."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: no letter or digit to replace")
        rng = _rng(ctx, label, value)
        return redraw(lambda: shape_like(value, rng), value, label)


_SSN_WORDS = frozenset({"ssn", "no", "xxx", "xx"})


class SsnGenerator(SurrogateGenerator):
    """SSNs in a never-issued range: area 900-999 (area 000, 666 and 9xx are unissued).

    The 9xx areas are used for ITINs, never for SSNs, so a surrogate can never
    be somebody's real SSN. Group and serial are never 00 / 0000, as in real ones.
    """

    labels = ("SSN",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Nine digits in the original layout; other lengths fall back to shape."""
        if sum(c.isdigit() for c in value) != 9:
            return _SHAPE.generate(value, label, ctx)
        refuse_words(value, _SSN_WORDS, label)  # the layout keeps all but digits
        rng = _rng(ctx, label, value)

        def make() -> str:
            digits = (f"{rng.randint(900, 999)}{rng.randint(1, 99):02d}"
                      f"{rng.randint(1, 9999):04d}")
            return _fill_digits(value, digits)

        return redraw(make, value, label)


_SHAPE = IdentifierGenerator()


class PhoneGenerator(SurrogateGenerator):
    """North American numbers as ``NPA-555-01XX``, the range reserved for fiction.

    NANP reserves 555-0100 to 555-0199 for fictional use in every area code;
    the area code is a plausible one (2-9, then not 9, not N11). The 10 digits
    of a number (after a leading ``1``) get that shape; an extension or any
    other digit is replaced digit for digit; numbers of fewer than 7 digits
    (extensions, pagers) are replaced digit for digit with no leading zero.
    """

    labels = ("PHONE", "FAX")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep punctuation and digit count; write fictitious NANP digits."""
        digits = [c for c in value if c.isdigit()]
        if not digits:
            return _SHAPE.generate(value, label, ctx)
        rng = _rng(ctx, label, value)
        n = len(digits)
        lead = value.lstrip()
        international = lead.startswith("+") and not lead.startswith("+1")

        def make() -> str:
            out: list[str] = []
            rest = n
            if not international and n >= 11 and digits[0] == "1":
                out.append("1")
                rest -= 1
            if not international and rest >= 10:
                out += self._npa(rng) + list("555") + self._line(rng)
                rest -= 10
            elif not international and rest >= 7:
                out += list("555") + self._line(rng)
                rest -= 7
            elif international and rest > 3:
                out += digits[:2]  # the country code: not identifying on its own
                rest -= 2
            out += [rng.choice("123456789" if not out and i == 0 else "0123456789")
                    for i in range(rest)]
            # Vanity letters (1-800-FLOWERS) identify too: letter for letter.
            return "".join(random_like(c, rng) if c.isalpha() else c
                           for c in _fill_digits(value, "".join(out)))

        return redraw(make, value, label)

    @staticmethod
    def _npa(rng: random.Random) -> list[str]:
        while True:
            a, b = rng.choice("23456789"), rng.choice("012345678")
            c = rng.choice("0123456789")
            if not (b == "1" and c == "1"):
                return [a, b, c]

    @staticmethod
    def _line(rng: random.Random) -> list[str]:
        return list(f"01{rng.randint(0, 99):02d}")
