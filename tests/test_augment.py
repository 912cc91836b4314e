"""Surrogate copies of annotated notes for training (issue 9, item 2)."""

from __future__ import annotations

import dataclasses

from deid_pipeline.training.augment import augmented_copy, with_augmented_copies
from deid_pipeline.training.crf import TrainOptions, train_model


def _disjoint(doc) -> bool:
    spans = sorted(doc.gold, key=lambda s: s.start)
    return all(a.end <= b.start for a, b in zip(spans, spans[1:]))


def _annotated(docs, n=40):
    return [d for d in docs if len(d.gold) >= 3 and _disjoint(d)][:n]


def test_when_gold_spans_overlap_then_copy_keeps_the_first_and_covers_the_rest(
        physionet_docs):
    doc = next(d for d in physionet_docs if d.gold and not _disjoint(d))
    copy = augmented_copy(doc, 1)
    assert 0 < len(copy.gold) < len(doc.gold)
    spans = copy.gold
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))


def test_when_note_copied_then_text_between_spans_kept_and_gold_points_at_surrogates(
        physionet_docs):
    for doc in _annotated(physionet_docs):
        copy = augmented_copy(doc, 1)
        assert len(copy.gold) == len(doc.gold)
        pieces_old, pieces_new = [], []
        cur_old = cur_new = 0
        for old, new in zip(sorted(doc.gold, key=lambda s: s.start), copy.gold):
            assert old.label == new.label
            pieces_old.append(doc.text[cur_old:old.start])
            pieces_new.append(copy.text[cur_new:new.start])
            assert copy.text[new.start:new.end].strip()
            cur_old, cur_new = old.end, new.end
        assert pieces_old == pieces_new
        assert doc.text[cur_old:] == copy.text[cur_new:]


def test_when_note_copied_then_names_and_places_are_other_strings(physionet_docs):
    changed = total = 0
    for doc in _annotated(physionet_docs, 200):
        copy = augmented_copy(doc, 1)
        for old, new in zip(sorted(doc.gold, key=lambda s: s.start), copy.gold):
            if old.label in ("DOCTOR", "RELATIVE", "PATIENT", "LOCATION"):
                total += 1
                changed += (doc.text[old.start:old.end].lower()
                            != copy.text[new.start:new.end].lower())
    assert total > 50 and changed / total > 0.95


def test_when_copied_twice_then_same_bytes_and_copies_differ(physionet_docs):
    doc = next(d for d in _annotated(physionet_docs)
               if any(s.label == "DOCTOR" for s in d.gold))
    assert augmented_copy(doc, 1) == augmented_copy(doc, 1)
    assert augmented_copy(doc, 1).text != augmented_copy(doc, 2).text
    assert augmented_copy(doc, 1).doc_id == f"{doc.doc_id}#aug1"


def test_when_copies_made_then_synthetic_and_unannotated_notes_are_not_copied(
        physionet_docs):
    real = _annotated(physionet_docs, 3)
    blank = dataclasses.replace(real[0], doc_id="blank", gold=())
    synthetic = dataclasses.replace(real[1], doc_id="syn", source="synthetic")
    out = list(with_augmented_copies([*real, blank, synthetic], 2))
    assert len(out) == 5 + 2 * 3
    assert [d.doc_id for d in out[5:8]] == [f"{d.doc_id}#aug1" for d in real]


def test_when_trained_with_augment_then_more_documents_and_reproducible(
        physionet_docs, tmp_path):
    docs = _annotated(physionet_docs, 12)
    options = TrainOptions(max_iterations=5, augment=2)
    a = train_model(docs, str(tmp_path / "a.crfsuite"), options, progress=None)
    b = train_model(docs, str(tmp_path / "b.crfsuite"), options, progress=None)
    plain = train_model(docs, str(tmp_path / "c.crfsuite"),
                        TrainOptions(max_iterations=5), progress=None)
    assert a.documents == 3 * len(docs) and plain.documents == len(docs)
    assert a.sha256 == b.sha256 != plain.sha256
    # train --pools whole: the copies draw from every list, so other strings.
    whole = dataclasses.replace(options, pools="whole")
    w1 = train_model(docs, str(tmp_path / "w1.crfsuite"), whole, progress=None)
    w2 = train_model(docs, str(tmp_path / "w2.crfsuite"), whole, progress=None)
    assert w1.sha256 == w2.sha256 != a.sha256


def test_when_note_copied_then_names_and_places_come_from_the_training_half(
        physionet_docs):
    import re

    from deid_pipeline.surrogates.halves import PoolHalf, half_of

    checked = 0
    for doc in _annotated(physionet_docs, 200):
        copy = augmented_copy(doc, 1)
        for old, new in zip(sorted(doc.gold, key=lambda s: s.start), copy.gold):
            if old.label not in ("DOCTOR", "RELATIVE", "PATIENT"):
                continue
            kept = {w.casefold() for w in re.findall(r"[A-Za-z]+",
                                                       doc.text[old.start:old.end])}
            for word in re.findall(r"[A-Za-z]{2,}", copy.text[new.start:new.end]):
                if word.casefold() not in kept:  # titles such as "Dr" stay
                    checked += 1
                    assert half_of(word) is PoolHalf.TRAINING
    assert checked > 100


def test_copies_are_told_from_their_notes_by_id(physionet_docs):
    from deid_pipeline.training.augment import is_copy

    doc = _annotated(physionet_docs, 1)[0]
    assert is_copy(augmented_copy(doc, 2)) and not is_copy(doc)
    assert not is_copy(dataclasses.replace(doc, doc_id="#aug3"))
    assert not is_copy(dataclasses.replace(doc, doc_id=f"{doc.doc_id}#augx"))


def test_when_copy_words_hidden_then_only_the_copies_lose_them_and_bytes_reproduce(
        physionet_docs, tmp_path):
    from deid_pipeline.training.augment import is_copy
    from deid_pipeline.training.crf import training_sequences

    docs = _annotated(physionet_docs, 12)
    both = list(with_augmented_copies(docs[:2], 1))
    plain = list(training_sequences(both))
    hidden = list(training_sequences(both, hide_words=is_copy))
    assert plain[:2] == hidden[:2]
    for (feats, tags), (kept, _) in zip(plain[2:], hidden[2:]):
        phi = [i for i, t in enumerate(tags) if t != "O"]
        assert phi and all(any(f.startswith("w=") for f in feats[i]) for i in phi)
        assert not any(f.startswith(("w=", "p3=")) for i in phi for f in kept[i])
        assert sum(map(len, kept)) < sum(map(len, feats))
    options = TrainOptions(max_iterations=5, augment=1, hide_copy_words=True)
    a = train_model(docs, str(tmp_path / "a.crfsuite"), options, progress=None)
    b = train_model(docs, str(tmp_path / "b.crfsuite"), options, progress=None)
    shown = train_model(docs, str(tmp_path / "c.crfsuite"),
                        dataclasses.replace(options, hide_copy_words=False), None)
    assert a.sha256 == b.sha256 != shown.sha256


def test_when_rare_words_hidden_then_a_copys_rare_clinical_word_is_unspelt_too(
        physionet_docs):
    from deid_pipeline.tokenizer import tokenize
    from deid_pipeline.training.augment import is_copy
    from deid_pipeline.training.crf import training_sequences

    doc = _annotated(physionet_docs, 1)[0]
    copy = augmented_copy(doc, 1)
    gold = [(s.start, s.end) for s in copy.gold]
    word = next(t.text.lower() for t in tokenize(copy.text) if t.text.isalpha()
                and len(t.text) > 3 and not any(a < t.end and t.start < b
                                                for a, b in gold))
    (_, _), (plain, _) = training_sequences([doc, copy], hide_words=is_copy)
    (_, _), (rare, _) = training_sequences([doc, copy], hide_words=is_copy,
                                           rare_words=frozenset({word}))
    spelt = f"w={word}"
    assert any(spelt in row for row in plain)
    assert not any(spelt in row for row in rare)
    original = next(training_sequences([doc], hide_words=is_copy,
                                       rare_words=frozenset({word})))[0]
    assert any(spelt in row for row in original)


def test_when_a_spanish_site_trains_with_copies_then_they_take_spanish_surrogates():
    import datetime
    import re

    from deid_pipeline.label_maps import load_label_map
    from deid_pipeline.model import ClinicalDocument, PhiSpan
    from deid_pipeline.surrogates.es.names import plain, spanish_names

    load_label_map("meddocan")
    text = ("Nombre: Lucía.\nApellidos: Ferrer Abad.\nFecha de Ingreso: 03/04/2019.\n"
            "Mujer de 47 años ingresa el 03/04/2019 y se va de alta el 15/04/2019.")
    gold = []
    for value, label in (("Lucía", "NOMBRE_SUJETO_ASISTENCIA"),
                         ("Ferrer Abad", "NOMBRE_SUJETO_ASISTENCIA"),
                         ("03/04/2019", "FECHAS")):
        start = text.index(value)
        gold.append(PhiSpan(start, start + len(value), label, "gold"))
    start = text.rindex("15/04/2019")
    gold.append(PhiSpan(start, start + 10, "FECHAS", "gold"))
    doc = ClinicalDocument(doc_id="caso-1", text=text, source="brat", gold=tuple(gold))

    names = spanish_names()
    known = {plain(w) for w in (*names.first.words, *names.last.words)}
    for copy in range(1, 6):
        out = augmented_copy(doc, copy, language="es")
        values = {s.label: [] for s in out.gold}
        for span in out.gold:
            values[span.label].append(out.text[span.start:span.end])
        words = [w for v in values["NOMBRE_SUJETO_ASISTENCIA"] for w in v.split()]
        assert words and all(plain(w) in known for w in words), words
        first, last = (datetime.datetime.strptime(v, "%d/%m/%Y")
                       for v in values["FECHAS"])
        assert (last - first).days == 12  # read and written day first
        assert re.fullmatch(r"\d\d/\d\d/\d{4}", values["FECHAS"][0])
