"""Build the committed Brown-cluster table under ``deid_pipeline/data/`` from a package.

The CRF knows the strings of the notes it was trained on; a name, town or
facility spelling it never saw has only its shape and lexicon flags. Brown
clusters (Liu et al. 2017) group word forms that occur in the same contexts
in a large corpus, so an unseen town falls in the cluster of the towns the
model did see. spacy-lookups-data (MIT) ships them per language as
``<lang>_lexeme_cluster.json.gz``: word form -> int. spaCy stores the
cluster's bit path reversed (``int(path[::-1], 2)``), so the path is the int's
binary digits read from the lowest bit: ``Baltimore`` is 166 = ``0b10100110``,
path ``01100101``, and ``Boston`` (1702) shares its first 8 bits. A path's
trailing zeros are lost that way (so are whole paths of zeros: 0 means no
cluster, a form seen too rarely); the table keeps what the int says.

Only forms our tokenizer reads as one token of letters are kept (the
features look up token texts; numbers and punctuation have their own
features), with their bit path, as a gzip'd TSV (``form<TAB>path``) written
with a zero mtime so a rebuild is byte-identical for the same package
version. ``clusters.json`` beside it records, per language, the source
package, its version and licence, the sha256 of the source file and of the
table, and counts.

``pip install -e '.[lexicons]' && python -m deid_pipeline.builders.build_clusters``
(``--lang es`` builds Spanish the same way).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import importlib.util
import json
import os
import re
import sys

from deid_pipeline.builders.build_lexicons import (
    DATA_DIR,
    package_source,
    write_manifest,
    write_table,
)
from deid_pipeline.tagger.clusters import MANIFEST_FILE, table_file

SOURCE = "spacy-lookups-data"
# One token of letters for deid_pipeline.tokenizer (its first alternative).
_LETTERS = re.compile(r"[^\W\d_]+")


def source_path(lang: str) -> str:
    """The package's cluster file for ``lang``."""
    spec = importlib.util.find_spec("spacy_lookups_data")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{SOURCE} is not installed: pip install -e '.[lexicons]'")
    return os.path.join(spec.submodule_search_locations[0], "data",
                        f"{lang}_lexeme_cluster.json.gz")


def bit_path(cluster: int) -> str:
    """The Brown bit path (root first) of a cluster int as spaCy stores it."""
    return format(cluster, "b")[::-1]


def table_rows(clusters: dict[str, int]) -> list[str]:
    """``form<TAB>path`` lines of the forms kept, sorted."""
    return [f"{form}\t{bit_path(cluster)}\n"
            for form, cluster in sorted(clusters.items())
            if cluster > 0 and _LETTERS.fullmatch(form)]


def build(out_dir: str, lang: str) -> dict:
    """Write ``lang``'s table into ``out_dir`` and update the manifest; its entry."""
    path = source_path(lang)
    with open(path, "rb") as fh:
        raw = fh.read()
    clusters = json.loads(gzip.decompress(raw))
    rows = table_rows(clusters)
    source_file = f"spacy_lookups_data/data/{os.path.basename(path)}"
    entry = {
        **package_source(SOURCE, source_file, raw),
        "source_forms": len(clusters),
        "table": table_file(lang),
        "table_sha256": write_table(os.path.join(out_dir, table_file(lang)), rows),
        "forms": len(rows),
        "clusters": len({row.split("\t")[1] for row in rows}),
    }
    manifest_path = os.path.join(out_dir, MANIFEST_FILE)
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    manifest[lang] = entry
    write_manifest(manifest_path, manifest)
    return entry


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=DATA_DIR, help="output directory")
    parser.add_argument("--lang", default="en", help="language code (en, es, de)")
    args = parser.parse_args(argv)
    entry = build(args.output, args.lang)
    print(json.dumps(entry, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
