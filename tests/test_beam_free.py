"""The Beam-free rule: Beam only in transforms/, pipelines/ and the store's file access.

DESIGN.md: every stage can be unit-tested without Beam, and the batch job,
HL7 write-back and the gateway call the same pure code. A core module that
imports Beam (or the Beam shell, ``transforms/`` and ``pipelines/``) breaks
that silently, even from inside a function (``compact`` did), so imports are
read from the source rather than from what loading a module pulls in.
Imports run one way: nothing under ``deid_pipeline/`` imports the jobs
(``pipelines/``), and the store, below the transforms, imports of Beam only
its file systems and options.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "deid_pipeline")
SHELL = ("transforms",)  # packages of deid_pipeline/ that adapt the core to Beam
# The output side below the transforms: paths through Beam's FileSystems.
STORE = ("store",)
STORE_BEAM = ("apache_beam.io", "apache_beam.options")
FORBIDDEN = ("apache_beam", "deid_pipeline.transforms", "deid_pipeline.pipelines")
# Above everything under deid_pipeline/: the jobs, benchmarks and builders.
ABOVE = ("deid_pipeline.pipelines", "deid_pipeline.benchmarks",
         "deid_pipeline.builders")


def _modules(packages: tuple[str, ...] | None = None) -> list[str]:
    """The package's modules; only those of ``packages`` if given."""
    found = []
    for directory, _subdirectories, files in os.walk(PACKAGE):
        top = os.path.relpath(directory, PACKAGE).split(os.sep)[0]
        if packages is None or top in packages:
            found.extend(os.path.join(directory, f) for f in files
                         if f.endswith(".py"))
    return sorted(found)


def _core_modules() -> list[str]:
    return sorted(set(_modules()) - set(_modules(SHELL + STORE)))


def _imported(path: str) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _forbidden(name: str, forbidden: tuple[str, ...] = FORBIDDEN) -> bool:
    return any(name == f or name.startswith(f + ".") for f in forbidden)


def _offenders(paths: list[str], allowed=lambda name: False,
               forbidden: tuple[str, ...] = FORBIDDEN) -> dict[str, list[str]]:
    offenders = {
        os.path.relpath(path, ROOT): sorted(
            n for n in _imported(path) if _forbidden(n, forbidden) and not allowed(n)
        )
        for path in paths
    }
    return {p: n for p, n in offenders.items() if n}


def test_when_core_modules_read_then_none_imports_beam_or_its_shell():
    assert _offenders(_core_modules()) == {}


def test_when_store_read_then_it_imports_only_beams_file_systems():
    def allowed(name: str) -> bool:
        return _forbidden(name, STORE_BEAM)

    assert _offenders(_modules(STORE), allowed) == {}


def test_when_package_read_then_nothing_imports_the_jobs_above_it():
    assert _offenders(_modules(), forbidden=ABOVE) == {}


def test_when_rule_checked_then_it_reads_the_whole_core():
    modules = {os.path.relpath(p, PACKAGE) for p in _core_modules()}
    assert {"rewrite.py", os.path.join("linking", "solver.py"),
            os.path.join("hl7", "writeback.py")} <= modules
    assert not any(m.startswith(("transforms", "store")) for m in modules)
    store = {os.path.relpath(p, PACKAGE) for p in _modules(STORE)}
    assert os.path.join("store", "publish.py") in store
    assert len(_modules()) > len(modules) + len(store)
