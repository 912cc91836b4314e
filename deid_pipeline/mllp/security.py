"""Who may talk to the gateway: TLS contexts, address allow-lists, listen policy.

The gateway receives PHI and writes what it receives into the protected
store and the research extract, so both the wire and the peer matter:

- TLS (1.2 or newer, the standard library's ``ssl``) keeps the messages
  from being read on the network; with a client CA (mutual TLS) only a
  sender holding a certificate of that CA can hand in a message;
- an address allow-list (``--allow-from``) closes other peers' connections
  before a byte is read, so an unlisted host cannot even start a handshake;
- plain TCP is refused on anything but loopback unless asked for by name
  (``--insecure-plain-tcp``): a configuration that puts PHI on the network
  in clear text has to say so.

Every reason this module gives (for a log line, a status count or an error)
names an address, an option or an OpenSSL reason code, never message bytes.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import socket
import ssl
from dataclasses import dataclass

__all__ = [
    "HandshakeError",
    "Network",
    "TlsFiles",
    "check_listen",
    "client_context",
    "describe_tls_error",
    "is_loopback",
    "parse_networks",
    "peer_allowed",
    "refusal",
    "tls_accept",
]

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class HandshakeError(Exception):
    """A TLS handshake that failed; the message is a PHI-free reason.

    ``attempted`` is False when the peer closed without sending a byte: a
    port probe or a load balancer's health check, not a refused client.
    """

    def __init__(self, reason: str, attempted: bool = True) -> None:
        super().__init__(reason)
        self.attempted = attempted


def parse_networks(value: str) -> list[Network]:
    """``CIDR[,CIDR...]`` (an address alone is one host) as networks.

    Host bits set (``10.0.0.1/8``) are an error rather than silently
    widened: an allow-list that admits more than was written is the wrong
    way to fail.
    """
    networks = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{part!r}: {exc}") from None
    if not networks:
        raise argparse.ArgumentTypeError(f"{value!r}: no network given")
    return networks


def peer_allowed(address: str, networks: tuple[Network, ...]) -> bool:
    """Whether a peer address is in one of ``networks`` (empty: everyone).

    An IPv4 peer seen through a dual-stack IPv6 socket (``::ffff:a.b.c.d``)
    is checked as the IPv4 address it is.
    """
    if not networks:
        return True
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    candidates = [ip]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        candidates.append(ip.ipv4_mapped)
    return any(c in n for c in candidates for n in networks if c.version == n.version)


def refusal(address: str, allow_from: tuple[Network, ...], busy: int,
            max_connections: int) -> tuple[str, str] | None:
    """Why a new peer is turned away before a byte is read, if it is.

    ``(counter, reason)``: ``address`` outside ``allow_from``, or ``limit``
    when ``busy`` connections already fill ``max_connections``. The address
    is checked first, so an unlisted host is never counted as load.
    """
    if not peer_allowed(address, allow_from):
        return "address", "not in --allow-from"
    if busy >= max_connections:
        return "limit", f"--max-connections {max_connections} reached"
    return None


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` is reachable from this machine only.

    A name counts when every address it resolves to is loopback; a wildcard
    (``0.0.0.0``, ``::``) or a name that does not resolve does not.
    """
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(is_loopback(a) for a in addresses)


def check_listen(host: str, tls: bool, insecure_plain_tcp: bool) -> None:
    """Refuse plain TCP beyond loopback unless it was asked for (ValueError).

    On loopback the bytes never leave the machine, which is why plain TCP
    stays the default there (the docs' examples, a sender on the same host).
    """
    if tls and insecure_plain_tcp:
        raise ValueError("--insecure-plain-tcp contradicts --tls-cert: choose one")
    if not tls and not insecure_plain_tcp and not is_loopback(host):
        raise ValueError(
            f"--listen {host}: plain TCP on a non-loopback address puts PHI on the "
            "network in clear text; give --tls-cert/--tls-key (and "
            "--tls-client-ca), or --insecure-plain-tcp to accept that")


def _load_chain(context: ssl.SSLContext, cert: str, key: str | None) -> None:
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        what = f"--tls-cert {cert}" + (f" / --tls-key {key}" if key else "")
        raise ValueError(f"{what}: cannot load ({describe_tls_error(exc)})") from None


def _load_ca(context: ssl.SSLContext, option: str, cafile: str) -> None:
    try:
        context.load_verify_locations(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"{option} {cafile}: cannot load "
                         f"({describe_tls_error(exc)})") from None


@dataclass(frozen=True)
class TlsFiles:
    """The gateway's TLS files (PEM): certificate chain, key, client CA.

    ``key`` None: the key is in ``cert``. ``client_ca`` None: any client
    may complete the handshake (encryption only, no client authentication).
    """

    cert: str
    key: str | None = None
    client_ca: str | None = None

    def server_context(self) -> ssl.SSLContext:
        """A server context: TLS 1.2 or newer, client certificates if a CA is set.

        Raises ValueError naming the file that could not be loaded.
        """
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        _load_chain(context, self.cert, self.key)
        if self.client_ca:
            _load_ca(context, "--tls-client-ca", self.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
        return context


def client_context(ca: str | None = None, cert: str | None = None,
                   key: str | None = None) -> ssl.SSLContext:
    """A sender's context: verifies the server (``ca``, else the system's CAs).

    With ``cert`` (and ``key``), presents that client certificate.
    """
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if ca:
        _load_ca(context, "--tls-ca", ca)
    if cert:
        _load_chain(context, cert, key)
    return context


def describe_tls_error(exc: BaseException) -> str:
    """A PHI-free reason for a TLS or socket failure: OpenSSL's code, else a type.

    OpenSSL reasons (``PEER_DID_NOT_RETURN_A_CERTIFICATE``,
    ``CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate``)
    describe the handshake, never application data.
    """
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLError):
        if not exc.reason:
            return type(exc).__name__  # SSLEOFError: the peer hung up
        detail = getattr(exc, "verify_message", None)
        return f"{exc.reason}: {detail}" if detail else str(exc.reason)
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return type(exc).__name__


def _common_name(sock: ssl.SSLSocket) -> str:
    """The client certificate's common name, for the log (a machine identity)."""
    cert = sock.getpeercert() or {}
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return value
    return "-"


def tls_accept(context: ssl.SSLContext, sock: socket.socket, timeout: float,
               peer: str) -> ssl.SSLSocket:
    """Complete a server-side handshake on an accepted socket within ``timeout``.

    Raises :class:`HandshakeError` with OpenSSL's reason (no certificate,
    unknown CA, plain TCP, an old protocol, timed out); ``sock`` is then
    closed. A success is logged with the protocol and the client
    certificate's common name, so the log tells which sender connected.
    """
    sock.settimeout(timeout)
    try:
        # Peeked, not read: the handshake reads it again.
        if not sock.recv(1, socket.MSG_PEEK):
            sock.close()
            raise HandshakeError("closed before the TLS handshake", attempted=False)
        tls = context.wrap_socket(sock, server_side=True)
    except (OSError, ValueError) as exc:
        sock.close()
        raise HandshakeError(f"TLS handshake failed: {describe_tls_error(exc)}"
                             ) from None
    logger.info("TLS connection from %s (%s, client %s)", peer, tls.version(),
                _common_name(tls))
    return tls
