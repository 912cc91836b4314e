"""Write: dataclasses become rows only here, at the edge, then sorted Parquet shards.

Rows are routed to a fixed number of shards by a stable hash of the document
id, sorted inside each shard and written with pyarrow through Beam's
FileSystems (so the same code writes to local disk, GCS or HDFS). Sorting is
what makes a re-run with the same key byte-identical whatever order the
workers finished in; the shard count, chosen from the input size, keeps the
rows one worker must hold and sort bounded however large the input.
"""

from __future__ import annotations

import zlib

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.rows import document_row, identifier_rows, quarantine_row
from deid_pipeline.schemas import DOCUMENTS, IDENTIFIERS, PERSONS, QUARANTINE

ROW_GROUP_SIZE = 10_000


# How each table's rows are sharded and ordered (all columns of the order are
# total for the table, so the order is fully determined).
_ORDER: dict[str, tuple[str, ...]] = {
    "documents": ("doc_id", "person_id", "text"),
    "identifiers": ("doc_id", "start", "end", "label"),
    "quarantine": ("doc_id", "stage", "origin", "error_message", "raw"),
    "persons": ("person_id",),
}
SCHEMAS = {
    "documents": DOCUMENTS,
    "identifiers": IDENTIFIERS,
    "quarantine": QUARANTINE,
    "persons": PERSONS,
}


def shard_of(value: str, num_shards: int) -> int:
    """Stable across processes and runs (unlike ``hash``)."""
    return zlib.crc32(value.encode("utf-8")) % num_shards


def shard_path(directory: str, table: str, shard: int, num_shards: int) -> str:
    return FileSystems.join(
        directory, table, f"part-{shard:05d}-of-{num_shards:05d}.parquet"
    )


def _sort_key(table: str):
    columns = _ORDER[table]

    def key(row: dict) -> tuple:
        # Nulls sort last; (True, 0) never meets a value of another type.
        return tuple((True, 0) if row[c] is None else (False, row[c]) for c in columns)

    return key


def write_table_file(path: str, schema: pa.Schema, rows: list[dict]) -> None:
    """Write rows (already ordered) as one Parquet file at ``path``."""
    with FileSystems.create(path) as channel:
        with pq.ParquetWriter(channel, schema) as writer:
            for i in range(0, max(len(rows), 1), ROW_GROUP_SIZE):
                chunk = rows[i : i + ROW_GROUP_SIZE]
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))


class _WriteShard(beam.DoFn):
    def __init__(self, directory: str, table: str, num_shards: int) -> None:
        self._directory = directory
        self._table = table
        self._num_shards = num_shards

    def process(self, element):
        shard, rows = element
        rows = sorted(rows, key=_sort_key(self._table))
        path = shard_path(self._directory, self._table, shard, self._num_shards)
        write_table_file(path, SCHEMAS[self._table], rows)
        yield len(rows)


class WriteSortedParquet(beam.PTransform):
    """Rows of one table -> ``directory/table/part-SSSSS-of-NNNNN.parquet``."""

    def __init__(self, directory: str, table: str, num_shards: int) -> None:
        super().__init__()
        self._directory = directory
        self._table = table
        self._num_shards = num_shards

    def expand(self, rows):
        shard_column = _ORDER[self._table][0]
        n = self._num_shards
        return (
            rows
            | "Shard" >> beam.Map(lambda r: (shard_of(str(r[shard_column]), n), r))
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard" >> beam.ParDo(_WriteShard(self._directory, self._table, n))
        )


def write_empty_table(directory: str, table: str) -> None:
    """A table with no rows is still a readable table: one empty shard."""
    write_table_file(shard_path(directory, table, 0, 1), SCHEMAS[table], [])


class WriteTables(beam.PTransform):
    """Write documents, identifiers, persons and quarantine under ``directory``."""

    def __init__(self, directory: str, num_shards: int = 1) -> None:
        super().__init__()
        self._directory = directory
        self._num_shards = num_shards

    def expand(self, outputs):
        research, persons, quarantine = outputs
        d, n = self._directory, self._num_shards
        tables = {
            "documents": research | "DocumentRows" >> beam.Map(document_row),
            "identifiers": research | "IdentifierRows" >> beam.FlatMap(identifier_rows),
            "persons": persons,
            "quarantine": quarantine | "QuarantineRows" >> beam.Map(quarantine_row),
        }
        return {
            table: rows
            | f"Write{table.capitalize()}" >> WriteSortedParquet(d, table, n)
            for table, rows in tables.items()
        }
