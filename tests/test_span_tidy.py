"""A site model's contact and date boundaries tidied by category."""

import pytest

from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.span_tidy import dropped_by_tidying, tidy_spans


@pytest.fixture(autouse=True)
def _meddocan_labels():
    load_label_map("meddocan")


@pytest.mark.parametrize("text, found, label, expected", [
    ("Pamplona E-mail.hleonbrito@hotmail.com x", "E-mail.hleonbrito@hotmail.com",
     "CORREO_ELECTRONICO", "hleonbrito@hotmail.com"),
    ("28042 Madrid E-mail-jdemiguel@geodental.com", "E-mail-jdemiguel@geodental.com",
     "CORREO_ELECTRONICO", "jdemiguel@geodental.com"),
    ("Sevilla. rgarc18@oc.mde.es.", "rgarc18@oc.mde.es.", "CORREO_ELECTRONICO",
     "rgarc18@oc.mde.es"),
    ("Tfno. 848428434 Fax 948136286", "848428434 Fax", "NUMERO_TELEFONO",
     "848428434"),
    ("Tfno. 848428434 Fax 948136286", "Tfno. 848428434", "NUMERO_TELEFONO",
     "848428434"),
    ("Tfno: 986413144 ext 1530", "986413144 ext 1530", "NUMERO_TELEFONO",
     "986413144 ext 1530"),
    ("Tel.: + 34 93 693 29 05.", "+ 34 93 693 29 05", "NUMERO_TELEFONO",
     "34 93 693 29 05"),
    ("Fax: +34 945007359 E-mail", "+34 945007359", "NUMERO_FAX", "34 945007359"),
    # A name's title is left out; a name that starts like one is not cut.
    ("Remitido por: Doctora Marta García Torrelles.", "Doctora Marta García Torrelles",
     "NOMBRE_PERSONAL_SANITARIO", "Marta García Torrelles"),
    ("Médico: Dra. Begoña Iza.", "Dra. Begoña Iza", "NOMBRE_PERSONAL_SANITARIO",
     "Begoña Iza"),
    ("Nombre: Donato Ruiz.", "Donato Ruiz", "NOMBRE_SUJETO_ASISTENCIA", "Donato Ruiz"),
    ("el día 30-marzo-2004 ingresa", "marzo", "FECHAS", "30-marzo-2004"),
    ("el día 30-marzo-2004 ingresa", "marzo-2004", "FECHAS", "30-marzo-2004"),
    ("el 12/03/2016 ingresa", "12/03/2016", "FECHAS", "12/03/2016"),
    # Spain's postal prefix is the postcode's; Nº glued to a name is the id's.
    ("Avda. Manuel Siurot S/N. E-41013. Sevilla.", "41013", "TERRITORIO", "E-41013"),
    ("Médico: Marta Ortega MartínezNºCol: 06 06 85940.", "Marta Ortega MartínezNºCol",
     "NOMBRE_PERSONAL_SANITARIO", "Marta Ortega Martínez"),
    ("Médico: Begoña IzaNºCol: 28 28 52001.", "Begoña", "NOMBRE_PERSONAL_SANITARIO",
     "Begoña Iza"),
    ("Médico: Begoña Iza NºCol: 28 28 52001.", "Begoña Iza",
     "NOMBRE_PERSONAL_SANITARIO", "Begoña Iza"),
    ("Avenida del Puerto, 12 E-mail: x", "Avenida del Puerto, 12", "CALLE",
     "Avenida del Puerto, 12"),
    # Not a contact or a date: untouched.
    ("Calle Tudela, 27, 4 der.", "Calle Tudela, 27, 4 der", "CALLE",
     "Calle Tudela, 27, 4 der"),
    ("Edad: 5-7 años", "7 años", "EDAD_SUJETO_ASISTENCIA", "7 años"),
])
def test_when_span_has_a_cue_a_title_or_half_a_date_then_tidied(
        text, found, label, expected):
    start = text.index(found)
    (span,) = tidy_spans(text, [PhiSpan(start, start + len(found), label, "crf")])
    assert text[span.start:span.end] == expected
    assert span.label == label


def test_when_contact_has_no_digit_or_at_then_untouched():
    text = "web: http://www.seram.es y"
    start = text.index("http")
    url = PhiSpan(start, start + len("http://www.seram.es"), "URL_WEB", "crf")
    assert tidy_spans(text, [url]) == (url,)


@pytest.mark.parametrize("text, label, expected", [
    # An address block's hospital and street, town and postcode: two values.
    ("Hospital de Getafe Carretera Toledo", "HOSPITAL",
     ["Hospital de Getafe", "Carretera Toledo"]),
    ("Fundación Jiménez Díaz-UTE Avda Reyes Católicos, 2", "HOSPITAL",
     ["Fundación Jiménez Díaz-UTE", "Avda Reyes Católicos, 2"]),
    ("Hospital Virgen Del Puerto C/ Pizarro, s/n", "HOSPITAL",
     ["Hospital Virgen Del Puerto", "C/ Pizarro, s/n"]),
    ("28040 Madrid", "TERRITORIO", ["28040", "Madrid"]),
    ("E-41013 Sevilla", "TERRITORIO", ["E-41013", "Sevilla"]),
    ("San Pedro Garza García CP 66260", "TERRITORIO",
     ["San Pedro Garza García", "66260"]),
    ("Getafe C.P. 28905", "TERRITORIO", ["Getafe", "28905"]),
    # Two hospitals or institutions joined by "y".
    ("Hospital Clínico Universidad de Chile y Hospital San José", "HOSPITAL",
     ["Hospital Clínico Universidad de Chile", "Hospital San José"]),
    ("Instituto de Salud Carlos III y Centro Nacional de Epidemiología",
     "INSTITUCION",
     ["Instituto de Salud Carlos III", "Centro Nacional de Epidemiología"]),
    # One value: a street word after a street word, after "del", or in a
    # street's own name; a post-office box; numbers that are no postcode.
    ("Calle de la Plaza de Toros, 23", "CALLE", ["Calle de la Plaza de Toros, 23"]),
    ("Hospital Virgen del Camino", "HOSPITAL", ["Hospital Virgen del Camino"]),
    ("Apartado de Correos 20134", "CALLE", ["Apartado de Correos 20134"]),
    # "y" inside one hospital's name; a floor stays (annotated either way).
    ("Hospital de Cuidados y Rehabilitación", "HOSPITAL",
     ["Hospital de Cuidados y Rehabilitación"]),
    ("Hospital Juan Canalejo Planta 11", "HOSPITAL",
     ["Hospital Juan Canalejo Planta 11"]),
    ("Doctor Vertiz 737 interior 35", "CALLE", ["Doctor Vertiz 737 interior 35"]),
    ("E 28053", "TERRITORIO", ["E 28053"]),
    # Two years joined by a conjunction; a month range without digits stays.
    ("1993 y 1994", "FECHAS", ["1993", "1994"]),
    ("2001 a 2005", "FECHAS", ["2001", "2005"]),
    ("marzo y abril de 2004", "FECHAS", ["marzo y abril de 2004"]),
])
def test_when_two_values_are_one_span_then_cut(text, label, expected):
    spans = tidy_spans(text, [PhiSpan(0, len(text), label, "crf", 0.9)])
    assert [text[s.start:s.end] for s in spans] == expected
    assert {(s.label, s.source, s.confidence) for s in spans} == {(label, "crf", 0.9)}


def test_when_a_date_in_digits_is_missed_then_added_with_the_site_date_label():
    text = ("• El 22-7-04 se produjo un intento; se retiró en sep-04, el "
            "2.3.2007 y el (28/2/07). Ratio 1/2048, pH 7.35, 30/13/04, 3-4-5 "
            "cm, versión 1.2.3.4; ingresa el 4-8-04.")
    known = text.index("4-8-04")
    crf = PhiSpan(known - 3, known + 6, "FECHAS", "crf", 0.8)  # "el 4-8-04"
    spans = tidy_spans(text, [crf])
    assert [text[s.start:s.end] for s in spans] == [
        "22-7-04", "sep-04", "2.3.2007", "28/2/07", "el 4-8-04"]
    assert {(s.label, s.source) for s in spans[:-1]} == {
        ("FECHAS", "rules:spanish_dates")}
    assert spans[-1] == crf


def test_when_street_word_stands_alone_then_joined_to_the_street_after_it():
    text = "Hospital Miguel Servet Pso. Isabel La Católica, s/n. 50009 Zaragoza"
    hospital = PhiSpan(0, text.index(" Pso"), "HOSPITAL", "crf", 0.9)
    word = PhiSpan(text.index("Pso"), text.index("Pso") + 3, "HOSPITAL", "crf", 0.9)
    rest = PhiSpan(text.index("Isabel"), text.index("s/n") + 3, "CALLE", "crf", 0.8)
    town = PhiSpan(text.index("50009"), len(text), "TERRITORIO", "crf", 0.9)
    spans = tidy_spans(text, [hospital, word, rest, town])
    assert [(text[s.start:s.end], s.label) for s in spans] == [
        ("Hospital Miguel Servet", "HOSPITAL"),
        ("Pso. Isabel La Católica, s/n", "CALLE"),
        ("50009", "TERRITORIO"), ("Zaragoza", "TERRITORIO")]


def test_when_family_doctor_then_familia_is_no_relative():
    text = "Su médico de familia solicitó analítica; la familia refiere fiebre."
    doctor = text.index("familia")
    relatives = text.index("familia", doctor + 1)
    spans = [PhiSpan(s, s + 7, "FAMILIARES_SUJETO_ASISTENCIA", "crf", 0.7)
             for s in (doctor, relatives)]
    assert tidy_spans(text, spans) == (spans[1],)


def _values(text, spans):
    return [(text[s.start:s.end], s.label, s.start) for s in spans]


def test_when_a_keep_label_is_found_then_its_value_is_not_marked_elsewhere():
    from deid_pipeline.tagger.merge import reconcile

    text = "Acude con su madre. La madre de Lucía refiere fiebre."
    found = [PhiSpan(13, 18, "FAMILIARES_SUJETO_ASISTENCIA", "crf", 0.9),
             PhiSpan(32, 37, "NOMBRE_SUJETO_ASISTENCIA", "crf", 0.9)]
    assert _values(text, reconcile(text, found)) == [
        ("madre", "FAMILIARES_SUJETO_ASISTENCIA", 13),
        ("Lucía", "NOMBRE_SUJETO_ASISTENCIA", 32)]


def test_when_a_value_stands_where_tidying_drops_it_then_no_copy_is_marked_there():
    from deid_pipeline.tagger.merge import reconcile

    text = "Vive con la familia Sanz. Remitido por su médico de familia."
    found = [PhiSpan(12, 19, "OTROS_SUJETO_ASISTENCIA", "crf", 0.9)]
    assert dropped_by_tidying(text, PhiSpan(52, 59, "OTROS_SUJETO_ASISTENCIA",
                                            "propagated"))
    assert _values(text, reconcile(text, found)) == [
        ("familia", "OTROS_SUJETO_ASISTENCIA", 12)]


AFFILIATION = ("Remitido por: Rajeshwari Subramaniam, MDS Reader, Department of Oral "
               "Surgery, Sri Ramachandra Dental College, Porur, Chennai 600116\n"
               "Médico: Rajeshwari Subramaniam.\n")


def test_when_a_place_span_is_a_long_line_of_values_then_cut_at_its_commas():
    start = AFFILIATION.index("Rajeshwari")
    end = AFFILIATION.index("\n")
    spans = tidy_spans(AFFILIATION, [PhiSpan(start, end, "CALLE", "crf", 0.6)])
    assert [AFFILIATION[s.start:s.end] for s in spans] == [
        "Rajeshwari Subramaniam", "MDS Reader", "Department of Oral Surgery",
        "Sri Ramachandra Dental College", "Porur", "Chennai 600116"]
    assert {(s.label, s.source) for s in spans} == {("CALLE", "crf")}


@pytest.mark.parametrize("street", [
    # MEDDOCAN's longest gold street with three commas, and shorter ones.
    "Calle del Alcalde Pablo Durán y Pérez de Castro, 6, 11, A",
    "Plaza de las Américas, Edf. Argentina, esc 9, 6A",
    "Consultorio 510 Vialidad de la barranca 22, Colonia Valle de las palmas",
])
def test_when_a_street_has_its_numbers_after_commas_then_one_value(street):
    span = PhiSpan(0, len(street), "CALLE", "crf", 0.9)
    assert tidy_spans(street, [span]) == (span,)


def test_when_a_name_stands_in_a_long_place_span_then_marked_where_it_stands_alone():
    from deid_pipeline.tagger.merge import reconcile

    start = AFFILIATION.index("Rajeshwari")
    crf = tidy_spans(AFFILIATION, [PhiSpan(start, AFFILIATION.index("\n"), "CALLE",
                                           "crf", 0.6)])
    alone = AFFILIATION.index("Rajeshwari", start + 1)
    assert ("Rajeshwari Subramaniam", "CALLE", alone) in _values(
        AFFILIATION, reconcile(AFFILIATION, crf))


def test_when_e_and_its_postcode_are_two_spans_then_one():
    text = "Hospital San Juan de la Cruz E-23400 Ubeda (Jaén)"
    e = text.index("E-")
    spans = tidy_spans(text, [PhiSpan(e, e + 2, "TERRITORIO", "crf", 0.5),
                              PhiSpan(e + 2, e + 7, "TERRITORIO", "crf", 0.9)])
    assert [text[s.start:s.end] for s in spans] == ["E-23400"]


TIMES = [  # (text, the number of years the model read as an age)
    ("TBC renal hace mas de 20 años, con pielonefritis", "20 años"),
    ("fumador durante los últimos 40 años, sin alergias", "40 años"),
    ("una evolución de más de cinco años. Las pruebas", "cinco años"),
    ("en un periodo de 6 años, así como", "6 años"),
    ("de 30 años de edad. Ocho años atrás tuvo su primera hija", "Ocho años"),
    ("desde hace 3 meses refiere dolor", "3 meses"),
]
AGES = [  # after de, a los, con, or alone
    ("Mujer de 21 años que consultó", "21 años"),
    ("neumonía a los 9 meses y traumatismo", "9 meses"),
    ("el niño con 15 meses de edad, presenta", "15 meses"),
    ("Edad: 47 años Sexo: M", "47 años"),
]


def _age_span(text, age):
    return PhiSpan(text.index(age), text.index(age) + len(age),
                   "EDAD_SUJETO_ASISTENCIA", "crf", 0.8)


def test_when_an_age_is_a_time_then_dropped():
    for text, age in TIMES:
        assert tidy_spans(text, [_age_span(text, age)]) == (), age
        assert dropped_by_tidying(text, _age_span(text, age))
    for text, age in AGES:
        span = _age_span(text, age)
        assert tidy_spans(text, [span]) == (span,), age
        assert not dropped_by_tidying(text, span)
