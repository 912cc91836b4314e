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
writes to local disk, GCS or HDFS); their names, row order, counts and the
writing of one file are the store's (``store/tables.py``), these are the Beam
transforms around them.
"""

from __future__ import annotations

import json
import pickle
from collections import Counter

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from deid_pipeline.outputs.rows import document_row, identifier_rows, quarantine_row
from deid_pipeline.store.files import (
    FileSystemFlags,
    use_filesystem_flags,
    write_bytes,
)
from deid_pipeline.store.tables import (
    COUNTS_FILE,
    SCHEMAS,
    shard_of,
    shard_path,
    sort_columns,
    sort_key,
    write_table_file,
    written_counts,
)


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
        shard_column = sort_columns(self._table)[0]
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
