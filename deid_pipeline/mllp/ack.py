r"""MSH reading and HL7 ACKs for the gateway (original acknowledgement mode).

Only the MSH segment of an incoming frame is read here: enough to answer it
(MSA-2 is the message's MSH-10) even when the rest of the message is
damaged. The ACK copies the sender's raw MSH-3..6 (swapped), MSH-11 and
MSH-12 in the sender's own delimiters, so nothing is unescaped and escaped
again and the sender recognises its own ids byte for byte.

Every text this module puts in an ACK (MSA-3, ERR-8) is a reason chosen by
the gateway (a stage, a position, a size), never a field value: an ACK goes
back over the wire and into the sender's logs.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from dataclasses import dataclass

from deid_pipeline.hl7.escapes import Delimiters, escape
from deid_pipeline.hl7.message import SUPPORTED_VERSIONS, Hl7Message, Segment

__all__ = [
    "AckError",
    "MessageHeader",
    "build_ack",
    "read_ack",
    "read_header",
]

ACCEPT = "AA"
ERROR = "AE"
REJECT = "AR"
DEFAULT_VERSION = "2.5"
# HL7 table 0357: the one code that fits every failure the gateway reports
# (the precise reason is in ERR-8 / MSA-3).
_INTERNAL_ERROR = "207^Application internal error^HL70357"
_SEGMENT_END = re.compile(rb"\r\n|\r|\n")
_control_ids = itertools.count(1)
_PROCESS_TAG = f"{os.getpid() % 0x10000:04X}"


class AckError(ValueError):
    """A frame whose MSH cannot be read; the message names the defect, never a value."""


@dataclass(frozen=True, slots=True)
class MessageHeader:
    """What an ACK needs from an incoming MSH, as raw field strings.

    The line is decoded as Latin-1, which maps every byte to one character,
    so the fields copied into the ACK go back as the very bytes received.
    """

    message: Hl7Message

    @property
    def delimiters(self) -> Delimiters:
        """The sender's field separator and encoding characters."""
        return self.message.delimiters

    def raw(self, n: int) -> str:
        """Raw MSH-``n`` as received (escapes kept)."""
        return self.message.msh.get(n)

    @property
    def control_id(self) -> str:
        """MSH-10 unescaped and stripped (what dedup and checks compare)."""
        return self.message.control_id

    @property
    def trigger(self) -> str:
        """MSH-9.2, the trigger event the ACK echoes (``R01``)."""
        return self.message.component(self.raw(9), 2).strip()

    @property
    def version(self) -> str:
        """MSH-12.1 when it is one hl7apy reads, else the gateway's default."""
        version = self.message.version
        return version if version in SUPPORTED_VERSIONS else DEFAULT_VERSION


def read_header(data: bytes) -> MessageHeader:
    """Read the MSH segment of one frame's content.

    Raises :class:`AckError` when there is no usable MSH: no ``MSH`` at the
    start, invalid delimiters, or an empty MSH-9 or MSH-10 (nothing to
    acknowledge). The rest of the message is not looked at.
    """
    stripped = data.lstrip(b" \t\r\n")
    if not stripped.startswith(b"MSH"):
        raise AckError("frame does not start with an MSH segment")
    line = _SEGMENT_END.split(stripped, 1)[0].decode("latin-1")
    if len(line) < 8:
        raise AckError("MSH segment too short")
    sep = line[3]
    if sep.isalnum() or sep.isspace():
        raise AckError("MSH-1 field separator invalid")
    fields = line[4:].split(sep)
    enc = fields[0]
    chars = sep + enc
    if (len(enc) not in (4, 5) or len(set(chars)) != len(chars)
            or any(c.isalnum() or c.isspace() for c in enc)):
        raise AckError("MSH-2 encoding characters invalid")
    d = Delimiters(sep, enc[0], enc[1], enc[2], enc[3], enc[4:5])
    message = Hl7Message(d, [Segment("MSH", ["MSH", sep, *fields])])
    if not message.message_code:
        raise AckError("MSH-9 message type empty")
    if not message.control_id:
        raise AckError("MSH-10 message control id empty")
    return MessageHeader(message)


def new_control_id() -> str:
    """A fresh ACK control id: the second, the process and a counter; 20 characters.

    Unique across restarts and across gateways on one host without keeping
    any state (MSH-10 is an ST of at most 20 characters in v2.5).
    """
    count = next(_control_ids) % 0x10000000
    return f"D{int(time.time()) % 0x100000000:08X}{_PROCESS_TAG}{count:07X}"


def _version_at_least(version: str, minimum: tuple[int, ...]) -> bool:
    try:
        return tuple(int(p) for p in version.split(".")) >= minimum
    except ValueError:
        return True


def build_ack(header: MessageHeader | None, code: str, reason: str = "",
              now: float | None = None) -> bytes:
    r"""The ACK for one frame, ``\r``-terminated segments, without MLLP framing.

    ``header`` None (the MSH could not be read) gives an ACK in the default
    delimiters and version with an empty MSA-2. ``reason`` must be PHI-free:
    it is written to MSA-3 and, for v2.5 and later, ERR-8.
    """
    d = header.delimiters if header is not None else Delimiters()
    sep = d.field
    version = header.version if header is not None else DEFAULT_VERSION
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now))
    trigger = header.trigger if header is not None else ""
    message_type = "ACK" + (d.component + escape(trigger, d) if trigger else "")
    if trigger and _version_at_least(version, (2, 3, 1)):
        message_type += d.component + "ACK"
    if header is not None:
        sending_app, sending_fac = header.raw(5), header.raw(6)
        receiving_app, receiving_fac = header.raw(3), header.raw(4)
        processing = header.raw(11) or "P"
        control = header.raw(10)
    else:
        sending_app = sending_fac = receiving_app = receiving_fac = control = ""
        processing = "P"
    msh = sep.join(["MSH", d.encoding_characters, sending_app, sending_fac,
                    receiving_app, receiving_fac, stamp, "", message_type,
                    new_control_id(), processing, version])
    text = escape(reason, d) if reason else ""
    msa = sep.join(["MSA", code, control] + ([text] if text else []))
    segments = [msh, msa]
    if code != ACCEPT and _version_at_least(version, (2, 5)):
        error = _INTERNAL_ERROR.replace("^", d.component)
        segments.append(sep.join(["ERR", "", "", error, "E", "", "", "", text]))
    return ("\r".join(segments) + "\r").encode("latin-1", "replace")


def read_ack(data: bytes) -> tuple[str, str]:
    """``(MSA-1, MSA-2)`` of an ACK a downstream endpoint sent back.

    Raises :class:`AckError` when the reply has no MSH or no MSA segment.
    """
    header = read_header(data)
    d = header.delimiters
    for line in re.split(r"\r\n|\r|\n", data.decode("latin-1")):
        line = line.strip()
        if line.startswith("MSA" + d.field):
            fields = line.split(d.field)
            code = fields[1].strip().upper() if len(fields) > 1 else ""
            control = header.message.component(fields[2], 1) if len(fields) > 2 else ""
            return code, control.strip()
    raise AckError("reply has no MSA segment")
