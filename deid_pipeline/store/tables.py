"""A run's table files: their names, their row order, their counts, Parquet.

Every table file is named by its place alone (``part-SSSSS-of-NNNNN.parquet``
for shard ``S`` of ``N``, ``part-FFFFF-CCCCC.parquet`` for chunk ``C`` of
input file ``F``) and holds its rows in one total order, so a re-run with the
same key writes the same bytes whatever order the workers finished in. The
Beam transforms that write them (``transforms/write.py``, ``transforms/chunks.py``),
the publish (an empty table) and ``compact`` (filtered quarantine) all write
through :func:`write_table_file`. Beam-free but for its file systems.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.schemas import DOCUMENTS, IDENTIFIERS, PERSONS, QUARANTINE
from deid_pipeline.store.files import read_bytes

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


def write_empty_table(directory: str, table: str) -> str:
    """A table with no rows is still a readable table: one empty shard (its path)."""
    path = shard_path(directory, table, 0, 1)
    write_table_file(path, SCHEMAS[table], [])
    return path
