"""README.md and docs/ stay short, linked and true to the code they name.

README.md is under 150 lines, starts with the two quick-start commands CI runs and
links every page in docs/. Every relative link resolves, every repository path and
test a page names exists, every ``python -m`` module it shows is importable, and
every ``deid-pipeline`` command in a bash block uses a subcommand and options the
command line knows (``run`` passes the rest to Beam, so there they must be Beam's).

The examples run as written from a fresh clone's root after the quick start: their
repository inputs exist, and everything they write (tables, keys, reports, review
pages) goes under ``work/``, which git ignores, or to a site's placeholder the page
names as such. README's quick examples are run in a copy of the samples.
"""

from __future__ import annotations

import ast
import glob
import importlib.util
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys

import pytest

from deid_pipeline.pipelines.cli import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
MAX_README_LINES = 150
# Pages other branches are adding now; README links them already.
IN_FLIGHT = {"docs/hl7-audit.md", "docs/object-storage.md", "docs/run-options.md"}

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH = re.compile(
    r"`((?:tests|deid_pipeline|pipelines|benchmarks|builders|samples|schemas)/"
    r"[\w./-]+?)(?:::(\w+))?`"
)
BASH = re.compile(r"```bash\n(.*?)```", re.S)
SEPARATORS = {"&&", "||", ";", "|", "&"}
MODULE = re.compile(r"python -m (deid_pipeline(?:\.\w+)+)")
# Pages other engineers are editing now: their examples are fixed there.
NOT_YET_WORK = {"docs/tagger.md", "docs/reliability.md", "docs/benchmarks.md"}
OUTPUT_OPTIONS = {"--output", "--hl7-output", "--html", "--json"}
WORK = "work/"
QUICK_START_OUTPUT = "out/"
# A shell redirection that writes a file (not ``2>&1``, not ``3<>/dev/tcp``).
REDIRECT = re.compile(r"(?<![<\d&])>>?\s*([^\s&;|)]+)")


def _pages() -> list[str]:
    return [README, os.path.join(ROOT, "samples", "README.md")] + [
        os.path.join(DOCS, name)
        for name in sorted(os.listdir(DOCS))
        if name.endswith(".md")
    ]


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def test_when_readme_read_then_short_and_the_quick_start_comes_first():
    text = _read(README)
    assert len(text.splitlines()) < MAX_README_LINES
    blocks = BASH.findall(text)
    assert blocks[0].strip().startswith(
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "
        "deid-pipeline run "
    )
    xdist = "-n auto --dist loadfile --no-loadscope-reorder"
    assert blocks[1].strip() == ("pip install -e '.[test]' && python -m pytest -q "
                                 + xdist)
    # CI runs the same commands (its own output directory, quieter pip and no
    # pytest cache in the clone).
    ci = _read(os.path.join(ROOT, ".ci", "run"))
    run_args = blocks[0].split("deid-pipeline run ", 1)[1].split(" --output")[0]
    assert run_args in ci
    assert ("pip install -q -e '.[test]' && python -m pytest -q -p no:cacheprovider "
            + xdist) in ci


def test_when_readme_read_then_every_docs_page_is_linked():
    links = {os.path.normpath(t) for t in LINK.findall(_read(README))}
    pages = {
        f"docs/{name}" for name in os.listdir(DOCS) if name.endswith(".md")
    }
    assert pages, "docs/ has no pages"
    assert pages <= links, sorted(pages - links)
    assert IN_FLIGHT <= links


@pytest.mark.parametrize("page", _pages(), ids=_rel)
def test_when_page_links_then_each_target_exists(page):
    here = os.path.dirname(page)
    for target in LINK.findall(_read(page)):
        if "://" in target:
            continue
        path = os.path.normpath(os.path.join(here, target))
        if _rel(path) in IN_FLIGHT and not os.path.exists(path):
            continue
        assert os.path.exists(path), f"{_rel(page)} links {target}"


@pytest.mark.parametrize("page", _pages(), ids=_rel)
def test_when_page_names_a_path_or_test_then_it_exists(page):
    for path, test in PATH.findall(_read(page)):
        full = os.path.join(ROOT, path)
        assert os.path.exists(full), f"{_rel(page)} names {path}"
        if test:
            tree = ast.parse(_read(full))
            names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert test in names, f"{_rel(page)} names {path}::{test}"


@pytest.mark.parametrize("page", _pages(), ids=_rel)
def test_when_page_shows_python_m_then_the_module_exists(page):
    for module in MODULE.findall(_read(page)):
        assert importlib.util.find_spec(module), f"{_rel(page)} runs {module}"


def _commands(text: str) -> list[list[str]]:
    """Every ``deid-pipeline ...`` command in the bash blocks, as words."""
    return [words for block in BASH.findall(text) for words in _block_commands(block)]


def _block_commands(block: str) -> list[list[str]]:
    """Every ``deid-pipeline ...`` command of one bash block, as words."""
    commands: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        for word in [*lexer, ";"]:
            if word not in SEPARATORS:
                words.append(word.strip("[]"))
                continue
            if "deid-pipeline" in words:
                commands.append(words[words.index("deid-pipeline") + 1 :])
            words = []
    return commands


def _beam_options() -> set[str]:
    from apache_beam.options.pipeline_options import PipelineOptions

    return set(PipelineOptions([]).get_all_options(drop_default=False))


@pytest.mark.parametrize("page", _pages(), ids=_rel)
def test_when_page_shows_a_command_then_its_options_exist(page):
    subparsers = build_parser()._subparsers._group_actions[0].choices
    beam = None
    for words in _commands(_read(page)):
        sub = words[0]
        assert sub in subparsers, f"{_rel(page)}: deid-pipeline {sub}"
        known = set(subparsers[sub]._option_string_actions)
        for word in words[1:]:
            option = word.split("=", 1)[0]
            if not option.startswith("--") or option in known:
                continue
            assert sub == "run", f"{_rel(page)}: deid-pipeline {sub} {option}"
            beam = _beam_options() if beam is None else beam
            assert option[2:] in beam, f"{_rel(page)}: {option} is no Beam option"


def _example_pages() -> list[str]:
    return [
        page for page in [README] + _pages()[2:] if _rel(page) not in NOT_YET_WORK
    ]


def _options(words: list[str]) -> list[tuple[str, str]]:
    """``(option, value)`` of each ``--option value`` or ``--option=value``."""
    pairs = []
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        if "=" in word:
            pairs.append(tuple(word.split("=", 1)))
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            pairs.append((word, words[i + 1]))
    return pairs


def _placeholder(path: str) -> bool:
    """A site's own location: a URL or an absolute path."""
    return "://" in path or path.startswith("/")


def _check_written(page: str, path: str, allowed: tuple[str, ...]) -> None:
    if _placeholder(path):
        assert "placeholder" in _read(page), (
            f"{_rel(page)} writes {path} without saying it is a placeholder"
        )
        return
    assert os.path.normpath(path).startswith(tuple(a.rstrip("/") for a in allowed)), (
        f"{_rel(page)} writes {path} outside {WORK}"
    )


@pytest.mark.parametrize("page", _example_pages(), ids=_rel)
def test_when_example_runs_from_the_root_then_inputs_exist_and_outputs_in_work(page):
    text = _read(page)
    # An input a redirection on the same page writes into work/ (dev.jsonl).
    written = {t for block in BASH.findall(text) for t in REDIRECT.findall(block)
               if t.startswith(WORK)}
    for n, words in enumerate(_commands(text)):
        # README's first command is the quick start, which CI pins to out/.
        allowed = (WORK, QUICK_START_OUTPUT) if page == README and n == 0 else (WORK,)
        for option, value in _options(words):
            if option == "--input" and not _placeholder(value):
                if value.startswith("..") or value in written:
                    continue  # ../shared/corpora: outside the clone, said in the text
                assert glob.glob(os.path.join(ROOT, value)), (
                    f"{_rel(page)}: --input {value} matches no file"
                )
            elif option in OUTPUT_OPTIONS:
                _check_written(page, value, allowed)
    for block in BASH.findall(text):
        for target in REDIRECT.findall(block):
            if target != "/dev/null":
                _check_written(page, target, (WORK,))


def _quick_examples() -> list[str]:
    """README's bash blocks past the quick start that `run`, `report` or `compact`
    on one machine in seconds (no gateway, training, evaluation or other runner)."""
    quick = []
    for block in BASH.findall(_read(README))[2:]:
        commands = _block_commands(block)
        subcommands = {words[0] for words in commands}
        options = {o for words in commands for o, _ in _options(words)}
        local = not options & {"--runner", "--direct_running_mode"}
        if subcommands and subcommands <= {"run", "report", "compact"} and local:
            quick.append(block)
    return quick


def test_when_readme_examples_run_in_a_copy_of_the_samples_then_each_exits_0(
    tmp_path,
):
    blocks = _quick_examples()
    assert len(blocks) >= 4, blocks  # key + archive, report, HL7, incremental
    shutil.copytree(os.path.join(ROOT, "samples"), tmp_path / "samples")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep
               + os.environ["PATH"])
    for block in blocks:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (block, done.stderr[-2000:])
    work = tmp_path / "work"
    assert sorted(os.listdir(tmp_path)) == ["samples", "work"]
    for path in ("deid.key", "report.json", "review.html"):
        assert stat.S_IMODE(os.stat(work / path).st_mode) == 0o600, path
    assert stat.S_IMODE(os.stat(work).st_mode) == 0o700
    assert (work / "out" / "run.json").exists()
    assert glob.glob(str(work / "hl7-out" / "hl7" / "*.hl7"))
    assert (work / "extract" / "current").is_dir()


@pytest.mark.parametrize(
    "path", ["work/deid.key", "work/out/run.json", "deid.key", "site.key",
             "review.html", "review-2026.html", "report.json"]
)
def test_when_examples_write_keys_and_reports_then_git_ignores_them(path):
    done = subprocess.run(
        ["git", "-C", ROOT, "check-ignore", "--no-index", "-q", path], check=False
    )
    assert done.returncode == 0, f"{path} is not ignored"


def _readme_block(command: str) -> str:
    (block,) = [b for b in BASH.findall(_read(README)) if command in b]
    return block


def test_when_readme_feeds_the_gateway_then_only_the_install_is_needed_and_it_waits(
    tmp_path,
):
    """The MLLP example as written (on a free port): no test-extra sender, and
    the gateway's final status line comes before the block ends (``wait``)."""
    import socket

    block = _readme_block("deid-pipeline mllp")
    assert "mllp_send" not in block  # python-hl7's, in the test extra only
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    shutil.copytree(os.path.join(ROOT, "samples"), tmp_path / "samples")
    (tmp_path / "work").mkdir(mode=0o700)
    (tmp_path / "work" / "deid.key").write_bytes(b"docs-gateway-key-0123456789abcdef")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep
               + os.environ["PATH"])
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c",
         block.replace("2575", port) + "echo END-OF-BLOCK >&2\n"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    final = done.stderr.index("mllp: stopped after")
    assert "total 5: AA 5" in done.stderr[final:]
    assert final < done.stderr.index("END-OF-BLOCK")


def test_when_examples_train_then_each_writes_its_own_model_and_readme_says_how_long():
    models = [value for page in _pages() for words in _commands(_read(page))
              if words[0] == "train"
              for option, value in _options(words) if option == "--output"]
    assert len(models) >= 2
    assert len(models) == len(set(models)), models
    text = _read(README)
    before_train = text[: text.index(_readme_block("deid-pipeline train"))]
    paragraph = before_train.rsplit("```bash", 1)[0].strip().split("\n\n")[-1]
    assert re.search(r"[Tt]rain[^`]*\(about \d+ minutes\)", paragraph)


def test_when_docs_show_the_rules_version_then_it_is_the_codes():
    """A version string shown as an example is today's, or a placeholder."""
    from deid_pipeline.tagger.detectors import TaggerConfig, create

    version = create(TaggerConfig(detectors=("rules",)))[0].version
    for page in _pages():
        for shown in re.findall(r"\b\d+\+data\d+\b", _read(page)):
            assert shown == version, f"{_rel(page)} shows rules version {shown}"


def test_when_readme_lists_run_json_then_each_key_named_is_written(tmp_path):
    row = next(line for line in _read(README).splitlines()
               if line.startswith("| `run.json`"))
    named = set(re.findall(r"`(\w+)`", row)) - {"run"}
    assert {"seconds", "records_read", "files_skipped"} <= named
    from deid_pipeline.pipelines.job import run

    summary = run(["--input", os.path.join(ROOT, "samples", "notes.jsonl"),
                   "--output", str(tmp_path / "o"), "--ephemeral-key",
                   "--detectors", "rules"])
    written = json.loads((tmp_path / "o" / "run.json").read_text())
    assert named <= set(written) and written["seconds"] == summary["seconds"]
