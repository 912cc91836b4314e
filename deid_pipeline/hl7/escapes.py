r"""HL7v2 delimiters and escape sequences (v2.5 chapter 2.7).

The narrative handed to the tagger must be the text a clinician wrote, so
escape sequences are decoded before tagging (``\\F\\`` is a ``|`` in the
report, ``\\.br\\`` a line break); when rewritten text goes back into a field
it is escaped again with the message's own delimiters, so a surrogate can
never break the message structure.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from deid_pipeline.tokenizer import is_digits

__all__ = [
    "DEFAULT_DELIMITERS",
    "Delimiters",
    "declared_delimiters",
    "escape",
    "unescape",
]


@dataclass(frozen=True, slots=True)
class Delimiters:
    """The separators a message declares in MSH-1 and MSH-2.

    ``truncation`` is the fifth encoding character of v2.7+ (empty before).
    """

    field: str = "|"
    component: str = "^"
    repetition: str = "~"
    escape: str = "\\"
    subcomponent: str = "&"
    truncation: str = ""

    @property
    def encoding_characters(self) -> str:
        """MSH-2 as it is written in the message."""
        return (self.component + self.repetition + self.escape + self.subcomponent
                + self.truncation)


DEFAULT_DELIMITERS = Delimiters()


def declared_delimiters(sep: str, enc: str) -> Delimiters | None:
    """The delimiters MSH-1/MSH-2 (or FHS/BHS-1/2) declare, None when unusable.

    What hl7apy accepts: four encoding characters (five from v2.7, the
    caller checks the version), all distinct from each other and from the
    field separator, whatever they are: a Windows-based sender writes
    ``^~ &`` with a blank as escape character. Letters and digits stay
    refused (every value would be cut at them), and so do line breaks (they
    end the segment).
    """
    chars = sep + enc
    if (len(enc) not in (4, 5) or len(set(chars)) != len(chars)
            or any(c.isalnum() or c in "\r\n" for c in chars)
            or sep.isspace()):
        return None
    return Delimiters(sep, enc[0], enc[1], enc[2], enc[3], enc[4:5])

# Formatting commands (FT, 2.7.6) that carry no text of their own.
_DROPPED_COMMANDS = (".fi", ".nf", ".ce")
_HEX = re.compile(r"[0-9A-Fa-f]+")


def _hex_text(payload: str) -> str | None:
    r"""Decode a ``\Xhh..\`` sequence: UTF-8 when valid, else Latin-1."""
    if len(payload) % 2 or not _HEX.fullmatch(payload):
        return None
    raw = bytes.fromhex(payload)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _count(arg: str) -> int | None:
    """Read the repeat count of ``.sp``/``.sk`` (empty means one); None if not one."""
    arg = arg.strip()
    if not arg:
        return 1
    if is_digits(arg.lstrip("+")):
        return min(int(arg.lstrip("+")), 100)
    return None


def _sequence(body: str, d: Delimiters) -> str | None:
    """Return the text an escape sequence stands for, or None if we do not know it.

    Unknown sequences are kept literally by the caller: text that might be a
    name stays visible to the tagger instead of silently disappearing.
    """
    if body == "F":
        return d.field
    if body == "S":
        return d.component
    if body == "T":
        return d.subcomponent
    if body == "R":
        return d.repetition
    if body == "E":
        return d.escape
    if body == "P" and d.truncation:
        return d.truncation
    if body in ("H", "N"):  # highlighting on/off: presentation only
        return ""
    if body.startswith("X"):
        return _hex_text(body[1:])
    if body.startswith(("C", "M")) and _HEX.fullmatch(body[1:] or "-"):
        return ""  # character-set switches: the text around them is decoded already
    if body.startswith("."):
        command, arg = body[:3], body[3:]
        if command == ".br" and not arg:
            return "\n"
        if command == ".sp":
            n = _count(arg)
            return None if n is None else "\n" * n
        if command == ".sk":
            n = _count(arg)
            return None if n is None else " " * n
        if command in (".in", ".ti") or (command in _DROPPED_COMMANDS and not arg):
            return ""
    return None


def unescape(raw: str, d: Delimiters = DEFAULT_DELIMITERS) -> str:
    """Decode the escape sequences of one field value (component, repetition...)."""
    esc = d.escape
    if not esc or esc not in raw:
        return raw
    out: list[str] = []
    pos = 0
    n = len(raw)
    while pos < n:
        start = raw.find(esc, pos)
        if start < 0:
            out.append(raw[pos:])
            break
        end = raw.find(esc, start + 1)
        if end < 0:  # a lone escape character: keep it as text
            out.append(raw[pos:])
            break
        out.append(raw[pos:start])
        text = _sequence(raw[start + 1:end], d)
        if text is None:
            # Not a sequence: the escape character was literal; rescan after it.
            out.append(esc)
            pos = start + 1
            continue
        out.append(text)
        pos = end + 1
    return "".join(out)


def _is_control(ch: str) -> bool:
    """Characters that may not stand raw in a field (tab is harmless and kept)."""
    return (ch < " " and ch != "\t") or ch == "\x7f"


def _control_escape(ch: str, esc: str) -> str:
    return f"{esc}X{ord(ch):02X}{esc}"


@functools.lru_cache(maxsize=64)
def _escaping(d: Delimiters) -> tuple[dict[str, str], re.Pattern]:
    """The escape of each delimiter, and a regex finding any character to escape.

    Made once per delimiter set: a header rewrite escapes dozens of values
    per message, nearly all of which need nothing.
    """
    esc = d.escape
    specials = {esc: f"{esc}E{esc}", d.field: f"{esc}F{esc}",
                d.component: f"{esc}S{esc}", d.subcomponent: f"{esc}T{esc}",
                d.repetition: f"{esc}R{esc}"}
    if d.truncation:
        specials[d.truncation] = f"{esc}P{esc}"
    # _is_control's characters: below space except tab, and DEL.
    wanted = "".join(re.escape(ch) for ch in specials) + r"\x00-\x08\x0a-\x1f\x7f"
    return specials, re.compile(f"[{wanted}]")


def escape(text: str, d: Delimiters = DEFAULT_DELIMITERS) -> str:
    r"""Encode ``text`` for one leaf value: delimiters, breaks, controls escaped.

    Line breaks become ``\\.br\\`` (a raw carriage return would end the
    segment); other control characters become ``\\Xhh\\``.
    """
    specials, needs_escape = _escaping(d)
    if needs_escape.search(text) is None:
        return text
    esc = d.escape
    out: list[str] = []
    text = text.replace("\r\n", "\n")
    for ch in text:
        if ch in specials:
            out.append(specials[ch])
        elif ch in "\r\n":
            out.append(f"{esc}.br{esc}")
        elif _is_control(ch):
            out.append(_control_escape(ch, esc))
        else:
            out.append(ch)
    return "".join(out)
