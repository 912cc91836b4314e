"""The genre set: text of kinds the training notes are not, from names they never use.

Users put discharge summaries, pathology and radiology reports, referral
letters and short clinician questions through the tagger; the training data
is ICU nursing notes plus synthetic notes written from other templates. This
module writes a scoring set of those genres with sentence templates of its own
(no training template is used here, and this module is imported by no training
path) and identities from the EVALUATION half of every name and place list
(:mod:`deid_pipeline.surrogates.halves`), so a score on it says how the tagger
does on a new genre with new names, not how well it remembers either.

It carries the shapes users saw leak: ``First I.`` initials (``Dr. Anna S.``),
hospital names and their abbreviations, ``City, ST``, IDs with a letter
prefix or suffix near plan/member/record words; and about one document in
five has no PHI at all, most of them questions naming clinical eponyms
(``Framingham risk score``, ``Babinski sign``, ``Graves disease``), which a
tagger must leave alone.
"""

from __future__ import annotations

import datetime as dt

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.surrogates.halves import PoolHalf
from deid_pipeline.synthetic.formats import format_date, format_phone
from deid_pipeline.synthetic.identity import (
    Facility,
    IdentityFactory,
    Patient,
    Person,
    derive_seed,
)
from deid_pipeline.synthetic.notes import new_faker
from deid_pipeline.synthetic.slots import SlotTable
from deid_pipeline.synthetic.text import Piece, assemble, render

GENRES = ("discharge", "pathology", "radiology", "referral", "question")
_GENRE_WEIGHTS = (2, 2, 2, 2, 3)
PHI_FREE_SHARE = 0.2
ORIGIN = "deid_pipeline.synthetic.genres"

# Named after people or towns, and not PHI: a tagger that takes them for names
# or places costs precision where users look first.
EPONYMS = (
    "Framingham risk score", "Babinski sign", "Parkinson's disease", "Graves disease",
    "Wilson's disease", "Hashimoto thyroiditis", "Cushing syndrome",
    "Addison's disease", "Crohn's disease", "Bell's palsy", "Murphy's sign",
    "McBurney's point", "Glasgow Coma Scale", "Apgar score", "Wells score",
    "Lyme disease", "Hodgkin lymphoma", "Barrett's esophagus", "Alzheimer's disease",
    "Guillain-Barre syndrome", "Kawasaki disease", "Raynaud phenomenon",
    "Epley maneuver", "Valsalva maneuver", "Trendelenburg position",
    "Homan's sign", "Kernig sign", "Brudzinski sign", "Romberg test",
    "Tinel sign", "Phalen test", "Gleason score", "Breslow depth",
    "Child-Pugh score", "Ranson criteria", "Duke criteria", "Ottawa ankle rules",
    "Virchow's node", "Osler nodes", "Janeway lesions", "Whipple procedure",
    "Nissen fundoplication", "Roux-en-Y bypass", "Swan-Ganz catheter",
    "Foley catheter", "Holter monitor", "Mallory-Weiss tear", "Tourette syndrome",
    "Down syndrome", "Marfan syndrome", "Sjogren syndrome", "Bence Jones protein",
    "Korotkoff sounds", "Kussmaul breathing", "Cheyne-Stokes respiration",
)

_SLOTS = SlotTable()


class _Genre:
    """One document's identities and the slots of this module's templates.

    PHI slots append a labelled piece of the identifying characters only;
    ``Dr.`` and ``MD`` stay filler, as the i2b2 guidelines annotate them.
    """

    def __init__(self, ids: IdentityFactory, patient: Patient) -> None:
        """Pick the document's clinicians, facility and dates."""
        self.ids = ids
        self.rng = ids.rng
        self.patient = patient
        self.doctor, self.referrer = self.rng.sample(ids.doctors, 2)
        self.site: Facility = patient.hospital
        self.date = patient.encounter
        self.date_style = self.rng.choice(("m/d/yyyy", "mm/dd/yyyy", "Month d, yyyy",
                                           "yyyy-mm-dd", "m/d/yy", "dd-Mon-yy"))

    def text(self, template: str, out: list[Piece]) -> None:
        """Expand one template of this module into ``out``."""
        render(template, self.rng, self.slot, out)

    def slot(self, name: str, out: list[Piece]) -> None:
        """Fill ``{name:arg}`` with the method registered as slot ``name``."""
        base, _, arg = name.partition(":")
        _SLOTS.methods[base](self, arg, out)

    # -- people ---------------------------------------------------------------

    def _person(self, p: Person, label: str, out: list[Piece]) -> None:
        forms = ("first_i", "first_i", "full", "last", "i_last")
        if label != "DOCTOR":  # "Dr. Smith, Anna" is nobody's style
            forms += ("last_first",)
        form = self.rng.choice(forms)
        value = {"first_i": f"{p.first} {p.last[0]}.",
                 "full": f"{p.first} {p.last}",
                 "last": p.last,
                 "i_last": f"{p.first[0]}. {p.last}",
                 "last_first": f"{p.last}, {p.first}"}[form]
        out.append((value, label))

    @_SLOTS("dr")
    def clinician_name(self, arg: str, out: list[Piece]) -> None:
        """A clinician as ``Dr. Anna S.``/``Dr. Sousa``/``A. Sousa, MD``."""
        person = self.referrer if arg == "ref" else self.doctor
        out.append((self.rng.choice(("Dr. ", "Dr ", "dr. ")), None))
        self._person(person, "DOCTOR", out)

    @_SLOTS("pt")
    def patient_name(self, arg: str, out: list[Piece]) -> None:
        """The patient's name in one of the written forms."""
        self._person(self.patient.person, "PATIENT", out)

    @_SLOTS("rel")
    def relative_name(self, arg: str, out: list[Piece]) -> None:
        """A relative's first name (``daughter Anna``)."""
        relative = self.rng.choice(self.patient.relatives)
        out.append((relative.relation + " ", None))
        out.append((relative.person.first, "RELATIVE"))

    # -- places ---------------------------------------------------------------

    @_SLOTS("hosp")
    def facility_name(self, arg: str, out: list[Piece]) -> None:
        """The facility by full name, staff short form or initialism."""
        site = self.site
        out.append((self.rng.choice((site.name, site.short, site.abbrev)), "HOSPITAL"))

    @_SLOTS("city_st")
    def city_and_state(self, arg: str, out: list[Piece]) -> None:
        """``City, ST`` (sometimes the city alone)."""
        address = self.patient.address
        out.append((address.city, "CITY"))
        if self.rng.random() < 0.7:
            out.append((", ", None))
            out.append((address.state, "STATE"))

    @_SLOTS("city")
    def town_name(self, arg: str, out: list[Piece]) -> None:
        """The patient's town alone."""
        out.append((self.patient.address.city, "CITY"))

    @_SLOTS("street")
    def street_address(self, arg: str, out: list[Piece]) -> None:
        """A full street address line: street, ``City, ST`` and ZIP."""
        address = self.patient.address
        out += [(address.street, "STREET"), (", ", None), (address.city, "CITY"),
                (", ", None), (address.state, "STATE"), (" ", None),
                (address.zip, "ZIP")]

    # -- numbers and dates ----------------------------------------------------

    @_SLOTS("date")
    def date_text(self, arg: str, out: list[Piece]) -> None:
        """A date near the encounter (``arg`` days back at most)."""
        back = self.rng.randint(0, int(arg or 3))
        out.append((format_date(self.date - dt.timedelta(days=back), self.date_style),
                    "DATE"))

    @_SLOTS("dob")
    def birth_date(self, arg: str, out: list[Piece]) -> None:
        """The date of birth."""
        out.append((format_date(self.patient.dob, "mm/dd/yyyy"), "DATE"))

    @_SLOTS("age")
    def age_text(self, arg: str, out: list[Piece]) -> None:
        """The age: PHI over 89 only, as the tagger's rules and Safe Harbor say."""
        age = self.patient.age
        out.append((str(age), "AGE" if age > 89 else None))

    @_SLOTS("phone")
    def facility_phone(self, arg: str, out: list[Piece]) -> None:
        """The facility's phone or fax in one written form."""
        out.append((format_phone(self.site.phone, self.rng.randint(0, 3)),
                    "FAX" if arg == "fax" else "PHONE"))

    def _coded(self, digits: int) -> str:
        """An ID with a letter prefix or suffix (prefix from the evaluation half)."""
        fake, rng = self.ids.fake, self.rng
        letters = fake.lexify("?" * rng.randint(1, 3)).upper()
        number = self.ids.digits(digits)
        return rng.choice((f"{letters}{number}", f"{letters}-{number}",
                           f"{number}{letters[0]}", f"{number}-{letters[0]}"))

    @_SLOTS("id")
    def identifier(self, arg: str, out: list[Piece]) -> None:
        """A plan, member, record or account ID with its cue word as filler."""
        label = {"plan": "HEALTHPLAN", "mrn": "MEDICALRECORD",
                 "acct": "ACCOUNT"}[arg]
        out.append((self._coded(self.rng.randint(6, 9)), label))

    @_SLOTS("eponym")
    def eponym(self, arg: str, out: list[Piece]) -> None:
        """A clinical eponym (filler: not PHI)."""
        out.append((self.rng.choice(EPONYMS), None))


# Templates of this module only. ``{slot}`` fills PHI or eponyms; ``[a|b]``
# picks one alternative.
_DISCHARGE = (
    "DISCHARGE SUMMARY\n[Patient|Name]: {pt}   [MRN|Record #|Med rec no.]: {id:mrn}\n"
    "[Admitted|Admission date]: {date:9}   [Discharged|Discharge date]: {date:0}\n",
    "[Attending|Attending physician]: {dr}\n[Referred by|PCP:] {dr:ref} of "
    "{hosp}.\n",
    "Brief course: {age} y/o [from|resident of] {city_st} admitted with "
    "[community acquired pneumonia|CHF exacerbation|NSTEMI|a hip fracture]. "
    "[Workup for {eponym} was negative.|History of {eponym}.|No signs of "
    "{eponym}.]\n",
    "Insurance: [member ID|plan #|policy no.] {id:plan}. [Account|Acct] {id:acct}.\n",
    "Follow up with {dr:ref} [in 2 weeks|on {date:0}]; call {phone} with "
    "questions. [Discussed with {rel} at bedside.|{rel} will drive home.]\n",
)
_PATHOLOGY = (
    "SURGICAL PATHOLOGY REPORT   {hosp}\n[Accession|Specimen] received "
    "{date:2}. Patient: {pt}, [DOB|born] {dob}. [MRN|Record no.] {id:mrn}\n",
    "Submitting physician: {dr}\n",
    "FINAL DIAGNOSIS: [Prostate, needle biopsy: adenocarcinoma, Gleason score "
    "3+4=7|Colon, sigmoid, polypectomy: tubular adenoma|Skin, left arm: melanoma, "
    "Breslow depth 1.2 mm|Esophagus, biopsy: intestinal metaplasia (Barrett's "
    "esophagus)|Lymph node: Hodgkin lymphoma].[ History of {eponym}.|]\n",
    "[Reviewed in consultation with {dr:ref}.|Slides sent to {hosp} for "
    "review.] Signed out {date:0}.\n",
)
_RADIOLOGY = (
    "EXAM: [CT head without contrast|MRI lumbar spine|Chest, 2 views|"
    "US abdomen]   Date: {date:0}\n[Patient|Pt]: {pt}   {id:mrn}\n",
    "CLINICAL HISTORY: [fall|headache|cough|RUQ pain], {age} y/o, [sent from|"
    "outside films from] {hosp}.\n",
    "FINDINGS: [No acute intracranial process.|Mild degenerative change.|No "
    "focal consolidation.|Gallbladder wall thickening; sonographic {eponym} "
    "positive.]\n",
    "[Results called to {dr} at {phone}.|Preliminary read discussed with {dr}.] "
    "Dictated by {dr:ref}\n",
)
_REFERRAL = (
    "{hosp}\n{date:0}\n\nDear {dr},\n\n",
    "Thank you for seeing {pt} ([DOB|date of birth] {dob}), a {age} year old "
    "[from|living in] {city_st}, whom I am referring for [evaluation of "
    "possible {eponym}|management of {eponym}|a second opinion].\n",
    "[Address|Home]: {street}. [Member ID|Plan no.|Subscriber #] {id:plan}.\n",
    "[Please fax your notes to {phone:fax}.|You can reach my office at {phone}.]"
    "\n\nSincerely,\n{dr:ref}\n",
)
_QUESTIONS = (
    "pt from {city} w/ [MI|afib|CHF|new onset seizure] seen by {dr} at {hosp}?",
    "[is|was] {pt} [admitted|discharged] [to|from] {hosp} on {date:5}?",
    "[does|did] {dr} [still |][cover|see pts at] {hosp}",
    "[need|find] [records|notes|path report] for {pt} [MRN|record] {id:mrn}",
    "[member id|plan #|plan number] {id:plan} [denied|pending] [- who to call?|, "
    "appeal?]",
    "{age} yo from {city_st} with {eponym} - [refer to|any openings at] {hosp}?",
    "[how to|can I] reach {dr} [re|about] {pt}?",
)
_PHI_FREE = (
    "[what is|how do you calculate|normal range for] [the |]{eponym}[?|]",
    "{eponym} [vs|or] {eponym} [- how to tell apart|differential|workup][?|]",
    "[positive|negative] {eponym} [meaning|significance|in adults][?|]",
    "[first line treatment for|guidelines for] {eponym}[?|]",
    "FINDINGS: [No acute cardiopulmonary process.|Normal study.][ History of "
    "{eponym}.|]",
    "[Patient|Pt] counseled on {eponym}; [follow up as scheduled|questions "
    "answered].",
)
_TEMPLATES = {"discharge": _DISCHARGE, "pathology": _PATHOLOGY,
              "radiology": _RADIOLOGY, "referral": _REFERRAL,
              "question": _QUESTIONS}


def _document(ctx: _Genre, genre: str, phi_free: bool) -> tuple[list[Piece], str]:
    rng = ctx.rng
    out: list[Piece] = []
    if phi_free:
        ctx.text(rng.choice(_PHI_FREE), out)
        return out, rng.choice(("as_is", "lower"))
    if genre == "question":
        ctx.text(rng.choice(_QUESTIONS), out)
        return out, rng.choice(("as_is", "as_is", "lower"))
    for template in _TEMPLATES[genre]:
        ctx.text(template, out)
    return out, rng.choice(("as_is", "as_is", "as_is", "upper"))


def generate_genre_notes(count: int, seed: int = 0,
                         pool: PoolHalf | None = PoolHalf.EVALUATION
                         ) -> list[ClinicalDocument]:
    """``count`` documents of :data:`GENRES` with gold spans; same seed, same bytes.

    About :data:`PHI_FREE_SHARE` of them have no PHI (``metadata`` kind
    ``<genre>`` and ``phi_free`` ``yes``/``no``). Each document is its own
    patient (``person_key``).
    """
    if count < 0:
        raise ValueError("count must be >= 0")
    fake = new_faker(seed, "genres-pool")
    ids = IdentityFactory(fake, n_doctors=80, n_hospitals=40, n_facilities=1,
                          pool=pool)
    docs = []
    for i in range(count):
        fake.seed_instance(derive_seed(seed, "genre-doc", i))
        rng = ids.rng
        genre = rng.choices(GENRES, _GENRE_WEIGHTS)[0]
        phi_free = rng.random() < PHI_FREE_SHARE
        key = f"genre:{seed}:{i}"
        ctx = _Genre(ids, ids.patient(key=key))
        pieces, case = _document(ctx, genre, phi_free)
        text = assemble(pieces, case)
        docs.append(ClinicalDocument(
            doc_id=f"genre-{seed}-{i:06d}", text=text.text, source="synthetic",
            origin=ORIGIN, person_key=key, gold=text.spans,
            metadata=(("kind", genre), ("phi_free", "yes" if phi_free else "no"))))
    return docs
