"""Feature extraction on hand-made text: what each token is told, and what it is not."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary
from deid_pipeline.tagger import clusters, lexicons
from deid_pipeline.tagger import features as features_module
from deid_pipeline.tagger.features import document_features, without_clusters
from deid_pipeline.tokenizer import tokenize


def _features_of(text: str, word: str, occurrence: int = 0, **doc_kwargs) -> set[str]:
    doc = ClinicalDocument(doc_id="t", text=text, source="test", **doc_kwargs)
    tokens = tokenize(text)
    feats = document_features(doc, tokens)
    assert len(feats) == len(tokens)
    hits = [i for i, t in enumerate(tokens) if t.text == word]
    return set(feats[hits[occurrence]])


def test_when_token_is_a_capitalised_name_then_word_shape_affix_and_lexicon_features():
    feats = _features_of("Seen by Dr. Smith today.", "Smith")
    assert {"w=smith", "sh=Xxxxx", "shc=Xx", "len=5", "INITCAPS", "p1=s", "p2=sm",
            "p3=smi", "s1=h", "s2=th", "s3=ith", "lx=ln1"} <= feats
    # context: previous tokens (word, shape, lexicon), far context word only
    assert {"-1w=.", "-2w=dr", "-2s=Xx", "-3w=by", "-4w=seen", "1w=today",
            "2w=.", "b-=.|smith", "b+=smith|today"} <= feats
    assert not any(f.startswith("-3s=") for f in feats)


def test_when_note_is_all_caps_then_lexicons_still_match():
    upper = _features_of("SEEN BY DR SMITH TODAY.", "SMITH")
    assert {"w=smith", "ALLCAPS", "lx=ln1"} <= upper
    assert "dcase=UALLCAPS" in upper


def test_when_capitalised_mid_sentence_in_mixed_case_note_then_case_is_relative():
    feats = _features_of("Spoke with Radu about the plan. Plan agreed.", "Radu")
    assert "dcase=MINITCAPS" in feats
    start = _features_of("Spoke with Radu about the plan. Plan agreed.", "Plan")
    assert "dcase=MINITCAPSS" in start  # sentence start: capital means nothing


def test_when_token_is_common_english_then_frequency_band_and_no_notenglish():
    feats = _features_of("the patient is stable", "patient")
    assert any(f.startswith("lx=w") for f in feats)
    assert "NOTENGLISH" not in feats
    assert "NOTENGLISH" in _features_of("xqzvbt is here", "xqzvbt")


def test_when_token_is_a_drug_then_clinical_flag():
    assert "lx=drug" in _features_of("started coumadin 5 mg", "coumadin")


def test_when_digits_in_a_date_chunk_then_hide_regex_features_of_the_chunk():
    feats = _features_of("admitted 7/22/2006 from home", "22")
    assert {"DIGITS=2", "NUM=day", "csh=d/dd/dddd", "HASSLASH", "cpos=M"} <= feats
    year = _features_of("admitted 7/22/2006 from home", "2006")
    assert {"DIGITS=4", "NUM=year", "cpos=E"} <= year
    phone = _features_of("call 555-1234 now", "555")
    assert {"HASDASH", "csh=ddd-dddd", "cpos=B", "DIGITS=3"} <= phone
    real = _features_of("cr 2.8 today", "2")
    assert "REALNUMBER" in real
    alnum = _features_of("bed MRN12345 here", "MRN")
    assert "ALPHANUMERIC" in alnum


def test_when_token_follows_a_key_on_its_line_then_key_feature_until_line_end():
    text = "MRN: 1234567 seen\nnext line 42"
    assert "key=mrn" in _features_of(text, "1234567")
    assert "key=mrn" in _features_of(text, "seen")
    assert not any(f.startswith("key=") for f in _features_of(text, "42"))
    assert "lp=0" in _features_of(text, "next")
    assert "SHORTLINE" in _features_of(text, "next")


def test_when_roman_numeral_then_roman():
    assert "ROMAN" in _features_of("stage IV disease", "IV")
    assert "ROMAN" not in _features_of("stage IVY disease", "IVY")


def test_when_token_repeats_in_document_then_document_frequency():
    text = "Smith called. Smith again. smith later."
    assert "df=3-4" in _features_of(text, "Smith")
    assert "df=1" in _features_of(text, "called")


def test_when_place_spans_several_tokens_then_phrase_flag_on_each():
    for word in ("SAN", "FRANCISCO"):
        assert "P=uscity" in _features_of("moved to SAN FRANCISCO last year", word)
    assert "P=state" in _features_of("lives in new york", "york")


def test_when_header_dictionary_then_in_patient_features():
    dictionary = PatientDictionary(entries=(
        DictionaryEntry("Jane Quorrel", "PATIENT", "PID.5"),
        DictionaryEntry("MR-99812", "MEDICALRECORD", "PID.3"),
        DictionaryEntry("Bob Quorrel", "RELATIVE", "NK1.2"),
    ))
    text = "QUORREL, mr-99812, husband bob visited. 99812 alone."
    feats = _features_of(text, "QUORREL", dictionary=dictionary)
    assert {"IN_PATIENT_NAME", "IN_RELATIVE_NAME"} <= feats
    assert "IN_PATIENT_ID" in _features_of(text, "99812", dictionary=dictionary)
    assert "IN_RELATIVE_NAME" in _features_of(text, "bob", dictionary=dictionary)
    # an ID matches only as its whole token sequence
    alone = _features_of(text, "99812", occurrence=1, dictionary=dictionary)
    assert "IN_PATIENT_ID" not in alone
    assert not any(f.startswith("IN_") for f in _features_of(text, "visited",
                                                               dictionary=dictionary))


def test_when_document_at_edges_then_padding_and_empty_text():
    feats = document_features("Hi")
    assert "-1w=<PAD>" in feats[0] and "1w=<PAD>" in feats[0]
    assert document_features("") == []
    assert document_features("   \n ") == []


def test_when_called_twice_then_same_features():
    text = "Pt seen by Dr Kim on 3/4, daughter Ann at bedside."
    assert document_features(text) == document_features(text)


@pytest.mark.parametrize(
    "module", ["deid_pipeline.tagger.features", "deid_pipeline.tagger.crf"]
)
def test_when_module_imported_then_no_lexicon_is_loaded(module):
    code = (f"import {module}; import deid_pipeline.tagger.lexicons as lx; "
            "assert not lx._CACHE, 'lexicons loaded at import'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_when_a_cache_generation_fills_then_entries_in_use_survive_it():
    from deid_pipeline.tagger.generations import Generations

    cache = Generations(limit=3)
    for key in "abc":
        cache.put(key, key.upper())
    cache.put("d", "D")  # turnover: a, b, c are the previous generation
    assert cache.get("a") == "A"  # used again: moved to the current one
    cache.put("e", "E")
    cache.put("f", "F")  # turnover: b and c, unused since, are dropped
    assert [cache.get(k) for k in "abcdef"] == ["A", None, None, "D", "E", "F"]
    assert len(cache) <= 2 * cache.limit


def test_when_caches_are_small_then_features_are_the_same():
    import deid_pipeline.tagger.features as features
    from deid_pipeline.tagger.generations import Generations

    doc = ClinicalDocument("d", "Pt seen by Dr. Moss 7/22/2006; Moss to call "
                           "617-555-0142. Moss, Moss, Moss.", "text")
    expected = document_features(doc)
    saved = features._BASE_CACHE, features._CHUNK_CACHE
    try:
        features._BASE_CACHE = Generations(2)
        features._CHUNK_CACHE = Generations(2)
        assert document_features(doc) == expected
        assert document_features(doc) == expected
    finally:
        features._BASE_CACHE, features._CHUNK_CACHE = saved


@pytest.mark.parametrize("chunk", [
    "7/22/2006", "MR-99812", "x", "\u00dcnal", "\u0663\u0664", "x\u00b2", "caf\u00e9:",
    "-1.5", "a@b.org", "K9:", "::", "\u00e9t\u00e9-2"])
def test_when_chunk_features_then_alphanumeric_as_its_characters_say(chunk):
    from deid_pipeline.tagger.features import _chunk_features

    alpha = any(c.isalpha() for c in chunk)
    digit = any(c.isdigit() for c in chunk)
    assert ("ALPHANUMERIC" in _chunk_features(chunk)) == (alpha and digit)


def test_when_token_is_a_postal_town_then_town_flag():
    # small towns the city gazetteer lacks; multi-word ones as a phrase
    assert "lx=town" in _features_of("he lives nearby in rockport now", "rockport")
    for word in ("bel", "air"):
        assert "P=town" in _features_of("new job in bel air", word)
    assert "lx=town" not in _features_of("he lives nearby in rockport now", "lives")


@pytest.mark.parametrize("text", [
    "", "Hi", "Dr. Moss", "Pt seen by Dr. Moss 7/22/2006; Moss to call 617-555-0142.",
    "QUORREL, mr-99812, husband bob visited.\nMRN: 99812 alone.\nMoss, Moss, Moss.",
    "a|b | c || d |",  # bigrams of words holding the joiner
    "PT LIVES IN WORCESTER, wife Mary at bedside; BP stable.",  # cluster features
    "x:\x1cY: z\u2028w:\u00a0v : u\n\n: a:b:c\r\nK9:-1.5/2 \u3000end.",  # odd spaces
    # non-ASCII chunks (letters and digits the shape keeps as written), and
    # chunks that share their features
    "Seen by Dr. M\u00fcller-L\u00fcdenscheidt 12/3, caf\u00e9 \u00dcnal "
    "\u0663\u0664 x\u00b2; BP 120/80 HR 88/72 ok OK."])
def test_when_encoded_then_ids_of_document_features_in_their_order(text):
    import numpy as np

    from deid_pipeline.tagger.features import FeatureEncoder

    dictionary = PatientDictionary(entries=(
        DictionaryEntry("Jane Quorrel", "PATIENT", "PID.5"),
        DictionaryEntry("MR-99812", "MEDICALRECORD", "PID.3")))
    doc = ClinicalDocument("d", text, "test", dictionary=dictionary)
    feats = document_features(doc)
    # Vocabularies that know every string, and every other one (the rest
    # must be -1).
    seen = sorted({f for token in feats for f in token})
    if "WORCESTER" in text:
        assert {"bc=01100101", "-1bc10=01100101", "1bc6=011001"} <= set(seen)
    # A vocabulary without any cluster feature gets without_clusters' features.
    plain = [f for f in seen if "bc" not in f.partition("=")[0]]
    for known in (seen, seen[::2], seen[1::2], plain):
        vocabulary = {f: i for i, f in enumerate(known)}
        encoder = FeatureEncoder(vocabulary)
        expected = feats if encoder.clusters else without_clusters(feats)
        assert encoder.clusters == any("bc" in f.partition("=")[0] for f in known)
        for _ in range(2):  # cold, then from the encoder's cache
            ids, offsets = encoder.encode(doc)
            assert offsets.tolist() == [
                0, *np.cumsum([len(t) for t in expected]).tolist()]
            assert ids.tolist() == [vocabulary.get(f, -1) for t in expected for f in t]


# Brown clusters -------------------------------------------------------------


def _cluster_features(feats: set[str]) -> set[str]:
    return {f for f in feats if "bc" in f.partition("=")[0]}


def _own_cluster_features(feats: set[str]) -> set[str]:
    return {f for f in feats if f.startswith("bc")}


def test_when_cluster_table_loaded_then_forms_have_their_bit_paths():
    from deid_pipeline.tagger import clusters

    table = clusters.load()
    # spaCy's int is the path reversed: Baltimore 166 = 0b10100110.
    assert table.path("Baltimore") == "01100101"
    assert table.path("Worcester") == table.path("Baltimore")
    assert table.path("Boston").startswith("01100101")
    assert table.path("xqzvbt") is None
    assert len(table.paths) > 100_000
    assert all(set(p) <= {"0", "1"} for p in list(table.paths.values())[:1000])


def test_when_clusters_rebuilt_then_byte_identical_and_manifest_matches(tmp_path):
    import hashlib
    import json
    import os
    import shutil

    pytest.importorskip("spacy_lookups_data")
    from deid_pipeline.builders import build_clusters
    from deid_pipeline.tagger.clusters import MANIFEST_FILE, table_file
    from deid_pipeline.tagger.lexicons import DATA_DIR

    shutil.copy(os.path.join(DATA_DIR, MANIFEST_FILE), tmp_path / MANIFEST_FILE)
    entry = build_clusters.build(str(tmp_path), "en")
    committed = os.path.join(DATA_DIR, table_file("en"))
    with open(committed, "rb") as fh:
        data = fh.read()
    assert (tmp_path / table_file("en")).read_bytes() == data
    assert (tmp_path / MANIFEST_FILE).read_text() == open(
        os.path.join(DATA_DIR, MANIFEST_FILE), encoding="utf-8").read()
    assert entry["table_sha256"] == hashlib.sha256(data).hexdigest()
    assert entry["licence"] == "MIT" and entry["source"] == "spacy-lookups-data"
    assert len(data) < 3_000_000
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["en"] == entry


def test_when_city_never_in_training_then_same_cluster_features_as_a_known_one(
        physionet_docs):
    corpus = " ".join(d.text.lower() for d in physionet_docs)
    assert "baltimore" in corpus and "worcester" not in corpus
    known = _features_of("Pt lives in Baltimore with wife.", "Baltimore")
    unseen = _features_of("Pt lives in Worcester with wife.", "Worcester")
    assert known != unseen  # the word itself differs
    assert _cluster_features(known) == _cluster_features(unseen)
    assert {"bc4=0110", "bc6=011001", "bc10=01100101", "bc=01100101"} <= unseen
    # ... and the words beside it are told the same about it.
    assert {"1bc6=011001", "1bc10=01100101"} <= _features_of(
        "Pt lives in Worcester with wife.", "in")
    assert {"-1bc6=011001", "-1bc10=01100101"} <= _features_of(
        "Pt lives in Worcester with wife.", "with")


def test_when_note_is_all_caps_then_cluster_of_the_title_case_word():
    # The table's BOSTON is a shouted word (cluster of THE, NOT); a note in
    # capitals means the town.
    upper = _features_of("PT LIVES IN BOSTON WITH WIFE.", "BOSTON")
    title = _features_of("Pt lives in Boston with wife.", "Boston")
    assert _own_cluster_features(upper) == _own_cluster_features(title)
    assert "bc=01100101011" in upper
    # lower case falls back to the table's lower-case form, then title case
    assert "bc=01100101" in _features_of("pt lives in worcester", "worcester")
    # an acronym without a title-case form keeps its own cluster
    assert any(f.startswith("bc=") for f in _features_of("BP 120/80", "BP"))
    assert not _own_cluster_features(_features_of("bed 12 now", "12"))


def test_when_cluster_attributes_all_weighted_then_a_model_stays_under_25_mb():
    # Every cluster attribute the features can spell, with a weight for every
    # label (CRFsuite stores a 20-byte feature per attribute and label, a
    # 4-byte reference to it, and the attribute's string), added to the
    # shipped model: the bound holds whatever the training data.
    import os

    from deid_pipeline.tagger import clusters
    from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH, load_model
    from deid_pipeline.tagger.features import _cluster_features

    attributes: set[str] = set()
    for path in set(clusters.load().paths.values()):
        own, context = _cluster_features(path)
        attributes.update(own, *context.values())
    labels = len(load_model(DEFAULT_MODEL_PATH).labels)
    added = sum(len(a) + 32 + 24 * labels for a in attributes)
    assert 1_000 < len(attributes) < 10_000
    assert os.path.getsize(DEFAULT_MODEL_PATH) + added < 25 * 1024 * 1024


def test_when_a_name_is_hidden_then_no_feature_spells_it_but_shape_and_context_stay():
    from deid_pipeline.tagger.features import without_identity

    text = "Seen by Dr. Smith today at noon."
    tokens = tokenize(text)
    feats = document_features(ClinicalDocument("t", text, "test"), tokens)
    hidden = [t.text == "Smith" for t in tokens]
    out = without_identity(feats, hidden)
    assert not any("smith" in f for row in out for f in row)
    at = hidden.index(True)
    assert {"sh=Xxxxx", "INITCAPS", "lx=ln1", "-2w=dr", "1w=today"} <= set(out[at])
    assert "bc4=" + "".join(f for f in feats[at] if f.startswith("bc="))[3:7] in out[at]
    # the neighbours keep the name's shape and lexicon classes as context
    assert {"-1s=Xx", "-1L=" + next(f[2:] for f in feats[at] if f.startswith("L="))
            } <= set(out[at + 1])
    assert not any(f.startswith(("p1=", "s1=", "bc=")) for f in out[at])
    # what does not spell the name is untouched, in order
    others = [i for i in range(len(feats)) if i != at]
    assert [[f for f in feats[i] if "smith" not in f] for i in others] == [
        out[i] for i in others]


def test_cluster_subsets_keep_the_tokens_own_prefixes_or_none():
    from deid_pipeline.tagger.features import own_clusters_only, without_clusters

    text = "lives in Boston with wife"
    feats = document_features(text)
    own, none = own_clusters_only(feats), without_clusters(feats)
    at = [t.text for t in tokenize(text)].index("Boston")
    assert {f.split("=")[0] for f in feats[at] if "bc" in f} >= {
        "bc4", "bc6", "bc10", "bc", "-1bc6", "1bc10"}
    assert {f.split("=")[0] for f in own[at] if "bc" in f} == {"bc4", "bc6", "bc10"}
    assert not any("bc" in f for row in none for f in row)
    assert [[f for f in row if "bc" not in f] for row in feats] == none


def _reference_shape(text: str) -> tuple[str, str]:
    """The shape as first written: a character at a time (any script)."""
    long = "".join("d" if ch.isdigit() else ("X" if ch.isupper() else "x")
                   if ch.isalpha() else ch for ch in text[:12])
    return long, re.sub(r"(.)\1+", r"\1", long)


@settings(max_examples=400, deadline=None)
@given(st.text(min_size=1, max_size=20))
def test_shape_of_any_text_is_the_per_character_one(text):
    """The ASCII fast path (one translate) gives what the per-character loop gives."""
    assert features_module._shape(text) == _reference_shape(text)


@pytest.mark.parametrize("text", ["Smith", "O'NEIL", "3/4/2019", "Müller", "ÉLODIE",
                                  "x²", "١٢٣", "MRN#123-45"])
def test_shape_and_letter_counts_of_real_tokens(text):
    """Non-ASCII names and digits take the loop; the base record counts letters."""
    assert features_module._shape(text) == _reference_shape(text)
    base = features_module._base(text, lexicons.load(), clusters.load())
    assert base[12] == (sum(c.isupper() for c in text), sum(c.islower() for c in text))


def _reference_chunk_shape(chunk: str) -> str:
    """The chunk shape as first written: three regular-expression passes."""
    shape = re.sub(r"[A-Z]+", "X", re.sub(r"[a-z]+", "x", chunk))
    return re.sub(r"\d+", lambda m: "d" * min(len(m.group()), 4), shape)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("aXxdD09-/.:@ é²"), min_size=1, max_size=24))
def test_chunk_shape_of_any_text_is_the_three_pass_one(chunk):
    """The ASCII fast path (one translate, runs collapsed) equals the regex passes."""
    assert features_module.chunk_shape(chunk) == _reference_chunk_shape(chunk)


def test_an_ascii_chunk_s_features_are_its_shape_s():
    """What the encoder's chunk ids rest on: chunks of one shape, one feature set."""
    import random
    import string

    from deid_pipeline.tagger.features import _chunk_features, chunk_shape

    rng = random.Random(45)
    alphabet = string.ascii_letters + string.digits + "-/@.:+,()#%'"
    by_shape: dict[str, tuple[str, ...]] = {}
    chunks = ["120/70,", "130/80,", "98.6", "-1.5", "+.5", "1.", "HR:", "Dr.", "a@b.c",
              *("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
                for _ in range(20_000))]
    for chunk in chunks:
        features = _chunk_features(chunk)
        assert by_shape.setdefault(chunk_shape(chunk), features) == features, chunk
    assert len(by_shape) < len(chunks)
