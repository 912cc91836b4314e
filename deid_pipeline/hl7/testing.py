"""Test doubles and sample messages for the HL7 path (tests, benchmark, gateway tests).

:class:`FakeRewriter` has the :class:`deid_pipeline.document_rewriter.Rewriter`
interface with surrogates simple enough to check by eye: names map word by
word (so ``SMITH`` in PID-5 and ``Smith`` in the text agree, as the real
generator's do), digits map digit by digit with the format kept, dates
shift by a per-person number of days in their own format. Deterministic
given the person id; no Faker, no key file.

:func:`sample_oru` builds realistic ORU^R01 messages (Faker identities,
real segment layouts, 10-40 OBX lines whose text mentions the patient in
the forms reports use) for the parser benchmark and tests.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from datetime import date, timedelta

from deid_pipeline.model import (
    DeidentifiedDocument,
    Replacement,
    TaggedDocument,
)
from deid_pipeline.policy import Mode, Policy

__all__ = ["FakeRewriter", "sample_oru"]

_POOL = ("Quillon", "Zarvick", "Ombrell", "Trevane", "Yselda", "Vantor", "Kestrel",
         "Maroux", "Pellham", "Drusk", "Ithorne", "Caldris", "Wenmore", "Brixley",
         "Fennick", "Oresta", "Halvard", "Juniper", "Larkwell", "Nimsey")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_NUMERIC_DATE = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})")
_ISO_DATE = re.compile(r"(\d{4})([-/])(\d{2})\2(\d{2})")
_COMPACT_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
_WRITTEN_DATE = re.compile(r"([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("|".join(parts).encode("utf-8")).digest()


def _with_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like.islower():
        return word.lower()
    return word


@dataclass(frozen=True)
class FakeRewriter:
    """Deterministic stand-in for the real Rewriter (same three methods)."""

    mode: Mode = Mode.SURROGATE
    policy: Policy = Policy.SAFE_HARBOR
    pipeline_version: str = "test"
    as_of_year: int = 2026

    def person_id_for(self, tagged: TaggedDocument, person_key: str | None = None
                      ) -> str:
        """Hash of the person key, like the real one (unkeyed: tests only)."""
        doc = tagged.document
        key = (person_key or (doc.dictionary.person_key if doc.dictionary else None)
               or doc.person_key or f"document:{doc.source}:{doc.doc_id}")
        return _digest("person", key).hex()[:20]

    def _shift(self, pid: str) -> int:
        return 30 + _digest("shift", pid)[0] % 300

    def date_offset(self, pid: str) -> int:
        """The days ``replace_value`` moves the person's dates by."""
        return self._shift(pid)

    def _date(self, value: str, pid: str) -> str | None:
        days = timedelta(days=self._shift(pid))
        m = _NUMERIC_DATE.fullmatch(value)
        if m:
            year = int(m.group(4))
            year += 1900 if len(m.group(4)) == 2 and year > 30 else (
                2000 if len(m.group(4)) == 2 else 0)
            try:
                when = date(year, int(m.group(1)), int(m.group(3))) + days
            except ValueError:
                return None
            y = f"{when.year:04d}" if len(m.group(4)) == 4 else f"{when.year % 100:02d}"
            mo = f"{when.month:02d}" if len(m.group(1)) == 2 else str(when.month)
            d = f"{when.day:02d}" if len(m.group(3)) == 2 else str(when.day)
            return f"{mo}{m.group(2)}{d}{m.group(2)}{y}"
        for pattern in (_ISO_DATE, _COMPACT_DATE):
            m = pattern.fullmatch(value)
            if m:
                groups = m.groups()
                y, mo, d = (groups[0], groups[2], groups[3]) if len(groups) == 4 \
                    else groups
                try:
                    when = date(int(y), int(mo), int(d)) + days
                except ValueError:
                    return None
                sep = groups[1] if len(groups) == 4 else ""
                return f"{when.year:04d}{sep}{when.month:02d}{sep}{when.day:02d}"
        m = _WRITTEN_DATE.fullmatch(value)
        if m and m.group(1)[:3].lower() in [x[:3] for x in _MONTHS]:
            month = [x[:3] for x in _MONTHS].index(m.group(1)[:3].lower()) + 1
            try:
                when = date(int(m.group(3)), month, int(m.group(2))) + days
            except ValueError:
                return None
            name = _MONTHS[when.month - 1].capitalize()
            return f"{name} {when.day}, {when.year}"
        return None

    def _word(self, word: str, label: str, pid: str) -> str:
        if not any(ch.isalpha() for ch in word):
            return self._digits(word, pid)
        if len(word.rstrip(".")) == 1:
            letter = chr(ord("A") + _digest("initial", pid, word.lower())[0] % 25)
            if letter >= word[0].upper():
                letter = chr(ord(letter) + 1)  # never the same initial
            return _with_case(letter, word) + word[1:]
        core = re.sub(r"[^\w'-]|[\d_]", "", word)
        fake = _POOL[_digest("word", pid, core.lower())[0] % len(_POOL)]
        return word.replace(core, _with_case(fake, core)) if core else word

    def _digits(self, value: str, pid: str) -> str:
        if not any(ch.isdigit() for ch in value):
            return value  # nothing to replace (punctuation)
        stream = _digest("digits", pid, re.sub(r"\D", "", value).lstrip("0"))
        out, k = [], 0
        for ch in value:
            if ch.isdigit():
                digit = stream[k % len(stream)] % 10
                out.append(str(digit if k or digit else 7))
                k += 1
            else:
                out.append(ch)
        fake = "".join(out)
        if fake == value:  # never the original: bump the last digit
            i = max(i for i, ch in enumerate(value) if ch.isdigit())
            fake = fake[:i] + str((int(fake[i]) + 1) % 10) + fake[i + 1:]
        return fake

    def replace_value(self, value: str, label: str, pid: str,
                      avoid: object = None) -> str:
        """Return the surrogate of one value: dates shifted, digits, name words.

        ``avoid`` is ignored (see :meth:`rewrite`).
        """
        if label == "DATE":
            shifted = self._date(value.strip(), pid)
            return shifted if shifted is not None else "[DATE]"
        if label in ("PHONE", "FAX", "MEDICALRECORD", "SSN", "ACCOUNT", "ZIP",
                     "HEALTHPLAN", "LICENSE", "IDNUM", "DEVICE"):
            if any(ch.isdigit() for ch in value):
                return self._digits(value, pid)
        if label == "EMAIL":
            return f"user{self._digits('12345', pid)}@example.org"
        return re.sub(r"\S+", lambda m: self._word(m.group(0), label, pid), value)

    def hold_if_unsure(self, tagged: TaggedDocument) -> None:
        """Holds nothing: the tests' taggers are rules and dictionaries."""

    def guard(self, tagged: TaggedDocument,
              result: DeidentifiedDocument) -> DeidentifiedDocument:
        """The real leak guard (it has no fake)."""
        from deid_pipeline.leak_guard import check

        return check(tagged, result, self.policy)

    def rewrite(self, tagged: TaggedDocument, person_key: str | None = None,
                avoid: object = None) -> DeidentifiedDocument:
        """Replace every span, left to right, with an audit record each.

        ``avoid`` (the real Rewriter's originals to keep clear of) is ignored.
        """
        doc = tagged.document
        pid = self.person_id_for(tagged, person_key)
        text = doc.text
        replacements = []
        out = []
        cursor = 0
        for span in sorted(tagged.spans):
            if span.start < cursor:
                continue
            original = text[span.start:span.end]
            fake = self.replace_value(original, span.label, pid)
            replacements.append(Replacement(span, original, fake))
            out.append(text[cursor:span.start])
            out.append(fake)
            cursor = span.end
        out.append(text[cursor:])
        return DeidentifiedDocument(
            doc_id=doc.doc_id, person_id=pid, source=doc.source, text="".join(out),
            confidence=tagged.confidence, replacements=tuple(replacements),
            metadata=doc.metadata, pipeline_version=self.pipeline_version)


# --------------------------------------------------------------- samples

_FINDINGS = (
    "The specimen is received in formalin labeled with the patient's name.",
    "Sections show benign breast tissue with fibrocystic change.",
    "No evidence of malignancy is identified in the submitted material.",
    "Margins are uninvolved; closest margin is 0.4 cm.",
    "Lymph nodes: two of twelve positive for metastatic carcinoma (2/12).",
    "Immunohistochemistry for ER and PR is pending.",
    "The lungs are clear. Heart size is within normal limits.",
    "There is a 1.2 cm hypodense lesion in segment VI of the liver.",
    "Comparison is made with the prior study.",
    "Impression: no acute cardiopulmonary process.",
)


def _phone(rng: random.Random) -> tuple[str, str, str]:
    return (f"{rng.randint(201, 989)}", f"{rng.randint(200, 989)}",
            f"{rng.randint(0, 9999):04d}")


def sample_oru(seed: int, obx_lines: int | None = None) -> tuple[str, dict[str, str]]:
    """One realistic ORU^R01 pathology/radiology report and its header identifiers.

    The identifiers dict (``family``, ``given``, ``mrn``, ``dob``, ``phone``...)
    lets tests check nothing of the header survives.
    """
    from faker import Faker  # only needed here; tests and benchmark

    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    n_obx = obx_lines if obx_lines is not None else rng.randint(10, 40)
    family, given, middle = fake.last_name(), fake.first_name(), fake.first_name()
    mother = fake.last_name()
    spouse = fake.first_name()
    doc_family, doc_given = fake.last_name(), fake.first_name()
    ref_family, ref_given = fake.last_name(), fake.first_name()
    mrn = f"{rng.randint(0, 99999999):08d}"
    dob = fake.date_of_birth(minimum_age=20, maximum_age=88)
    area, exch, line = _phone(rng)
    street = fake.street_address()
    city = fake.city()
    state = fake.state_abbr(include_territories=False)
    zipcode = fake.zipcode()
    ssn = fake.ssn()
    hospital = rng.choice(("MERCY", "STMARYS", "GENHOSP", "UNIVMED"))
    visit = f"V{rng.randint(100000, 999999)}"
    accession = f"S{rng.randint(10, 25)}-{rng.randint(1000, 99999)}"
    when = date(2024, 1, 1) + timedelta(days=rng.randint(0, 300))
    ts = when.strftime("%Y%m%d") + f"{rng.randint(7, 18):02d}{rng.randint(0, 59):02d}"
    segments = [
        f"MSH|^~\\&|PATHSYS|{hospital}^2.16.840.1.113883.3.{rng.randint(1, 999)}^ISO|"
        f"EHR|{hospital}|{ts}||ORU^R01^ORU_R01|MSG{seed:08d}|P|2.5.1|||AL|NE|USA|"
        "UNICODE UTF-8",
        f"PID|1||{mrn}^^^{hospital}^MR~{ssn}^^^SSA^SS||{family.upper()}^{given.upper()}"
        f"^{middle[0]}|{mother.upper()}|{dob:%Y%m%d}|{rng.choice('FM')}||2106-3^White^CDCREC|"
        f"{street}^^{city}^{state}^{zipcode}^USA^H||({area}){exch}-{line}^PRN^PH|||M||"
        f"{visit}^^^{hospital}^AN|{ssn}",
        f"NK1|1|{family.upper()}^{spouse.upper()}|SPO^Spouse^HL70063|{street}^^{city}^"
        f"{state}^{zipcode}|({area}){exch}-{line}",
        f"PV1|1|O|PATH^^^{hospital}||||{rng.randint(1000, 9999)}^{doc_family.upper()}^"
        f"{doc_given.upper()}^^^DR^MD|{rng.randint(1000, 9999)}^{ref_family.upper()}^"
        f"{ref_given.upper()}^^^DR|||||||||||{visit}||||||||||||||||||||{hospital}|||||"
        f"{ts}",
        f"ORC|RE|PL{seed}|{accession}^PATH||CM||||{ts}|||{rng.randint(1000, 9999)}^"
        f"{ref_family.upper()}^{ref_given.upper()}^^^DR",
        f"OBR|1|PL{seed}|{accession}^PATH|88305^Surgical pathology^CPT4|||{ts}|||||||"
        f"{ts}||{rng.randint(1000, 9999)}^{ref_family.upper()}^{ref_given.upper()}^^^DR"
        f"||||||{ts}||SP|F|||||||&{doc_family.upper()}&{doc_given.upper()}&&&DR",
    ]
    mentions = [
        f"Patient: {family.upper()}, {given.upper()}   MRN: {mrn}",
        f"DOB: {dob:%m/%d/%Y}  Accession: {accession}",
        f"Clinical history: {given} {family} is a patient of Dr. {ref_family}.",
        f"Contact the family ({spouse} {family}) at ({area}) {exch}-{line}.",
        f"Mother's maiden name {mother} noted for the record.",
        f"Pathologist: {doc_given} {doc_family}, MD",
        f"Mr./Ms. {family} was seen at {hospital.title()} on {when:%B} {when.day}, "
        f"{when.year}.",
        f"Born {dob:%B} {dob.day}, {dob.year}; lives at {street}, {city}.",
    ]
    for k in range(n_obx):
        text = mentions[k] if k < len(mentions) else rng.choice(_FINDINGS)
        text = text.replace("\\", "\\E\\").replace("|", "\\F\\").replace(
            "^", "\\S\\").replace("&", "\\T\\").replace("~", "\\R\\")
        segments.append(f"OBX|{k + 1}|TX|22637-3^Pathology report^LN||{text}||||||F")
    segments.append(f"NTE|1|L|Reviewed with Dr. {doc_family} on {when:%m/%d/%Y}.")
    identifiers = {
        "family": family, "given": given, "middle": middle, "mother": mother,
        "spouse": spouse, "doctor": doc_family, "referrer": ref_family,
        "mrn": mrn, "dob": f"{dob:%m/%d/%Y}", "phone": f"{exch}-{line}",
        "street": street, "ssn": ssn, "visit": visit, "accession": accession,
    }
    return "\r".join(segments) + "\r", identifiers


# ------------------------------------------------------------ leak checks

_ADDRESS = re.compile(r"([A-Z][A-Z0-9]{2})(?:\[(\d+)\])?\.(\d+)(?:\[(\d+)\])?"
                      r"(?:\.(\d+))?(?:\.(\d+))?")


def value_at(er7: str, address: str) -> str | None:
    """Return the unescaped value at a generator address (``NK1[2].2.1``).

    None when the address does not exist in ``er7``.
    """
    from deid_pipeline.hl7.escapes import unescape
    from deid_pipeline.hl7.message import parse_message

    m = _ADDRESS.fullmatch(address)
    if not m:
        raise ValueError(f"bad address {address!r}")
    name, occurrence, field, rep, comp, sub = m.groups()
    message = parse_message(er7)
    d = message.delimiters
    segments = [s for s in message.segments if s.name == name]
    k = int(occurrence or 1) - 1
    if k >= len(segments):
        return None
    raw = segments[k].get(int(field))
    reps = raw.split(d.repetition)
    r = int(rep or 1) - 1
    if r >= len(reps):
        return None
    value = reps[r]
    if comp:
        comps = value.split(d.component)
        value = comps[int(comp) - 1] if int(comp) <= len(comps) else ""
        if sub:
            subs = value.split(d.subcomponent)
            value = subs[int(sub) - 1] if int(sub) <= len(subs) else ""
    return unescape(value, d)


def inserted_regions(doc: DeidentifiedDocument) -> list[tuple[int, int]]:
    """Where the surrogates sit in the de-identified text (from the audit)."""
    regions = []
    shift = 0
    for r in sorted(doc.replacements, key=lambda x: x.span.start):
        start = r.span.start + shift
        regions.append((start, start + len(r.replacement)))
        shift += len(r.replacement) - (r.span.end - r.span.start)
    return regions


def narrative_leaks(doc: DeidentifiedDocument, values: list[str]) -> list[str]:
    """``values`` found in the de-identified text outside any inserted surrogate."""
    regions = inserted_regions(doc)
    text = doc.text.lower()
    found = []
    for value in values:
        needle = value.lower()
        if len(needle) < 2:
            continue
        for m in re.finditer(re.escape(needle), text):
            s, e = m.start(), m.end()
            if s and text[s - 1].isalnum() and needle[0].isalnum():
                continue
            if e < len(text) and text[e].isalnum() and needle[-1].isalnum():
                continue
            if not any(a <= s and e <= b for a, b in regions):
                found.append(value)
                break
    return found
