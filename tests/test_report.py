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
