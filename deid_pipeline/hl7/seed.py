"""Seeding: the message header -> the patient's dictionary of identifiers.

The HMS Scrubber / deid.pl idea: whatever the header says about this patient
(names, MRN, birth date, phones, relatives, providers, facility) is PHI
wherever the report mentions it. Reports do not write values the way the
header stores them (``SMITH^JOHN^Q`` becomes ``John Q. Smith``, ``Smith, J.``,
``J.S.``; ``19500304`` becomes ``3/4/50`` or ``March 4, 1950``), so every value
is expanded here into the forms it takes in text. The dictionary detector
matches entries case-insensitively with any whitespace, so forms differ only
in punctuation, order and abbreviation, never in case or spacing.
"""

from __future__ import annotations

import re
from datetime import date

from deid_pipeline.hl7.escapes import unescape
from deid_pipeline.hl7.fields import KINDS as _KINDS
from deid_pipeline.hl7.fields import (
    HeaderField,
    Leaf,
    identifier_label,
    leaf_values,
    repetitions,
    segment_fields,
)
from deid_pipeline.hl7.message import Hl7Message
from deid_pipeline.model import DictionaryEntry, PatientDictionary

__all__ = [
    "date_forms",
    "id_forms",
    "is_placeholder",
    "name_forms",
    "parse_hl7_date",
    "person_key",
    "phone_forms",
    "seed_dictionary",
]

# Bare initials ("JS") that are also words or clinical abbreviations: as
# dictionary entries they would redact half of every note.
_INITIAL_STOPLIST = frozenset("""
AM AN AS AT BE BY DO GO HE HI IF IN IS IT ME MY NO OF OH OK ON OR OX SO TO UP US WE
PM MD DR RN PT OT ER IV IM PO PR BP HR RR CT MR MS DX HX RX TX SX FX ED GI GU LA NA
RA OD OS OU PA PE QD AD AB AI AL CA CC CO DC DE EM EP EQ ET EX FE GA HB HD ID IL KG
KY LB MA MG MI ML MM MN MO MT NC ND NE NG NH NJ NM NP NV NY OB OP PD PH PL PP PS QT
RE RL RN SC SD SI SL SP SQ ST TB TN TV UA UK UR UT VA VI VS VT WA WI WV WY
AND THE FOR BUT NOT YOU ALL ANY CAN HAD HER WAS ONE OUR OUT DAY GET HAS HIM HIS HOW
MAN NEW NOW OLD SEE TWO WAY WHO BOY DID ITS LET PUT SAY SHE TOO USE DAD MOM ABD BID
TID QID PRN NPO SOB CBC BMP CMP EKG ECG MRI EEG CVA CHF DVT ENT HEM ONC LLE RLE LUE
RUE LLL RLL RUL LUL AKA BKA DNR DNI MVA UTI URI IVF PCA ABG VBG ETT NGT OGT CXR KUB
PET ICU CCU NICU PICU MICU SICU ARE BED BIG BOX CUT DRY EAR EYE FAT FEW FIT FLU GUT
HIP HOT ICE ILL JAW LAB LEG LIP LOW MAP MIX NOD OFF PAD PER PIN RED RIB RUN SAC SAD
SET SIX SKY TEN TOE TOP WET YES YET
""".split())

_NAME_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "la",
                             "le", "da", "di", "du", "st", "st.", "mc", "mac", "bin",
                             "ibn"})

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")

_STREET_SUFFIXES = {
    "st": "street", "ave": "avenue", "av": "avenue", "rd": "road", "dr": "drive",
    "blvd": "boulevard", "ln": "lane", "ct": "court", "pl": "place", "pkwy": "parkway",
    "hwy": "highway", "ter": "terrace", "cir": "circle", "sq": "square", "trl": "trail",
    "way": "way", "apt": "apartment", "ste": "suite", "fl": "floor", "mt": "mount",
}
_SUFFIX_ABBREVIATION = {v: k for k, v in _STREET_SUFFIXES.items() if k != "av"}

# Words a template message writes where an address part belongs ("Street^^City^
# State^Zip Code"): they name the part, not a place. Seeded, they are found in
# every surrogate street ("Oak Street") and state name, and the message guard
# holds the message back for a value that identifies nobody.
_PLACEHOLDER_WORDS = frozenset({
    "street", "address", "addr", "line", "city", "town", "state", "province",
    "zip", "zipcode", "code", "postal", "postcode", "country", "county", "unknown",
    "none", "na", "n", "a",
})
_WORDS = re.compile(r"[a-z]+")

_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas",
    "CA": "California", "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware",
    "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia", "HI": "Hawaii",
    "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas",
    "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland",
    "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi",
    "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
    "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York",
    "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma",
    "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina",
    "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas", "UT": "Utah",
    "VT": "Vermont", "VA": "Virginia", "WA": "Washington", "WV": "West Virginia",
    "WI": "Wisconsin", "WY": "Wyoming", "PR": "Puerto Rico",
}

_ID_LABELS = frozenset({"MEDICALRECORD", "SSN", "ACCOUNT", "LICENSE", "DEVICE",
                        "HEALTHPLAN", "IDNUM", "BIOID", "VEHICLE"})
_TS = re.compile(r"(\d{4})(\d{2})?(\d{2})?")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_DIGITS = re.compile(r"\d+")


# ------------------------------------------------------------------ forms


def _initial(part: str) -> str:
    return part[:1].upper()


def name_forms(family: str, given: str = "", middle: str = "") -> list[str]:
    """List the ways a report writes one person's name (case is the matcher's job)."""
    family, given, middle = family.strip(), given.strip(), middle.strip()
    forms: list[str] = []
    for part in (family, given, middle):
        if part:
            forms.append(part)
            forms.extend(_part_variants(part))
    if not (family and given):
        return forms
    g0, f0 = _initial(given), _initial(family)
    m0 = _initial(middle) if middle else ""
    forms += [f"{given} {family}", f"{family}, {given}", f"{family},{given}",
              f"{family} {given}", f"{g0}. {family}", f"{g0} {family}",
              f"{family}, {g0}.", f"{family}, {g0}", f"{family} {g0}.",
              f"{g0}.{f0}.", f"{g0}. {f0}.", f"{given} {f0}."]
    if middle:
        forms += [f"{given} {middle} {family}", f"{given} {m0}. {family}",
                  f"{given} {m0} {family}", f"{family}, {given} {middle}",
                  f"{family}, {given} {m0}.", f"{family}, {given} {m0}",
                  f"{g0}.{m0}. {family}", f"{g0}. {m0}. {family}",
                  f"{g0}.{m0}.{f0}.", f"{g0}. {m0}. {f0}."]
    for bare in (g0 + f0, g0 + m0 + f0 if m0 else ""):
        if bare and bare not in _INITIAL_STOPLIST:
            forms.append(bare)
    return forms


def _part_variants(part: str) -> list[str]:
    """Hyphenated, multi-word and apostrophe names: each piece and the joins."""
    out: list[str] = []
    if "'" in part or "\u2019" in part:
        plain = part.replace("\u2019", "'")
        out += [plain, plain.replace("'", ""), plain.replace("'", " ")]
    pieces = [p for p in re.split(r"[-\s]+", part) if p]
    if len(pieces) > 1:
        out.append(" ".join(pieces))
        out.append("-".join(pieces))
        out += [p for p in pieces if p.lower() not in _NAME_PARTICLES and len(p) > 1]
    return out


def id_forms(value: str) -> list[str]:
    """List an identifier with and without separators, leading zeros, groupings."""
    value = value.strip()
    forms = [value]
    compact = _NON_ALNUM.sub("", value)
    if compact and compact != value:
        forms += [compact, _NON_ALNUM.sub(" ", value).strip(),
                  _NON_ALNUM.sub("-", value).strip("-")]
    digits = "".join(_DIGITS.findall(value))
    if len(digits) >= 4:
        if digits != compact:
            forms.append(digits)
        stripped = digits.lstrip("0")
        if len(stripped) >= 4 and stripped != digits:
            forms.append(stripped)
        if len(digits) >= 6 and digits == compact:
            for size in (3, 4):
                groups = [digits[i:i + size] for i in range(0, len(digits), size)]
                forms += ["-".join(groups), " ".join(groups)]
            if len(digits) == 9:
                forms += [f"{digits[:3]}-{digits[3:5]}-{digits[5:]}",
                          f"{digits[:3]} {digits[3:5]} {digits[5:]}"]
    return forms


def phone_forms(value: str) -> list[str]:
    """List a telephone number in the formats notes use (US numbering)."""
    forms = [value.strip()]
    digits = "".join(_DIGITS.findall(value))
    if len(digits) == 11 and digits[0] == "1":
        digits = digits[1:]
    if len(digits) == 10:
        a, e, n = digits[:3], digits[3:6], digits[6:]
        forms += [f"({a}) {e}-{n}", f"({a}){e}-{n}", f"{a}-{e}-{n}", f"{a}.{e}.{n}",
                  f"{a} {e} {n}", f"{a} {e}-{n}", digits, f"1-{a}-{e}-{n}",
                  f"+1 {a} {e} {n}", f"+1 ({a}) {e}-{n}", f"+1-{a}-{e}-{n}",
                  f"1 ({a}) {e}-{n}", f"{e}-{n}"]
    elif len(digits) == 7:
        forms += [f"{digits[:3]}-{digits[3:]}", digits]
    elif len(digits) >= 5:
        forms.append(digits)
    return forms


def parse_hl7_date(value: str) -> date | None:
    """Return the date of an HL7 TS/DT value (``YYYYMMDD[HHMM...]``), if complete."""
    m = _TS.match(value.strip())
    if not m or not m.group(3):
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def date_forms(value: str) -> list[str]:
    """List a date in the numeric and written forms reports use."""
    when = parse_hl7_date(value)
    if when is None:
        return []
    y, m, d = when.year, when.month, when.day
    yy = f"{y % 100:02d}"
    month = _MONTHS[m - 1]
    mon = month[:3]
    numeric = [f"{y}{m:02d}{d:02d}", f"{m:02d}/{d:02d}/{y}", f"{m}/{d}/{y}",
               f"{m}/{d}/{yy}", f"{m:02d}/{d:02d}/{yy}", f"{m:02d}-{d:02d}-{y}",
               f"{m}-{d}-{y}", f"{m}-{d}-{yy}", f"{y}-{m:02d}-{d:02d}",
               f"{y}/{m:02d}/{d:02d}", f"{m:02d}.{d:02d}.{y}", f"{d:02d}.{m:02d}.{y}"]
    th = _ordinal(d)
    written = [f"{month} {d}, {y}", f"{month} {d} {y}", f"{mon} {d}, {y}",
               f"{mon} {d} {y}", f"{mon}. {d}, {y}", f"{d} {month} {y}",
               f"{d} {mon} {y}", f"{d:02d}-{mon}-{y}", f"{d}-{mon}-{y}",
               f"{d:02d}-{mon}-{yy}", f"{d}-{mon}-{yy}", f"{d:02d}{mon}{y}",
               f"{month} {d}", f"{mon} {d}", f"{month} {th}, {y}",
               f"{th} of {month} {y}", f"{th} {month} {y}", f"{month} {th} {y}"]
    forms = numeric + written
    if m == 9:
        forms += [f"Sept {d}, {y}", f"Sept. {d}, {y}"]
    return forms


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def street_forms(value: str) -> list[str]:
    """List a street line with its suffix spelled out, abbreviated, without number."""
    value = " ".join(value.split())
    forms = [value]
    words = value.split(" ")
    for i, word in enumerate(words):
        key = word.rstrip(".").lower()
        swap = _STREET_SUFFIXES.get(key) or _SUFFIX_ABBREVIATION.get(key)
        if swap:
            variant = words[:i] + [swap] + words[i + 1:]
            forms.append(" ".join(variant))
            if swap in _STREET_SUFFIXES:
                forms.append(" ".join(words[:i] + [swap + "."] + words[i + 1:]))
    if len(words) >= 3 and words[0][:1].isdigit():
        forms += [" ".join(f.split(" ")[1:]) for f in list(forms)]
    return forms


def zip_forms(value: str) -> list[str]:
    value = value.strip()
    digits = "".join(_DIGITS.findall(value))
    forms = [value]
    if len(digits) == 9:
        forms += [digits[:5], f"{digits[:5]}-{digits[5:]}"]
    return forms


def state_forms(value: str, city: str) -> list[str]:
    """List a state spelled out and with its city; a bare code is not a form.

    ``IN``, ``OR``, ``ME``, ``MD``, ``PA`` are words and abbreviations; as
    ``Boston, MA`` the code is unambiguous.
    """
    value = value.strip()
    name = _STATES.get(value.upper(), value if len(value) > 2 else "")
    forms = [name] if name else []
    if city:
        forms += [f"{city}, {value}", f"{city} {value}"]
        if name and name != value:
            forms += [f"{city}, {name}"]
    return forms


# --------------------------------------------------------------- dictionary


class _Collector:
    """Deduplicating entry list: (value lowercased, label) -> first field seen."""

    __slots__ = ("entries", "seen")

    def __init__(self) -> None:
        self.entries: list[DictionaryEntry] = []
        self.seen: dict[str, set[str]] = {}  # label -> values lower-cased

    def add_raw(self, value: str, label: str, field: str) -> None:
        """Add even when another field gave the same value: columns look it up."""
        self.seen.setdefault(label, set()).add(value.lower())
        self.entries.append(DictionaryEntry(value, label, field))

    def add(self, values: list[str], label: str, field: str) -> None:
        # ~300 values a message: one set per label, no key tuple per value.
        seen = self.seen.get(label)
        if seen is None:
            seen = self.seen[label] = set()
        entries = self.entries
        for value in values:
            value = value.strip()
            if len(value) < 2 or value == '""':
                continue
            key = value.lower()
            if key in seen:
                continue
            seen.add(key)
            entries.append(DictionaryEntry(value, label, field))


def is_placeholder(value: str) -> bool:
    """Whether an address leaf holds only words naming an address part.

    ``Street``, ``Address Line 2``, ``City``, ``Zip Code``, ``N/A``: letters
    all of placeholder words, with at most one digit (a line number). A
    street with a name (``12 Main Street``) or a town (``State College``)
    has a word of its own and is seeded as before.
    """
    lowered = value.lower()
    words = _WORDS.findall(lowered)
    return bool(words) and sum(map(str.isdigit, lowered)) <= 1 and all(
        w in _PLACEHOLDER_WORDS for w in words)


_ADDRESS_ROLES = frozenset({"street", "city", "state", "zip"})


def _seed_repetition(out: _Collector, spec: HeaderField, values: list[tuple[Leaf, str]],
                     id_label: str) -> None:
    key = spec.key
    name: dict[str, str] = {}
    city = ""
    for leaf, value in values:
        role = leaf.role
        label = leaf.label or spec.label
        if role in _ADDRESS_ROLES and is_placeholder(value):
            continue  # replaced in its field, never searched for
        if role in ("family", "given", "middle"):
            name[role] = value
        elif role == "id":
            out.add(id_forms(value), id_label if leaf.label is None else label, key)
        elif role == "date":
            if spec.seed:
                forms = date_forms(value)
                if forms:
                    out.add_raw(forms[0], "DATE", key)
                    out.add(forms[1:], "DATE", key)
        elif role in ("phone",):
            out.add(phone_forms(value), "PHONE", key)
        elif role == "email":
            out.add([value], "EMAIL", key)
        elif role == "street":
            out.add(street_forms(value), "STREET", key)
        elif role == "city":
            city = value
            out.add([value], "CITY", key)
        elif role == "zip":
            out.add(zip_forms(value), "ZIP", key)
        elif role == "room":
            if any(ch.isdigit() for ch in value):
                out.add([value, f"Room {value}", f"Rm {value}"], "ROOM", key)
        elif role in ("facility", "org", "text"):
            out.add(id_forms(value) if label in _ID_LABELS else [value], label, key)
    for leaf, value in values:
        if leaf.role == "state" and not is_placeholder(value):
            out.add(state_forms(value, city), "STATE", key)
    area = next((v for leaf, v in values if leaf.role == "area"), "")
    local = next((v for leaf, v in values if leaf.role == "local"), "")
    if local:
        out.add(phone_forms(area + local), "PHONE", key)
    if name:
        out.add(name_forms(name.get("family", ""), name.get("given", ""),
                           name.get("middle", "")), spec.label, key)


# Kinds whose repetitions are seeded only through the deduplicating add: a
# date leaf's YYYYMMDD form goes in once per field (add_raw).
_UNDATED_KINDS = frozenset(kind for kind, leaves in _KINDS.items()
                           if all(leaf.role != "date" for leaf in leaves))


def seed_dictionary(message: Hl7Message) -> PatientDictionary:
    """Build the patient dictionary of one message, keyed by its canonical MRN.

    A repetition seen before in a field of the same kind and label (the
    attending in PV1-7, ORC-12 and OBR-16) would only offer values already
    in: it is skipped, unless its kind has dates.
    """
    d = message.delimiters
    out = _Collector()
    done: set[tuple[str, str, str]] = set()
    for seg, spec in segment_fields(message):
        if not spec.seed:
            continue
        leaves = _KINDS[spec.kind]
        for rep in repetitions(seg.fields[spec.number], d):
            if spec.kind in _UNDATED_KINDS:
                seen = (rep, spec.kind, spec.label)
                if seen in done:
                    continue
                done.add(seen)
            values = [(leaf, v) for leaf, v in leaf_values(rep, d, leaves)
                      if leaf.role not in ("authority", "code")]
            if not values:
                continue
            id_label = spec.label
            if spec.kind == "CX":
                id_label = identifier_label(_cx_type(rep, d), spec.label)
            _seed_repetition(out, spec, values, id_label)
    return PatientDictionary(tuple(out.entries), person_key(message))


def _cx_type(rep: str, d) -> str:
    comps = rep.split(d.component)
    return unescape(comps[4], d) if len(comps) > 4 else ""


def _canonical_id(value: str) -> str:
    compact = _NON_ALNUM.sub("", value).upper()
    return compact.lstrip("0") or compact


def _canonical_authority(value: str) -> str:
    return re.sub(r"\s+", "_", value.strip().upper())


def person_key(message: Hl7Message) -> str | None:
    """``mrn:<AUTHORITY>:<ID>`` from PID-3, normalised so every feed agrees.

    The repetition typed MR (else PI, PT, MRN; else the first with an id)
    wins; the authority is CX-4 (namespace, else universal id), else the
    sending facility, since an MRN is only unique within its issuer. The id
    loses separators and leading zeros (``00-123456`` and ``123456`` are the
    same record in every system we know).
    """
    d = message.delimiters
    pid = message.first("PID")
    if pid is None:
        return None
    best: tuple[int, str, str] | None = None
    rank = {"MR": 0, "MRN": 1, "PI": 2, "PT": 3}
    for rep in repetitions(pid.get(3), d):
        comps = rep.split(d.component)
        ident = unescape(comps[0], d).strip() if comps else ""
        if not _canonical_id(ident):
            continue
        cx_type = unescape(comps[4], d).strip().upper() if len(comps) > 4 else ""
        r = rank.get(cx_type, 9 if cx_type in ("", "U") else 20)
        if cx_type in ("SS", "SSN", "DL", "AN", "VN"):
            continue
        authority = ""
        if len(comps) > 3:
            subs = comps[3].split(d.subcomponent)
            authority = unescape(subs[0], d) or (unescape(subs[1], d) if len(subs) > 1
                                                 else "")
        if best is None or r < best[0]:
            best = (r, ident, authority)
    if best is None:
        return None
    _, ident, authority = best
    if not authority.strip():
        authority = message.component(message.msh.get(4), 1)
    return f"mrn:{_canonical_authority(authority)}:{_canonical_id(ident)}"
