"""Annotated text assembly: text built from pieces, PHI pieces become gold spans.

A synthetic document is a list of pieces ``(text, label)``; ``label`` is None
for clinical filler. Offsets are computed only when the pieces are joined, after
the document's case style is applied piece by piece, so a gold span can never
drift from the characters it covers, whatever casing or wrapping is chosen.

Sentences come from small templates with ``[a|b|c]`` alternatives (nested
freely) and ``{slot}`` / ``{slot:arg}`` calls into a context object that knows
the document's identities. Random assembly of many small alternatives gives far
more variety than a few fixed document templates, which matters because a CRF
is trained on this output and must learn the context, not the template.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from deid_pipeline.labels import check_label
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tokenizer import token_spans

Piece = tuple[str, str | None]

CASE_STYLES = ("as_is", "upper", "lower")

GOLD_SOURCE = "synthetic"


@dataclass(frozen=True, slots=True)
class AnnotatedText:
    """Text plus gold spans and, aligned with them, the values inserted there.

    ``values[i]`` is exactly the string the generator inserted for
    ``spans[i]``; tests use it to prove ``text[start:end] == value``.
    """

    text: str
    spans: tuple[PhiSpan, ...]
    values: tuple[str, ...]

    def document(
        self, doc_id: str, source: str, origin: str, person_key: str, kind: str
    ) -> ClinicalDocument:
        """The text as a document of ``kind``, with its spans as the gold."""
        return ClinicalDocument(
            doc_id=doc_id,
            text=self.text,
            source=source,
            origin=origin,
            person_key=person_key,
            metadata=(("kind", kind),),
            gold=self.spans,
        )


def _apply_case(text: str, case: str) -> str:
    if case == "upper":
        out = text.upper()
    elif case == "lower":
        out = text.lower()
    else:
        return text
    # Non-ASCII letters can change length under case mapping (e.g. German
    # sharp s); keep the original then, so offsets stay exact.
    return out if len(out) == len(text) else text


def assemble(pieces: Iterable[Piece], case: str = "as_is") -> AnnotatedText:
    """Join pieces into one text, recording a gold span for every labelled piece.

    Raises ValueError when a labelled piece is empty or carries surrounding
    whitespace: gold spans must start and end on the value itself.
    """
    if case not in CASE_STYLES:
        raise ValueError(f"unknown case style {case!r}")
    parts: list[str] = []
    spans: list[PhiSpan] = []
    values: list[str] = []
    pos = 0
    for text, label in pieces:
        if not text:
            if label is not None:
                raise ValueError(f"empty {label} value")
            continue
        text = _apply_case(text, case)
        if label is not None:
            check_label(label)
            if text != text.strip():
                raise ValueError(f"{label} value has surrounding whitespace")
            spans.append(PhiSpan(pos, pos + len(text), label, GOLD_SOURCE))
            values.append(text)
        parts.append(text)
        pos += len(text)
    joined = "".join(parts)
    for span, value in zip(spans, values, strict=True):
        if joined[span.start : span.end] != value:  # pragma: no cover - invariant
            raise AssertionError("gold span does not cover its value")
    return AnnotatedText(joined, tuple(spans), tuple(values))


def count_tokens(pieces: Iterable[Piece]) -> int:
    """Tokens of the joined pieces, with the project tokenizer (length budgets)."""
    return len(token_spans("".join(text for text, _ in pieces)))


def wrap_lines(annotated: AnnotatedText, width: int) -> AnnotatedText:
    """Break long lines at spaces outside gold spans; offsets stay unchanged.

    A space becomes a newline, so every span keeps its offsets and no span is
    split across lines (an HL7 report puts each line in its own OBX segment).
    """
    text = list(annotated.text)
    inside = bytearray(len(text))
    for span in annotated.spans:
        inside[span.start : span.end] = b"\x01" * (span.end - span.start)
    line_start = 0
    last_break = -1
    for i, ch in enumerate(text):
        if ch == "\n":
            line_start, last_break = i + 1, -1
            continue
        if ch == " " and not inside[i]:
            last_break = i
        if i - line_start >= width and last_break > line_start:
            text[last_break] = "\n"
            line_start, last_break = last_break + 1, -1
    return AnnotatedText("".join(text), annotated.spans, annotated.values)


def concat(parts: Iterable[AnnotatedText], sep: str = "\n") -> AnnotatedText:
    """Join annotated texts with ``sep``, shifting each part's spans."""
    texts: list[str] = []
    spans: list[PhiSpan] = []
    values: list[str] = []
    pos = 0
    for i, part in enumerate(parts):
        if i:
            texts.append(sep)
            pos += len(sep)
        texts.append(part.text)
        spans.extend(
            PhiSpan(s.start + pos, s.end + pos, s.label, s.source) for s in part.spans
        )
        values.extend(part.values)
        pos += len(part.text)
    return AnnotatedText("".join(texts), tuple(spans), tuple(values))


# --- templates -------------------------------------------------------------

_Node = str | tuple


@lru_cache(maxsize=4096)
def _parse(template: str) -> tuple[_Node, ...]:
    """Parse a template into literals, ``("slot", name, arg)`` and ``("alt", seqs)``."""
    nodes, pos = _parse_seq(template, 0, top=True)
    if pos != len(template):
        raise ValueError(f"unbalanced ']' in template {template!r}")
    return nodes


def _parse_seq(s: str, pos: int, top: bool) -> tuple[tuple[_Node, ...], int]:
    nodes: list[_Node] = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            nodes.append("".join(buf))
            buf.clear()

    while pos < len(s):
        ch = s[pos]
        if ch == "{":
            end = s.index("}", pos)
            name, _, arg = s[pos + 1 : end].partition(":")
            flush()
            nodes.append(("slot", name, arg))
            pos = end + 1
        elif ch == "[":
            flush()
            alts: list[tuple[_Node, ...]] = []
            pos += 1
            while True:
                seq, pos = _parse_seq(s, pos, top=False)
                alts.append(seq)
                if pos >= len(s):
                    raise ValueError(f"unclosed '[' in template {s!r}")
                if s[pos] == "|":
                    pos += 1
                    continue
                pos += 1  # ']'
                break
            nodes.append(("alt", tuple(alts)))
        elif not top and ch in "|]":
            break
        else:
            buf.append(ch)
            pos += 1
    flush()
    return tuple(nodes), pos


SlotFn = Callable[[str, list[Piece]], None]


def render(
    template: str, rng: random.Random, slot: SlotFn, out: list[Piece] | None = None
) -> list[Piece]:
    """Expand ``template`` into pieces; ``slot(name_and_arg, out)`` fills slots."""
    out = [] if out is None else out
    _render_nodes(_parse(template), rng, slot, out)
    return out


def _render_nodes(
    nodes: tuple[_Node, ...], rng: random.Random, slot: SlotFn, out: list[Piece]
) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.append((node, None))
        elif node[0] == "slot":
            slot(f"{node[1]}:{node[2]}" if node[2] else node[1], out)
        else:
            _render_nodes(rng.choice(node[1]), rng, slot, out)
