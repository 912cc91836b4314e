"""Measuring the tagger: corpora with gold spans, metrics, cross-validation.

One metrics module (DESIGN.md's definitions) serves every figure the project
reports; corpora by spec (:mod:`~deid_pipeline.evaluation.corpora`) are read
into :class:`~deid_pipeline.model.ClinicalDocument` with gold spans by the
run's own readers (:mod:`deid_pipeline.readers`). ``deid-pipeline evaluate``
lives in :mod:`deid_pipeline.evaluation.cross_validation`.

May import the core, :mod:`deid_pipeline.tagger` and
:mod:`deid_pipeline.training`; never Beam, and the tagger must never import
this package (a score measured is the score shipped because the tagger does
not know it is being measured).
"""
