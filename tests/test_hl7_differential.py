"""Differential test: our fast parser against hl7apy's full parse, message by message.

For every fixture message we accept, hl7apy (``parse_message``, TOLERANT,
``find_groups=True``) must see the same segments, the same raw value in every
field and repetition, and, grouped by *its* ORDER_OBSERVATION groups and
unescaped by python-hl7, the same report text. Messages we refuse must be
refused with a PHI-free reason (checked in test_hl7_documents).

hl7apy's ``to_er7`` re-escapes escape sequences it does not know (``\\.br\\``
becomes ``\\E\\.br\\E\\``), so raw values are read with its leaf escaping
switched off for the test.
"""

from __future__ import annotations

import glob
import os

import hl7
import pytest
from hl7apy import base_datatypes
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse

from deid_pipeline.hl7.documents import parse_hl7_message
from deid_pipeline.hl7.fields import NARRATIVE_OBX_TYPES
from deid_pipeline.hl7.framing import decode_message, frame_file, normalise_segments
from deid_pipeline.hl7.message import Hl7ParseError

FIXTURE_DIR = os.path.join(os.path.dirname(__file__), "fixtures", "hl7")


def _fixture_messages() -> list[tuple[str, str]]:
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURE_DIR, "*.*"))):
        with open(path, "rb") as fh:
            data = fh.read()
        for frame in frame_file(data).frames():
            if frame.error is None:
                text, _codec = decode_message(frame.data)
                out.append((f"{os.path.basename(path)}#{frame.ordinal}", text))
    return out


def _generated_messages(count: int = 12) -> list[tuple[str, str]]:
    try:
        from deid_pipeline.synthetic.hl7 import generate_messages
    except ImportError:
        from deid_pipeline.hl7.testing import sample_oru

        return [(f"sample#{k}", sample_oru(k)[0]) for k in range(count)]
    messages = generate_messages(count, 7)
    return [(f"generated#{k}", m.er7) for k, m in enumerate(messages)]


MESSAGES = _fixture_messages() + _generated_messages()


@pytest.fixture
def raw_hl7apy(monkeypatch):
    """hl7apy with leaf escaping off, so ``to_er7`` gives the raw field text."""
    monkeypatch.setattr(base_datatypes.TextualDataType, "_escape_value",
                        lambda self, value, encoding_chars=None: value)


def _flatten(element, path=()):
    for child in element.children:
        if child.classname == "Group":
            yield from _flatten(child, (*path, child))
        else:
            yield child, path


def _canonical(raw: str, d) -> tuple:
    """A field value with trailing empty components/subcomponents dropped."""
    reps = []
    for rep in raw.split(d.repetition):
        comps = [tuple(c.split(d.subcomponent)) for c in rep.split(d.component)]
        comps = [tuple(_strip_trailing(list(c))) for c in comps]
        reps.append(tuple(_strip_trailing(comps)))
    return tuple(_strip_trailing(reps))


def _strip_trailing(items: list) -> list:
    while items and items[-1] in ("", (), ("",)):
        items.pop()
    return items


def _apy_fields(segment) -> dict[int, list[str]]:
    fields: dict[int, list[str]] = {}
    for field in segment.children:
        number = int(field.name.rsplit("_", 1)[1])
        fields.setdefault(number, []).append(field.to_er7())
    return fields


def _oracle_text(parsed_hl7, segments) -> str:
    """Report text from hl7apy segments, unescaped by python-hl7."""
    app_map = {".br": "\n", "H": "", "N": ""}
    msh2 = str(parsed_hl7[0][2])
    if len(msh2) == 5:
        app_map["P"] = msh2[4]
    lines = []
    for seg in segments:
        fields = _apy_fields(seg)
        if seg.name == "OBX":
            value_type = fields.get(2, [""])[0].split(msh2[0])[0].strip().upper()
            if value_type not in NARRATIVE_OBX_TYPES:
                continue
            if not fields.get(5) and not value_type:
                continue
            values = fields.get(5, [""])
        else:
            values = fields.get(3, [""])
        lines.extend(parsed_hl7.unescape(v, app_map) for v in values)
    return "\n".join(lines)


def _oracle_reports(apy_message, parsed_hl7) -> list[str]:
    """Per hl7apy's own grouping: one text per ORDER_OBSERVATION (ORU), else one."""
    flat = list(_flatten(apy_message))
    names = [s.name for s, _ in flat]
    text_segments = [s for s, _ in flat if s.name in ("OBX", "NTE")]
    if "TXA" in names or "OBR" not in names:
        return [_oracle_text(parsed_hl7, text_segments)]
    groups: list[list] = []
    patient_level: list = []
    for seg, path in flat:
        order = next((g for g in reversed(path)
                      if g.name.endswith("ORDER_OBSERVATION")), None)
        if seg.name == "OBR":
            groups.append([])
        elif seg.name in ("OBX", "NTE"):
            if order is None or not groups:
                patient_level.append(seg)
            else:
                groups[-1].append(seg)
    groups[0] = patient_level + groups[0]
    return [_oracle_text(parsed_hl7, g) for g in groups]


def _as_hl7apy_reads(ours, text: str) -> str:
    """The message as given to hl7apy: our header repairs applied, if any.

    A repaired header (docs/hl7-audit.md: empty MSH-10 or MSH-12, a fifth
    encoding character before v2.7) is what hl7apy reads such a message as,
    or refuses it; the fields and text after it must still agree.
    """
    if ours.quirks:
        return ours.to_er7().rstrip("\r")
    return "\r".join(normalise_segments(text.lstrip()))


@pytest.mark.parametrize("name,text", MESSAGES, ids=[m[0] for m in MESSAGES])
def test_when_parsed_then_fields_and_text_equal_hl7apy(name, text, raw_hl7apy):
    try:
        ours, reports = parse_hl7_message(text)
    except Hl7ParseError:
        pytest.skip("refused by our parser (quarantine is tested elsewhere)")
    er7 = _as_hl7apy_reads(ours, text)
    apy = hl7apy_parse(er7, validation_level=VALIDATION_LEVEL.TOLERANT,
                       find_groups=True)
    d = ours.delimiters
    apy_segments = [s for s, _ in _flatten(apy)]
    # hl7apy drops segments it cannot place in the structure (Z-segments):
    # compare those against its flat parse below.
    kept = [s for s in ours.segments if not s.name.startswith("Z")]
    assert [s.name for s in apy_segments] == [s.name for s in kept]
    for mine, theirs in zip(kept, apy_segments, strict=True):
        apy_fields = _apy_fields(theirs)
        numbers = set(apy_fields) | {n for n in range(1, len(mine.fields))
                                     if mine.fields[n]}
        for n in sorted(numbers):
            if mine.name == "MSH" and n <= 2:
                assert apy_fields[n] == [mine.get(n)]
                continue
            got = _canonical(mine.get(n), d)
            want = _canonical(d.repetition.join(apy_fields.get(n, [])), d)
            assert got == want, f"{mine.name}.{n}"
    # Z-segments: hl7apy without grouping keeps them.
    zs = [s for s in ours.segments if s.name.startswith("Z")]
    if zs:
        flat = hl7apy_parse(er7, validation_level=VALIDATION_LEVEL.TOLERANT,
                            find_groups=False)
        apy_z = [s for s in flat.children if s.name.startswith("Z")]
        assert [s.name for s in apy_z] == [z.name for z in zs]
        for mine, theirs in zip(zs, apy_z, strict=True):
            apy_fields = _apy_fields(theirs)
            for n in range(1, max(len(mine.fields), max(apy_fields, default=0) + 1)):
                want = _canonical(d.repetition.join(apy_fields.get(n, [])), d)
                assert _canonical(mine.get(n), d) == want, f"{mine.name}.{n}"
    parsed_hl7 = hl7.parse(er7)
    assert [r.text for r in reports] == _oracle_reports(apy, parsed_hl7)


@pytest.mark.parametrize("name,text", MESSAGES[:6], ids=[m[0] for m in MESSAGES[:6]])
def test_when_header_read_then_named_components_equal_hl7apy(name, text, raw_hl7apy):
    """Spot checks through hl7apy's named accessors (not only raw strings)."""
    try:
        ours, _ = parse_hl7_message(text)
    except Hl7ParseError:
        pytest.skip("refused by our parser")
    er7 = _as_hl7apy_reads(ours, text)
    apy = hl7apy_parse(er7, validation_level=VALIDATION_LEVEL.TOLERANT,
                       find_groups=True)
    assert apy.msh.msh_10.to_er7() == ours.msh.get(10)
    pid = next((s for s, _ in _flatten(apy) if s.name == "PID"), None)
    if pid is None:
        return
    mine = ours.first("PID")
    assert pid.pid_5.pid_5_1.to_er7() == ours.component(mine.get(5), 1).split(
        ours.delimiters.subcomponent)[0] or not mine.get(5)
    assert pid.pid_7.to_er7() == mine.get(7)
    assert pid.pid_3[0].pid_3_1.to_er7() == ours.component(mine.get(3), 1)
