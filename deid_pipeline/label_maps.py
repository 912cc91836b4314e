"""Site label maps: a site's own PHI labels and the surrogate category of each.

A site that annotates its notes with its own label names (MEDDOCAN's
``NOMBRE_SUJETO_ASISTENCIA``, ``FECHAS``, ...) trains a model that predicts
those names; the map says, per label, which kind of surrogate replaces it
(``name``, ``location``, ``date``, ``id``, ``contact``, ``age``,
``profession``, ``other``) or that the site's policy keeps it (``keep``).
The map is stored in the model (:mod:`deid_pipeline.tagger.model_metadata`),
so ``run`` needs no option to know it.

A map is a JSON object ``{"name": ..., "description": ..., "labels": {LABEL:
category}, "surrogate_labels": {LABEL: built-in label}}`` (the last optional:
which built-in label's surrogates a label takes, within its category, e.g.
``CALLE`` -> ``STREET``), validated strictly: an unknown key, category or
built-in label is an error naming it, never a silent default.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from deid_pipeline.labels import CATEGORY_OF, register_site_labels

__all__ = ["LABEL_MAP_CATEGORIES", "LabelMap", "load_label_map", "shipped_label_maps"]

# Map category -> the label set's category (labels.CATEGORIES plus OTHER, KEEP).
LABEL_MAP_CATEGORIES: Mapping[str, str] = MappingProxyType({
    "name": "NAME", "location": "LOCATION", "date": "DATE", "id": "ID",
    "contact": "CONTACT", "age": "AGE", "profession": "PROFESSION",
    "other": "OTHER", "keep": "KEEP",
})
_DIRECTORY = os.path.join(os.path.dirname(__file__), "data", "label_maps")
_KEYS = frozenset({"name", "description", "labels", "surrogate_labels"})
# A label is one BIO-able word: no blanks (BRAT's own rule), no ``-`` prefix
# confusion with B-/I- (the CRF's labels are ``B-LABEL``; a ``-`` inside is fine).
_LABEL = re.compile(r"[^\s]+")


class LabelMapError(ValueError):
    """A label map file that cannot be used as written."""


@dataclass(frozen=True)
class LabelMap:
    """A validated label map: site label -> label-set category (``NAME``, ``KEEP``)."""

    name: str
    categories: Mapping[str, str]
    # Site label -> the built-in label whose surrogates it takes (optional,
    # same category: ``CALLE`` -> STREET); unnamed labels take their
    # category's (deid_pipeline.labels.builtin_label).
    surrogate_labels: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}))

    def register(self) -> LabelMap:
        """Make the map's labels valid PHI labels in this process; returns self."""
        register_site_labels(self.categories, self.surrogate_labels)
        return self

    def to_json(self) -> dict:
        """The map as stored in a model (categories as a map file spells them)."""
        back = {v: k for k, v in LABEL_MAP_CATEGORIES.items()}
        out = {"name": self.name,
               "labels": {label: back[cat] for label, cat in
                          sorted(self.categories.items())}}
        if self.surrogate_labels:
            out["surrogate_labels"] = dict(sorted(self.surrogate_labels.items()))
        return out


def shipped_label_maps() -> tuple[str, ...]:
    """Names accepted by ``--label-map NAME`` (files in data/label_maps/)."""
    return tuple(sorted(os.path.splitext(f)[0] for f in os.listdir(_DIRECTORY)
                        if f.endswith(".json")))


def label_map_from_json(obj: object, where: str) -> LabelMap:
    """Validate a parsed map; ``where`` names it in errors."""
    if not isinstance(obj, dict):
        raise LabelMapError(f"{where}: expected a JSON object")
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise LabelMapError(f"{where}: unknown key(s) {unknown}; allowed: "
                            f"{sorted(_KEYS)}")
    labels = obj.get("labels")
    if not isinstance(labels, dict) or not labels:
        raise LabelMapError(f"{where}: 'labels' must be a non-empty object "
                            "{LABEL: category}")
    categories = {}
    for label, cat in labels.items():
        if not _LABEL.fullmatch(label):
            raise LabelMapError(f"{where}: label {label!r} has blanks or is empty")
        if cat not in LABEL_MAP_CATEGORIES:
            raise LabelMapError(f"{where}: label {label!r}: unknown category {cat!r}; "
                                f"choose from {', '.join(LABEL_MAP_CATEGORIES)}")
        categories[label] = LABEL_MAP_CATEGORIES[cat]
    name = obj.get("name", os.path.splitext(os.path.basename(where))[0])
    if not isinstance(name, str):
        raise LabelMapError(f"{where}: 'name' must be a string")
    finer = obj.get("surrogate_labels", {})
    if not isinstance(finer, dict):
        raise LabelMapError(f"{where}: 'surrogate_labels' must be an object "
                            "{LABEL: built-in label}")
    for label, builtin in finer.items():
        if label not in categories or label in CATEGORY_OF:
            raise LabelMapError(f"{where}: surrogate_labels: {label!r} is not "
                                "one of the map's own labels")
        if CATEGORY_OF.get(builtin) != categories[label]:
            raise LabelMapError(f"{where}: surrogate_labels: {label!r} is of "
                                f"category {categories[label]}; {builtin!r} is "
                                "no built-in label of it")
    return LabelMap(name, MappingProxyType(categories), MappingProxyType(dict(finer)))


def load_label_map(spec: str) -> LabelMap:
    """A shipped map by name (``meddocan``) or a JSON file by path, registered.

    Registering makes its labels valid in :class:`~deid_pipeline.model.PhiSpan`
    and known to :func:`deid_pipeline.labels.category`.
    """
    path = spec
    if os.sep not in spec and not spec.endswith(".json"):
        if spec not in shipped_label_maps():
            raise LabelMapError(f"label map {spec!r}: no such shipped map (have "
                                f"{', '.join(shipped_label_maps())}) and not a "
                                "path to a .json file")
        path = os.path.join(_DIRECTORY, f"{spec}.json")
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except json.JSONDecodeError as exc:
        raise LabelMapError(f"{spec}: not JSON ({exc.msg}, line {exc.lineno})"
                            ) from None
    try:
        return label_map_from_json(obj, spec).register()
    except ValueError as exc:
        if isinstance(exc, LabelMapError):
            raise
        raise LabelMapError(f"{spec}: {exc}") from None
