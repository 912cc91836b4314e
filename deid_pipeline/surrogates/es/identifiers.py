"""Spanish numbers: DNI, NIE, NASS/NUSS, phones and other identifiers.

- DNI: 8 digits and the check letter ``TRWAGMYFPDXBNJZSQVHLCKE[n % 23]``;
  NIE: ``X``/``Y``/``Z`` (0, 1, 2 for the check), 7 digits and the letter of
  the 8-digit number. Both are written with a valid letter, in the original's
  layout (dots, hyphen or space, letter case), wherever an identifier span
  holds one.
- NASS/NUSS (social security): a province code (01-52), the number and two
  check digits, ``(province and number as one number) mod 97``; ``28
  12345678 90``, ``28/12345678/90`` (an older number written without its
  leading zeros, ``28 123456 90``, as short as five digits) or twelve digits
  for a health plan or SSN.
- Phones and faxes: Spanish shapes, 9 digits starting 6/7 (mobile) or 8/9
  (land line) as the original started, after ``+34``/``0034`` when it had one,
  every space, dot and hyphen where it was. Spain reserves no range for
  fiction (as NANP's 555-01XX): the digits are drawn.
- A collegiate number (LICENSE, ``28 28 12345``): province codes where the
  original has them, the same one twice when it was, and new digits.
- Anything else: the English shape rule (digit for digit, letter for letter),
  keeping the words that name the identifier (``NHC``, ``nº``, and those
  written as one, ``NºCol``).

Words naming the identifier at its start (``NºCol: 28 28 12345``, ``NASS
28 ...``) stay as written and the rest is read as if they were not there,
so it gets the surrogate it gets alone. All are keyed on the letters and
digits alone (``12.345.678-Z`` and ``12345678Z`` get the same digits) and
never equal the original.
"""

from __future__ import annotations

import random
import re

from deid_pipeline.surrogates.base import SurrogateGenerator
from deid_pipeline.surrogates.identifiers import ID_WORDS, id_key
from deid_pipeline.surrogates.keyed import SurrogateContext, SurrogateError, seed_of
from deid_pipeline.surrogates.text import has_alnum, random_like, redraw

DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
NIE_PREFIX = "XYZ"
PROVINCE_CODES = tuple(f"{n:02d}" for n in range(1, 53))
# Words that name a Spanish identifier rather than being part of it.
SPANISH_ID_WORDS = ID_WORDS | frozenset({
    "nhc", "dni", "nie", "nif", "nass", "nuss", "naf", "historia", "clinica",
    "clínica", "num", "núm", "numero", "número", "nº", "sip", "cip", "tis",
    "tarjeta", "colegiado", "col", "episodio", "expediente", "poliza", "póliza",
})
_ID_TOKENS = re.compile(r"[^\W\d_]+|[^a-zA-Z]+")
_DNI = re.compile(r"(?<![\w.])(?P<num>\d{2}\.?\d{3}\.?\d{3})(?P<sep>[-\s]?)"
                  r"(?P<letter>[A-Za-z])(?![\w])")
_NIE = re.compile(r"(?<![\w])(?P<pre>[XYZxyz])(?P<sep1>[-\s]?)(?P<num>\d{7})"
                  r"(?P<sep2>[-\s]?)(?P<letter>[A-Za-z])(?![\w])")
_NASS = re.compile(r"(?P<prov>\d{2})(?P<s1>[\s/-])(?P<num>\d{5,8})(?P<s2>[\s/-])"
                   r"(?P<check>\d{2})")
_NASS_PLAIN = re.compile(r"(?P<prov>\d{2})(?P<num>\d{8})(?P<check>\d{2})")
_NASS_LABELS = frozenset({"HEALTHPLAN", "SSN"})
# A collegiate number (``NºCol: 28 28 12345``): two province codes (the
# college's, nearly always twice: 594 of 667 in MEDDOCAN's training and
# development parts, the other 72 two codes) and the member's number.
_COLEGIADO = re.compile(r"(?P<a>\d{2})(?P<s1>[ -]{1,2})(?P<b>\d{2})(?P<s2>[ -]{1,2})"
                        r"(?P<num>\d{3,6})")


def dni_letter(number: int) -> str:
    """The DNI check letter of ``number`` (also a NIE's, with its prefix digit)."""
    return DNI_LETTERS[number % 23]


def nie_number(prefix: str, digits: str) -> int:
    """The number a NIE's letter is computed from: X=0, Y=1, Z=2, then the digits."""
    return int(str(NIE_PREFIX.index(prefix.upper())) + digits)


def nass_check(province: str, number: str) -> str:
    """The two check digits of a NASS: (province and number as one number) mod 97."""
    return f"{int(province + number) % 97:02d}"


def valid_dni(text: str) -> bool:
    """Whether ``text`` is a DNI (any layout) with its check letter right."""
    m = _DNI.fullmatch(text.strip())
    if m is None:
        return False
    digits = m.group("num").replace(".", "")
    return m.group("letter").upper() == dni_letter(int(digits))


def valid_nie(text: str) -> bool:
    """Whether ``text`` is a NIE (any layout) with its check letter right."""
    m = _NIE.fullmatch(text.strip())
    if m is None:
        return False
    return (m.group("letter").upper()
            == dni_letter(nie_number(m.group("pre"), m.group("num"))))


def _rng(ctx: SurrogateContext, label: str, value: str) -> random.Random:
    return random.Random(seed_of(ctx.key, ctx.person_id, f"ES-{label}",
                                 id_key(value)))


def _digits(rng: random.Random, n: int, lead_nonzero: bool = True) -> str:
    first = rng.choice("123456789" if lead_nonzero else "0123456789")
    return first + "".join(rng.choice("0123456789") for _ in range(n - 1))


def _fill(layout: str, digits: str) -> str:
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in layout)


def _cased(letter: str, like: str) -> str:
    return letter.lower() if like.islower() else letter


def _new_dni(m: re.Match, rng: random.Random) -> str:
    digits = _digits(rng, 8)
    letter = _cased(dni_letter(int(digits)), m.group("letter"))
    return _fill(m.group("num"), digits) + m.group("sep") + letter


def _new_nie(m: re.Match, rng: random.Random) -> str:
    prefix = rng.choice(NIE_PREFIX)
    digits = _digits(rng, 7, lead_nonzero=False)
    letter = dni_letter(nie_number(prefix, digits))
    return (_cased(prefix, m.group("pre")) + m.group("sep1") + digits
            + m.group("sep2") + _cased(letter, m.group("letter")))


def _new_nass(m: re.Match, rng: random.Random, province: str) -> str:
    number = _digits(rng, len(m.group("num")), lead_nonzero=False)
    check = nass_check(province, number)
    groups = m.groupdict()
    return (province + (groups.get("s1") or "") + number + (groups.get("s2") or "")
            + check)


def _new_colegiado(m: re.Match, rng: random.Random) -> str:
    """Province codes where the original had them (one twice if it was), digits new."""
    first = rng.choice(PROVINCE_CODES)
    second = first if m.group("a") == m.group("b") else rng.choice(PROVINCE_CODES)
    return (first + m.group("s1") + second + m.group("s2")
            + _digits(rng, len(m.group("num")), lead_nonzero=False))


class SpanishIdentifierGenerator(SurrogateGenerator):
    """DNI/NIE with a valid letter, NASS with valid check digits, else same shape."""

    labels = ("MEDICALRECORD", "SSN", "ACCOUNT", "LICENSE", "HEALTHPLAN", "IDNUM",
              "DEVICE", "BIOID", "VEHICLE")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return the surrogate of the identifier ``value`` (see the module doc)."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: no letter or digit to replace")
        lead, rest = _label_words(value)
        if lead and has_alnum(rest):
            return lead + self.generate(rest, label, ctx)
        if _words_only(value):
            # ``Lactante``, ``raza caucásica``: words the annotators marked as
            # an id have no shape to imitate; random letters would stand out
            # as a misspelling, the mask says what was there.
            raise SurrogateError(f"{label}: words, not an identifier")
        rng = _rng(ctx, label, value)
        core = value.strip()
        nass = _NASS.fullmatch(core) or (
            _NASS_PLAIN.fullmatch(core) if label in _NASS_LABELS else None)
        if nass is not None:
            province = rng.choice(PROVINCE_CODES)
            out = redraw(lambda: _new_nass(nass, rng, province), core, label)
            return value.replace(core, out, 1)
        colegiado = _COLEGIADO.fullmatch(core) if label == "LICENSE" else None
        if (colegiado is not None and colegiado.group("a") in PROVINCE_CODES
                and colegiado.group("b") in PROVINCE_CODES):
            out = redraw(lambda: _new_colegiado(colegiado, rng), core, label)
            return value.replace(core, out, 1)
        found = _ids_in(value)

        def make() -> str:
            out = []
            pos = 0
            for start, end, m, new in found:
                out += [_gap(value[pos:start], rng), new(m, rng)]
                pos = end
            out.append(_gap(value[pos:], rng))
            return "".join(out)

        return redraw(make, value, label)


def _words_only(value: str) -> bool:
    """No digit, and a letter in lower case: written words, not a code (``XKQW``)."""
    return (not any(c.isdigit() for c in value)
            and any(c.islower() for c in value))


def _ids_in(value: str) -> list[tuple[int, int, re.Match, object]]:
    """The NIEs and DNIs in ``value``: (start, end, match, maker), in order."""
    found: list[tuple[int, int, re.Match, object]] = []
    for rx, new in ((_NIE, _new_nie), (_DNI, _new_dni)):
        for m in rx.finditer(value):
            if not any(m.start() < e and s < m.end() for s, e, _, _ in found):
                found.append((m.start(), m.end(), m, new))
    return sorted(found, key=lambda f: f[0])


def _gap(text: str, rng: random.Random) -> str:
    """Text around the ids: id words kept, the rest redrawn character by class."""
    return "".join(t if _id_word(t) else random_like(t, rng)
                   for t in _ID_TOKENS.findall(text))


# Where words written as one part: after ``º``/``ª``, before an inner capital.
_WORD_JOIN = re.compile(r"(?<=[ºª])|(?<=[^\W\d_])(?=[A-Z])")
_LEAD_WORD = re.compile(r"[\s.:#/-]*([^\W\d_]+)[\s.:#/-]*")


def _id_word(token: str) -> bool:
    """Whether ``token`` names an identifier (``NHC``), or is id words as one."""
    return token.casefold() in SPANISH_ID_WORDS or all(
        part.casefold() in SPANISH_ID_WORDS for part in _WORD_JOIN.split(token))


def _label_words(value: str) -> tuple[str, str]:
    """The id words and punctuation ``value`` starts with (``NºCol: ``), the rest."""
    pos = 0
    while (m := _LEAD_WORD.match(value, pos)) is not None and m.end() > pos \
            and _id_word(m.group(1)):
        pos = m.end()
    return value[:pos], value[pos:]


# ---- phones --------------------------------------------------------------

_COUNTRY = re.compile(r"^(?P<lead>\s*\(?)(?P<cc>\+\s?34|0034|\+\s?\d{1,3}|00\d{2})")


class SpanishPhoneGenerator(SurrogateGenerator):
    """Spanish phone and fax numbers: 9 digits from 6-9, spacing as written."""

    labels = ("PHONE", "FAX")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep the country code and every separator; draw Spanish digits."""
        if not any(c.isdigit() for c in value):
            raise SurrogateError(f"{label}: no digit to replace")
        rng = _rng(ctx, label, value)
        m = _COUNTRY.match(value)
        head, rest = (value[:m.end()], value[m.end():]) if m else ("", value)
        digits = [c for c in rest if c.isdigit()]
        if not digits:
            raise SurrogateError(f"{label}: no number after the country code")

        def make() -> str:
            if len(digits) == 9:
                first = digits[0] if digits[0] in "6789" else rng.choice("6789")
                new = first + "".join(rng.choice("0123456789") for _ in range(8))
            else:
                new = _digits(rng, len(digits), lead_nonzero=digits[0] != "0")
            body = _fill(rest, new)
            return head + "".join(random_like(c, rng) if c.isalpha() else c
                                  for c in body)

        return redraw(make, value, label)
