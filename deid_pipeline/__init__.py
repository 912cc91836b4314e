"""deid-pipeline: de-identification of clinical text and HL7v2 as Beam transforms."""

__version__ = "0.1.0"
