"""Batch envelopes out: FHS/BHS/BTS/FTS lines written de-identified.

The fields kept, replaced and counted are named in
:mod:`~deid_pipeline.hl7.fields` (``ENVELOPE_KEPT``, ``ENVELOPE_FACILITIES``,
``ENVELOPE_COUNT``): a vendor writes anything in the others.
"""

from __future__ import annotations

from collections.abc import Callable

from deid_pipeline.hl7.contracts import SupportsRewrite
from deid_pipeline.hl7.documents import SOURCE
from deid_pipeline.hl7.escapes import (
    Delimiters,
    declared_delimiters,
    escape,
    unescape,
)
from deid_pipeline.hl7.fields import ENVELOPE_COUNT, ENVELOPE_FACILITIES, ENVELOPE_KEPT
from deid_pipeline.hl7.framing import Envelope, encode_message
from deid_pipeline.hl7.header import HeaderRewriter
from deid_pipeline.model import ClinicalDocument, TaggedDocument
from deid_pipeline.tokenizer import is_digits

__all__ = ["envelope_renderer"]



def envelope_renderer(rewriter: SupportsRewrite) -> tuple[Callable[[Envelope], bytes],
                                                   list[int]]:
    """Render FHS/BHS/BTS/FTS lines de-identified; BTS-1 counts messages written.

    Facilities belong to no patient: they get the surrogate of one fixed
    pseudo-person, so every batch header of a run agrees. An envelope whose
    delimiters make no sense is written as its bare segment id.
    """
    written = [0]
    header: list[HeaderRewriter] = []

    def facility(value: str) -> str:
        if not header:
            tagged = TaggedDocument(ClinicalDocument("hl7-envelope", "", SOURCE), ())
            header.append(HeaderRewriter(
                rewriter, rewriter.person_id_for(tagged, "hl7-envelope")))
        return header[0].value(value, "HOSPITAL")

    def render_envelope(env: Envelope) -> bytes:
        text = env.data.decode("latin-1").strip()
        name, sep = text[:3], text[3:4]
        bare = name.encode("latin-1") + env.terminator
        if not sep or sep.isalnum() or sep.isspace():
            return bare
        parts = text.split(sep)
        if name in ("FHS", "BHS"):
            fields = [name, sep, *parts[1:]]
            declared = declared_delimiters(sep, fields[2])
            if declared is None:
                return bare
            d = declared
            first = 3
        else:
            fields = parts
            d = Delimiters(sep)
            first = 1
        if name == "BHS":
            written[0] = 0
        for n in range(first, len(fields)):
            key = f"{name}.{n}"
            if key in ENVELOPE_FACILITIES and fields[n]:
                comps = fields[n].split(d.component)
                if comps[0]:
                    comps[0] = escape(facility(unescape(comps[0], d)), d)
                fields[n] = d.component.join(comps[:1])
            elif key == ENVELOPE_COUNT and is_digits(fields[n].strip()):
                fields[n] = str(written[0])
            elif key not in ENVELOPE_KEPT:
                fields[n] = ""
        while len(fields) > first and not fields[-1]:
            fields.pop()
        out = (name + sep + sep.join(fields[2:])) if first == 3 else sep.join(fields)
        return encode_message(out, "latin-1") + env.terminator

    return render_envelope, written

