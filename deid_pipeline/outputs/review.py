"""The review queue: one self-contained HTML page of a run's least certain documents.

Carafe's point: a de-identification model is only as trustworthy as the
review of what it was unsure of, so the honest broker should read the
documents with the lowest confidence first. This page lists them in that
order, shows each de-identified text with every replacement highlighted by
label and the original value in its tooltip, and plots PHI counts per label
and the confidence histogram.

The page is built from the protected outputs (``identifiers/`` holds the
original values), so it is itself PROTECTED and says so at the top. It is
one file with inline CSS and inline SVG, no script and no external resource,
so it can be opened offline on the broker's machine and nothing is fetched
from anywhere. It is written with owner-only permissions.

Beam-free: only pyarrow reads the run's Parquet, and only the columns and
documents the page shows (texts of the ``limit`` least confident documents,
not the whole extract).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from deid_pipeline.labels import CATEGORY_OF
from deid_pipeline.outputs.protected import write_protected
from deid_pipeline.parquet_files import read_parquet_files
from deid_pipeline.schemas import DOCUMENTS, IDENTIFIERS, QUARANTINE

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CHARS",
    "HeldDocument",
    "Histogram",
    "PlacedSpan",
    "ReviewDocument",
    "confidence_histogram",
    "label_counts",
    "load_documents",
    "load_held",
    "place_replacements",
    "render_html",
    "write_html",
]

DEFAULT_LIMIT = 200
# Characters of one document shown on the page: a 10 MB note would make the
# page unusable, and the first screenfuls are what a reviewer reads.
MAX_CHARS = 20_000
HISTOGRAM_BINS = 10

# One colour per label category, light enough to read black text on.
_CATEGORY_COLOURS = {
    "NAME": "#f6b3b3",
    "PROFESSION": "#a8e6df",
    "LOCATION": "#b3d4f6",
    "AGE": "#f8dc9c",
    "DATE": "#c2e8b0",
    "CONTACT": "#dcc2f4",
    "ID": "#f5c28f",
}
_OTHER_COLOUR = "#dddddd"

# Documents per confidence bin, and the number without a confidence.
Histogram = tuple[list[int], int]


@dataclass(frozen=True, slots=True)
class PlacedSpan:
    """A replacement located in the de-identified text (end exclusive).

    ``original`` is PHI: it only ever goes into the protected page's tooltip,
    and is left out of the repr so a logged span cannot leak it.
    """

    start: int
    end: int
    label: str
    category: str
    source: str
    confidence: float | None
    original: str = field(repr=False)
    replacement: str = ""


@dataclass(frozen=True, slots=True)
class ReviewDocument:
    """One document of the queue: its research text and its placed replacements.

    ``placed`` is False when the identifier rows did not line up with the
    text (duplicate document ids in a run, say); the text is then shown
    without highlighting rather than with highlights in the wrong places.
    """

    doc_id: str
    person_id: str
    source: str
    confidence: float | None
    n_phi: int
    text: str
    spans: tuple[PlacedSpan, ...]
    placed: bool = True


# ------------------------------------------------------------------ reading


def _parquet_files(run_dir: str, table: str) -> list[str]:
    directory = os.path.join(run_dir, table)
    if not os.path.isdir(directory):
        return []
    return [
        os.path.join(directory, f)
        for f in sorted(os.listdir(directory))
        if f.endswith(".parquet")
    ]


def _read(
    run_dir: str,
    table: str,
    schema: pa.Schema,
    columns: Sequence[str],
    doc_ids: Iterable[str] | None = None,
) -> pa.Table:
    """Only ``columns`` of a run table, optionally only rows of ``doc_ids``."""
    files = _parquet_files(run_dir, table)
    wanted = pa.schema([schema.field(c) for c in columns])
    if not files:
        return wanted.empty_table()
    read = read_parquet_files(files, list(columns)).select(list(columns)).cast(wanted)
    if doc_ids is None:
        return read
    wanted_ids = pa.array(sorted(set(doc_ids)), pa.string())
    return read.filter(pc.is_in(read.column("doc_id"), value_set=wanted_ids))


def _run_summary(run_dir: str) -> dict:
    path = os.path.join(run_dir, "run.json")
    try:
        with open(path, encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError):
        return {}
    return summary if isinstance(summary, dict) else {}


def place_replacements(
    text: str, rows: Iterable[dict]
) -> tuple[tuple[PlacedSpan, ...], bool]:
    """Where each identifier row's replacement stands in the de-identified text.

    Rows carry offsets into the ORIGINAL text; rewriting replaces spans left
    to right, so a replacement starts at its original start plus the length
    change of every replacement before it. Returns the spans and whether
    every one was found where the arithmetic says (False: do not highlight).
    """
    placed: list[PlacedSpan] = []
    shift = 0
    last_end = 0
    ok = True
    for row in sorted(rows, key=lambda r: (r["start"], r["end"])):
        replacement = row["replacement"] or ""
        start = row["start"] + shift
        end = start + len(replacement)
        shift += len(replacement) - (row["end"] - row["start"])
        if start < last_end or text[start:end] != replacement:
            ok = False
            break
        last_end = end
        label = row["label"]
        placed.append(
            PlacedSpan(
                start=start,
                end=end,
                label=label,
                category=row.get("category") or CATEGORY_OF.get(label, "OTHER"),
                source=row.get("source") or "",
                confidence=row.get("confidence"),
                original=row.get("original") or "",
                replacement=replacement,
            )
        )
    return (tuple(placed), True) if ok else ((), False)


def _queue(run_dir: str, limit: int) -> tuple[int, Histogram, pa.Table]:
    """Document count, confidence histogram, and the ``limit`` least confident.

    Only the small columns of every document are read, and only the ``limit``
    rows of the queue are kept (a top-k selection, not a sort of the run).
    """
    meta = _read(
        run_dir,
        "documents",
        DOCUMENTS,
        ["doc_id", "person_id", "source", "n_phi", "confidence"],
    )
    column = meta.column("confidence")
    histogram = confidence_histogram(
        value for chunk in column.chunks for value in chunk.to_pylist()
    )
    k = min(max(limit, 0), meta.num_rows)
    if k:
        # Nulls (and NaN) rank last by standing in as +inf: null_placement
        # is spelt differently across pyarrow versions.
        missing = pa.scalar(None, pa.float64())
        rank = pc.fill_null(pc.if_else(pc.is_nan(column), missing, column),
                            float("inf"))
        keyed = meta.append_column("_rank", rank)
        keys = [("_rank", "ascending"), ("doc_id", "ascending"),
                ("person_id", "ascending")]
        top = pc.select_k_unstable(keyed, k=k, sort_keys=keys)
        chosen = keyed.take(top)
        chosen = chosen.take(pc.sort_indices(chosen, sort_keys=keys)).drop_columns(
            ["_rank"])
    else:
        chosen = meta.slice(0, 0)
    return meta.num_rows, histogram, chosen


def load_documents(
    run_dir: str, limit: int = DEFAULT_LIMIT
) -> tuple[int, Histogram, list[ReviewDocument]]:
    """The run's document count, its confidence histogram, the queue's documents."""
    total, histogram, chosen = _queue(run_dir, limit)
    ids = chosen.column("doc_id").to_pylist()
    texts: dict[tuple[str, str], list[str]] = {}
    spans: dict[tuple[str, str], list[dict]] = {}
    if ids:
        table = _read(
            run_dir, "documents", DOCUMENTS, ["doc_id", "person_id", "text"], ids
        )
        for row in table.to_pylist():
            texts.setdefault((row["doc_id"], row["person_id"]), []).append(row["text"])
        table = _read(
            run_dir,
            "identifiers",
            IDENTIFIERS,
            ["doc_id", "person_id", "start", "end", "label", "category", "source",
             "confidence", "original", "replacement"],
            ids,
        )
        for row in table.to_pylist():
            spans.setdefault((row["doc_id"], row["person_id"]), []).append(row)
    # Two documents with one id and person cannot be told apart: their
    # identifier rows would be mixed, so such documents are not highlighted.
    duplicated = {key for key, found in texts.items() if len(found) > 1}
    docs = []
    for row in chosen.to_pylist():
        key = (row["doc_id"], row["person_id"])
        found = texts.get(key, [])
        text = found.pop(0) if found else ""
        rows = spans.get(key, [])
        if key in duplicated:
            placed, ok = (), not rows
        else:
            placed, ok = place_replacements(text, rows)
        docs.append(
            ReviewDocument(
                doc_id=row["doc_id"],
                person_id=row["person_id"],
                source=row["source"],
                confidence=row["confidence"],
                n_phi=row["n_phi"],
                text=text,
                spans=placed,
                placed=ok,
            )
        )
    return total, histogram, docs


@dataclass(frozen=True, slots=True)
class HeldDocument:
    """A document held for review (quarantine stage ``review``): never published.

    ``text`` is its original text (PHI): it only goes into the protected page.
    """

    doc_id: str
    source: str
    reason: str
    text: str = field(repr=False)


# The quarantine stage of documents held for review (flow.REVIEW; the page
# does not import the flow, which pulls in the tagger).
_REVIEW_STAGE = "review"


def load_held(run_dir: str, limit: int = DEFAULT_LIMIT
              ) -> tuple[int, list[HeldDocument]]:
    """How many documents the run held for review, and the first ``limit`` by id."""
    table = _read(run_dir, "quarantine", QUARANTINE,
                  ["doc_id", "stage", "error_message", "raw", "source"])
    rows = sorted((r for r in table.to_pylist() if r["stage"] == _REVIEW_STAGE),
                  key=lambda r: r["doc_id"])
    held = []
    for row in rows[:max(limit, 0)]:
        try:
            text = json.loads(row["raw"].decode("utf-8")).get("text", "")
        except (ValueError, AttributeError, UnicodeDecodeError):
            text = ""
        held.append(HeldDocument(row["doc_id"], row["source"] or "",
                                 row["error_message"] or "", str(text)))
    return len(rows), held


def label_counts(run_dir: str) -> dict[str, int]:
    """PHI spans per label over the whole run (not only the shown documents)."""
    labels = _read(run_dir, "identifiers", IDENTIFIERS, ["label"])
    counts = Counter(labels.column("label").to_pylist())
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def confidence_histogram(
    confidences: Iterable[float | None], bins: int = HISTOGRAM_BINS
) -> Histogram:
    """Counts of confidences in ``bins`` equal bins over [0, 1], and the nulls.

    A confidence of exactly 1 goes in the last bin; values outside [0, 1]
    (which no detector should give) are clamped rather than dropped.
    """
    counts = [0] * bins
    missing = 0
    for value in confidences:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            missing += 1
            continue
        index = int(min(max(value, 0.0), 1.0) * bins)
        counts[min(index, bins - 1)] += 1
    return counts, missing


# ------------------------------------------------------------------ rendering

# Characters a browser would drop, garble or hide: C0/C1 controls (but tab,
# line feed, carriage return), bidi controls and zero-width characters. The
# last two can reorder what a reviewer sees or split a value so a rule misses
# it.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)


def _visible(text: str) -> str:
    """Escape for HTML, naming what a browser would hide as ``[U+XXXX]``.

    A reviewer sees that a NUL, an escape or a right-to-left override is
    there (in any font) rather than have it vanish or flip the text after it.
    """
    text = _HIDDEN.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
    return html.escape(text, quote=True)


def _attr(text: str) -> str:
    return _visible(text).replace("\n", "&#10;")


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", value) or "_"


def _colour(category: str) -> str:
    return _CATEGORY_COLOURS.get(category, _OTHER_COLOUR)


def _fmt_confidence(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _highlighted(doc: ReviewDocument, max_chars: int = MAX_CHARS) -> str:
    """The document text as HTML with each replacement in a labelled ``<mark>``."""
    out: list[str] = []
    pos = 0
    cut = len(doc.text) if len(doc.text) <= max_chars else max_chars
    for span in doc.spans:
        if span.start >= cut:
            break
        out.append(_visible(doc.text[pos : span.start]))
        conf = "" if span.confidence is None else f", confidence {span.confidence:.2f}"
        title = (
            f"{span.label} ({span.category}) found by {span.source}{conf}\n"
            f"original: {span.original}"
        )
        out.append(
            f'<mark class="phi c-{_slug(span.category)}" data-label="'
            f'{_attr(span.label)}" title="{_attr(title)}">'
            f"{_visible(span.replacement)}</mark>"
        )
        pos = span.end
    if pos < cut:
        out.append(_visible(doc.text[pos:cut]))
        pos = cut
    body = "".join(out)
    if pos < len(doc.text):
        body += (
            f'<span class="more">\u2026 {len(doc.text) - pos:,} more characters '
            "not shown</span>"
        )
    return body


def _bar_chart(counts: dict[str, int]) -> str:
    """Horizontal bars, one per label: inline SVG, no library needed."""
    if not counts:
        return '<p class="empty">No PHI spans in this run.</p>'
    row, label_w, bar_w, pad = 22, 130, 300, 6
    height = row * len(counts) + 2 * pad
    top = max(counts.values())
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="label-chart" '
        f'width="{label_w + bar_w + 70}" height="{height}" role="img" '
        f'aria-labelledby="label-chart-title"><title id="label-chart-title">'
        "PHI spans per label</title>"
    ]
    for i, (label, n) in enumerate(counts.items()):
        y = pad + i * row
        width = max(1.0, bar_w * n / top)
        colour = _colour(CATEGORY_OF.get(label, "OTHER"))
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">'
            f"{_visible(label)}</text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row - 6}" '
            f'fill="{colour}" stroke="#555" stroke-width="0.5"/>'
            f'<text x="{label_w + width + 5:.1f}" y="{y + 15}">{n}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _histogram(counts: list[int], missing: int) -> str:
    """Vertical bars per confidence bin plus one for documents without one."""
    bins = len(counts)
    values = counts + [missing]
    col, plot_h, left, bottom, top_pad = 34, 160, 36, 34, 16
    width = left + col * len(values) + 10
    height = top_pad + plot_h + bottom
    top = max(values) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="confidence-chart" '
        f'width="{width}" height="{height}" role="img" '
        'aria-labelledby="confidence-chart-title"><title id="confidence-chart-title">'
        "Documents per confidence bin</title>",
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{width - 6}" '
        f'y2="{top_pad + plot_h}" stroke="#333"/>',
    ]
    for i, n in enumerate(values):
        x = left + i * col
        h = plot_h * n / top
        y = top_pad + plot_h - h
        is_missing = i == bins
        fill = "#bbbbbb" if is_missing else "#6b8fd6"
        tick = "n/a" if is_missing else f"{i / bins:.1f}"
        parts.append(
            f'<rect x="{x + 3}" y="{y:.1f}" width="{col - 6}" height="{h:.1f}" '
            f'fill="{fill}"><title>{tick}: {_plural(n, "document")}</title></rect>'
            f'<text x="{x + col / 2}" y="{y - 3:.1f}" text-anchor="middle" '
            f'class="small">{n}</text>'
            f'<text x="{x + col / 2}" y="{top_pad + plot_h + 14}" '
            f'text-anchor="middle" class="small">{tick}</text>'
        )
    parts.append(
        f'<text x="{left + col * bins / 2}" y="{height - 4}" text-anchor="middle" '
        'class="small">document confidence (bin start)</text></svg>'
    )
    return "".join(parts)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
 margin:0;color:#1d1d1d;background:#fafafa}
.banner{background:#b00020;color:#fff;padding:12px 24px;font-size:15px}
.banner strong{letter-spacing:.04em}
header,section{padding:8px 24px}
h1{font-size:22px;margin:14px 0 2px}
h2{font-size:17px;margin:18px 0 8px}
.count{font-size:20px;font-weight:600;margin:4px 0}
.meta,.empty,.more{color:#555}
.charts{display:flex;flex-wrap:wrap;gap:32px;align-items:flex-start}
.chart text{font:12px system-ui,sans-serif;fill:#222}
.chart text.small{font-size:11px}
table.runs,table.queue{border-collapse:collapse;background:#fff}
table.runs td,table.runs th,table.queue td,table.queue th{border:1px solid #ddd;
 padding:3px 8px;text-align:left}
table.queue td.num,table.runs td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;padding:1px 8px;margin:2px 4px 2px 0;
 border-radius:3px;border:1px solid #999}
article.doc{background:#fff;border:1px solid #ddd;border-radius:4px;
 margin:14px 0;padding:8px 14px}
article.doc h3{font-size:15px;margin:4px 0}
article.doc .facts{color:#444;font-size:13px}
article.doc .warn{color:#b00020}
pre.text{white-space:pre-wrap;word-break:break-word;overflow-wrap:anywhere;
 font:13px/1.5 ui-monospace,Menlo,Consolas,monospace;background:#fcfcfc;
 border-top:1px solid #eee;padding:8px 0;margin:6px 0 0;max-height:40em;overflow:auto}
mark.phi{border-radius:2px;padding:0 1px;border-bottom:2px solid #555;color:inherit}
"""


def _style() -> str:
    rules = "".join(
        f"mark.c-{_slug(c)}{{background:{colour}}}"
        for c, colour in _CATEGORY_COLOURS.items()
    )
    return _CSS + f"mark.phi{{background-color:{_OTHER_COLOUR}}}" + rules


def _legend() -> str:
    items = "".join(
        f'<span style="background:{colour}">{_visible(c)}</span>'
        for c, colour in _CATEGORY_COLOURS.items()
    )
    return f'<p class="legend">Highlight colour by label category: {items}</p>'


def _run_table(summary: dict) -> str:
    rows = []
    for key, label in (
        ("records_read", "records read"),
        ("records_written", "documents written"),
        ("records_quarantined", "records quarantined"),
    ):
        if key in summary:
            rows.append(
                f"<tr><th>{label}</th><td class=\"num\">"
                f"{_visible(str(summary[key]))}</td></tr>"
            )
    by_stage = summary.get("quarantined_by_stage") or {}
    if isinstance(by_stage, dict):
        for stage, n in sorted(by_stage.items()):
            rows.append(
                f"<tr><th>quarantined at {_visible(str(stage))}</th>"
                f'<td class="num">{_visible(str(n))}</td></tr>'
            )
    if not rows:
        return ""
    return f'<table class="runs">{"".join(rows)}</table>'


def _doc_anchor(rank: int) -> str:
    return f"doc-{rank}"


def _queue_table(docs: Sequence[ReviewDocument]) -> str:
    rows = "".join(
        f'<tr><td class="num">{rank}</td><td><a href="#{_doc_anchor(rank)}">'
        f"{_visible(d.doc_id)}</a></td><td class=\"num\">"
        f"{_fmt_confidence(d.confidence)}</td><td class=\"num\">{d.n_phi}</td>"
        f"<td>{_visible(d.source)}</td></tr>"
        for rank, d in enumerate(docs, start=1)
    )
    return (
        '<table class="queue"><thead><tr><th>#</th><th>document</th>'
        "<th>confidence</th><th>PHI spans</th><th>source</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _document(rank: int, doc: ReviewDocument) -> str:
    labels = Counter(s.label for s in doc.spans)
    label_text = ", ".join(f"{k} {v}" for k, v in sorted(labels.items()))
    warn = ""
    if not doc.placed:
        warn = (
            '<p class="warn">The identifier rows of this document do not line up '
            "with its text (duplicate document ids?): replacements are not "
            "highlighted.</p>"
        )
    return (
        f'<article class="doc" id="{_doc_anchor(rank)}" data-doc-id="'
        f'{_attr(doc.doc_id)}" data-confidence="{_fmt_confidence(doc.confidence)}">'
        f"<h3>{rank}. {_visible(doc.doc_id)}</h3>"
        f'<p class="facts">confidence <b>{_fmt_confidence(doc.confidence)}</b> · '
        f"{_plural(doc.n_phi, 'PHI span')} · source {_visible(doc.source)} · "
        f"person {_visible(doc.person_id)}"
        + (f" · {_visible(label_text)}" if label_text else "")
        + "</p>"
        + warn
        + f'<pre class="text">{_highlighted(doc)}</pre></article>'
    )


def _held_section(count: int, held: Sequence[HeldDocument]) -> str:
    """The documents held for review: each with its reason and original text."""
    if not count:
        return ""
    items = "".join(
        f'<article class="doc" id="held-{_slug(h.doc_id)}">'
        f"<h3>{_visible(h.doc_id)}</h3>"
        f'<p class="facts">{_visible(h.source)} · {_visible(h.reason)}</p>'
        f'<pre class="text">{_visible(h.text[:MAX_CHARS])}</pre></article>'
        for h in held)
    more = (f"<p>showing {len(held)} of {count}</p>" if len(held) < count else "")
    return (f'<section class="held"><h2>Held for review ({count})</h2>'
            "<p>Not published: the tagger was too unsure of these (confidence "
            "below the run's review floor). Original text, nothing replaced.</p>"
            f"{more}{items}</section>")


def render_html(
    total: int,
    docs: Sequence[ReviewDocument],
    labels: dict[str, int],
    histogram: Histogram,
    summary: dict | None = None,
    title: str = "",
    held: tuple[int, Sequence[HeldDocument]] = (0, ()),
) -> str:
    """The whole page as one string (pure: no file access).

    ``histogram`` is :func:`confidence_histogram` of every document of the
    run, ``labels`` the PHI spans per label of the whole run; ``held`` the
    count and documents of :func:`load_held`.
    """
    summary = summary or {}
    counts, missing = histogram
    count_line = _plural(total, "document")
    shown = (
        f"showing the {len(docs)} least confident, in ascending confidence "
        "(documents without a confidence last)"
        if len(docs) < total
        else "all shown, in ascending confidence (documents without a confidence "
        "last)"
    )
    version = summary.get("pipeline_version")
    meta = _visible(title)
    if version:
        meta += f" \u00b7 pipeline {_visible(str(version))}"
    docs_html = "".join(_document(i, d) for i, d in enumerate(docs, start=1))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex, nofollow">'
        f"<title>PROTECTED \u2013 de-identification review \u2013 {count_line}</title>"
        f"<style>{_style()}</style></head><body>"
        '<div class="banner" role="alert"><strong>PROTECTED \u2013 CONTAINS PHI.'
        "</strong> This page shows original identifiers from the run's protected "
        "identifier view (hover a highlight to see what it replaced). It is for "
        "the honest broker only: keep it inside the covered entity, do not share "
        "it, and never attach it to a research extract.</div>"
        "<header><h1>De-identification review queue</h1>"
        f'<p class="count" id="document-count">{count_line}</p>'
        f'<p class="meta">{meta}{" · " if meta else ""}{shown}</p></header>'
        '<section class="summary"><h2>Run</h2>'
        f"{_run_table(summary)}"
        '<div class="charts"><div><h2>PHI spans per label</h2>'
        f"{_bar_chart(labels)}</div><div><h2>Confidence</h2>"
        f"{_histogram(counts, missing)}</div></div>{_legend()}</section>"
        f"{_held_section(*held)}"
        f'<section class="queue"><h2>Queue</h2>{_queue_table(docs)}</section>'
        f'<section class="docs"><h2>Documents</h2>{docs_html}</section>'
        "</body></html>\n"
    )


def write_html(run_dir: str, out_path: str, limit: int = DEFAULT_LIMIT) -> int:
    """Write the review page of ``run_dir`` to ``out_path``; returns the doc count.

    The page shows original PHI, so it is written owner-only and replaced
    atomically (:func:`~deid_pipeline.outputs.protected.write_protected`).
    """
    total, histogram, docs = load_documents(run_dir, limit)
    page = render_html(
        total,
        docs,
        label_counts(run_dir),
        histogram,
        _run_summary(run_dir),
        title=f"run {os.path.abspath(run_dir)}",
        held=load_held(run_dir, limit),
    )
    write_protected(out_path, page)
    return total
