"""Audit a Spanish surrogate run against its gold (MEDDOCAN): counts only, never PHI.

``python -m deid_pipeline.evaluation.surrogate_audit --gold DIR --extract OUT``
reads the BRAT gold (``DIR/*.txt``/``.ann``) and a ``run --mode surrogate``
extract (``OUT/documents`` and the protected ``OUT/identifiers``), and prints
what issue 44 asks of a Spanish site's output:

- gold values left in the research text although their span was tagged
  (and, apart, where the tagger missed the span), labels the site keeps and
  ages under 90 aside: the value stands in the text the run did not rewrite
  (another mention it did not tag) or in its own span's replacement; a
  shifted date or a drawn place that happens to equal a value of another
  span is counted apart;
- the share of name surrogates that are Spanish names (every word of the
  replacement, titles, particles and initials aside, in Faker ``es_ES``'s
  first names or surnames);
- DNI/NIE surrogates with a valid check letter;
- numeric dates (``d/m/y`` with ``/``, ``-`` or ``.``) of the research text
  that are valid day-first dates, and of those the run wrote (a date span's
  replacement; the others stand in text it did not rewrite);
- cases whose intervals between their dates are kept (every full date of the
  case moved by the same number of days; cases with two or more);
- town and postcode pairs (a town surrogate and the nearest postcode
  surrogate of its case, their originals at most ``PAIR_DISTANCE``
  characters apart) whose town lies in another province than the postcode
  names, by the town table (``surrogates.es.towns``): of all pairs, and of
  the pairs whose originals agree by the same table; a pair whose postcode
  surrogate names no province (a foreign postcode stays foreign) is counted
  apart.

Only counts and label names are printed: no value, no text, no document id.
"""

from __future__ import annotations

import argparse
import calendar
import glob
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from deid_pipeline.evaluation.brat import load_brat_corpus

__all__ = ["Audit", "audit", "main"]

_NUMERIC_DATE = re.compile(r"(?<![\w/.-])(?P<d>\d{1,2})(?P<s>[-/.])(?P<m>\d{1,2})"
                           r"(?P=s)(?P<y>\d{4}|\d{2})(?![\w/-])")
_DNI_OR_NIE = re.compile(r"(?<![\w.])(?:\d{2}\.?\d{3}\.?\d{3}|[XYZxyz][-\s]?\d{7})"
                         r"[-\s]?[A-Za-z](?!\w)")
_WORD = re.compile(r"[^\W\d_]+")
_POSTCODE = re.compile(r"(?<!\d)\d{5}(?!\d)")
# How far apart (start to start) a town and a postcode of one address stand:
# ``28040 Madrid`` and a ``Localidad:`` line above a ``CP:`` line.
PAIR_DISTANCE = 60


@dataclass
class Audit:
    """The counts of one audit (see the module doc)."""

    gold_spans: int = 0
    tagged_spans_checked: int = 0
    left_where_tagged: Counter = field(default_factory=Counter)
    left_where_missed: Counter = field(default_factory=Counter)
    equal_to_another_surrogate: int = 0
    name_surrogates: int = 0
    name_surrogates_spanish: int = 0
    name_words: int = 0
    name_words_spanish: int = 0
    dni_nie: int = 0
    dni_nie_valid: int = 0
    numeric_dates: int = 0
    numeric_dates_valid: int = 0
    written_dates: int = 0
    written_dates_valid: int = 0
    date_spans_masked: int = 0
    cases_with_dates: int = 0
    cases_intervals_kept: int = 0
    town_postcode_pairs: int = 0
    town_postcode_disagree: int = 0
    town_postcode_originals_agree: int = 0
    town_postcode_disagree_where_originals_agree: int = 0
    town_postcode_foreign: int = 0

    def lines(self) -> list[str]:
        """The report, one figure a line."""
        def pct(a: int, b: int) -> str:
            return f"{a} of {b} ({100 * a / b:.1f}%)" if b else f"{a} of 0"

        out = [
            f"gold spans checked (kept labels and ages under 90 aside): "
            f"{self.gold_spans}",
            f"gold values left in the research text where their span was tagged: "
            f"{sum(self.left_where_tagged.values())} of {self.tagged_spans_checked}"
            + _by_label(self.left_where_tagged),
            f"gold values left where the tagger missed the span: "
            f"{sum(self.left_where_missed.values())}"
            + _by_label(self.left_where_missed),
            f"gold values a surrogate of another span happens to spell: "
            f"{self.equal_to_another_surrogate}",
            f"name surrogates that are Spanish names (every word): "
            f"{pct(self.name_surrogates_spanish, self.name_surrogates)}; words "
            f"{pct(self.name_words_spanish, self.name_words)}",
            f"DNI/NIE surrogates with a valid check letter: "
            f"{pct(self.dni_nie_valid, self.dni_nie)}",
            f"numeric dates in the research text that are valid day-first dates: "
            f"{pct(self.numeric_dates_valid, self.numeric_dates)}",
            f"of them written by the run (in a date span's replacement): "
            f"{pct(self.written_dates_valid, self.written_dates)}",
            f"date spans masked (no valid day-first date to write): "
            f"{self.date_spans_masked}",
            f"cases whose intervals between dates are kept (2+ full dates): "
            f"{pct(self.cases_intervals_kept, self.cases_with_dates)}",
            f"town and postcode pairs whose town lies in another province: "
            f"{pct(self.town_postcode_disagree, self.town_postcode_pairs)}; "
            "where the originals agree " + pct(
                self.town_postcode_disagree_where_originals_agree,
                self.town_postcode_originals_agree)
            + f"; beside a foreign postcode (not counted): "
              f"{self.town_postcode_foreign}",
        ]
        return out


def _by_label(counts: Counter) -> str:
    if not counts:
        return ""
    return " (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"


def _rows(directory: str, columns: list[str]) -> list[dict]:
    from deid_pipeline.parquet_files import read_parquet

    rows: list[dict] = []
    for path in sorted(glob.glob(os.path.join(directory, "**", "*.parquet"),
                             recursive=True)):
        rows.extend(read_parquet(path, columns=columns).to_pylist())
    return rows


def _valid_day_first(day: str, month: str, year: str) -> bool:
    d, m = int(day), int(month)
    y = int(year) if len(year) == 4 else 2000
    return 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]


def _present(value: str, text: str) -> bool:
    """Whether ``value`` stands in ``text`` as a whole (not inside a longer word)."""
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        before = text[start - 1:start]
        after = text[end:end + 1]
        if not (before.isalnum() and value[:1].isalnum()) and not (
                after.isalnum() and value[-1:].isalnum()):
            return True
        start = text.find(value, start + 1)
    return False


def _unrewritten(text: str, rows: list[dict]) -> str:
    """The original text with every rewritten span cut out (a NUL in its place)."""
    out = []
    pos = 0
    for r in sorted(rows, key=lambda r: r["start"]):
        out += [text[pos:r["start"]], "\0"]
        pos = max(pos, r["end"])
    out.append(text[pos:])
    return "".join(out)


def _kept(value: str, label: str) -> bool:
    """A gold value the site's policy keeps: a keep label, an age under 90."""
    from deid_pipeline.labels import category

    cat = category(label)
    if cat == "KEEP":
        return True
    if cat == "AGE":
        numbers = re.findall(r"\d+", value)
        return not numbers or int(numbers[0]) <= 89
    return False


def _spanish_name_words() -> tuple[frozenset[str], frozenset[str]]:
    from faker.providers.person.es_ES import Provider

    from deid_pipeline.surrogates.es.names import PARTICLES, TITLES, plain

    names = {plain(w) for n in (*Provider.first_names_female,
                                *Provider.first_names_male, *Provider.last_names)
             for w in n.split()}
    return frozenset(names), frozenset(TITLES | PARTICLES)


def _full_dates(rows: Iterable[dict]) -> list[tuple[object, object]]:
    """(original, replacement) dates of a case's date spans both full dates."""
    import datetime

    from deid_pipeline.surrogates.dates import parse_date
    from deid_pipeline.surrogates.es.dates import SPANISH_DATES

    out = []
    for r in rows:
        a = parse_date(r["original"].strip(), 2019, SPANISH_DATES)
        b = parse_date(r["replacement"].strip(), 2019, SPANISH_DATES)
        if a is not None and b is not None and a.kind == b.kind == "ymd":
            out.append((datetime.date(a.year, a.month, a.day),
                        datetime.date(b.year, b.month, b.day)))
    return out


_Pieces = list[tuple[int, str]]


def _places(text: str, start: int) -> tuple[_Pieces, _Pieces]:
    """(offset, postcode) and (offset, town) pieces of a place value at ``start``."""
    from deid_pipeline.surrogates.es.places import (
        _PIECES,
        _known_whole,
        spanish_places,
        split_generic,
    )
    from deid_pipeline.surrogates.es.towns import spanish_towns

    places = spanish_places()
    postcodes, towns = [], []
    for m in _PIECES.finditer(text):
        if m.group("digits") and _POSTCODE.fullmatch(m.group()):
            postcodes.append((start + m.start(), m.group()))
        elif m.group("words") and not _known_whole(m.group(), places):
            # A town as the table writes it (``El Ejido``), else without the
            # generic words at its ends (``provincia de``); none (``centro``).
            name = m.group()
            if not spanish_towns().provinces_of(name):
                name = split_generic(name)[1]
            if name:
                towns.append((start + m.start(), name))
    return postcodes, towns


def _town_postcode_pairs(rows: list[dict], result: Audit) -> None:
    """Count a case's town and postcode pairs (see the module doc)."""
    from deid_pipeline.labels import builtin_label
    from deid_pipeline.surrogates.es.places import PROVINCES
    from deid_pipeline.surrogates.es.towns import spanish_towns

    table = spanish_towns()
    pieces = []
    for r in rows:
        if r["replacement"].startswith("[**") or builtin_label(
                r["label"], r["original"]) not in ("LOCATION", "CITY", "ZIP"):
            continue
        old, new = _places(r["original"], r["start"]), _places(r["replacement"], 0)
        if [len(p) for p in old] == [len(p) for p in new]:
            pieces.append((old, new))
    postcodes = [(o[0], o[1], n[1]) for old, new in pieces
                 for o, n in zip(old[0], new[0], strict=True)]
    for old, new in pieces:
        for (at, town), (_, drawn) in zip(old[1], new[1], strict=True):
            near = [p for p in postcodes if abs(p[0] - at) <= PAIR_DISTANCE]
            if not near:
                continue
            _, code, new_code = min(near, key=lambda p: abs(p[0] - at))
            if new_code[:2] not in PROVINCES:  # a foreign address's
                result.town_postcode_foreign += 1
                continue
            result.town_postcode_pairs += 1
            disagree = new_code[:2] not in table.provinces_of(drawn)
            result.town_postcode_disagree += disagree
            if code[:2] in table.provinces_of(town):
                result.town_postcode_originals_agree += 1
                result.town_postcode_disagree_where_originals_agree += disagree


def audit(gold_dir: str, extract: str) -> Audit:
    """Count what the module doc lists for the extract's documents."""
    from deid_pipeline.labels import builtin_label, category, check_label
    from deid_pipeline.surrogates.es.identifiers import valid_dni, valid_nie
    from deid_pipeline.surrogates.es.names import plain

    result = Audit()
    gold = {d.doc_id: d for d in load_brat_corpus(gold_dir, check_label)}
    texts = {r["doc_id"]: r["text"]
             for r in _rows(os.path.join(extract, "documents"), ["doc_id", "text"])}
    spans: dict[str, list[dict]] = {}
    for r in _rows(os.path.join(extract, "identifiers"),
                   ["doc_id", "start", "end", "label", "original", "replacement"]):
        spans.setdefault(r["doc_id"], []).append(r)
    spanish, skip = _spanish_name_words()
    for doc_id, text in texts.items():
        rows = spans.get(doc_id, [])
        doc = gold.get(doc_id)
        kept = _unrewritten(doc.text, rows) if doc is not None else text
        for g in doc.gold if doc is not None else ():
            value = doc.text[g.start:g.end]
            if _kept(value, g.label):
                continue
            result.gold_spans += 1
            tagged = any(r["start"] < g.end and g.start < r["end"] for r in rows)
            result.tagged_spans_checked += tagged
            if not _present(value, text):
                continue
            own = [r["replacement"] for r in rows
                   if r["start"] < g.end and g.start < r["end"]]
            if _present(value, kept) or any(_present(value, o) for o in own):
                (result.left_where_tagged if tagged
                 else result.left_where_missed)[g.label] += 1
            else:
                result.equal_to_another_surrogate += 1
        dates = []
        for r in rows:
            label = builtin_label(r["label"], r["original"])
            masked = r["replacement"].startswith("[**")
            if category(r["label"]) == "NAME" and not masked:
                words = [w for w in _WORD.findall(r["replacement"])
                         if len(w) > 1 and plain(w) not in skip]
                ok = [w for w in words if plain(w) in spanish]
                result.name_surrogates += 1
                result.name_surrogates_spanish += len(ok) == len(words)
                result.name_words += len(words)
                result.name_words_spanish += len(ok)
            if _DNI_OR_NIE.search(r["original"]):
                for m in _DNI_OR_NIE.finditer(r["replacement"]):
                    result.dni_nie += 1
                    result.dni_nie_valid += valid_dni(m.group()) or valid_nie(m.group())
            if label == "DATE":
                if masked:
                    result.date_spans_masked += 1
                else:
                    dates.append(r)
                    for m in _NUMERIC_DATE.finditer(r["replacement"]):
                        result.written_dates += 1
                        result.written_dates_valid += _valid_day_first(
                            m.group("d"), m.group("m"), m.group("y"))
        for m in _NUMERIC_DATE.finditer(text):
            result.numeric_dates += 1
            result.numeric_dates_valid += _valid_day_first(m.group("d"), m.group("m"),
                                                           m.group("y"))
        _town_postcode_pairs(rows, result)
        pairs = _full_dates(dates)
        if len(pairs) >= 2:
            result.cases_with_dates += 1
            result.cases_intervals_kept += len({(b - a).days for a, b in pairs}) == 1
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the audit's counts (no PHI)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gold", required=True, metavar="DIR",
                        help="BRAT gold directory (.txt/.ann), e.g. MEDDOCAN dev")
    parser.add_argument("--extract", required=True, metavar="DIR",
                        help="the output directory of run --mode surrogate")
    parser.add_argument("--label-map", default="meddocan",
                        help="the model's label map (default: %(default)s)")
    args = parser.parse_args(argv)
    from deid_pipeline.label_maps import load_label_map

    load_label_map(args.label_map)
    for line in audit(args.gold, args.extract).lines():
        print(line, file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
