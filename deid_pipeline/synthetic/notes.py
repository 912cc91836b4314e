"""Synthetic free-text clinical documents with exact gold PHI spans.

``generate_notes`` writes nursing notes (terse, often all upper or all lower
case, like the MIMIC notes of the PhysioNet corpus), discharge summaries,
radiology and pathology reports. Documents are assembled from randomly chosen
sections and sentences (``phrases.py``) whose slots render one patient's
identities in the many forms real notes use, with clinical look-alikes
(``BP 120/80``, ``1/2 tab``, ``K 3.9``) left unlabelled.

Determinism: one ``Faker`` instance per call, re-seeded per patient from the
seed, drives every choice; the same seed gives byte-identical documents, and
``generate_notes(n, s)`` is a prefix of ``generate_notes(m, s)`` for ``n < m``.
Ages are labelled AGE only from ``age_threshold`` (90, HIPAA Safe Harbor and
the PhysioNet guideline) up; pass 0 to label every age as i2b2 2014 does.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from faker import Faker

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.surrogates.halves import PoolHalf
from deid_pipeline.synthetic import phrases as ph
from deid_pipeline.synthetic import report_phrases as rp
from deid_pipeline.synthetic.context import DocContext
from deid_pipeline.synthetic.identity import IdentityFactory, Patient, derive_seed
from deid_pipeline.synthetic.text import AnnotatedText, Piece, assemble, count_tokens

logger = logging.getLogger(__name__)

KINDS = ("nursing", "discharge", "radiology", "pathology")
_KIND_WEIGHTS = {"nursing": 5, "discharge": 2, "radiology": 3, "pathology": 2}
_CASE_WEIGHTS = {
    "nursing": (3, 4, 3),  # as_is, upper, lower
    "discharge": (17, 3, 0),
    "radiology": (6, 4, 0),
    "pathology": (6, 4, 0),
}
_MAX_TEMPLATE_USES = 1


@dataclass(frozen=True, slots=True)
class SyntheticNote:
    """A generated document and the values inserted for its gold spans, in order."""

    document: ClinicalDocument
    inserted: tuple[str, ...]


class _Section:
    """A heading plus items; ``pool`` holds the templates it may grow with."""

    def __init__(
        self,
        heading: list[Piece] | None,
        style: str,
        pool: Sequence[str] = (),
        weight: float = 1.0,
        grow: bool = True,
        max_uses: int = _MAX_TEMPLATE_USES,
        blank_after: bool = False,
    ) -> None:
        self.heading = heading or []
        self.style = style
        self.pool = tuple(pool)
        self.weight = weight
        self.grow = grow
        self.max_uses = max_uses
        self.blank_after = blank_after
        self.items: list[list[Piece]] = []
        self.tokens = 0


class _DocBuilder:
    """Sections in order plus a tail (signatures), within a token budget.

    Token counts are exact: each section is counted as rendered, separators
    included, and sections end with a newline so counts add up.
    """

    def __init__(self, ctx: DocContext, sep: str = ". ", end: str = ".") -> None:
        self.ctx = ctx
        self.sections: list[_Section] = []
        self.tail: list[_Section] = []
        self.sep = sep
        self.end = end
        self.uses: dict[str, int] = {}

    # construction

    def section(
        self,
        heading: str | None,
        style: str,
        pool: Sequence[str] = (),
        initial: int = 1,
        weight: float = 1.0,
        grow: bool = True,
        max_uses: int = _MAX_TEMPLATE_USES,
        before: _Section | None = None,
    ) -> _Section:
        """Add a section (at the end, or ``before`` another) with ``initial`` items."""
        heading_pieces = self.ctx.render(heading) if heading else None
        sec = _Section(
            heading_pieces,
            style,
            pool,
            weight,
            grow,
            max_uses,
            blank_after=self.ctx.rng.random() < 0.35,
        )
        at = self.sections.index(before) if before else len(self.sections)
        self.sections.insert(at, sec)
        for _ in range(initial):
            self.add_item(sec)
        return sec

    def fixed(self, template: str, tail: bool = False) -> _Section:
        """Append verbatim lines (headers; signatures when ``tail``)."""
        sec = _Section(None, "fixed")
        (self.tail if tail else self.sections).append(sec)
        self.add_item(sec, template)
        return sec

    def add_item(self, sec: _Section, template: str | None = None) -> bool:
        """Render one more item into ``sec``; False when its pool is used up."""
        if template is None:
            fresh = self._fresh(sec)
            if not fresh:
                return False
            template = self.ctx.rng.choice(fresh)
            self.uses[template] = self.uses.get(template, 0) + 1
        sec.items.append(self.ctx.render(template))
        self._recount(sec)
        return True

    def pop_item(self, sec: _Section) -> None:
        """Drop the last item of ``sec``."""
        sec.items.pop()
        self._recount(sec)

    def _recount(self, sec: _Section) -> None:
        sec.tokens = count_tokens(self._render(sec))

    def new_block(self) -> None:
        """Start a block (addendum, exam, specimen part) whose templates may repeat.

        Earlier sections stop growing, so they are never filled with copies.
        """
        for sec in self.sections:
            sec.grow = False
        self.uses.clear()

    def _fresh(self, sec: _Section) -> list[str]:
        return [t for t in sec.pool if self.uses.get(t, 0) < sec.max_uses]

    @property
    def tokens(self) -> int:
        """Count the tokens of the document as it would render now."""
        return sum(s.tokens for s in self.sections) + sum(s.tokens for s in self.tail)

    # budget

    def fit(
        self, min_tokens: int, max_tokens: int, grow: Callable[[], bool] | None = None
    ) -> None:
        """Grow towards a random target in [min, max]; trim any overflow."""
        rng = self.ctx.rng
        target = rng.randint(min_tokens, max_tokens)
        failures = 0
        while self.tokens < target and failures < 30:
            growable = [s for s in self.sections if s.grow and self._fresh(s)]
            if not growable:
                if grow is None or not grow():
                    break
                continue
            sec = rng.choices(growable, [s.weight for s in growable])[0]
            self.add_item(sec)
            if self.tokens > max_tokens:
                self.pop_item(sec)
                failures += 1
        self._trim(max_tokens)

    def _trim(self, max_tokens: int) -> None:
        while self.tokens > max_tokens:
            candidates = [s for s in self.sections if s.style != "fixed" and s.items]
            if not candidates:
                candidates = [s for s in self.sections[1:] + self.tail if s.items]
            if not candidates:
                return
            self.pop_item(max(candidates, key=lambda s: (len(s.items), s.tokens)))

    # output

    def _render(self, sec: _Section) -> list[Piece]:
        out: list[Piece] = []
        if not sec.items:
            return out
        if sec.style == "fixed":
            for item in sec.items:
                out.extend(item)
            return out
        out.extend(sec.heading)
        if sec.style == "prose":
            out.append((" " if sec.heading else "", None))
            for i, item in enumerate(sec.items):
                if i:
                    out.append((self.sep, None))
                out.extend(item)
            out.append((self.end + "\n", None))
        elif sec.style in ("list", "lines"):
            out.append(("\n", None))
            for item in sec.items:
                out.append(("- " if sec.style == "list" else "", None))
                out.extend(item)
                out.append(("\n", None))
        elif sec.style == "numbered":
            out.append(("\n", None))
            for i, item in enumerate(sec.items, 1):
                out.append((f"{i}. ", None))
                out.extend(item)
                out.append(("\n", None))
        else:  # pragma: no cover - programming error
            raise ValueError(sec.style)
        if sec.blank_after:
            out.append(("\n", None))
        return out

    def pieces(self) -> list[Piece]:
        """Render the whole document as pieces."""
        out: list[Piece] = []
        for sec in self.sections + self.tail:
            out.extend(self._render(sec))
        return out


# --- one builder per kind ------------------------------------------------------


def _nursing(ctx: DocContext, min_tokens: int, max_tokens: int) -> list[Piece]:
    rng = ctx.rng
    sep = rng.choice((". ", "; ", " . ", ". ", ", ", ".  ", " ; "))
    b = _DocBuilder(ctx, sep=sep, end=rng.choice((".", ".", "", " .", ";")))
    if rng.random() < 0.7:
        b.fixed(rng.choice(ph.NURSING_TITLES) + rng.choice((":\n", "\n", " \n", ": ")))
    style = rng.choices(("systems", "soap", "narrative"), (5, 3, 2))[0]
    systems = list(ph.NURSING_SYSTEMS)
    if style == "systems":
        if rng.random() < 0.5:
            b.section(
                None, "prose", ph.NURSING_ADMIT, initial=rng.randint(1, 3), weight=0.5
            )
        chosen = [s for s in systems if rng.random() < (0.9 if s == "social" else 0.7)]
        for name in chosen or systems[:3]:
            headings, templates = ph.NURSING_SYSTEMS[name]
            b.section(
                rng.choice(headings),
                "prose",
                templates,
                initial=rng.randint(1, 2),
                weight=2.0 if name == "social" else 1.0,
            )
        if rng.random() < 0.5:
            b.section(None, "prose", ph.NURSING_FREE, initial=1, weight=0.5)
    elif style == "soap":
        o_pool = (
            ph.NURSING_ADMIT
            + ph.NURSING_FREE
            + tuple(
                t
                for s in ("neuro", "cv", "resp", "gi", "gu")
                for t in ph.NURSING_SYSTEMS[s][1]
            )
        )
        b.section(
            rng.choice(("O:", "O-", "o:", "DATA:", "D:")),
            "prose",
            o_pool,
            initial=rng.randint(2, 5),
            weight=3,
        )
        b.section(
            rng.choice(("A:", "A-", "a:")),
            "prose",
            (
                "[stable|unstable|improving|no change]",
                "{dx}",
                "[continued|ongoing] {dx}",
            ),
            initial=1,
            weight=0.3,
        )
        b.section(
            rng.choice(("P:", "P-", "p:", "R:")),
            "prose",
            ph.NURSING_SYSTEMS["plan"][1] + ph.NURSING_SYSTEMS["social"][1],
            initial=rng.randint(1, 3),
            weight=1,
        )
    else:
        pool = (
            ph.NURSING_FREE
            + ph.NURSING_ADMIT
            + tuple(
                t for _, templates in ph.NURSING_SYSTEMS.values() for t in templates
            )
        )
        for _ in range(rng.randint(1, 3)):
            b.section(None, "prose", pool, initial=rng.randint(2, 4))

    def grow() -> bool:
        if len(b.sections) > 40:
            return False
        b.new_block()
        b.section(
            rng.choice(
                (
                    "Addendum {time}:",
                    "ADDENDUM:",
                    "addendum:",
                    "Update {time}:",
                    "{time}:",
                )
            ),
            "prose",
            ph.NURSING_FREE
            + ph.NURSING_SYSTEMS["social"][1]
            + ph.NURSING_SYSTEMS["plan"][1],
            initial=1,
        )
        return True

    if rng.random() < 0.4:
        b.fixed(
            rng.choice(
                (
                    "\n{dr:name} RN",
                    "\n[RN|rn|R.N.]",
                    "\n-{dr:first} RN",
                    "\nsee careview",
                )
            ),
            tail=True,
        )
    b.fit(min_tokens, max_tokens, grow)
    return b.pieces()


def _header(
    b: _DocBuilder, lines: Sequence[str], keep: float, likely: Sequence[int] = ()
) -> None:
    """Each header line, kept with probability ``keep`` (0.95 for ``likely`` ones)."""
    for i, line in enumerate(lines):
        if b.ctx.rng.random() < (0.95 if i in likely else keep):
            b.fixed(line)


def _sign_and_fit(
    b: _DocBuilder,
    signature: Sequence[str],
    min_tokens: int,
    max_tokens: int,
    grow: Callable[[], bool],
) -> list[Piece]:
    """End with 1-3 signature lines, fit the length, and render the pieces."""
    rng = b.ctx.rng
    b.fixed("\n", tail=True)
    for line in rng.sample(signature, rng.randint(1, 3)):
        b.fixed(line, tail=True)
    b.fit(min_tokens, max_tokens, grow)
    return b.pieces()


def _discharge(ctx: DocContext, min_tokens: int, max_tokens: int) -> list[Piece]:
    rng = ctx.rng
    b = _DocBuilder(ctx)
    _header(b, ph.DS_HEADER, 0.95)
    for line in rng.sample(ph.DS_HEADER_OPTIONAL, rng.randint(1, 5)):
        b.fixed(line)
    b.fixed("\n")
    course: _Section | None = None
    for heading, style, pool in ph.DS_SECTIONS:
        is_course = "COURSE" in heading
        if is_course or rng.random() < 0.85:
            fixed = heading.startswith(("[Chief", "[Family", "[Discharge Disp"))
            sec = b.section(
                heading,
                style,
                pool,
                initial=1,
                grow=not fixed,
                weight=3 if is_course else 1,
            )
            if is_course:
                course = sec

    def grow() -> bool:
        # A long stay: one more problem paragraph of the hospital course.
        if len(b.sections) > 60:
            return False
        b.new_block()
        after = b.sections.index(course) + 1
        b.section(
            "# {dx}:",
            "prose",
            ph.DS_COURSE,
            initial=2,
            before=b.sections[after] if after < len(b.sections) else None,
        )
        return True

    return _sign_and_fit(b, ph.DS_SIGNATURE, min_tokens, max_tokens, grow)


def _radiology(ctx: DocContext, min_tokens: int, max_tokens: int) -> list[Piece]:
    rng = ctx.rng
    b = _DocBuilder(ctx)
    ctx.exam = rng.choice(tuple(rp.RAD_EXAMS))
    ctx.exams.append(ctx.exam)
    _header(b, rp.RAD_HEADER, 0.6, likely=(1, 2))
    b.fixed("\n")
    for heading, pool in rp.RAD_SECTIONS:
        b.section(heading, "prose", pool, initial=1, grow=False)

    def add_exam(first: bool) -> None:
        technique, findings, impression = rp.RAD_EXAMS[ctx.exam]
        if not first:
            b.fixed("\n[EXAM|Exam|ADDITIONAL EXAM]: " + ctx.exam + "\n")
        b.add_item(
            b.section("[TECHNIQUE|Technique]:", "prose", (), initial=0),
            rng.choice(technique),
        )
        b.section(
            "[FINDINGS|Findings]:",
            "prose",
            findings,
            initial=rng.randint(2, 4),
            weight=3,
        )
        b.section(
            "[IMPRESSION|Impression|CONCLUSION]:",
            "numbered",
            impression,
            initial=1,
            weight=1,
            max_uses=1,
        )

    add_exam(True)

    def grow() -> bool:
        if len(b.sections) > 40:
            return False
        ctx.exam = rng.choice(tuple(rp.RAD_EXAMS))
        ctx.exams.append(ctx.exam)
        b.new_block()
        add_exam(False)
        return True

    return _sign_and_fit(b, rp.RAD_SIGNATURE, min_tokens, max_tokens, grow)


def _pathology(ctx: DocContext, min_tokens: int, max_tokens: int) -> list[Piece]:
    rng = ctx.rng
    b = _DocBuilder(ctx)
    _header(b, rp.PATH_HEADER, 0.65, likely=(0, 2, 3))
    b.fixed("\n")
    ctx.site = rng.choice(rp.PATH_SITES)
    parts: list[str] = []
    microscopic: _Section | None = None
    for heading, pool in rp.PATH_SECTIONS:
        if heading.startswith("[COMMENT"):
            b.section(
                heading, "prose", pool, initial=int(rng.random() < 0.6), max_uses=1
            )
        elif heading.startswith("[DIAGNOSIS"):
            b.section(heading, "lines", pool, initial=1, grow=False)
        elif heading.startswith("[CLINICAL"):
            b.section(
                heading,
                "prose",
                pool,
                initial=rng.randint(1, 2),
                grow=False,
                max_uses=1,
            )
        else:
            sec = b.section(
                heading,
                "prose",
                pool,
                initial=rng.randint(2, 3),
                weight=2 if "GROSS" in heading else 1,
                max_uses=1,
            )
            if heading.startswith("[MICRO"):
                microscopic = sec

    def grow() -> bool:
        if len(b.sections) > 40:
            return False
        ctx.site = rng.choice(rp.PATH_SITES)
        parts.append("BCDEFGHJKLMNPQRSTUVWXYZ"[len(parts) % 23])
        gross = rp.PATH_SECTIONS[1][1]
        b.new_block()
        b.section(
            f"[PART|Specimen|Part] {parts[-1]}: {{site}}\n",
            "prose",
            gross,
            initial=2,
            max_uses=1,
            before=microscopic,
        )
        return True

    return _sign_and_fit(b, rp.PATH_SIGNATURE, min_tokens, max_tokens, grow)


_BUILDERS = {
    "nursing": _nursing,
    "discharge": _discharge,
    "radiology": _radiology,
    "pathology": _pathology,
}


def choose_case(ctx: DocContext, kind: str) -> str:
    """Draw the document's case style with the kind's weights."""
    return ctx.rng.choices(("as_is", "upper", "lower"), _CASE_WEIGHTS[kind])[0]


def build_text(
    ctx: DocContext,
    kind: str,
    min_tokens: int = 150,
    max_tokens: int = 1500,
    case: str | None = None,
) -> AnnotatedText:
    """One document of ``kind`` for the context's patient, with its gold spans.

    The HL7 generator calls this with a context whose clinicians match the
    message header, so narrative and header name the same people.
    """
    if kind not in _BUILDERS:
        raise ValueError(f"unknown note kind {kind!r}; expected one of {KINDS}")
    pieces = _BUILDERS[kind](ctx, min_tokens, max_tokens)
    case = case or choose_case(ctx, kind)
    text = assemble(pieces, case)
    stripped = text.text.rstrip()
    if len(stripped) == len(text.text):
        return text
    return AnnotatedText(stripped + "\n", text.spans, text.values)


def check_kinds(kinds: Iterable[str] | None, allowed: Sequence[str]) -> tuple[str, ...]:
    """Return ``kinds`` (all of ``allowed`` when None); ValueError if any is unknown."""
    chosen = tuple(allowed) if kinds is None else tuple(kinds)
    unknown = [k for k in chosen if k not in allowed]
    if unknown or not chosen:
        raise ValueError(f"kinds must be a non-empty subset of {tuple(allowed)}")
    return chosen


def new_faker(seed: int, purpose: str) -> Faker:
    """Make a fresh en_US Faker seeded for ``purpose`` (never the global instance)."""
    fake = Faker("en_US")
    fake.seed_instance(derive_seed(seed, purpose))
    return fake


def iter_notes(
    count: int,
    seed: int,
    min_tokens: int = 150,
    max_tokens: int = 1500,
    kinds: Iterable[str] | None = None,
    age_threshold: int = 90,
    pool: PoolHalf | None = None,
) -> Iterator[SyntheticNote]:
    """Yield ``count`` notes with the values inserted for their gold spans.

    ``pool``: the half of the name and place lists the notes draw from
    (``synthetic:N`` training notes: the TRAINING half); None, all of them.
    """
    if count < 0:
        raise ValueError("count must be >= 0")
    if min_tokens < 1 or max_tokens < min_tokens:
        raise ValueError("need 1 <= min_tokens <= max_tokens")
    chosen = check_kinds(kinds, KINDS)
    weights = [_KIND_WEIGHTS[k] for k in chosen]
    fake = new_faker(seed, "notes-pool")
    ids = IdentityFactory(fake, pool=pool)
    produced = 0
    patient_index = 0
    while produced < count:
        fake.seed_instance(derive_seed(seed, "notes-patient", patient_index))
        rng = ids.rng
        patient: Patient = ids.patient(key=f"synthetic:{seed}:{patient_index}")
        n_docs = rng.choices((1, 2, 3, 4, 6), (5, 3, 2, 1, 1))[0]
        date = patient.encounter
        for _ in range(n_docs):
            if produced >= count:
                break
            kind = rng.choices(chosen, weights)[0]
            ctx = DocContext(ids, patient, date, kind, age_threshold)
            text = build_text(ctx, kind, min_tokens, max_tokens)
            produced += 1
            doc = text.document(
                f"synth-{seed}-{produced:06d}",
                source="synthetic",
                origin="deid_pipeline.synthetic.notes",
                person_key=patient.key,
                kind=kind,
            )
            yield SyntheticNote(doc, text.values)
            date += dt.timedelta(days=rng.randint(0, 2))
        patient_index += 1
    logger.info("generated %d synthetic notes for %d patients", produced, patient_index)


def generate_notes(
    count: int,
    seed: int,
    min_tokens: int = 150,
    max_tokens: int = 1500,
    kinds: Iterable[str] | None = None,
    age_threshold: int = 90,
    pool: PoolHalf | None = None,
) -> list[ClinicalDocument]:
    """``count`` synthetic documents with gold spans, the same for the same seed.

    ``kinds`` restricts the document kinds (default: all of :data:`KINDS`).
    Several consecutive documents often share a patient (``person_key``), as a
    stay produces several notes. Lengths aim at ``min_tokens``..``max_tokens``
    tokens of the project tokenizer.
    """
    return [
        note.document
        for note in iter_notes(
            count, seed, min_tokens, max_tokens, kinds, age_threshold, pool
        )
    ]
