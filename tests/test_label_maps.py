"""Label maps: the shipped MEDDOCAN map, and a site's own file validated strictly."""

import json

import pytest

from deid_pipeline.label_maps import LabelMapError, load_label_map
from deid_pipeline.labels import category, check_label


def _write(tmp_path, obj) -> str:
    path = tmp_path / "site.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


def test_when_meddocan_then_its_labels_are_valid_with_their_categories():
    m = load_label_map("meddocan")
    assert m.name == "meddocan"
    assert category("NOMBRE_SUJETO_ASISTENCIA") == "NAME"
    assert category("SEXO_SUJETO_ASISTENCIA") == "KEEP"
    assert category("CORREO_ELECTRONICO") == "CONTACT"
    assert check_label("FECHAS") == "FECHAS"
    assert category("PATIENT") == "NAME"  # the label set is untouched


def test_when_site_file_then_its_labels_register(tmp_path):
    m = load_label_map(_write(tmp_path, {"labels": {"PERSOON": "name",
                                                    "PLAATS": "location"}}))
    assert m.name == "site" and category("PERSOON") == "NAME"
    assert m.to_json() == {"name": "site",
                           "labels": {"PERSOON": "name", "PLAATS": "location"}}


@pytest.mark.parametrize("obj, message", [
    ({"labels": {"PERSOON_X": "person"}}, "label 'PERSOON_X': unknown category "
     "'person'"),
    ({"labels": {"X_Y": "name"}, "lables": {}}, r"unknown key\(s\) \['lables'\]"),
    ({"labels": {}}, "non-empty"),
    ({"labels": {"TWO WORDS": "name"}}, "has blanks"),
    ({"labels": {"DATE": "name"}}, "already of category DATE"),
    ([], "expected a JSON object"),
])
def test_when_site_file_is_wrong_then_error_names_it(tmp_path, obj, message):
    with pytest.raises(LabelMapError, match=message):
        load_label_map(_write(tmp_path, obj))


def test_when_unknown_name_then_error_lists_shipped_maps():
    with pytest.raises(LabelMapError, match="have meddocan"):
        load_label_map("i2b2")
