"""Who may talk to the gateway: TLS, client certificates, addresses, limits (issue 48).

Certificates are made in the test (``deid_pipeline.mllp.certs``, with
``cryptography``): a site CA with a server certificate for 127.0.0.1 and
localhost and a client certificate, and another CA with a client
certificate of its own. Each test starts an in-process gateway on a free
loopback port as tests/test_mllp_gateway.py does (its helpers), and checks
what a sender sees, what lands on disk, the counters and the log: a refused
peer is logged by address and reason, never with message content.
"""

from __future__ import annotations

import io
import ipaddress
import logging
import select
import socket
import ssl
import time

import pytest
import test_mllp_gateway
from test_mllp_gateway import (
    DETECTORS,
    _ack_fields,
    _config,
    _Frames,
    _jsonl_count,
    _written,
)

from deid_pipeline.mllp import MllpGateway
from deid_pipeline.mllp import send as mllp_send
from deid_pipeline.mllp.certs import CertificateAuthority
from deid_pipeline.mllp.security import (
    TlsFiles,
    client_context,
    is_loopback,
    peer_allowed,
)
from deid_pipeline.mllp.store import mllp_frame
from deid_pipeline.pipelines.cli import main as deid_main
from deid_pipeline.synthetic import generate_messages

SB = b"\x0b"
NOT_LOOPBACK = (ipaddress.ip_network("10.0.0.0/8"),)


# The gateway tests' key fixture, offered to this module's tests too.
key_file = test_mllp_gateway.key_file


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """The site CA, its server and client certificates, and another CA's client."""
    directory = str(tmp_path_factory.mktemp("pki"))
    site = CertificateAuthority(directory, "site")
    other = CertificateAuthority(directory, "other")
    return {"ca": site.cert, "server": site.issue("gateway", server=True),
            "client": site.issue("lab-engine"), "intruder": other.issue("intruder"),
            "other_ca": other.cert}


@pytest.fixture(scope="module")
def few():
    return generate_messages(4, 4848, ("oru",))


@pytest.fixture
def hl7_file(tmp_path, few):
    path = tmp_path / "messages.hl7"
    path.write_bytes(b"".join(mllp_frame(m.er7.encode()) for m in few))
    return str(path)


def _tls(pki, client_ca=True) -> TlsFiles:
    server = pki["server"]
    return TlsFiles(server.cert, server.key, pki["ca"] if client_ca else None)


def _start(key_file, output, **overrides) -> tuple[MllpGateway, io.StringIO]:
    """A started gateway and the stream its status lines go to."""
    status = io.StringIO()
    gateway = MllpGateway(_config(key_file, output, **overrides),
                          status_stream=status)
    gateway.start()
    return gateway, status


def _send(port, hl7_file, *options) -> int:
    return mllp_send.main(["--port", str(port), *options, hl7_file])


def _client_options(pki, who="client") -> list[str]:
    issued = pki[who]
    return ["--tls-ca", pki["ca"], "--tls-cert", issued.cert, "--tls-key", issued.key]


def _nothing_written(output) -> None:
    assert _written(output) == {}
    assert _jsonl_count(output, "identifiers") == 0
    assert _jsonl_count(output, "quarantine") == 0


def _no_content(text: str, messages) -> None:
    """No patient, record number or SSN of the messages in a log or status text."""
    lowered = text.lower()
    for m in messages:
        assert not [v for _f, v, label in m.header_identifiers
                    if label in ("PATIENT", "MEDICALRECORD", "SSN")
                    and v.lower() in lowered]


def _closed_by_peer(sock: socket.socket, timeout: float = 5.0) -> bool:
    """Whether the other end closes (or resets) ``sock`` within ``timeout``."""
    ready, _, _ = select.select([sock], [], [], timeout)
    if not ready:
        return False
    try:
        return sock.recv(1024) == b""
    except OSError:
        return True


def _wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


# -------------------------------------------------------------- TLS clients


@pytest.mark.parametrize("name", [None, "localhost"])
def test_when_client_has_a_certificate_of_the_ca_then_acked_over_tls_and_written(
        tmp_path, key_file, pki, few, hl7_file, caplog, name):
    caplog.set_level(logging.INFO, logger="deid_pipeline.mllp")
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, tls=_tls(pki))
    try:
        extra = ["--tls-server-name", name] if name else []
        assert _send(gateway.address[1], hl7_file, *_client_options(pki),
                     *extra) == 0
    finally:
        gateway.shutdown()
    assert sorted(_written(output)) == sorted(m.message_id for m in few)
    assert all(len(copies) == 1 for copies in _written(output).values())
    snapshot = gateway.metrics.snapshot()
    assert snapshot["outcomes"].get("AA", 0) + snapshot["outcomes"].get("AE", 0) \
        == len(few)
    assert snapshot["refused"] == {}
    assert "client lab-engine" in caplog.text
    assert "TLSv1.3" in caplog.text or "TLSv1.2" in caplog.text


@pytest.mark.parametrize("who, reason", [
    (None, "PEER_DID_NOT_RETURN_A_CERTIFICATE"),
    ("intruder", "CERTIFICATE_VERIFY_FAILED"),
])
def test_when_client_has_no_certificate_or_another_cas_then_refused_and_nothing_written(
        tmp_path, key_file, pki, few, hl7_file, caplog, capsys, who, reason):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, tls=_tls(pki))
    try:
        options = _client_options(pki, who) if who else ["--tls-ca", pki["ca"]]
        assert _send(gateway.address[1], hl7_file, *options) == 1
    finally:
        gateway.shutdown()
    _nothing_written(output)
    snapshot = gateway.metrics.snapshot()
    assert snapshot["refused"] == {"handshake": 1}
    assert not snapshot["outcomes"]
    assert "refused 127.0.0.1:" in caplog.text
    assert f"TLS handshake failed: {reason}" in caplog.text
    assert "refused 1 (handshake 1)" in status.getvalue()
    assert "0 of 4 message(s) accepted" in capsys.readouterr().err
    _no_content(caplog.text + status.getvalue(), few)


def test_when_the_gateways_certificate_is_of_another_ca_then_the_sender_refuses_it(
        tmp_path, key_file, pki, hl7_file, capsys):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, tls=_tls(pki, client_ca=False))
    try:
        options = ["--tls-ca", pki["other_ca"]]
        assert _send(gateway.address[1], hl7_file, *options) == 1
        # No client CA: encryption only, any client with the right server CA.
        assert _send(gateway.address[1], hl7_file, "--tls-ca", pki["ca"]) == 0
    finally:
        gateway.shutdown()
    assert "CERTIFICATE_VERIFY_FAILED" in capsys.readouterr().err
    assert gateway.metrics.snapshot()["refused"] == {"handshake": 1}


def test_when_plain_tcp_reaches_a_tls_gateway_then_refused_and_nothing_written(
        tmp_path, key_file, pki, few, caplog):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, tls=_tls(pki))
    try:
        with socket.create_connection(gateway.address) as sock:
            sock.sendall(mllp_frame(few[0].er7.encode()))
            assert _closed_by_peer(sock)
    finally:
        gateway.shutdown()
    _nothing_written(output)
    assert gateway.metrics.snapshot()["refused"] == {"handshake": 1}
    _no_content(caplog.text, few)


def test_the_gateway_speaks_tls_1_2_or_newer_only(pki):
    context = _tls(pki).server_context()
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert _tls(pki, client_ca=False).server_context().verify_mode == ssl.CERT_NONE


# ------------------------------------------------------- addresses, limits


def test_when_peer_is_not_in_allow_from_then_closed_before_the_handshake(
        tmp_path, key_file, pki, hl7_file, caplog):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, tls=_tls(pki), allow_from=NOT_LOOPBACK)
    try:
        assert _send(gateway.address[1], hl7_file, *_client_options(pki)) == 1
    finally:
        gateway.shutdown()
    _nothing_written(output)
    # Counted as an address refusal only: no handshake was started, so the
    # gateway read no byte from the peer.
    assert gateway.metrics.snapshot()["refused"] == {"address": 1}
    assert "refused 127.0.0.1:" in caplog.text
    assert "not in --allow-from" in caplog.text
    assert "TLS connection" not in caplog.text


@pytest.mark.parametrize("address, networks, allowed", [
    ("127.0.0.1", (), True),
    ("127.0.0.1", NOT_LOOPBACK, False),
    ("10.1.2.3", NOT_LOOPBACK, True),
    ("::ffff:10.1.2.3", NOT_LOOPBACK, True),
    ("::ffff:192.168.1.1", NOT_LOOPBACK, False),
    ("fd00::1", (ipaddress.ip_network("fd00::/8"),), True),
    ("not an address", NOT_LOOPBACK, False),
])
def test_when_peer_address_is_checked_then_networks_decide(address, networks, allowed):
    assert peer_allowed(address, networks) is allowed


def test_when_connections_reach_the_cap_then_the_next_is_closed_and_counted(
        tmp_path, key_file, few, caplog):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, max_connections=2)
    try:
        first = socket.create_connection(gateway.address)
        second = socket.create_connection(gateway.address)
        _wait_until(lambda: gateway.metrics.snapshot()["connections"] == 2)
        with socket.create_connection(gateway.address) as third:
            assert _closed_by_peer(third)
        assert gateway.metrics.snapshot()["refused"] == {"limit": 1}
        assert "--max-connections 2 reached" in caplog.text
        # The two admitted connections are served as before.
        first.sendall(mllp_frame(few[0].er7.encode()))
        assert _ack_fields(_Frames(first).next())[1] == few[0].message_id
        second.close()
        _wait_until(lambda: gateway.metrics.snapshot()["connections"] == 1)
        with socket.create_connection(gateway.address) as fourth:
            fourth.sendall(mllp_frame(few[1].er7.encode()))
            assert _ack_fields(_Frames(fourth).next())[1] == few[1].message_id
        first.close()
    finally:
        gateway.shutdown()
    assert sorted(_written(output)) == sorted(m.message_id for m in few[:2])


# ------------------------------------------------------------ slow senders


def _trickle(sock: socket.socket, data: bytes, limit: float = 10.0) -> float:
    """Send ``data`` a byte every 0.1 s until the peer hangs up; seconds taken."""
    started = time.monotonic()
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return time.monotonic() - started
        if _closed_by_peer(sock, 0.1):
            return time.monotonic() - started
        assert time.monotonic() - started < limit, "the slow sender was not dropped"
    raise AssertionError("the whole frame went through")


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_when_a_sender_trickles_a_frame_then_dropped_at_the_idle_timeout(
        tmp_path, key_file, pki, few, caplog, tls):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, idle_timeout=1.0,
                     tls=_tls(pki) if tls else None)
    try:
        sock = socket.create_connection(gateway.address)
        if tls:
            issued = pki["client"]
            context = client_context(pki["ca"], issued.cert, issued.key)
            sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
        with sock:
            # Never the end block: a frame that would complete is no slow-loris.
            seconds = _trickle(sock, SB + few[0].er7.encode()[:200])
    finally:
        gateway.shutdown()
    assert 0.9 <= seconds < 4.0
    _nothing_written(output)
    snapshot = gateway.metrics.snapshot()
    assert snapshot["timeouts"] == 1
    assert snapshot["refused"] == {}
    assert "no complete frame within 1s (--idle-timeout)" in caplog.text
    assert "idle timeouts 1" in status.getvalue()
    _no_content(caplog.text, few)


def test_when_a_peer_stalls_the_handshake_then_refused_at_the_idle_timeout(
        tmp_path, key_file, pki, caplog):
    output = tmp_path / "gw"
    gateway, status = _start(key_file, output, idle_timeout=0.5, tls=_tls(pki))
    try:
        with socket.create_connection(gateway.address) as sock:
            started = time.monotonic()
            assert _closed_by_peer(sock)
            assert time.monotonic() - started < 3.0
    finally:
        gateway.shutdown()
    assert gateway.metrics.snapshot()["refused"] == {"handshake": 1}
    assert "TLS handshake failed: timed out" in caplog.text


def test_when_a_probe_connects_and_closes_then_neither_refused_nor_warned(
        tmp_path, key_file, pki, caplog):
    gateway, status = _start(key_file, tmp_path / "gw", tls=_tls(pki))
    try:
        socket.create_connection(gateway.address).close()  # a health check
        _wait_until(lambda: gateway.metrics.snapshot()["connections"] == 0
                    and gateway.metrics.connections_total == 1)
    finally:
        gateway.shutdown()
    assert gateway.metrics.snapshot()["refused"] == {}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ------------------------------------------------------------ usage errors


def _mllp(tmp_path, *options) -> list[str]:
    return ["mllp", "--output", str(tmp_path / "gw"), "--ephemeral-key",
            "--detectors", ",".join(DETECTORS), *options]


@pytest.mark.parametrize("options, message", [
    (["--listen", "0.0.0.0:0"], "--insecure-plain-tcp"),
    (["--listen", "[::]:0"], "--insecure-plain-tcp"),
    (["--tls-key", "x.key"], "need --tls-cert"),
    (["--tls-cert", "missing.pem"], "--tls-cert missing.pem: cannot load"),
])
def test_when_options_would_listen_unsafely_then_usage_error_before_anything_starts(
        tmp_path, capsys, options, message):
    assert deid_main(_mllp(tmp_path, *options)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "gw").exists()


def test_when_tls_and_insecure_plain_tcp_are_both_given_then_usage_error(
        tmp_path, pki, capsys):
    server = pki["server"]
    options = ["--tls-cert", server.cert, "--tls-key", server.key,
               "--insecure-plain-tcp"]
    assert deid_main(_mllp(tmp_path, *options)) == 2
    assert "contradicts" in capsys.readouterr().err


def test_when_insecure_plain_tcp_or_loopback_then_the_gateway_is_configured(tmp_path):
    import argparse

    from deid_pipeline.mllp.cli import _config, add_arguments

    parser = add_arguments(argparse.ArgumentParser())
    base = ["--output", str(tmp_path / "gw"), "--ephemeral-key"]
    config, _ = _config(parser.parse_args(
        [*base, "--listen", "0.0.0.0:2575", "--insecure-plain-tcp",
         "--allow-from", "10.0.0.0/8,192.168.1.7", "--allow-from", "fd00::/8"]))
    assert config.insecure_plain_tcp and config.tls is None
    assert [str(n) for n in config.allow_from] == [
        "10.0.0.0/8", "192.168.1.7/32", "fd00::/8"]
    config, _ = _config(parser.parse_args(base))
    assert config.host == "127.0.0.1" and not config.insecure_plain_tcp
    with pytest.raises(SystemExit):
        parser.parse_args([*base, "--allow-from", "10.0.0.1/8"])


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("10.1.2.3", False),
])
def test_when_listen_host_is_checked_then_only_loopback_counts(host, loopback):
    assert is_loopback(host) is loopback
