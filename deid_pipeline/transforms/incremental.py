"""The documented former import path of ``current_files`` (docs/incremental.md).

The incremental layout moved to ``pipelines/incremental.py``: it is the job's
output lifecycle, not a PTransform. Sites' scripts that import
``deid_pipeline.transforms.incremental.current_files`` keep working.
"""

from deid_pipeline.pipelines.incremental import current_files

__all__ = ["current_files"]
