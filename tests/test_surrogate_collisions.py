"""No surrogate spells an original of the same message or document (issue 18).

A patient's surrogate surname that is the real attending's surname, a
doctor's surrogate given name that is a relative's real one: each puts a real
value of the message back into the output. Such a surrogate is drawn again
under a key derived from the run's key (deterministic, keyed); the test with
a forced tiny name pool makes collisions certain and checks none reaches
either output.
"""

from __future__ import annotations

import re

import pytest

from deid_pipeline import surrogates
from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.rewrite import RewriteContext
from deid_pipeline.surrogates import Originals, surrogate
from deid_pipeline.surrogates import locations as locations_module
from deid_pipeline.surrogates import names as names_module
from deid_pipeline.surrogates.keyed import WeightedTable
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

KEY = b"collision-test-key-0123456789abc"


@pytest.mark.parametrize("pairs,candidate,spelled", [
    ([("SMITH", "PATIENT")], "Smith", True),
    ([("SMITH^JOHN", "PATIENT")], "Dr. John Quill", True),  # a part is enough
    ([("Smith, John", "DOCTOR")], "Smithers", False),  # not a whole word
    # Two-letter names are names (Li, Xu, Al); an initial is not compared.
    ([("Al", "PATIENT")], "Al", True),
    ([("LI MADE", "DOCTOR")], "Dr. Li", True),
    ([("J", "PATIENT")], "J", False),
    ([("J. Li", "DOCTOR")], "J. Quill", False),
    ([("12 Elm St", "STREET")], "12 ELM ST.", True),
    ([("617-555-0142", "PHONE")], "(617) 555 0142", True),
    ([("MR0012", "MEDICALRECORD")], "MR0013", False),
    ([("Boston", "CITY")], "Boston", True),
    ([("Boston", "CITY")], "Bostonia", False),
    # A date's digits (5+) may not come back as a ZIP or an id: 7/30/35, 73035.
    ([("7/30/35", "DATE")], "73035", True),
    ([("3/4", "DATE")], "34", False),
    # A name's particles name no one: a Spanish surrogate keeps them as written.
    ([("Francisco Arnaiz de las Revillas", "DOCTOR")], "Ana Soto de las Heras", False),
    ([("Francisco Arnaiz de las Revillas", "DOCTOR")], "Dr. Arnaiz", True),
    ([("De la Ossa Prieto", "PATIENT")], "De Soto", True),
])
def test_when_originals_collected_then_what_they_spell_is_exact(pairs, candidate,
                                                                 spelled):
    assert Originals.of(pairs).spelled_by(candidate) is spelled


def test_when_spanish_names_with_particles_then_surrogates_not_masked():
    # Every surrogate kept "de las" and spelled the original's particles: masked.
    names = ["Francisco Arnaiz de las Revillas", "Natalia del Valle González"]
    avoid = Originals.of([(n, "DOCTOR") for n in names])
    ctx = RewriteContext(key=KEY, person_id="p1", as_of_year=2026, avoid=avoid,
                         language="es")
    for name in names:
        out = surrogate(name, "DOCTOR", ctx)
        assert " de las " in out or " del " in out, out
        assert not avoid.names_in(out), out


def _ctx(avoid=None):
    return RewriteContext(key=KEY, person_id="p1", as_of_year=2026, avoid=avoid)


def test_when_surrogate_spells_an_original_then_drawn_again_keyed_and_stable():
    plain = surrogate("Hartley", "PATIENT", _ctx())
    avoid = Originals.of([(plain, "DOCTOR")])  # the attending's real name
    again = surrogate("Hartley", "PATIENT", _ctx(avoid))
    assert again.casefold() != plain.casefold() != "hartley"
    assert not avoid.spelled_by(again)
    surrogates._memo.cache_clear()
    assert surrogate("Hartley", "PATIENT", _ctx(avoid)) == again  # re-run: same
    assert surrogate("Hartley", "PATIENT", _ctx(Originals())) == plain


@pytest.mark.parametrize("label", ["PATIENT", "DOCTOR", "RELATIVE"])
def test_a_persons_surrogate_is_no_word_of_an_institution_of_the_document(label):
    """A surname ``Morrow`` before an untouched ``plc`` spelled ``Morrow PLC``."""
    plain = surrogate("Hayden", label, _ctx())
    word = plain.split()[-1]
    avoid = Originals.of([(f"{word.upper()} PLC", "ORGANIZATION"),
                          (f"{word} and Sons", "HOSPITAL")])
    again = surrogate("Hayden", label, _ctx(avoid))
    assert word.casefold() not in {w.casefold() for w in re.findall(r"\w+", again)}
    assert not avoid.for_person_names().spelled_by(again)
    # The institution's own surrogate may keep its words (``Medical``).
    assert not avoid.spelled_by("Morrow Medical Center")
    assert Originals.union([avoid, Originals()]) is avoid


def test_when_dates_collide_then_not_redrawn_so_intervals_hold():
    plain = surrogate("03/04/2020", "DATE", _ctx())
    avoid = Originals.of([(plain, "DATE")])
    assert surrogate("03/04/2020", "DATE", _ctx(avoid)) == plain


def test_when_a_shifted_month_name_is_a_persons_name_then_the_date_is_masked():
    """A shifted ``3-May-96`` beside a next of kin called May: masked, not redrawn."""
    month = re.search(r"[A-Za-z]+", surrogate("14-Feb-99", "DATE", _ctx())).group()
    avoid = Originals.of([(f"{month.upper()}^GINA", "RELATIVE")])
    with pytest.raises(surrogates.SurrogateError):
        surrogate("14-Feb-99", "DATE", _ctx(avoid))
    assert surrogate("14/02/99", "DATE", _ctx(avoid))  # no name in it: shifted
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    out = rewriter.replace_value("14-Feb-99", "DATE", "p1", avoid)
    assert month.casefold() not in out.casefold() and "14-Feb-99" not in out


# -------------------------------------------------- a forced tiny name pool

FIRST = ("John", "Mary", "David", "Otto", "Ada")
LAST = ("Smith", "Jones", "Brown", "Quill", "Varga")


class _TinyTables:
    """Five first and five last names: most draws are an original below."""

    def __init__(self) -> None:
        self.first = self.male = self.female = WeightedTable(FIRST)
        self.last = WeightedTable(LAST)
        self._first = {n.casefold() for n in FIRST}

    def pool_for(self, part: str) -> WeightedTable:
        return self.first if part in self._first else self.last


@pytest.fixture
def tiny_pool(monkeypatch):
    tables = _TinyTables()
    monkeypatch.setattr(names_module, "name_tables", lambda: tables)
    monkeypatch.setattr(locations_module, "name_tables", lambda: tables)
    surrogates._memo.cache_clear()
    yield
    surrogates._memo.cache_clear()


MESSAGE = (
    "MSH|^~\\&|LAB|NORTHFIELD|EHR|NORTHFIELD|20240305094500||ORU^R01|TP-1|P|2.5\r"
    "PID|1||QK440912^^^NORTHFIELD^MR||SMITH^JOHN||19540917|M|||"
    "12 Jones Ave^^Stillwater^MN^55082||651-555-0178\r"
    "NK1|1|JONES^MARY|SPO^Spouse^HL70063||651-555-0191\r"
    "PV1|1|O|RAD^12^1^NORTHFIELD||||7741^BROWN^DAVID^^^^MD\r"
    "OBR|1|ORD1|FIL1|71020^CHEST 2 VIEWS^CPT|||20240305093000\r"
    "OBX|1|TX|71020^CHEST||John Smith seen with his wife Mary Jones; "
    "Dr. David Brown reviewed.||||||F\r"
)
ORIGINALS = ("smith", "john", "jones", "mary", "brown", "david")


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[A-Za-z]+", text)}


def test_when_name_pool_is_tiny_then_collisions_are_redrawn_and_none_reaches_output(
        tiny_pool):
    tagger = PhiTagger.from_config(TaggerConfig(("rules", "dictionary")))
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    result = deidentify_message(MESSAGE, tagger, rewriter, "tiny.hl7")
    assert result.ok, [q.error_message for q in result.quarantined]
    out = _words(result.er7)
    assert not out & set(ORIGINALS)
    for doc in result.documents:
        assert not _words(doc.text) & set(ORIGINALS)
    # Redraws are keyed and deterministic: the same bytes again.
    surrogates._memo.cache_clear()
    assert deidentify_message(MESSAGE, tagger, rewriter, "tiny.hl7").er7 == result.er7


def test_when_name_pool_is_tiny_then_without_avoidance_collisions_would_happen(
        tiny_pool):
    """The forced pool is a real test: plain draws do spell originals."""
    spelled = {surrogate(name, "PATIENT", _ctx()).casefold()
               for name in ("Smith", "John", "Jones", "Mary", "Brown", "David")}
    assert spelled & set(ORIGINALS)


SHORT_LAST = ("Li", "Xu", "Ng", "Wu", "Ho")


class _ShortSurnames(_TinyTables):
    """Only two-letter surnames: every surname draw may spell another's."""

    def __init__(self) -> None:
        super().__init__()
        self.last = WeightedTable(SHORT_LAST)


def test_when_surnames_have_two_letters_then_a_surrogate_never_spells_another_doctor(
        monkeypatch):
    """A 16,000-note document wrote "DR LI" for a doctor Xu beside a real Dr. Li."""
    tables = _ShortSurnames()
    monkeypatch.setattr(names_module, "name_tables", lambda: tables)
    surrogates._memo.cache_clear()
    try:
        avoid = Originals.of([(n, "DOCTOR") for n in ("Li", "Xu", "Ng", "Wu")])
        plain = {surrogate(n, "DOCTOR", _ctx()) for n in ("Xu", "Ng", "Wu", "Li")}
        assert plain & {"Li", "Xu", "Ng", "Wu"}  # the pool does collide
        for name in ("Xu", "Ng", "Wu", "Li"):
            assert surrogate(name, "DOCTOR", _ctx(avoid)) == "Ho"
    finally:
        surrogates._memo.cache_clear()
