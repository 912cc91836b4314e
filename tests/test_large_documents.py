"""One huge document (thousands of notes in one file): parts, search, guard, progress.

A long text is tagged in overlapping windows and searched for all its values
in one pass (``SearchText.find_all``); these tests pin that it marks what the
notes tagged one by one would, that nothing at a window's edge is lost, that
a value found once is still marked and guarded everywhere, and that a long
document reports progress while it is worked on.
"""

from __future__ import annotations

import io
import re

import pytest

from deid_pipeline import value_search
from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.leak_guard import LeakDetectedError
from deid_pipeline.model import ClinicalDocument, DeidentifiedDocument, PhiSpan
from deid_pipeline.runtime.progress import DOCUMENT_PROGRESS, Progress
from deid_pipeline.tagger.detectors import Detector, TaggerConfig, create
from deid_pipeline.tagger.merge import reconcile
from deid_pipeline.tagger.tagging import PhiTagger, part_bounds, shifted
from deid_pipeline.value_search import BULK_CHARS, SearchText

PART = 1_500  # small parts: many windows in a test-sized text


@pytest.fixture(scope="module")
def notes(physionet_docs):
    """Nursing notes, each on one line: parts are then cut at blanks, inside
    dates, names and phones, not at line ends between notes."""
    return [" ".join(d.text.split()) for d in physionet_docs[:12]]


@pytest.fixture(scope="module")
def rules_tagger():
    return create(TaggerConfig(detectors=("rules",)))


def test_when_notes_joined_in_one_document_then_spans_are_the_notes_spans_shifted(
        notes, rules_tagger):
    """Windows find what the notes tagged one by one find; then, as in any
    document, a value found in one note is marked in the others too."""
    # A note whose phone number the first cut (at a blank) splits.
    before = "Daughter called from "
    pad = _filler(PART)[:PART - len(before) - 6].replace("\n", " ")
    first = pad + before + "(410) 555-0199 today, will visit."
    notes = [first, *notes]
    text = "\n".join(notes) + "\n"
    cut = part_bounds(text, PART)[0][1]
    assert text.index("(410)") < cut < text.index("0199")
    whole = PhiTagger(rules_tagger, part_chars=PART).tag(
        ClinicalDocument("big", text, "text"))
    separately = []
    offset = 0
    for note in notes:
        one = PhiTagger(rules_tagger).tag(ClinicalDocument("n", note, "text"))
        separately.extend(shifted(s, offset) for s in one.spans)
        offset += len(note) + 1
    def geometry(spans):
        return [(s.start, s.end, s.label) for s in spans]

    assert geometry(whole.spans) == geometry(reconcile(text, separately))
    assert len(part_bounds(text, PART)) > 5
    assert any(s.start < cut < s.end for s in whole.spans)


class _AfterDoctor(Detector):
    """Tags the two words after ``Dr.`` only: other occurrences are the merge's."""

    name = "crf"
    labels = ("DOCTOR",)

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        return tuple(PhiSpan(m.start(1), m.end(1), "DOCTOR", self.name, 0.9)
                     for m in re.finditer(r"Dr\. ([A-Z][a-z]+ [A-Z][a-z]+)", doc.text))


def _filler(chars: int) -> str:
    line = "Pt resting comfortably, vitals stable, tolerating diet.\n"
    return line * (chars // len(line) + 1)


def test_when_value_tagged_across_a_cut_then_marked_whole_in_a_far_part(monkeypatch):
    name = "Quilleran Tova"
    head = "x" * (PART - 15) + f" Dr. {name} seen.\n"
    text = head + _filler(BULK_CHARS) + f"{name} called back.\n"
    at = text.index(name)
    cut = part_bounds(text, PART)[0][1]
    assert at < cut < at + len(name)  # the first cut splits the name
    # One pass over the long text for all values, not a search per value.
    monkeypatch.setattr(SearchText, "find", _no_search_per_value)
    tagged = PhiTagger([_AfterDoctor()], part_chars=PART).tag(
        ClinicalDocument("long", text, "text"))
    found = {(s.start, text[s.start:s.end]) for s in tagged.spans}
    assert found == {(at, name), (text.rindex(name), name)}


def _no_search_per_value(self, needle):
    raise AssertionError("a long text was searched one value at a time")


def test_when_removed_value_planted_far_away_then_guard_catches_it(monkeypatch):
    head = "Seen by Dr. Quillerantova today, phone 410-555-0199.\n"
    text = head + _filler(BULK_CHARS)
    spans = (PhiSpan(12, 25, "DOCTOR", "crf", 0.9),
             PhiSpan(39, 51, "PHONE", "rules", 1.0))
    from deid_pipeline.model import TaggedDocument

    tagged = TaggedDocument(ClinicalDocument("long", text, "text"), spans)
    rewriter = Rewriter("surrogate", b"k" * 32, as_of_year=2026)
    result = rewriter.rewrite(tagged)
    monkeypatch.setattr(SearchText, "find", _no_search_per_value)
    assert rewriter.guard(tagged, result) is result  # clean as written
    for planted in ("QUILLERANTOVA", "(410) 555 0199"):
        leaky = DeidentifiedDocument(
            result.doc_id, result.person_id, result.source,
            result.text + "Addendum: " + planted + " again.\n", result.confidence,
            result.replacements)
        with pytest.raises(LeakDetectedError):
            rewriter.guard(tagged, leaky)


def test_when_many_values_then_one_pass_finds_what_one_search_each_finds(
        physionet_docs):
    """The long-text path against the regex that defines a match, value by
    value, on real notes and their gold PHI: repeated and overlapping first
    words, digits across separators."""
    docs = physionet_docs[:300]
    text = "\n".join(d.text for d in docs)
    assert len(text) > BULK_CHARS
    values = sorted({d.text[s.start:s.end] for d in docs for s in d.gold})
    values += ["resting", "pt resting", "the", "555 01", "mg"]
    assert len(values) > 100
    bulk = SearchText(text).matches_all(values)
    one = SearchText(text)
    assert bulk == [_slow_matches(one, v) for v in values]
    assert sum(map(len, bulk)) > len(values)


def _slow_matches(search: SearchText, value: str) -> list[tuple[int, int]]:
    pattern = value_search.value_pattern(value)
    return [] if pattern is None else [m.span() for m in pattern.finditer(search.text)]


class _Clock:
    """A clock that moves 31 s every time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 31.0
        return self.now


def test_when_one_long_document_then_progress_lines_come_while_it_is_worked_on(
        monkeypatch, notes, rules_tagger):
    stream = io.StringIO()
    progress = Progress(DOCUMENT_PROGRESS, stream=stream, clock=_Clock())
    from deid_pipeline.runtime import progress as progress_module

    monkeypatch.setitem(progress_module._PROCESS_PROGRESS, DOCUMENT_PROGRESS,
                        progress)
    text = "\n".join(notes) + "\n" + _filler(BULK_CHARS)
    tagged = PhiTagger(rules_tagger, part_chars=PART).tag(
        ClinicalDocument("long", text, "text"))
    tag_lines = stream.getvalue().splitlines()
    # A line as the document starts, then one per part (the clock says 31 s).
    assert "long_documents 1 " in tag_lines[0] and "characters" not in tag_lines[0]
    assert len(tag_lines) >= len(part_bounds(text, PART))
    assert "characters_tagged" in tag_lines[-1]
    assert f"characters_tagged {len(text)} " in tag_lines[-1]
    many = tagged.__class__(tagged.document, tuple(
        PhiSpan(k, k + 2, "ROOM", "rules", 1.0) for k in range(0, 6_000, 3)))
    Rewriter("redact", b"k" * 32, as_of_year=2026).rewrite(many)
    lines = stream.getvalue().splitlines()[len(tag_lines):]
    assert lines and all("spans_rewritten" in line for line in lines)
    # Counts only: no text of the document in any line.
    assert all("Pt resting" not in line for line in lines + tag_lines)


def test_when_year_tagged_as_hospital_then_merged_as_date_and_document_passes_guard():
    """A bare year the CRF labels HOSPITAL became a surrogate there, and the
    guard then found the same year kept as a date elsewhere: quarantined."""
    from deid_pipeline.model import TaggedDocument

    text = ("Transferred from Mercy Hospital 1998 records.\n"
            "History: hip replacement in 1998, room 4021.\n")
    at = text.index("1998")
    room = text.index("4021")
    spans = (PhiSpan(text.index("Mercy"), text.index("Mercy") + 14, "HOSPITAL",
                     "crf", 0.8),
             PhiSpan(at, at + 4, "HOSPITAL", "crf", 0.6),
             PhiSpan(room, room + 4, "HOSPITAL", "crf", 0.5))
    merged = reconcile(text, spans)
    assert [(s.start, s.label) for s in merged] == [
        (spans[0].start, "HOSPITAL"), (at, "DATE"), (room, "HOSPITAL")]
    tagged = TaggedDocument(ClinicalDocument("year", text, "text"), merged)
    rewriter = Rewriter("surrogate", b"k" * 32, as_of_year=2026)
    result = rewriter.rewrite(tagged)
    assert rewriter.guard(tagged, result) is result
    assert "room 4021" not in result.text  # a digit run keeps its redaction


def test_when_originals_hold_most_of_the_name_pool_then_few_draws_and_none_masked(
        monkeypatch):
    """A document of 40,000 notes names most of Faker's surnames: keyed
    redraws from the whole pool spelled an original up to 64 times, then
    masked. The draw after two keyed ones skips the originals."""
    import deid_pipeline.surrogates as surrogates
    from deid_pipeline.rewrite import RewriteContext
    from deid_pipeline.surrogates import Originals, surrogate
    from deid_pipeline.surrogates.names import name_tables

    last = name_tables().last.words
    free = set(last[::25])  # one surname in 25 is nobody's in the document
    originals = Originals.of((w, "PATIENT") for w in last if w not in free)
    ctx = RewriteContext(b"k" * 32, "person-1", as_of_year=2026, avoid=originals)
    calls = []
    memo = surrogates._memo
    monkeypatch.setattr(surrogates, "_memo",
                        lambda *a: calls.append(a) or memo(*a))
    tables = name_tables()
    values = [v for v in sorted(originals.words)
              if tables.pool_for(v) is tables.last][:200]
    out = [surrogate(v.title(), "PATIENT", ctx) for v in values]
    assert all(not originals.spelled_by(o) for o in out)
    assert {o for o in out if len(o) >= 3} <= free  # shorter: not an original word
    assert len(calls) <= 4 * len(values)
    assert out == [surrogate(v.title(), "PATIENT", ctx) for v in values]


def test_when_a_chunk_of_short_documents_is_tagged_then_progress_counts_each(
        monkeypatch, tmp_path, notes, rules_tagger):
    """A chunk of short notes was tagged for minutes with no line: only the
    rewrite counted documents."""
    from deid_pipeline.flow import DocumentFlow
    from deid_pipeline.runtime import progress as progress_module
    from deid_pipeline.transforms.chunks import (
        ChunkRef,
        TagChunkFn,
        spill_path,
        write_spill,
    )

    stream = io.StringIO()
    monkeypatch.setitem(progress_module._PROCESS_PROGRESS, DOCUMENT_PROGRESS,
                        Progress(DOCUMENT_PROGRESS, stream=stream, clock=_Clock()))
    docs = [ClinicalDocument(f"note-{k}", note, "text")
            for k, note in enumerate(notes[:4])]
    path = spill_path(str(tmp_path), "read", 0, 0)
    (tmp_path / "read").mkdir()
    write_spill(path, docs)
    fn = TagChunkFn(str(tmp_path), TaggerConfig(detectors=("rules",)), None,
                    Rewriter("surrogate", b"k" * 32, as_of_year=2026))
    fn._flow = DocumentFlow(PhiTagger(rules_tagger))  # what setup() builds
    out = list(fn.process(ChunkRef(path, 0, 0, len(docs))))
    assert out[-1].count == len(docs)
    lines = stream.getvalue().splitlines()
    assert [line.split("documents_tagged ")[1].split()[0] for line in lines] == [
        "1", "2", "3", "4"]
    assert all("Pt" not in line and "note-" not in line for line in lines)


def test_when_a_long_text_is_substituted_by_blocks_then_as_whole():
    # Separator runs and non-word characters that straddle the megabyte
    # boundaries come out as one re.sub of the whole text would give them.
    from deid_pipeline.value_search import _GAPS, _NOT_WORD, _SUB_BLOCK, _sub_by_blocks

    unit = "Pt 617-555-0142 (cell) / seen 3.4.2019 -- ok;  é\t"
    text = unit * (2 * _SUB_BLOCK // len(unit) + 7)
    for cut in range(_SUB_BLOCK - 8, _SUB_BLOCK + 8):
        piece = text[:cut] + " -./() " + text[cut:]
        assert _sub_by_blocks(_GAPS, "", piece) == _GAPS.sub("", piece)
    assert _sub_by_blocks(_NOT_WORD, "\0", text) == _NOT_WORD.sub("\0", text)
