"""Structured inputs: research-extract tables with a column policy each.

``policy`` reads and validates a table's column policy (``--column-policy``),
``read`` reads CSV/TSV, JSONL and Parquet tables into rows, ``columns`` applies
each column's action to a row, ``schema`` builds the output table's Arrow
schema. Beam-free: ``deid_pipeline/transforms/tables.py`` runs them in a job.
"""
