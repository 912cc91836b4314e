r"""Files in the wide Unicode encodings, recognised by their byte order mark.

Windows tools and some interface engines export text and HL7 as UTF-16 (or
UTF-32) with a byte order mark. Every reader here works on ASCII-compatible
bytes (the HL7 framer looks for ``MSH`` and ``\r``), so a wide file is
narrowed to UTF-8 first and, where the output mirrors the input (HL7 write
back), widened again with the same mark. Without a mark, NUL-interleaved bytes
cannot be told from a binary file, so they are left alone and fail closed.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["WideEncoding", "decode_wide", "narrow", "wide_encoding"]


@dataclass(frozen=True, slots=True)
class WideEncoding:
    """A byte order mark and the codec of the bytes after it."""

    bom: bytes
    codec: str

    def widen(self, data: bytes) -> bytes:
        """UTF-8 ``data`` back in this encoding, mark first.

        A byte that is not UTF-8 (a message that declared Latin-1 inside a
        UTF-16 file) becomes U+FFFD rather than failing the file.
        """
        return self.bom + data.decode("utf-8", "replace").encode(self.codec)


# UTF-32 first: its little-endian mark begins with UTF-16's.
_WIDE = (WideEncoding(codecs.BOM_UTF32_LE, "utf-32-le"),
         WideEncoding(codecs.BOM_UTF32_BE, "utf-32-be"),
         WideEncoding(codecs.BOM_UTF16_LE, "utf-16-le"),
         WideEncoding(codecs.BOM_UTF16_BE, "utf-16-be"))


def wide_encoding(data: bytes) -> WideEncoding | None:
    """The wide encoding whose byte order mark ``data`` starts with, if any."""
    return next((w for w in _WIDE if data.startswith(w.bom)), None)


def decode_wide(data: bytes) -> str | None:
    """The text of a file with a UTF-16/32 byte order mark; None without one.

    Raises UnicodeDecodeError when the mark is there but the rest is not
    that encoding.
    """
    wide = wide_encoding(data)
    if wide is None:
        return None
    return data[len(wide.bom):].decode(wide.codec)


def narrow(data: bytes) -> tuple[bytes, WideEncoding | None]:
    """UTF-8 bytes of a marked wide file, and its encoding; other files as they are.

    A file with a mark that does not decode is returned unchanged (its NUL
    bytes then fail whatever reads it, closed).
    """
    try:
        text = decode_wide(data)
    except UnicodeDecodeError:
        return data, None
    if text is None:
        return data, None
    return text.encode("utf-8", "surrogatepass"), wide_encoding(data)
