"""The Beam-free rule: Beam only in transforms/, pipelines/ and the CLI.

DESIGN.md: every stage can be unit-tested without Beam, and the batch job,
HL7 write-back and the gateway call the same pure code. A core module that
imports Beam (or the Beam shell, ``transforms/`` and ``pipelines/``) breaks
that silently, even from inside a function (``compact`` did), so imports are
read from the source rather than from what loading a module pulls in.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "deid_pipeline")
SHELL = ("transforms",)  # packages of deid_pipeline/ that adapt the core to Beam
# The command line dispatches to the job (``run``) and may name it.
CLI = ("cli.py", "entry.py")
FORBIDDEN = ("apache_beam", "deid_pipeline.transforms", "deid_pipeline.pipelines")


def _core_modules() -> list[str]:
    found = []
    for directory, subdirectories, files in os.walk(PACKAGE):
        relative = os.path.relpath(directory, PACKAGE)
        if relative.split(os.sep)[0] in SHELL:
            subdirectories.clear()
            continue
        found.extend(os.path.join(directory, f) for f in files if f.endswith(".py")
                     and not (relative == "." and f in CLI))
    return sorted(found)


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


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_when_core_modules_read_then_none_imports_beam_or_its_shell():
    offenders = {
        os.path.relpath(path, ROOT): sorted(n for n in _imported(path) if _forbidden(n))
        for path in _core_modules()
    }
    assert {p: n for p, n in offenders.items() if n} == {}


def test_when_rule_checked_then_it_reads_the_whole_core():
    modules = {os.path.relpath(p, PACKAGE) for p in _core_modules()}
    assert {"rewrite.py", os.path.join("linking", "solver.py"),
            os.path.join("hl7", "writeback.py")} <= modules
    assert not any(m.startswith("transforms") for m in modules)
    assert "cli.py" not in modules
