"""What a model file says about itself beyond its weights: language and label map.

A CRFsuite file holds labels and weights only; a model trained on a site's
own labels in another language must carry both, so ``run --model FILE``
needs no other option and cannot be given a wrong one. They ride in a
trailer after the CRFsuite bytes: ``JSON | length (8 bytes, little-endian) |
MAGIC``. CRFsuite's reader (and :func:`crf_decoder.read_model`) take the
model's size from its header and ignore what follows. A model without the
trailer is English with the built-in labels: the shipped model, byte for
byte as before.
"""

from __future__ import annotations

import json
import struct

__all__ = ["MAGIC", "ModelMetadata", "append_metadata", "read_metadata"]

MAGIC = b"DEIDMETA1"
_LENGTH = struct.Struct("<Q")
ENGLISH = "en"


class ModelMetadata(dict):
    """The trailer's JSON object (``language``, ``label_map``, ``feature_version``)."""

    @property
    def language(self) -> str:
        """The language the model's features were computed for."""
        return self.get("language", ENGLISH)


def append_metadata(path: str, metadata: dict) -> None:
    """Append the trailer to the model at ``path`` (keys sorted: same bytes)."""
    payload = json.dumps(metadata, sort_keys=True, ensure_ascii=False).encode("utf-8")
    with open(path, "ab") as fh:
        fh.write(payload + _LENGTH.pack(len(payload)) + MAGIC)


def read_metadata(data: bytes) -> ModelMetadata:
    """The trailer of a model's bytes; empty (English, built-in labels) if none."""
    if not data.endswith(MAGIC) or len(data) < len(MAGIC) + _LENGTH.size:
        return ModelMetadata()
    end = len(data) - len(MAGIC)
    (length,) = _LENGTH.unpack_from(data, end - _LENGTH.size)
    start = end - _LENGTH.size - length
    if start < 0:
        raise ValueError("model metadata trailer is truncated")
    obj = json.loads(data[start:end - _LENGTH.size].decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("model metadata trailer is not a JSON object")
    return ModelMetadata(obj)
