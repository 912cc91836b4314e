"""The pipeline's Beam transforms.

Importing them makes Beam scan each DoFn for state and timers once, not
about nine times (:func:`~deid_pipeline.transforms.beam_costs.remember_dofn_specs`):
every process that builds or runs the pipeline imports this package, a
worker when it unpickles the first of our DoFns.
"""

from deid_pipeline.transforms.beam_costs import remember_dofn_specs

remember_dofn_specs()
