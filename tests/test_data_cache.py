"""The on-disk cache of parsed package data (deid_pipeline.runtime.data_cache)."""

from __future__ import annotations

import os

import pytest

from deid_pipeline.runtime import data_cache
from deid_pipeline.tagger import clusters, gazetteers, lexicons


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv(data_cache.CACHE_ENV, str(directory))
    return directory


def _counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_when_sources_unchanged_then_second_call_reads_the_cache(cache, tmp_path):
    source = tmp_path / "words.tsv"
    source.write_text("alpha\tfn1\n")
    build, calls = _counting({"alpha": ("fn1",), "pair": [("a", "b")]})
    first = data_cache.cached("words", [str(source)], build)
    second = data_cache.cached("words", [str(source)], build)
    assert first == second == {"alpha": ("fn1",), "pair": [("a", "b")]}
    assert len(calls) == 1
    [written] = os.listdir(cache)
    assert written.startswith("words-")
    assert os.stat(cache).st_mode & 0o777 == 0o700


def test_when_a_source_changes_then_the_value_is_built_again(cache, tmp_path):
    source = tmp_path / "words.tsv"
    source.write_text("alpha\tfn1\n")
    data_cache.cached("words", [str(source)], lambda: {"v": 1})
    source.write_text("alpha\tln1\n")
    assert data_cache.cached("words", [str(source)], lambda: {"v": 2}) == {"v": 2}


def test_when_the_cached_file_is_truncated_then_it_is_rebuilt(cache, tmp_path):
    source = tmp_path / "words.tsv"
    source.write_text("x")
    data_cache.cached("words", [str(source)], lambda: {"v": list(range(1000))})
    [name] = os.listdir(cache)
    path = cache / name
    path.write_bytes(path.read_bytes()[:100])
    build, calls = _counting({"v": 3})
    assert data_cache.cached("words", [str(source)], build) == {"v": 3}
    assert calls == [1]
    assert data_cache.cached("words", [str(source)], build) == {"v": 3}
    assert calls == [1]  # the rebuilt value replaced the broken file


def test_when_disabled_or_unwritable_then_the_build_is_returned(tmp_path, monkeypatch):
    source = tmp_path / "words.tsv"
    source.write_text("x")
    monkeypatch.setenv(data_cache.CACHE_ENV, "off")
    build, calls = _counting({"v": 1})
    assert data_cache.cached("words", [str(source)], build) == {"v": 1}
    assert data_cache.cached("words", [str(source)], build) == {"v": 1}
    assert len(calls) == 2
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv(data_cache.CACHE_ENV, str(blocked / "cache"))
    assert data_cache.cached("words", [str(source)], build) == {"v": 1}


def test_cached_lexicons_and_clusters_equal_the_parsed_files(cache):
    lexicons._CACHE.clear()
    clusters._CACHE.clear()
    try:
        for _ in range(2):  # built, then read back
            lexicons._CACHE.clear()
            clusters._CACHE.clear()
            lex = lexicons.load()
            paths = clusters.load().paths
        sources = [os.path.join(lexicons.DATA_DIR, name)
                   for name in (lexicons.TOKENS_FILE, lexicons.PHRASES_FILE)]
        tokens, phrases = lexicons._parse(*sources)
        assert all(lex.flags(token) == flags for token, flags in tokens.items())
        assert len(lex.digests) == len(tokens)
        assert list(lex.phrases.items()) == list(phrases.items())
        assert paths == clusters._parse(os.path.join(clusters.DATA_DIR,
                                                     clusters.table_file("en")))
        assert len(os.listdir(cache)) == 2
    finally:
        lexicons._CACHE.clear()
        clusters._CACHE.clear()


def test_lexicon_index_misses_words_it_lacks_and_refuses_shared_digests(monkeypatch):
    lex = lexicons.load()
    # Words in no list: misspellings, IDs, a note's odd tokens, non-ASCII.
    for word in ("qzxvbnm", "mrn12345", "zzzzzzzzzzzz", "ünbekannt", "\udcff"):
        assert lex.flags(word) == ()
        assert lex.english_band(word) == 0
    assert "w7" in lex.flags("the") and lex.english_band("the") == 7
    # Index building refuses two tokens that share a digest.
    monkeypatch.setattr(lexicons, "token_digest", lambda token: 42)
    with pytest.raises(ValueError, match="share a digest"):
        lexicons._index({"alpha": ("w3",), "beta": ("w2",)})


def test_the_cached_gazetteer_equals_the_parsed_file(cache):
    gazetteers._CACHE.clear()
    try:
        for _ in range(2):  # built, then read back
            gazetteers._CACHE.clear()
            read = gazetteers.load()
        parsed = gazetteers._parse(os.path.join(gazetteers.DATA_DIR,
                                                gazetteers.DATA_FILE))
        assert (read.entries, read.firsts, read.saint_initials, read.pairs,
                read.affiliations) == parsed
        assert os.listdir(cache)[0].startswith("gazetteer-")
        assert len(os.listdir(cache)) == 1
    finally:
        gazetteers._CACHE.clear()
