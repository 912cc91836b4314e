"""Building taggers: training recipes, augmentation, CRF training.

``deid-pipeline train`` (:mod:`~deid_pipeline.training.train`: corpus specs,
options) fits the CRF with CRFsuite (:mod:`~deid_pipeline.training.crf`) on
annotated notes and, with ``--augment``, on surrogate copies of them
(:mod:`~deid_pipeline.training.augment`). The same features and BIO
conversion as tagging (:mod:`deid_pipeline.tagger`), so training and tagging
cannot disagree about a boundary.

May import the tagger, the surrogate generators and the synthetic notes; the
runtime tagger imports nothing from here, so a worker that only tags loads
none of it. Evaluation (:mod:`deid_pipeline.evaluation`) trains its folds
with it.
"""
