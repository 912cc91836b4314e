"""The review queue page: structure, ordering, escaping, and a real browser render."""

import html
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import zlib

import numpy as np
import pyarrow.parquet as pq
import pytest

from deid_pipeline.outputs.review import (
    PlacedSpan,
    ReviewDocument,
    confidence_histogram,
    place_replacements,
    render_html,
    write_html,
)
from deid_pipeline.pipelines.job import run
from deid_pipeline.synthetic import generate_notes
from deid_pipeline.tagger.confidence import TokenPhi
from deid_pipeline.tagger.detectors import Detection, Detector, register

# One place to switch on the CRF once its model ships.
DETECTORS = "rules,dictionary"
KEY = b"0123456789abcdef0123456789abcdef"

SCRIPT_NOTE = (
    "Seen 7/22/2006 <script>alert('pwned')</script> call 617-555-0142 "
    '& "quoted" <b>bold</b>.'
)
# Document confidences the test detector reports (None: no confidence).
CONFIDENCES = {
    "synth-5-000001": 0.91,
    "synth-5-000002": 0.35,
    "synth-5-000003": None,
    "synth-5-000004": 0.05,
    "synth-5-000005": 0.62,
    "xss-<i>1</i>": 0.20,
}


class _FixedConfidence(Detector):
    """Finds nothing; reports the document confidence the table above gives."""

    name = "test-review-confidence"

    def detect(self, doc):
        return ()

    def analyze(self, doc):
        wanted = CONFIDENCES.get(doc.doc_id)
        if wanted is None:
            return Detection(())
        # Unmarked tokens whose P(PHI) adds up to 1/c - 1 give confidence c
        # (tagger/confidence.py); empty ones at 0, which no span covers.
        k = 40
        zero = np.zeros(k, np.int64)
        return Detection((), TokenPhi(zero, zero, np.full(k, (1 / wanted - 1) / k)))


register("test-review-confidence")(lambda config: _FixedConfidence())


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


@pytest.fixture(scope="module")
def review_run(tmp_path_factory):
    """A small real run: generated notes plus a note full of markup."""
    root = tmp_path_factory.mktemp("review")
    (root / "in").mkdir()
    notes = generate_notes(5, 5, min_tokens=60, max_tokens=200)
    with open(root / "in" / "notes.jsonl", "w", encoding="utf-8") as fh:
        for doc in notes:
            fh.write(json.dumps({"id": doc.doc_id, "text": doc.text}) + "\n")
        fh.write(json.dumps({"id": "xss-<i>1</i>", "text": SCRIPT_NOTE}) + "\n")
    key = root / "deid.key"
    key.write_bytes(KEY)
    out = root / "out"
    summary = run(
        [
            "--input",
            str(root / "in" / "*.jsonl"),
            "--output",
            str(out),
            "--key-file",
            str(key),
            "--detectors",
            f"{DETECTORS},test-review-confidence",
            "--review-floor",
            "0",
        ]
    )
    assert summary["records_written"] == len(CONFIDENCES)
    page = root / "review.html"
    total = write_html(str(out), str(page))
    return {
        "out": out,
        "page": page,
        "html": page.read_text(encoding="utf-8"),
        "total": total,
        "documents": pq.read_table(out / "documents").to_pylist(),
        "identifiers": pq.read_table(out / "identifiers").to_pylist(),
    }


def _articles(page: str) -> list[str]:
    return re.findall(r"<article class=\"doc\".*?</article>", page, re.S)


def test_when_page_written_then_header_shows_document_count(review_run):
    n = len(review_run["documents"])
    assert review_run["total"] == n
    assert f'<p class="count" id="document-count">{n} documents</p>' in (
        review_run["html"]
    )
    assert "<title>PROTECTED" in review_run["html"]
    assert "CONTAINS PHI" in review_run["html"]


def test_when_page_written_then_documents_listed_by_ascending_confidence_nulls_last(
    review_run,
):
    shown = re.findall(
        r'<article class="doc" id="doc-\d+" data-doc-id="([^"]*)" '
        r'data-confidence="([^"]*)"',
        review_run["html"],
    )
    ids = [html.unescape(doc_id) for doc_id, _ in shown]
    expected = sorted(
        CONFIDENCES, key=lambda d: (CONFIDENCES[d] is None, CONFIDENCES[d] or 0, d)
    )
    assert ids == expected
    assert shown[-1][1] == "n/a"


def test_when_note_holds_markup_then_page_escapes_it_and_loads_nothing(review_run):
    page = review_run["html"]
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    assert "<i>1</i>" not in page and "xss-&lt;i&gt;1&lt;/i&gt;" in page
    assert "<b>bold</b>" not in page
    # Self-contained: no external resource of any kind.
    for needle in ("src=", "http://", "https://", "@import", "url(", "<link"):
        assert needle not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_when_page_written_then_each_replacement_highlighted_with_its_original(
    review_run,
):
    by_doc = {}
    for row in review_run["identifiers"]:
        by_doc.setdefault(row["doc_id"], []).append(row)
    texts = {d["doc_id"]: d["text"] for d in review_run["documents"]}
    articles = {
        html.unescape(re.search(r'data-doc-id="([^"]*)"', a).group(1)): a
        for a in _articles(review_run["html"])
    }
    assert set(articles) == set(texts)
    assert any(by_doc.values())
    for doc_id, article in articles.items():
        rows = by_doc.get(doc_id, [])
        marks = re.findall(r'<mark class="phi c-(\w+)" data-label="(\w+)" '
                           r'title="([^"]*)">(.*?)</mark>', article, re.S)
        assert len(marks) == len(rows), doc_id
        for (cat, label, title, shown), row in zip(
            marks, sorted(rows, key=lambda r: r["start"])
        ):
            assert (cat, label) == (row["category"], row["label"])
            assert html.unescape(shown) == row["replacement"]
            assert f"original: {row['original']}" in html.unescape(title)
    # The labels chart counts every identifier row of the run.
    chart = re.search(r'<svg[^>]*id="label-chart".*?</svg>', review_run["html"], re.S)
    for label in {r["label"] for r in review_run["identifiers"]}:
        n = sum(r["label"] == label for r in review_run["identifiers"])
        assert re.search(rf">{label}</text>.*?>{n}</text>", chart.group(0))


def test_when_limit_smaller_than_run_then_count_still_whole_run(review_run, tmp_path):
    page = tmp_path / "two.html"
    total = write_html(str(review_run["out"]), str(page), limit=2)
    text = page.read_text(encoding="utf-8")
    assert total == len(review_run["documents"])
    assert f'id="document-count">{total} documents<' in text
    assert len(_articles(text)) == 2
    assert "showing the 2 least confident" in text
    assert stat.S_IMODE(os.stat(page).st_mode) == 0o600


def test_when_report_cli_given_html_then_page_written(review_run, tmp_path, capsys):
    from deid_pipeline.pipelines.cli import main

    page = tmp_path / "cli.html"
    assert main(["report", "--run", str(review_run["out"]), "--html", str(page)]) == 0
    assert f"{len(review_run['documents'])} documents</p>" in page.read_text(
        encoding="utf-8"
    )
    assert "PROTECTED" in capsys.readouterr().err


def test_when_run_has_no_documents_then_page_says_zero(tmp_path):
    (tmp_path / "run").mkdir()
    for table in ("documents", "identifiers"):
        (tmp_path / "run" / table).mkdir()
    page = tmp_path / "empty.html"
    assert write_html(str(tmp_path / "run"), str(page)) == 0
    text = page.read_text(encoding="utf-8")
    assert 'id="document-count">0 documents<' in text
    assert "No PHI spans in this run." in text


@pytest.mark.parametrize(
    "text,rows,expected",
    [
        (
            "Seen [**DATE**] by [**DOCTOR**].",
            [
                {"start": 5, "end": 14, "label": "DATE", "replacement": "[**DATE**]"},
                {"start": 18, "end": 28, "label": "DOCTOR",
                 "replacement": "[**DOCTOR**]"},
            ],
            [(5, 15), (19, 31)],
        ),
        ("no phi", [], []),
        (
            "AB X",  # a longer original before a shorter surrogate
            [{"start": 0, "end": 10, "label": "PATIENT", "replacement": "AB"},
             {"start": 11, "end": 12, "label": "AGE", "replacement": "X"}],
            [(0, 2), (3, 4)],
        ),
    ],
)
def test_when_rows_sorted_then_replacements_placed_by_cumulative_shift(
    text, rows, expected
):
    placed, ok = place_replacements(text, reversed(rows))
    assert ok
    assert [(s.start, s.end) for s in placed] == expected
    assert [text[s.start : s.end] for s in placed] == [
        r["replacement"] for r in sorted(rows, key=lambda r: r["start"])
    ]


def test_when_rows_do_not_match_text_then_nothing_highlighted():
    rows = [{"start": 0, "end": 4, "label": "DATE", "replacement": "[**DATE**]"}]
    assert place_replacements("1999 was a year", rows) == ((), False)


def test_when_confidences_binned_then_one_is_last_bin_and_nulls_apart():
    counts, missing = confidence_histogram([0.0, 0.05, 0.1, 0.55, 0.999, 1.0, None])
    assert counts == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert missing == 1


def test_when_values_hostile_then_rendered_inert():
    original = '" onmouseover="alert(1)" x="<script>'
    doc = ReviewDocument(
        doc_id='d"><script>alert(2)</script>',
        person_id="p1",
        source="text",
        confidence=0.5,
        n_phi=1,
        text="A\x00B [**PATIENT**] \x1b end \u202eevil\u202c 617\u200b555",
        spans=(PlacedSpan(4, 17, "PATIENT", "NAME", "rules", None, original,
                          "[**PATIENT**]"),),
    )
    page = render_html(1, [doc], {"PATIENT": 1}, confidence_histogram([0.5]))
    assert "<script" not in page
    assert 'onmouseover="' not in page
    assert "A[U+0000]B" in page and "[U+001B] end" in page and "\x00" not in page
    assert "[U+202E]evil[U+202C] 617[U+200B]555" in page and "\u202e" not in page
    assert "&quot; onmouseover=&quot;alert(1)&quot;" in page


def test_when_document_very_long_then_page_shows_a_cut(tmp_path):
    doc = ReviewDocument("big", "p", "text", None, 0, "x" * 50_000, ())
    page = render_html(1, [doc], {}, confidence_histogram([None]))
    assert "30,000 more characters not shown" in page
    assert page.count("x" * 1000) == 20


# ----------------------------------------------------------- a real browser


def _png_facts(data: bytes) -> tuple[int, int, int]:
    """Width, height and distinct byte values of the image data of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, [], (0, 0)
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    pixels = zlib.decompress(b"".join(idat))
    return size[0], size[1], len(set(pixels))


def test_when_page_rendered_in_headless_chromium_then_count_shown(review_run, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium binary on PATH (Debian package `chromium`; "
                    ".ci/run installs it)")
    url = review_run["page"].resolve().as_uri()
    common = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,2000",
    ]
    shot = tmp_path / "review.png"
    done = subprocess.run(
        common + [f"--user-data-dir={tmp_path / 'profile-shot'}",
                  f"--screenshot={shot}", url],
        capture_output=True, timeout=180,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    width, height, distinct = _png_facts(shot.read_bytes())
    assert (width, height) == (1280, 2000)
    assert distinct > 50, "the screenshot looks blank"
    dom = subprocess.run(
        common + [f"--user-data-dir={tmp_path / 'profile-dom'}", "--dump-dom", url],
        capture_output=True, timeout=180,
    )
    assert dom.returncode == 0, dom.stderr.decode("utf-8", "replace")[-2000:]
    rendered = dom.stdout.decode("utf-8")
    n = len(review_run["documents"])
    assert re.search(rf'id="document-count">\s*{n} documents\s*<', rendered)
    assert len(_articles(rendered)) == n
    # Keep a copy beside the run for a human to look at after a failure.
    shutil.copy(shot, review_run["out"].parent / "review.png")


def test_when_a_run_holds_documents_for_review_then_counted_and_the_page_lists_them(
        tmp_path):
    import glob

    from deid_pipeline.outputs.review import load_held, write_html

    out = tmp_path / "out"
    # A floor above every sample's confidence holds some; the rest are published.
    summary = run(["--input", "samples/notes.jsonl", "--output", str(out),
                   "--ephemeral-key", "--review-floor", "0.985"])
    held_rows = [r for f in glob.glob(str(out / "quarantine" / "*.parquet"))
                 for r in pq.read_table(f).to_pylist() if r["stage"] == "review"]
    published = [r for f in glob.glob(str(out / "documents" / "*.parquet"))
                 for r in pq.read_table(f).to_pylist()]
    assert held_rows and published
    assert all(r["confidence"] >= 0.985 for r in published)
    assert summary["records_read"] == len(published) + summary["records_quarantined"]
    assert summary["quarantined_by_stage"]["review"] == len(held_rows)
    count, held = load_held(str(out))
    assert count == len(held_rows)
    page = tmp_path / "review.html"
    write_html(str(out), str(page))
    html_text = page.read_text()
    assert f"Held for review ({count})" in html_text
    first = json.loads(held_rows[0]["raw"])["text"]
    assert first.split("\n")[0][:30] in html_text.replace("&#x27;", "'")
