r"""BRAT standoff corpora (``.txt`` + ``.ann`` pairs) as gold-annotated documents.

The format a site gets out of BRAT or INCEpTION. Only text-bound annotations
(``T`` lines) are PHI. What else a ``.ann`` file may hold is handled by rule,
and every refusal names the file and line:

- ``T1<TAB>LABEL 0 5<TAB>text``: a span, its text checked against the ``.txt``
  at those offsets (a mismatch is an error: offsets counted in bytes, or a
  ``.txt`` edited after annotation, would teach the model wrong spans);
- discontinuous ``T1<TAB>LABEL 0 5;7 10<TAB>text``: one span per fragment,
  each with the label (every fragment is PHI; the gap between is not);
- ``#`` notes, ``A``/``M`` attributes, ``N`` normalisations, ``R`` relations
  and ``*`` equivalences say things about spans and add no PHI text:
  skipped;
- ``E`` events: refused (their triggers are ``T`` lines that are not PHI,
  which this reader cannot tell from PHI);
- overlapping spans: a span inside another is dropped (the outer one covers
  its text: redacting it removes both); an exact duplicate with the same
  label is dropped; two spans crossing each other, or the same offsets with
  two labels, are refused: no single BIO tagging says both.

Offsets are characters of the ``.txt`` read as UTF-8 with newlines kept as
written (``\r\n`` stays two characters, as BRAT counts them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from deid_pipeline.model import ClinicalDocument, PhiSpan

__all__ = ["BratFormatError", "format_ann", "load_brat_corpus", "parse_ann",
           "read_brat_document"]

_SKIPPED = ("#", "A", "M", "N", "R", "*")
_T_LINE = re.compile(r"T\S*\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t?(.*)", re.DOTALL)


class BratFormatError(ValueError):
    """A ``.ann``/``.txt`` pair that cannot be read as gold without guessing."""


def parse_ann(ann: str, text: str, where: str,
              check_label: Callable[[str], object] | None = None
              ) -> tuple[PhiSpan, ...]:
    """The gold spans of one ``.ann`` file's content (rules in the module doc).

    ``where`` names the file in errors; ``check_label`` (raising ValueError)
    refuses labels the caller does not know, with the line that has them.
    """
    spans: list[tuple[PhiSpan, int]] = []
    for lineno, line in enumerate(ann.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith(_SKIPPED):
            continue
        if line.startswith("E"):
            raise BratFormatError(f"{where}:{lineno}: event annotations are not "
                                  "supported (only T lines are PHI)")
        m = _T_LINE.fullmatch(line)
        if m is None:
            raise BratFormatError(f"{where}:{lineno}: not a BRAT annotation line "
                                  "(expected T<id><TAB>LABEL START END<TAB>text)")
        label, ranges, quoted = m.groups()
        if check_label is not None:
            try:
                check_label(label)
            except ValueError as exc:
                raise BratFormatError(f"{where}:{lineno}: {exc}") from None
        fragments = [tuple(map(int, r.split())) for r in ranges.split(";")]
        pieces = []
        for start, end in fragments:
            if not 0 <= start < end <= len(text):
                raise BratFormatError(f"{where}:{lineno}: offsets {start} {end} "
                                      f"outside the text (length {len(text)})")
            pieces.append(text[start:end])
            spans.append((PhiSpan(start, end, label, "gold"), lineno))
        # BRAT writes a discontinuous span's text as its fragments joined by
        # one blank; multi-line spans have their newlines as blanks.
        if " ".join(pieces).replace("\n", " ") != quoted.replace("\n", " "):
            raise BratFormatError(f"{where}:{lineno}: the annotated text does not "
                                  "match the .txt at these offsets")
    return _resolve_overlaps(spans, where)


def _resolve_overlaps(spans: list[tuple[PhiSpan, int]], where: str
                      ) -> tuple[PhiSpan, ...]:
    """Drop spans inside others and duplicates; refuse crossings (module doc)."""
    ordered = sorted(spans, key=lambda s: (s[0].start, -s[0].end, s[1]))
    kept: list[tuple[PhiSpan, int]] = []
    for span, lineno in ordered:
        if kept and span.overlaps(kept[-1][0]):
            outer, outer_line = kept[-1]
            same_place = (span.start, span.end) == (outer.start, outer.end)
            if same_place and span.label != outer.label:
                raise BratFormatError(
                    f"{where}:{lineno}: same offsets as line {outer_line} with "
                    f"another label ({span.label} vs {outer.label})")
            if not outer.contains(span):
                raise BratFormatError(
                    f"{where}:{lineno}: span crosses the span of line {outer_line} "
                    "(neither contains the other)")
            continue
        kept.append((span, lineno))
    return tuple(span for span, _ in kept)


def read_brat_document(txt_path: str,
                       check_label: Callable[[str], object] | None = None
                       ) -> ClinicalDocument:
    """One ``.txt`` and its ``.ann`` as a document (doc id: the file stem)."""
    stem = os.path.splitext(txt_path)[0]
    ann_path = f"{stem}.ann"
    if not os.path.exists(ann_path):
        raise BratFormatError(f"{txt_path}: no {os.path.basename(ann_path)} beside it")
    with open(txt_path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    with open(ann_path, encoding="utf-8", newline="") as fh:
        ann = fh.read()
    return ClinicalDocument(doc_id=os.path.basename(stem), text=text, source="brat",
                            origin=txt_path,
                            gold=parse_ann(ann, text, ann_path, check_label))


def load_brat_corpus(directory: str,
                     check_label: Callable[[str], object] | None = None
                     ) -> list[ClinicalDocument]:
    """Every ``.txt``/``.ann`` pair of ``directory``, in file-name order.

    An ``.ann`` without its ``.txt`` is an error too: a half-copied corpus
    must not train a model quietly on what is left.
    """
    if not os.path.isdir(directory):
        raise BratFormatError(f"brat corpus {directory!r}: not a directory")
    names = sorted(os.listdir(directory))
    texts = {os.path.splitext(n)[0] for n in names if n.endswith(".txt")}
    for name in names:
        if name.endswith(".ann") and os.path.splitext(name)[0] not in texts:
            raise BratFormatError(f"{os.path.join(directory, name)}: no .txt beside it")
    if not texts:
        raise BratFormatError(f"brat corpus {directory!r}: no .txt files")
    return [read_brat_document(os.path.join(directory, f"{stem}.txt"), check_label)
            for stem in sorted(texts)]


def format_ann(entries: Iterable[tuple[int, int, str, str]]) -> str:
    """``.ann`` content for ``(start, end, label, text)`` entries (``T1``.. by offset).

    ``text`` is the span's text as it stands in the ``.txt``; BRAT writes
    newlines inside it as blanks. Labels are written as given: a run's
    labels are its model's, whatever map they came from.
    """
    lines = []
    for n, (start, end, label, text) in enumerate(sorted(entries), start=1):
        quoted = text.replace("\r", " ").replace("\n", " ")
        lines.append(f"T{n}\t{label} {start} {end}\t{quoted}\n")
    return "".join(lines)
