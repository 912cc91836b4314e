"""HL7v2 in and out: framing, a fast parser, header-seeded dictionaries, write-back.

Pure Python (no Beam). The pieces, in data-flow order:

- :mod:`~deid_pipeline.hl7.framing`: file bytes -> message frames (single,
  many, FHS/BHS batches, MLLP; any line terminator; charset from MSH-18 or
  detected) and back, keeping everything between messages.
- :mod:`~deid_pipeline.hl7.message` and :mod:`~deid_pipeline.hl7.escapes`:
  the ER7 parser (raw fields, split on demand) and the escape sequences.
- :mod:`~deid_pipeline.hl7.fields`: which header fields and components are
  PHI (python-hl7 style keys such as ``PID.5``), shared by seeding and
  write-back.
- :mod:`~deid_pipeline.hl7.seed`: the header as a ``PatientDictionary`` of
  every form its values take in text, keyed by the canonical MRN.
- :mod:`~deid_pipeline.hl7.documents`: ``read_hl7(path, data)``, one
  ``ClinicalDocument`` per report (or ``QuarantineRecord`` per failed message).
- :mod:`~deid_pipeline.hl7.writeback`: ``deidentify_hl7_file`` and the
  per-message ``deidentify_message`` (MLLP gateway): tagged, rewritten and
  re-escaped messages with the input's framing. The steps are their own
  modules: :mod:`~deid_pipeline.hl7.narrative` (report text back into its
  fields), :mod:`~deid_pipeline.hl7.header` (typed header fields),
  :mod:`~deid_pipeline.hl7.copies` (values copied into other fields),
  :mod:`~deid_pipeline.hl7.guard` (the whole-message guard) and
  :mod:`~deid_pipeline.hl7.envelope` (batch headers and trailers).
- :mod:`~deid_pipeline.hl7.testing`: a deterministic fake rewriter, sample
  ORU messages and leak checks for tests and the benchmark.
"""
