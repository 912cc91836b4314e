"""Measuring the tagger: corpora with gold spans, metrics, cross-validation.

One metrics module (DESIGN.md's definitions) serves every figure the project
reports; corpus readers turn gold formats (PhysioNet, JSONL, Parquet, text)
into :class:`~deid_pipeline.model.ClinicalDocument` with spans, and are also
the run's readers of plain inputs. ``deid-pipeline evaluate`` lives in
:mod:`deid_pipeline.evaluation.cross_validation`.

May import the core and :mod:`deid_pipeline.tagger`; never Beam, and the
tagger must never import this package (a score measured is the score shipped
because the tagger does not know it is being measured).
"""
