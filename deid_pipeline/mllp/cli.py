"""``deid-pipeline mllp``: run the MLLP gateway until SIGTERM or Ctrl-C.

The de-identification options are those of ``run`` (same names, same
defaults), so a feed and a nightly batch configured alike give the same
bytes for the same message. Exit codes: 0 after a clean stop, 2 when the
gateway could not start (bad options, no key, address in use, output
directory held by another gateway, plain TCP beyond loopback without
``--insecure-plain-tcp``, a TLS file that cannot be loaded).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from deid_pipeline.hl7.writeback import Z_SEGMENT_MODES
from deid_pipeline.keys import KeyUnavailableError, key_fingerprint, load_key
from deid_pipeline.mllp.security import TlsFiles, check_listen, parse_networks
from deid_pipeline.policy import Mode, Policy
from deid_pipeline.run_options import (
    add_as_of_year,
    add_language,
    add_review_floor,
    add_rules_option,
    surrogate_language,
)
from deid_pipeline.runtime.process import allowed_cpus
from deid_pipeline.tagger.detectors import (
    DEFAULT_BIAS,
    DEFAULT_DETECTORS,
    TaggerConfig,
    check_names,
)

__all__ = ["add_arguments", "add_subcommand", "main", "parse_address"]

DEFAULT_LISTEN = "127.0.0.1:2575"
EPILOG = """\
Outputs under DIR: hl7/ (de-identified messages, MLLP-framed, rolled files;
the one being written ends in .part), identifiers/ and quarantine/ (PROTECTED:
JSON lines with PHI), state/ (dedup index). A status line goes to stderr every
--status-interval seconds and at shutdown (counts only, with peers refused
and connections dropped at the idle timeout).

Plain TCP is accepted on loopback only: on any other --listen address give
--tls-cert/--tls-key (and --tls-client-ca for client certificates), or
--insecure-plain-tcp to put PHI on the network in clear text on purpose.

Send it messages with the package's sender (waits for each ACK):
  python -m deid_pipeline.mllp.send --port 2575 messages.hl7
over TLS with a client certificate:
  python -m deid_pipeline.mllp.send --host gw.example --port 2575 \\
    --tls-ca ca.pem --tls-cert client.pem --tls-key client.key messages.hl7
See docs/gateway.md, "TLS and who may connect".
"""


def parse_address(value: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT``, or ``PORT`` alone) as ``(host, port)``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = default_host, value
    host = host.strip("[]") or default_host
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected HOST:PORT") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r}: port out of range")
    return host, number


def _positive(kind):
    def parse(value: str):
        number = kind(value)
        if number < 0:
            raise argparse.ArgumentTypeError(f"{value!r}: must not be negative")
        return number

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Declare the ``mllp`` options on ``parser``."""
    parser.add_argument("--listen", type=parse_address, default=DEFAULT_LISTEN,
                        metavar="HOST:PORT",
                        help="address to accept MLLP connections on (default: "
                        "%(default)s; port 0 picks a free one)")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="output directory (created if missing; one gateway "
                        "per directory)")
    parser.add_argument("--forward", type=parse_address, metavar="HOST:PORT",
                        help="also send each de-identified message to this MLLP "
                        "endpoint; the sender gets AA only after its AA")
    parser.add_argument("--mode", default=Mode.SURROGATE.value,
                        choices=[m.value for m in Mode],
                        help="surrogate: realistic replacements (default); redact: "
                        "[**LABEL**] placeholders; tag: inline <LABEL>..</LABEL>")
    parser.add_argument("--policy", default=Policy.SAFE_HARBOR.value,
                        choices=[p.value for p in Policy],
                        help="what surrogate mode must remove (default: %(default)s)")
    add_as_of_year(parser)
    add_language(parser)
    add_review_floor(parser)
    parser.add_argument("--key-file", metavar="FILE",
                        help="secret key for person ids and surrogates (default: "
                        "$DEID_KEY_FILE)")
    parser.add_argument("--ephemeral-key", action="store_true",
                        help="demo only: use a random key (outputs cannot be "
                        "reproduced or linked with other runs)")
    parser.add_argument("--model", metavar="PATH",
                        help="CRF model file (default: the model shipped in the "
                        "package)")
    parser.add_argument("--bias", type=float, default=None,
                        help="shift of the CRF's O-label score; negative finds "
                        "more PHI (default: the bias a site model records, else "
                        f"{DEFAULT_BIAS})")
    parser.add_argument("--detectors", default=",".join(DEFAULT_DETECTORS),
                        help="comma-separated detectors (default: %(default)s)")
    add_rules_option(parser)
    parser.add_argument("--hl7-z-segments", choices=Z_SEGMENT_MODES, default="empty",
                        help="Z-segments written as their bare segment id (empty, "
                        "the default) or as received (keep)")
    parser.add_argument("--workers", type=_positive(int), default=len(allowed_cpus()),
                        metavar="N",
                        help="de-identification processes, each loading the model "
                        "once (default: one per CPU this process may use, "
                        "%(default)s); 0 = in the connection threads, one core")
    parser.add_argument("--no-pin-workers", dest="pin_workers", action="store_false",
                        help="let the OS move the worker processes between CPUs "
                        "(default: with no more workers than CPUs, each stays on "
                        "a CPU of its own, which measured up to 7%% faster)")
    parser.add_argument("--roll-size-mb", type=_positive(float), default=64.0,
                        metavar="MB", help="start a new output file after this "
                        "many MB of HL7 (default: %(default)s)")
    parser.add_argument("--roll-count", type=_positive(int), default=10_000,
                        metavar="N", help="... or after this many messages "
                        "(default: %(default)s)")
    parser.add_argument("--roll-seconds", type=_positive(float), default=3600.0,
                        metavar="S", help="... or when the file is this old "
                        "(default: %(default)s)")
    parser.add_argument("--status-interval", type=_positive(float), default=30.0,
                        metavar="S", help="seconds between status lines on stderr "
                        "(default: %(default)s; 0: only at shutdown)")
    parser.add_argument("--dedup-days", type=_positive(float), default=7.0,
                        metavar="D", help="how long a message id is remembered "
                        "to drop resends (default: %(default)s)")
    parser.add_argument("--max-frame-mb", type=_positive(float), default=16.0,
                        metavar="MB", help="larger frames are answered AR "
                        "(default: %(default)s)")
    parser.add_argument("--forward-timeout", type=_positive(float), default=30.0,
                        metavar="S", help="seconds to wait for the downstream ACK "
                        "(default: %(default)s)")
    parser.add_argument("--drain-seconds", type=_positive(float), default=60.0,
                        metavar="S", help="on SIGTERM, how long to wait for "
                        "messages in progress (default: %(default)s)")
    _add_security(parser)
    return parser


def _add_security(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "who may connect",
        "TLS, client certificates, addresses and limits. Refused peers, failed\n"
        "handshakes and dropped connections are logged by address and reason and\n"
        "counted in the status line, never with message content.")
    group.add_argument("--tls-cert", metavar="FILE",
                       help="serve MLLP over TLS (1.2 or newer) with this PEM "
                       "certificate chain, the gateway's certificate first")
    group.add_argument("--tls-key", metavar="FILE",
                       help="the certificate's private key, PEM (default: in "
                       "--tls-cert)")
    group.add_argument("--tls-client-ca", metavar="FILE",
                       help="mutual TLS: require a client certificate signed by a "
                       "CA in this PEM file; a client without one, or with one of "
                       "another CA, fails the handshake")
    group.add_argument("--allow-from", type=parse_networks, action="extend",
                       metavar="CIDR[,CIDR...]",
                       help="accept connections only from these networks or "
                       "addresses (e.g. 10.20.0.0/16,192.168.1.7; repeatable); "
                       "others are closed before a byte is read (default: any)")
    group.add_argument("--max-connections", type=_positive(int), default=64,
                       metavar="N", help="connections served at the same time; "
                       "more are closed as soon as accepted (default: "
                       "%(default)s)")
    group.add_argument("--idle-timeout", type=_positive(float), default=300.0,
                       metavar="S",
                       help="per-frame deadline: after the handshake and after each "
                       "ACK a whole frame must arrive within S seconds, however "
                       "many bytes trickle in, else the connection is dropped "
                       "(slow senders, slow-loris); also bounds taking an ACK, and "
                       "the TLS handshake (at most 30 s). 0: no deadline "
                       "(default: %(default)s)")
    group.add_argument("--insecure-plain-tcp", action="store_true",
                       help="allow plain TCP on a non-loopback --listen address: "
                       "PHI crosses the network in clear text and any host that "
                       "reaches the port can send (default: plain TCP on "
                       "loopback only)")


def _security(args: argparse.Namespace) -> dict:
    """The security options as GatewayConfig fields, checked before anything loads.

    A TLS file that cannot be read or plain TCP beyond loopback is a usage
    error (ValueError, exit 2) before the key, the model or the port.
    """
    tls = None
    if args.tls_cert:
        tls = TlsFiles(args.tls_cert, args.tls_key, args.tls_client_ca)
        tls.server_context()
    elif args.tls_key or args.tls_client_ca:
        raise ValueError("--tls-key and --tls-client-ca need --tls-cert")
    check_listen(args.listen[0], tls is not None, args.insecure_plain_tcp)
    return {"tls": tls, "allow_from": tuple(args.allow_from or ()),
            "max_connections": max(1, args.max_connections),
            "idle_timeout": args.idle_timeout,
            "insecure_plain_tcp": args.insecure_plain_tcp}


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``mllp`` to the ``deid-pipeline`` command line."""
    parser = subparsers.add_parser(
        "mllp", help="de-identify a live HL7 feed (MLLP server)",
        description="De-identify HL7 messages received over MLLP: write them "
        "durably, then acknowledge them.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _config(args: argparse.Namespace):
    from deid_pipeline.mllp.server import GatewayConfig
    from deid_pipeline.mllp.worker import EngineConfig
    from deid_pipeline.tagger.crf_model import default_bias
    from deid_pipeline.tagger.rules.site import load_site_rules

    security = _security(args)
    detectors = check_names(d.strip() for d in args.detectors.split(",") if d.strip())
    key, how = load_key(args.key_file, args.ephemeral_key)
    # As ``run`` does: the site rules checked before a message is accepted, the
    # model's own bias when none is given.
    if args.rules:
        load_site_rules(args.rules)
    bias = args.bias if args.bias is not None else default_bias(args.model)
    engine = EngineConfig(
        tagger=TaggerConfig(detectors=detectors, model_path=args.model, bias=bias,
                            rules_path=os.path.abspath(args.rules) if args.rules
                            else None),
        mode=args.mode, key=key, policy=args.policy, as_of_year=args.as_of_year,
        review_floor=args.review_floor,
        z_segments=args.hl7_z_segments, language=surrogate_language(args))
    config = GatewayConfig(
        output_dir=args.output, engine=engine, host=args.listen[0],
        port=args.listen[1], forward=args.forward, workers=args.workers,
        pin_workers=args.pin_workers,
        roll_bytes=max(1, int(args.roll_size_mb * (1 << 20))),
        roll_messages=max(1, args.roll_count), roll_seconds=args.roll_seconds or 1.0,
        status_interval=args.status_interval, dedup_days=args.dedup_days,
        max_frame_bytes=max(1024, int(args.max_frame_mb * (1 << 20))),
        forward_timeout=args.forward_timeout, drain_seconds=args.drain_seconds,
        **security)
    return config, f"{how} {key_fingerprint(key)}"


def _who(config) -> str:
    """How the gateway is reached, for the startup line."""
    if config.tls is None:
        how = "plain TCP"
    elif config.tls.client_ca:
        how = "TLS, client certificates required"
    else:
        how = "TLS, no client certificates"
    allowed = ",".join(str(n) for n in config.allow_from) or "any address"
    return (f"{how}; from {allowed}; at most {config.max_connections} "
            f"connections; idle timeout {config.idle_timeout:g}s")


def run(args: argparse.Namespace) -> int:
    """Start the gateway, serve until SIGTERM/SIGINT, stop cleanly."""
    from deid_pipeline.mllp.server import MllpGateway

    try:
        config, key_info = _config(args)
    except (KeyUnavailableError, ValueError) as exc:
        print(f"deid-pipeline mllp: {exc}", file=sys.stderr)
        return 2
    gateway = MllpGateway(config)
    try:
        host, port = gateway.start()
    except Exception as exc:  # noqa: BLE001 - startup only: no message seen yet
        print(f"deid-pipeline mllp: cannot start: {exc}", file=sys.stderr)
        return 2
    # The handler only flips a flag: taking a lock in a signal handler can
    # deadlock with the very thread it interrupted.
    signalled: list[int] = []
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, lambda n, _f: signalled.append(n))
    forward = f", forwarding to {config.forward[0]}:{config.forward[1]}" \
        if config.forward else ""
    print(f"mllp: listening on {host}:{port} ({_who(config)}){forward}; "
          f"output {config.output_dir}; {config.workers} worker process(es); detectors "
          f"{','.join(config.engine.tagger.detectors)}; mode {config.engine.mode}, "
          f"policy {config.engine.policy}; key {key_info}", file=sys.stderr, flush=True)
    try:
        while not signalled:
            time.sleep(0.2)
    finally:
        gateway.shutdown()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m deid_pipeline.mllp.cli ...``."""
    parser = argparse.ArgumentParser(
        prog="deid-pipeline mllp", description="De-identify HL7 received over MLLP.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    import logging

    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
