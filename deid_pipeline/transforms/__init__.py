"""The pipeline's Beam transforms.

Importing them makes Beam scan each DoFn for state and timers once, not
about nine times, and end each bundle without waiting out a 200 ms sleep
(:func:`~deid_pipeline.transforms.beam_costs.install`): every process that
builds or runs the pipeline imports this package, a worker when it unpickles
the first of our DoFns.
"""

from deid_pipeline.transforms.beam_costs import install

install()
