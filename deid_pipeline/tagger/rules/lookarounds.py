r"""A gate's expression with the lookarounds at a match's edges read as text.

Why: Hyperscan's prefilter mode drops every lookaround, so the gate of the
names expression read ``(?P<first>[a-z]{3,})(?=[ \t]+[a-z]\.)`` as
``[a-z]{3,}`` and passed every note, though half of them hold no name of any
shape; the date gate read ``(?<![\w/.-])\d{1,2}/\d{1,2}(?![\d/])`` in
``120/70`` (issue 45). At a match's edges a lookaround says something about
the text next to the match, and that text can be matched instead: a text in
which ``A(?=B)`` matches holds ``AB``; one in which ``(?<![\w])A`` matches
holds ``A`` at its start or after a character not in ``[\w]``.

So, on the way to the gate (:func:`widened`), in each alternative of the
expression one lookbehind of its leading edge and one lookahead of its
trailing edge become text the gate matches (a negative one only when it
tests one character: ``(?:^|[^\w])``, ``(?:$|[^\w])``), and every other
lookaround is dropped, as Hyperscan would. Each step only widens the set of
texts the expression matches in, so a gate still passes every text in which
the expression has a match. The edge ends at any other zero-width piece
(``\b``, ``^``): its place would move.
"""

from __future__ import annotations

import re

from deid_pipeline.tagger.rules.ascii_classes import (
    UnsupportedError,
    _class_end,
    _escape_end,
)

_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_SCOPED = re.compile(r"\(\?[a-zA-Z]*(?:-[a-zA-Z]*)?:")
_ANCHORS = frozenset({"^", "$", r"\b", r"\B", r"\A", r"\Z"})
_BEHIND, _AHEAD = ("(?<=", "(?<!"), ("(?=", "(?!")


class _Node:
    """One piece of an expression: an atom, or a group of alternatives."""

    __slots__ = ("text", "alternatives", "quantifier")

    def __init__(self, text: str, alternatives: list[list[_Node]] | None = None
                 ) -> None:
        self.text = text  # the atom, or the group's opener
        self.alternatives = alternatives
        self.quantifier = ""

    @property
    def lookaround(self) -> bool:
        return self.alternatives is not None and self.text in (*_BEHIND, *_AHEAD)

    @property
    def consumes(self) -> bool:
        return not self.lookaround and self.text not in _ANCHORS


def _parse(source: str, i: int = 0) -> tuple[list[list[_Node]], int]:
    """The alternatives from ``i`` to the ``)`` that closes them (or the end)."""
    alternatives: list[list[_Node]] = [[]]
    while i < len(source):
        c = source[i]
        if c == ")":
            return alternatives, i
        if c == "|":
            alternatives.append([])
            i += 1
            continue
        if source.startswith("(?P=", i):  # a back-reference: one atom
            end = source.index(")", i) + 1
            node = _Node(source[i:end])
        elif c == "(":
            scoped = _SCOPED.match(source, i)
            if scoped is not None:
                opener = scoped.group()
            elif source.startswith("(?P<", i):
                opener = source[i:source.index(">", i) + 1]
            elif source.startswith(_BEHIND, i):
                opener = source[i:i + 4]
            elif source.startswith(("(?:", "(?>", *_AHEAD), i):
                opener = source[i:i + 3]
            elif source.startswith("(?", i):
                raise UnsupportedError("a group the gate does not read")
            else:
                opener = "("
            inner, end = _parse(source, i + len(opener))
            if end >= len(source):
                raise UnsupportedError("unbalanced '('")
            node, end = _Node(opener, inner), end + 1
        elif c == "[":
            end = _class_end(source, i)
            node = _Node(source[i:end])
        elif c == "\\":
            end = _escape_end(source, i)
            node = _Node(source[i:end])
        else:
            end = i + 1
            node = _Node(c)
        quantifier = _QUANTIFIER.match(source, end)
        if quantifier is not None:
            node.quantifier, end = quantifier.group(), quantifier.end()
        alternatives[-1].append(node)
        i = end
    return alternatives, i


def widened(source: str) -> str:
    """``source`` with its edge lookarounds as text and the others dropped.

    Raises :class:`~.ascii_classes.UnsupportedError` on what it cannot read.
    """
    alternatives, end = _parse(source)
    if end != len(source):
        raise UnsupportedError("unbalanced ')'")
    return "|".join(_sequence(items, True, True) for items in alternatives)


def _negated(node: _Node) -> str | None:
    """The class of every character one atom does not match; None if not one."""
    if len(node.alternatives or ()) != 1 or len(node.alternatives[0]) != 1:
        return None
    atom = node.alternatives[0][0]
    text = atom.text
    if atom.alternatives is not None or atom.quantifier or text in _ANCHORS:
        return None
    if text.startswith("[^"):
        return "[" + text[2:]
    if text.startswith("["):
        return "[^" + text[1:]
    if text == "\\" or text in ".^$":
        return None
    if text.startswith("\\") and text[1:2].isalpha() and text[1] not in "xu":
        return None  # a category or other escape of its own meaning
    return f"[^{text}]" if text.startswith("\\") else f"[^{re.escape(text)}]"


def _edge(items: list[_Node], order: range, kinds: tuple[str, str]) -> int | None:
    """Which lookaround of an edge to read as text; None if none can be.

    A positive one, else the first negative test of one character.
    """
    negative = None
    for k in order:
        node = items[k]
        if not node.lookaround or node.quantifier:
            if node.consumes or node.text in _ANCHORS:
                break
            continue
        if node.text == kinds[0]:
            return k
        if node.text == kinds[1] and negative is None and _negated(node) is not None:
            negative = k
    return negative


def _sequence(items: list[_Node], leading: bool, trailing: bool) -> str:
    """One alternative written for the gate (``leading``/``trailing``: at an edge)."""
    first = _edge(items, range(len(items)), _BEHIND) if leading else None
    last = _edge(items, range(len(items) - 1, -1, -1), _AHEAD) if trailing else None
    # Where each edge goes on into a group's alternatives: its first and last
    # consuming pieces, when nothing before (after) them is read as text.
    lead_into = _edge_group(items, range(len(items))) if leading and first is None \
        else None
    trail_into = _edge_group(items, range(len(items) - 1, -1, -1)) \
        if trailing and last is None else None
    out = []
    for k, node in enumerate(items):
        if node.lookaround:
            if k == first:
                out.append(_as_text(node, "^", leading=True))
            elif k == last:
                out.append(_as_text(node, "$", leading=False))
            continue  # dropped, as Hyperscan drops it
        if node.alternatives is None:
            out.append(node.text + node.quantifier)
            continue
        inner = "|".join(_sequence(seq, k == lead_into, k == trail_into)
                         for seq in node.alternatives)
        out.append(f"{node.text}{inner}){node.quantifier}")
    return "".join(out)


def _edge_group(items: list[_Node], order: range) -> int | None:
    """The group an edge runs into, if any.

    Its first (last) consuming piece, when that is a group that is not
    repeated and only lookarounds stand before (after) it.
    """
    for k in order:
        node = items[k]
        if node.lookaround and not node.quantifier:
            continue
        if node.alternatives is not None and not node.quantifier \
                and not node.text.startswith("(?P="):
            return k
        return None
    return None


def _as_text(node: _Node, anchor: str, leading: bool) -> str:
    """A lookaround at an edge as the text it tests."""
    if node.text in ("(?<=", "(?="):
        inner = "|".join(_sequence(seq, leading, not leading)
                         for seq in node.alternatives)
        return f"(?:{inner})"
    return f"(?:{anchor}|{_negated(node)})"
