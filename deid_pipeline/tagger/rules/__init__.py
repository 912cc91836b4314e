r"""High-precision rule recognizers for formulaic PHI: contacts, IDs, dates, ages.

(And the formulaic shapes of names, checked against the lexicons: see
:class:`NameRecognizer`.)

Shaped like Presidio's ``PatternRecognizer``: one small object per PHI kind
with a label, regular expressions compiled once at construction, optional
context words and ``validate``/``invalidate`` hooks. The CRF finds names and
places; these rules find what has a format, where a pattern plus a structural
check (a real calendar date, an SSN area, an IPv4 octet) beats a guess.

Precision comes first here because the CRF and the central merge already lean
towards recall: a rule firing on ``120/80`` or ``1/2 NS`` would redact the
clinical content a research extract exists for. So every shape that clinical
shorthand imitates (``7/22`` versus ``5/5 strength``, ``555-1234`` versus
``900-1300 cc``) is checked against the words around it, on its own line.

The shapes, which do not change between hospitals, live here with their
validators. The words around them (context and negative words, units, ID
keywords and the label each implies), which do, live in ``data/rules.json``,
read once; :meth:`RuleDetector.from_dict` builds a detector from a hospital's
own copy, and the file's ``version`` is part of the detector version.

Speed: each recognizer runs one compiled regular expression over the whole
text and Python runs only per candidate, never per token. Patterns carry
zero-width guards so a dozen shapes cost one failed check inside a word, use
bounded or possessive repetition, and start only at run boundaries, so the
scan stays linear even on a 100,000-character line of digits and slashes.
On ASCII text the expression runs as a case-sensitive twin that ``re``
tries only at the characters where a match can start (:mod:`.scan`), which
finds the same matches in less than two thirds of the time.

Numbers are read only from the digits ``\d`` matches (decimal digits, which
``int`` reads in any script, so PHI in full-width digits is still found),
never by ``str.isdigit``, which is also true for ``²`` and ``①``: a note with
``3/4²`` costs no record here.

The package: :mod:`.base` holds the shared pattern machinery (:mod:`.scan`
its faster scans), one module per recognizer family (:mod:`.contact`,
:mod:`.ids`, :mod:`.dates`, :mod:`.ages`, :mod:`.names`, :mod:`.places`),
and :mod:`.detector` the detector, which the registry
(:mod:`deid_pipeline.tagger.detectors`) builds. Every public name is
importable from here.
"""

from deid_pipeline.tagger.rules.ages import AgeRecognizer
from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer
from deid_pipeline.tagger.rules.contact import (
    EmailRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UrlRecognizer,
)
from deid_pipeline.tagger.rules.credentials import CredentialNameRecognizer
from deid_pipeline.tagger.rules.dates import DateRecognizer
from deid_pipeline.tagger.rules.detector import (
    CODE_VERSION,
    RuleDetector,
    build_recognizers,
    default_config,
    is_date_lookalike,
)
from deid_pipeline.tagger.rules.fields import PatientFieldRecognizer
from deid_pipeline.tagger.rules.ids import (
    IdNearWordRecognizer,
    IdRecognizer,
    SsnRecognizer,
)
from deid_pipeline.tagger.rules.names import NameRecognizer, word_is_titled
from deid_pipeline.tagger.rules.places import (
    AddressTailRecognizer,
    EmployerRecognizer,
    FacilityRecognizer,
    InstitutionRecognizer,
    ResidenceRecognizer,
    TransferRecognizer,
    UniversityRecognizer,
)

__all__ = [
    "AddressTailRecognizer",
    "CODE_VERSION",
    "AgeRecognizer",
    "CredentialNameRecognizer",
    "DateRecognizer",
    "EmailRecognizer",
    "EmployerRecognizer",
    "FacilityRecognizer",
    "Hit",
    "IdNearWordRecognizer",
    "IdRecognizer",
    "InstitutionRecognizer",
    "IpRecognizer",
    "NameRecognizer",
    "Pattern",
    "PatientFieldRecognizer",
    "PatternRecognizer",
    "PhoneRecognizer",
    "ResidenceRecognizer",
    "RuleDetector",
    "SsnRecognizer",
    "TransferRecognizer",
    "UniversityRecognizer",
    "UrlRecognizer",
    "build_recognizers",
    "default_config",
    "is_date_lookalike",
    "word_is_titled",
]
