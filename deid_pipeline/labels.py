"""The one label set (i2b2 2014 / N-GRID categories) and corpus tag mappings.

Every detector, the CRF, the metrics and the surrogate generators speak these
labels; corpus readers translate their own tags onto them at the edge so no
other module ever sees a corpus-specific tag.
"""

from __future__ import annotations

from collections.abc import Mapping

CATEGORY_OF: dict[str, str] = {
    "PATIENT": "NAME",
    "DOCTOR": "NAME",
    "RELATIVE": "NAME",
    "USERNAME": "NAME",
    "PROFESSION": "PROFESSION",
    "HOSPITAL": "LOCATION",
    "ORGANIZATION": "LOCATION",
    "STREET": "LOCATION",
    "CITY": "LOCATION",
    "STATE": "LOCATION",
    "ZIP": "LOCATION",
    "COUNTRY": "LOCATION",
    "ROOM": "LOCATION",
    "DEPARTMENT": "LOCATION",
    # A location of unknown finer type (PhysioNet "Location", i2b2 LOCATION-OTHER).
    "LOCATION": "LOCATION",
    "AGE": "AGE",
    "DATE": "DATE",
    "PHONE": "CONTACT",
    "FAX": "CONTACT",
    "EMAIL": "CONTACT",
    "URL": "CONTACT",
    "IPADDR": "CONTACT",
    "MEDICALRECORD": "ID",
    "SSN": "ID",
    "ACCOUNT": "ID",
    "LICENSE": "ID",
    "DEVICE": "ID",
    "HEALTHPLAN": "ID",
    "IDNUM": "ID",
    "BIOID": "ID",
    "VEHICLE": "ID",
}

LABELS: tuple[str, ...] = tuple(CATEGORY_OF)
CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(CATEGORY_OF.values()))

PHYSIONET_TAGS: dict[str, str] = {
    "PTName": "PATIENT",
    "PTNameInitial": "PATIENT",
    "HCPName": "DOCTOR",
    "RelativeProxyName": "RELATIVE",
    "Location": "LOCATION",
    "Date": "DATE",
    "DateYear": "DATE",
    "Phone": "PHONE",
    "Age": "AGE",
    # Two items in the development corpus, both identification numbers.
    "Other": "IDNUM",
}


# A site's own labels (a label map's, see deid_pipeline.label_maps), added when
# its map or a model trained with it is loaded: label -> category. Besides the
# i2b2 categories a site label may be OTHER (removed, no finer type) or KEEP
# (annotated, but the site's policy does not remove it).
SITE_ONLY_CATEGORIES = ("OTHER", "KEEP")
_SITE_CATEGORY: dict[str, str] = {}
# A site label's finer built-in label, when its map names one (``CALLE`` ->
# STREET, ``NOMBRE_PERSONAL_SANITARIO`` -> DOCTOR): its surrogate generator,
# scope and leak-guard rules are that label's, not its category's default.
_SITE_BUILTIN: dict[str, str] = {}


def register_site_labels(categories: Mapping[str, str],
                         builtins: Mapping[str, str] | None = None) -> None:
    """Make a label map's labels valid in this process (idempotent).

    A site label may not redefine a built-in label's category, nor one
    already registered with another category: the same label string would
    then pick two different surrogates. ``builtins`` (site label -> built-in
    label of the same category) refines which generator a label uses; a
    label registered with another refinement is refused for the same reason.
    """
    builtins = builtins or {}
    for label, cat in categories.items():
        if cat not in CATEGORIES and cat not in SITE_ONLY_CATEGORIES:
            raise ValueError(f"label {label!r}: unknown category {cat!r}")
        known = CATEGORY_OF.get(label) or _SITE_CATEGORY.get(label)
        if known is not None and known != cat:
            raise ValueError(f"label {label!r} is already of category {known}, "
                             f"not {cat}")
    for label, builtin in builtins.items():
        if label not in categories or label in CATEGORY_OF:
            raise ValueError(f"surrogate label of {label!r}: not a site label "
                             "of the map")
        if CATEGORY_OF.get(builtin) != categories[label]:
            raise ValueError(f"label {label!r} of category {categories[label]} "
                             f"cannot use the surrogates of {builtin!r}")
        known = _SITE_BUILTIN.get(label)
        if known is not None and known != builtin:
            raise ValueError(f"label {label!r} already uses the surrogates of "
                             f"{known}, not {builtin}")
    for label, cat in categories.items():
        if label not in CATEGORY_OF:
            _SITE_CATEGORY[label] = cat
    _SITE_BUILTIN.update(builtins)


def site_labels(cat: str) -> tuple[str, ...]:
    """The registered site labels of category ``cat``, sorted."""
    return tuple(sorted(label for label, c in _SITE_CATEGORY.items() if c == cat))


def is_site_label(label: str) -> bool:
    """Whether ``label`` comes from a registered label map, not the label set."""
    return label in _SITE_CATEGORY


# The label-set label whose surrogate generator and leak-guard rules a site
# label of each category borrows (CONTACT is decided by the value's shape).
_CATEGORY_LABEL = {"NAME": "PATIENT", "LOCATION": "LOCATION", "DATE": "DATE",
                   "ID": "IDNUM", "AGE": "AGE", "PROFESSION": "PROFESSION"}


def builtin_label(label: str, value: str = "") -> str:
    """The label-set label that stands for ``label`` when rewriting ``value``.

    A label-set label stands for itself. A site label borrows its category's
    (a ``contact`` value with ``@`` is an EMAIL, one starting ``http`` or
    ``www.`` a URL, any other a PHONE). OTHER and KEEP have none: returned
    as they are, so a surrogate for them fails and is masked (OTHER), or is
    never asked for (KEEP spans are not rewritten). A label its map refines
    (``surrogate_labels``) stands for the label named there.
    """
    cat = _SITE_CATEGORY.get(label)
    if cat is None:
        return label
    finer = _SITE_BUILTIN.get(label)
    if finer is not None:
        return finer
    if cat == "CONTACT":
        if "@" in value:
            return "EMAIL"
        return "URL" if value.lower().startswith(("http", "www.")) else "PHONE"
    return _CATEGORY_LABEL.get(cat, label)


def check_label(label: str) -> str:
    """Return ``label`` if it is in the label set, else raise ValueError."""
    if label not in CATEGORY_OF and label not in _SITE_CATEGORY:
        raise ValueError(f"unknown PHI label {label!r}")
    return label


def category(label: str) -> str:
    """The i2b2 category (NAME, LOCATION, ID, ...) of a label."""
    found = CATEGORY_OF.get(label) or _SITE_CATEGORY.get(label)
    if found is None:
        raise ValueError(f"unknown PHI label {label!r}")
    return found
