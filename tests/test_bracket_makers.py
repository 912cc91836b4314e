"""The maker in a product's brackets, found after the model's places."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.span_tidy import tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


COUNTRIES = {"EE.UU.", "U.S.A.", "España"}


def _places(text, *values, label=None):
    return [PhiSpan(text.index(v), text.index(v) + len(v),
                    label or ("PAIS" if v in COUNTRIES else "TERRITORIO"), "crf", 0.9)
            for v in values]


def _makers(text, spans):
    return [text[s.start:s.end] for s in tidy_spans(text, spans)
            if s.label == "INSTITUCION"]


@pytest.mark.parametrize("text, places, maker", [
    ("Se pautó doxiciclina oral (Vibracina 100, Pfizer, Madrid) cada 12 h.",
     ("Madrid",), "Pfizer"),
    ("y gentamicina (Gevramycin 40 mg inyectable, Schering-Plough, Madrid), con",
     ("Madrid",), "Schering-Plough"),
    # The maker first, its trademark sign left out; a country after the town.
    ("un expansor (Allergan®, Irvine, California, EE.UU.) de 300 cc",
     ("Irvine", "California"), "Allergan"),
    # Items split by a semicolon too; several words.
    ("una tomografía (Stratus OCT; Carl Zeiss Meditec, Dublin, CA) mostró",
     ("Dublin", "CA"), "Carl Zeiss Meditec"),
    # A country in a bracket of three: the item before it is the maker.
    ("el topógrafo (Topógrafo corneal, Baush and Lomb, U.S.A.) y el examen",
     ("U.S.A.",), "Baush and Lomb"),
    # Two items, a trademarked product and its maker.
    ("micofenolato mofetilo (Cellcept®, Roche) y tacrolimus", (), "Roche"),
    ("timolol tópico (Timoftol® 0,5%, MSD). En julio", (), "MSD"),
    # A legal form as an item of its own: the maker is the item before it.
    ("un tonómetro (modelo 30, Ohio Medical Instrument Co, Inc., Cincinnati, OH)",
     ("Cincinnati", "OH"), "Ohio Medical Instrument Co"),
])
def test_when_a_product_bracket_ends_in_a_found_place_then_its_maker_is_an_institution(
        text, places, maker):
    assert _makers(text, _places(text, *places)) == [maker]


@pytest.mark.parametrize("text, places", [
    # Two items without a trademark: product and maker or maker and town, no
    # telling; with one, a second item in lower case or with digits.
    ("nutrición parenteral (Intralipid® 10%, tabla III)", ()),
    ("suplementos (Natecal D®, 2 tabletas cada día)", ()),
    ("colirio (Tobradex, Alcon Cusí) cada 4 h", ()),
    ("colirio (Tobradex, Barcelona) cada 4 h", ("Barcelona",)),
    # No place found in the bracket.
    ("(Vibracina 100, Pfizer, Madrid) cada 12 h", ()),
    # The item before the place is a product's strength, or lower case.
    ("gotas (timolol 0,5%, Madrid, España) y", ("Madrid", "España")),
    ("gotas (colirio de atropina, de farmacia, Madrid, España) y",
     ("Madrid", "España")),
    # A country first found after four items: the item before is a town.
    ("un implante (Mentor®, Johnson & Johnson, New Jersey, EE.UU.), de 350cc",
     ("EE.UU.",)),
    # A street is no town: an address in brackets names no maker.
    ("(Servicio de Urología, Calle Mayor, 5, Madrid)", ("Calle Mayor",)),
])
def test_when_no_product_maker_shape_then_nothing_added(text, places):
    label = "CALLE" if "Calle" in text else None
    assert _makers(text, _places(text, *places, label=label)) == []


def test_when_the_maker_is_already_tagged_then_not_doubled():
    text = "doxiciclina (Vibracina 100, Pfizer, Madrid) cada 12 h"
    spans = [*_places(text, "Madrid"), *_places(text, "Pfizer", label="INSTITUCION")]
    out = tidy_spans(text, spans)
    assert [text[s.start:s.end] for s in out] == ["Pfizer", "Madrid"]
    assert all(s.source == "crf" for s in out)


def test_when_the_place_is_a_built_in_location_label_then_it_counts_too():
    text = "doxiciclina (Vibracina 100, Pfizer, Madrid) cada 12 h"
    assert _makers(text, _places(text, "Madrid", label="CITY")) == ["Pfizer"]
