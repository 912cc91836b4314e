"""The identifier view built as columns: the same rows, in the same order."""

from __future__ import annotations

from faker import Faker

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.outputs.rows import IdentifierColumns, identifier_rows
from deid_pipeline.store.tables import (
    SCHEMAS,
    sort_columns,
    sort_key,
    written_counts,
)
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger


def _results():
    fake = Faker("en_US")
    fake.seed_instance(7)
    tagger = PhiTagger.from_config(TaggerConfig(("rules", "dictionary")))
    rewriter = Rewriter("surrogate", b"columns-test-key-0123456789abcdef",
                        as_of_year=2026)
    results = []
    # Ids out of order and one id twice: rows sort by id, then offsets.
    for k, doc_id in enumerate(["n-3", "n-1", "n-2", "n-1"]):
        text = (f"Seen by Dr. {fake.last_name()} on {fake.date('%m/%d/%Y')}. "
                f"Pt {fake.name()} lives in {fake.city()}, call "
                f"{fake.numerify('###-###-####')}.\n" * (k + 1))
        tagged = tagger.tag(ClinicalDocument(doc_id, text, "text"))
        results.append(rewriter.rewrite(tagged))
    return results


def test_when_built_as_columns_then_same_rows_and_order_as_the_row_sort():
    results = _results()
    rows = [row for r in results for row in identifier_rows(r)]
    assert len(rows) > 20 and len({row["doc_id"] for row in rows}) == 3
    rows.sort(key=sort_key("identifiers"))
    columns = IdentifierColumns()
    for r in results:
        columns.add(r)
    table = columns.table(SCHEMAS["identifiers"], sort_columns("identifiers"))
    assert len(columns) == len(rows)  # counted, though the columns were handed over
    assert not any(columns.columns)
    assert table.schema == SCHEMAS["identifiers"]
    assert table.to_pylist() == rows
    assert written_counts("identifiers", table) == written_counts("identifiers", rows)


def test_when_no_document_added_then_the_table_is_empty():
    columns = IdentifierColumns()
    assert not columns
    assert columns.table(SCHEMAS["identifiers"], ("doc_id",)).num_rows == 0
