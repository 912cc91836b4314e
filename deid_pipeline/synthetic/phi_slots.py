"""The PHI slots of the note templates: people, places, dates, contacts, ids.

Each appends a labelled piece holding only the identifying characters
(``Dr. `` and ``MD`` stay filler, as in the i2b2 and PhysioNet annotation
guidelines). A mixin of :class:`~deid_pipeline.synthetic.context.DocContext`,
whose identities (``patient``, ``doctors``, dates, house styles) it reads.
"""

from __future__ import annotations

import datetime as dt
import random

from deid_pipeline.synthetic.formats import (
    DATE_STYLES,
    format_date,
    format_phone,
    region_name,
)
from deid_pipeline.synthetic.identity import Facility, Person
from deid_pipeline.synthetic.slots import SlotTable
from deid_pipeline.synthetic.text import Piece

__all__ = ["PHI_SLOTS", "PhiSlots"]

PHI_SLOTS = SlotTable()


class PhiSlots:
    """Slots whose pieces are PHI of the document's patient and clinicians."""

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

    @PHI_SLOTS("pt")
    def patient_name(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("dr")
    def doctor_name(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("att")
    def attending_name(self, arg: str, out: list[Piece]) -> None:
        """Render the attending physician."""
        self._doctor_pieces(self._doctor("att"), arg, out)

    @PHI_SLOTS("pcp")
    def primary_care_name(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's primary care physician."""
        self._doctor_pieces(self._doctor("pcp"), arg, out)

    @PHI_SLOTS("rel")
    def relative_name(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("hosp")
    def hospital_name(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("city")
    def city_name(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's city, or the hospital's with ``{city:hosp}``."""
        addr = self.patient.hospital.address if arg == "hosp" else self.patient.address
        out.append((addr.city, "CITY"))

    @PHI_SLOTS("region")
    def region_place(self, arg: str, out: list[Piece]) -> None:
        """Render a regional place name of common words (``North Shore``)."""
        out.append((region_name(self.rng), "LOCATION"))

    @PHI_SLOTS("state")
    def state_name(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's state, abbreviated or written out."""
        addr = self.patient.address
        out.append(
            (addr.state if self.rng.random() < 0.6 else addr.state_name, "STATE")
        )

    @PHI_SLOTS("addr")
    def full_address(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("street")
    def street_line(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's street address alone."""
        out.append((self.patient.address.street, "STREET"))

    @PHI_SLOTS("room")
    def room_number(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("date")
    def date_text(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("age")
    def age_text(self, arg: str, out: list[Piece]) -> None:
        """Render the age in digits; it is AGE only from ``age_threshold`` up."""
        age = self.patient.age
        if arg == "decade" and age >= 90:
            out.append((f"{age // 10 * 10}s", "AGE"))
            return
        out.append((str(age), "AGE" if age >= self.age_threshold else None))

    # -- contact and ids ----------------------------------------------------

    @PHI_SLOTS("phone")
    def phone_number(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("email")
    def email_address(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("url")
    def web_address(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("ip")
    def ip_address(self, arg: str, out: list[Piece]) -> None:
        """Render an IPv4 address (workstation, device)."""
        out.append(
            (
                self.fake.ipv4_private()
                if self.rng.random() < 0.7
                else self.fake.ipv4_public(),
                "IPADDR",
            )
        )

    @PHI_SLOTS("mrn")
    def medical_record_number(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's MRN, sometimes grouped with dashes."""
        mrn = self.patient.alt_mrn if arg == "alt" else self.patient.mrn
        if self.rng.random() < 0.15 and len(mrn) == 7:
            mrn = f"{mrn[:3]}-{mrn[3:5]}-{mrn[5:]}"
        out.append((mrn, "MEDICALRECORD"))

    @PHI_SLOTS("ssn")
    def social_security_number(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's SSN, with or without dashes."""
        ssn = self.patient.ssn
        out.append((ssn if self.rng.random() < 0.8 else ssn.replace("-", ""), "SSN"))

    @PHI_SLOTS("acct")
    def account_number(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's account number."""
        out.append((self.patient.account, "ACCOUNT"))

    @PHI_SLOTS("plan")
    def health_plan_id(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's health plan member id."""
        out.append((self.patient.healthplan, "HEALTHPLAN"))

    @PHI_SLOTS("acc")
    def accession_number(self, arg: str, out: list[Piece]) -> None:
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

    @PHI_SLOTS("lic")
    def licence_number(self, arg: str, out: list[Piece]) -> None:
        """Render a DEA or state licence number of a clinician."""
        letters = self.fake.lexify("??").upper()
        out.append((f"{letters}{self.ids.digits(7)}", "LICENSE"))

    @PHI_SLOTS("device")
    def device_serial(self, arg: str, out: list[Piece]) -> None:
        """Render a device serial number (pacemaker, pump)."""
        out.append((self.fake.bothify("??#######").upper(), "DEVICE"))

    @PHI_SLOTS("job")
    def profession(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's profession."""
        job = self.patient.job.split(",")[0].split("(")[0].strip().lower()
        out.append((job, "PROFESSION"))

    @PHI_SLOTS("employer")
    def employer_name(self, arg: str, out: list[Piece]) -> None:
        """Render the patient's employer or another organization."""
        out.append((self.patient.employer, "ORGANIZATION"))

    @PHI_SLOTS("org")
    def organization_name(self, arg: str, out: list[Piece]) -> None:
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
