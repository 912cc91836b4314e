"""The run's files, below the transforms: what it reads, stages and publishes.

:mod:`~deid_pipeline.store.files` (paths through Beam's file systems, the
file-system flags a worker needs), :mod:`~deid_pipeline.store.inputs`
(``--input`` patterns -> the files a run reads), :mod:`~deid_pipeline.store.tables`
(the table files: names, row order, counts), :mod:`~deid_pipeline.store.publish`
(staging and the all-or-nothing publish) and :mod:`~deid_pipeline.store.incremental`
(``--incremental``: the input manifest, the link history, ``compact``).
Imported by ``transforms/`` and the jobs in ``pipelines/``; imports neither
(Beam only for its file systems).
"""
