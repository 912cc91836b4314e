"""CRF: BIO <-> spans, training (tiny, reproducible), biased tagging, the hybrid."""

from __future__ import annotations

import dataclasses
import json
import os
import threading

import numpy as np
import pytest

from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
)
from deid_pipeline.tagger.bio import bio_to_spans, spans_to_bio
from deid_pipeline.tagger.crf import CrfDetector, outside_threshold
from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH, load_model, model_id
from deid_pipeline.tagger.crf_numbers import (
    _drop_bias_only_fractions,
    _drop_bias_only_impossible_numbers,
    _drop_bias_only_young_ages,
    drop_bias_only_numbers,
)
from deid_pipeline.tagger.crf_spans import (
    _after_a_length,
    _clinical_letters_alone,
    _clock_time,
    _in_value_series,
    _modal_may,
    _short_date_lookalike,
    _without_facility_noun,
    _without_field_words,
    checked_english,
    plausible,
)
from deid_pipeline.tagger.crf_tokens import (
    _drop_bias_only_after_how,
    _drop_bias_only_caseless_words,
    _drop_bias_only_disease_eponyms,
    _drop_bias_only_ordinal_counts,
    _drop_bias_only_rate_units,
    _drop_clinical_places,
    _drop_common_words,
    _drop_weekdays,
    _drop_world_regions,
    _end_at_sentences,
    _propagate,
    _widen_over_hyphens,
    _widen_to_first_names,
    _widen_to_given_names,
    _widen_to_initials,
    _widen_to_places,
    adjust_english,
)
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.tagging import PhiTagger
from deid_pipeline.tokenizer import tokenize
from deid_pipeline.training.crf import (
    TrainOptions,
    parse_sampling,
    train_model,
    training_sequences,
)


def _tiny_corpus() -> list[ClinicalDocument]:
    from deid_pipeline.synthetic import generate_notes

    return generate_notes(30, seed=3, min_tokens=40, max_tokens=150)


@pytest.fixture(scope="module")
def tiny_docs() -> list[ClinicalDocument]:
    return _tiny_corpus()


@pytest.fixture(scope="module")
def tiny_model(tiny_docs, tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("crf") / "tiny.crfsuite")
    train_model(tiny_docs, path, TrainOptions(max_iterations=40), progress=None)
    return path


# --- BIO <-> spans -----------------------------------------------------------

ROUND_TRIP = [
    # (text, spans as (start, end, label))
    ("Seen by Dr. John Smith on 7/22/2006.", [(12, 22, "DOCTOR"), (26, 35, "DATE")]),
    ("John, Mary called", [(0, 4, "RELATIVE"), (6, 10, "RELATIVE")]),
    ("Smith Jones", [(0, 5, "DOCTOR"), (6, 11, "DOCTOR")]),  # adjacent, same label
    ("call (555) 123-4567 now", [(5, 19, "PHONE")]),
    ("no phi here", []),
    ("MRN12345", [(3, 8, "MEDICALRECORD")]),
]


@pytest.mark.parametrize(("text", "raw"), ROUND_TRIP)
def test_when_spans_align_with_tokens_then_bio_round_trip_is_exact(text, raw):
    spans = [PhiSpan(s, e, label, "gold") for s, e, label in raw]
    tokens = tokenize(text)
    tags = spans_to_bio(tokens, spans)
    assert len(tags) == len(tokens)
    back = bio_to_spans(tokens, tags, source="gold")
    assert back == spans


def test_when_bio_then_b_starts_and_i_continues():
    tokens = tokenize("Dr. John Smith")
    tags = spans_to_bio(tokens, [PhiSpan(4, 14, "DOCTOR", "gold")])
    assert tags == ["O", "O", "B-DOCTOR", "I-DOCTOR"]


def test_when_i_tag_follows_o_or_other_type_then_lenient_new_span():
    tokens = tokenize("a b c d")
    tags = ["I-DATE", "O", "I-DOCTOR", "I-PATIENT"]
    spans = bio_to_spans(tokens, tags, confidences=[0.9, 0.1, 0.8, 0.7])
    assert [(s.start, s.end, s.label, s.confidence) for s in spans] == [
        (0, 1, "DATE", 0.9), (4, 5, "DOCTOR", 0.8), (6, 7, "PATIENT", 0.7)]


def test_when_span_ends_inside_a_token_then_whole_token_is_tagged():
    tokens = tokenize("Smithson")
    assert spans_to_bio(tokens, [PhiSpan(0, 5, "PATIENT", "gold")]) == ["B-PATIENT"]


# --- sampling and training ---------------------------------------------------


@pytest.mark.parametrize("spec", ["none", "window:0", "window:3", "random-o:0.5",
                                  "random-o:1"])
def test_when_sampling_spec_valid_then_parsed(spec):
    parse_sampling(spec)


@pytest.mark.parametrize("spec", ["", "window", "window:-1", "window:1.5",
                                  "random-o:0", "random-o:2", "all"])
def test_when_sampling_spec_invalid_then_value_error(spec):
    with pytest.raises(ValueError):
        parse_sampling(spec)


def test_when_window_sampling_then_only_tokens_near_phi_are_kept():
    doc = ClinicalDocument("d", "a b c d e Smith f g h i j k", "test",
                           gold=(PhiSpan(10, 15, "DOCTOR", "gold"),))
    seqs = list(training_sequences([doc], "window:2"))
    assert [tags for _, tags in seqs] == [["O", "O", "B-DOCTOR", "O", "O"]]
    # features were computed on the whole document: the context survives
    assert "-4w=b" in seqs[0][0][2]
    assert list(training_sequences([ClinicalDocument("e", "no phi", "t")],
                                   "window:2")) == []


def test_when_random_o_sampling_then_phi_kept_and_draw_is_seeded(tiny_docs):
    a = list(training_sequences(tiny_docs[:5], "random-o:0.3", seed=7))
    b = list(training_sequences(tiny_docs[:5], "random-o:0.3", seed=7))
    c = list(training_sequences(tiny_docs[:5], "random-o:0.3", seed=8))
    assert a == b and a != c
    full = sum(t != "O" for _, tags in training_sequences(tiny_docs[:5]) for t in tags)
    kept = sum(t != "O" for _, tags in a for t in tags)
    assert kept == full


def test_when_trained_twice_on_same_data_then_same_model_bytes(tiny_docs, tmp_path):
    options = TrainOptions(max_iterations=8)
    first = train_model(tiny_docs[:10], str(tmp_path / "a.crfsuite"), options, None)
    second = train_model(tiny_docs[:10], str(tmp_path / "b.crfsuite"), options, None)
    assert first.sha256 == second.sha256
    assert first.tokens > 0 and first.documents == 10


def test_when_no_tokens_then_training_refuses(tmp_path):
    with pytest.raises(ValueError):
        train_model([], str(tmp_path / "x.crfsuite"), TrainOptions(), None)


def test_when_trained_on_tiny_corpus_then_tags_its_phi(tiny_docs, tiny_model):
    detector = CrfDetector(load_model(tiny_model), bias=0.0)
    from deid_pipeline.evaluation.metrics import evaluate

    ev = evaluate((d.text, d.gold, detector.detect(d)) for d in tiny_docs)
    assert ev.all.binary_token.recall > 0.8
    assert ev.all.binary_token.precision > 0.8
    found = detector.analyze(tiny_docs[0])
    assert len(found.tokens.starts) == len(found.tokens.p_phi) > 0
    assert ((found.tokens.p_phi >= 0.0) & (found.tokens.p_phi <= 1.0)).all()
    for span in found.spans:
        assert span.source == "crf" and 0.0 < span.confidence <= 1.0
        assert any(c.isalnum() for c in tiny_docs[0].text[span.start:span.end])


def test_when_registered_then_factory_reads_model_path_and_bias(tiny_model):
    (detector,) = create(TaggerConfig(detectors=("crf",), model_path=tiny_model,
                                      bias=-1.5))
    assert isinstance(detector, CrfDetector)
    assert detector.bias == -1.5
    # loaded once per process: same object for the same bytes
    assert detector.model is load_model(tiny_model)
    assert model_id(tiny_model) == detector.model.model_id


def test_when_model_missing_then_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(str(tmp_path / "nope.crfsuite"))


def test_when_empty_document_then_no_spans(tiny_model):
    detector = CrfDetector(load_model(tiny_model))
    assert detector.analyze(ClinicalDocument("e", "", "t")).spans == ()
    assert detector.detect(ClinicalDocument("e", " \n ", "t")) == ()


def test_when_threads_share_the_model_then_results_match_sequential(tiny_docs,
                                                                   tiny_model):
    detector = CrfDetector(load_model(tiny_model))
    expected = [detector.analyze(d) for d in tiny_docs]
    results: dict[int, list] = {}

    def work(k: int) -> None:
        results[k] = [detector.analyze(d) for d in tiny_docs]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        for got, want in zip(results[k], expected, strict=True):
            assert got.spans == want.spans
            assert all(np.array_equal(a, b) for a, b in zip(got.tokens, want.tokens))


# --- bias --------------------------------------------------------------------


def test_outside_threshold_is_monotone():
    values = [outside_threshold(b) for b in (-10, -3, -1, 0, 1, 3, 10, 1000)]
    assert values == sorted(values, reverse=True)
    assert outside_threshold(0) == 0.5


def _phi_tokens(text: str, spans) -> set[int]:
    return {t.start for t in tokenize(text) for s in spans
            if s.start < t.end and t.start < s.end}


def _real_note_detector(physionet_docs, tiny_model):
    path = DEFAULT_MODEL_PATH if os.path.exists(DEFAULT_MODEL_PATH) else tiny_model
    return CrfDetector(load_model(path))


def test_when_bias_lowered_then_never_fewer_phi_tokens_on_a_real_note(physionet_docs,
                                                                      tiny_model):
    detector = _real_note_detector(physionet_docs, tiny_model)
    # the note with the most gold PHI: boundaries, names and dates to move
    note = max(physionet_docs, key=lambda d: (len(d.gold), d.doc_id))
    biases = [-12, -8, -5, -3, -2, -1, -0.5, 0, 0.5, 1, 2, 4, 8]
    found = []
    for bias in biases:
        detector.bias = bias
        found.append(_phi_tokens(note.text, detector.detect(note)))
    for lower, higher in zip(found, found[1:]):
        assert higher <= lower
    assert len(found[0]) > len(found[-1])


def test_when_posterior_decoded_at_a_bias_then_same_as_tagging_at_it(physionet_docs,
                                                                     tiny_model):
    detector = _real_note_detector(physionet_docs, tiny_model)
    note = max(physionet_docs, key=lambda d: (len(d.gold), d.doc_id))
    posterior = detector.posterior(note, min_bias=-4)
    for bias in (-4, -2, 0, 1):
        detector.bias = bias
        assert detector.decode(note, posterior, bias) == detector.analyze(note)
    with pytest.raises(ValueError):
        detector.decode(note, posterior, -5)


# --- the hybrid --------------------------------------------------------------


def test_when_header_names_a_word_then_hybrid_tags_it_whatever_the_crf_says(
        tiny_model):
    text = "Pt resting. Zyxwvut at bedside, asked about discharge."
    doc = ClinicalDocument("h", text, "hl7", dictionary=PatientDictionary(
        entries=(DictionaryEntry("ZYXWVUT", "RELATIVE", "NK1.2"),)))
    crf_only = PhiTagger.from_config(TaggerConfig(("crf",), tiny_model, bias=50.0))
    # At this bias the CRF finds nothing (without the header to propagate).
    assert crf_only.tag(dataclasses.replace(doc, dictionary=None)).spans == ()
    hybrid = PhiTagger.from_config(TaggerConfig(("dictionary", "crf"), tiny_model,
                                                bias=50.0))
    spans = hybrid.tag(doc).spans
    assert [(text[s.start:s.end], s.label) for s in spans] == [("Zyxwvut", "RELATIVE")]
    assert spans[0].source.startswith("dictionary")


@pytest.mark.parametrize("value,label,expected", [
    ("80/30", "DATE", False),      # a pressure, not a month/day
    ("135/27", "DATE", False),
    ("17-24", "DATE", False),
    ("7/9", "DATE", True),
    ("25/12", "DATE", True),       # day/month
    ("10/22/03", "DATE", True),
    ("2006", "DATE", True),
    ("Oct 3", "DATE", True),       # letters: the model's call
    ("10/hr", "DATE", False),      # a rate
    ("45 / min", "DATE", False),
    ("3/Oct", "DATE", True),
    ("86-105", "PHONE", False),    # a range
    ("555-0142", "PHONE", True),
    ("(617) 555-0142", "PHONE", True),
    ("150-180's", "PHONE", False),  # letters do not make a range a phone
    ("2-4 hrs", "PHONE", False),
    ("cell 410-555-0199", "PHONE", True),
    ("x4417", "FAX", False),
    ("123", "IDNUM", True),
    ("8/4/460", "DATE", False),    # no date has a 3-digit part
    ("3/7/9", "DATE", False),      # Apgars: no year is written in one digit
    ("3/7/09", "DATE", True),
    ("6670/1182", "DATE", False),  # nor a 4-digit part that is no year
    ("3/2/1500", "DATE", False),
    ("2/31/14", "DATE", True),     # a typo of a date is still one
])
def test_plausible_rejects_numbers_that_cannot_be_their_label(value, label, expected):
    assert plausible(value, label) is expected


@pytest.mark.parametrize("text,start_word,expected", [
    ("Tolerated PSV 10/5 30%, RR 20", "10/5", True),      # vent setting
    ("pt c/o CP this morning, 8/10 pain scale", "8/10", True),
    ("Vent changed over to 5/5, 40%", "5/5", True),
    ("received vanco X1 on 10/20. WBC 10.7", "10/20", False),
    ("admitted 7/9 with SOB", "7/9", False),
    ("extubated 2/31/14", "2/31/14", False),              # not a short form
])
def test_when_the_date_rules_reject_a_short_date_the_crf_date_is_dropped(
        text, start_word, expected):
    start = text.index(start_word)
    whole = PhiSpan(start, start + len(start_word), "DATE", "crf")
    assert _short_date_lookalike(text, whole) is expected
    # a span over the last number only is judged on the whole fraction
    last = text.rindex("/", start, whole.end) + 1
    tail = PhiSpan(last, whole.end, "DATE", "crf")
    assert _short_date_lookalike(text, tail) is expected


def test_when_the_crf_is_sure_of_a_date_then_a_fractions_shape_does_not_drop_it():
    text = "PLAN: ? d/c TF's 2/4. Anticipate transfer to floor"
    start = text.index("2/4")
    assert _short_date_lookalike(text, PhiSpan(start, start + 3, "DATE", "crf", 0.5))
    sure = PhiSpan(start, start + 3, "DATE", "crf", 0.95)
    assert not _short_date_lookalike(text, sure)
    # other signs of a quantity hold however sure: "1/2 NS"
    text = "Pt on 1/2 NS at 100cc/hr"
    start = text.index("1/2")
    assert _short_date_lookalike(text, PhiSpan(start, start + 3, "DATE", "crf", 0.95))


def test_only_words_the_best_path_calls_phi_are_propagated():
    tokens = tuple(tokenize("son Kowalczyk called. Kowalczyk aware. wean neo. neo off"))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [None] * len(tokens)
    viterbi = ["O"] * len(tokens)
    kinds[1], viterbi[1] = "RELATIVE", "B-RELATIVE"   # the model's best path
    kinds[words.index("neo")] = "RELATIVE"              # the recall bias only
    confidences = [0.9] * len(tokens)
    _propagate(tokens, kinds, confidences, viterbi)
    marked = [w for w, k in zip(words, kinds) if k is not None]
    assert marked == ["Kowalczyk", "Kowalczyk", "neo"]


@pytest.mark.parametrize("path_tag", ["O", "B-PATIENT"])
def test_when_no_token_is_marked_then_no_english_rule_marks_one(physionet_docs,
                                                               path_tag):
    # CrfDetector.decode skips the English rules for a note with no marked
    # token (two in three): that holds only while every rule drops a marked
    # token or widens from one, whatever the best path says.
    for doc in physionet_docs[:40]:
        tokens = tuple(tokenize(doc.text))
        kinds: list[str | None] = [None] * len(tokens)
        confidences = [0.01 * (i % 50) for i in range(len(tokens))]
        adjust_english(tokens, kinds, confidences, [path_tag] * len(tokens))
        assert kinds == [None] * len(tokens), doc.doc_id
        assert confidences == [0.01 * (i % 50) for i in range(len(tokens))]


def test_viterbi_runs_only_for_a_note_with_a_marked_token(physionet_docs, tiny_model):
    # The path is read only where a token is PHI at the posterior's bias:
    # a note with none never runs Viterbi, a note with one does.
    detector = _real_note_detector(physionet_docs, tiny_model)
    runs = {False: 0, True: 0}
    for doc in physionet_docs[:60]:
        posterior = detector.posterior(doc)
        marked = any(p < outside_threshold(detector.bias) for p in posterior.p_outside)
        detection = detector.decode(doc, posterior)
        assert ("_best" in vars(posterior.decoded)) == marked, doc.doc_id
        assert marked or not detection.spans
        runs[marked] += 1
    assert runs[False] and runs[True]


def test_clinical_words_are_not_propagated_but_names_that_are_also_drugs_are():
    text = "at Calvert requiring dopamine; dopamine off. Allison called, Allison aware"
    tokens = tuple(tokenize(text))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [None] * len(tokens)
    viterbi = ["O"] * len(tokens)
    for word in ("dopamine", "Allison"):  # Allison: a name and a drug word
        i = words.index(word)
        kinds[i], viterbi[i] = "HOSPITAL", "B-HOSPITAL"
    _propagate(tokens, kinds, [0.9] * len(tokens), viterbi)
    marked = [w for w, k in zip(words, kinds) if k is not None]
    assert marked == ["dopamine", "Allison", "Allison"]


def test_days_of_the_week_are_never_phi():
    tokens = tuple(tokenize("going home on MON; CABG Friday 10/7 per Wed team; Sat up"))
    kinds = ["PATIENT" if t.text[0].isupper() or t.text == "Sat" else None
             for t in tokens]
    _drop_weekdays(tokens, kinds)
    marked = [t.text for t, k in zip(tokens, kinds) if k is not None]
    assert marked == ["CABG", "Sat"]


def test_when_a_common_word_is_marked_only_by_the_bias_then_it_is_dropped():
    tokens = tuple(tokenize("Sons David and Theodore will call"))
    kinds = ["RELATIVE", "RELATIVE", "RELATIVE", "RELATIVE", "RELATIVE", None]
    viterbi = ["O", "B-RELATIVE", "O", "B-RELATIVE", "O", "O"]
    _drop_common_words(tokens, kinds, viterbi)
    # "Sons" is not a band-6 word; "and"/"will" are, and only the bias marked them.
    assert kinds == ["RELATIVE", "RELATIVE", None, "RELATIVE", None, None]
    kinds = ["ORGANIZATION"] * 3
    _drop_common_words(tuple(tokenize("Smith and Wesson")), kinds,
                       ["B-ORGANIZATION", "I-ORGANIZATION", "I-ORGANIZATION"])
    assert kinds == ["ORGANIZATION"] * 3  # the best path says so: kept


# Issue 46: words of a clinician's question that only the recall bias marked.
_CASELESS, _EPONYM = _drop_bias_only_caseless_words, _drop_bias_only_disease_eponyms
_RATE, _HOW = _drop_bias_only_rate_units, _drop_bias_only_after_how


@pytest.mark.parametrize("rule, text, word, on_path, kept", [
    # A common verb marked a place (a Belgian town: only the world-city list
    # has it); the best path's word, a listed name, a US town and a
    # capitalised word stay.
    (_CASELESS, "How to manage Stevens-Johnson syndrome?", "manage", False, False),
    (_CASELESS, "How to manage Stevens-Johnson syndrome?", "manage", True, True),
    (_CASELESS, "spoke with p michael re plan", "michael", False, True),
    (_CASELESS, "lives in dover with wife", "dover", False, True),
    (_CASELESS, "Manage per ortho", "Manage", False, True),
    (_CASELESS, "kawasaki coronary aneurysm f/u echo", "coronary", False, False),
    # A rare name does not save a common word in lower case either.
    (_CASELESS, "the plan from rounds was to wean", "rounds", False, False),
    # After a determiner a common lower-case word is a noun, even a listed
    # name; a name after kin stays.
    (_CASELESS, "needs a walker at home", "walker", False, False),
    (_CASELESS, "the hope is to get her home", "hope", False, False),
    (_CASELESS, "her son bill called", "bill", False, True),
    # A listed common word alone with nothing beside it that makes it a name
    # or a place goes; after a title, kin word (a comma between), initial or
    # first name, or before an initial, it stays; on the best path too.
    (_CASELESS, "stone analysis shows calcium oxalate", "stone", False, False),
    (_CASELESS, "stone analysis shows calcium oxalate", "stone", True, True),
    (_CASELESS, "parkland formula for a 70 kg man", "man", False, False),
    (_CASELESS, "when his hr and bp rose without cause", "rose", False, False),
    (_CASELESS, "mrs wood had a black light exam", "wood", False, True),
    (_CASELESS, "the pt's son, bill, called at 5am", "bill", False, True),
    (_CASELESS, "nsg (p. young) verified cash", "young", False, True),
    (_CASELESS, "will price is in bay 6", "price", False, True),
    (_CASELESS, "how to reach george r. today", "george", False, True),
    # In capitals case says nothing: a common word goes even when it is a
    # rare name or a small town (MANY); a common name, a town that is no
    # common word (WOODBINE) and a two-letter abbreviation stay.
    (_CASELESS, "SPOKE TO MED TEAM AT LENGTH.", "LENGTH", False, False),
    (_CASELESS, "ASKING MANY QUESTIONS.", "MANY", False, False),
    (_CASELESS, "ASKING MANY QUESTIONS.", "MANY", True, True),
    (_CASELESS, "SPOKE WITH SON MARK", "MARK", False, True),
    (_CASELESS, "18 Y/O FROM WOODBINE ADMITTED", "WOODBINE", False, True),
    (_CASELESS, "SENT TO NH TONIGHT", "NH", False, True),
    # A disease written by its eponym alone; a person after a title stays.
    (_EPONYM, "hashimoto and levothyroxine timing", "hashimoto", False, False),
    (_EPONYM, "Raynaud, cold hands, on nifedipine", "Raynaud", False, False),
    (_EPONYM, "hashimoto and levothyroxine timing", "hashimoto", True, True),
    (_EPONYM, "seen by Dr. Hashimoto today", "Hashimoto", False, True),
    (_EPONYM, "Mr Crohn called for his wife", "Crohn", False, True),
    # A unit after a word of rate: "day" is also a surname; a capitalised
    # one (a doctor's orders) and one on the best path stay.
    (_RATE, "max tylenol per day in elderly", "day", False, False),
    (_RATE, "how many units a day for basal insulin", "day", False, False),
    (_RATE, "max tylenol per day in elderly", "day", True, True),
    (_RATE, "lasix held per Day, recheck lytes", "Day", False, True),
    (_RATE, "spoke with day re: plan", "day", False, True),
    # A question's adverb ("Long" is a surname); a capitalised name stays.
    (_HOW, "how long is a central line good for", "long", False, False),
    (_HOW, "how long is a central line good for", "long", True, True),
    (_HOW, "ask how Frank is doing", "Frank", False, True),
])
def test_when_a_question_word_only_the_bias_marked_then_dropped(rule, text, word,
                                                               on_path, kept):
    tokens = tuple(tokenize(text))
    t = [tok.text for tok in tokens].index(word)
    kinds: list[str | None] = [None] * len(tokens)
    viterbi = ["O"] * len(tokens)
    kinds[t] = "LOCATION"
    if on_path:
        viterbi[t] = "B-LOCATION"
    rule(tokens, kinds, viterbi)
    assert (kinds[t] is not None) is kept


@pytest.mark.parametrize("text, on_path, kept", [
    ("does vancomycin trough need drawing before the 4th dose", False, False),
    ("abx started, now on the 3rd day of zosyn", False, False),
    ("does vancomycin trough need drawing before the 4th dose", True, True),
    ("line changed on the 4th, site clean", False, True),  # a day of the month
    ("changed on the 4th at 0800", False, True),
])
def test_when_an_ordinal_counts_something_then_no_date(text, on_path, kept):
    tokens = tuple(tokenize(text))
    t = [tok.text for tok in tokens].index("4" if "4" in text else "3")
    kinds: list[str | None] = [None] * len(tokens)
    viterbi = ["O"] * len(tokens)
    kinds[t] = kinds[t + 1] = "DATE"
    if on_path:
        viterbi[t], viterbi[t + 1] = "B-DATE", "I-DATE"
    _drop_bias_only_ordinal_counts(tokens, kinds, viterbi)
    assert (kinds[t] is not None) is kept and (kinds[t + 1] is not None) is kept


def test_when_a_lower_word_is_part_of_a_longer_value_then_kept():
    tokens = tuple(tokenize("does dr. smith still cover hornitos regional"))
    kinds: list[str | None] = [None] * len(tokens)
    kinds[-2:] = ["HOSPITAL", "HOSPITAL"]
    viterbi = ["O"] * (len(tokens) - 2) + ["B-HOSPITAL", "O"]
    _drop_bias_only_caseless_words(tokens, kinds, viterbi)
    assert kinds[-1] == "HOSPITAL"


def test_when_a_marked_place_stands_a_comma_before_then_a_listed_word_kept():
    # "la" after a marked town is its state; after a drug it is calcium.
    for text, town, kept in (("93 yo from keithville, la with wells score", 3, True),
                             ("repleting mgso4, la. social: wife in", None, False)):
        tokens = tuple(tokenize(text))
        t = [tok.text for tok in tokens].index("la")
        kinds: list[str | None] = [None] * len(tokens)
        kinds[t] = "STATE"
        if town is not None:
            kinds[town] = "CITY"
        _drop_bias_only_caseless_words(tokens, kinds, ["O"] * len(tokens))
        assert (kinds[t] == "STATE") is kept, text


def test_when_every_word_of_a_bias_only_run_is_a_lower_common_word_then_all_go():
    # After an eponym the model took "skeletal maturity" for a hospital; a
    # town of common words keeps its run ("grand" is a listed surname).
    for text, start, kept in (("sanders skeletal maturity stage", 1, False),
                              ("moved to grand rapids in may", 2, True)):
        tokens = tuple(tokenize(text))
        kinds: list[str | None] = [None] * len(tokens)
        kinds[start:start + 2] = ["HOSPITAL"] * 2
        _drop_bias_only_caseless_words(tokens, kinds, ["O"] * len(tokens))
        assert (kinds[start:start + 2] == ["HOSPITAL"] * 2) is kept, text


def test_when_one_word_of_a_place_name_is_marked_then_all_of_it_is():
    tokens = tuple(tokenize("new job in Bel Air; moved from Glen Burnie to york"))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [None] * len(tokens)
    confidences = [0.1] * len(tokens)
    for word, kind in (("Bel", "RELATIVE"), ("Burnie", "CITY")):
        kinds[words.index(word)] = kind
        confidences[words.index(word)] = 0.8
    _widen_to_places(tokens, kinds, confidences)
    marked = [(w, k) for w, k in zip(words, kinds) if k is not None]
    assert marked == [("Bel", "CITY"), ("Air", "CITY"), ("Glen", "CITY"),
                      ("Burnie", "CITY")]
    assert confidences[words.index("Air")] == 0.8
    kinds = [None] * len(tokens)
    _widen_to_places(tokens, kinds, confidences)  # nothing marked: nothing widened
    assert kinds == [None] * len(tokens)


@pytest.mark.parametrize("text,name,expected", [
    ("INR 6.0. G. JOHNSON AWARE.", "JOHNSON", ["G", "JOHNSON"]),
    ("seen by Anna S. at noon", "Anna", ["Anna", "S"]),
    ("Dr. K.  Fletcher in", "Fletcher", ["K", "Fletcher"]),
    ("Hepatitis B.Smith aware", "Smith", ["Smith"]),       # no blank after the stop
    ("I. Smith aware", "aware", ["aware"]),                 # not a name kind
    ("Smith a. fib", "Smith", ["Smith"]),                  # not a capital
    ("Smith\n\n\nA. fib", "Smith", ["Smith"]),            # not beside it
    ("speak with Ross M.D. today", "Ross", ["Ross"]),     # a credential
    ("Lee R.N. aware", "Lee", ["Lee"]),
    ("asked christine y. about it", "christine", ["christine", "y"]),  # lower case
    ("dr. kari m. said", "kari", ["kari", "m"]),
    ("smith a. fib", "smith", ["smith"]),                  # a word, not an initial
    ("Anna s. said", "Anna", ["Anna"]),                   # a capital name: capitals
    # No full stop: a capital alone, then a lower-case word or a clause's end.
    ("pt Kevin M with CHF", "Kevin", ["Kevin", "M"]),
    ("did Maria K get it?", "Maria", ["Maria", "K"]),
    ("asked Maria K, her son", "Maria", ["Maria", "K"]),
    ("Kevin I think is aware", "Kevin", ["Kevin"]),        # the pronoun
    ("Kevin A FIB noted", "Kevin", ["Kevin"]),             # capitals run on
    ("KEVIN M WITH CHF", "KEVIN", ["KEVIN"]),              # an all-capital name
    # A lower-case letter alone before a lower-case name.
    ("bp 120 to 135 per d ross.pacing wires", "ross", ["d", "ross"]),
    ("per a kerry", "kerry", ["kerry"]),                   # the article
    ("pt's michael called", "michael", ["michael"]),       # glued: the 's of pt's
    ("per d Ross", "Ross", ["Ross"]),                      # a capital name
])
def test_an_initial_against_a_marked_name_is_marked_with_it(text, name, expected):
    tokens = tuple(tokenize(text))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [None] * len(tokens)
    confidences = [0.1] * len(tokens)
    at = words.index(name)
    kinds[at] = "ORGANIZATION" if name == "aware" else "DOCTOR"
    confidences[at] = 0.7
    _widen_to_initials(tokens, kinds, confidences)
    assert [w for w, k in zip(words, kinds) if k is not None] == expected
    assert {c for c, k in zip(confidences, kinds) if k is not None} == {0.7}


@pytest.mark.parametrize("text,marked,expected", [
    # The model carried a profession over the full stop into a kin word.
    ("pt is a retired designer. sister Jennifer lives",
     ["designer", ".", "sister", "Jennifer"], ["designer", "Jennifer"]),
    ("PT IS A RETIRED EDITOR. BROTHER ANGEL", ["EDITOR", ".", "BROTHER", "ANGEL"],
     ["EDITOR", "ANGEL"]),
    # Stops inside a value are not sentence ends: abbreviations, initials.
    ("seen at St. Mary's today", ["St", ".", "Mary", "'", "s"],
     ["St", ".", "Mary", "'", "s"]),
    ("seen by J. Smith", ["J", ".", "Smith"], ["J", ".", "Smith"]),
    ("to Mass. General now", ["Mass", ".", "General"], ["Mass", ".", "General"]),
    # A question or exclamation mark is never part of a value.
    ("flu shot at CVS in Dayton?", ["Dayton", "?"], ["Dayton"]),
    ("is he home?! wife Ana asks", ["home", "?", "!", "Ana"], ["home", "Ana"]),
])
def test_a_model_span_holds_no_kin_word_nor_the_stop_before_one(
        text, marked, expected):
    tokens = tuple(tokenize(text))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [
        "PROFESSION" if w in marked else None for w in words]
    _end_at_sentences(tokens, kinds)
    assert [w for w, k in zip(words, kinds) if k is not None] == expected


@pytest.mark.parametrize("value,label,expected", [
    ("Calvert Hospital", "HOSPITAL", "Calvert"),
    ("KESSLER MEDICAL CENTER", "HOSPITAL", "KESSLER"),
    ("St. Mary Hosp.", "LOCATION", "St. Mary"),
    ("Hospital", "HOSPITAL", None),          # the kind of place alone: no PHI
    ("Mercy", "HOSPITAL", "Mercy"),
    ("Center Street", "STREET", "Center Street"),  # only place-name labels
    ("BALTIMORE VA", "HOSPITAL", "BALTIMORE"),
    ("kernan ew", "LOCATION", "kernan"),
    ("KEELEY HOUSE", "LOCATION", "KEELEY"),
    ("CALVERT HOSPIATAL", "HOSPITAL", "CALVERT"),  # misspelt, still the kind
    ("kessler-adventist rehab facility", "HOSPITAL", "kessler-adventist"),
    ("OSH", "HOSPITAL", None),               # "outside hospital"
    ("Osher", "LOCATION", "Osher"),          # whole words only
])
def test_facility_nouns_are_left_out_of_place_spans(value, label, expected):
    span = _without_facility_noun(value, PhiSpan(0, len(value), label, "crf"))
    assert (None if span is None else value[span.start:span.end]) == expected


@pytest.mark.parametrize("text,value,label,expected", [
    # The model stopped inside the employer's name: the joiner is no part of
    # it (left on, a surrogate before it spelled the value elsewhere).
    ("brother just started a new job at Zimmerman and Sons; Albert called",
     "Zimmerman and", "ORGANIZATION", "Zimmerman"),
    ("WORKS AT RITTER & SONS", "RITTER &", "ORGANIZATION", "RITTER"),
    # Its facility noun left out first, then the joiner before it.
    ("to Good Shepherd Nursing and Rehabilitation.",
     "Good Shepherd Nursing and Rehabilitation", "HOSPITAL", "Good Shepherd Nursing"),
    ("from University Hospital of Lake Isabella", "University Hospital of",
     "HOSPITAL", "University Hospital"),
    ("Drs. Abbott and Hernandez notified", "Abbott and", "DOCTOR", "Abbott"),
    ("seen by Dr Lucie Lange, Dr Will Cole", "Lucie Lange,", "DOCTOR",
     "Lucie Lange,"),  # a comma: as the corpus's annotators wrote one
    ("lives in Isle of Palms", "Isle of Palms", "LOCATION", "Isle of Palms"),
])
def test_a_model_span_does_not_end_with_a_joining_word(text, value, label, expected):
    start = text.index(value)
    spans = checked_english(text, [PhiSpan(start, start + len(value), label, "crf")])
    assert [text[s.start:s.end] for s in spans] == [expected]


def test_when_only_the_bias_makes_a_fraction_a_date_then_it_is_dropped():
    text = "CPAP 5/5, pain 3/10; seen 7/22/2006 and 8/14"
    tokens = tuple(tokenize(text))
    digits = [i for i, tok in enumerate(tokens) if tok.text.isdigit()]
    kinds = ["DATE" if i in digits else None for i in range(len(tokens))]
    # The best path calls only 8/14 a date; the bias marked every number.
    at_8 = next(i for i, tok in enumerate(tokens) if tok.text == "8")
    viterbi = ["B-DATE" if i in (at_8, at_8 + 2) else "O" for i in range(len(tokens))]
    _drop_bias_only_fractions(tokens, kinds, viterbi)
    marked = [tokens[i].text for i, k in enumerate(kinds) if k]
    assert marked == ["7", "22", "2006", "8", "14"]  # dated, or on the best path


def test_when_only_the_bias_makes_an_age_under_90_phi_then_it_is_dropped():
    text = "PT IS A 69 YR OLD, HUSBAND 92 YO; son 45 yo, mother 101 yrs"
    tokens = tuple(tokenize(text))
    kinds = ["AGE" if tok.text.isdigit() else None for tok in tokens]
    # The best path calls 45 an age (a site's model trained on every age).
    at_45 = next(i for i, tok in enumerate(tokens) if tok.text == "45")
    viterbi = ["B-AGE" if i == at_45 else "O" for i in range(len(tokens))]
    _drop_bias_only_young_ages(tokens, kinds, viterbi)
    assert [tokens[i].text for i, k in enumerate(kinds) if k] == ["92", "45", "101"]


@pytest.mark.parametrize("text, kept", [
    ("brown urine after marathon, CK 60000, bicarb in fluids?", []),
    ("lives at 12 Elm St, Lowell, MA 01852-4410 with wife", ["01852", "4410"]),
    ("moved to Lowell, 01852 last year", ["01852"]),
])
def test_when_only_the_bias_marks_a_zip_after_no_place_then_it_is_dropped(text, kept):
    tokens = tuple(tokenize(text))
    kinds: list[str | None] = [
        "ZIP" if len(t.text) in (4, 5) and t.text.isdigit()
        else "CITY" if t.text == "Lowell" else "STATE" if t.text == "MA" else None
        for t in tokens]
    drop_bias_only_numbers(tokens, kinds, ["O"] * len(tokens))
    assert [t.text for t, k in zip(tokens, kinds) if k == "ZIP"] == kept


def _bias_only(text: str, kind: str, best: str = "") -> list[str]:
    """The digits still marked after the bias marked every digit ``kind``."""
    tokens = tuple(tokenize(text))
    kinds = [kind if t.text.isdigit() else None for t in tokens]
    viterbi = [f"B-{kind}" if t.text == best else "O" for t in tokens]
    _drop_bias_only_impossible_numbers(tokens, kinds, viterbi)
    return [t.text for t, k in zip(tokens, kinds) if k]


def test_when_only_the_bias_marks_a_number_no_value_can_be_then_it_is_dropped():
    # Readings are no dates; days, years, month-day pairs and a year after a dot are.
    assert _bias_only("CPK 5600; CO/CI/SVR 5.5/2.64/902 at 1300; seen 3/2/1500, 8/14, "
                      "0315, 1992 and 11/21.93", "DATE") == [
        "8", "14", "0315", "1992", "11", "21", "93"]
    # The best path's call stays; the bias-only rest of its run goes.
    assert _bias_only("seen 3/2/1500", "DATE", best="1500") == ["1500"]
    # An age is at most 125; phone numbers are left alone (a pager has 4 digits).
    assert _bias_only("92 yo, SVR 902, 125 yrs", "AGE") == ["92", "125"]
    assert _bias_only("i&o (-300); pager 4411", "PHONE") == ["300", "4411"]


def test_dictionary_features_are_computed_only_for_models_that_weigh_them(
        tiny_docs, tiny_model, tmp_path):
    # tiny_docs carry no header: the model has no IN_* weights, and tagging a
    # header-bearing document gives what it gives without the header's features.
    assert load_model(tiny_model).uses_dictionary is False
    text = "Pt resting. Zyxwvut at bedside, asked about discharge."
    header = PatientDictionary(entries=(DictionaryEntry("Zyxwvut", "RELATIVE",
                                                        "NK1.2"),))
    with_header = ClinicalDocument("h", text, "hl7", dictionary=header,
                                   gold=(PhiSpan(12, 19, "RELATIVE", "gold"),))
    path = str(tmp_path / "with-header.crfsuite")
    train_model([*tiny_docs, with_header], path, TrainOptions(max_iterations=20),
                progress=None)
    assert load_model(path).uses_dictionary is True


def test_a_clock_time_is_cut_from_the_end_of_a_date_span():
    text = "10/22/03, 1900 \nNeuro: Received from OR"
    for value, label, expected in (("10/22/03, 1900", "DATE", "10/22/03"),
                                   ("Smith 1900", "DOCTOR", "Smith 1900")):
        start = text.index(value) if value in text else 0
        source = text if value in text else value
        cut = _without_field_words(source, PhiSpan(start, start + len(value), label,
                                                   "crf", 0.9))
        assert source[cut.start:cut.end] == expected


@pytest.mark.parametrize("text,span,expected", [
    ("need notes for Jessica M. MRN SV2261765", "Jessica M. MRN", "Jessica M."),
    ("Patient: Carroll   Med rec no.: 454621W", "Carroll   Med", "Carroll"),
    ("NAME: ANDRE B.   MRN: 173103287K", "ANDRE B.   MRN", "ANDRE B."),
    ("member id 5297578i pending", "id 5297578i", "5297578i"),
    ("PCP: Dr. Courtney O. of Valley Medical Center", "of Valley", "Valley"),
    ("pt from jupiter w/ chf", "jupiter w", "jupiter"),
    ("PT EXPIRED. DR'S CAMARDA AND CLIFFORD", "S CAMARDA", "CAMARDA"),
    ("PT EXPIRED. DR'S CAMARDA AND CLIFFORD", "'S CAMARDA", "CAMARDA"),
    ("SEEN BY GBMC NURSE FOR ARRANGEMENTS", "GBMC NURSE", "GBMC"),
    ("note by Kowalski, RN", "Kowalski, RN", "Kowalski"),
    # What the person did, after the name: no part of it.
    ("DR BAKAITIS UPDATE BY MD", "BAKAITIS UPDATE", "BAKAITIS"),
    ("cath ok.dr vascuez spoke with husband", "vascuez spoke", "vascuez"),
    # What happened at a place, after its facility noun: no part of it.
    ("HYPOTENSION AT CALVERT HOSPITAL REQUIRING DOPAMINE",
     "CALVERT HOSPITAL REQUIRING DOPAMINE", "CALVERT HOSPITAL"),
    ("records from Hospital for Special Surgery", "Hospital for Special Surgery",
     "Hospital for Special Surgery"),
    # When after a value: no part of it.
    ("came from st agnes memorial yesterday", "st agnes memorial yesterday",
     "st agnes memorial"),
    ("Dr. Ng saw pt this am, plan", "Ng saw pt this am", "Ng saw pt"),

    ("son S Marks called", "S Marks", "S Marks"),  # an initial, no apostrophe
    ("path report for Ramirez record 963563634-J", "record", None),
    ("MEMBER ID 2577011-D", "ID", None),
    ("family called and pt's pastor was in to visit", "pastor", None),
    ("Pastor Williams visited", "Pastor Williams", "Pastor Williams"),
    # Words that only begin like a field label, and a "w" with no slash.
    ("seen by Dr. Medina today", "Medina", "Medina"),
    ("son Ted w called", "Ted w", "Ted w"),
])
def test_field_label_words_are_cut_from_the_ends_of_a_span(text, span, expected):
    start = text.index(span)
    label = "HOSPITAL" if "Hosp" in span or "HOSP" in span else "DOCTOR"
    cut = _without_field_words(text, PhiSpan(start, start + len(span), label,
                                             "crf", 0.9))
    assert (None if cut is None else text[cut.start:cut.end]) == expected


@pytest.mark.parametrize("text,value,clock", [
    ("admitted from OSH at 1900. Was transferred", "1900", True),
    ("Lie flat until 2000.", "2000", True),
    ("Nursing note for MICU A 1900-0700", "1900", True),
    ("shift 0700 - 1900 uneventful", "1900", True),
    ("chest ache since 2006", "2006", False),     # a year after "since"
    ("CABG in 1998, MI 2001", "1998", False),
    ("at 2460 mL total", "2460", False),           # no clock reads 24:60
])
def test_a_four_digit_clock_time_is_no_date(text, value, clock):
    start = text.index(value)
    assert _clock_time(text, PhiSpan(start, start + 4, "DATE", "crf", 0.6)) is clock


@pytest.mark.parametrize("check,label,text,value,dropped", [
    # "May" before a word is the verb, unless the word joins it to a date.
    (_modal_may, "DATE", "GUARD ORDERED. MAY GET THAT CIRCULATES AIR", "MAY", True),
    (_modal_may, "DATE", "PLAN: May require intubation, pressors", "May", True),
    (_modal_may, "DATE", "last seen in May, stable", "May", False),
    (_modal_may, "DATE", "seen May 3rd and May of 2010", "May", False),
    (_modal_may, "DATE", "from May to July", "May", False),
    # A word right after a length is what was measured there.
    (_after_a_length, "DOCTOR", "ET TUBE TAPED AT 21 CM MARK, BILATERAL", "MARK", True),
    (_after_a_length, "DOCTOR", "ett secured at the 23 cm mark. pt also", "mark", True),
    (_after_a_length, "DOCTOR", "wound 3 cm x 2 mm, by Mark Hill", "Mark Hill", False),
    (_after_a_length, "DOCTOR", "son Mark called", "Mark", False),
])
def test_a_word_its_context_says_is_no_value(check, label, text, value, dropped):
    start = text.index(value)
    assert check(text, PhiSpan(start, start + len(value), label, "crf", 0.1)) is dropped


@pytest.mark.parametrize("text,value,series", [
    ("co/ci after being on ntg up to 6.6/3.71, am #'s pnd", "6/3", True),
    ("co/ci after being on ntg up to 6.6/3.71, am #'s pnd", ".71", True),
    ("co/ci after being on ntg up to 6.6/3.71, am #'s pnd", "6/3.71", True),
    ("AC 40/700/5/12 .SAT 100,ABG PENDING", "5/12", True),
    ("pa sats improved to 5-6/3-4/0-80 and has diuresed", "6/3", True),
    # dates: alone, as a range, with a year, with an odd year, at a full stop
    ("BC drawn 3/4-3/6 neg", "3/6", False),
    ("dates 3/4/2019-3/6/2019 noted", "3/4/2019", False),
    ("admitted 11/21.93 for chf", "11/21.93", False),
    ("PLAN: d/c 2/4.", "2/4", False),
    ("seen 7/9/04, changed 7/12.", "7/9/04", False),
])
def test_a_date_inside_a_run_of_values_is_no_date(text, value, series):
    start = text.index(value)
    span = PhiSpan(start, start + len(value), "DATE", "crf", 0.6)
    assert _in_value_series(text, span) is series


@pytest.mark.parametrize("text,span,label,expected", [
    ("PLAN: TRANSFER TO HOBOKEN 2 IN AM.", "HOBOKEN 2", "HOSPITAL", "HOBOKEN"),
    ("INTUBATED ON quartermain 7 FOR FAILURE", "quartermain 7", "LOCATION",
     "quartermain"),
    # a number that is the place's own, or no place's
    ("lives at 19 Clover Lane", "19 Clover", "LOCATION", "19 Clover"),
    ("son Ted 2 visits", "Ted 2", "RELATIVE", "Ted 2"),
])
def test_a_floor_number_is_cut_from_the_end_of_a_place(text, span, label, expected):
    start = text.index(span)
    cut = _without_field_words(text, PhiSpan(start, start + len(span), label,
                                             "crf", 0.9))
    assert text[cut.start:cut.end] == expected


@pytest.mark.parametrize("text,value,label,dropped", [
    ("Renal- HD/ UF today w/ goal of 1.8L UF.", "UF", "LOCATION", True),
    ("s/p two stents to RCA. pt was vacationing", "RCA", "HOSPITAL", True),
    # a state code, a word that can name a place, a name, another label
    ("LIVES IN NH WITH SON", "NH", "LOCATION", False),
    # a state code that is clinical letters, unless it reads as a state
    ("GB removal, AAA repair, MI 1992. no etoh", "MI", "STATE", True),
    ("delirious, CT showed an extension of the fluid", "CT", "STATE", True),
    ("WIFE WENT HOME TO NH TONOC", "NH", "STATE", True),
    ("old records from Annapolis, MD. contin", "MD", "STATE", False),
    ("moved back from MI last year", "MI", "STATE", False),
    ("1 Main St, Concord NH 03301", "NH", "STATE", False),
    ("DAUGHTER IS AT THE BAY, # ON FRONT OF CHART", "BAY", "LOCATION", False),
    ("transferred to RJ for cath", "RJ", "HOSPITAL", False),
    ("Dr. Rca saw pt", "Rca", "DOCTOR", False),
])
def test_a_place_span_that_is_one_clinical_abbreviation_is_dropped(text, value, label,
                                                                    dropped):
    start = text.index(value)
    span = PhiSpan(start, start + len(value), label, "crf", 0.5)
    assert _clinical_letters_alone(text, span) is dropped


def test_a_piece_of_a_url_is_not_propagated_to_the_word_standing_alone():
    text = ("REGISTER FOR THE PATIENT PORTAL AT HTTP://PORTAL.EXAMPLEHEALTH.ORG/CHART. "
            "SON KOWALCZYK AWARE; KOWALCZYK TO CALL")
    tokens = tuple(tokenize(text))
    words = [t.text for t in tokens]
    kinds: list[str | None] = [None] * len(tokens)
    viterbi = ["O"] * len(tokens)
    url = [i for i, w in enumerate(words) if w == "PORTAL"][1]  # inside the URL
    kinds[url], viterbi[url] = "URL", "I-URL"
    name = words.index("KOWALCZYK")
    kinds[name], viterbi[name] = "RELATIVE", "B-RELATIVE"
    _propagate(tokens, kinds, [0.9] * len(tokens), viterbi)
    marked = [i for i, k in enumerate(kinds) if k is not None]
    assert marked == [url, name, len(words) - 3]


@pytest.mark.parametrize("text,place,kept", [
    ("RIGHT IJ LINE TIP AT THE CAVOATRIAL JUNCTION.", "CAVOATRIAL JUNCTION", False),
    ("Lives in Grand Junction with wife", "Grand Junction", True),
    ("Moved to Carson City last year", "Carson City", True),
    ("Transferred from Bettendorf today", "Bettendorf", True),
])
def test_an_anatomical_phrase_is_no_place_but_a_town_is(text, place, kept):
    tokens = tuple(tokenize(text))
    start = text.index(place)
    kinds: list[str | None] = ["LOCATION" if start <= t.start < start + len(place)
                               else None for t in tokens]
    _drop_clinical_places(tokens, kinds)
    assert any(k is not None for k in kinds) is kept


def _widened(rule, text: str, name: str) -> str:
    """What ``rule`` makes of ``name`` marked in ``text``: first to last marked."""
    tokens = tuple(tokenize(text))
    start = text.index(name)
    kinds: list[str | None] = ["DOCTOR" if start <= t.start < start + len(name)
                               else None for t in tokens]
    rule(tokens, kinds, [0.5] * len(tokens))
    marked = [t for t, k in zip(tokens, kinds) if k is not None]
    return text[marked[0].start:marked[-1].end]


@pytest.mark.parametrize("text,name,widened", [
    ("Sean O'Brien had Epley at Boston Medical", "O'Brien", "Sean O'Brien"),
    ("ROSE DELGADO 94 YO WITH NEW AFIB", "DELGADO", "ROSE DELGADO"),
    ("Will Smith to call back", "Smith", "Will Smith"),  # a common-word first name
    ("WILL SMITH TO CALL BACK", "SMITH", "SMITH"),  # ... in capitals says too little
    ("Foley Smith removed", "Smith", "Smith"),  # no listed first name
    ("Sean  O'Brien aware", "O'Brien", "O'Brien"),  # not one space apart
    ("Sean SMITH aware", "SMITH", "SMITH"),  # not written in the same case
    ("called and Drs Ferullo and Saeed in", "Ferullo", "Ferullo"),  # a title
])
def test_a_first_name_before_a_marked_name_is_marked_too(text, name, widened):
    assert _widened(_widen_to_first_names, text, name) == widened


@pytest.mark.parametrize("text,name,widened", [
    ("patient Candace Oyelowo-Price had", "Price", "Oyelowo-Price"),
    ("PEG for Rivka Shapiro-Goldfarb", "Rivka Shapiro", "Rivka Shapiro-Goldfarb"),
    ("NOTIFIED DR SMITH-AWARE OF LABS", "SMITH", "SMITH"),  # an English word
    ("FROM JONES-NEW ORDERS", "JONES", "JONES"),
    ("Kessler-mother at bedside", "Kessler", "Kessler"),  # a kin word, another case
])
def test_the_other_half_of_a_hyphenated_name_is_marked_too(text, name, widened):
    assert _widened(_widen_over_hyphens, text, name) == widened


@pytest.mark.parametrize("text,name,widened", [
    ("O'Sullivan, Padraig - MRN 00482913", "O'Sullivan", "O'Sullivan, Padraig"),
    ("TRAN, LINDA, 45F", "TRAN", "TRAN, LINDA"),
    ("Called Dr. Jones, Cardiology, re: plan", "Jones", "Jones"),  # a word
    ("Jones, RN - aware", "Jones", "Jones"),  # a staff title
    ("Smith, Mary said", "Smith", "Smith"),  # the name goes on: not a list's
    ("was white, michael discharged", "michael", "white, michael"),  # a surname
    ("pupils equal, michael aware", "michael", "michael"),  # no listed surname
    ("RLQ PAIN, ALVARADO SCORE 7", "ALVARADO", "ALVARADO"),  # capitals, an eponym
])
def test_a_given_name_after_a_marked_surname_and_a_comma_is_marked(text, name, widened):
    assert _widened(_widen_to_given_names, text, name) == widened


def test_a_widened_hyphenated_name_is_one_span():
    text = "your patient Candace Oyelowo-Price had a biopsy"
    tagger = PhiTagger.from_config(TaggerConfig(detectors=("crf",)))
    spans = [text[s.start:s.end] for s in tagger.tag(
        ClinicalDocument(doc_id="q", text=text, source="query")).spans]
    assert "Candace Oyelowo-Price" in spans


@pytest.mark.parametrize("text,region,kept", [
    ("Japanese encephalitis vaccine for a trip to rural Asia", "rural Asia", False),
    ("screening in a pregnant woman from Latin America", "Latin America", False),
    ("ANOTHER SON WHO IS IN EUROPE AT PRESENT", "EUROPE", False),
    ("immigrated from Sub-Saharan Africa in 2010", "Sub-Saharan Africa", False),
    ("daughter Asia at bedside", "Asia", True),
    ("sugarcane worker from Nicaragua, what workup", "Nicaragua", False),
    ("Malarone vs doxy for a 3 wk safari in Kenya", "Kenya", False),
    ("daughter Kenya called", "Kenya", True),            # a name after a kin word
    ("moved back from Georgia in May", "Georgia", True),  # also a US state
    ("lives in Lebanon with wife", "Lebanon", True),      # also US towns
    ("Dr. Africa called back", "Africa", True),
    ("moved to Asheville with son", "Asheville", True),
])
def test_a_continent_or_world_region_is_no_place_but_a_name_stays(text, region, kept):
    """Regions larger than a state are not PHI; after a kin word or title a name."""
    tokens = tuple(tokenize(text))
    start = text.index(region)
    kinds: list[str | None] = ["LOCATION" if start <= t.start < start + len(region)
                               else None for t in tokens]
    _drop_world_regions(tokens, kinds)
    assert any(k is not None for k in kinds) is kept


def test_the_samples_keep_their_portal_and_their_cavoatrial_junction():
    """Found by a new user in the bundled samples: a URL's word replaced
    everywhere, an anatomical phrase replaced by two town names."""
    root = os.path.join(os.path.dirname(__file__), "..", "samples")
    texts = {}
    for path in ("gold.jsonl", "hl7/gold.jsonl"):
        with open(os.path.join(root, path), encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                texts[record["id"]] = record["text"]
    tagger = PhiTagger.from_config(TaggerConfig())
    for doc_id, word in (("synth-2-000005", "PATIENT PORTAL"),
                         ("SYN0000000C000004-2", "CAVOATRIAL JUNCTION")):
        text = texts[doc_id]
        spans = tagger.tag(ClinicalDocument(doc_id=doc_id, text=text,
                                            source="jsonl")).spans
        start = text.index(word)
        assert not [s for s in spans if s.start < start + len(word) and start < s.end]
    text = texts["synth-2-000005"]
    url = text.index("HTTP://")
    tagged = tagger.tag(ClinicalDocument(doc_id="u", text=text, source="jsonl"))
    assert [s for s in tagged.spans if s.start == url and s.label == "URL"]


def test_a_walk_over_the_marked_tokens_sees_what_a_rule_marks_ahead():
    """``bio.marked``: the rules after decoding walk the marked tokens only, and a
    kind set or cleared ahead of the walk is read when the walk gets there."""
    from deid_pipeline.tagger.bio import marked

    kinds = [None, "DATE", None, "DOCTOR", "DOCTOR", None]
    seen = []
    for t in marked(kinds):
        seen.append(t)
        if t == 1:
            kinds[2], kinds[3] = "DATE", None  # one marked ahead, one cleared
    assert seen == [1, 2, 4]
    assert list(marked([])) == [] and list(marked([None, None])) == []
