"""Builders of deid_pipeline/data/: lexicons, gazetteers, word clusters."""
