"""Shared fixtures: the PhysioNet development corpus (read once per session)."""

from __future__ import annotations

import os

import pytest

CORPUS_DIR = os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "corpora", "physionet-deid"
)


@pytest.fixture(scope="session")
def corpus_dir() -> str:
    if not os.path.exists(os.path.join(CORPUS_DIR, "id.text")):
        pytest.skip("PhysioNet corpus not found beside the project (../shared)")
    return os.path.abspath(CORPUS_DIR)


@pytest.fixture(scope="session")
def physionet_docs(corpus_dir):
    from deid_pipeline.corpora import load_physionet_corpus

    return load_physionet_corpus(corpus_dir)
