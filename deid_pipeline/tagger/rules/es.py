r"""The Spanish rule set: the generic shapes a Spanish site model should not learn.

A model trained on a Spanish site's notes (MEDDOCAN) learns its annotators'
labels from a few hundred cases, and formulaic PHI it sees seldom it finds
seldom. These recognizers find the shapes Spain writes the same everywhere,
checked where a check exists:

- ``dni``: a DNI (8 digits, ``12.345.678``-dotted or not) or a NIE (``X``,
  ``Y`` or ``Z`` and 7 digits) with its check letter, the letter verified
  (``TRWAGMYFPDXBNJZSQVHLCKE[n % 23]``);
- ``phone``: a Spanish telephone number, 9 digits starting 6 to 9 (mobile,
  land line), in its usual groupings (``612 34 56 78``, ``912-345-678``,
  ``934 169 700``), after a telephone or fax word on its line; a fax word
  nearest before it makes it a fax (``Tel.: 1 Fax: 2``: the fax word
  after the first number is the second's);
- ``postcode``: a postcode (``01000`` to ``52999``, the two first digits a
  province) in an address: after ``CP``/``C.P.``/``código postal``, or on a
  line where a street word (``C/``, ``Avda.``, ``Calle``, ``Paseo``, ``s/n``)
  stands before it;
- ``email``: an e-mail address;
- ``url``: a web address with a scheme or ``www.`` (not looked for by
  default: :data:`DEFAULT_KINDS`);
- ``date_words``: a date with a month name, ``3 de marzo de 2018``,
  ``marzo de 2018``, ``marzo 2018``, ``febrero y abril de 2002`` (one
  span, as the annotators mark it), ``30-marzo-2004`` (day 1 to 31, a year
  of four digits).

Each recognizer says which built-in label its values are (DNI: SSN, phone:
PHONE or FAX, postcode: ZIP, ...); a site model's label map says which of
its own labels that is (:func:`site_label_for`): the map's label refined to
it (``surrogate_labels``), else a label of :data:`SITE_LABEL_NAMES` the map
has, else the only label of the category. A kind no label of the map takes
is not looked for (its recognizer is left out), so a map without e-mails is
never given one. Without a label map the built-in labels are written.

How often each fires right and wrong on MEDDOCAN's training and development
parts: ``python -m deid_pipeline.evaluation.rule_fires`` and
``docs/retargeting.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deid_pipeline.label_maps import label_map_from_json
from deid_pipeline.labels import CATEGORY_OF
from deid_pipeline.tagger.detection import Detector, TaggerConfig
from deid_pipeline.tagger.rules.base import (
    _G_NUM,
    Hit,
    Pattern,
    PatternRecognizer,
    _window_start,
    _word_regex,
)
from deid_pipeline.tagger.rules.detector import RuleDetector
from deid_pipeline.tagger.rules.site import SiteRules, load_site_rules
from deid_pipeline.tagger.spanish_dates import MONTHS

__all__ = [
    "ALL_KINDS",
    "CODE_VERSION",
    "DEFAULT_KINDS",
    "SITE_LABEL_NAMES",
    "DniRecognizer",
    "SpanishDateRecognizer",
    "SpanishEmailRecognizer",
    "SpanishPhoneRecognizer",
    "SpanishPostcodeRecognizer",
    "SpanishRuleDetector",
    "SpanishUrlRecognizer",
    "site_label_for",
    "from_config",
    "spanish_recognizers",
]

# Bumped when a recognizer here changes what it finds.
CODE_VERSION = "es1"

# A built-in label -> site labels that take it, in order of preference (the
# MEDDOCAN names, and the plain Spanish ones a site may have chosen).
SITE_LABEL_NAMES: Mapping[str, tuple[str, ...]] = {
    "SSN": ("ID_SUJETO_ASISTENCIA", "DNI", "NIF"),
    "PHONE": ("NUMERO_TELEFONO", "TELEFONO"),
    "FAX": ("NUMERO_FAX", "FAX"),
    "ZIP": ("TERRITORIO", "CODIGO_POSTAL", "CP"),
    "EMAIL": ("CORREO_ELECTRONICO", "CORREO", "EMAIL"),
    "URL": ("URL_WEB", "URL", "WEB"),
    "DATE": ("FECHAS", "FECHA"),
}

_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_LEFT = r"(?<![\w.@/-])"


def site_label_for(kind: str, categories: Mapping[str, str] | None,
                   refined: Mapping[str, str] | None = None) -> str | None:
    """The label of a site's map that takes built-in ``kind``; None: none does.

    ``categories``: the map's labels and their categories (None: no map,
    ``kind`` itself); ``refined``: its ``surrogate_labels``.
    """
    if categories is None:
        return kind
    refined = refined or {}
    exact = sorted(label for label, builtin in refined.items() if builtin == kind)
    if len(exact) == 1:
        return exact[0]
    for name in SITE_LABEL_NAMES.get(kind, ()):
        if categories.get(name) == CATEGORY_OF[kind]:
            return name
    of_category = [label for label, cat in categories.items()
                   if cat == CATEGORY_OF[kind]]
    return of_category[0] if len(of_category) == 1 else None


class DniRecognizer(PatternRecognizer):
    """A DNI or NIE whose check letter is right."""

    def __init__(self, label: str) -> None:
        """Build the DNI and NIE patterns, emitting ``label``."""
        patterns = [
            Pattern("dni", rf"{_LEFT}(?P<n>\d{{8}}|\d{{1,2}}\.\d{{3}}\.\d{{3}})"
                           r"[ -]?(?P<l>[A-Z])(?![\w-])", guard=_G_NUM,
                    check_negative=False),
            Pattern("nie", rf"{_LEFT}(?P<x>[XYZ])[ -]?(?P<n>\d{{7}})[ -]?"
                           r"(?P<l>[A-Z])(?![\w-])", check_negative=False),
        ]
        super().__init__("es-dni", label, patterns, flags=0)

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the letter against the number (a NIE's X/Y/Z read as 0/1/2)."""
        digits = (hit.group("n") or "").replace(".", "")
        prefix = hit.group("x")
        if prefix is not None:
            digits = str("XYZ".index(prefix)) + digits
        return _DNI_LETTERS[int(digits) % 23] == hit.group("l")


# The groupings of nine digits; annotators leave a country code's + out.
_PHONE_NINE = (r"(?:\d{9}|\d{3}[ .-]\d{3}[ .-]\d{3}|\d{3}[ .-]\d{2}[ .-]\d{2}"
               r"[ .-]\d{2}|\d{2}[ .-]\d{3}[ .-]\d{2}[ .-]\d{2}|\d{3}[ .-]\d{6})")


# An extension the annotators take with the number ("986413144 ext 1530").
_EXT = r"(?:[ ]?(?:ext|extensi[oó]n)\.?[ ]?\d{1,6}(?!\d))?"
# "Tel. y Fax:": one number for both, a telephone.
_BOTH = re.compile(r"(?:tel[ée]fono|tel|telf|tlf|tlfno|tfno)\.?[ \t]*(?:y|/)[ \t]*fax",
                   re.I)


class SpanishPhoneRecognizer(PatternRecognizer):
    """Spanish telephone and fax numbers after a telephone word on their line."""

    CONTEXT = ("teléfono", "telefono", "teléfonos", "tel", "telf", "tlf", "tlfn",
               "tlfno", "tfno", "tfn", "tf", "telef", "móvil", "movil", "fax",
               "contacto", "llamar")
    FAX = ("fax",)

    def __init__(self, phone: str, fax: str | None) -> None:
        """Build the patterns; ``fax`` None: faxes are ``phone`` too."""
        patterns = [Pattern(
            "nine", rf"{_LEFT}(?:\+[ ]?|00)?(?P<phi>(?:34(?:[ .-] ?)?)?(?=[6-9])"
                    rf"{_PHONE_NINE}{_EXT})(?![\w-]|[.,]\d)", needs_context=True,
            guard=r"(?<![\w.@/-])(?=[+0-9])", check_negative=False)]
        super().__init__("es-phone", phone, patterns, context=self.CONTEXT,
                         context_before=40, context_after=0, flags=re.I)
        self._fax_label = fax or phone
        self._fax = _word_regex(self.FAX)

    @property
    def labels(self) -> tuple[str, ...]:
        """The phone label and the fax label."""
        return tuple(sorted({self.label, self._fax_label}))

    def has_context(self, text: str, hit: Hit,
                    words: re.Pattern[str] | None = None) -> bool:
        """A telephone word before the number on its line (nothing after it counts)."""
        words = words or self._context
        start = hit.whole[0]
        return bool(words.search(text, _window_start(text, start,
                                                     self.context_before), start))

    def label_for(self, hit: Hit, text: str) -> str:
        """The fax label when the nearest telephone word before it says fax.

        Not a fax word after it: in ``Tel.: 948 255 400 Fax: 948 296 500``
        that word introduces the next number (6 of 67 fires on MEDDOCAN's
        training part were so).
        """
        start = hit.whole[0]
        last = None
        for last in self._context.finditer(
                text, _window_start(text, start, self.context_before), start):
            pass
        if (last is not None and self._fax.fullmatch(last.group())
                and not _BOTH.search(text, max(0, last.start() - 12), last.end())):
            return self._fax_label
        return self.label


class SpanishPostcodeRecognizer(PatternRecognizer):
    """Postcodes of Spain in an address: after a CP cue or a street word."""

    CUE = ("cp", "c.p", "c. p", "código postal", "codigo postal")
    STREET = ("c/", "calle", "avda", "avenida", "av", "paseo", "pso", "pº", "plaza",
              "pza", "ctra", "carretera", "glorieta", "camino", "ronda", "travesía",
              "s/n", "urbanización", "urb", "polígono")

    def __init__(self, label: str) -> None:
        """Build the postcode pattern, emitting ``label``."""
        patterns = [
            Pattern("after_cue", r"(?<![\w.])(?:c\.?[ ]?p\.?|c[oó]digo postal)"
                                 r"[ \t]*[:.]?[ \t]*(?P<phi>(?:0[1-9]|[1-4]\d|5[0-2])"
                                 r"\d{3})(?![\w-]|[.,]\d)", check_negative=False),
            Pattern("address", r"(?<![\w.,/-])(?:0[1-9]|[1-4]\d|5[0-2])\d{3}"
                               r"(?![\w-]|[.,/]\d)", needs_context=True, guard=_G_NUM,
                    check_negative=False),
        ]
        super().__init__("es-postcode", label, patterns, context=self.STREET,
                         context_before=60, context_after=0, flags=re.I)

    def has_context(self, text: str, hit: Hit,
                    words: re.Pattern[str] | None = None) -> bool:
        """A street word before the postcode on its line."""
        start = hit.whole[0]
        return bool(self._context.search(
            text, _window_start(text, start, self.context_before), start))


class SpanishEmailRecognizer(PatternRecognizer):
    """E-mail addresses (a cue glued before one is left out)."""

    def __init__(self, label: str) -> None:
        """Build the e-mail pattern, emitting ``label``."""
        super().__init__("es-email", label, [Pattern(
            "address", r"(?<![\w.%+-])(?:e-?mail[.:-])?"
                       r"(?P<phi>[a-z0-9_%+-](?:[a-z0-9._%+-]{0,63}"
                       r"[a-z0-9_%+-])?@(?:[a-z0-9-]{1,63}\.){1,8}[a-z]{2,24})"
                       r"(?![\w-])", check_negative=False)], prefilter="@")


class SpanishUrlRecognizer(PatternRecognizer):
    """Web addresses with a scheme or ``www.``."""

    _TRAILING = ".,;:!?'\")]"

    def __init__(self, label: str) -> None:
        """Build the URL patterns, emitting ``label``."""
        patterns = [
            Pattern("scheme", r"(?<!\w)(?:https?|ftp)://[^\s<>\"'()\[\]{}]{1,2000}",
                    check_negative=False),
            Pattern("www", r"(?<![\w.@/-])www\.(?:[a-z0-9-]{1,63}+\.){1,8}[a-z]{2,24}"
                           r"(?![\w-])(?:[/?#][^\s<>\"'()\[\]{}]{0,2000})?",
                    check_negative=False),
        ]
        super().__init__("es-url", label, patterns, prefilter=r"://|www\.")

    def trim(self, text: str, start: int, end: int) -> tuple[int, int]:
        """Drop sentence punctuation the greedy tail took."""
        while end > start and text[end - 1] in self._TRAILING:
            end -= 1
        return start, end


_MONTH = "|".join(sorted((m for m in MONTHS if len(m) > 3), key=lambda m: -len(m)))


class SpanishDateRecognizer(PatternRecognizer):
    """Dates with a month name in words and a four-digit year."""

    def __init__(self, label: str) -> None:
        """Build the date patterns, emitting ``label``."""
        year = r"(?:1[89]|20)\d\d(?!\w|[.,]\d)"
        patterns = [
            Pattern("words", rf"(?<![\w/.-])(?:(?P<d>\d{{1,2}})[ \t]+de[ \t]+)?"
                             rf"(?:(?:{_MONTH})[ \t]+y[ \t]+)?(?:{_MONTH})[ \t]+"
                             rf"(?:del?[ \t]+)?{year}",
                    check_negative=False),
            Pattern("dashed", rf"(?<![\w/.-])(?P<d>\d{{1,2}})-(?:{_MONTH})-{year}",
                    check_negative=False),
        ]
        super().__init__("es-date-words", label, patterns, flags=re.I)

    def validate(self, hit: Hit, text: str) -> bool:
        """A day, if written, from 1 to 31."""
        day = hit.group("d")
        return day is None or 1 <= int(day) <= 31


# The kinds looked for by default: every one but URL, which fired once on
# MEDDOCAN's training part, on a web page its annotators did not mark (0 of 1
# right; the rule asks >= 95%). A site names it with ``kinds``.
DEFAULT_KINDS = ("SSN", "ZIP", "EMAIL", "DATE", "PHONE")
ALL_KINDS = (*DEFAULT_KINDS, "URL")
_MAKERS = {"SSN": DniRecognizer, "ZIP": SpanishPostcodeRecognizer,
           "EMAIL": SpanishEmailRecognizer, "URL": SpanishUrlRecognizer,
           "DATE": SpanishDateRecognizer}


def spanish_recognizers(categories: Mapping[str, str] | None = None,
                        refined: Mapping[str, str] | None = None,
                        kinds: Sequence[str] = DEFAULT_KINDS
                        ) -> tuple[PatternRecognizer, ...]:
    """The recognizers of ``kinds`` a site's label map has a label for."""
    recognizers: list[PatternRecognizer] = []
    for kind in kinds:
        site = site_label_for(kind, categories, refined)
        if site is None:
            continue
        if kind == "PHONE":
            recognizers.append(SpanishPhoneRecognizer(
                site, site_label_for("FAX", categories, refined)))
        else:
            recognizers.append(_MAKERS[kind](site))
    return tuple(recognizers)


class SpanishRuleDetector(RuleDetector):
    """The Spanish recognizers as one detector (``rules`` with a Spanish model).

    A site's rules file binds it as it binds the English rules: its patterns
    are added, its allow words drop spans (:class:`RuleDetector`).
    """

    def __init__(self, recognizers: Sequence[PatternRecognizer],
                 site: SiteRules | None = None) -> None:
        """Run ``recognizers`` (see :func:`spanish_recognizers`)."""
        super().__init__(recognizers, "es", site)
        self.version = CODE_VERSION + (f"+site-sha256:{site.sha256}"
                                       if site is not None else "")


def from_config(config: TaggerConfig) -> Detector:
    """The Spanish rules, labelled by the label map of ``config``'s model."""
    from deid_pipeline.tagger.crf_model import load_model

    label_map = load_model(config.model_path).metadata.get("label_map")
    categories = refined = None
    if label_map:
        parsed = label_map_from_json(label_map, config.model_path or "model")
        categories, refined = parsed.categories, parsed.surrogate_labels
    site = load_site_rules(config.rules_path) if config.rules_path else None
    return SpanishRuleDetector(spanish_recognizers(categories, refined), site)
