"""Synthetic identities drawn from one half of every name and place list.

Training notes (``synthetic:N``) draw from the TRAINING half, the genre set
from the EVALUATION half (:mod:`deid_pipeline.surrogates.halves`), so a model
scored on the genre set has never been trained on one of its names, towns,
streets, companies or ID prefixes. The restriction is a thin wrapper around
the one seeded Faker (each draw is repeated until its proper words fall in the
half), so the seed still fixes every byte and ``pool=None`` is the plain
Faker, unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from faker import Faker
from faker.providers.address.en_US import Provider as _Address
from faker.providers.company.en_US import Provider as _Company

from deid_pipeline.surrogates.halves import PoolHalf, in_pool

# Words of a company that name no one: legal forms.
_COMPANY_FORMS = frozenset(w.casefold() for w in (
    *_Company.company_suffixes, "and", "sons"))
_STREET_SUFFIXES = frozenset(w.casefold() for w in _Address.street_suffixes)
_UNITS = frozenset({"apt", "suite"})
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_PREFIX = re.compile(r"[A-Za-z]+")
# A half holds about half of any list: 200 draws all missing it is a bug.
_MAX_DRAWS = 200


def proper_words(value: str) -> list[str]:
    """The words of a name, street or company that identify.

    Not a company's legal form (``LLC``, ``and Sons``), a unit (``Apt.``) or
    the suffix ending a street name (``Wall Street``: ``Street``; but the
    surname ``Wall`` counts).
    """
    words = [w for w in _WORD.findall(value) if len(w) >= 2]
    street = [w for w in words if w.casefold() not in _UNITS]
    if len(street) >= 2 and street[-1].casefold() in _STREET_SUFFIXES:
        words = street[:-1]
    return [w for w in words if w.casefold() not in _COMPANY_FORMS]


def value_in_pool(value: str, pool: PoolHalf | None) -> bool:
    """Whether every proper word of ``value`` is in ``pool``'s half."""
    return all(in_pool(w, pool) for w in proper_words(value))


def prefix_in_pool(value: str, pool: PoolHalf | None) -> bool:
    """Whether the letter prefix of an ID (``XJH`` of ``XJH123456``) is in the half."""
    m = _PREFIX.match(value)
    return m is None or in_pool(m.group(0).upper(), pool)


def draw_in_pool(draw: Callable[[], str], pool: PoolHalf | None,
                 accept: Callable[[str, PoolHalf | None], bool] = value_in_pool
                 ) -> str:
    """``draw()`` again until ``accept`` says its value is in ``pool``'s half."""
    for _ in range(_MAX_DRAWS):
        value = draw()
        if accept(value, pool):
            return value
    raise ValueError(f"no draw in the {pool} half after {_MAX_DRAWS} tries")


class HalfFaker:
    """A seeded Faker whose name, street, company and ID-prefix draws keep to a half.

    Everything else (``random``, ``seed_instance``, dates, numbers) is the
    wrapped Faker's own, so structural choices are driven by the same seed.
    """

    _WORDS = frozenset({"first_name", "first_name_male", "first_name_female",
                        "last_name", "street_name", "street_address", "company"})
    _CODES = frozenset({"bothify", "lexify"})

    def __init__(self, fake: Faker, pool: PoolHalf) -> None:
        """Wrap ``fake``; draws keep to ``pool``'s half."""
        self._fake = fake
        self.pool = pool

    def __getattr__(self, name: str):
        """The wrapped Faker's attribute, restricted when it draws a name or code."""
        attr = getattr(self._fake, name)
        if name in self._WORDS:
            return lambda *a, **k: draw_in_pool(lambda: attr(*a, **k), self.pool)
        if name in self._CODES:
            def code(text: str = "", *a, **k) -> str:
                if "?" not in text:  # a fixed prefix is a format, not a draw
                    return attr(text, *a, **k)
                return draw_in_pool(lambda: attr(text, *a, **k), self.pool,
                                    prefix_in_pool)
            return code
        return attr


def restricted(fake: Faker, pool: PoolHalf | None) -> Faker | HalfFaker:
    """``fake`` itself for the whole pool, else a :class:`HalfFaker` around it."""
    return fake if pool is None else HalfFaker(fake, pool)
