"""Shared fixtures: the PhysioNet development corpus (read once per session)."""

from __future__ import annotations

import os

import pytest

SHARED_CORPORA = os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                              "corpora")

# The tests compile rules, gates and expressions by the hundred; kept in the
# user's data cache they grew the files every later run reads whole (28 MB
# after one test run: 1.5% of a run's time, 20 MiB of its memory). The tests
# keep their own, shared by xdist's workers and their subprocesses.
os.environ.setdefault("DEID_PIPELINE_CACHE", os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".test-data-cache")))
CORPUS_DIR = os.path.join(SHARED_CORPORA, "physionet-deid")


# README's test command runs the files on every core (pytest-xdist, ``-n auto
# --dist loadfile --no-loadscope-reorder``): each file goes whole to one worker,
# in collection order. The longest files (a Flink cluster's jobs, S3 runs, a
# gateway under load, the benchmarks: 2 to 8 minutes each) are collected first,
# so the other workers take the short files meanwhile instead of one worker
# running a long file alone at the end.
LONGEST_FILES = ("test_flink_cluster.py", "test_object_storage.py",
                 "test_mllp_gateway.py", "test_benchmark_script.py",
                 "test_hostile_inputs.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def _shared_corpus(name: str, marker: str) -> str:
    """``../shared/corpora/NAME`` if it holds ``marker``, else skip the test."""
    path = os.path.join(SHARED_CORPORA, name)
    if not os.path.exists(os.path.join(path, marker)):
        pytest.skip(f"{name} corpus not found beside the project (../shared)")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def corpus_dir() -> str:
    return _shared_corpus("physionet-deid", "id.text")


@pytest.fixture(scope="session")
def physionet_docs(corpus_dir):
    from deid_pipeline.evaluation.corpora import load_physionet_corpus

    return load_physionet_corpus(corpus_dir)


@pytest.fixture
def jsonl_corpus(tmp_path):
    """Write gold documents as a JSONL corpus; returns its ``jsonl:PATH`` spec."""
    import json

    def write(docs, name: str = "corpus.jsonl") -> str:
        path = tmp_path / name
        with open(path, "w", encoding="utf-8") as fh:
            for d in docs:
                spans = [{"start": s.start, "end": s.end, "label": s.label}
                         for s in d.gold]
                fh.write(json.dumps({"id": d.doc_id, "text": d.text,
                                     "person_key": d.person_key,
                                     "spans": spans}) + "\n")
        return f"jsonl:{path}"

    return write


@pytest.fixture(autouse=True, scope="session")
def _no_prism():
    """Test pipelines skip Prism as ``run`` does (see ``local_pipeline``).

    Beam's DirectRunner would otherwise try to download Prism for every
    TestPipeline and leave three temporary directories per attempt.
    """
    from apache_beam.runners.direct.direct_runner import SwitchingDirectRunner

    SwitchingDirectRunner._is_interactive = True
    yield
    SwitchingDirectRunner._is_interactive = False


@pytest.fixture(scope="session")
def meddocan_dir() -> str:
    """The MEDDOCAN corpus (train/, dev/, scorer/) beside the project."""
    return _shared_corpus("meddocan", "train")
