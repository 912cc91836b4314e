"""The PHI tagger: tokens in, labelled spans out.

Everything that decides at run time what is PHI lives here: features and
lexicons, the CRF (loading a model, the compiled decoder, biased tagging), the
high-precision rules, the header-seeded patient dictionary, the gazetteer,
and the merge that reconciles them. The public face is small:
:class:`~deid_pipeline.tagger.tagging.PhiTagger` (tag a document),
:func:`~deid_pipeline.tagger.crf_model.load_model` (load a model) and the
detector registry (:mod:`~deid_pipeline.tagger.detectors`).

Layers, top down: ``tagging`` (the document's way through the detectors and
the merge) -> ``detectors`` (the registry, which builds each detector by name)
-> the detectors (``rules``, ``dictionary``, ``crf``, ``gazetteers``) ->
what they share (``detection``: the interface and its config; ``bio``,
``features``, ``lexicons``, ...). No module imports one above it.

Imports only the core (data model, tokenizer, labels, leak guard's matcher)
and never Beam, HL7, linking, evaluation, the surrogates or the synthetic
generators: the tagger must be usable and testable on a plain string.
Building a model (``deid-pipeline train``, augmented copies, CRFsuite
training) is :mod:`deid_pipeline.training`, which may use them.
"""
