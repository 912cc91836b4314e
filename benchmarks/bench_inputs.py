"""Inputs of the job benchmarks: ``benchmark``, ``bench_scaling``, ``bench_stages``.

Generates N and ``scale`` x N synthetic documents once (a mix of HL7 ORU^R01
reports and free-text notes, or with ``--nursing`` about 180-token nursing
notes and short reports) into a work directory, where a later run with the
same settings reuses them, with a throw-away key file beside them. Also the
options every job benchmark takes, the detectors it runs and the line that
describes the machine. Measures nothing itself; prints counts and sizes only,
never document content.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import multiprocessing
import os
import platform
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from deid_pipeline.tagger.detectors import DEFAULT_DETECTORS

DOCS_PER_PART = 1_000  # documents per generated part (one .jsonl + one .hl7 file)
MESSAGE_BATCH = 64
PROFILES = {
    # name: (HL7 share of documents, note kinds, note tokens, report tokens)
    "mixed": (0.5, None, (150, 1500), None),
    "nursing": (0.3, ("nursing",), (150, 210), (120, 240)),
}
GiB = 1024**3
MiB = 1024**2


# ---------------------------------------------------------------- detectors


def crf_model_path(model: str | None) -> str:
    """The CRF model file a run with ``--model model`` would load."""
    if model:
        return os.path.abspath(model)
    try:
        from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH
    except ImportError:  # the CRF code itself is missing: so is the model
        import deid_pipeline

        return os.path.join(
            os.path.dirname(deid_pipeline.__file__), "models", "default.crfsuite"
        )
    return DEFAULT_MODEL_PATH


def resolve_detectors(requested: str | None, model: str | None) -> tuple[str, ...]:
    """The detectors to benchmark: as asked (default: the package default).

    Without a CRF model file the ``crf`` detector is left out, with a warning,
    so the benchmark runs before the model ships and uses it once it does.
    """
    names = tuple(n for n in (requested or ",".join(DEFAULT_DETECTORS)).split(",") if n)
    if "crf" in names and not os.path.exists(crf_model_path(model)):
        names = tuple(n for n in names if n != "crf")
        print(
            f"benchmark: warning: no CRF model at {crf_model_path(model)}; "
            f"benchmarking without crf: --detectors {','.join(names)}",
            file=sys.stderr,
        )
    return names


# ---------------------------------------------------------------- inputs


@dataclass
class Part:
    """One generated part: a JSONL file of notes and an HL7 file of messages."""

    index: int
    documents: int = 0
    hl7_documents: int = 0
    messages: int = 0
    tokens: int = 0
    bytes: int = 0
    files: list[str] = field(default_factory=list)


def _report_fits(message, size: tuple[int, int] | None) -> bool:
    from deid_pipeline.tokenizer import token_spans

    if size is None:
        return True
    return all(
        size[0] <= len(token_spans(d.text)) <= size[1] for d in message.documents
    )


def _generate_part(job: tuple[int, int, int, str, str]) -> Part:
    """Write part ``index`` (``count`` documents) into ``directory``."""
    from deid_pipeline.synthetic import generate_messages, generate_notes
    from deid_pipeline.tokenizer import token_spans

    index, count, seed, profile, directory = job
    share, kinds, note_size, report_size = PROFILES[profile]
    part_seed = seed * 100_000 + index
    part = Part(index)
    want_hl7 = round(count * share)
    messages = []
    batch = 0
    while part.hl7_documents < want_hl7 and batch < 1000:
        for m in generate_messages(MESSAGE_BATCH, part_seed * 100 + batch, ("oru",)):
            n = len(m.documents)
            if (
                n
                and part.hl7_documents + n <= want_hl7
                and _report_fits(m, report_size)
            ):
                messages.append(m.er7)
                part.hl7_documents += n
                part.tokens += sum(len(token_spans(d.text)) for d in m.documents)
            if part.hl7_documents == want_hl7:
                break
        batch += 1
    part.messages = len(messages)
    notes = generate_notes(
        count - part.hl7_documents, part_seed, note_size[0], note_size[1], kinds
    )
    part.tokens += sum(len(token_spans(d.text)) for d in notes)
    part.documents = part.hl7_documents + len(notes)
    stem = os.path.join(directory, f"part-{index:05d}")
    if notes:
        with open(stem + ".jsonl", "w", encoding="utf-8") as fh:
            for d in notes:
                fh.write(json.dumps({"id": d.doc_id, "text": d.text}) + "\n")
        part.files.append(stem + ".jsonl")
    if messages:
        with open(stem + ".hl7", "w", encoding="utf-8", newline="") as fh:
            fh.write("\n".join(messages) + "\n")  # many messages per file
        part.files.append(stem + ".hl7")
    part.bytes = sum(os.path.getsize(f) for f in part.files)
    return part


@dataclass
class InputSet:
    """Generated inputs: the first N documents and the rest up to scale x N."""

    profile: str
    seed: int
    docs: int
    scale: int
    base: list[Part]
    extra: list[Part]
    seconds: float = 0.0

    def parts(self, scaled: bool) -> list[Part]:
        return self.base + self.extra if scaled else self.base

    def files(self, scaled: bool) -> list[str]:
        return [f for p in self.parts(scaled) for f in p.files]

    def patterns(self, scaled: bool) -> list[str]:
        """One glob per directory, as a user would pass them."""
        directories = sorted({os.path.dirname(f) for f in self.files(scaled)})
        return [os.path.join(d, "*") for d in directories]


def _sizes(total: int) -> list[int]:
    return [min(DOCS_PER_PART, total - i) for i in range(0, total, DOCS_PER_PART)]


def generate_inputs(
    directory: str, docs: int, scale: int, seed: int, profile: str, processes: int
) -> InputSet:
    """Generate (or reuse from an earlier run) the inputs in ``directory``."""
    manifest = os.path.join(directory, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as fh:
            cached = json.load(fh)
        if all(
            os.path.exists(f)
            for part in cached["base"] + cached["extra"]
            for f in part["files"]
        ):
            cached["base"] = [Part(**p) for p in cached["base"]]
            cached["extra"] = [Part(**p) for p in cached["extra"]]
            return InputSet(**cached)
    started = time.perf_counter()
    base_dir = os.path.join(directory, "base")
    extra_dir = os.path.join(directory, "extra")
    for d in (base_dir, extra_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    jobs = [(i, n, seed, profile, base_dir) for i, n in enumerate(_sizes(docs))]
    first_extra = len(jobs)
    jobs += [
        (first_extra + i, n, seed, profile, extra_dir)
        for i, n in enumerate(_sizes(docs * (scale - 1)))
    ]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.map(_generate_part, jobs, chunksize=1)
    inputs = InputSet(
        profile,
        seed,
        docs,
        scale,
        parts[:first_extra],
        parts[first_extra:],
        round(time.perf_counter() - started, 1),
    )
    with open(manifest, "w", encoding="utf-8") as fh:
        json.dump(asdict(inputs), fh)
    return inputs

# ---------------------------------------------------------------- command line


def new_parser(module: str, doc: str, docs: int) -> argparse.ArgumentParser:
    """A job benchmark's parser with the options every one takes.

    Those are: the inputs, detectors, work directory and ``--json``; the
    description is the first paragraph of ``doc``, the module's docstring.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m deid_pipeline.benchmarks.{module}",
        description=doc.split("\n\n")[0],
    )
    parser.add_argument("--docs", type=int, default=docs, help=f"N (default: {docs})")
    parser.add_argument(
        "--detectors",
        help="comma-separated detectors (default: the package "
        f"default {','.join(DEFAULT_DETECTORS)}; crf is left out, "
        "with a warning, while no model file exists)",
    )
    parser.add_argument("--model", help="CRF model (default: the shipped model)")
    parser.add_argument(
        "--nursing",
        action="store_true",
        help="nursing-note size: ~180-token notes and short reports",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--workdir",
        help="inputs, outputs and logs (default: a temporary "
        "directory, removed at the end); inputs are reused from "
        "an earlier run with the same settings",
    )
    parser.add_argument("--json", metavar="PATH", help="write every figure as JSON")
    return parser


@dataclass
class Bench:
    """What a job benchmark works with: its inputs, key and settings."""

    inputs: InputSet
    detectors: tuple[str, ...]
    profile: str
    workdir: str
    key_file: str
    key: bytes
    cores: int


@contextlib.contextmanager
def workspace(workdir: str | None) -> Iterator[str]:
    """``workdir`` (created if missing), or a temporary one removed at the end."""
    path = workdir or tempfile.mkdtemp(prefix="deid-bench-")
    os.makedirs(path, exist_ok=True)
    try:
        yield path
    finally:
        if not workdir:
            shutil.rmtree(path, ignore_errors=True)


def cpu_model() -> str:
    """The machine's CPU model name (for the heading of a benchmark's output)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt_bytes(n: int) -> str:
    """``n`` bytes in GiB from 1 GiB up, else in MiB."""
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


def bench_key(workdir: str) -> tuple[str, bytes]:
    """The benchmarks' key file in ``workdir`` (made once, random) and its key."""
    key_file = os.path.join(workdir, "bench.key")
    if not os.path.exists(key_file):
        with open(key_file, "wb") as fh:
            fh.write(base64.b64encode(secrets.token_bytes(32)) + b"\n")
        os.chmod(key_file, 0o600)
    with open(key_file, "rb") as fh:
        return key_file, fh.read().strip()


def prepare(args: argparse.Namespace, scale: int, workdir: str, name: str) -> Bench:
    """Print the heading, generate (or reuse) the inputs and describe them."""
    import psutil

    if args.docs < 1 or scale < 1:
        raise SystemExit(f"{name}: --docs and --scale must be >= 1")
    cores = os.cpu_count() or 1
    detectors = resolve_detectors(args.detectors, args.model)
    profile = "nursing" if args.nursing else "mixed"
    print(
        f"deid-pipeline {name}: profile {profile}, detectors "
        f"{','.join(detectors)}, surrogate mode, DirectRunner multi_processing; "
        f"{cores} CPUs ({cpu_model()}), "
        f"{psutil.virtual_memory().total / GiB:.1f} GiB RAM, "
        f"Python {platform.python_version()}"
    )
    key_file, key = bench_key(workdir)
    input_dir = os.path.join(
        workdir, f"inputs-{profile}-{args.docs}x{scale}-seed{args.seed}"
    )
    inputs = generate_inputs(input_dir, args.docs, scale, args.seed, profile, cores)
    for scaled, size in ((False, "N"), (True, f"{scale}N")):
        parts = inputs.parts(scaled)
        if scaled and scale == 1:
            break
        docs = sum(p.documents for p in parts)
        hl7 = sum(p.hl7_documents for p in parts)
        print(
            f"input {size}: {docs} documents ({hl7} HL7 reports in "
            f"{sum(p.messages for p in parts)} ORU^R01 messages, {docs - hl7} notes), "
            f"{sum(p.tokens for p in parts)} tokens "
            f"({sum(p.tokens for p in parts) / docs:.0f}/doc), "
            f"{sum(p.bytes for p in parts) / MiB:.1f} MiB in "
            f"{sum(len(p.files) for p in parts)} files"
        )
    print(f"generated once in {inputs.seconds:.1f} s ({input_dir})")
    return Bench(inputs, detectors, profile, workdir, key_file, key, cores)


def write_json(path: str | None, figures: dict) -> None:
    """Write ``figures`` to ``path`` (``--json``), if one was given."""
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2, default=str)
