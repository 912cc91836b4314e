"""Synthetic clinical data with known PHI: free-text notes and HL7 v2.5 messages.

For tests, demos, benchmarks and CRF training data at any size. Every
identity comes from one seeded Faker instance per call, so a seed fixes every
byte, and every gold span covers exactly the value that was inserted.
"""

from deid_pipeline.synthetic.hl7 import (
    MESSAGE_KINDS,
    SyntheticMessage,
    generate_messages,
)
from deid_pipeline.synthetic.notes import KINDS as NOTE_KINDS
from deid_pipeline.synthetic.notes import generate_notes

__all__ = [
    "MESSAGE_KINDS",
    "NOTE_KINDS",
    "SyntheticMessage",
    "generate_messages",
    "generate_notes",
]
