"""Beam shell of the table inputs: rows grouped by person, de-identified, written.

``DeidentifyTables`` takes the rows of every table of the run (read and
checked against their policies by the job), groups them by person key (the
one shuffle: a person's rows of every table meet, so the values of their
person, pseudonym and ``seed`` columns form one dictionary that every text
column of the person is tagged with, as an HL7 header seeds its reports),
applies the column actions (``deid_pipeline.tables.columns``) and writes:

- ``directory/tables/<name>/part-00000-of-00001.parquet``: each research
  table, rows in input order (so a re-run writes the same bytes);
- ``identifiers/``, ``quarantine/`` and ``persons/`` as the text job does.

Returns the ``written_counts`` of everything written, for ``WriteCounts``.
"""

from __future__ import annotations

import pickle
from collections import Counter
from typing import NamedTuple

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.flow import DocumentFlow
from deid_pipeline.keys import person_id
from deid_pipeline.outputs.rows import quarantine_row
from deid_pipeline.store.files import FileSystemFlags, use_filesystem_flags
from deid_pipeline.store.tables import shard_path, write_table_file
from deid_pipeline.tables.columns import (
    RowOutcome,
    deidentify_row,
    person_key_of,
    person_row,
    pseudonyms_of,
    seed_entries,
)
from deid_pipeline.tables.policy import TablePolicy
from deid_pipeline.tables.read import TableRow
from deid_pipeline.tables.schema import coerce
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.tag import acquire_tagger
from deid_pipeline.transforms.write import WriteSortedParquet

__all__ = ["TableInput", "DeidentifyTables", "table_path", "TABLES_DIR"]

TABLES_DIR = "tables"


class TableInput(NamedTuple):
    """One table of the run.

    Fields:
      name: the table's name (``--table NAME=...``; its output folder).
      origin: the file(s) it was read from, for the quarantine.
      policy: its validated column policy.
      schema: the research table's Arrow schema (``tables.schema``).
    """

    name: str
    origin: str
    policy: TablePolicy
    schema: pa.Schema


def table_path(directory: str, name: str) -> str:
    """The one Parquet file of research table ``name`` under ``directory``."""
    return shard_path(FileSystems.join(directory, TABLES_DIR), name, 0, 1)


class _PersonRowsFn(beam.DoFn):
    """(person key, rows of every table) -> one RowOutcome per row."""

    PERSONS = "persons"

    def __init__(self, tables: dict[str, TableInput], config: TaggerConfig,
                 handle: shared.Shared, rewriter: Rewriter) -> None:
        self._tables = tables
        self._config = config
        self._shared = handle
        self._rewriter = rewriter
        self._flow: DocumentFlow | None = None
        self._rows = Metrics.counter("deid", "table_rows_written")

    def setup(self) -> None:
        self._flow = DocumentFlow(acquire_tagger(self._shared, self._config),
                                  self._rewriter)

    def process(self, element):
        key, rows = element
        rows = sorted(rows, key=lambda r: (r.table, r.index))
        readable = [(self._tables[r.table].policy, r) for r in rows if not r.error]
        seeds = tuple(e for policy, r in readable for e in seed_entries(policy, r))
        pseudonyms = {k: v for policy, r in readable
                      for k, v in pseudonyms_of(policy, r, self._rewriter.key).items()}
        written = 0
        for row in rows:
            table = self._tables[row.table]
            outcome = deidentify_row(table.policy, row, self._rewriter, self._flow,
                                     seeds, table.origin, pseudonyms)
            written += outcome.research is not None
            yield outcome
        self._rows.inc(written)
        if key.startswith("person:") and written:
            pid = person_id(self._rewriter.key, key[len("person:"):])
            yield beam.pvalue.TaggedOutput(self.PERSONS, person_row(
                pid, readable, written, self._rewriter))


def _group_key(tables: dict[str, TableInput], row: TableRow) -> str:
    """The person key of a row, else the row itself (it groups alone)."""
    if not row.error:
        key = person_key_of(tables[row.table].policy, row)
        if key is not None:
            return f"person:{key}"
    return f"row:{row.table}/{row.index}"


class _WriteTableFn(beam.DoFn):
    """(table, its research rows) -> its Parquet file, rows in input order."""

    def __init__(self, directory: str, tables: dict[str, TableInput],
                 flags: FileSystemFlags) -> None:
        self._directory = directory
        self._tables = tables
        self._flags = flags

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, element):
        name, packed = element
        schema = self._tables[name].schema
        rows = sorted(pickle.loads(p) for p in packed)
        table = pa.table({
            f.name: pa.array([coerce(r[1].get(f.name), f.type) for r in rows],
                             type=f.type)
            for f in schema}, schema=schema)
        write_table_file(table_path(self._directory, name), schema, table)
        yield Counter({(f"table:{name}", ""): len(rows)})


def _outcome_counts(outcome: RowOutcome) -> Counter:
    if outcome.quarantine is not None:
        return Counter({(f"table_quarantined:{outcome.table}",
                         outcome.quarantine.stage): 1})
    return Counter()


class DeidentifyTables(beam.PTransform):
    """Rows of every table -> research tables, identifiers, quarantine, persons.

    Args:
      tables: the run's tables by name (``TableInput``).
      rows: every row read (``tables.read.TableRow``), unreadable ones too.
      tagger: the tagger's configuration (text columns).
      rewriter: mode, policy and key.
      directory: the staging directory written into.
      num_shards: shards of identifiers, quarantine and persons.
      filesystem_flags: the job's Beam options, for workers' file systems.

    """

    def __init__(self, tables: dict[str, TableInput], rows: list[TableRow],
                 tagger: TaggerConfig, rewriter: Rewriter, directory: str,
                 num_shards: int = 1, filesystem_flags: FileSystemFlags = None
                 ) -> None:
        super().__init__()
        self._tables = tables
        self._rows = rows
        self._tagger = tagger
        self._rewriter = rewriter
        self._directory = directory
        self._shards = num_shards
        self._flags = filesystem_flags
        self._shared = shared.Shared()

    def expand(self, pbegin):
        tables, d, n, flags = self._tables, self._directory, self._shards, self._flags
        outcomes, persons = (
            pbegin
            | "Rows" >> beam.Create(self._rows, reshuffle=False)
            | "ByPerson" >> beam.Map(lambda r: (_group_key(tables, r), r))
            | "GroupPerson" >> beam.GroupByKey()
            | "Columns" >> beam.ParDo(_PersonRowsFn(
                tables, self._tagger, self._shared, self._rewriter)
            ).with_outputs(_PersonRowsFn.PERSONS, main="outcomes")
        )
        written = (
            outcomes
            | "Research" >> beam.FlatMap(
                lambda o: [] if o.research is None else [
                    (o.table, pickle.dumps((o.index, o.research),
                                           protocol=pickle.HIGHEST_PROTOCOL))])
            | "GroupTable" >> beam.GroupByKey()
            | "WriteTables" >> beam.ParDo(_WriteTableFn(d, tables, flags))
        )
        identifiers = (
            outcomes
            | "Identifiers" >> beam.FlatMap(lambda o: o.identifiers)
            | "WriteIdentifiers" >> WriteSortedParquet(d, "identifiers", n, flags)
        )
        quarantine = (
            outcomes
            | "Quarantined" >> beam.FlatMap(
                lambda o: [] if o.quarantine is None else [
                    quarantine_row(o.quarantine)])
            | "WriteQuarantine" >> WriteSortedParquet(d, "quarantine", n, flags)
        )
        people = persons | "WritePersons" >> WriteSortedParquet(d, "persons", n, flags)
        by_table = outcomes | "TableCounts" >> beam.Map(_outcome_counts)
        return (written, identifiers, quarantine, people, by_table
                ) | "AllTableCounts" >> beam.Flatten()
