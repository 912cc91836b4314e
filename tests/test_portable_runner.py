"""The job on Beam's portable runner: a local job service plus an SDK worker pool.

That is the topology of a Flink deployment (job server + SDK harness reached
over gRPC, ``--environment_type=EXTERNAL``), so a pass proves the pipeline is
portable: its DoFns pickle, nothing depends on driver-local state, metrics
come back through the job API (run.json's counts), and the outputs are the
DirectRunner's byte for byte (the writer sorts and shards deterministically).
"""

import os

import pytest
from loopback import portable_args, portable_services, write_generated_inputs

from deid_pipeline.pipelines.job import run
from deid_pipeline.tagger.detectors import DEFAULT_DETECTORS

pytestmark = pytest.mark.portable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def portable_endpoints(tmp_path_factory):
    """(job endpoint, worker pool endpoint) of services running on loopback."""
    with portable_services(tmp_path_factory.mktemp("portable")) as endpoints:
        yield endpoints


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The bundled samples plus generated notes and multi-message HL7 files."""
    d = tmp_path_factory.mktemp("inputs")
    write_generated_inputs(d, 61)
    key = d / "deid.key"
    key.write_bytes(b"portable-runner-test-key-0123456789")
    return [
        os.path.join(ROOT, "samples", "notes", "*.txt"),
        os.path.join(ROOT, "samples", "notes.jsonl"),
        os.path.join(ROOT, "samples", "hl7", "*.hl7"),
        str(d / "*.jsonl"),
        str(d / "*.hl7"),
    ], str(key)


def _argv(patterns, key, out):
    argv = []
    for pattern in patterns:
        argv += ["--input", pattern]
    return argv + [
        "--output",
        str(out),
        "--hl7-output",
        str(out / "hl7"),
        "--key-file",
        key,
        "--detectors",
        ",".join(DEFAULT_DETECTORS),
        "--output-shards",
        "3",
    ]


def _files(directory):
    return {
        os.path.relpath(os.path.join(root, name), directory)
        for root, _, names in os.walk(directory)
        for name in names
        if name != "run.json"
    }


def test_when_run_on_portable_runner_then_outputs_equal_direct_runner_bytes(
    portable_endpoints, inputs, tmp_path
):
    patterns, key = inputs
    direct = run(_argv(patterns, key, tmp_path / "direct"))
    portable = run(
        _argv(patterns, key, tmp_path / "portable") + portable_args(portable_endpoints)
    )

    # Metrics travel back through the job API: the accounting is checked.
    assert portable["records_read"] == direct["records_read"] > 30
    assert portable["accounted"] is True
    for name in (
        "records_written",
        "records_quarantined",
        "files_read",
        "persons",
        "quarantined_by_stage",
        "spans_by_label",
        "hl7_output",
    ):
        if name == "hl7_output":
            direct[name].pop("directory"), portable[name].pop("directory")
        assert portable[name] == direct[name], name

    files = _files(tmp_path / "direct")
    assert files == _files(tmp_path / "portable")
    assert {f.split(os.sep)[0] for f in files} >= {
        "documents",
        "identifiers",
        "persons",
        "quarantine",
        "hl7",
    }
    assert any(f.endswith("part-00002-of-00003.parquet") for f in files)
    for name in sorted(files):
        left = (tmp_path / "direct" / name).read_bytes()
        right = (tmp_path / "portable" / name).read_bytes()
        assert left == right, f"{name} differs between DirectRunner and PortableRunner"
