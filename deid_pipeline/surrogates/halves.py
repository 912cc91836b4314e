"""Pool halves: names and places a model trains on are never the ones it is scored on.

The sealed notes share the corpus's names and places, and training copies
(``--augment``) and synthetic notes drew from the same Faker and gazetteer
lists that the scoring data would; a model that has met a string in training
finds it again at scoring time, and the figure flatters it (sealed recall
0.983, notes of unseen patients 0.951). So every pool of values a generator
draws from (first and last names, cities and towns, street names, states,
hospital name words, ID prefixes) is cut once, by a salted hash of the value,
into a TRAINING and an EVALUATION half. Training data draws only from the
first, the swapped sealed split and the genre set only from the second.

Production surrogates (``deid-pipeline run``) draw from the whole pool: their
context has no ``pool`` (None), and nothing here is global state.

The salt is fixed once (pinned by ``tests/test_pool_halves.py``): changing it
moves values between halves, so a model trained before the change may have
seen the evaluation strings after it.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.keyed import normalise

POOL_SALT = "deid-pipeline pool halves v1"


class PoolHalf(str, enum.Enum):
    """Which half of every pool a generator may draw from."""

    TRAINING = "training"
    EVALUATION = "evaluation"


def half_of(value: str) -> PoolHalf:
    """The half ``value`` belongs to: a salted SHA-256 of its normalised form.

    Normalised (case and spacing ignored), so ``BOSTON`` and ``Boston`` agree,
    and one function for every pool, so a word that is both a surname and a
    city (``Jordan``) is in the same half as either.
    """
    digest = hashlib.sha256(f"{POOL_SALT}|{normalise(value)}".encode()).digest()
    return PoolHalf.EVALUATION if digest[0] & 1 else PoolHalf.TRAINING


def in_pool(value: str, pool: PoolHalf | None) -> bool:
    """Whether a draw from ``pool`` (None: the whole pool) may give ``value``."""
    return pool is None or half_of(value) is pool


def restrict(values: Iterable[str], pool: PoolHalf | None) -> tuple[str, ...]:
    """The values of ``pool``'s half, in their order (all of them for None)."""
    return tuple(v for v in values if in_pool(v, pool))


def restrict_weights(weights: Mapping[str, float], pool: PoolHalf | None
                     ) -> dict[str, float]:
    """A weighted list cut to ``pool``'s half, weights kept."""
    return {k: w for k, w in weights.items() if in_pool(k, pool)}


def parse_pool(name: str | None) -> PoolHalf | None:
    """``training``/``evaluation`` -> the half; None or ``all`` -> the whole pool."""
    if name is None or name == "all":
        return None
    try:
        return PoolHalf(name)
    except ValueError:
        raise ValueError(f"pool {name!r}: choose training, evaluation or all") from None


@dataclass(frozen=True)
class PoolContext:
    """A surrogate context restricted to one half (training copies, swapped notes).

    Satisfies :class:`~deid_pipeline.surrogates.keyed.SurrogateContext`;
    ``deid_pipeline.rewrite.RewriteContext`` has no ``pool`` and so draws
    from the whole pool.
    """

    key: bytes
    person_id: str
    as_of_year: int
    pool: PoolHalf | None
    policy: Policy = Policy.SAFE_HARBOR
    # The surrogates' language (``surrogates.ENGLISH`` or ``SPANISH``): a
    # Spanish site's training copies take Spanish names and day-first dates.
    language: str = "en"
