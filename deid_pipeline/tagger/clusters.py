"""Brown word clusters: a word form's bit path, for features that generalise.

The CRF learns strings: a town or surname it never saw in training has only
its shape and lexicon flags to go on. A Brown cluster groups the forms that
occur in the same contexts of a large corpus, and the prefixes of its bit
path are coarser groups (Liu et al. 2017), so ``Framingham`` and
``Brockton`` (never in the training notes) share the path of ``Worcester``.
The table (spacy-lookups-data, MIT; built by ``pipelines/build_clusters.py``,
source and sha256 in ``data/clusters.json``) is read once per process, on
first use and never at import.

Lookup: the token as written, else lower case, else title case. An all-capitals
word of two letters or more is looked up in title case first: in the
clusters' (web) corpus, capitals are shouting, and ``BOSTON`` sits in the
cluster of ``THE`` and ``NOT``, where nursing notes written in capitals mean
the town.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

from deid_pipeline.runtime import data_cache
from deid_pipeline.tagger.lexicons import DATA_DIR, _read_tsv_gz

MANIFEST_FILE = "clusters.json"


def table_file(lang: str) -> str:
    """The table's file name for a language code."""
    return f"clusters_{lang}.tsv.gz"


@dataclass(frozen=True)
class Clusters:
    """Word form -> Brown bit path, for one language."""

    paths: dict[str, str]

    def path(self, text: str) -> str | None:
        """The bit path of a token text (cases tried as the module says), or None."""
        paths = self.paths
        if len(text) > 1 and text.isupper():
            found = paths.get(text.title()) or paths.get(text)
            return found or paths.get(text.lower())
        found = paths.get(text) or paths.get(text.lower())
        return found or paths.get(text.title())


_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], Clusters] = {}


def _parse(path: str) -> dict[str, str]:
    """Word form -> bit path (interned: a few thousand paths for 100,000s of forms)."""
    return {form: sys.intern(path) for form, (path,) in _read_tsv_gz(path)}


def load(lang: str = "en", data_dir: str = DATA_DIR) -> Clusters:
    """The clusters of ``lang`` in ``data_dir``, read on first call and kept."""
    key = (lang, data_dir)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    with _LOCK:
        if key not in _CACHE:
            source = os.path.join(data_dir, table_file(lang))
            _CACHE[key] = Clusters(data_cache.cached(
                f"clusters-{lang}", [source], lambda: _parse(source)))
    return _CACHE[key]
