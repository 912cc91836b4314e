"""The read stage, Beam-free: input files -> ClinicalDocuments (or quarantine).

One reader a format (:mod:`~deid_pipeline.readers.formats`: text, JSONL,
PhysioNet, Parquet, and HL7 through :mod:`deid_pipeline.hl7.documents`),
and the wide Unicode encodings recognised by their byte order mark
(:mod:`~deid_pipeline.readers.byte_order`). The Beam read transform
(:mod:`deid_pipeline.transforms.read`), HL7 write-back and the training and
evaluation corpora all read through here.
"""
