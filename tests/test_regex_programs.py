"""What the rules derive at start-up, read back from the data cache, is what they make.

Compiled programs are the ones ``re`` compiles; scan plans are the ones
:mod:`deid_pipeline.tagger.rules.scan` plans.
"""

from __future__ import annotations

import os
import re
from array import array

import pytest

from deid_pipeline.runtime import data_cache, regex_programs
from deid_pipeline.runtime.kept_table import KeptTable
from deid_pipeline.tagger.rules import scan
from deid_pipeline.tagger.rules.detector import build_recognizers, default_config

NOTE = ("Pt seen by Dr. Mary O'Neil on 03/14/2093 at Saint Anne's Hospital, "
        "Worcester MA 01602; MRN 4456123, call 508-555-0142. f/u 4/2.")


@pytest.fixture()
def fresh_process(tmp_path, monkeypatch):
    """A cache directory of its own and module state as a new process has it."""
    monkeypatch.setenv(data_cache.CACHE_ENV, str(tmp_path))

    def restart() -> None:
        monkeypatch.setattr(regex_programs, "PROGRAMS", KeptTable(
            "regex-programs", regex_programs._key, regex_programs.PROGRAMS.limit))
        monkeypatch.setattr(scan, "PLANS", KeptTable(
            "scan-plans", scan._plans_key, scan.PLANS.limit))

    restart()
    return restart


def _compiled_by_rules() -> dict[tuple[str, int], re.Pattern[str]]:
    """Build the packaged recognizers; every expression they compiled, by key."""
    recognizers = build_recognizers(default_config())
    assert recognizers
    return {key: regex_programs.compile_regex(*key)
            for key in regex_programs.PROGRAMS.used()}


def test_when_rules_are_built_from_the_cache_then_every_expression_equals_re_compile(
        fresh_process):
    first = _compiled_by_rules()
    regex_programs.save()
    assert len(first) > 100  # the recognizers, their twins and their scans
    assert os.listdir(os.environ[data_cache.CACHE_ENV])

    fresh_process()
    assert regex_programs.PROGRAMS.stored().keys() >= first.keys()
    second = _compiled_by_rules()
    assert not regex_programs.PROGRAMS.dirty  # nothing compiled: all read back
    for (pattern, flags), regex in second.items():
        expected = re.compile(pattern, flags)
        # Pattern equality is flags, pattern and the compiled program.
        assert regex == expected
        assert regex.groupindex == expected.groupindex
        assert regex.groups == expected.groups
        assert ([m.span() for m in regex.finditer(NOTE)]
                == [m.span() for m in expected.finditer(NOTE)])


def test_when_the_cache_file_is_damaged_then_expressions_are_compiled_again(
        fresh_process, tmp_path):
    regex_programs.compile_regex(r"(?P<day>\d{1,2})/(?P<month>\d{1,2})", re.I)
    regex_programs.save()
    (path,) = tmp_path.iterdir()
    path.write_bytes(path.read_bytes()[:40])  # truncated

    fresh_process()
    regex = regex_programs.compile_regex(r"(?P<day>\d{1,2})/(?P<month>\d{1,2})", re.I)
    assert regex == re.compile(r"(?P<day>\d{1,2})/(?P<month>\d{1,2})", re.I)
    assert regex.search("seen 3/14").groupdict() == {"day": "3", "month": "14"}


def test_when_a_kept_program_is_not_one_sre_takes_then_re_compiles_it(fresh_process):
    key = (r"\bward \d+", 0)
    no_such_opcode = array(regex_programs._CODE_TYPE, [999, 1, 2]).tobytes()
    regex_programs.PROGRAMS.stored()[key] = (0, no_such_opcode, 0, {}, ())
    regex = regex_programs.compile_regex(*key)
    assert regex == re.compile(*key)
    assert regex.search("moved to ward 7")


def test_when_a_kept_entry_is_not_a_program_then_re_compiles_it(fresh_process):
    key = (r"\bbed \d+", 0)
    regex_programs.PROGRAMS.stored()[key] = ("not", "a program")
    assert regex_programs.compile_regex(*key) == re.compile(*key)


def test_when_a_pattern_is_bad_then_re_error_is_raised(fresh_process):
    with pytest.raises(re.error):
        regex_programs.compile_regex(r"(?P<x>unclosed")


def test_when_the_cache_is_off_then_nothing_is_written(tmp_path, monkeypatch,
                                                        fresh_process):
    monkeypatch.setenv(data_cache.CACHE_ENV, "off")
    regex = regex_programs.compile_regex(r"\d{3}-\d{4}")
    regex_programs.save()
    assert regex.fullmatch("555-0142")
    assert not any(tmp_path.iterdir())


def test_when_scans_are_built_from_kept_plans_then_they_are_the_planned_ones(
        fresh_process):
    recognizers = build_recognizers(default_config())
    planned = [r._scanner for r in recognizers]
    assert scan.PLANS.dirty and len(scan.PLANS.used()) >= len(planned)
    scan.PLANS.save()

    fresh_process()
    assert scan.PLANS.stored()  # read back, not planned again
    kept = [r._scanner for r in build_recognizers(default_config())]
    assert not scan.PLANS.dirty
    text = NOTE + " " + NOTE.upper() + " Ward 5B, bed 12; seen 12/03 by S. Kim MD."
    for recognizer, made, read in zip(recognizers, planned, kept, strict=True):
        guarded = recognizer._guarded(range(len(recognizer.patterns)))
        assert read._plan == scan._plan(made.regex, guarded, recognizer.flags)
        assert (read.first, read.before) == (made.first, made.before)
        assert [(p.search.__self__, p.offset, p.exact) for p in read._parts] == [
            (p.search.__self__, p.offset, p.exact) for p in made._parts]
        assert [m.span() for m in read.finditer(text)] == [
            m.span() for m in made.finditer(text)]


def test_when_a_kept_plan_is_damaged_then_the_scan_is_planned_again(fresh_process):
    regex = re.compile(r"(?i)\bward \d+[a-z]?")
    made = scan.Scanner(regex)
    scan.PLANS.save()
    fresh_process()
    for key in list(scan.PLANS.stored()):
        scan.PLANS.stored()[key] = ("not", "a plan")
    again = scan.Scanner(regex)
    assert again._plan == made._plan
    assert [m.span() for m in again.finditer("to WARD 7b then ward 12")] == [
        (3, 10), (16, 23)]


def test_when_a_table_key_cannot_be_read_then_nothing_is_kept_and_nothing_fails(
        tmp_path, monkeypatch):
    monkeypatch.setenv(data_cache.CACHE_ENV, str(tmp_path))

    def unreadable() -> str:
        raise FileNotFoundError("scan.py inside an archive")

    table = KeptTable("scan-plans", unreadable, 10)
    assert table.get("plan") is None
    table.use("plan", ("made",), new=True)
    table.save()
    assert not table.enabled
    assert not any(tmp_path.iterdir())


def test_when_a_table_has_a_byte_budget_then_what_it_read_is_kept_within_it(
        tmp_path, monkeypatch):
    monkeypatch.setenv(data_cache.CACHE_ENV, str(tmp_path))
    first = KeptTable("scan-gates", lambda: "k", 100, max_bytes=10)
    for name in "abc":
        first.use(name, name.encode() * 4, new=True)
    first.save()  # what a process used is kept, whatever its size
    assert sorted(KeptTable("scan-gates", lambda: "k", 100).stored()) == ["a", "b", "c"]
    second = KeptTable("scan-gates", lambda: "k", 100, max_bytes=10)
    assert second.get("a") == b"aaaa"
    second.use("d", b"dddd", new=True)
    second.save()  # then what it read, while all stay within 10 bytes
    kept = KeptTable("scan-gates", lambda: "k", 100).stored()
    assert sorted(kept) == ["a", "d"]
    assert sum(map(len, kept.values())) <= 10
