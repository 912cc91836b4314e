"""Realistic, keyed, format-preserving surrogates: one generator per label family.

``surrogate(value, label, ctx)`` is the one entry point. Its output is a pure
function of (secret key, person id, policy, date-shift range, as-of year,
label, value): every draw is seeded from an HMAC of the key (see ``keyed``),
so nightly re-runs give the same bytes and nobody without the key can
recompute them. Results are memoised per process, which is safe precisely
because the function is pure.

A generator raises (``SurrogateError`` or anything else) when it cannot make
a safe surrogate; ``deid_pipeline.rewrite`` then masks the span, so a failure
never lets the original through.

| labels | generator | scope of consistency |
|---|---|---|
| PATIENT, RELATIVE, USERNAME | names, part by part | person |
| DOCTOR | names, part by part | whole run |
| DATE | per-person shift, same format | person |
| AGE | over 89 -> 90 / 90+ | - |
| PHONE, FAX | NPA-555-01XX | person |
| SSN | area 9xx, never issued | person |
| other IDs | same shape | person |
| EMAIL, URL, IPADDR | example domains, TEST-NET, 2001:db8:: | person |
| STREET, CITY, STATE, ZIP, COUNTRY, ROOM, DEPARTMENT, PROFESSION | same form | person |
| HOSPITAL, ORGANIZATION, LOCATION | proper words replaced | whole run |

That table is English's (``en``). A context whose ``language`` is ``es`` takes
the Spanish generators of :mod:`deid_pipeline.surrogates.es` where it has one
(names, places, phones, DNI/NIE/NASS and other ids, e-mails, ages,
professions, day-first dates), English's for the rest (URLs, IP addresses,
rooms, departments); same keys, scopes and memo.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from deid_pipeline.keys import keyed_hash
from deid_pipeline.labels import LABELS, builtin_label
from deid_pipeline.surrogates.ages import AgeGenerator
from deid_pipeline.surrogates.base import (
    DEFAULT_MAX_SHIFT_DAYS,
    DEFAULT_MIN_SHIFT_DAYS,
    SurrogateGenerator,
    as_of_year_of,
    shift_range_of,
)
from deid_pipeline.surrogates.contact import (
    EmailGenerator,
    IpAddressGenerator,
    UrlGenerator,
)
from deid_pipeline.surrogates.dates import DateGenerator, date_shift_days, parse_date
from deid_pipeline.surrogates.halves import PoolHalf
from deid_pipeline.surrogates.identifiers import (
    IdentifierGenerator,
    PhoneGenerator,
    SsnGenerator,
)
from deid_pipeline.surrogates.keyed import (
    MAX_REDRAWS,
    Originals,
    SurrogateContext,
    SurrogateError,
    avoiding,
)
from deid_pipeline.surrogates.locations import (
    CityGenerator,
    CountryGenerator,
    DepartmentGenerator,
    InstitutionGenerator,
    LocationGenerator,
    ProfessionGenerator,
    RoomGenerator,
    StateGenerator,
    StreetGenerator,
    ZipGenerator,
)
from deid_pipeline.surrogates.names import NameGenerator
from deid_pipeline.surrogates.zip3 import RESTRICTED_ZIP3, safe_harbor_zip3

__all__ = [
    "DEFAULT_MAX_SHIFT_DAYS",
    "DEFAULT_MIN_SHIFT_DAYS",
    "ENGLISH",
    "GENERATORS",
    "LANGUAGES",
    "RESTRICTED_ZIP3",
    "Originals",
    "SurrogateContext",
    "SurrogateError",
    "SurrogateGenerator",
    "check_language",
    "date_shift_days",
    "generator_for",
    "parse_date",
    "safe_harbor_zip3",
    "surrogate",
    "warm_up",
]

CACHE_SIZE = 1 << 16


def _registry(*generators: SurrogateGenerator) -> dict[str, SurrogateGenerator]:
    table: dict[str, SurrogateGenerator] = {}
    for gen in generators:
        for label in gen.labels:
            if label in table:
                raise ValueError(f"two surrogate generators for label {label}")
            table[label] = gen
    return table


GENERATORS: dict[str, SurrogateGenerator] = _registry(
    NameGenerator(), DateGenerator(), AgeGenerator(), PhoneGenerator(), SsnGenerator(),
    IdentifierGenerator(), EmailGenerator(), UrlGenerator(), IpAddressGenerator(),
    StreetGenerator(), CityGenerator(), StateGenerator(), ZipGenerator(),
    CountryGenerator(), InstitutionGenerator(), LocationGenerator(), RoomGenerator(),
    DepartmentGenerator(), ProfessionGenerator(),
)
assert set(GENERATORS) == set(LABELS), "every label needs exactly one generator"

ENGLISH = "en"
SPANISH = "es"
# The languages surrogates are made in (the tagger's languages.LANGUAGES).
LANGUAGES = (ENGLISH, SPANISH)


def check_language(language: str) -> str:
    """Return ``language`` if surrogates can be made in it, else raise ValueError."""
    if language not in LANGUAGES:
        raise ValueError(f"surrogate language {language!r}: choose from "
                         f"{', '.join(LANGUAGES)}")
    return language


@functools.cache
def _spanish() -> dict[str, SurrogateGenerator]:
    from deid_pipeline.surrogates.es import GENERATORS as SPANISH_GENERATORS

    return SPANISH_GENERATORS


def warm_up() -> None:
    """Load the name tables and the gazetteer now (about 0.4 s, once per process).

    Called when a surrogate operator is built, so the first document of a
    worker does not pay for it and a missing data package fails at startup.
    """
    from deid_pipeline.surrogates.locations import gazetteer
    from deid_pipeline.surrogates.names import name_tables

    name_tables()
    gazetteer()


def generator_for(label: str, language: str = ENGLISH) -> SurrogateGenerator:
    """Return the generator of ``label``; SurrogateError for a label without one.

    In ``es``, the Spanish generator where there is one, else English's.
    """
    if language == SPANISH:
        found = _spanish().get(label)
        if found is not None:
            return found
    try:
        return GENERATORS[label]
    except KeyError:
        raise SurrogateError(f"no surrogate generator for label {label!r}") from None


@dataclass(frozen=True, slots=True)
class _Settings:
    """The context fields a surrogate depends on: the memo key, nothing more."""

    key: bytes
    person_id: str
    policy: str
    min_shift_days: int
    max_shift_days: int
    as_of_year: int
    # The pool half to draw from (surrogates.halves); None, the whole pool,
    # for every production context (RewriteContext has no ``pool``).
    pool: PoolHalf | None = None
    # Name parts and city words the draw skips (a redraw's; None: none).
    avoid: frozenset[str] | None = None
    # Whose generators (ENGLISH or SPANISH).
    language: str = ENGLISH
    # The run's key when ``key`` is a redraw's (None: ``key`` is the run's):
    # what a redraw must not change (the Spanish province map) is keyed by it.
    root_key: bytes | None = None
    # Spanish: the INE codes of the provinces the document names itself
    # (surrogates.es.places: no province surrogate names one).
    excluded_provinces: frozenset[str] = frozenset()
    # Spanish: the INE codes of the provinces the document's postcodes name
    # (a town the town table does not place is drawn in the one they name).
    postcode_provinces: frozenset[str] = frozenset()


def surrogate(value: str, label: str, ctx: SurrogateContext) -> str:
    """Return the surrogate of ``value`` (a ``label`` span) for ``ctx``'s person.

    Raises when no safe surrogate exists (unknown label, empty value, a form
    the generator cannot handle); callers must then mask, never keep, the value.
    """
    if not value:
        raise SurrogateError(f"{label}: empty value")
    label = builtin_label(label, value)  # a site label: its category's
    settings = _settings_of(ctx)
    out = _memo(settings, label, value)
    avoid = getattr(ctx, "avoid", None)
    if avoid is None:
        return out
    if label in _PERSON_NAMES and avoid.institution_words:
        avoid = _for_person_names(avoid)
    if label in _SHIFTED:
        if avoid.names_in(out):
            raise SurrogateError(f"{label}: the shifted value names an original")
    elif _spells(avoid, out, settings.language):
        out = _redrawn(settings, label, value, avoid)
    return out


def _spells(avoid: Originals, out: str, language: str) -> bool:
    """Whether ``out`` spells an original; in Spanish, an original place too.

    (A person's ``Madrid`` drawn for their ``Barcelona`` would put a real place
    of theirs back; English surrogates do not ask, as before.)
    """
    return avoid.spelled_by(out) or (language == SPANISH
                                     and avoid.places_spelled_by(out))


class _LastAnswer:
    """``compute`` of the last argument seen, kept while the same object comes.

    A document's or a header's values all come with one context object and
    one set of originals (both immutable): dozens a message, thousands in a
    long document. One tuple: a thread sees the old pair or the new one.
    """

    def __init__(self, compute: Callable) -> None:
        self._compute = compute
        self._last: tuple | None = None

    def __call__(self, argument):
        last = self._last
        if last is not None and last[0] is argument:
            return last[1]
        answer = self._compute(argument)
        self._last = (argument, answer)
        return answer


# A person's surrogate avoids institutions' words too (Originals.institution_words).
_PERSON_NAMES = frozenset({"PATIENT", "DOCTOR", "RELATIVE"})
_for_person_names = _LastAnswer(Originals.for_person_names)


# Dates and ages move by the person's one shift: a redraw would break intervals,
# so one whose month or weekday name is a name of the message's people (a
# shifted "3-May-96" beside a relative named May) is masked instead. Their
# digits are a shift, not a draw: they are not compared with ids.
_SHIFTED = frozenset({"DATE", "AGE"})


# Keyed redraws from the whole pool before one from the pool less the
# originals: an ordinary document's rare collision gets the surrogate it always
# got; a document whose originals hold most of the pool gets its draw in 3 tries
# instead of up to 64. A draw that still spells one after a few of those
# keeps an original word (a hospital's "General" that is also someone's name):
# more draws would not change it, so it is masked.
KEYED_REDRAWS = 2
AVOIDING_REDRAWS = 4


def _redrawn(settings: _Settings, label: str, value: str, avoid: Originals) -> str:
    """Draw again under keys derived from the run's key, until nothing is spelled.

    Deterministic: the n-th redraw uses HMAC(key, redraw|n), the one after
    ``KEYED_REDRAWS`` also skips the originals' words (the same set gives the
    same draw), so the same message gives the same surrogate on every run;
    without the key nobody can tell which draw was taken.
    """
    draws = KEYED_REDRAWS + AVOIDING_REDRAWS if avoid.words else MAX_REDRAWS
    for n in range(1, draws + 1):
        again = replace(settings, key=keyed_hash(settings.key, "redraw", str(n)),
                        root_key=settings.key)
        if n > KEYED_REDRAWS and avoid.words:
            again = replace(again, avoid=avoid.words)
            with avoiding(avoid.words):
                out = _memo(again, label, value)
        else:
            out = _memo(again, label, value)
        if not _spells(avoid, out, settings.language):
            return out
    raise SurrogateError(f"{label}: every redraw spells an original")


def _new_settings(ctx: SurrogateContext) -> _Settings:
    """The settings every draw for ``ctx`` uses (see ``_settings_of``)."""
    min_days, max_days = shift_range_of(ctx)
    language = getattr(ctx, "language", ENGLISH)
    avoid = getattr(ctx, "avoid", None)
    excluded: frozenset[str] = frozenset()
    postcodes: frozenset[str] = frozenset()
    if language == SPANISH and avoid is not None:
        from deid_pipeline.surrogates.es.places import (
            excluded_provinces,
            postcode_provinces,
        )

        excluded = excluded_provinces(lambda name: _spells(avoid, name, language))
        postcodes = postcode_provinces(avoid.places)
    settings = _Settings(ctx.key, ctx.person_id, ctx.policy,
                         min_days, max_days, as_of_year_of(ctx),
                         getattr(ctx, "pool", None), language=language,
                         excluded_provinces=excluded,
                         postcode_provinces=postcodes)
    return settings


_settings_of = _LastAnswer(_new_settings)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _memo(settings: _Settings, label: str, value: str) -> str:
    out = generator_for(label, settings.language).generate(value, label, settings)
    if not isinstance(out, str) or not out:
        raise SurrogateError(f"{label}: generator returned no text")
    return out
