"""Every PhysioNet patient's dates move by one shift: day differences survive."""

import datetime
import itertools
from collections import defaultdict

import pyarrow.parquet as pq

from deid_pipeline.pipelines.job import run
from deid_pipeline.surrogates.dates import REFERENCE_YEAR, parse_date


def _day(parsed, with_year):
    year = parsed.year if with_year else REFERENCE_YEAR
    return datetime.date(year, parsed.month, parsed.day)


def test_when_physionet_dates_shifted_then_intervals_kept_within_and_across_notes(
        corpus_dir, tmp_path):
    key = tmp_path / "k"
    key.write_bytes(b"interval-test-key-0123456789abcdef")
    run(["--input", f"{corpus_dir}/id.text", "--input-format", "physionet",
         "--output", str(tmp_path / "o"), "--key-file", str(key),
         "--detectors", "rules,dictionary"])
    rows = pq.read_table(tmp_path / "o" / "identifiers").to_pylist()
    by_person = defaultdict(list)
    for row in rows:
        if row["label"] != "DATE":
            continue
        old, new = parse_date(row["original"]), parse_date(row["replacement"])
        if old is None or old.month is None or old.day is None:
            continue
        assert new is not None and (new.year is None) == (old.year is None)
        by_person[row["person_id"]].append((row["doc_id"], old, new))
    pairs = full = 0
    for dates in by_person.values():
        shifts = {(_day(n, True) - _day(o, True)).days
                  for _, o, n in dates if o.year is not None}
        assert len(shifts) <= 1  # one shift per person
        for (doc_a, old_a, new_a), (doc_b, old_b, new_b) in itertools.combinations(
                dates, 2):
            with_year = old_a.year is not None and old_b.year is not None
            before = (_day(old_b, with_year) - _day(old_a, with_year)).days
            after = (_day(new_b, with_year) - _day(new_a, with_year)).days
            if with_year:
                assert after == before
                full += 1
            else:
                # Month/day only: exact up to the year the shift may cross and
                # whether that year had a 29 February, which the text does not say.
                assert min(abs(after - before - k)
                           for k in (0, 365, -365, 366, -366)) <= 1
            pairs += 1
    assert pairs > 1000 and full > 10
