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


def register_site_labels(categories: Mapping[str, str]) -> None:
    """Make a label map's labels valid in this process (idempotent).

    A site label may not redefine a built-in label's category, nor one
    already registered with another category: the same label string would
    then pick two different surrogates.
    """
    for label, cat in categories.items():
        if cat not in CATEGORIES and cat not in SITE_ONLY_CATEGORIES:
            raise ValueError(f"label {label!r}: unknown category {cat!r}")
        known = CATEGORY_OF.get(label) or _SITE_CATEGORY.get(label)
        if known is not None and known != cat:
            raise ValueError(f"label {label!r} is already of category {known}, "
                             f"not {cat}")
    for label, cat in categories.items():
        if label not in CATEGORY_OF:
            _SITE_CATEGORY[label] = cat


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
    never asked for (KEEP spans are not rewritten).
    """
    cat = _SITE_CATEGORY.get(label)
    if cat is None:
        return label
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
