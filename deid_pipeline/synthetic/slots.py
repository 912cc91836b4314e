"""Template slots by name: ``{pt}`` in a sentence template calls one method.

Hundreds of templates are written with short slot names (``{pt}``,
``{acc:...}``); the methods that fill them are named for what they render
(``patient_name``, ``accession_number``) and registered under the short
name, so neither has to be read to understand the other.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SlotTable"]


class SlotTable:
    """Slot name -> the method that fills it (``method(context, arg, out)``)."""

    def __init__(self) -> None:
        self.methods: dict[str, Callable] = {}

    def __call__(self, name: str) -> Callable[[Callable], Callable]:
        """Register the decorated method as slot ``name`` (a name is taken once)."""

        def register(method: Callable) -> Callable:
            if name in self.methods:
                raise ValueError(f"slot {name!r} registered twice")
            self.methods[name] = method
            return method

        return register

    @staticmethod
    def merged(*tables: SlotTable) -> dict[str, Callable]:
        """Every table's slots in one mapping; a name in two tables is an error."""
        merged: dict[str, Callable] = {}
        for table in tables:
            taken = merged.keys() & table.methods.keys()
            if taken:
                raise ValueError(f"slots in two tables: {sorted(taken)}")
            merged.update(table.methods)
        return merged
