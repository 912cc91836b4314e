"""Reading Parquet files on the calling thread.

Once a read has started one of pyarrow's thread pools, the process can abort
as it exits (``terminate called without an active exception``, exit 134,
after every output was written): pyarrow 25 did so in about 1 exit in 80 on a
loaded machine, and a CI run of the README's ``compact`` example failed on
it. ``pq.read_table`` goes through the dataset scanner, which starts a pool
even with ``use_threads=False``; ``ParquetFile.read`` with it starts none.
The files read here are small, or read inside Beam workers that already keep
every core busy, so threads would buy nothing.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet(source, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file (a path or a file object), no thread started."""
    with pq.ParquetFile(source) as parquet:
        return parquet.read(columns=columns, use_threads=False)


def read_parquet_files(paths: list[str], columns: list[str] | None = None
                       ) -> pa.Table:
    """The files' rows in the order given (``columns`` of each)."""
    return pa.concat_tables([read_parquet(p, columns) for p in paths])
