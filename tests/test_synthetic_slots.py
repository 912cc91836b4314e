"""Template slots resolve by name: a template's ``{slot}`` finds its method."""

from __future__ import annotations

import pytest

from deid_pipeline.synthetic import genres, phrases
from deid_pipeline.synthetic.context import DocContext
from deid_pipeline.synthetic.slots import SlotTable
from deid_pipeline.synthetic.text import _parse


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _strings(v)


def _slots(nodes):
    for node in nodes:
        if isinstance(node, tuple) and node[0] == "slot":
            yield node[1]
        elif isinstance(node, tuple):
            for seq in node[1]:
                yield from _slots(seq)


def _used(module) -> set[str]:
    return {name for key, attr in vars(module).items() if not key.startswith("__")
            for s in _strings(attr) for name in _slots(_parse(s))}


def test_when_templates_are_read_then_every_slot_they_name_is_registered():
    used = _used(phrases)
    assert len(used) > 40  # the templates were read, not skipped
    assert used - DocContext.SLOTS.keys() == set()


def test_when_genre_templates_are_read_then_every_slot_they_name_is_registered():
    used = _used(genres)
    assert len(used) > 8
    assert used - genres._SLOTS.methods.keys() == set()


def test_when_a_slot_is_registered_twice_then_refused():
    table = SlotTable()
    table("pt")(lambda ctx, arg, out: None)
    with pytest.raises(ValueError, match="twice"):
        table("pt")(lambda ctx, arg, out: None)
    other = SlotTable()
    other("pt")(lambda ctx, arg, out: None)
    with pytest.raises(ValueError, match="two tables"):
        SlotTable.merged(table, other)


def test_when_slots_are_named_then_no_method_is_called_by_its_short_name():
    assert not [name for name in dir(DocContext) if name.startswith("s_")]
    assert DocContext.SLOTS["pt"] is DocContext.patient_name
    assert DocContext.SLOTS["acc"] is DocContext.accession_number
