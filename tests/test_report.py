"""The privacy report: counts and k-anonymity over the persons table."""

import json

import pyarrow as pa
import pyarrow.parquet as pq

from deid_pipeline.outputs.report import build_report, k_anonymity
from deid_pipeline.schemas import PERSONS


def test_when_classes_small_then_counted_below_k():
    persons = (
        [{"birth_year": "1950", "sex": "F", "zip3": "021"}] * 5
        + [{"birth_year": "1961", "sex": "M", "zip3": "021"}] * 2
        + [{"birth_year": "90+", "sex": "F", "zip3": "000"}]
    )
    result = k_anonymity(persons, 5)
    assert result["equivalence_classes"] == 3
    assert result["smallest_class"] == 1
    assert result["persons_in_classes_below_k"] == 3
    assert result["classes_below_k"] == 2


def test_when_run_dir_read_then_report_has_persons_and_labels(tmp_path):
    (tmp_path / "persons").mkdir()
    rows = [
        {
            "person_id": f"p{i}",
            "n_documents": i + 1,
            "linked_by": ["record"],
            "birth_year": "1950",
            "sex": "F",
            "zip3": "021",
        }
        for i in range(3)
    ]
    pq.write_table(
        pa.Table.from_pylist(rows, schema=PERSONS),
        tmp_path / "persons" / "part-0.parquet",
    )
    (tmp_path / "run.json").write_text(
        json.dumps(
            {
                "records_read": 6,
                "records_written": 6,
                "records_quarantined": 0,
                "spans_by_label": {"DATE": 4},
                "quarantined_by_stage": {},
            }
        )
    )
    report = build_report(str(tmp_path), k=2)
    assert report["persons"] == 3
    assert report["documents_per_person"] == {"min": 1, "median": 2, "max": 3}
    assert report["k_anonymity"]["smallest_class"] == 3
    assert report["k_anonymity"]["persons_in_classes_below_k"] == 0


def test_when_no_person_has_a_quasi_identifier_then_not_checked_not_one_class():
    persons = [{"birth_year": None, "sex": None, "zip3": None}] * 9
    result = k_anonymity(persons, 5)
    assert result["checked"] is False
    assert result["persons_without_quasi_identifiers"] == 9
    assert result["known"] == {"birth_year": 0, "sex": 0, "zip3": 0}
    assert result["equivalence_classes"] is None
    assert result["smallest_class"] is None
    assert result["persons_in_classes_below_k"] is None


def test_when_some_persons_have_none_known_then_they_are_counted_apart():
    persons = (
        [{"birth_year": "1950", "sex": "F", "zip3": None}] * 2
        + [{"birth_year": None, "sex": "M", "zip3": "021"}]
        + [{"birth_year": None, "sex": None, "zip3": None}] * 6
    )
    result = k_anonymity(persons, 2)
    assert result["checked"] is True
    assert result["persons_with_quasi_identifiers"] == 3
    assert result["persons_without_quasi_identifiers"] == 6
    assert result["known"] == {"birth_year": 2, "sex": 3, "zip3": 1}
    # The six unknown persons are no class of six that hides the lone one.
    assert result["equivalence_classes"] == 2
    assert result["smallest_class"] == 1
    assert result["persons_in_classes_below_k"] == 1


def test_when_report_on_a_text_only_run_then_it_says_no_quasi_identifier_known(
    tmp_path, capfd
):
    import os

    from deid_pipeline.pipelines.cli import main
    from deid_pipeline.pipelines.job import run

    samples = os.path.join(os.path.dirname(os.path.dirname(__file__)), "samples")
    out = tmp_path / "out"
    summary = run(["--input", os.path.join(samples, "notes.jsonl"), "--output",
                   str(out), "--ephemeral-key", "--detectors", "rules,dictionary"])
    assert summary["records_written"] == 10 and summary["persons"] > 1
    capfd.readouterr()
    report_json = tmp_path / "report.json"
    assert main(["report", "--run", str(out), "--json", str(report_json)]) == 0
    ka = json.loads(report_json.read_text(encoding="utf-8"))["k_anonymity"]
    assert ka.get("checked") is False
    assert ka["persons_without_quasi_identifiers"] == summary["persons"]
    assert ka["smallest_class"] is None and ka["equivalence_classes"] is None
    text = capfd.readouterr().out
    (line,) = [x for x in text.splitlines() if x.startswith("k-anonymity")]
    assert "not checked: no quasi-identifier was known" in line
    assert f"any of the {summary['persons']} persons" in line
    assert "classes" not in line and "smallest" not in line
