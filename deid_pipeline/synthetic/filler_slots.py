"""The filler slots of the note templates: look-alikes that stay unlabelled.

Vitals, labs, doses, times, scores and separators (``BP 120/80``, ``1/2
tab``, ``K 3.9``) look like dates, phones and ids to a tagger and must not be
tagged. A mixin of :class:`~deid_pipeline.synthetic.context.DocContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deid_pipeline.synthetic.report_phrases import PATH_DX
from deid_pipeline.synthetic.slots import SlotTable
from deid_pipeline.synthetic.text import Piece

if TYPE_CHECKING:
    from deid_pipeline.synthetic.context import DocContext

__all__ = ["FILLER_SLOTS", "FillerSlots"]

FILLER_SLOTS = SlotTable()


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

def _one_of(options: tuple[str, ...], doc: str):
    """A slot method that writes one of ``options``, drawn uniformly."""

    def fill(self, arg: str, out: list[Piece]) -> None:
        self._filler(self.rng.choice(options), out)

    fill.__doc__ = doc
    return fill


class FillerSlots:
    """Slots whose pieces are never PHI."""

    # -- filler (never labelled) -------------------------------------------

    def _filler(self, text: str, out: list[Piece]) -> None:
        out.append((text, None))

    @FILLER_SLOTS("exam")
    def exam_name(self, arg: str, out: list[Piece]) -> None:
        """Render the exam this radiology report reads."""
        self._filler(self.exam, out)

    @FILLER_SLOTS("site")
    def specimen_site(self, arg: str, out: list[Piece]) -> None:
        """Render the specimen site of the current pathology part."""
        self._filler(self.site, out)

    @FILLER_SLOTS("pathdx")
    def pathology_diagnosis(self, arg: str, out: list[Piece]) -> None:
        """Render a pathology diagnosis."""
        self.render(self.rng.choice(PATH_DX), out)

    @FILLER_SLOTS("n")
    def number(self, arg: str, out: list[Piece]) -> None:
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

    @FILLER_SLOTS("bp")
    def blood_pressure(self, arg: str, out: list[Piece]) -> None:
        """Render a blood pressure like ``120/80``."""
        sys_ = self.rng.randint(78, 190)
        self._filler(f"{sys_}/{self.rng.randint(38, min(sys_ - 20, 110))}", out)

    @FILLER_SLOTS("hr")
    def heart_rate(self, arg: str, out: list[Piece]) -> None:
        """Render a heart rate."""
        self._filler(self.num(48, 135), out)

    @FILLER_SLOTS("rr")
    def respiratory_rate(self, arg: str, out: list[Piece]) -> None:
        """Render a respiratory rate."""
        self._filler(self.num(10, 32), out)

    @FILLER_SLOTS("temp")
    def temperature(self, arg: str, out: list[Piece]) -> None:
        """Render a temperature in F or C."""
        self._filler(
            self.num(96.5, 102.8, 1)
            if self.rng.random() < 0.7
            else self.num(35.8, 39.4, 1),
            out,
        )

    @FILLER_SLOTS("sat")
    def oxygen_saturation(self, arg: str, out: list[Piece]) -> None:
        """Render an oxygen saturation."""
        self._filler(self.num(86, 100), out)

    @FILLER_SLOTS("frac")
    def dose_fraction(self, arg: str, out: list[Piece]) -> None:
        """Render a dose fraction like ``1/2`` or ``1 1/2``."""
        self._filler(self.pick("1/2", "1/2", "1/4", "3/4", "1 1/2", "2 1/2"), out)

    @FILLER_SLOTS("time")
    def clock_time(self, arg: str, out: list[Piece]) -> None:
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

    @FILLER_SLOTS("lab")
    def lab_value(self, arg: str, out: list[Piece]) -> None:
        """Render a lab value like ``K 3.9`` or ``Hct 28.4``."""
        self._filler(self.rng.choice(_LAB_FORMS)(self), out)

    @FILLER_SLOTS("labs")
    def lab_values(self, arg: str, out: list[Piece]) -> None:
        """Render several lab values separated the way notes separate them."""
        sep = self.pick(", ", " ", "; ", ", ")
        n = self.rng.randint(2, 5)
        self._filler(sep.join(self.rng.choice(_LAB_FORMS)(self) for _ in range(n)), out)

    @FILLER_SLOTS("med")
    def medication(self, arg: str, out: list[Piece]) -> None:
        """Render a medication order with dose, route and frequency."""
        self._filler(self.rng.choice(_MED_FORMS)(self), out)

    @FILLER_SLOTS("pmh")
    def past_history(self, arg: str, out: list[Piece]) -> None:
        """Render a comma-separated past medical history list."""
        items = self.rng.sample(_PMH, self.rng.randint(2, 6))
        self._filler(", ".join(items), out)

    diagnosis = FILLER_SLOTS("dx")(_one_of(_DX, "Render a working diagnosis."))

    symptom = FILLER_SLOTS("sx")(_one_of(_SX, "Render a presenting symptom."))

    procedure = FILLER_SLOTS("proc")(_one_of(_PROC, "Render a procedure."))

    antibiotic = FILLER_SLOTS("abx")(_one_of(_ABX, "Render an antibiotic."))

    @FILLER_SLOTS("sex")
    def sex_word(self, arg: str, out: list[Piece]) -> None:
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

    @FILLER_SLOTS("he")
    def subject_pronoun(self, arg: str, out: list[Piece]) -> None:
        """Render subject pronoun of the patient."""
        self._filler(self.he.capitalize() if arg == "cap" else self.he, out)

    @FILLER_SLOTS("his")
    def possessive_pronoun(self, arg: str, out: list[Piece]) -> None:
        """Render possessive pronoun of the patient."""
        self._filler(self.his.capitalize() if arg == "cap" else self.his, out)

    @FILLER_SLOTS("size")
    def lesion_size(self, arg: str, out: list[Piece]) -> None:
        """Render a size in cm, one to three dimensions."""
        dims = [self.num(0.2, 9.5, 1) for _ in range(self.rng.randint(1, 3))]
        self._filler(" x ".join(dims) + self.pick(" cm", " cm", "cm", " mm"), out)

    @FILLER_SLOTS("dose")
    def dose(self, arg: str, out: list[Piece]) -> None:
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

    @FILLER_SLOTS("vent")
    def vent_settings(self, arg: str, out: list[Piece]) -> None:
        """Render ventilator settings."""
        self._filler(
            f"{self.pick('AC', 'A/C', 'SIMV', 'PSV', 'CPAP')} "
            f"{self.rng.choice((400, 450, 500, 550, 600))} x {self.num(10, 22)} "
            f"PEEP {self.num(5, 12)} FiO2 {self.rng.choice((30, 40, 50, 60, 100))}%",
            out,
        )

    @FILLER_SLOTS("abg")
    def blood_gas(self, arg: str, out: list[Piece]) -> None:
        """Render an arterial blood gas ``7.32/45/88``."""
        self._filler(
            f"{self.num(7.18, 7.52, 2)}/{self.num(28, 70)}/{self.num(55, 320)}", out
        )

    @FILLER_SLOTS("vsep")
    def vitals_separator(self, arg: str, out: list[Piece]) -> None:
        """Render a separator between vital signs (``|`` in flowsheet text)."""
        self._filler(self.pick(" | ", "  ", ", ", " / ", " "), out)

    @FILLER_SLOTS("hsep")
    def header_separator(self, arg: str, out: list[Piece]) -> None:
        """Render a separator between header fields on one line, or a line break."""
        self._filler(self.pick("   ", "  ", "\n", " | ", "\n"), out)

    @FILLER_SLOTS("pain")
    def pain_score(self, arg: str, out: list[Piece]) -> None:
        """Render a pain score ``4/10``."""
        self._filler(f"{self.num(0, 10)}/10", out)

    @FILLER_SLOTS("strength")
    def strength_grade(self, arg: str, out: list[Piece]) -> None:
        """Render a motor strength grade ``5/5``."""
        self._filler(f"{self.num(2, 5)}/5", out)
