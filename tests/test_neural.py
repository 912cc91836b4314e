"""The neural second view: gradients, determinism, weights, the ensemble's rule."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from deid_pipeline.tagger.crf_neural import (
    EnsembleDetector,
    MixRule,
    from_config,
    mix_outside,
)
from deid_pipeline.tagger.neural import (
    CONTEXT,
    NeuralModel,
    Vocabulary,
    WeightsFormatError,
    encode,
    forward,
    load_neural,
    load_weights,
    save_weights,
    weights_beside,
)
from deid_pipeline.tokenizer import tokenize
from deid_pipeline.training.neural import (
    NeuralOptions,
    init_weights,
    loss_and_gradients,
    train_neural,
)

TINY = NeuralOptions(word_dim=4, char_dim=3, char_filters=5, hidden=6, epochs=1,
                     batch_tokens=300)


@pytest.fixture(scope="module")
def dev_notes(physionet_docs):
    """A few development notes with PHI (never sealed patients)."""
    from deid_pipeline.evaluation.sealed import split

    dev, _ = split(physionet_docs)
    return [d for d in dev if d.gold][:6]


@pytest.fixture(scope="module")
def trained(dev_notes, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("neural") / "tiny.neural.npz")
    result = train_neural(dev_notes, path, TINY, progress=None)
    return path, result


def test_when_gradients_are_checked_then_they_match_finite_differences():
    text = "Pt seen by Dr. Smith on 3/4.\nSon John called 555-1234 re: MRN 0042."
    words = ["<pad>", "<unk>", "pt", "seen", "by", "dr", ".", "on", "0"]
    chars = ["\0", "\1", *sorted(set(text))]
    weights = init_weights(words, chars, ["O", "DATE", "DOCTOR"], TINY)
    rng = np.random.default_rng(1)
    params = {k: v.astype(np.float64) + 0.1 * rng.standard_normal(v.shape)
              for k, v in weights.arrays().items()}
    inputs = encode(Vocabulary(words, chars),
                    [(text, tokenize(text)), (text[:12], tokenize(text[:12]))])
    inputs = dataclasses.replace(inputs, flags=inputs.flags.astype(np.float64))
    targets = rng.integers(0, 3, len(inputs.words))
    _, grads = loss_and_gradients(params, inputs, targets)
    for name, array in params.items():
        for _ in range(8):
            index = tuple(int(rng.integers(0, n)) for n in array.shape)
            old = array[index]
            array[index] = old + 1e-6
            up, _ = loss_and_gradients(params, inputs, targets)
            array[index] = old - 1e-6
            down, _ = loss_and_gradients(params, inputs, targets)
            array[index] = old
            numeric = (up - down) / 2e-6
            expected = pytest.approx(numeric, rel=1e-4, abs=1e-9)
            assert grads[name][index] == expected, name


def test_when_trained_twice_then_the_weights_are_the_same_bytes(dev_notes, trained,
                                                                 tmp_path):
    path, result = trained
    again = train_neural(dev_notes, str(tmp_path / "again.npz"), TINY, progress=None)
    assert again.sha256 == result.sha256
    with open(path, "rb") as a, open(again.path, "rb") as b:
        assert a.read() == b.read()


def test_when_weights_are_saved_and_loaded_then_nothing_changes(trained, tmp_path):
    path, _ = trained
    weights = load_weights(path)
    copy = str(tmp_path / "copy.npz")
    save_weights(weights, copy)
    back = load_weights(copy)
    assert (back.words, back.chars, back.labels, back.recipe) == (
        weights.words, weights.chars, weights.labels, weights.recipe)
    for name, array in weights.arrays().items():
        assert back.arrays()[name].dtype == np.float32
        np.testing.assert_array_equal(back.arrays()[name], array)
    assert back.labels[0] == "O"


def test_when_a_file_is_not_weights_then_loading_refuses_it(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(WeightsFormatError):
        load_weights(str(bad))


def test_when_corpus_notes_are_tagged_then_each_token_has_a_distribution(
        dev_notes, trained):
    path, _ = trained
    model = load_neural(path)
    for doc in dev_notes:
        tokens = tokenize(doc.text)
        probs = model.probabilities(doc.text, tokens)
        assert probs.shape == (len(tokens), len(model.labels))
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
        assert model.p_outside(doc.text, tokens).shape == (len(tokens),)


def test_when_notes_are_batched_then_each_reads_only_its_own_tokens(dev_notes,
                                                                    trained):
    model = load_neural(trained[0])
    docs = [(d.text, tokenize(d.text)) for d in dev_notes[:3]]
    batch = encode(model.vocabulary, docs)
    together = forward(model.params, batch)[batch.real]
    alone = np.concatenate([model.probabilities(t, toks) for t, toks in docs])
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-6)
    assert not batch.real[:CONTEXT].any()


def test_when_views_mix_then_the_rule_holds():
    crf = np.array([0.99, 0.2, 0.6, 0.001])
    neural = np.array([0.5, 0.9, 0.01, 0.002])
    np.testing.assert_allclose(mix_outside(crf, neural, MixRule.UNION),
                               np.minimum(crf, neural))
    mean = MixRule.MEAN
    np.testing.assert_allclose(mix_outside(crf, neural, mean, weight=0.0), crf)
    np.testing.assert_allclose(mix_outside(crf, neural, mean, weight=1.0), neural)
    middle = mix_outside(crf, neural, mean, weight=0.5)
    assert np.all(middle >= np.minimum(crf, neural) - 1e-12)
    assert np.all(middle <= np.maximum(crf, neural) + 1e-12)
    # Either view lowering its P(O) never raises the mix's (recall is monotone).
    assert np.all(mix_outside(crf, neural * 0.5, mean, weight=0.5) <= middle)
    with pytest.raises(ValueError):
        mix_outside(crf, neural, weight=1.5)
    # The veto is the mean wherever the neural view says O more than the CRF,
    # and the CRF's own P(O) where it says PHI more: it only takes marks away.
    veto = mix_outside(crf, neural, MixRule.VETO, weight=0.5)
    np.testing.assert_allclose(veto, np.maximum(crf, middle))
    assert np.all(veto >= crf)
    assert veto[2] == crf[2] and veto[1] > crf[1]


def test_when_the_neural_weight_is_zero_then_the_ensemble_is_the_crf(dev_notes,
                                                                     trained):
    from deid_pipeline.tagger.crf import CrfDetector
    from deid_pipeline.tagger.crf_model import load_model

    model = load_model()
    neural = load_neural(trained[0])
    crf = CrfDetector(model, -2.4)
    zero = EnsembleDetector(model, neural, -2.4, weight=0.0)
    union = EnsembleDetector(model, neural, -2.4, rule=MixRule.UNION)
    for doc in dev_notes:
        plain = crf.detect(doc)
        assert zero.detect(doc) == plain
        # The union marks every token the CRF marks (recall first).
        covered = {(s.start, s.end) for s in union.detect(doc)}
        for span in plain:
            assert any(a <= span.start and span.end <= b for a, b in covered)


def test_when_no_weights_lie_beside_the_model_then_crf_neural_says_so(tmp_path):
    from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH
    from deid_pipeline.tagger.detectors import TaggerConfig, registered

    assert "crf-neural" in registered()
    model = tmp_path / "m.crfsuite"
    with open(DEFAULT_MODEL_PATH, "rb") as fh:
        model.write_bytes(fh.read())
    assert weights_beside(str(model)) == str(tmp_path / "m.neural.npz")
    with pytest.raises(FileNotFoundError, match="neural weights"):
        from_config(TaggerConfig(("crf-neural",), str(model)))


@pytest.fixture
def model_with_weights(trained, tmp_path):
    """A copy of the shipped CRF model with the tiny weights beside it."""
    from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH

    model = tmp_path / "m.crfsuite"
    with open(DEFAULT_MODEL_PATH, "rb") as fh:
        model.write_bytes(fh.read())
    with open(trained[0], "rb") as fh:
        (tmp_path / "m.neural.npz").write_bytes(fh.read())
    return model


def test_when_weights_lie_beside_the_model_then_crf_neural_loads_them(
        model_with_weights):
    from deid_pipeline.tagger.detectors import TaggerConfig, create

    model = model_with_weights
    (detector,) = create(TaggerConfig(("crf-neural",), str(model), None))
    assert isinstance(detector, EnsembleDetector)
    assert isinstance(detector.neural, NeuralModel)
    assert detector.name == "crf" and "nn-" in detector.version
    # The measured rule and operating point, unless --bias says otherwise.
    assert detector.rule is MixRule.VETO and detector.weight == 0.2
    assert detector.bias == pytest.approx(-3.2)
    (given,) = create(TaggerConfig(("crf-neural",), str(model), -1.0))
    assert given.bias == -1.0


def test_when_tokens_start_or_end_lines_then_their_flags_say_so():
    from deid_pipeline.tagger.neural import token_flags

    text = "BP 120/80\nDr. Smith  aware\n\nMRN 42"
    tokens = tokenize(text)
    flags = token_flags(text, tokens)
    words = [t.text for t in tokens]
    before = [w for w, f in zip(words, flags[:, 5]) if f]
    after = [w for w, f in zip(words, flags[:, 6]) if f]
    assert before == ["BP", "Dr", "MRN"]
    assert after == ["80", "aware", "42"]
    assert flags[words.index("Smith"), 0] == 1 and flags[words.index("MRN"), 1] == 1
    assert flags[words.index("120"), 3] == 1 and flags[words.index("/"), 4] == 1


def test_when_a_fold_is_held_out_then_it_has_no_sealed_patient_nor_training_one(
        physionet_docs):
    from deid_pipeline.evaluation.sealed import is_sealed
    from deid_pipeline.evaluation.second_view import hold_out
    from deid_pipeline.training.train_neural import development_training_part

    held = hold_out(physionet_docs, 4, 5)
    trained_on = development_training_part(physionet_docs, 4, 5)
    assert held and trained_on
    assert not any(is_sealed(d) for d in held + trained_on)
    assert not {d.person_key for d in held} & {d.person_key for d in trained_on}
    # No fold (--development): every development note, still no sealed one.
    development = development_training_part(physionet_docs, None)
    assert set(map(id, held + trained_on)) == set(map(id, development))
    assert not any(is_sealed(d) for d in development)
    assert any(is_sealed(d) for d in physionet_docs)


def test_when_training_takes_development_then_both_commands_cut_the_corpus(
        corpus_dir):
    from deid_pipeline.evaluation.sealed import is_sealed
    from deid_pipeline.pipelines.cli import build_parser
    from deid_pipeline.training.train_neural import fold_corpora

    spec = f"physionet:{corpus_dir}"
    for command in ("train", "train-neural"):
        args = build_parser().parse_args([command, "--corpus", spec, "--output", "x",
                                          "--development"])
        assert args.development and args.hold_out_fold is None
    everything = fold_corpora([spec, "synthetic:2"], 0, "training", None)
    development = fold_corpora([spec, "synthetic:2"], 0, "training", None,
                               development=True)
    assert any(is_sealed(d) for d in everything)
    assert not any(is_sealed(d) for d in development)
    assert len(development) < len(everything)
    assert sum(d.doc_id.startswith("synth-") for d in development) == 2


def test_when_train_neural_runs_then_it_writes_weights_it_can_read(tmp_path, capsys):
    from deid_pipeline.pipelines.cli import build_parser

    out = str(tmp_path / "m.neural.npz")
    args = build_parser().parse_args(["train-neural", "--corpus", "synthetic:3",
                                      "--epochs", "1", "--output", out])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert load_neural(out).sha256 in printed
    assert "synthetic" in load_weights(out).recipe


def test_when_second_view_weighs_rules_then_each_rule_is_a_variant(dev_notes, trained):
    from deid_pipeline.evaluation.cross_validation import tag_at_biases
    from deid_pipeline.evaluation.second_view import variants
    from deid_pipeline.tagger.crf_model import resolve_path

    found = variants(resolve_path(None), trained[0], -2.4, [0.3],
                     rules=[MixRule.MEAN, MixRule.VETO])
    assert list(found) == ["crf", "neural", "mean:0.3", "veto:0.3", "union"]
    assert found["veto:0.3"].rule is MixRule.VETO
    # The neural view alone: the mean at weight 1, not a veto of the CRF.
    assert (found["neural"].rule, found["neural"].weight) == (MixRule.MEAN, 1.0)
    crf, veto = (tag_at_biases(dev_notes, (), resolve_path(None), [-2.4],
                               created=[found[k]]).spans[-2.4]
                 for k in ("crf", "veto:0.3"))
    # The veto only takes the CRF's marks away: every token it marks, the CRF marks.
    for a, b in zip(crf, veto):
        for span in b:
            assert any(s.start <= span.start and span.end <= s.end for s in a)


def test_when_evaluate_scores_crf_neural_then_it_names_both_views(
        trained, model_with_weights, capsys):
    from deid_pipeline.pipelines.cli import build_parser

    args = build_parser().parse_args(
        ["evaluate", "--corpus", "synthetic:3", "--model", str(model_with_weights),
         "--detectors", "rules,crf-neural"])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "model crf-" in printed
    assert f"+ {load_neural(trained[0]).model_id}" in printed
