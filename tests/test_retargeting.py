"""A site's own labels and language: a Spanish MEDDOCAN model from train to run."""

import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.evaluation.brat import load_brat_corpus, parse_ann
from deid_pipeline.evaluation.span_scores import span_scores
from deid_pipeline.label_maps import load_label_map
from deid_pipeline.labels import check_label
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.crf_decoder import ModelFormatError
from deid_pipeline.tagger.crf_model import load_model, model_facts, model_id
from deid_pipeline.tagger.detectors import TaggerConfig, create
from deid_pipeline.tagger.model_metadata import MAGIC, read_metadata
from deid_pipeline.tagger.rules.es import SpanishRuleDetector
from deid_pipeline.tagger.spanish import document_features
from deid_pipeline.tagger.tagging import PhiTagger
from deid_pipeline.tokenizer import tokenize
from deid_pipeline.training.crf import TrainOptions, train_model

KEY = b"k" * 32
CASES = 12


@pytest.fixture(scope="module")
def train_dir(meddocan_dir, tmp_path_factory):
    """The first CASES MEDDOCAN training cases (a site's first afternoon)."""
    out = tmp_path_factory.mktemp("brat")
    for name in sorted(os.listdir(f"{meddocan_dir}/train"))[:2 * CASES]:
        shutil.copy(f"{meddocan_dir}/train/{name}", out)
    return str(out)


@pytest.fixture(scope="module")
def spanish_model(train_dir, tmp_path_factory):
    label_map = load_label_map("meddocan")
    docs = load_brat_corpus(train_dir, check_label)
    path = str(tmp_path_factory.mktemp("model") / "es.crfsuite")
    train_model(docs, path, TrainOptions(max_iterations=30), progress=None,
                language="es", label_map=label_map)
    return path


def test_when_trained_with_language_and_map_then_the_model_file_says_both(
        spanish_model):
    with open(spanish_model, "rb") as fh:
        meta = read_metadata(fh.read())
    assert meta.language == "es"
    assert meta["label_map"]["labels"]["SEXO_SUJETO_ASISTENCIA"] == "keep"
    model = load_model(spanish_model)
    assert model.language == "es" and model.default_bias == 0.0
    assert "B-NOMBRE_SUJETO_ASISTENCIA" in model.labels


def test_a_models_facts_are_those_its_loading_gives_without_its_weights(
        spanish_model, tmp_path):
    model = load_model(spanish_model)
    facts = model_facts(spanish_model)
    assert (facts.sha256, facts.metadata, facts.default_bias) == (
        model.sha256, model.metadata, model.default_bias)
    assert model_id(spanish_model) == model.model_id
    # A fresh process (a run's driver) learns the site's labels from the
    # facts alone and builds no decoder.
    script = (
        "import sys\n"
        "from deid_pipeline import labels\n"
        "from deid_pipeline.tagger import crf_model\n"
        "assert not labels.is_site_label('NOMBRE_SUJETO_ASISTENCIA')\n"
        "crf_model.model_language(sys.argv[1]); crf_model.default_bias(sys.argv[1])\n"
        "assert labels.is_site_label('NOMBRE_SUJETO_ASISTENCIA')\n"
        "assert not crf_model._MODELS\n"
    )
    subprocess.run([sys.executable, "-c", script, spanish_model], check=True)
    not_a_model = tmp_path / "notes.crfsuite"
    not_a_model.write_bytes(b"Patient seen today. " * 20)
    with pytest.raises(ModelFormatError):
        model_facts(str(not_a_model))


def test_when_english_model_trained_then_no_trailer(tmp_path, physionet_docs):
    path = str(tmp_path / "en.crfsuite")
    train_model(physionet_docs[:20], path, TrainOptions(max_iterations=3),
                progress=None)
    with open(path, "rb") as fh:
        data = fh.read()
    assert not data.endswith(MAGIC) and read_metadata(data) == {}


def test_when_spanish_model_then_spanish_rules_and_no_gazetteer_run(
        spanish_model):
    default = create(TaggerConfig(model_path=spanish_model))
    assert [d.name for d in default] == ["rules", "dictionary", "crf"]
    assert isinstance(default[0], SpanishRuleDetector)  # not the English rules
    assert "TERRITORIO" in default[0].labels and "ZIP" not in default[0].labels
    asked = create(TaggerConfig(("rules", "crf"), model_path=spanish_model))
    assert [d.name for d in asked] == ["rules", "crf"]
    assert isinstance(asked[0], SpanishRuleDetector)


def test_when_header_line_then_the_key_before_the_colon_is_a_feature():
    text = "Nombre:  Ernesto.\nFecha de nacimiento: 12 de marzo de 2018.\n"
    tokens = tokenize(text)
    feats = document_features(text, tokens)
    ernesto = next(i for i, t in enumerate(tokens) if t.text == "Ernesto")
    assert {"key=nombre", "ac=1", "gz=fn"} <= set(feats[ernesto])
    marzo = next(i for i, t in enumerate(tokens) if t.text == "marzo")
    assert {"MONTH", "keys=fecha de nacimiento"} <= set(feats[marzo])
    assert "key=nombre" not in feats[marzo]  # a key ends with its line


def test_when_date_written_otherwise_then_it_shares_the_date_chunk_feature():
    text = ("TC (11/10/01), el 22-7-04, en diciembre-08, y el 12/03/2016; "
            "ratio 1/2048, versión 3.5.6 y su sobrino.")
    tokens = tokenize(text)
    feats = document_features(text, tokens)

    def has(word: str, feature: str) -> bool:
        return feature in feats[next(i for i, t in enumerate(tokens)
                                     if t.text == word)]

    for word in ("11", "22", "diciembre", "2016"):
        assert has(word, "DATECHUNK"), word
    for word in ("2048", "3", "ratio"):
        assert not has(word, "DATECHUNK"), word
    assert has("11", "csh=dd/dd/dd")  # the brackets around are not the shape
    assert has("sobrino", "KIN") and not has("ratio", "KIN")


def test_when_run_on_a_dev_case_then_site_labels_and_surrogates_by_category(
        spanish_model, meddocan_dir):
    docs = load_brat_corpus(f"{meddocan_dir}/dev", check_label)[:3]
    tagger = PhiTagger.from_config(TaggerConfig(model_path=spanish_model))
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    for doc in docs:
        doc = ClinicalDocument(doc.doc_id, doc.text, "jsonl")
        tagged = tagger.tag(doc)
        labels = {s.label for s in tagged.spans}
        assert "NOMBRE_SUJETO_ASISTENCIA" in labels and "FECHAS" in labels
        result = rewriter.guard(tagged, rewriter.rewrite(tagged))
        replaced = {r.span.label for r in result.replacements}
        assert "SEXO_SUJETO_ASISTENCIA" not in replaced  # keep: not rewritten
        for r in result.replacements:  # ages under 90 stand as they are
            assert (r.replacement != r.original
                    or r.span.label == "EDAD_SUJETO_ASISTENCIA")
        kept = [s for s in tagged.spans if s.label == "SEXO_SUJETO_ASISTENCIA"]
        for s in kept:  # a kept value stands where it stood, in the output too
            assert doc.text[s.start:s.end] in result.text


def test_when_span_scores_then_they_are_the_official_scorers():
    # Gold: two name parts and a date; system: the name whole (merged match),
    # the date with the wrong label (subtask 2 only) and one false positive.
    load_label_map("meddocan")  # its labels valid in spans, whatever ran before
    text = "Nombre: Ernesto Rivera. Fecha: 03/03/1946. Sexo: H."
    gold = (PhiSpan(8, 15, "NOMBRE_SUJETO_ASISTENCIA", "gold"),
            PhiSpan(16, 22, "NOMBRE_SUJETO_ASISTENCIA", "gold"),
            PhiSpan(31, 41, "FECHAS", "gold"))
    pred = (PhiSpan(8, 22, "NOMBRE_SUJETO_ASISTENCIA", "crf"),
            PhiSpan(31, 41, "EDAD_SUJETO_ASISTENCIA", "crf"),
            PhiSpan(49, 50, "SEXO_SUJETO_ASISTENCIA", "crf"))
    doc = ClinicalDocument("d", text, "brat", gold=gold)
    s1, strict, merged = span_scores([doc], {"d": pred})
    assert (s1.tp, s1.fp, s1.fn) == (0, 3, 3)
    assert (strict.tp, strict.fp, strict.fn) == (1, 2, 2)
    # Merged: gold 8-15 + 16-22 join into 8-22 (a blank between): both parts
    # and the system's whole name count, as in scorer/classes.py.
    assert (merged.tp, merged.fp, merged.fn) == (2, 1, 0)


def test_when_export_brat_then_the_ann_reads_back_as_the_runs_spans(
        spanish_model, meddocan_dir, tmp_path, caplog):
    from deid_pipeline.pipelines.cli import main

    caplog.set_level(logging.DEBUG, logger="deid_pipeline.pipelines.job")

    stems = ["S0004-06142005000700014-1", "S0004-06142005000900015-1"]
    cases = tmp_path / "cases.jsonl"
    with open(cases, "w", encoding="utf-8") as fh:
        for stem in stems:
            with open(f"{meddocan_dir}/train/{stem}.txt", encoding="utf-8",
                      newline="") as t:
                fh.write(json.dumps({"id": stem, "text": t.read()}) + "\n")
    out, ann = tmp_path / "out", tmp_path / "ann"
    assert main(["run", "--input", str(cases), "--input-format", "jsonl",
                 "--model", spanish_model, "--mode", "tag", "--ephemeral-key",
                 "--output", str(out)]) == 0
    # run's debug log names the detectors that ran, the Spanish model's.
    plan = [r.getMessage() for r in caplog.records if "detectors" in r.getMessage()]
    assert len(plan) == 1 and "; detectors rules,dictionary,crf;" in plan[0]
    assert main(["export-brat", "--extract", str(out), "--output", str(ann),
                 "--texts", f"{meddocan_dir}/train"]) == 0
    # run without --bias tags at the bias the model records (0 by default).
    tagger = PhiTagger.from_config(TaggerConfig(model_path=spanish_model, bias=0.0))
    for stem in stems:
        text = (ann / f"{stem}.txt").read_text(encoding="utf-8")
        spans = parse_ann((ann / f"{stem}.ann").read_text(encoding="utf-8"), text,
                          stem, check_label)
        expected = tagger.tag(ClinicalDocument(stem, text, "jsonl")).spans
        assert [(s.start, s.end, s.label) for s in spans] == [
            (s.start, s.end, s.label) for s in expected]
        assert oct(os.stat(ann / f"{stem}.ann").st_mode & 0o777) == "0o600"


def test_when_train_and_evaluate_commands_then_site_model_and_span_scores(
        train_dir, tmp_path, capsys):
    from deid_pipeline.pipelines.cli import main

    model = str(tmp_path / "m.crfsuite")
    assert main(["train", "--corpus", f"brat:{train_dir}", "--language", "es",
                 "--label-map", "meddocan", "--max-iterations", "5",
                 "--output", model]) == 0
    assert load_model(model).language == "es"
    capsys.readouterr()
    assert main(["evaluate", "--corpus", f"brat:{train_dir}", "--label-map",
                 "meddocan", "--model", model]) == 0
    out = capsys.readouterr().out
    assert "(MEDDOCAN subtasks 1 and 2), bias 0" in out
    assert "subtask2 merged" in out


def test_when_brat_labels_unknown_without_a_map_then_train_refuses(
        train_dir, tmp_path, capsys, monkeypatch):
    from deid_pipeline import labels
    from deid_pipeline.pipelines.cli import main

    monkeypatch.setattr(labels, "_SITE_CATEGORY", {})
    assert main(["train", "--corpus", f"brat:{train_dir}", "--output",
                 str(tmp_path / "m.crfsuite")]) == 2
    assert "unknown PHI label" in capsys.readouterr().err


def test_when_a_site_label_value_stays_in_the_output_then_the_guard_names_the_label():
    from deid_pipeline import leak_guard
    from deid_pipeline.model import DeidentifiedDocument, Replacement, TaggedDocument

    load_label_map("meddocan")
    text = "Nombre: Ernesto Rivera. Fecha de ingreso: 2016. Sexo: H."
    name = PhiSpan(8, 22, "NOMBRE_SUJETO_ASISTENCIA", "crf")
    year = PhiSpan(42, 46, "FECHAS", "crf")  # a bare year: a date, kept
    tagged = TaggedDocument(ClinicalDocument("d", text, "jsonl"), (name, year))
    # A rewrite that left the name's original in place further on.
    out = "Nombre: Lynn James. Ernesto Rivera. Fecha de ingreso: 2016. Sexo: H."
    result = DeidentifiedDocument(
        "d", "p", "jsonl", out, None,
        (Replacement(name, "Ernesto Rivera", "Lynn James"),
         Replacement(year, "2016", "2016")))
    with pytest.raises(leak_guard.LeakDetectedError,
                       match=r"NOMBRE_SUJETO_ASISTENCIA x1\b"):
        leak_guard.check(tagged, result, "safe-harbor")
    clean = DeidentifiedDocument("d", "p", "jsonl", out.replace(
        " Ernesto Rivera.", ""), None, result.replacements)
    assert leak_guard.check(tagged, clean, "safe-harbor") is clean


def test_when_a_kept_kinship_span_runs_into_a_name_then_it_is_masked_not_kept():
    """``madre Carmen`` under a keep label: the name must not stand in the output."""
    from deid_pipeline.model import TaggedDocument

    load_label_map("meddocan")
    text = "Acude con su madre Carmen y su Padre. Mujer de 34 años."

    def span(value: str, label: str) -> PhiSpan:
        start = text.index(value)
        return PhiSpan(start, start + len(value), label, "crf", 0.9)

    doc = ClinicalDocument("es1", text, "jsonl")
    tagged = TaggedDocument(doc, (span("madre Carmen", "FAMILIARES_SUJETO_ASISTENCIA"),
                                  span("Padre", "FAMILIARES_SUJETO_ASISTENCIA"),
                                  span("Mujer", "SEXO_SUJETO_ASISTENCIA")))
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    result = rewriter.guard(tagged, rewriter.rewrite(tagged))
    assert "Carmen" not in result.text
    assert "su Padre." in result.text and "Mujer de 34" in result.text  # kept


def test_when_evaluate_with_a_spanish_model_then_it_names_the_detectors_that_ran(
        spanish_model, train_dir, tmp_path, capsys):
    import argparse

    from deid_pipeline.evaluation import cross_validation

    one = tmp_path / "one"
    one.mkdir()
    stem = sorted(os.listdir(train_dir))[0][:-4]
    for ext in (".txt", ".ann"):
        shutil.copy(f"{train_dir}/{stem}{ext}", one)
    parser = argparse.ArgumentParser()
    cross_validation.add_subcommand(parser.add_subparsers())
    out = tmp_path / "scores.json"
    args = parser.parse_args(["evaluate", "--corpus", f"brat:{one}", "--label-map",
                              "meddocan", "--model", spanish_model,
                              "--json", str(out)])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "detectors rules,dictionary,crf," in printed
    assert "gazetteer" not in printed
    assert json.loads(out.read_text())["detectors"] == ["rules", "dictionary", "crf"]
