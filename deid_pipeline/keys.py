"""The run's secret key and the keyed hashes derived from it.

Person ids and surrogates are HMACs of the key, so whoever holds the key can
re-create them (nightly re-runs agree) and nobody else can reverse them. The
key therefore never travels as a command-line value (it would sit in shell
history and process lists): it comes from a file or from a file named by the
environment.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

KEY_FILE_ENV = "DEID_KEY_FILE"
MIN_KEY_BYTES = 16


class KeyUnavailableError(ValueError):
    """The secret key is missing, unreadable or too short."""


def load_key(key_file: str | None, ephemeral: bool = False) -> tuple[bytes, str]:
    """Return ``(key, how)``: from ``key_file``, else ``$DEID_KEY_FILE``, else random.

    A random (ephemeral) key is only given when asked for, because its outputs
    cannot be reproduced or linked with any other run.
    """
    path = key_file or os.environ.get(KEY_FILE_ENV)
    if path:
        try:
            with open(path, "rb") as fh:
                key = fh.read().strip()
        except OSError as exc:
            raise KeyUnavailableError(
                f"cannot read key file {path!r}: {exc.strerror}"
            ) from exc
        if len(key) < MIN_KEY_BYTES:
            raise KeyUnavailableError(
                f"key file {path!r} holds {len(key)} bytes; at least {MIN_KEY_BYTES} "
                "are needed (make one with: head -c 32 /dev/urandom | base64 > FILE)"
            )
        return key, "key-file"
    if ephemeral:
        return secrets.token_bytes(32), "ephemeral"
    raise KeyUnavailableError(
        f"no secret key: pass --key-file FILE or set {KEY_FILE_ENV}; "
        "for a throw-away demo run pass --ephemeral-key"
    )


def keyed_hash(key: bytes, *parts: str) -> bytes:
    """HMAC-SHA256 of the ``|``-joined parts (``|`` inside a part is escaped)."""
    message = "|".join(p.replace("\\", "\\\\").replace("|", "\\|") for p in parts)
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def person_id(key: bytes, canonical_key: str) -> str:
    """Pseudonymous person id: 20 hex chars of the keyed hash of the person's key."""
    return keyed_hash(key, "person", canonical_key).hex()[:20]


def key_fingerprint(key: bytes) -> str:
    """A short id of the key for run.json: tells runs apart, reveals nothing."""
    return hashlib.sha256(b"deid-pipeline key fingerprint|" + key).hexdigest()[:12]
