"""Reading a table file into rows: CSV, TSV, JSONL and Parquet.

CSV and TSV are decoded as the text inputs are (UTF-8 with or without BOM,
UTF-16/32 with BOM, else cp1252/Latin-1: ``readers.formats.decode_text``) and
split with Python's ``csv`` module (quoted fields, embedded newlines, doubled
quotes). A row whose field count differs from the header's (a ragged row) or
a JSONL line that is not an object is not a row: it comes back as a
:class:`TableRow` with ``error`` set, to be quarantined whole. Parquet keeps
its column types (a ``keep`` column is published with the type it had).
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import NamedTuple

import pyarrow as pa

from deid_pipeline.parquet_files import read_parquet
from deid_pipeline.readers.byte_order import decode_wide
from deid_pipeline.readers.formats import decode_text

__all__ = ["TABLE_FORMATS", "TableData", "TableRow", "read_table", "table_format"]

TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
# Compressed files (``notes.csv.gz``) are decompressed first, as text inputs are.
_COMPRESSED = (".gz", ".bz2")


class TableRow(NamedTuple):
    """One row of a table, or what stood where a row could not be read.

    Fields:
      table: the table's name (``--table NAME=...``).
      index: the row's ordinal in its file, from 1 (the header is not a row).
      values: ``(column, value)`` pairs in header order (PHI); empty if error.
      error: why this is not a row (ragged, not JSON), else None.
      raw: the row's raw text when ``error`` (PHI), for the quarantine.
    """

    table: str
    index: int
    values: tuple[tuple[str, object], ...]
    error: str | None = None
    raw: bytes = b""


class TableData(NamedTuple):
    """A table read whole: its column names, their Arrow types, its rows."""

    header: list[str]
    types: dict[str, pa.DataType]
    rows: list[TableRow]


def table_format(path: str) -> str:
    """``csv``, ``tsv``, ``jsonl`` or ``parquet`` from the file's extension.

    A ``.gz`` or ``.bz2`` ending is looked through (``notes.csv.gz`` is CSV).
    """
    stem = path[: -len(os.path.splitext(path)[1])] if path.lower().endswith(
        _COMPRESSED) else path
    ext = os.path.splitext(stem)[1].lower().lstrip(".")
    fmt = {"txt": "tsv", "tab": "tsv", "json": "jsonl", "ndjson": "jsonl",
           "pq": "parquet"}.get(ext, ext)
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"table file {os.path.basename(path)!r}: unknown format "
                         f"(extension .csv, .tsv, .jsonl or .parquet)")
    return fmt


def _decode(data: bytes) -> str:
    wide = decode_wide(data)
    return wide if wide is not None else decode_text(data)


def _read_delimited(table: str, data: bytes, delimiter: str) -> TableData:
    text = _decode(data)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                        strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return TableData([], {}, [])
    header = [h.strip() for h in header]
    if len(set(header)) != len(header) or not all(header):
        raise ValueError(f"table {table}: the header has an empty or repeated "
                         "column name")
    rows = []
    index = 0
    while True:
        index += 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            rows.append(TableRow(table, index, (), f"unreadable CSV row: {exc}",
                                 b""))
            continue
        if not fields:
            index -= 1  # a blank line is no row
            continue
        if len(fields) != len(header):
            raw = delimiter.join(fields).encode("utf-8")
            rows.append(TableRow(table, index, (), f"ragged row: {len(fields)} "
                                 f"fields, the header has {len(header)}", raw))
            continue
        rows.append(TableRow(table, index, tuple(zip(header, fields, strict=True))))
    return TableData(header, {h: pa.string() for h in header}, rows)


def _read_jsonl(table: str, data: bytes) -> TableData:
    lines = _decode(data).splitlines()
    header: dict[str, None] = {}
    parsed: list[tuple[int, dict | None, str]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            header.update(dict.fromkeys(obj))
        parsed.append((number, obj if isinstance(obj, dict) else None, line))
    names = list(header)
    rows = []
    for index, (_number, obj, line) in enumerate(parsed, 1):
        if obj is None:
            rows.append(TableRow(table, index, (), "not a JSON object",
                                 line.encode("utf-8")))
        else:
            rows.append(TableRow(table, index,
                                 tuple((n, obj.get(n)) for n in names)))
    return TableData(names, {}, rows)


def _read_parquet(table: str, data: bytes) -> TableData:
    arrow = read_parquet(pa.BufferReader(data))
    names = arrow.column_names
    rows = [TableRow(table, i, tuple(zip(names, values, strict=True)))
            for i, values in enumerate(
                zip(*(arrow.column(n).to_pylist() for n in names), strict=True), 1)]
    return TableData(names, {f.name: f.type for f in arrow.schema}, rows)


def read_table(table: str, path: str, data: bytes) -> TableData:
    """Read table file ``path``'s (decompressed) bytes, in its extension's format."""
    fmt = table_format(path)
    if fmt == "parquet":
        return _read_parquet(table, data)
    if fmt == "jsonl":
        return _read_jsonl(table, data)
    return _read_delimited(table, data, "," if fmt == "csv" else "\t")
