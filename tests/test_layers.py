"""The layout reads top-down (DESIGN.md's layout; issue 47), checked on the source.

Every module under ``deid_pipeline/`` is parsed with ``ast`` (never imported),
and every import in it counts: at module level, inside a function (a
deferred import is still a dependency), under ``TYPE_CHECKING``. Checked:

- nothing under ``deid_pipeline/`` imports the jobs (``deid_pipeline.pipelines``);
- the runtime tagger imports neither the synthetic generators, the surrogates
  nor training;
- no import circle among the tagger's modules;
- no module over 800 lines (nor in pipelines/, benchmarks/, builders/).
"""

from __future__ import annotations

import ast
import os
from functools import cache

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "deid_pipeline"
JOBS = "deid_pipeline.pipelines"
TAGGER = "deid_pipeline.tagger"
NOT_FOR_THE_TAGGER = ("deid_pipeline.synthetic", "deid_pipeline.surrogates",
                      "deid_pipeline.training")
MAX_LINES = 800


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@cache
def _modules(folder: str = PACKAGE) -> dict[str, str]:
    """Dotted module name -> file path of every ``.py`` file under ``folder``."""
    modules = {}
    base = os.path.join(ROOT, folder)
    for directory, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


@cache
def _imports(module: str) -> tuple[tuple[str, int], ...]:
    """Every module ``module`` imports (name, line), relative imports resolved.

    ``from P import x`` is an import of ``P.x`` when that is a module of the
    package, else of ``P``.
    """
    path = _modules()[module]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append((candidate if candidate in _modules() else base,
                              node.lineno))
    return tuple(found)


def _named_modules(module: str) -> list[tuple[str, int]]:
    """String constants that name a module by its dotted path (``importlib``)."""
    path = _modules()[module]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _within(node.value, JOBS)]


def test_when_the_package_is_parsed_then_it_finds_the_tagger_and_its_imports():
    assert "deid_pipeline.tagger.tagging" in _modules()
    assert any(name == "deid_pipeline.tagger.detectors"
               for name, _ in _imports("deid_pipeline.tagger.tagging"))


def test_when_a_module_of_the_package_imports_then_never_the_jobs():
    offenders = sorted({f"{module}:{line} {name}"
                        for module in _modules() if not _within(module, JOBS)
                        for name, line in (*_imports(module), *_named_modules(module))
                        if _within(name, JOBS)})
    assert not offenders, "deid_pipeline/ imports pipelines/:\n" + "\n".join(offenders)


def test_when_the_tagger_imports_then_never_generators_surrogates_or_training():
    offenders = sorted({f"{module}:{line} {name}"
                        for module in _modules() if _within(module, TAGGER)
                        for name, line in _imports(module)
                        if any(_within(name, banned) for banned in NOT_FOR_THE_TAGGER)})
    assert not offenders, "the runtime tagger imports:\n" + "\n".join(offenders)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_when_cycles_are_sought_then_a_circle_is_found():
    circle = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(circle) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_when_tagger_modules_import_each_other_then_there_is_no_circle():
    tagger = [m for m in _modules() if _within(m, TAGGER)]
    graph = {m: {name for name, _ in _imports(m) if name in tagger and name != m}
             for m in tagger}
    assert not _cycles(graph), f"import circles in the tagger: {_cycles(graph)}"


def _long_modules(folder: str) -> list[str]:
    long = []
    for path in _modules(folder).values():
        with open(path, encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_LINES:
            long.append(f"{os.path.relpath(path, ROOT)}: {lines} lines")
    return long


@pytest.mark.parametrize("folder", [PACKAGE, "pipelines", "benchmarks", "builders"])
def test_when_modules_are_counted_then_none_is_over_800_lines(folder):
    if not os.path.isdir(os.path.join(ROOT, folder)):
        pytest.skip(f"no {folder}/")
    long = _long_modules(folder)
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
