"""Slot filling: one document's identities rendered in the surface forms notes use.

A ``DocContext`` answers every ``{slot}`` of the sentence templates: the PHI
slots (:mod:`~deid_pipeline.synthetic.phi_slots`) append labelled pieces,
the filler slots (:mod:`~deid_pipeline.synthetic.filler_slots`) look-alikes
that must stay unlabelled; :mod:`~deid_pipeline.synthetic.formats` writes
dates and phones the ways notes write them.
"""

from __future__ import annotations

import datetime as dt
import random

from deid_pipeline.synthetic.filler_slots import FILLER_SLOTS, FillerSlots
from deid_pipeline.synthetic.formats import DATE_STYLES
from deid_pipeline.synthetic.identity import (
    IdentityFactory,
    Patient,
    Person,
    Relative,
)
from deid_pipeline.synthetic.phi_slots import PHI_SLOTS, PhiSlots
from deid_pipeline.synthetic.slots import SlotTable
from deid_pipeline.synthetic.text import Piece, render

__all__ = ["DocContext"]


class DocContext(PhiSlots, FillerSlots):
    """Everything one document may mention, and the slots that render it."""

    SLOTS = SlotTable.merged(PHI_SLOTS, FILLER_SLOTS)

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
        """Fill ``{name:arg}`` with the method registered as slot ``name``."""
        base, _, arg = name.partition(":")
        self.SLOTS[base](self, arg, out)

    def pick(self, *options: str) -> str:
        """One of ``options``, uniformly."""
        return self.rng.choice(options)

    def num(self, lo: float, hi: float, decimals: int = 0) -> str:
        """Draw a number uniformly and format it with ``decimals`` places."""
        if decimals:
            return f"{self.rng.uniform(lo, hi):.{decimals}f}"
        return str(self.rng.randint(int(lo), int(hi)))
