"""Write: dataclasses become rows only here, at the edge, then sorted Parquet files.

Two layouts, both byte-identical on a re-run with the same key whatever
order the workers finished in, because every file's name and rows are
determined by the input alone and rows are sorted inside each file:

- per chunk (``documents`` and ``identifiers`` of the batch file path,
  ``transforms/chunks.py``): ``part-FFFFF-CCCCC.parquet`` for chunk ``C``
  of input file ``F`` (files numbered in sorted path order), written by the
  worker that rewrote the chunk, so documents never cross a shuffle;
- sharded (``persons``, ``quarantine``, and any PCollection of rows through
  ``WriteSortedParquet``): rows routed to a fixed number of shards by a
  stable hash of the first order column, ``part-SSSSS-of-NNNNN.parquet``.

Files are written with pyarrow through Beam's FileSystems (so the same code
writes to local disk, GCS or HDFS).
"""

from __future__ import annotations

import json
import pickle
import zlib
from collections import Counter

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.outputs.rows import document_row, identifier_rows, quarantine_row
from deid_pipeline.pipelines.storage import (
    FileSystemFlags,
    read_bytes,
    use_filesystem_flags,
    write_bytes,
)
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


def chunk_path(directory: str, table: str, file_index: int, chunk_index: int) -> str:
    """The Parquet file of one chunk (``chunk_index``) of input file ``file_index``."""
    return FileSystems.join(
        directory, table, f"part-{file_index:05d}-{chunk_index:05d}.parquet"
    )


def sort_columns(table: str) -> tuple[str, ...]:
    """The columns ``table``'s rows are ordered by (see :func:`sort_key`)."""
    return _ORDER[table]


def sort_key(table: str):
    """Key function ordering ``table``'s rows (total: the order is fully determined)."""
    columns = _ORDER[table]

    def key(row: dict) -> tuple:
        # Nulls sort last; (True, 0) never meets a value of another type.
        return tuple((True, 0) if row[c] is None else (False, row[c]) for c in columns)

    return key


# Columns run.json counts a table's rows by, besides the rows themselves.
_COUNTED_BY = {"identifiers": "label", "quarantine": "stage"}
COUNTS_FILE = "_counts.json"


def written_counts(table: str, rows: list[dict] | pa.Table) -> Counter:
    """What run.json says of rows written to ``table``, as (table, value) -> n.

    ``(table, "")`` is the number of rows; identifiers are also counted by
    label and quarantine rows by stage. The writers count what they wrote, so
    the driver reads one small file, not every table file's footer (each one
    a request, and on S3 a new client, through Beam's file systems).
    """
    counts = Counter({(table, ""): len(rows)})
    column = _COUNTED_BY.get(table)
    if column and isinstance(rows, pa.Table):
        counts.update({(table, c["values"]): c["counts"] for c in
                       rows.column(column).value_counts().to_pylist()})
    elif column:
        counts.update((table, row[column]) for row in rows)
    return counts


def _merge_counts(counts) -> Counter:
    total: Counter = Counter()
    for c in counts:
        total.update(c)
    return total


class _WriteCountsFn(beam.DoFn):
    def __init__(self, directory: str, filesystem_flags: FileSystemFlags) -> None:
        self._directory = directory
        self._flags = filesystem_flags

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, counts: Counter):
        rows = sorted([table, value, n] for (table, value), n in counts.items())
        write_bytes(
            FileSystems.join(self._directory, COUNTS_FILE),
            json.dumps(rows).encode("utf-8"),
        )
        yield len(rows)


class WriteCounts(beam.PTransform):
    """Counters of ``written_counts`` -> their sum in ``directory/_counts.json``."""

    def __init__(self, directory: str, filesystem_flags: FileSystemFlags = None):
        super().__init__()
        self._directory = directory
        self._flags = filesystem_flags

    def expand(self, counts):
        return (
            counts
            | "SumCounts" >> beam.CombineGlobally(_merge_counts)
            | "WriteCounts" >> beam.ParDo(_WriteCountsFn(self._directory, self._flags))
        )


def read_counts(directory: str) -> Counter:
    """The counts ``WriteCounts`` wrote under ``directory``."""
    rows = json.loads(read_bytes(FileSystems.join(directory, COUNTS_FILE)))
    return Counter({(table, value): n for table, value, n in rows})


def write_table_file(path: str, schema: pa.Schema, rows: list[dict] | pa.Table
                     ) -> None:
    """Write rows (already ordered; dicts or a table) as one Parquet file."""
    with FileSystems.create(path) as channel:
        with pq.ParquetWriter(channel, schema) as writer:
            for i in range(0, max(len(rows), 1), ROW_GROUP_SIZE):
                if isinstance(rows, pa.Table):
                    writer.write_table(rows.slice(i, ROW_GROUP_SIZE))
                else:
                    chunk = rows[i : i + ROW_GROUP_SIZE]
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema))


class _WriteShard(beam.DoFn):
    def __init__(
        self, directory: str, table: str, num_shards: int,
        filesystem_flags: FileSystemFlags = None,
    ) -> None:
        self._directory = directory
        self._table = table
        self._num_shards = num_shards
        self._flags = filesystem_flags

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, element):
        shard, packed = element
        names = SCHEMAS[self._table].names
        rows = sorted(
            (dict(zip(names, pickle.loads(p), strict=True)) for p in packed),
            key=sort_key(self._table),
        )
        path = shard_path(self._directory, self._table, shard, self._num_shards)
        write_table_file(path, SCHEMAS[self._table], rows)
        yield written_counts(self._table, rows)


class WriteSortedParquet(beam.PTransform):
    """Rows of one table -> ``directory/table/part-SSSSS-of-NNNNN.parquet``.

    Returns the ``written_counts`` of each shard written.
    """

    def __init__(
        self, directory: str, table: str, num_shards: int,
        filesystem_flags: FileSystemFlags = None,
    ) -> None:
        super().__init__()
        self._directory = directory
        self._table = table
        self._num_shards = num_shards
        self._flags = filesystem_flags

    def expand(self, rows):
        shard_column = _ORDER[self._table][0]
        names = SCHEMAS[self._table].names
        n = self._num_shards
        # Rows cross the shuffle as bytes (the values in schema order): a
        # runner may hold grouped values decoded, dicts are several times
        # bigger than their pickle.
        return (
            rows
            | "Shard"
            >> beam.Map(
                lambda r: (
                    shard_of(str(r[shard_column]), n),
                    pickle.dumps(
                        tuple(r.get(c) for c in names), protocol=pickle.HIGHEST_PROTOCOL
                    ),
                )
            )
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.ParDo(
                _WriteShard(self._directory, self._table, n, self._flags)
            )
        )


def write_empty_table(directory: str, table: str) -> str:
    """A table with no rows is still a readable table: one empty shard (its path)."""
    path = shard_path(directory, table, 0, 1)
    write_table_file(path, SCHEMAS[table], [])
    return path


class WriteTables(beam.PTransform):
    """Write documents, identifiers, persons and quarantine under ``directory``.

    For the PCollections of ``DeidentifyClinicalDocuments`` (every table
    sharded); the batch file job writes documents and identifiers per chunk.
    """

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
