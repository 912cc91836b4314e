"""The one label set (i2b2 2014 / N-GRID categories) and corpus tag mappings.

Every detector, the CRF, the metrics and the surrogate generators speak these
labels; corpus readers translate their own tags onto them at the edge so no
other module ever sees a corpus-specific tag.
"""

from __future__ import annotations

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


def check_label(label: str) -> str:
    """Return ``label`` if it is in the label set, else raise ValueError."""
    if label not in CATEGORY_OF:
        raise ValueError(f"unknown PHI label {label!r}")
    return label


def category(label: str) -> str:
    """The i2b2 category (NAME, LOCATION, ID, ...) of a label."""
    return CATEGORY_OF[check_label(label)]
