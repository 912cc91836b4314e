"""Throw-away certificate authorities for the gateway's TLS tests and benchmark.

A site's gateway uses certificates of its own PKI (docs/gateway.md shows the
openssl commands). The tests and ``benchmarks/bench_mllp.py`` need a CA, a
server certificate for loopback and client certificates in milliseconds and
without a shell tool, so this makes them with ``cryptography`` (the ``test``
extra; imported here only), on EC P-256 keys: small and quick to make, and
what a modern interface engine is offered first.

Files are PEM, keys owner-only (0600): they are real keys while they exist.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CertificateAuthority", "Issued"]

LOOPBACK = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class Issued:
    """Paths of one certificate (PEM) and its key (PEM, 0600)."""

    cert: str
    key: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, mode)


def _write_key(path: str, key: ec.EllipticCurvePrivateKey) -> None:
    _write(path, key.private_bytes(serialization.Encoding.PEM,
                                   serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()), 0o600)


class CertificateAuthority:
    """A self-signed CA in ``directory`` (``<name>-ca.pem``) that issues leaves.

    Certificates are valid from a day ago (clock skew) for ``days`` days.
    """

    def __init__(self, directory: str, name: str = "test", days: int = 30) -> None:
        self.directory = directory
        self.days = days
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._subject = _name(f"deid-pipeline {name} CA")
        builder = self._builder(self._subject, self._key.public_key()).add_extension(
            x509.BasicConstraints(ca=True, path_length=0), critical=True
        ).add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                          content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False), critical=True)
        cert = builder.sign(self._key, hashes.SHA256())
        os.makedirs(directory, exist_ok=True)
        self.cert = os.path.join(directory, f"{name}-ca.pem")
        _write(self.cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)

    def _builder(self, subject: x509.Name, public_key) -> x509.CertificateBuilder:
        now = datetime.datetime.now(datetime.timezone.utc)
        return (x509.CertificateBuilder().subject_name(subject)
                .issuer_name(self._subject).public_key(public_key)
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=self.days)))

    def issue(self, name: str, server: bool = False,
              hosts: tuple[str, ...] = LOOPBACK) -> Issued:
        """A leaf certificate ``<name>.pem`` and key ``<name>.key`` in the directory.

        ``server``: for a TLS server, with ``hosts`` as subject alternative
        names (IP addresses as IP SANs, which is what a client connecting to
        ``127.0.0.1`` checks); else a TLS client certificate.
        """
        key = ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server \
            else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = self._builder(_name(name), key.public_key()).add_extension(
            x509.BasicConstraints(ca=False, path_length=None), critical=True
        ).add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if server:
            sans: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    sans.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    sans.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(sans),
                                            critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        issued = Issued(os.path.join(self.directory, f"{name}.pem"),
                        os.path.join(self.directory, f"{name}.key"))
        _write(issued.cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)
        _write_key(issued.key, key)
        return issued
