"""A run's tables: their rows, and the readers that report on them afterwards.

:mod:`~deid_pipeline.outputs.rows` turns dataclasses into the rows of the
Parquet schemas (the only place they become dicts);
:mod:`~deid_pipeline.outputs.report` (``deid-pipeline report``) and
:mod:`~deid_pipeline.outputs.review` (the review page) read a finished run's
outputs back. Never imports Beam or the tagger.
"""
