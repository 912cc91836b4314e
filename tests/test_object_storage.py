"""``run`` on object storage for real: an S3 API server on loopback.

moto's S3 server on 127.0.0.1 stands in for S3, Beam's local job service and
SDK worker pool for a Flink cluster: inputs are read, documents spilled,
tables staged and published, and HL7 written on s3:// by the workers
themselves, and the downloaded tables must equal a local DirectRunner run
under the same key byte for byte. A run that fails mid-way, or is killed,
publishes nothing; the next run clears what it left.
"""

import ast
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import boto3
import pytest
from loopback import portable_args, portable_services, s3_server

from deid_pipeline.pipelines.job import main, run
from deid_pipeline.synthetic import generate_messages
from deid_pipeline.transforms import chunks

pytestmark = pytest.mark.portable

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUCKET = "deid-test"
KEY = b"object-storage-test-key-0123456789"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(boto3 client, the ``run`` options that reach the same server)."""
    with s3_server(tmp_path_factory.mktemp("s3")) as endpoint:
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        yield client, [
            f"--s3_endpoint_url={endpoint}",
            "--s3_access_key_id=testing",
            "--s3_secret_access_key=testing",
            "--s3_region_name=us-east-1",
        ]


@pytest.fixture(scope="module")
def portable_endpoints(tmp_path_factory):
    with portable_services(tmp_path_factory.mktemp("portable")) as endpoints:
        yield endpoints


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, s3):
    """A note, the bundled notes.jsonl and multi-message HL7 files, on S3.

    Few files: Beam's S3 file system makes a new boto3 client for every
    operation (about 0.3 s of CPU each), and each file is several of them.
    """
    client, _ = s3
    d = tmp_path_factory.mktemp("in")
    shutil.copy(ROOT / "samples" / "notes" / "synth-1-000001.txt", d / "note.txt")
    shutil.copy(ROOT / "samples" / "notes.jsonl", d / "notes.jsonl")
    messages = generate_messages(4, 71, ("oru",))
    for k in range(2):
        (d / f"reports-{k}.hl7").write_text(
            "\n".join(m.er7 for m in messages[k::2]) + "\n", encoding="utf-8"
        )
    for path in d.iterdir():
        client.upload_file(str(path), BUCKET, f"in/{path.name}")
    key = tmp_path_factory.mktemp("key") / "deid.key"
    key.write_bytes(KEY)
    return d, str(key)


def _argv(input_dir: str, out: str, key: str, *extra: str) -> list[str]:
    argv = []
    for ext in ("txt", "jsonl", "hl7"):
        argv += ["--input", f"{input_dir}/*.{ext}"]
    # No CRF: tests/test_portable_runner.py runs the model on the portable
    # runner; here it would only add its load time to every process.
    return [*argv, "--output", out, "--hl7-output", f"{out}/hl7",
            "--key-file", key, "--output-shards", "2",
            "--detectors", "rules,dictionary", *extra]


def _keys(client, prefix: str) -> list[str]:
    """The key of every object under ``prefix``, relative to it."""
    pages = client.get_paginator("list_objects_v2").paginate(
        Bucket=BUCKET, Prefix=prefix + "/"
    )
    return [
        obj["Key"][len(prefix) + 1 :]
        for page in pages
        for obj in page.get("Contents", [])
    ]


def _objects(client, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix``, by key relative to it."""
    return {
        key: client.get_object(Bucket=BUCKET, Key=f"{prefix}/{key}")["Body"].read()
        for key in _keys(client, prefix)
    }


def _local_files(directory: pathlib.Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _tables(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name != "run.json"}


@pytest.fixture(scope="module")
def published(s3, inputs, portable_endpoints, tmp_path_factory):
    """A DirectRunner run s3 -> local disk; the same s3 -> s3 on the portable runner.

    Both read the same s3:// inputs: a document with no identifier is its own
    person under a key made of its input path (``linking/keys.py``), so the
    same files read from another place get other person ids and surrogates.
    """
    client, s3_args = s3
    _local_in, key = inputs
    local_out = tmp_path_factory.mktemp("local") / "out"
    local = run(_argv(f"s3://{BUCKET}/in", str(local_out), key, *s3_args))
    remote = run(
        _argv(f"s3://{BUCKET}/in", f"s3://{BUCKET}/out", key,
              *s3_args, *portable_args(portable_endpoints))
    )
    return local, _local_files(local_out), remote, _objects(client, "out")


def test_when_run_s3_to_s3_on_portable_runner_then_tables_equal_local_run(
    published,
):
    local, local_files, remote, remote_files = published
    assert remote["accounted"] is True
    assert remote["records_read"] == local["records_read"] > 10
    for name in ("records_written", "records_quarantined", "files_read",
                 "persons", "spans_by_label", "files"):
        assert remote[name] == local[name], name
    assert remote["hl7_output"]["messages_out"] == local["hl7_output"][
        "messages_out"] >= 4
    tables = _tables(remote_files)
    assert tables.keys() == _tables(local_files).keys()
    assert {name.split("/")[0] for name in tables} == {
        "documents", "identifiers", "persons", "quarantine", "hl7"}
    for name, data in sorted(tables.items()):
        assert data == local_files[name], f"{name} differs between s3 and local"
    # Nothing of the run is left beside the tables: no staging, no spill.
    assert not [n for n in remote_files if n.startswith((".", "_")) or ".pkl" in n]
    # run.json is the manifest: every table file it lists, and no other.
    summary = json.loads(remote_files["run.json"])
    listed = {f"{t}/{f}" for t, names in summary["files"].items() for f in names}
    listed |= {f"hl7/{f}" for f in summary["hl7_output"]["files"]}
    assert listed == set(tables)
    # Credentials given as options never reach run.json.
    assert "--s3_secret_access_key=***" in summary["beam_options"]
    assert b"testing" not in remote_files["run.json"]


class _InjectedError(RuntimeError):
    """Raised by the test in place of a worker's write."""


def test_when_s3_run_fails_mid_way_then_nothing_published_and_staging_gone(
    published, s3, inputs, monkeypatch
):
    client, s3_args = s3
    _local_in, key = inputs
    before = _objects(client, "out")

    def fail(self, ref, *_args):
        raise _InjectedError("injected after read, spill and tag")

    # The in-process DirectRunner runs this very class: reading, spilling
    # and tagging are done when the first chunk is written.
    monkeypatch.setattr(chunks.WriteChunkFn, "_write", fail)
    with pytest.raises(Exception, match="injected after read"):
        run(_argv(f"s3://{BUCKET}/in", f"s3://{BUCKET}/out", key, *s3_args))
    assert _objects(client, "out") == before


def _big_input(client, n=6000) -> None:
    lines = (
        json.dumps({"id": f"n{i}", "text": f"Seen {1 + i % 12}/{1 + i % 28}/2006 "
                    f"call 617-555-{i % 10000:04d}. " * 20})
        for i in range(n)
    )
    client.put_object(Bucket=BUCKET, Key="big/big.jsonl",
                      Body="\n".join(lines).encode() + b"\n")


def test_when_s3_run_is_killed_then_previous_output_whole_and_next_run_clears(
    s3, inputs, tmp_path
):
    client, s3_args = s3
    _local_in, key = inputs
    small = ["--input", f"s3://{BUCKET}/in/notes.jsonl", "--output",
             f"s3://{BUCKET}/killed", "--key-file", key, "--detectors", "rules",
             *s3_args]
    run(small)
    before = _objects(client, "killed")
    _big_input(client)
    big = [*small[:1], f"s3://{BUCKET}/big/big.jsonl", *small[2:]]
    proc = subprocess.Popen(
        [sys.executable, "-m", "deid_pipeline.pipelines.cli", "run", *big],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "/_spill/" in k for k in _keys(client, "killed")
        ):
            time.sleep(0.2)
        assert proc.poll() is None, "run finished before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    after = _objects(client, "killed")
    # Documents were spilled (PHI, under staging), nothing was published.
    assert any("/_spill/" in k for k in after)
    assert {k: v for k, v in after.items() if not k.startswith(".staging-")} == before
    run(small)
    assert not [k for k in _keys(client, "killed") if k.startswith(".staging-")]


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ({"--input": "s3://no-such-bucket/in/notes.jsonl"}, "does not exist"),
        ({"--output": "s3://no-such-bucket/out"}, "cannot use output directory"),
        ({"--hl7-output": "/tmp/hl7"}, "same file system as --output"),
    ],
)
def test_when_s3_location_unusable_then_exit_2_before_running(
    s3, inputs, capsys, where, error
):
    _client, s3_args = s3
    _local_in, key = inputs
    argv = {"--input": f"s3://{BUCKET}/in/notes.jsonl",
            "--output": f"s3://{BUCKET}/unusable",
            "--hl7-output": f"s3://{BUCKET}/unusable/hl7", **where}
    flat = [part for item in argv.items() for part in item]
    assert main([*flat, "--key-file", key, "--detectors", "rules", *s3_args]) == 2
    assert error in capsys.readouterr().err


# Modules that touch data paths: they must do so through Beam's FileSystems.
_DATA_PATH_MODULES = [
    ROOT / "pipelines" / "job.py",
    *sorted((ROOT / "deid_pipeline" / "transforms").glob("*.py")),
]
# Pure string functions of os.path: they read or write nothing.
_PATH_STRING_FUNCTIONS = {"join", "basename", "dirname", "splitext", "split"}
_LOCAL_MODULES = {"os", "shutil", "glob", "pathlib", "tempfile", "io"}


def _local_io_calls(tree: ast.AST):
    """(line, call) of each call to open() or to a local file-system module."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("open", "Path"):
            yield node.lineno, func.id
        elif isinstance(func, ast.Attribute):
            dotted = ast.unparse(func)
            root = dotted.split(".")[0]
            if root in _LOCAL_MODULES and not (
                dotted.startswith("os.path.")
                and func.attr in _PATH_STRING_FUNCTIONS
            ):
                yield node.lineno, dotted


def _local_only_scopes(tree: ast.AST):
    """Functions and classes whose docstring says they are local-only, and why."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node) or ""
            if doc.startswith("Local-only:"):
                yield node


def test_when_data_path_code_touches_files_then_only_through_filesystems():
    offenders = []
    for path in _DATA_PATH_MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = {
            line
            for scope in _local_only_scopes(tree)
            for line in range(scope.lineno, scope.end_lineno + 1)
        }
        offenders += [
            f"{path.relative_to(ROOT)}:{line}: {call}"
            for line, call in _local_io_calls(tree)
            if line not in allowed
        ]
    assert offenders == []


def test_when_grep_sees_local_io_then_it_is_flagged():
    # The check above can fail: it catches each kind of call it looks for.
    source = (
        "import os, shutil\n"
        "def f(p):\n"
        "    open(p)\n"
        "    os.replace(p, p)\n"
        "    shutil.rmtree(p)\n"
        "    os.path.exists(p)\n"
        "    return os.path.join(p, 'x')\n"
        "def g(p):\n"
        '    """Local-only: because."""\n'
        "    return os.listdir(p)\n"
    )
    tree = ast.parse(source)
    calls = sorted(call for _, call in _local_io_calls(tree))
    assert calls == ["open", "os.listdir", "os.path.exists", "os.replace",
                     "shutil.rmtree"]
    (scope,) = _local_only_scopes(tree)
    assert scope.name == "g"
