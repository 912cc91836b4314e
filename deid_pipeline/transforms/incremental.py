"""The documented former import path of ``current_files`` (docs/incremental.md).

The incremental layout lives in ``deid_pipeline/store/incremental.py``: it is
the job's output lifecycle, not a PTransform. Sites' scripts that import
``deid_pipeline.transforms.incremental.current_files`` keep working.
"""

from deid_pipeline.store.incremental import current_files

__all__ = ["current_files"]
