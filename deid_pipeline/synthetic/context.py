"""Slot filling: one document's identities rendered in the surface forms notes use.

A ``DocContext`` answers every ``{slot}`` of the sentence templates. PHI slots
append a labelled piece holding only the identifying characters (``Dr. `` and
``MD`` stay filler, as in the i2b2 and PhysioNet annotation guidelines);
filler slots append look-alikes that must stay unlabelled (``BP 120/80``,
``1/2 tab``, ``K 3.9``, times, doses).
"""

from __future__ import annotations

import datetime as dt
import random

from deid_pipeline.synthetic.identity import (
    Facility,
    IdentityFactory,
    Patient,
    Person,
    Relative,
)
from deid_pipeline.synthetic.phrases import PATH_DX
from deid_pipeline.synthetic.text import Piece, render

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

# Date styles and how often each is the document's house style.
DATE_STYLES = (
    ("m/d", 5),
    ("m/d/yy", 4),
    ("m/d/yyyy", 4),
    ("mm/dd/yyyy", 6),
    ("mm/dd/yy", 2),
    ("dd-Mon-yy", 2),
    ("dd-MON-yyyy", 1),
    ("Month d, yyyy", 4),
    ("Mon d, yyyy", 2),
    ("Mon. d, yyyy", 1),
    ("d Month yyyy", 1),
    ("yyyy-mm-dd", 3),
    ("Month d", 2),
    ("Month dth", 1),
    ("mm-dd-yyyy", 1),
    ("m-d-yy", 1),
    ("yyyymmdd", 1),
)


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def format_date(d: dt.date, style: str) -> str:
    """Write ``d`` in a format of :data:`DATE_STYLES` or a month-year form."""
    month, mon = MONTHS[d.month - 1], MONTHS[d.month - 1][:3]
    table = {
        "m/d": f"{d.month}/{d.day}",
        "m/d/yy": f"{d.month}/{d.day}/{d.year % 100:02d}",
        "m/d/yyyy": f"{d.month}/{d.day}/{d.year}",
        "mm/dd/yyyy": f"{d.month:02d}/{d.day:02d}/{d.year}",
        "mm/dd/yy": f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",
        "dd-Mon-yy": f"{d.day:02d}-{mon}-{d.year % 100:02d}",
        "dd-MON-yyyy": f"{d.day:02d}-{mon.upper()}-{d.year}",
        "Month d, yyyy": f"{month} {d.day}, {d.year}",
        "Mon d, yyyy": f"{mon} {d.day}, {d.year}",
        "Mon. d, yyyy": f"{mon}. {d.day}, {d.year}",
        "d Month yyyy": f"{d.day} {month} {d.year}",
        "yyyy-mm-dd": d.isoformat(),
        "Month d": f"{month} {d.day}",
        "Month dth": f"{month} {_ordinal(d.day)}",
        "dth": _ordinal(d.day),
        "mm-dd-yyyy": f"{d.month:02d}-{d.day:02d}-{d.year}",
        "m-d-yy": f"{d.month}-{d.day}-{d.year % 100:02d}",
        "yyyymmdd": f"{d.year}{d.month:02d}{d.day:02d}",
        # month-year and year forms
        "Month yyyy": f"{month} {d.year}",
        "Mon yyyy": f"{mon} {d.year}",
        "mm/yyyy": f"{d.month:02d}/{d.year}",
        "m/yyyy": f"{d.month}/{d.year}",
        "Mon-yy": f"{mon}-{d.year % 100:02d}",
        "yyyy": str(d.year),
        "yy": f"{d.year % 100:02d}",
    }
    return table[style]


# Regional place names made of common words ("North Shore", "Oak Ridge", "Cape
# Pine"): how nurses name where a patient lives or comes from, with no cue in
# the words themselves. Built from generic parts, none taken from any corpus.
_REGION_DIRECTIONS = ("North", "South", "East", "West", "Upper", "Lower")
_REGION_LAND = ("Shore", "End", "Side", "Hills", "Valley", "Ridge", "Point",
                "Harbor", "Falls", "Woods", "Meadows", "Heights")
_REGION_LEADS = ("Cape", "Lake", "Mount", "Port", "Glen", "Bay")
_REGION_NATURE = ("Pine", "Cedar", "Oak", "Maple", "Elm", "Willow", "Stone",
                  "Rock", "Spring", "Clear", "Green", "Fox", "Deer", "Bear")


def region_name(rng: random.Random) -> str:
    """A regional place name of two common words."""
    form = rng.randrange(3)
    if form == 0:
        return f"{rng.choice(_REGION_DIRECTIONS)} {rng.choice(_REGION_LAND)}"
    if form == 1:
        return f"{rng.choice(_REGION_LEADS)} {rng.choice(_REGION_NATURE)}"
    return f"{rng.choice(_REGION_NATURE)} {rng.choice(_REGION_LAND)}"


def format_phone(digits: str, style: int) -> str:
    """Ten digits in one of several written forms (style 0..8)."""
    a, e, n = digits[:3], digits[3:6], digits[6:]
    forms = (
        f"({a}) {e}-{n}",
        f"{a}-{e}-{n}",
        f"{a}.{e}.{n}",
        f"({a}){e}-{n}",
        f"{e}-{n}",
        f"{a} {e} {n}",
        f"+1 {a} {e} {n}",
        f"{a}{e}{n}",
        f"1-{a}-{e}-{n}",
    )
    return forms[style % len(forms)]


class DocContext:
    """Everything one document may mention, and the slot functions that render it."""

    def __init__(
        self,
        ids: IdentityFactory,
        patient: Patient,
        date: dt.date,
        kind: str,
        age_threshold: int = 90,
    ) -> None:
        """Pick the document's clinicians, dates and house styles for ``patient``."""
        self.ids = ids
        self.fake = ids.fake
        self.rng: random.Random = ids.rng
        self.exam = ""
        self.exams: list[str] = []
        self.site = ""
        self.patient = patient
        self.kind = kind
        self.date = date
        self.age_threshold = age_threshold
        rng = self.rng
        pool = [d for d in ids.doctors if d != patient.pcp]
        self.doctors: list[Person] = rng.sample(pool, rng.randint(2, 4))
        self.attending = self.doctors[0]
        others = [h for h in ids.hospitals if h != patient.hospital]
        self.other_hospitals = rng.sample(others, min(2, len(others)))
        self.admit = date - dt.timedelta(days=rng.randint(0, 6))
        self.discharge = self.admit + dt.timedelta(days=rng.randint(1, 14))
        styles, weights = zip(*DATE_STYLES, strict=True)
        self.house_date_style = rng.choices(styles, weights)[0]
        self.house_phone_style = rng.randint(0, 8)
        self.current_relative: Relative = rng.choice(patient.relatives)
        self.current_doctor: Person = self.attending
        sex = patient.person.sex
        self.he, self.his = ("he", "his") if sex == "M" else ("she", "her")

    # -- rendering ----------------------------------------------------------

    def render(self, template: str, out: list[Piece] | None = None) -> list[Piece]:
        """Expand a template in this document's context."""
        return render(template, self.rng, self.slot, out)

    def slot(self, name: str, out: list[Piece]) -> None:
        """Dispatch ``{name:arg}`` to ``s_name(arg, out)``."""
        base, _, arg = name.partition(":")
        getattr(self, "s_" + base)(arg, out)

    def pick(self, *options: str) -> str:
        """One of ``options``, uniformly."""
        return self.rng.choice(options)

    def num(self, lo: float, hi: float, decimals: int = 0) -> str:
        """Draw a number uniformly and format it with ``decimals`` places."""
        if decimals:
            return f"{self.rng.uniform(lo, hi):.{decimals}f}"
        return str(self.rng.randint(int(lo), int(hi)))

    # -- names --------------------------------------------------------------

    @staticmethod
    def _title(person: Person, rng: random.Random) -> str:
        if person.sex == "M":
            return rng.choice(("Mr.", "Mr.", "Mr"))
        return rng.choice(("Mrs.", "Ms.", "Mrs.", "Miss", "Mrs", "Ms"))

    def _name_pieces(
        self, person: Person, form: str, label: str, out: list[Piece]
    ) -> None:
        p, rng = person, self.rng
        if form == "full":
            out.append((f"{p.first} {p.last}", label))
        elif form == "middle":
            out.append((f"{p.first} {p.middle[0]}. {p.last}", label))
        elif form == "formal":
            out.append((f"{p.last}, {p.first}", label))
        elif form == "formal_mi":
            out.append((f"{p.last}, {p.first} {p.middle[0]}", label))
        elif form == "last":
            out.append((p.last, label))
        elif form == "first":
            out.append((p.first, label))
        elif form == "initials":
            out.append(
                (
                    rng.choice(
                        (
                            f"{p.first[0]}.{p.last[0]}.",
                            p.initials,
                            f"{p.first[0]}{p.middle[0]}{p.last[0]}",
                        )
                    ),
                    label,
                )
            )
        elif form == "init_last":
            out.append((f"{p.first[0]}. {p.last}", label))
        elif form == "title":
            out.append((self._title(p, rng) + " ", None))
            out.append((p.last, label))
        else:  # pragma: no cover - programming error
            raise ValueError(form)

    def s_pt(self, arg: str, out: list[Piece]) -> None:
        """Render the patient: ``{pt}`` narrative forms, ``{pt:header}`` header."""
        if arg == "header":
            form = self.pick("formal", "formal", "formal_mi", "full", "middle")
        elif arg in ("", "any"):
            form = self.rng.choices(
                ("title", "full", "last", "first", "initials", "formal", "middle"),
                (6, 3, 2, 2, 1, 1, 1),
            )[0]
        else:
            form = arg
        self._name_pieces(self.patient.person, form, "PATIENT", out)

    def _doctor(self, who: str) -> Person:
        if who == "att":
            return self.attending
        if who == "pcp":
            return self.patient.pcp
        doctor = self.rng.choice(self.doctors[1:] or self.doctors)
        self.current_doctor = doctor
        return doctor

    def _doctor_pieces(self, doctor: Person, form: str, out: list[Piece]) -> None:
        rng = self.rng
        if form == "":
            form = rng.choices(
                ("dr", "dr_full", "md", "name_md", "init_md", "dr_init"),
                (8, 3, 2, 2, 1, 1),
            )[0]
        if form == "dr":
            out.append((rng.choice(("Dr. ", "Dr ", "Dr. ", "dr. ", "DR. ")), None))
            out.append((doctor.last, "DOCTOR"))
        elif form == "dr_full":
            out.append((rng.choice(("Dr. ", "Dr ")), None))
            out.append((f"{doctor.first} {doctor.last}", "DOCTOR"))
        elif form == "dr_init":
            out.append(("Dr. ", None))
            out.append((f"{doctor.first[0]}. {doctor.last}", "DOCTOR"))
        elif form == "md":
            out.append((doctor.last, "DOCTOR"))
            out.append((rng.choice((" MD", ", MD", " M.D.")), None))
        elif form == "name_md":
            out.append((f"{doctor.first} {doctor.last}", "DOCTOR"))
            out.append((rng.choice((", MD", " MD", ", M.D.")), None))
        elif form == "init_md":
            out.append((f"{doctor.first[0]}. {doctor.last}", "DOCTOR"))
            out.append((rng.choice((", MD", " MD")), None))
        elif form == "name":
            name = rng.choices(
                (
                    f"{doctor.first} {doctor.last}",
                    doctor.last,
                    f"{doctor.first} {doctor.middle[0]}. {doctor.last}",
                    f"{doctor.last}, {doctor.first}",
                    f"{doctor.first[0]}. {doctor.last}",
                ),
                (4, 2, 2, 2, 1),
            )[0]
            out.append((name, "DOCTOR"))
        elif form == "last":
            out.append((doctor.last, "DOCTOR"))
        elif form == "first":
            out.append((doctor.first, "DOCTOR"))
        elif form == "init":
            out.append((f"{doctor.first[0]}. {doctor.last}", "DOCTOR"))
        elif form == "staff":
            # Nurses, case managers, chaplains: a role word (or none), any form.
            role = rng.choice(("", "", "RN ", "NP ", "PA ", "SW ", "CM ",
                               "Rabbi ", "Chaplain ", "charge RN ", "resident "))
            if role:
                out.append((role, None))
            name = rng.choices(
                (f"{doctor.first[0]}. {doctor.last}", doctor.first,
                 f"{doctor.first} {doctor.last}", doctor.last),
                (3, 3, 2, 2),
            )[0]
            out.append((name, "DOCTOR"))
        elif form == "sig":
            if rng.random() < 0.5:
                out.append(
                    (f"{doctor.first} {doctor.middle[0]}. {doctor.last}", "DOCTOR")
                )
                out.append((rng.choice((", MD", ", M.D.", " MD", ", MD, PhD")), None))
            else:
                out.append((f"{doctor.last}, {doctor.first}", "DOCTOR"))
                out.append((rng.choice((" MD", ", MD", " M.D.")), None))
        else:  # pragma: no cover - programming error
            raise ValueError(form)

    def s_dr(self, arg: str, out: list[Piece]) -> None:
        """Render a doctor of this document (``{dr:name}``, ``{dr:sig}``, ...).

        ``{dr:drs}`` is two doctors after one title (``Drs Lee and Okafor``).
        """
        if arg == "drs":
            first, second = self.rng.sample(self.doctors, 2)
            out.append((self.pick("Drs ", "Drs. ", "drs ", "DRS "), None))
            out.append((first.last, "DOCTOR"))
            out.append((self.pick(" and ", " & ", "/", ", ", " + "), None))
            out.append((second.last, "DOCTOR"))
            return
        self._doctor_pieces(self._doctor("any"), arg, out)

    def s_att(self, arg: str, out: list[Piece]) -> None:
        """Render the attending physician."""
        self._doctor_pieces(self._doctor("att"), arg, out)

    def s_pcp(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's primary care physician."""
        self._doctor_pieces(self._doctor("pcp"), arg, out)

    def s_rel(self, arg: str, out: list[Piece]) -> None:
        """Render a relative: ``{rel}`` is ``wife Mary``, ``{rel:name}`` her name."""
        rng = self.rng
        if arg in ("", "new"):
            self.current_relative = rng.choice(self.patient.relatives)
        rel = self.current_relative
        p = rel.person
        if arg in ("", "new", "rel"):
            word = rel.relation
            if word == "daughter" and rng.random() < 0.2:
                word = rng.choice(("dtr", "dau"))
            if arg == "rel":
                out.append((word, None))
                return
            lead = rng.choice(("", "", f"{self.his} ", "pt's "))
            out.append((lead + word, None))
            out.append((rng.choice((" ", " ", ", ", " (")), None))
            paren = out[-1][0] == " ("
            form = rng.choices(("first", "full", "title"), (6, 3, 1))[0]
            self._name_pieces(p, form, "RELATIVE", out)
            if paren:
                out.append((")", None))
            return
        form = {"first": "first", "full": "full", "title": "title"}.get(
            arg, rng.choice(("first", "full", "first"))
        )
        self._name_pieces(p, form, "RELATIVE", out)

    # -- places -------------------------------------------------------------

    def _facility(self, arg: str) -> Facility:
        if arg.startswith("other"):
            return self.rng.choice(self.other_hospitals)
        if arg.startswith("facility"):
            return self.rng.choice(self.ids.facilities)
        return self.patient.hospital

    def s_hosp(self, arg: str, out: list[Piece]) -> None:
        """Render a hospital: own, ``{hosp:other}`` or ``{hosp:facility}``."""
        which, _, form = arg.partition(",")
        fac = self._facility(which)
        if not form:
            # Nurses write what they say: the initialism or the short name.
            draw = self.rng.random() if self.kind == "nursing" else 1.0
            form = "abbr" if draw < 0.3 else "short" if draw < 0.65 else "full"
        if form == "abbr" and not which.startswith("facility"):
            name = fac.abbrev
        elif form == "short" or (form == "abbr" and which.startswith("facility")):
            name = fac.short
        else:
            name = fac.name
        if self.kind == "nursing" and self.rng.random() < 0.15:
            name = name.lower()  # "transferred from st. mary's"
        out.append((name, "HOSPITAL"))

    def s_city(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's city, or the hospital's with ``{city:hosp}``."""
        addr = self.patient.hospital.address if arg == "hosp" else self.patient.address
        out.append((addr.city, "CITY"))

    def s_region(self, arg: str, out: list[Piece]) -> None:
        """Render a regional place name of common words (``North Shore``)."""
        out.append((region_name(self.rng), "LOCATION"))

    def s_state(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's state, abbreviated or written out."""
        addr = self.patient.address
        out.append(
            (addr.state if self.rng.random() < 0.6 else addr.state_name, "STATE")
        )

    def s_addr(self, arg: str, out: list[Piece]) -> None:
        """Render a full address: street, city, state, ZIP as four spans."""
        addr = self.patient.hospital.address if arg == "hosp" else self.patient.address
        rng = self.rng
        out.append((addr.street, "STREET"))
        out.append((rng.choice((", ", " ", "\n", ", ")), None))
        out.append((addr.city, "CITY"))
        out.append((rng.choice((", ", " ", ", ")), None))
        out.append((addr.state if rng.random() < 0.85 else addr.state_name, "STATE"))
        out.append((rng.choice((" ", "  ", " ")), None))
        out.append((addr.zip, "ZIP"))

    def s_street(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's street address alone."""
        out.append((self.patient.address.street, "STREET"))

    def s_room(self, arg: str, out: list[Piece]) -> None:
        """Render a room or bed number."""
        value = self.rng.choice(
            (
                self.num(100, 999),
                f"{self.num(2, 12)}{self.pick('A', 'B')}",
                f"{self.num(1, 9)}-{self.num(10, 60)}",
            )
        )
        out.append((value, "ROOM"))

    # -- dates and ages -----------------------------------------------------

    def _date_value(self, what: str) -> dt.date:
        rng, base = self.rng, self.date
        if what == "adm":
            return self.admit
        if what == "dc":
            return self.discharge
        if what == "dob":
            return self.patient.dob
        if what == "today":
            return base
        if what == "past":
            return base - dt.timedelta(days=rng.randint(30, 3650))
        if what == "prior":
            return base - dt.timedelta(days=rng.randint(1, 900))
        if what == "future":
            return base + dt.timedelta(days=rng.randint(5, 60))
        return base + dt.timedelta(days=rng.randint(-3, 3))

    def s_date(self, arg: str, out: list[Piece]) -> None:
        """Render a date ``{date:WHEN,STYLE}`` (WHEN: adm, dc, dob, past, ...)."""
        what, _, style = arg.partition(",")
        d = self._date_value(what)
        rng = self.rng
        if style == "range":
            # "10/2-10/5": two dates, the second a few days after the first.
            out.append((format_date(d, "m/d"), "DATE"))
            out.append((rng.choice(("-", " - ", " to ", "-")), None))
            end = d + dt.timedelta(days=rng.randint(1, 10))
            out.append((format_date(end, "m/d"), "DATE"))
            return
        if style == "md":
            style = "m/d"
        elif style == "ordinal":
            style = "dth"
        elif style == "short":
            style = rng.choice(("m/d", "m/d", "m/d/yy", "mm/dd"))
            style = "m/d" if style == "mm/dd" else style
        elif style == "long":
            style = rng.choice(
                ("Month d, yyyy", "Mon d, yyyy", "d Month yyyy", "Month dth")
            )
        elif style == "full":
            style = rng.choice(
                (
                    "mm/dd/yyyy",
                    "m/d/yyyy",
                    "Month d, yyyy",
                    "yyyy-mm-dd",
                    "dd-Mon-yy",
                    "mm-dd-yyyy",
                    "m/d/yy",
                )
            )
        elif style == "my":
            style = rng.choice(
                ("Month yyyy", "Mon yyyy", "mm/yyyy", "m/yyyy", "Mon-yy")
            )
        elif style == "year":
            style = "yyyy" if rng.random() < 0.85 else "yy"
        elif not style:
            if rng.random() < 0.6:
                style = self.house_date_style
            else:
                styles, weights = zip(*DATE_STYLES, strict=True)
                style = rng.choices(styles, weights)[0]
            if what in ("dob", "past") and style in ("m/d", "Month d", "Month dth"):
                style = "mm/dd/yyyy"
        out.append((format_date(d, style), "DATE"))

    def s_age(self, arg: str, out: list[Piece]) -> None:
        """Render the age in digits; it is AGE only from ``age_threshold`` up."""
        age = self.patient.age
        if arg == "decade" and age >= 90:
            out.append((f"{age // 10 * 10}s", "AGE"))
            return
        out.append((str(age), "AGE" if age >= self.age_threshold else None))

    # -- contact and ids ----------------------------------------------------

    def s_phone(self, arg: str, out: list[Piece]) -> None:
        """Render a phone (patient; ``:rel``, ``:hosp``, ``:fax``, ``:pager``)."""
        rng = self.rng
        if arg == "pager":
            out.append(
                (
                    rng.choice(
                        (
                            self.num(10000, 99999),
                            f"{self.num(1, 9)}-{self.num(1000, 9999)}",
                        )
                    ),
                    "PHONE",
                )
            )
            return
        digits = {
            "rel": self.current_relative.phone,
            "hosp": self.patient.hospital.phone,
            "work": self.patient.work_phone,
            "fax": self.patient.hospital.phone[:6] + self.num(1000, 9999),
        }.get(arg, self.patient.phone)
        style = self.house_phone_style if rng.random() < 0.5 else rng.randint(0, 8)
        value = format_phone(digits, style)
        if arg in ("hosp", "work") and rng.random() < 0.15:
            value += f" x{self.num(100, 9999)}"
        out.append((value, "FAX" if arg == "fax" else "PHONE"))

    def s_email(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's e-mail, or a clinician's with ``{email:dr}``."""
        if arg == "dr":
            d = self.current_doctor
            out.append(
                (
                    f"{d.first[0].lower()}{d.last.lower()}@"
                    f"{self.patient.hospital.domain}",
                    "EMAIL",
                )
            )
        else:
            out.append((self.patient.email, "EMAIL"))

    def s_url(self, arg: str, out: list[Piece]) -> None:
        """Render a URL of the hospital's portal or a patient page."""
        domain = self.patient.hospital.domain
        value = self.rng.choice(
            (
                f"www.{domain}",
                f"https://www.{domain}/patients",
                f"http://portal.{domain}/chart/{self.patient.mrn}",
                f"https://mychart.{domain}",
                f"{domain}/radiology",
            )
        )
        out.append((value, "URL"))

    def s_ip(self, arg: str, out: list[Piece]) -> None:
        """Render an IPv4 address (workstation, device)."""
        out.append(
            (
                self.fake.ipv4_private()
                if self.rng.random() < 0.7
                else self.fake.ipv4_public(),
                "IPADDR",
            )
        )

    def s_mrn(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's MRN, sometimes grouped with dashes."""
        mrn = self.patient.alt_mrn if arg == "alt" else self.patient.mrn
        if self.rng.random() < 0.15 and len(mrn) == 7:
            mrn = f"{mrn[:3]}-{mrn[3:5]}-{mrn[5:]}"
        out.append((mrn, "MEDICALRECORD"))

    def s_ssn(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's SSN, with or without dashes."""
        ssn = self.patient.ssn
        out.append((ssn if self.rng.random() < 0.8 else ssn.replace("-", ""), "SSN"))

    def s_acct(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's account number."""
        out.append((self.patient.account, "ACCOUNT"))

    def s_plan(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's health plan member id."""
        out.append((self.patient.healthplan, "HEALTHPLAN"))

    def s_acc(self, arg: str, out: list[Piece]) -> None:
        """Render an accession or other document number (IDNUM)."""
        rng = self.rng
        yy = f"{self.date.year % 100:02d}"
        value = rng.choice(
            (
                f"S{yy}-{self.num(1000, 99999)}",
                f"{self.pick('SP', 'CY', 'RAD', 'CT')}-{yy}-{self.num(10000, 999999)}",
                self.ids.digits(rng.choice((8, 9, 10))),
                f"{self.pick('A', 'R', 'E')}{self.ids.digits(7)}",
            )
        )
        out.append((value, "IDNUM"))

    def s_lic(self, arg: str, out: list[Piece]) -> None:
        """Render a DEA or state licence number of a clinician."""
        letters = self.fake.lexify("??").upper()
        out.append((f"{letters}{self.ids.digits(7)}", "LICENSE"))

    def s_device(self, arg: str, out: list[Piece]) -> None:
        """Render a device serial number (pacemaker, pump)."""
        out.append((self.fake.bothify("??#######").upper(), "DEVICE"))

    def s_job(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's profession."""
        job = self.patient.job.split(",")[0].split("(")[0].strip().lower()
        out.append((job, "PROFESSION"))

    def s_employer(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's employer or another organization."""
        out.append((self.patient.employer, "ORGANIZATION"))

    def s_exam(self, arg: str, out: list[Piece]) -> None:
        """Render the exam this radiology report reads."""
        self._filler(self.exam, out)

    def s_site(self, arg: str, out: list[Piece]) -> None:
        """Render the specimen site of the current pathology part."""
        self._filler(self.site, out)

    def s_pathdx(self, arg: str, out: list[Piece]) -> None:
        """Render a pathology diagnosis."""
        self.render(self.rng.choice(PATH_DX), out)

    def s_org(self, arg: str, out: list[Piece]) -> None:
        """Render a home-care or community organization tied to the patient's city."""
        city = self.patient.address.city
        out.append(
            (
                self.rng.choice(
                    (
                        f"VNA of {city}",
                        f"{city} Home Care",
                        f"{city} Council on Aging",
                        f"{self.fake.last_name()} Home Health",
                    )
                ),
                "ORGANIZATION",
            )
        )

    # -- filler (never labelled) -------------------------------------------

    def _filler(self, text: str, out: list[Piece]) -> None:
        out.append((text, None))

    def s_n(self, arg: str, out: list[Piece]) -> None:
        """Render a number ``{n:lo-hi}``; a trailing ``.d`` on ``hi`` asks d decimals.

        ``{n:2-9}`` is an integer, ``{n:2.1-24.9.1}`` one decimal between 2.1
        and 24.9, ``{n:30-120.1}`` one decimal between 30 and 120.
        """
        lo, _, hi = arg.partition("-")
        decimals = 0
        if "." in hi:
            hi, _, d = hi.rpartition(".")
            decimals = int(d)
        self._filler(self.num(float(lo), float(hi), decimals), out)

    def s_bp(self, arg: str, out: list[Piece]) -> None:
        """Render a blood pressure like ``120/80``."""
        sys_ = self.rng.randint(78, 190)
        self._filler(f"{sys_}/{self.rng.randint(38, min(sys_ - 20, 110))}", out)

    def s_hr(self, arg: str, out: list[Piece]) -> None:
        """Render a heart rate."""
        self._filler(self.num(48, 135), out)

    def s_rr(self, arg: str, out: list[Piece]) -> None:
        """Render a respiratory rate."""
        self._filler(self.num(10, 32), out)

    def s_temp(self, arg: str, out: list[Piece]) -> None:
        """Render a temperature in F or C."""
        self._filler(
            self.num(96.5, 102.8, 1)
            if self.rng.random() < 0.7
            else self.num(35.8, 39.4, 1),
            out,
        )

    def s_sat(self, arg: str, out: list[Piece]) -> None:
        """Render an oxygen saturation."""
        self._filler(self.num(86, 100), out)

    def s_frac(self, arg: str, out: list[Piece]) -> None:
        """Render a dose fraction like ``1/2`` or ``1 1/2``."""
        self._filler(self.pick("1/2", "1/2", "1/4", "3/4", "1 1/2", "2 1/2"), out)

    def s_time(self, arg: str, out: list[Piece]) -> None:
        """Render a clock time in a nursing form (``0400``, ``4pm``, ``16:30``)."""
        h, m = self.rng.randint(0, 23), self.rng.choice((0, 0, 15, 30, 45, 10, 20))
        self._filler(
            self.pick(
                f"{h:02d}{m:02d}",
                f"{h:02d}:{m:02d}",
                f"{(h % 12) or 12}{'am' if h < 12 else 'pm'}",
                f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}",
            ),
            out,
        )

    def s_lab(self, arg: str, out: list[Piece]) -> None:
        """Render a lab value like ``K 3.9`` or ``Hct 28.4``."""
        self._filler(self.rng.choice(_LAB_FORMS)(self), out)

    def s_labs(self, arg: str, out: list[Piece]) -> None:
        """Render several lab values separated the way notes separate them."""
        sep = self.pick(", ", " ", "; ", ", ")
        n = self.rng.randint(2, 5)
        self._filler(sep.join(self.rng.choice(_LAB_FORMS)(self) for _ in range(n)), out)

    def s_med(self, arg: str, out: list[Piece]) -> None:
        """Render a medication order with dose, route and frequency."""
        self._filler(self.rng.choice(_MED_FORMS)(self), out)

    def s_pmh(self, arg: str, out: list[Piece]) -> None:
        """Render a comma-separated past medical history list."""
        items = self.rng.sample(_PMH, self.rng.randint(2, 6))
        self._filler(", ".join(items), out)

    def s_dx(self, arg: str, out: list[Piece]) -> None:
        """Render a working diagnosis."""
        self._filler(self.rng.choice(_DX), out)

    def s_sx(self, arg: str, out: list[Piece]) -> None:
        """Render a presenting symptom."""
        self._filler(self.rng.choice(_SX), out)

    def s_proc(self, arg: str, out: list[Piece]) -> None:
        """Render a procedure."""
        self._filler(self.rng.choice(_PROC), out)

    def s_abx(self, arg: str, out: list[Piece]) -> None:
        """Render an antibiotic."""
        self._filler(self.rng.choice(_ABX), out)

    def s_sex(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's sex as a word, ``:noun`` or ``:letter``."""
        male = self.patient.person.sex == "M"
        if arg == "letter":
            self._filler("M" if male else "F", out)
        elif arg == "noun":
            self._filler(
                self.pick("man", "male", "gentleman")
                if male
                else self.pick("woman", "female", "lady"),
                out,
            )
        else:
            self._filler("male" if male else "female", out)

    def s_he(self, arg: str, out: list[Piece]) -> None:
        """Render subject pronoun of the patient."""
        self._filler(self.he.capitalize() if arg == "cap" else self.he, out)

    def s_his(self, arg: str, out: list[Piece]) -> None:
        """Render possessive pronoun of the patient."""
        self._filler(self.his.capitalize() if arg == "cap" else self.his, out)

    def s_size(self, arg: str, out: list[Piece]) -> None:
        """Render a size in cm, one to three dimensions."""
        dims = [self.num(0.2, 9.5, 1) for _ in range(self.rng.randint(1, 3))]
        self._filler(" x ".join(dims) + self.pick(" cm", " cm", "cm", " mm"), out)

    def s_dose(self, arg: str, out: list[Piece]) -> None:
        """Render a dose with unit."""
        mg = self.rng.choice((2.5, 5, 10, 12.5, 20, 25, 40, 50, 80, 100))
        self._filler(
            self.pick(
                f"{mg} mg",
                f"{self.num(1, 10)} mg",
                f"{self.rng.randint(1, 4) * 250} mg",
                f"{self.num(1, 20)} units",
                f"{self.rng.randint(1, 4) * 10} meq",
            ),
            out,
        )

    def s_vent(self, arg: str, out: list[Piece]) -> None:
        """Render ventilator settings."""
        self._filler(
            f"{self.pick('AC', 'A/C', 'SIMV', 'PSV', 'CPAP')} "
            f"{self.rng.choice((400, 450, 500, 550, 600))} x {self.num(10, 22)} "
            f"PEEP {self.num(5, 12)} FiO2 {self.rng.choice((30, 40, 50, 60, 100))}%",
            out,
        )

    def s_abg(self, arg: str, out: list[Piece]) -> None:
        """Render an arterial blood gas ``7.32/45/88``."""
        self._filler(
            f"{self.num(7.18, 7.52, 2)}/{self.num(28, 70)}/{self.num(55, 320)}", out
        )

    def s_vsep(self, arg: str, out: list[Piece]) -> None:
        """Render a separator between vital signs (``|`` in flowsheet text)."""
        self._filler(self.pick(" | ", "  ", ", ", " / ", " "), out)

    def s_hsep(self, arg: str, out: list[Piece]) -> None:
        """Render a separator between header fields on one line, or a line break."""
        self._filler(self.pick("   ", "  ", "\n", " | ", "\n"), out)

    def s_pain(self, arg: str, out: list[Piece]) -> None:
        """Render a pain score ``4/10``."""
        self._filler(f"{self.num(0, 10)}/10", out)

    def s_strength(self, arg: str, out: list[Piece]) -> None:
        """Render a motor strength grade ``5/5``."""
        self._filler(f"{self.num(2, 5)}/5", out)


def _k(c: DocContext) -> str:
    return f"{c.pick('K', 'K', 'k', 'K+')} {c.num(2.8, 5.9, 1)}"


_LAB_FORMS = (
    _k,
    lambda c: f"{c.pick('Na', 'NA', 'na')} {c.num(124, 149)}",
    lambda c: f"{c.pick('BUN', 'bun')} {c.num(6, 95)}",
    lambda c: f"{c.pick('Cr', 'CR', 'creat')} {c.num(0.5, 4.9, 1)}",
    lambda c: f"{c.pick('Hct', 'HCT', 'hct')} {c.num(21, 45, 1)}",
    lambda c: f"{c.pick('Hgb', 'hgb', 'HB')} {c.num(6.8, 15.5, 1)}",
    lambda c: f"{c.pick('WBC', 'wbc')} {c.num(2.1, 24.9, 1)}",
    lambda c: f"{c.pick('plt', 'PLT', 'plts')} {c.num(40, 450)}",
    lambda c: f"{c.pick('INR', 'inr')} {c.num(0.9, 7.5, 1)}",
    lambda c: f"{c.pick('PTT', 'ptt')} {c.num(22, 120, 1)}",
    lambda c: f"{c.pick('PT', 'pt')} {c.num(11, 30, 1)}",
    lambda c: f"{c.pick('Mg', 'MG', 'mg')} {c.num(1.2, 2.9, 1)}",
    lambda c: f"{c.pick('Ca', 'ca')} {c.num(7.2, 10.8, 1)}",
    lambda c: f"{c.pick('glucose', 'BS', 'FS')} {c.num(55, 380)}",
    lambda c: f"{c.pick('lactate', 'lac')} {c.num(0.6, 6.5, 1)}",
    lambda c: f"{c.pick('trop', 'TnT', 'troponin')} {c.num(0.01, 2.5, 2)}",
    lambda c: f"CK {c.num(40, 2400)}",
    lambda c: f"ABG {c.num(7.18, 7.52, 2)}/{c.num(28, 70)}/{c.num(55, 320)}",
    lambda c: f"BUN/Cr {c.num(6, 95)}/{c.num(0.5, 4.9, 1)}",
    lambda c: f"WBC {c.num(2.1, 24.9, 1)} x 10^9/L",
    lambda c: f"TSH {c.num(0.1, 9.9, 2)}",
    lambda c: f"{c.pick('plt', 'PLT')} {c.num(40, 450)} x10^3/uL",
    lambda c: f"HbA1c {c.num(5.2, 11.5, 1)}%",
    lambda c: f"albumin {c.num(1.8, 4.6, 1)}",
    lambda c: f"pH {c.num(7.18, 7.52, 2)}",
)

_MEDS = (
    "lasix",
    "Lasix",
    "metoprolol",
    "Lopressor",
    "captopril",
    "lisinopril",
    "amiodarone",
    "digoxin",
    "coumadin",
    "Coumadin",
    "heparin",
    "aspirin",
    "ASA",
    "plavix",
    "Plavix",
    "atorvastatin",
    "Lipitor",
    "tylenol",
    "Tylenol",
    "morphine",
    "dilaudid",
    "Dilaudid",
    "ativan",
    "haldol",
    "Haldol",
    "zosyn",
    "vancomycin",
    "levofloxacin",
    "Flagyl",
    "protonix",
    "Protonix",
    "insulin",
    "lantus",
    "senna",
    "colace",
    "KCL",
    "magnesium sulfate",
    "prednisone",
    "solumedrol",
    "albuterol",
    "atrovent",
    "nystatin",
    "oxycodone",
    "Percocet",
    "neurontin",
    "synthroid",
    "Zoloft",
    "seroquel",
    "diltiazem",
)


_MG = (2.5, 5, 10, 20, 25, 40, 50, 80, 100, 325, 500)
_FREQ = ("daily", "qd", "BID", "bid", "TID", "q6h", "q8h", "qhs", "prn", "q4h prn")

_MED_FORMS = (
    lambda c: (
        f"{c.rng.choice(_MEDS)} {c.rng.choice(_MG)} mg "
        f"{c.pick('po', 'PO', 'IV', 'iv', 'SC', 'SL')} "
        f"{c.rng.choice(_FREQ)}"
    ),
    lambda c: (
        f"{c.rng.choice(_MEDS)} {c.num(1, 2)} tab {c.pick('po', 'PO')} "
        f"{c.pick('daily', 'BID', 'qhs')}"
    ),
    lambda c: (
        f"{c.rng.choice(_MEDS)} {c.pick('1/2', '1/2', '1 1/2')} tab "
        f"{c.pick('po', 'PO')} {c.pick('daily', 'BID', 'qod')}"
    ),
    lambda c: (
        f"{c.rng.choice(_MEDS)} gtt at {c.num(1, 20)} "
        f"{c.pick('mg/hr', 'u/hr', 'mcg/min')}"
    ),
    lambda c: (
        f"{c.rng.choice(_MEDS)} {c.rng.randint(1, 4) * 250} mg IV "
        f"q{c.pick('8', '12', '24')}h"
    ),
    lambda c: f"KCL {c.rng.randint(1, 6) * 10} meq {c.pick('po', 'iv', 'IV')}",
    lambda c: f"insulin SS per protocol, {c.num(2, 12)} units given",
    lambda c: f"{c.rng.choice(_MEDS)} {c.num(1, 4)} mg {c.pick('IV', 'po')} x1",
)

_PMH = (
    "CAD",
    "s/p MI",
    "HTN",
    "hypertension",
    "NIDDM",
    "IDDM",
    "DM2",
    "CHF",
    "afib",
    "AFIB",
    "COPD",
    "asthma",
    "CRI",
    "CKD stage 3",
    "ESRD on HD",
    "PVD",
    "CVA",
    "TIA",
    "hypothyroidism",
    "hyperlipidemia",
    "GERD",
    "BPH",
    "depression",
    "anxiety",
    "dementia",
    "Parkinson's disease",
    "OSA on CPAP",
    "obesity",
    "PUD",
    "cirrhosis",
    "HCV",
    "ETOH abuse",
    "gout",
    "osteoarthritis",
    "breast CA s/p lumpectomy",
    "prostate CA",
    "DVT",
    "PE on coumadin",
    "AAA repair",
    "pulm HTN",
    "anemia",
    "Alzheimer's",
    "Hodgkin lymphoma",
)
_DX = (
    "pneumonia",
    "CHF exacerbation",
    "urosepsis",
    "COPD flare",
    "GI bleed",
    "NSTEMI",
    "DKA",
    "altered mental status",
    "hypotension",
    "syncope",
    "acute renal failure",
    "cellulitis",
    "pancreatitis",
    "SBO",
    "PE",
    "CVA",
    "hyperkalemia",
    "respiratory failure",
    "afib with RVR",
    "fall with hip fracture",
    "C. diff colitis",
    "alcohol withdrawal",
    "hypoglycemia",
    "line sepsis",
)
_SX = (
    "chest pain",
    "SOB",
    "shortness of breath",
    "dyspnea on exertion",
    "fever",
    "abdominal pain",
    "nausea and vomiting",
    "BRBPR",
    "melena",
    "leg weakness",
    "confusion",
    "dizziness",
    "cough",
    "hematemesis",
    "palpitations",
    "syncope",
    "decreased PO intake",
    "lethargy",
    "back pain",
    "headache",
)
_PROC = (
    "cardiac cath",
    "ERCP",
    "EGD",
    "colonoscopy",
    "CT scan",
    "MRI",
    "TEE",
    "echo",
    "PICC placement",
    "bronchoscopy",
    "thoracentesis",
    "paracentesis",
    "IR guided drainage",
    "CABG",
    "PTCA with stent",
    "pacer placement",
    "HD",
    "dialysis",
    "LP",
    "trach",
    "PEG placement",
    "ORIF",
)
_ABX = (
    "vanco/zosyn",
    "levofloxacin",
    "ceftriaxone",
    "flagyl",
    "cefepime",
    "bactrim",
    "meropenem",
    "azithromycin",
    "cipro",
    "linezolid",
)
