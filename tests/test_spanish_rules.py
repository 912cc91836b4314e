"""The Spanish rule set (tagger/rules/es.py): shapes, checks and site labels.

Every value here is made up.
"""

import pytest

from deid_pipeline.evaluation.rule_fires import fires
from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.rules.es import (
    ALL_KINDS,
    SpanishRuleDetector,
    site_label_for,
    spanish_recognizers,
)

MAP = load_label_map("meddocan")


def _found(text: str) -> list[tuple[str, str]]:
    detector = SpanishRuleDetector(spanish_recognizers(MAP.categories,
                                                       MAP.surrogate_labels))
    return [(text[s.start:s.end], s.label)
            for s in detector.detect(ClinicalDocument("d", text, "text"))]


@pytest.mark.parametrize("text, expected", [
    # DNI and NIE with the right check letter, dotted or not.
    ("DNI: 12345678Z.", [("12345678Z", "ID_SUJETO_ASISTENCIA")]),
    ("NIF 12.345.678-Z", [("12.345.678-Z", "ID_SUJETO_ASISTENCIA")]),
    ("NIE X1234567L", [("X1234567L", "ID_SUJETO_ASISTENCIA")]),
    ("DNI: 12345678A.", []),  # wrong letter
    ("lote 12345678Z-B", []),  # part of a longer code
    # Phones after a telephone word; a fax word makes a fax.
    ("Tel.: 934 169 700 E-mail: ana.ruiz@correo.es",
     [("934 169 700", "NUMERO_TELEFONO"),
      ("ana.ruiz@correo.es", "CORREO_ELECTRONICO")]),
    ("Tfno: 933203624 Fax: 933203631",
     [("933203624", "NUMERO_TELEFONO"), ("933203631", "NUMERO_FAX")]),
    ("Tel. y Fax: 961 622 403", [("961 622 403", "NUMERO_TELEFONO")]),
    ("FAX: + 34- 963864175", [("34- 963864175", "NUMERO_FAX")]),
    ("móvil 630 75 89 15 ext 12", [("630 75 89 15 ext 12", "NUMERO_TELEFONO")]),
    ("NHC 934169700", []),  # nine digits with no telephone word: an id
    ("Tel.: 123 456 789", []),  # no Spanish number starts with 1
    # Postcodes in an address: after a street word or a CP cue.
    ("C/ Mayor, 12. 28040 Madrid", [("28040", "TERRITORIO")]),
    ("Localidad: Toledo.\nCP: 45004.", [("45004", "TERRITORIO")]),
    ("Paseo del Prado, 3 99001 Nada", []),  # no province 99
    ("Leucocitos 12000 /mm3", []),  # no street word
    # Dates with a month name and a year of four digits.
    ("el 3 de marzo de 2018 ingresó", [("3 de marzo de 2018", "FECHAS")]),
    ("En febrero y abril de 2002 acude", [("febrero y abril de 2002", "FECHAS")]),
    ("nacido el 23-octubre-1972.", [("23-octubre-1972", "FECHAS")]),
    ("Enero 2005", [("Enero 2005", "FECHAS")]),
    ("el 40 de marzo de 2018", []),  # no day 40: not a date as written
    ("en marzo mejoró", []),
    # E-mails with a cue glued before them.
    ("E-mail.hleon@correo.es", [("hleon@correo.es", "CORREO_ELECTRONICO")]),
    # URLs are not looked for by default (ALL_KINDS has them).
    ("véase http://www.ejemplo.es/caso", []),
])
def test_when_spanish_text_then_the_rules_find_these(text, expected):
    assert _found(text) == expected


def test_when_url_asked_for_then_found_with_the_site_label():
    (url,) = spanish_recognizers(MAP.categories, MAP.surrogate_labels, ("URL",))
    text = "véase http://www.ejemplo.es/caso."
    assert [(text[s.start:s.end], s.label) for s in url.analyze(text)] == [
        ("http://www.ejemplo.es/caso", "URL_WEB")]


def test_when_label_map_then_each_kind_takes_its_site_label():
    cats, refined = MAP.categories, MAP.surrogate_labels
    assert site_label_for("FAX", cats, refined) == "NUMERO_FAX"  # refined
    assert site_label_for("PHONE", cats, refined) == "NUMERO_TELEFONO"
    assert site_label_for("ZIP", cats, refined) == "TERRITORIO"
    assert site_label_for("DATE", cats, refined) == "FECHAS"
    assert site_label_for("DATE", None) == "DATE"  # no map: built-in labels
    # A map with no label for a kind: that kind is not looked for.
    # (Labels of the MEDDOCAN map, registered already: registering others
    # here would change what the rest of the process reads as a site label.)
    mine = {"FECHAS": "DATE", "NOMBRE_SUJETO_ASISTENCIA": "NAME",
            "NUMERO_TELEFONO": "CONTACT"}
    kinds = [r.name for r in spanish_recognizers(mine, {}, ALL_KINDS)]
    assert kinds == ["es-email", "es-date-words", "es-phone", "es-url"]
    assert site_label_for("EMAIL", mine) == "NUMERO_TELEFONO"  # the one
    assert site_label_for("SSN", mine) is None


def test_when_fires_counted_then_right_boundary_other_label_and_no_gold():
    text = "Tel.: 934 169 700. C/ Mayor, 1. 28040 Madrid. 3 de marzo de 2018"
    gold = (PhiSpan(6, 17, "NUMERO_TELEFONO", "gold"),
            PhiSpan(32, 37, "CALLE", "gold"),
            PhiSpan(49, 64, "FECHAS", "gold"))
    doc = ClinicalDocument("d", text, "brat", gold=gold)
    counts = fires([doc], spanish_recognizers(MAP.categories,
                                              MAP.surrogate_labels))
    assert counts["es-phone"]["right"] == 1
    assert counts["es-postcode"]["other label"] == 1
    assert counts["es-date-words"]["boundary"] == 1
    assert sum(counts["es-email"].values()) == 0
