"""Person names (PATIENT, DOCTOR, RELATIVE, USERNAME), replaced part by part.

Each name part is replaced on its own and keyed by (scope, part), so one real
part always maps to one surrogate part: ``John Smith`` and ``Smith`` give the
same surrogate surname, and ``Smith, John`` keeps its order because the
separators stay where they were. Whether a part gets a first or a last name
depends on the part itself (is it a known first name?), never on its position,
or the consistency would break between ``Smith`` and ``John Smith``.

Scopes: patients and relatives share the person's scope (a wife who shares the
patient's surname keeps sharing the surrogate surname); doctors are keyed run
wide, so one doctor has one surrogate across every patient.
"""

from __future__ import annotations

import functools
import random
import re

from deid_pipeline.surrogates.base import SurrogateGenerator
from deid_pipeline.surrogates.halves import PoolHalf, restrict_weights
from deid_pipeline.surrogates.keyed import (
    RUN_SCOPE,
    SurrogateContext,
    SurrogateError,
    WeightedTable,
    normalise,
    seed_of,
)
from deid_pipeline.surrogates.text import case_of, random_like, redraw, with_case

# Letters with inner apostrophes (O'Brien), digit runs, or anything else.
_TOKENS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+|[\W_]+")
_POSSESSIVE = re.compile(r"^(.{2,}?)(['’][sS])$")

# Titles before a name and degrees or suffixes after one carry no identity and
# are kept, but only in those positions: "Do", "Md" or "Sr" can be name parts
# too (Minh Do, Md Rahman), and a name part must never pass through unchanged.
TITLES = frozenset({"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "rev"})
DEGREES = frozenset({
    "jr", "sr", "ii", "iii", "iv", "md", "rn", "np", "phd", "dds", "dmd", "dvm", "mph",
    "msn", "bsn", "lpn", "cnm", "crna", "facs", "facp",
})


class _NameTables:
    """Faker's en_US name lists as weighted tables, built once per process and half.

    The tables draw from ``pool``'s half (:mod:`.halves`; None: all names);
    which list a part belongs to is still decided on the whole lists, so a
    name is a first name in either half.
    """

    def __init__(self, pool: PoolHalf | None = None) -> None:
        # Imported here, once: Faker's import is not paid where nothing is
        # rewritten (see keyed.FakerPool).
        from faker.providers.person.en_US import Provider as PersonData

        female = PersonData.first_names_female
        male = PersonData.first_names_male
        self.female = WeightedTable(restrict_weights(female, pool))
        self.male = WeightedTable(restrict_weights(male, pool))
        self.first = WeightedTable(restrict_weights(PersonData.first_names, pool))
        self.last = WeightedTable(restrict_weights(PersonData.last_names, pool))
        self.female_keys = frozenset(n.casefold() for n in female)
        self.male_keys = frozenset(n.casefold() for n in male)

    @staticmethod
    def key(part: str) -> str:
        """The form the ``*_keys`` sets hold (``part`` comes casefolded)."""
        return part

    def pool_for(self, part: str) -> WeightedTable:
        """Pick first names (same sex when known) for a first name, else last names.

        Faker's lists hold a few thousand first names; one they lack is still a
        first name when the tagger's name lists rank it higher as one than as a
        surname (``Aurelio lives alone`` became ``Black lives alone``).
        """
        key = self.key(part)
        in_f = key in self.female_keys
        in_m = key in self.male_keys
        if in_f and not in_m:
            return self.female
        if in_m and not in_f:
            return self.male
        if in_f or _listed_first_name(key):
            return self.first
        return self.last


def _listed_first_name(key: str) -> bool:
    """Whether the name lists rank ``key`` higher as a first name than a surname.

    Tiers ``fn1``-``fn3`` and ``ln1``-``ln3`` (1: the most common); a name in
    no surname tier counts as tier 4 there (``Deshawn``: fn2 only).
    """
    from deid_pipeline.tagger import lexicons

    flags = lexicons.load().flags(key)
    first = min((int(f[2]) for f in flags if f[:2] == "fn" and f[2:].isdigit()),
                default=None)
    last = min((int(f[2]) for f in flags if f[:2] == "ln" and f[2:].isdigit()),
               default=4)
    return first is not None and first < last


@functools.cache
def name_tables(pool: PoolHalf | None = None) -> _NameTables:
    """Return the process-wide name tables of ``pool``'s half (immutable, shared)."""
    return _NameTables(pool)


class NameGenerator(SurrogateGenerator):
    """Faker names, part by part, with the original's case, initials and order."""

    labels = ("PATIENT", "DOCTOR", "RELATIVE", "USERNAME")
    titles: frozenset[str] = TITLES
    degrees: frozenset[str] = DEGREES
    # Lower-case words kept inside a name (Spanish ``de``, ``del``, ``y``).
    particles: frozenset[str] = frozenset()

    def tables(self, pool: PoolHalf | None = None):
        """The name tables parts are drawn from (``pool``'s half; None: all)."""
        # No argument on the production path: the call it always was.
        return name_tables() if pool is None else name_tables(pool)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Replace every name part of ``value``; titles and punctuation stay."""
        scope = RUN_SCOPE if label == "DOCTOR" else ctx.person_id
        tokens = _TOKENS.findall(value)
        words = [i for i, t in enumerate(tokens) if t[0].isalpha()]
        out = []
        changed = False
        rng = None
        for i, token in enumerate(tokens):
            w = token.casefold()
            title = w in self.titles and i != words[-1]
            degree = w in self.degrees and i != words[0]
            particle = token in self.particles and i not in (words[0], words[-1])
            if token[0].isalpha() and (title or degree or particle):
                out.append(token)
                continue
            if token[0].isdigit():
                if rng is None:  # digits in a user name: keyed by the whole value
                    # Own RNG: name parts below re-seed this thread's Faker.
                    rng = random.Random(
                        seed_of(ctx.key, scope, "NAME-DIGITS", normalise(value)))
                token = redraw(lambda t=token: random_like(t, rng), token, label)
                changed = True
            elif token[0].isalpha():
                token = self.part(token, ctx.key, scope, getattr(ctx, "pool", None))
                changed = True
            out.append(token)
        if not changed:
            raise SurrogateError(f"{label}: no name part to replace")
        return "".join(out)

    def part(self, word: str, key: bytes, scope: str,
             pool: PoolHalf | None = None) -> str:
        """Return the surrogate of one name part (a word of letters) in ``scope``."""
        m = _POSSESSIVE.match(word)
        if m:
            return self.part(m.group(1), key, scope, pool) + m.group(2)
        case = case_of(word)
        norm = normalise(word)
        if len(word) == 1:
            # An initial stays an initial, keyed by the letter.
            fake = self._faker.seeded(seed_of(key, scope, "NAME-INITIAL", norm))
            letter = redraw(lambda: fake.random.choice("ABCDEFGHIJKLMNOPRSTVW"),
                            word, "NAME")
            return letter if case == "upper" else letter.lower()
        table = self.tables(pool).pool_for(norm)
        fake = self._faker.seeded(seed_of(key, scope, "NAME", norm))
        surrogate = redraw(lambda: table.draw(fake.random), word, "NAME")
        return with_case(surrogate, case)
