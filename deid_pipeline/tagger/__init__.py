"""The PHI tagger: tokens in, labelled spans out.

Everything that decides what is PHI lives here: features and lexicons, the
CRFsuite model (training and the numba decoder), the high-precision rules,
the header-seeded patient dictionary, and the merge that reconciles them.
The public face is small: :class:`~deid_pipeline.tagger.tagging.PhiTagger`
(tag a document), :func:`~deid_pipeline.tagger.crf.load_model` (load a
model) and ``deid-pipeline train`` (:mod:`deid_pipeline.tagger.training`).

Imports only the core (data model, tokenizer, labels, leak guard's matcher)
and never Beam, HL7, linking or evaluation: the tagger must be usable and
testable on a plain string. The one exception is training's
:mod:`~deid_pipeline.tagger.augment`, which borrows the surrogate generators
to make surrogate copies of annotated notes; tagging never loads it.
"""
