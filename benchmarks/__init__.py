"""Benchmarks of the job, its stages, the HL7 parser, the gateway and the tagger."""
