"""A new text's row of attribute ids, mostly without spelling its feature strings.

A text the encoder has not met becomes a row (:mod:`~deid_pipeline.tagger.text_rows`):
the ids of its base record's strings, block by block. Spelling some 31 strings
and looking each up in the model's dict was most of the cost of a new text,
and a note brings nine (the first pass over 1,619 notes: a ninth of tagging).
But most of those strings are made of a few values that repeat: the shape,
the lexicon signature and flags, the length, the word as context at each of
eight offsets. Here each such value's ids are found once and kept (by value,
for this model), and a context word's eight ids come from one lookup in a
table read from the model's own attribute names: a word no such attribute
names has none. Only the word itself, its affixes and its other own
features are spelled and looked up. The ids are those of
``attribute_ids.get(s, -1)`` for each string of ``features._base``, in its
order (``tests/test_row_ids.py`` checks every text of the corpus).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

# Values kept per kind before the kept ones are dropped (a hostile input can
# bring any number of shapes).
_KEPT_LIMIT = 20_000


class TextParts(NamedTuple):
    """What a token's text gives its base record, before any feature is spelled.

    ``features._base`` spells the strings from these (``features._parts``
    finds them); :class:`RowIds` finds their ids, most of them without
    spelling the string.
    """

    lower: str
    long: str                   # shape
    collapsed: str              # collapsed shape
    length: int                 # len, at most 12
    lexsig: str                 # lexicon signature
    flags: tuple[str, ...]      # its lexicon flags (the key of lexicon_features)
    lexicon_features: tuple[str, ...]
    cluster_own: tuple[str, ...]
    cluster_ctx: dict[int, tuple[str, ...]]
    tail: tuple[str, ...]       # the rest of its own features, in order
    word_ctx: str               # what it is as a context word
    case: str | None
    code: int
    letters: tuple[int, int]


class RowIds:
    """The blocks of ids of a text's base record, for one model."""

    def __init__(self, attribute_ids: dict[str, int], offsets: Sequence[int],
                 near: Sequence[int]) -> None:
        """Read the model's context words from its attribute names.

        ``offsets``: the context blocks' offsets in order; ``near``: those
        whose blocks hold the shape and the lexicon signature too.
        """
        self._get = attribute_ids.get
        self._offsets = tuple(offsets)
        self._near = tuple(near)
        self._lengths = tuple(self._get(f"len={k}", -1) for k in range(13))
        # word -> its id as a context word at each offset (-1: none).
        slot = {str(off): k for k, off in enumerate(self._offsets)}
        context: dict[str, list[int]] = {}
        for name, attribute in attribute_ids.items():
            head, sep, word = name.partition("w=")
            k = slot.get(head) if sep else None
            if k is not None:
                context.setdefault(word, [-1] * len(self._offsets))[k] = attribute
        self._context = {word: tuple(ids) for word, ids in context.items()}
        self._no_context = (-1,) * len(self._offsets)
        # Ids kept by the values that spell them: a shape's (sh=, shc=), a
        # set of lexicon flags' (L=, lx=), a collapsed shape and signature's
        # as context (-2s=, -2L=, ..., 2L=).
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._flags: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._near_ids: dict[tuple[str, str], tuple[int, ...]] = {}
        # Per context block, where its shape and signature ids start in a
        # text's ``near`` ids, plus one (0: a block of the word alone).
        self._layout = []
        for off in self._offsets:
            self._layout.append(2 * self._near.index(off) + 1 if off in self._near
                                else 0)
        self._lengths_by_own: dict[int, tuple[int, ...]] = {}

    def _found(self, kept: dict, key: object, names: Sequence[str]
               ) -> tuple[int, ...]:
        """The ids of ``names``, kept in ``kept`` under ``key`` (what spells them)."""
        if len(kept) >= _KEPT_LIMIT:
            kept.clear()
        get = self._get
        ids = kept[key] = tuple(get(name, -1) for name in names)
        return ids

    def row(self, p: TextParts) -> tuple[list[int], tuple[int, ...]]:
        """The ids of the text's blocks one after another, and each block's length."""
        get = self._get
        shape = self._shapes.get(p.long)
        if shape is None:
            shape = self._found(self._shapes, p.long,
                                (f"sh={p.long}", f"shc={p.collapsed}"))
        flags = self._flags.get(p.flags)
        if flags is None:
            flags = self._found(self._flags, p.flags,
                                (f"L={p.lexsig}", *p.lexicon_features))
        near = self._near_ids.get((p.collapsed, p.lexsig))
        if near is None:
            near = self._found(self._near_ids, (p.collapsed, p.lexsig), [
                f for off in self._near
                for f in (f"{off}s={p.collapsed}", f"{off}L={p.lexsig}")])
        ids = [get(f"w={p.lower}", -1), *shape, self._lengths[p.length], *flags]
        for name in p.cluster_own:
            ids.append(get(name, -1))
        for name in p.tail:
            ids.append(get(name, -1))
        lengths = [len(ids)]
        words = self._context.get(p.word_ctx, self._no_context)
        if not p.cluster_ctx:  # no cluster features: the blocks' layout is fixed
            for k, spelled in enumerate(self._layout):
                ids.append(words[k])
                if spelled:
                    ids.extend(near[spelled - 1:spelled + 1])
            return ids, self._plain_lengths(lengths[0])
        at = 0
        for k, off in enumerate(self._offsets):
            ids.append(words[k])
            if off in self._near:
                ids.extend(near[at:at + 2])
                at += 2
                clusters = p.cluster_ctx.get(off, ())
                ids.extend(get(name, -1) for name in clusters)
                lengths.append(3 + len(clusters))
            else:
                lengths.append(1)
        return ids, tuple(lengths)

    def _plain_lengths(self, own: int) -> tuple[int, ...]:
        """The blocks' lengths of a text with ``own`` own ids and no clusters."""
        lengths = self._lengths_by_own.get(own)
        if lengths is None:
            lengths = self._lengths_by_own[own] = (own, *(
                3 if off in self._near else 1 for off in self._offsets))
        return lengths
