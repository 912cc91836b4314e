"""The CRF detector: BIO <-> spans, loading a model, and biased tagging.

Everything that turns spans into per-token labels and back lives here, so
training, tagging and evaluation cannot disagree about a boundary
(nedap/deidentify's ``tagging_utils`` idea).

Tagging follows Carafe's recall/precision bias, made monotone by construction:
a token is PHI iff ``logit(P(O at t)) + bias < 0``, with ``P(O at t)`` the
token's marginal probability of the outside label. Bias 0 is (almost always)
the Viterbi decision; a lower bias marks a superset of the tokens, so recall
never drops when the bias is lowered. The label of a PHI token is its Viterbi
label, or, when Viterbi said O, its most probable PHI label.

One model is loaded per process and shared by every detector and thread built
from it (:func:`load_model`). Models are trained with python-crfsuite
(:mod:`deid_pipeline.tagger.crf_training`) and decoded by
:mod:`deid_pipeline.tagger.crf_decoder` (the same path and marginals, without
pycrfsuite's per-string lookups and without the per-object sequence state that
made its ``Tagger`` need a lock).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from deid_pipeline.labels import LABELS
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger import languages
from deid_pipeline.tagger.confidence import TokenPhi
from deid_pipeline.tagger.crf_decoder import (
    Decoded,
    ModelFormatError,
    decode,
    decode_ids,
    read_model,
)
from deid_pipeline.tagger.detectors import (
    DEFAULT_BIAS,
    Detection,
    Detector,
    TaggerConfig,
    register,
)
from deid_pipeline.tagger.features import (
    DICTIONARY_FEATURE_PREFIX,
    FEATURE_VERSION,
    FeatureEncoder,
)
from deid_pipeline.tagger.model_metadata import read_metadata
from deid_pipeline.tokenizer import Token, is_digits, tokenize

if TYPE_CHECKING:
    pass

OUTSIDE = "O"
SOURCE = "crf"
DEFAULT_MODEL_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models",
                                  "default.crfsuite")

# ---------------------------------------------------------------------------
# BIO <-> spans: the one conversion.


def spans_to_bio(tokens: Sequence[Token], spans: Iterable[PhiSpan]) -> list[str]:
    """BIO tags for ``tokens``: a token overlapping a span gets its label.

    The first token of each span is ``B-``, the rest ``I-``. When spans overlap
    (they should not, gold is merged), the earlier span keeps its tokens.
    """
    tags = [OUTSIDE] * len(tokens)
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    i = 0
    n = len(tokens)
    for span in ordered:
        while i < n and tokens[i].end <= span.start:
            i += 1
        j = i
        first = True
        while j < n and tokens[j].start < span.end:
            if tags[j] == OUTSIDE:
                tags[j] = ("B-" if first else "I-") + span.label
                first = False
            j += 1
    return tags


def bio_to_spans(tokens: Sequence[Token], tags: Sequence[str], source: str = SOURCE,
                 confidences: Sequence[float] | None = None) -> list[PhiSpan]:
    """Spans from BIO tags, lenient: ``I-X`` after ``O`` or another type starts a span.

    A span runs from its first token's start to its last token's end in the
    original text. ``confidences`` (per token) gives each span the minimum over
    its tokens: how sure the model is that every token of it is PHI.
    """
    spans = []
    start = end = -1
    label = None
    conf = 1.0

    def close() -> None:
        if label is not None:
            spans.append(PhiSpan(start, end, label, source,
                                 None if confidences is None else conf))

    for i, tag in enumerate(tags):
        if tag == OUTSIDE:
            close()
            label = None
            continue
        prefix, _, kind = tag.partition("-")
        if label is None or prefix == "B" or kind != label:
            close()
            start, label, conf = tokens[i].start, kind, 1.0
        end = tokens[i].end
        if confidences is not None:
            conf = min(conf, confidences[i])
    close()
    return spans


# ---------------------------------------------------------------------------
# Loading: one model per process.


class LoadedModel:
    """A model file read into the decoder's arrays (immutable, shared by threads)."""

    def __init__(self, data: bytes, path: str) -> None:
        self.path = path
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.metadata = read_metadata(data)
        self.language = self.metadata.language
        # The bias tagging uses when none is asked for: a site model's own
        # (chosen on its development data), else the English default.
        self.default_bias = float(self.metadata.get("bias", DEFAULT_BIAS))
        if self.metadata.get("label_map"):
            from deid_pipeline.label_maps import label_map_from_json

            label_map_from_json(self.metadata["label_map"], path).register()
        self.weights = read_model(data)
        self.labels = self.weights.labels
        if OUTSIDE not in self.labels:
            raise ModelFormatError(f"model has no {OUTSIDE!r} label")
        self.outside = self.labels.index(OUTSIDE)
        self.kinds = tuple(sorted({lab.partition("-")[2] for lab in self.labels
                                   if lab != OUTSIDE}))
        # kind_of_label[l, k]: 1 where label l is B- or I- of kind k, so a row
        # of marginals times it sums each kind's probability.
        self.kind_of_label = np.zeros((len(self.labels), len(self.kinds)))
        for label_id, label in enumerate(self.labels):
            if label != OUTSIDE:
                kind = self.kinds.index(label.partition("-")[2])
                self.kind_of_label[label_id, kind] = 1.0
        # A model trained without header-bearing documents has no weight for
        # the IN_PATIENT_* features: computing them would be wasted work.
        self.uses_dictionary = any(attr.startswith(DICTIONARY_FEATURE_PREFIX)
                                   for attr in self.weights.attribute_ids)
        self.encoder = FeatureEncoder(self.weights.attribute_ids)

    def decode(self, features: Sequence[Sequence[str]]) -> Decoded:
        """Best path and marginals of one document's token features."""
        return decode(self.weights, features)

    def decode_document(self, doc: ClinicalDocument, tokens: Sequence[Token]
                        ) -> Decoded:
        """:meth:`decode` of ``document_features(doc, tokens)``, via their ids.

        Another language's features are looked up as strings (no id cache).
        """
        if self.language != "en":
            return self.decode(languages.feature_function(self.language)(doc, tokens))
        return decode_ids(self.weights, *self.encoder.encode(doc, tokens))

    @property
    def model_id(self) -> str:
        """Short identity written to run.json and pipeline versions."""
        return f"crf-{self.sha256[:12]}"


_MODELS: dict[str, LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def resolve_path(path: str | None) -> str:
    """The model file ``path`` means (None = the model shipped in the package)."""
    return os.path.abspath(path) if path else DEFAULT_MODEL_PATH


def load_model(path: str | None = None) -> LoadedModel:
    """The model at ``path``, loaded once per process (cached by content hash)."""
    resolved = resolve_path(path)
    if not os.path.exists(resolved):
        raise FileNotFoundError(f"CRF model not found: {resolved}")
    with open(resolved, "rb") as fh:
        data = fh.read()
    sha = hashlib.sha256(data).hexdigest()
    with _MODELS_LOCK:
        model = _MODELS.get(sha)
        if model is None:
            model = _MODELS[sha] = LoadedModel(data, resolved)
    return model


def default_bias(path: str | None = None) -> float:
    """The bias the model at ``path`` records, else :data:`DEFAULT_BIAS`.

    A missing file gives the default: loading it later reports the error
    where it always did.
    """
    if not os.path.exists(resolve_path(path)):
        return DEFAULT_BIAS
    return load_model(path).default_bias


def model_language(path: str | None = None) -> str:
    """The language the model at ``path`` records (``en`` for one without it).

    A missing file gives ``en``: loading it later reports the error where it
    always did.
    """
    if not os.path.exists(resolve_path(path)):
        return "en"
    return load_model(path).language


def model_id(path: str | None = None) -> str:
    """``crf-<sha256 prefix>`` of the model at ``path`` (None = shipped model)."""
    return load_model(path).model_id


# ---------------------------------------------------------------------------
# Tagging.


@dataclass(frozen=True)
class Posterior:
    """The model's view of one document: enough to decode at any bias >= ``min_bias``.

    ``p_outside[t]`` is the marginal P(O) of token t; ``viterbi`` the best
    path; ``fallback[t]`` the most probable PHI type of a token Viterbi calls O
    (only for tokens that are PHI at ``min_bias``).
    """

    tokens: tuple[Token, ...]
    viterbi: tuple[str, ...]
    p_outside: tuple[float, ...]
    fallback: dict[int, str]
    min_bias: float


def token_phi(posterior: Posterior) -> TokenPhi:
    """The posterior's tokens and their P(PHI) = 1 - P(O) (document confidence)."""
    tokens = posterior.tokens
    return TokenPhi(np.fromiter((t[1] for t in tokens), np.int64, len(tokens)),
                    np.fromiter((t[2] for t in tokens), np.int64, len(tokens)),
                    1.0 - np.asarray(posterior.p_outside, dtype=float))


def outside_threshold(bias: float) -> float:
    """P(O) below which a token is PHI: ``logit(P(O)) + bias < 0``."""
    if bias > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(bias))


# A word this common in English (wordfreq Zipf >= 5: "will", "may", "bill") is
# not propagated from one occurrence to the others: it is too often not PHI.
_PROPAGATE_MAX_ENGLISH_BAND = 4


def _is_clinical_word(flags: Sequence[str]) -> bool:
    """A drug or diagnosis word that is no listed name (``dopamine``, not ``Cross``)."""
    return (any(f in ("drug", "dx") for f in flags)
            and not any(f[:2] in ("fn", "ln") for f in flags))


def _propagate(tokens: Sequence[Token], kinds: list[str | None],
               confidences: list[float], viterbi: Sequence[str]) -> None:
    """Mark every occurrence of a word found as PHI elsewhere in the document.

    A name is often spelled out once with its cue ("son David") and then
    alone ("David called"); the model finds the first and misses the rest.
    Only letter tokens of two or more letters that are not common English
    words, and that the best path calls PHI, are propagated, with the label
    and confidence of their best occurrence: a word only the recall bias
    marked (``neo``, ``aline``) is too unsure to be copied everywhere. The
    seeds do not depend on the bias, so the result stays monotone in it.
    """
    from deid_pipeline.tagger import lexicons

    seeds: dict[str, tuple[float, str]] = {}
    for t, kind in enumerate(kinds):
        if kind is not None and viterbi[t] != OUTSIDE:
            text = tokens[t].text
            if len(text) > 1 and text.isalpha():
                key = text.lower()
                if key not in seeds or confidences[t] > seeds[key][0]:
                    seeds[key] = (confidences[t], kind)
    if not seeds:
        return
    lex = lexicons.load()
    seeds = {k: v for k, v in seeds.items()
             if lex.english_band(k) <= _PROPAGATE_MAX_ENGLISH_BAND
             and not _is_clinical_word(lex.flags(k))}
    for t, tok in enumerate(tokens):
        if kinds[t] is None and len(tok.text) > 1:
            seed = seeds.get(tok.text.lower())
            if seed is not None:
                confidences[t], kinds[t] = seed


_COMMON_WORD_BAND = 6


def _drop_common_words(tokens: Sequence[Token], kinds: list[str | None],
                       viterbi: Sequence[str]) -> None:
    """Unmark very common English words that only a negative bias made PHI.

    Lowering the O score marks whatever the model is least sure of, and in
    notes that includes ``and``, ``will`` or ``home`` next to a name. A word
    this common (wordfreq Zipf >= 6) is PHI only when the best path says so.
    """
    from deid_pipeline.tagger import lexicons

    lex = lexicons.load()
    for t, kind in enumerate(kinds):
        if (kind is not None and viterbi[t] == OUTSIDE
                and lex.english_band(tokens[t].text.lower()) >= _COMMON_WORD_BAND):
            kinds[t] = None


# Flags of a multi-word place name (Bel Air, Glen Burnie, New Hampshire).
_PLACE_PHRASE_KINDS = (("state", "STATE"), ("country", "COUNTRY"), ("town", "CITY"),
                       ("uscity", "CITY"), ("city", "CITY"))


def _widen_to_places(tokens: Sequence[Token], kinds: list[str | None],
                     confidences: list[float]) -> None:
    """Mark all of a multi-word place name of which any word is marked.

    The model often finds one word of "Bel Air" (and may call it a name):
    half a place name left in clear still names the place. The whole name
    takes the place kind and the surest confidence of its marked words.
    """
    from deid_pipeline.tagger import lexicons

    marked = [t for t, kind in enumerate(kinds) if kind is not None]
    if not marked:
        return
    lowers = [tok.text.lower() for tok in tokens]
    for i, k, flags in lexicons.phrase_matches(lowers, lexicons.load()):
        hits = [t for t in range(i, i + k) if kinds[t] is not None]
        kind = next((kind for flag, kind in _PLACE_PHRASE_KINDS if flag in flags),
                    None)
        if not hits or kind is None or len(hits) == k and all(
                kinds[t] == kind for t in hits):
            continue
        confidence = max(confidences[t] for t in hits)
        for t in range(i, i + k):
            kinds[t] = kind
            confidences[t] = max(confidences[t], confidence)


_NAME_KINDS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "USERNAME"})


# Lower-case letters that are words or abbreviations before a stop ("smith a.
# fib"), never read as a lower-case name's initial.
_NOT_LOWER_INITIALS = frozenset("aio")


def _is_initial(tokens: Sequence[Token], t: int, lower: bool = False) -> bool:
    """Token t is one capital letter with its full stop right after it (``G.``).

    With ``lower`` (the name beside it is written in lower case: ``christine
    y.``) a lower-case letter too, but for ``a``, ``i`` and ``o``. Not when a
    letter follows the stop unspaced: ``M.D.``, ``R.N.`` are credentials, not
    an initial of the name before them.
    """
    if not (0 <= t < len(tokens) - 1 and len(tokens[t].text) == 1):
        return False
    letter = tokens[t].text
    return (("A" <= letter <= "Z"
             or lower and "a" <= letter <= "z" and letter not in _NOT_LOWER_INITIALS)
            and tokens[t + 1].text == "."
            and tokens[t + 1].start == tokens[t].end
            and not (t + 2 < len(tokens) and tokens[t + 2].start == tokens[t + 1].end
                     and tokens[t + 2].text.isalpha()))


def _widen_to_initials(tokens: Sequence[Token], kinds: list[str | None],
                       confidences: list[float]) -> None:
    """Mark the initial written against a marked name (``G. Johnson``, ``Anna S.``).

    The model learns the initials of the corpus's doctors as strings (the
    same few letters before the same surnames) and misses another letter
    before another surname; an initial left in clear beside a redacted name
    still narrows it down. The initial takes the name's kind and confidence.
    """
    for t, kind in enumerate(kinds):
        if kind not in _NAME_KINDS:
            continue
        # "G. Johnson": the initial two tokens back, a blank or two after its stop;
        # "Anna S.": the next token, a blank or two after the name.
        for i, gap in ((t - 2, tokens[t].start - tokens[t - 1].end),
                       (t + 1, tokens[min(t + 1, len(tokens) - 1)].start
                        - tokens[t].end)):
            if (1 <= gap <= 2 and kinds[i] is None
                    and _is_initial(tokens, i, lower=tokens[t].text.islower())):
                kinds[i] = kind
                confidences[i] = confidences[t]
        # "Kevin M with CHF": a capital alone after a title-case name, then a
        # lower-case word or a clause's end (not "I", nor capitals running on).
        i = t + 1
        if (i < len(tokens) and kinds[i] is None and tokens[t].text.istitle()
                and tokens[i].start - tokens[t].end == 1
                and _is_bare_initial(tokens, i)):
            kinds[i] = kind
            confidences[i] = confidences[t]


_CLAUSE_ENDS = frozenset(",;:?!)")


def _is_bare_initial(tokens: Sequence[Token], t: int) -> bool:
    """Token t is one capital (not ``I``) before a lower-case word or a clause end."""
    letter = tokens[t].text
    if not (len(letter) == 1 and "A" <= letter <= "Z" and letter != "I"):
        return False
    if t + 1 == len(tokens):
        return True
    after = tokens[t + 1]
    if after.start == tokens[t].end:
        return after.text in _CLAUSE_ENDS or after.text in ("'", "\u2019")
    return after.text[:1].islower()


# Days of the week are in no HIPAA category, yet stand where names and dates
# do ("going home on MON", "?CABG FRIDAY 10/7"). "Sat" and "Sun" are left to
# the model: they are also a verb and a surname.
_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur thurs fri".split())


def _drop_weekdays(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """Unmark days of the week, whatever the model called them."""
    for t, kind in enumerate(kinds):
        if kind is not None and tokens[t].text.lower() in _WEEKDAYS:
            kinds[t] = None


@lru_cache(maxsize=1)
def _kin_words() -> frozenset[str]:
    from deid_pipeline.tagger.rules.detector import default_config

    return frozenset(default_config()["names"]["relations"])


_SENTENCE_MARKS = frozenset("?!")


def _end_at_sentences(tokens: Sequence[Token], kinds: list[str | None]) -> None:
    """No model span holds a kin word, nor the full stop before one.

    ``PT IS A RETIRED EDITOR. BROTHER ANGEL``: the model carried PROFESSION
    over the full stop into ``BROTHER``. As one value, ``EDITOR. BROTHER``
    was then searched for in the whole document, and a surrogate ``...
    editor`` before another untouched ``. brother`` spelled it: the leak
    guard quarantined a document of 40,000 notes. A kin word (rules.json
    ``names.relations``) is a cue, never part of a value (no gold span of the
    development notes holds one), and a stop before it ends the sentence.
    Other stops stay: ``St. Mary``, ``Mass. General`` are one name. A
    question or exclamation mark always ends a sentence: ``in Dayton?`` was
    one span, and its surrogate took the question away.
    """
    kin = _kin_words()
    last = len(tokens) - 1
    for t, kind in enumerate(kinds):
        if kind is None:
            continue
        word = tokens[t].text
        if word.lower() in kin or set(word) <= _SENTENCE_MARKS or (
                word == "." and t < last and tokens[t + 1].text.lower() in kin):
            kinds[t] = None


def _fraction_run(tokens: Sequence[Token], t: int) -> tuple[int, int]:
    """The tokens around t joined without blanks that are digits or ``/``.

    At most three tokens each way: callers only ask whether the run is three
    tokens long, and a hostile run of thousands must not cost n² steps.
    """
    lo = hi = t
    while lo > max(t - 3, 0) and tokens[lo - 1].end == tokens[lo].start and (
            is_digits(tokens[lo - 1].text) or tokens[lo - 1].text == "/"):
        lo -= 1
    last = min(t + 3, len(tokens) - 1)
    while hi < last and tokens[hi].end == tokens[hi + 1].start and (
            is_digits(tokens[hi + 1].text) or tokens[hi + 1].text == "/"):
        hi += 1
    return lo, hi


def _drop_bias_only_fractions(tokens: Sequence[Token], kinds: list[str | None],
                              viterbi: Sequence[str]) -> None:
    """Unmark year-less ``5/5``, ``3/10`` that only a negative bias made dates.

    Such fractions are vent settings, pain scores and strengths far more
    often than dates; the rules find the dated ones by their context words,
    and the model still marks those its best path calls dates.
    """
    for t, kind in enumerate(kinds):
        if kind != "DATE" or viterbi[t] != OUTSIDE or not is_digits(tokens[t].text):
            continue
        lo, hi = _fraction_run(tokens, t)
        if hi - lo == 2 and tokens[lo + 1].text == "/" and all(
                len(tokens[i].text) <= 2 for i in (lo, hi)):
            kinds[t] = None


# Safe Harbor's line: an age under it is no PHI (rules/ages.py).
_OLDEST_KEPT_AGE = 89


def _drop_bias_only_young_ages(tokens: Sequence[Token], kinds: list[str | None],
                               viterbi: Sequence[str]) -> None:
    """Unmark ages under 90 that only a negative bias made AGE (``a 69 yr old``).

    The model's AGE is an age over 89, as its gold and the rules have it; at a
    recall bias it also marks the ages every note states, with a confidence
    near 0.1. An age its best path calls AGE stays (a site's model trained
    on every age marks them so).
    """
    for t, kind in enumerate(kinds):
        if (kind == "AGE" and viterbi[t] == OUTSIDE and is_digits(tokens[t].text)
                and int(tokens[t].text) <= _OLDEST_KEPT_AGE):
            kinds[t] = None


_NUMERIC = re.compile(r"[\d/\-.:() ]+")
_NUMBER = re.compile(r"\d+")


_RATE = re.compile(r"\d+(?:\.\d+)?[ \t]*/[ \t]*[A-Za-z]+")
_MONTH_ABBREVIATIONS = frozenset(
    "jan feb mar apr may jun jul aug sep oct nov dec".split())


def plausible(value: str, label: str) -> bool:
    """Whether a CRF span's numbers can be the PHI type it was given.

    A CRF that has seen dates and phones will call ``80/30`` (a pressure) a
    date and ``86-105`` (a range) a phone when pushed for recall; a value
    that cannot be a date or a phone by its digits alone is not redacted as
    one; nor is a rate (``10/hr``) a date, nor ``8/4/460``. Other spans with
    letters are left to the model.
    """
    if label == "DATE" and _RATE.fullmatch(value):
        return value.rsplit("/", 1)[1].strip()[:3].lower() in _MONTH_ABBREVIATIONS
    if label in ("PHONE", "FAX"):
        # Letters or not ("150-180's", "800-1000 ccs"): no phone has fewer.
        return sum(len(n) for n in _NUMBER.findall(value)) >= 7
    if not _NUMERIC.fullmatch(value):
        return True
    numbers = [int(n) for n in _NUMBER.findall(value)]
    if label == "DATE":
        if ("/" in value or "-" in value) and len(numbers) >= 2:
            parts = _NUMBER.findall(value)
            # No date has a 3- or 5-digit part or a 4-digit one that is no
            # year: 8/4/460, 6670/1182, 3/2/1500.
            if any(len(p) == 3 or len(p) > 4 or (
                    len(p) == 4 and not 1850 <= int(p) <= 2150) for p in parts):
                return False
            first, second = numbers[:2]
            if first >= 1000:  # year first: 2006-10-22
                return True
            return (1 <= first <= 12 and 1 <= second <= 31) or (
                1 <= second <= 12 and 1 <= first <= 31)
    return True


# The kind of place, not its name: "Calvert [Hospital]", "Kessler [Medical
# Center]", "Baltimore [VA]", "kernan [ew]", and alone "OSH" (outside
# hospital). Left in clear (it identifies no one; the institution surrogate
# keeps such words too), as annotators of the PhysioNet corpus do. "hosp"
# with any ending: nurses misspell it ("HOSPIATAL").
_FACILITY_NOUN = re.compile(
    r"(?:(?:^|[ \t]+)(?:hosp[a-z]*|medical|med|center|centre|ctr|clinic|rehab|"
    r"rehabilitation|infirmary|facility|hospice|va|er|ew|ed|osh)\.?)+$",
    re.IGNORECASE)
_PLACE_LABELS = frozenset({"HOSPITAL", "LOCATION", "ORGANIZATION"})


def _without_facility_noun(text: str, span: PhiSpan) -> PhiSpan | None:
    """The span minus trailing facility nouns (None if nothing else is left)."""
    if span.label not in _PLACE_LABELS:
        return span
    value = text[span.start:span.end]
    m = _FACILITY_NOUN.search(value)
    if m is None:
        return span
    if m.start() == 0:
        return None
    return dataclasses.replace(span, end=span.start + m.start())


# The words of a record's field labels, which the model carries a name or an
# ID into (``Jessica M. MRN``, ``Carroll   Med rec no.``, ``id 5297578i``,
# ``of Valley Medical``); never PHI themselves.
_FIELD_TAIL = re.compile(r"(?:[ \t]+(?:mrn|record|rec|med|id|acct|dob))+$",
                         re.IGNORECASE)
# ``pt from jupiter w/ chf``: the "w" of "w/" after a place.
_WITH_MARK = re.compile(r"[ \t]+w$", re.IGNORECASE)
# Also the "'S" of a possessive before a name (``DR'S CAMARDA``).
_FIELD_HEAD = re.compile(
    r"(?:(?:of|id|mrn|record|(?<=['\u2019])s|['\u2019]s)[ \t]+)+", re.IGNORECASE)
# A credential or the role a name or a hospital is followed by (``Smith RN``,
# ``GBMC NURSE``): no part of the name.
_ROLE_TAIL = re.compile(r"(?:[ \t,]+(?:nurse|rn|np|lpn|cna|crnp|md|do|pa-?c?))+$",
                        re.IGNORECASE)
_ROLE_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "HOSPITAL", "ORGANIZATION"})
# A clock time after a full date (``10/22/03, 1900``): the time is no date part.
_DATE_THEN_CLOCK = re.compile(r"\d[,;]?[ \t]+(?:[01]\d|2[0-3])[0-5]\d$")
_FIELD_WORD = re.compile(r"(?:mrn|record|rec|med|id|acct|dob)", re.IGNORECASE)
# What a named person did, after the name (``DR BAKAITIS UPDATE BY MD``, ``dr
# vascuez spoke with``): no gold name of the corpus ends with one of these.
_DID_TAIL = re.compile(
    r"(?:[ \t,]+(?:spoke|speaks|update|updated|aware|notified|called|paged|"
    r"informed|saw|said|states|stated|came|visited|plans|wants|will|would|is|"
    r"was|has|had|here))+$", re.IGNORECASE)
_PERSON_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE"})
# A facility noun, then what happened there (``AT CALVERT HOSPITAL REQUIRING
# DOPAMINE``): a name goes on after its noun (Hospital for Special Surgery),
# a verb does not; no gold place of the corpus goes on at all.
_FACILITY_THEN_VERB = re.compile(
    r"\b(?:hospital|hosp|center|centre|clinic|rehab|campus)"
    r"(?P<tail>[ \t,]+[A-Za-z]{2,}(?:ing|ed)\b.*)$", re.IGNORECASE | re.DOTALL)
_PLACE_LABELS = frozenset({"HOSPITAL", "LOCATION", "ORGANIZATION"})
# The floor after a ward's or building's name (``TRANSFER TO QUARTERMAIN 2``):
# the name is the place, the floor number names nothing.
_FLOOR_TAIL = re.compile(r"(?<=[A-Za-z])[ \t]+\d{1,2}$")
# When, after a value (``from st agnes memorial yesterday``): no gold span of
# the corpus holds one of these words.
_WHEN_TAIL = re.compile(
    r"(?:[ \t,]+(?:yesterday|today|tonight|tomorrow|overnight|now|"
    r"this[ \t]+(?:am|pm|morning|afternoon|evening)))+$", re.IGNORECASE)


# A role the model takes for a name when it stands alone (``pt's pastor was
# in``); before a name (``Pastor Williams``) the span holds the name too.
_ROLE_WORD = re.compile(r"(?:pastor|priest|chaplain|rabbi|minister|reverend|imam|"
                        r"deacon|clergy|nun)", re.IGNORECASE)


def _without_field_words(text: str, span: PhiSpan) -> PhiSpan | None:
    """The span minus field-label words at its ends (None if it is one)."""
    value = text[span.start:span.end]
    if _FIELD_WORD.fullmatch(value) or _ROLE_WORD.fullmatch(value):
        return None
    end = span.start + _tail_cut(text, span, value)
    head = _FIELD_HEAD.match(text, span.start, end)
    start = head.end() if head is not None else span.start
    if (start, end) == (span.start, span.end):
        return span
    return dataclasses.replace(span, start=start, end=end) if end > start else None


def _tail_cut(text: str, span: PhiSpan, value: str) -> int:
    """Where in ``value`` the words that are no part of it begin (its length: none)."""
    tail = _FIELD_TAIL.search(value)
    if tail is None and text[span.end:span.end + 1] == "/":
        tail = _WITH_MARK.search(value)
    if tail is None and span.label in _ROLE_LABELS:
        tail = _ROLE_TAIL.search(value)
    if tail is None and span.label in _PERSON_LABELS:
        tail = _DID_TAIL.search(value)
    if tail is None and span.label in _PLACE_LABELS:
        verb = _FACILITY_THEN_VERB.search(value)
        if verb is not None:
            return verb.start("tail")
        tail = _FLOOR_TAIL.search(value)
    if tail is None:
        tail = _WHEN_TAIL.search(value)
    if tail is None and span.label == "DATE" and _DATE_THEN_CLOCK.search(value):
        tail = re.search(r"[,;]?[ \t]+\d{4}$", value)
    return tail.start() if tail is not None else len(value)


# ``at 1900``, ``until 2000``, ``1900-0700``: a 24-hour clock time, which
# nursing notes write as a year is written (a year follows "since", "in",
# "from", never "at" or "until"). 35 such places in the corpus, one of them
# a gold date ("since 2006", not taken here).
_CLOCK = re.compile(r"(?:[01]\d|2[0-3])[0-5]\d")
_CLOCK_BEFORE = re.compile(
    r"(?:(?<![\w])(?:at|until|till|til|@|by|around|approx|about)[ \t]*"
    r"|\d{4}[ \t]*(?:-|to)[ \t]*)$", re.IGNORECASE)
_CLOCK_AFTER = re.compile(r"[ \t]*(?:-|to)[ \t]*(?:[01]\d|2[0-3])[0-5]\d(?!\d)")


def _clock_time(text: str, span: PhiSpan) -> bool:
    """Whether a four-digit DATE is a clock time by the words around it."""
    if span.label != "DATE" or not _CLOCK.fullmatch(text, span.start, span.end):
        return False
    return (_CLOCK_BEFORE.search(text, max(0, span.start - 12), span.start) is not None
            or _CLOCK_AFTER.match(text, span.end) is not None)


# A CRF date this sure is kept though it has a fraction's shape (``? d/c
# TF's 2/4``, ``transfer to floor 2/4``) when no other look-alike sign holds.
# Swapped sealed copies: 4 more date tokens of 536 found in the worst copy at
# 0.8, no false positive more.
SURE_FRACTION_DATE = 0.8
_YEAR_LESS_DATE = re.compile(r"\d{1,2}(?:[/-]\d{1,2})?(?:[/-]\d{1,2})?")


def _short_date_lookalike(text: str, span: PhiSpan) -> bool:
    """Whether a year-less numeric DATE is a look-alike by its context.

    ``10/5`` after PSV, ``8/10`` near "pain", ``1/2`` before NS: the date
    rules reject these, and a CRF date is held to the same standard.
    """
    value = text[span.start:span.end]
    if span.label != "DATE" or not _YEAR_LESS_DATE.fullmatch(value):
        return False
    from deid_pipeline.tagger.rules import is_date_lookalike

    return is_date_lookalike(text, span.start, span.end,
                             fraction_ok=(span.confidence or 0.0) >= SURE_FRACTION_DATE)


# Two dates joined as a range: the one run of numbers of four parts that is dates.
_DATE_RANGE = re.compile(r"\d{1,2}/\d{1,2}(?:/\d{2,4})?-\d{1,2}/\d{1,2}(?:/\d{2,4})?")
_SERIES_PARTS = re.compile(r"[/.-]")
_NUMBERS = re.compile(r"[/.-]?\d[\d/.-]*")
# A run of numbers is read at most this far on either side of the span.
_SERIES_REACH = 24


def _in_value_series(text: str, span: PhiSpan) -> bool:
    """Whether a numeric DATE is part of a run of values, not a date.

    Vent settings, pressures and cardiac outputs are written as runs of
    numbers (``AC 40/700/5/12``, ``5-6/3-4/0-80``, ``6.6/3.71``) whose pieces
    the model at a recall bias reads as dates. A run of more than three
    numbers is a date only as a range of two (``3/4-3/6``); a decimal
    point before the first slash makes a value (``11/21.93`` stays a date).
    """
    if span.label != "DATE" or not _NUMBERS.fullmatch(text, span.start, span.end):
        return False
    lo, hi = span.start, span.end
    floor, ceiling = max(lo - _SERIES_REACH, 0), min(hi + _SERIES_REACH, len(text))
    while lo > floor and (text[lo - 1].isdecimal() or text[lo - 1] in "/-."):
        lo -= 1
    while hi < ceiling and (text[hi].isdecimal() or text[hi] in "/-."):
        hi += 1
    run = text[lo:hi].strip("/-.")
    if "." in run and "/" in run and run.index(".") < run.index("/"):
        return True
    return len(_SERIES_PARTS.split(run)) > 3 and not _DATE_RANGE.fullmatch(run)


def _clinical_letters_alone(text: str, span: PhiSpan) -> bool:
    """A place span that is one clinical abbreviation (``HD/ UF``, ``stents to RCA``).

    The model at a recall bias reads short capitals after ``to``/``at`` as a
    hospital's letters; rules.json's units and clinical letters never are
    one. A state code stays (``lives in NH``), and so does a word of them that
    English uses as a word, which can name a place (``at the BAY``).
    """
    if span.label not in _PLACE_LABELS:
        return False
    from deid_pipeline.tagger import lexicons
    from deid_pipeline.tagger.gazetteers import clinical_letters

    word = text[span.start:span.end].lower()
    lex = lexicons.load()
    return (word in clinical_letters() and "stab" not in lex.flags(word)
            and not (len(word) >= 3 and lex.english_band(word) >= 4))


def _is_alnum_span(text: str, span: PhiSpan) -> bool:
    return any(c.isalnum() for c in text[span.start:span.end])


class CrfDetector(Detector):
    """PHI from the CRF model, at a recall/precision ``bias`` (negative = recall)."""

    name = SOURCE
    labels = LABELS
    version = FEATURE_VERSION

    def __init__(self, model: LoadedModel, bias: float = 0.0,
                 propagate: bool = True) -> None:
        self.model = model
        self.bias = float(bias)
        self.propagate = propagate
        self.version = f"{FEATURE_VERSION}+{model.model_id}"

    def posterior(self, doc: ClinicalDocument, min_bias: float | None = None
                  ) -> Posterior:
        """Run the model once over ``doc``; decode with :meth:`decode`."""
        min_bias = self.bias if min_bias is None else min_bias
        tokens = tuple(tokenize(doc.text))
        if not tokens:
            return Posterior((), (), (), {}, min_bias)
        if doc.dictionary is not None and not self.model.uses_dictionary:
            doc = dataclasses.replace(doc, dictionary=None)
        threshold = outside_threshold(min_bias)
        model = self.model
        decoded = model.decode_document(doc, tokens)
        path = tuple(map(model.labels.__getitem__, decoded.path.tolist()))
        outside = decoded.marginals[:, model.outside]
        unsure = (outside < threshold) & (decoded.path == model.outside)
        fallback = {t: self._best_kind(decoded.marginals[t])
                    for t in np.flatnonzero(unsure).tolist()}
        return Posterior(tokens, path, tuple(outside.tolist()), fallback, min_bias)

    def _best_kind(self, marginals: np.ndarray) -> str:
        """Most probable PHI type of a token (B- and I- summed; ties: first by name)."""
        scores = marginals @ self.model.kind_of_label
        return self.model.kinds[int(np.argmax(scores))]

    def decode(self, doc: ClinicalDocument, posterior: Posterior,
               bias: float | None = None) -> Detection:
        """Spans at ``bias`` (default: the detector's) from a posterior of ``doc``."""
        bias = self.bias if bias is None else bias
        if bias < posterior.min_bias:
            raise ValueError(f"posterior computed for bias >= {posterior.min_bias}")
        threshold = outside_threshold(bias)
        tokens = posterior.tokens
        kinds: list[str | None] = [None] * len(tokens)
        for t, p in enumerate(posterior.p_outside):
            if p < threshold:
                tag = posterior.viterbi[t]
                kinds[t] = (tag.partition("-")[2] if tag != OUTSIDE
                            else posterior.fallback[t])
        confidences = [1.0 - p for p in posterior.p_outside]
        english = self.model.language == "en"
        if english:  # English word lists and US places (module functions)
            _drop_common_words(tokens, kinds, posterior.viterbi)
            _drop_weekdays(tokens, kinds)
            _drop_bias_only_fractions(tokens, kinds, posterior.viterbi)
            _drop_bias_only_young_ages(tokens, kinds, posterior.viterbi)
            if self.propagate:
                _propagate(tokens, kinds, confidences, posterior.viterbi)
            _widen_to_places(tokens, kinds, confidences)
            _widen_to_initials(tokens, kinds, confidences)
            _end_at_sentences(tokens, kinds)
        tags = []
        prev_kind = None
        for t, kind in enumerate(kinds):
            if kind is None:
                tags.append(OUTSIDE)
            else:
                tag = posterior.viterbi[t]
                if tag == OUTSIDE or tag.partition("-")[2] != kind:
                    tag = ("I-" if kind == prev_kind else "B-") + kind
                tags.append(tag)
            prev_kind = kind
        spans = bio_to_spans(tokens, tags, SOURCE, confidences)
        if not english:
            from deid_pipeline.tagger.span_tidy import tidy_spans

            return Detection(tidy_spans(doc.text, (s for s in spans
                                                   if _is_alnum_span(doc.text, s))),
                             token_phi(posterior))
        spans = (_without_facility_noun(doc.text, s) for s in spans)
        spans = (_without_field_words(doc.text, s) for s in spans if s is not None)
        spans = tuple(s for s in spans if s is not None
                      and _is_alnum_span(doc.text, s)
                      and plausible(doc.text[s.start:s.end], s.label)
                      and not _short_date_lookalike(doc.text, s)
                      and not _in_value_series(doc.text, s)
                      and not _clinical_letters_alone(doc.text, s)
                      and not _clock_time(doc.text, s))
        return Detection(spans, token_phi(posterior))

    def analyze(self, doc: ClinicalDocument) -> Detection:
        """Spans at this detector's bias plus each token's P(PHI)."""
        return self.decode(doc, self.posterior(doc))

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        """Spans at this detector's bias."""
        return self.analyze(doc).spans


@register("crf")
def _make_crf(config: TaggerConfig) -> Detector:
    model = load_model(config.model_path)
    return CrfDetector(model, model.default_bias if config.bias is None
                       else config.bias)
