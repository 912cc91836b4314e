"""The running process: interrupts, progress lines, worker settings.

What a long run needs of the process it runs in, whatever it runs (the batch
job, a Beam worker, the MLLP gateway): an interrupt ends the run and is never
a record's error (:mod:`~deid_pipeline.runtime.interrupts`); long steps say
how far they are, counts only (:mod:`~deid_pipeline.runtime.progress`); a
worker that has loaded its models settles its garbage collector and CPUs
(:mod:`~deid_pipeline.runtime.process`). Imports nothing else of the package.
"""
