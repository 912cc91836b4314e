"""Send HL7 files to an MLLP listener, one message at a time, each ACK awaited.

``python -m deid_pipeline.mllp.send --port 2575 samples/hl7/*.hl7`` is what the
README's gateway example runs: the package's own sender, so the example needs
nothing the install does not provide. Each file is split into its messages
as ``run`` reads it (one message, several, an HL7 batch or an MLLP capture:
``deid_pipeline.hl7.framing``), each message is sent in an MLLP frame and
must be answered ``AA`` for its MSH-10 before the next goes.

With ``--tls-ca`` (the CA that signed the gateway's certificate) it speaks
TLS and checks the gateway's name (``--host``, or ``--tls-server-name``
when the certificate names the gateway otherwise); ``--tls-cert`` and
``--tls-key`` present a client certificate, as a gateway with
``--tls-client-ca`` requires. So the README's example runs over TLS with
three more options.

Prints one line per file (messages sent and accepted; no content) and exits
0 when every message was accepted, 1 when one was not (the rest of that file
is not sent), 2 on a usage error (including a TLS file that cannot be
loaded).
"""

from __future__ import annotations

import argparse
import sys

from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.mllp.security import client_context
from deid_pipeline.mllp.server import Forwarder

MAX_ACK_BYTES = 1 << 20


def send_file(path: str, forwarder: Forwarder) -> tuple[int, int, str | None]:
    """Send one file's messages: (messages, accepted, why the first failed)."""
    with open(path, "rb") as fh:
        frames = [f for f in frame_file(fh.read()).frames() if f.error is None]
    accepted = 0
    for frame in frames:
        try:
            failure = forwarder.send(frame.data)
        except ValueError as exc:  # no usable MSH: nothing to await an ACK for
            failure = (f"message {frame.ordinal} has no usable MSH "
                       f"({type(exc).__name__})")
        if failure:
            return len(frames), accepted, failure
        accepted += 1
    return len(frames), accepted, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.mllp.send",
        description="Send HL7 files over MLLP, waiting for each message's ACK.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="HL7 files")
    parser.add_argument("--host", default="127.0.0.1",
                        help="listener host (default: %(default)s)")
    parser.add_argument("--port", type=int, required=True, help="listener port")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="seconds to wait for each ACK (default: %(default)s)")
    tls = parser.add_argument_group("TLS (any of these options turns it on)")
    tls.add_argument("--tls-ca", metavar="FILE",
                     help="PEM CA certificate(s) to verify the gateway with "
                     "(default: the system's CAs)")
    tls.add_argument("--tls-cert", metavar="FILE",
                     help="client certificate (PEM) for a gateway that requires "
                     "one (--tls-client-ca)")
    tls.add_argument("--tls-key", metavar="FILE",
                     help="its private key (PEM; default: in --tls-cert)")
    tls.add_argument("--tls-server-name", metavar="NAME",
                     help="the name the gateway's certificate must carry "
                     "(default: --host)")
    args = parser.parse_args(argv)
    context = None
    if args.tls_ca or args.tls_cert or args.tls_key or args.tls_server_name:
        if args.tls_key and not args.tls_cert:
            parser.error("--tls-key needs --tls-cert")
        try:
            context = client_context(args.tls_ca, args.tls_cert, args.tls_key)
        except ValueError as exc:
            parser.error(str(exc))
    forwarder = Forwarder((args.host, args.port), args.timeout, MAX_ACK_BYTES,
                          tls=context, server_name=args.tls_server_name)
    code = 0
    try:
        for path in args.files:
            try:
                sent, accepted, failure = send_file(path, forwarder)
            except OSError as exc:
                sent, accepted, failure = 0, 0, f"cannot read ({exc.strerror})"
            print(f"{path}: {accepted} of {sent} message(s) accepted"
                  + (f"; stopped: {failure}" if failure else ""), file=sys.stderr)
            if failure:
                code = 1
    finally:
        forwarder.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
