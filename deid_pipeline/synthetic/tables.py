"""A synthetic research extract: patients, encounters and notes, with gold.

``generate --kind tables --count N`` writes, for N patients:

- ``patients.csv``: ``patient_id, first_name, last_name, birth_date, sex, zip``
- ``encounters.csv``: ``encounter_id, patient_id, admit_date, discharge_date,
  age, zip, service``
- ``notes.csv``: ``note_id, patient_id, encounter_id, note_date, note_time,
  author_id, service, note_type, text``; the text mentions the same people,
  dates and ids as the columns (name, MRN, encounter id, admission and birth
  dates, a ZIP code, the author);
- ``<table>.policy.yaml``: a column policy for each (docs/tables.md);
- ``gold.jsonl``: each note's exact PHI spans (the notes' gold format of
  ``samples/README.md``).

Some patients are over 89 and some live in restricted ZIP3 areas, so the
Safe Harbor rules have work to do. ``night`` > 1 gives the same patients with
the encounters and notes of nights 1 to N (a later nightly export of the
same source, with new rows). Same seed, same bytes.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
from collections.abc import Iterator

from deid_pipeline.model import PhiSpan
from deid_pipeline.synthetic.identity import derive_seed
from deid_pipeline.synthetic.notes import new_faker

__all__ = ["POLICIES", "write_tables"]

POLICIES = {
    "patients": """\
# patients.csv: one row per patient
columns:
  patient_id: {action: person, doc: "Pseudonymous person id (the MRN, keyed)."}
  first_name: {action: drop, seed: PATIENT}
  last_name: {action: drop, seed: PATIENT}
  birth_date: birth_date
  sex: keep
  zip: zip
""",
    "encounters": """\
# encounters.csv: one row per hospital encounter
columns:
  encounter_id: {action: pseudonym, domain: encounter}
  patient_id: person
  admit_date: date
  discharge_date: date
  age: age
  zip: zip
  service: keep
""",
    "notes": """\
# notes.csv: one row per note; its text is de-identified with the tagger
columns:
  note_id: {action: pseudonym, domain: note}
  patient_id: person
  encounter_id: {action: pseudonym, domain: encounter}
  note_date: date
  note_time: keep
  author_id: {action: pseudonym, domain: provider}
  service: keep
  note_type: keep
  text: text
""",
}

_SERVICES = ("Medicine", "Cardiology", "Surgery", "Oncology", "Neurology")
_NOTE_TYPES = ("Progress", "Discharge summary", "Consult", "Nursing")
_RESTRICTED = ("036", "059", "102", "556", "821")
_FINDINGS = (
    "Vital signs stable, afebrile overnight.",
    "Tolerating a regular diet; ambulating with assistance.",
    "Chest x-ray shows no acute process.",
    "Creatinine improved to 1.1 from 1.6 on admission.",
    "Pain controlled on oral acetaminophen.",
    "Telemetry without events; continue current beta blocker.",
    "Wound clean, dry and intact; dressing changed.",
)


class _Text:
    """A note's text built piece by piece, with its gold spans."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[PhiSpan] = []
        self.length = 0

    def add(self, text: str, label: str | None = None) -> None:
        if label:
            self.spans.append(PhiSpan(self.length, self.length + len(text), label,
                                      "gold"))
        self.parts.append(text)
        self.length += len(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _us(day: datetime.date) -> str:
    return f"{day.month}/{day.day}/{day.year}"


def _patients(count: int, seed: int) -> list[dict]:
    fake = new_faker(seed, "tables-patients")
    rng = fake.random
    people = []
    for i in range(count):
        sex = rng.choice("FM")
        first = fake.first_name_female() if sex == "F" else fake.first_name_male()
        old = rng.random() < 0.04
        birth = fake.date_between(datetime.date(1925, 1, 1) if old
                                  else datetime.date(1940, 1, 1),
                                  datetime.date(1933, 12, 31) if old
                                  else datetime.date(2004, 12, 31))
        zip3 = (rng.choice(_RESTRICTED) if rng.random() < 0.05
                else f"{rng.randint(10, 999):03d}")
        people.append({
            "patient_id": f"{derive_seed(seed, 'mrn', i) % 10**9:09d}",
            "first_name": first, "last_name": fake.last_name(),
            "birth_date": birth.isoformat(), "sex": sex,
            "zip": f"{zip3}{rng.randint(0, 99):02d}",
            "city": fake.city(),
        })
    return people


def _rows(people: list[dict], seed: int, night: int
          ) -> Iterator[tuple[dict, dict, list[PhiSpan]]]:
    """(encounter, note, the note's gold spans) of nights 1 to ``night``."""
    for k in range(1, night + 1):
        yield from _night_rows(people, seed, k)


def _night_rows(people: list[dict], seed: int, night: int
                ) -> Iterator[tuple[dict, dict, list[PhiSpan]]]:
    fake = new_faker(seed, f"tables-night-{night}")
    rng = fake.random
    doctors = new_faker(seed, "tables-doctors")
    authors = [f"P{derive_seed(seed, 'author', i) % 10**6:06d}" for i in range(40)]
    doctors = [doctors.last_name() for _ in authors]
    for n, person in enumerate(people):
        birth = datetime.date.fromisoformat(person["birth_date"])
        for e in range(rng.randint(1, 4)):
            admit = fake.date_between(datetime.date(2015, 1, 1),
                                      datetime.date(2024, 12, 31))
            discharge = admit + datetime.timedelta(days=rng.randint(0, 14))
            age = admit.year - birth.year - ((admit.month, admit.day)
                                             < (birth.month, birth.day))
            encounter = {
                "encounter_id":
                    f"E{derive_seed(seed, 'enc', night, n, e) % 10**10:010d}",
                "patient_id": person["patient_id"],
                "admit_date": admit.isoformat(),
                "discharge_date": discharge.isoformat(),
                "age": str(age), "zip": person["zip"],
                "service": rng.choice(_SERVICES),
            }
            a = rng.randrange(len(authors))
            stay = (discharge - admit).days
            note_day = admit + datetime.timedelta(days=rng.randint(0, stay))
            t = _Text()
            t.add(f"{rng.choice(_NOTE_TYPES)} note. Patient ")
            t.add(f"{person['first_name']} {person['last_name']}", "PATIENT")
            t.add(" (MRN ")
            t.add(person["patient_id"], "MEDICALRECORD")
            t.add("), ")
            t.add(str(age), "AGE" if age > 89 else None)
            t.add(f" year old {'woman' if person['sex'] == 'F' else 'man'}, DOB ")
            t.add(_us(birth), "DATE")
            t.add(", admitted on ")
            t.add(_us(admit), "DATE")
            t.add(" (encounter ")
            t.add(encounter["encounter_id"], "IDNUM")
            t.add("). Lives in ")
            t.add(person["city"], "CITY")
            t.add(", ZIP ")
            t.add(person["zip"], "ZIP")
            t.add(". " + " ".join(rng.sample(_FINDINGS, 3)) + " Seen today, ")
            t.add(_us(note_day), "DATE")
            t.add("; plan discussed with Dr. ")
            t.add(doctors[a], "DOCTOR")
            t.add(". Expected discharge ")
            t.add(_us(discharge), "DATE")
            t.add(".")
            note = {
                "note_id": f"N{derive_seed(seed, 'note', night, n, e) % 10**8:08d}",
                "patient_id": person["patient_id"],
                "encounter_id": encounter["encounter_id"],
                "note_date": note_day.isoformat(),
                "note_time":
                    f"{rng.randint(6, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                "author_id": authors[a], "service": encounter["service"],
                "note_type": t.parts[0].split(" note")[0], "text": t.text,
            }
            yield encounter, note, t.spans


def _csv(rows: list[dict], columns: list[str]) -> str:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_tables(directory: str, count: int, seed: int, night: int = 1
                 ) -> tuple[int, int, int, int]:
    """Write the export under ``directory``: (patients, encounters, notes, spans)."""
    people = _patients(count, seed)
    encounters, notes, gold = [], [], []
    for encounter, note, spans in _rows(people, seed, night):
        encounters.append(encounter)
        notes.append(note)
        gold.append(json.dumps({
            "id": note["note_id"], "text": note["text"],
            "person_key": note["patient_id"], "kind": "table-note",
            "spans": [{"start": s.start, "end": s.end, "label": s.label}
                      for s in spans], "header_identifiers": []},
            ensure_ascii=False) + "\n")
    files = {
        "patients.csv": _csv(people, ["patient_id", "first_name", "last_name",
                                      "birth_date", "sex", "zip"]),
        "encounters.csv": _csv(encounters, list(encounters[0]) if encounters else []),
        "notes.csv": _csv(notes, list(notes[0]) if notes else []),
        "gold.jsonl": "".join(gold),
        **{f"{name}.policy.yaml": text for name, text in POLICIES.items()},
    }
    os.makedirs(directory, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8",
                  newline="") as fh:
            fh.write(text)
    n_spans = sum(len(json.loads(g)["spans"]) for g in gold)
    return len(people), len(encounters), len(notes), n_spans
