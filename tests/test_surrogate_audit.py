"""The Spanish surrogate audit (evaluation/surrogate_audit.py) on two made-up cases.

A BRAT gold of two cases and the extract a surrogate run would write for
them (its documents and identifier view, built by hand): the audit's
counts, and that it prints no value.
"""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_pipeline.evaluation.brat import format_ann
from deid_pipeline.evaluation.surrogate_audit import audit, main
from deid_pipeline.label_maps import load_label_map

# (label, original, replacement or None where the run did not tag it)
CASE_1 = [
    ("Nombre: ", None, None),
    ("NOMBRE_SUJETO_ASISTENCIA", "Lucía Ferrer Abad", "Noelia Campos Urrutia"),
    (".\nDNI: ", None, None),
    ("ID_SUJETO_ASISTENCIA", "12345678Z", "87654321X"),  # both letters right
    (".\nSexo: ", None, None),
    ("SEXO_SUJETO_ASISTENCIA", "Mujer", "Mujer"),  # kept by the site
    (".\nEdad: ", None, None),
    ("EDAD_SUJETO_ASISTENCIA", "47 años", "47 años"),  # under 90: stands
    (".\nIngreso: ", None, None),
    ("FECHAS", "03/04/2019", "26/03/2019"),
    (". Alta: ", None, None),
    ("FECHAS", "10/04/2019", "02/04/2019"),  # the same 8 days earlier
    (". Control: ", None, None),
    ("FECHAS", "12/31/2019", "[**FECHAS**]"),  # no day-first date: masked
    (".\nMédico: Dra. ", None, None),
    ("NOMBRE_PERSONAL_SANITARIO", "Ana Peña Ruiz", "John Smith"),  # not Spanish
    (". ", None, None),
    ("HOSPITAL", "Hospital Río Claro", None),  # missed by the tagger
    (".\nLocalidad: ", None, None),
    ("TERRITORIO", "Alcalá de Henares", "Ponferrada"),  # León's town
    (".\nCP: ", None, None),
    ("TERRITORIO", "28805", "24001"),  # and León's postcode: they agree
    (".\n", None, None),
]
CASE_2 = [
    ("Ingreso ", None, None),
    ("FECHAS", "05/06/2018", "01/06/2018"),
    (", alta ", None, None),
    ("FECHAS", "07/06/2018", "04/06/2018"),  # another shift: interval lost
    (". Nombre: ", None, None),
    ("NOMBRE_SUJETO_ASISTENCIA", "Pedro", "Marcos"),
    (". ", None, None),
    ("NOMBRE_SUJETO_ASISTENCIA", "Pedro", None),  # the same name, missed
    (" refiere dolor.\nVive en ", None, None),
    ("TERRITORIO", "24400 Ponferrada", "16002 Getxo"),  # a Bizkaia town in Cuenca
    (".\nAntes en ", None, None),
    ("TERRITORIO", "66260 Monterrey", "71234 Carmona"),  # foreign: counted apart
    (".\n", None, None),
]


def _write_case(doc_id, parts, gold_dir, documents, identifiers):
    text, research, ann, rows = "", "", [], []
    for label, original, replacement in parts:
        if original is None:
            text += label
            research += label
            continue
        start = len(text)
        text += original
        ann.append((start, len(text), label, original))
        if replacement is None:
            research += original
        else:
            research += replacement
            rows.append({"doc_id": doc_id, "start": start, "end": len(text),
                         "label": label, "original": original,
                         "replacement": replacement})
    with open(os.path.join(gold_dir, f"{doc_id}.txt"), "w", encoding="utf-8") as fh:
        fh.write(text)
    with open(os.path.join(gold_dir, f"{doc_id}.ann"), "w", encoding="utf-8") as fh:
        fh.write(format_ann(ann))
    documents.append({"doc_id": doc_id, "text": research})
    identifiers.extend(rows)


@pytest.fixture
def audited(tmp_path):
    load_label_map("meddocan")
    gold, extract = tmp_path / "gold", tmp_path / "out"
    gold.mkdir()
    for table in ("documents", "identifiers"):
        (extract / table).mkdir(parents=True)
    documents, identifiers = [], []
    _write_case("caso-1", CASE_1, gold, documents, identifiers)
    _write_case("caso-2", CASE_2, gold, documents, identifiers)
    pq.write_table(pa.Table.from_pylist(documents),
                   extract / "documents" / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist(identifiers),
                   extract / "identifiers" / "part-0.parquet")
    return str(gold), str(extract)


def test_when_audited_then_each_count_is_what_the_cases_hold(audited):
    result = audit(*audited)
    # 17 gold spans; the kept sex and the age under 90 are not checked.
    assert result.gold_spans == 15
    assert result.tagged_spans_checked == 13
    # Pedro tagged once and written again untagged: left where tagged and
    # where missed; the hospital missed.
    assert dict(result.left_where_tagged) == {"NOMBRE_SUJETO_ASISTENCIA": 1}
    assert dict(result.left_where_missed) == {"HOSPITAL": 1,
                                              "NOMBRE_SUJETO_ASISTENCIA": 1}
    assert (result.name_surrogates, result.name_surrogates_spanish) == (3, 2)
    assert (result.name_words, result.name_words_spanish) == (6, 4)
    assert (result.dni_nie, result.dni_nie_valid) == (1, 1)
    assert (result.numeric_dates, result.numeric_dates_valid) == (4, 4)
    assert (result.written_dates, result.written_dates_valid) == (4, 4)
    assert result.date_spans_masked == 1
    assert (result.cases_with_dates, result.cases_intervals_kept) == (2, 1)
    # Two town and postcode pairs, both of one province in the original.
    assert (result.town_postcode_pairs, result.town_postcode_disagree) == (2, 1)
    assert result.town_postcode_originals_agree == 2
    assert result.town_postcode_disagree_where_originals_agree == 1
    assert result.town_postcode_foreign == 1


def test_when_printed_then_counts_only(audited, capsys):
    assert main(["--gold", audited[0], "--extract", audited[1]]) == 0
    printed = capsys.readouterr().out
    assert "1 of 1 (100.0%)" in printed  # the DNI letters
    for part in (*CASE_1, *CASE_2):
        for value in part[1:]:
            if value and not value.startswith("[**") and value not in (
                    "Mujer", "47 años"):
                assert value not in printed
