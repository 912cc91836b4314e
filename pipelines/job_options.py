"""Checks of ``run``'s options and of the Beam options it passes on.

Beam drops what it cannot parse with a warning and ignores packages that
EXTERNAL workers never install, so a typo or a wrong worker set-up would run
to exit 0 on defaults: these checks stop the run (exit 2) before any work,
naming the closest option. Also what run.json may show of the options.
"""

from __future__ import annotations

import argparse
import difflib

from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser


class RunError(Exception):
    """The job could not run (bad options, unusable output location)."""


# Options whose values must never reach run.json or logs.
_SECRET_OPTIONS = {"key_file"}
# Beam options holding credentials (--s3_secret_access_key, --s3_session_token,
# ...): named in run.json, their values replaced.
_SECRET_BEAM_WORDS = ("secret", "token", "password", "access_key", "credential")


def redact_beam_args(beam_args: list[str]) -> list[str]:
    """Beam options for run.json, credential values replaced by ``***``."""
    redacted, hide_next = [], False
    for arg in beam_args:
        if hide_next:
            redacted.append("***")
            hide_next = False
            continue
        name, eq, _value = arg.partition("=")
        secret = name.startswith("--") and any(w in name for w in _SECRET_BEAM_WORDS)
        if secret and eq:
            arg = f"{name}=***"
        hide_next = secret and not eq
        redacted.append(arg)
    return redacted


def _check_same_storage(output: str, hl7_output: str | None) -> None:
    """HL7 files are staged under ``output``: they are moved, not copied, out.

    A move works only within one file system (one scheme).
    """
    if hl7_output and FileSystems.get_scheme(hl7_output) != FileSystems.get_scheme(
        output
    ):
        raise RunError(
            "--hl7-output must be on the same file system as --output "
            f"({hl7_output!r}, {output!r})"
        )


def beam_parser() -> argparse.ArgumentParser:
    """Every option Beam declares, as Beam parses them.

    The same parser ``PipelineOptions.get_all_options`` builds: each
    ``PipelineOptions`` subclass adds its own flags (runner, direct, portable,
    Flink, S3, GCP, ...), with abbreviations off as in Beam.
    """
    parser = _BeamArgumentParser(allow_abbrev=False)
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)  # noqa: SLF001 - Beam's own way
    return parser


def check_beam_args(beam_args: list[str], own: argparse.ArgumentParser) -> None:
    """Refuse what neither ``run`` nor Beam declares, naming the closest option.

    Beam drops an option it cannot parse with a warning, so a nightly job
    with ``--bais=-5`` or ``--polcy limited-dataset`` would run to exit 0 on
    the default bias or policy: a typo must stop the run (exit 2) instead.
    """
    parser = beam_parser()
    _known, unknown = parser.parse_known_args(beam_args)
    if not unknown:
        return
    first = unknown[0]
    if not first.startswith("-"):
        raise RunError(f"unexpected argument {first!r}")
    raise RunError(_unrecognized(first.split("=", 1)[0], own, parser))


def _unrecognized(name: str, own: argparse.ArgumentParser,
                  beam: argparse.ArgumentParser) -> str:
    """``unrecognized option NAME (did you mean CLOSEST?)``."""
    options = [
        option
        for p in (own, beam)
        for action in p._actions  # noqa: SLF001 - argparse keeps them here
        for option in action.option_strings
        if option.startswith("--")
    ]
    close = difflib.get_close_matches(name, options, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unrecognized option {name}{hint}"


def check_option_names(argv: list[str], own: argparse.ArgumentParser) -> None:
    """Refuse a misspelt option before the options are parsed.

    ``--ouptut out/`` was reported as a missing ``--output`` (argparse asks
    for required options first), never as a typo: every ``--name`` that
    neither ``run`` nor Beam declares is refused here, naming the closest.
    """
    known = own._option_string_actions  # noqa: SLF001 - argparse keeps them here
    names = [a.split("=", 1)[0] for a in argv if a.startswith("--") and a != "--"]
    strangers = [n for n in names if n not in known]
    if not strangers:
        return
    beam = beam_parser()
    for name in strangers:
        if name not in beam._option_string_actions:  # noqa: SLF001
            raise RunError(_unrecognized(name, own, beam))


def check_worker_environment(beam_args: list[str]) -> None:
    """Refuse packages to stage for workers that never install them.

    Beam's EXTERNAL workers (a worker pool, Flink's usual Python set-up)
    start the SDK harness in the pool's own environment: ``--setup_file``,
    ``--requirements_file`` and ``--extra_package`` are staged and silently
    ignored there, so a job would run on whatever the pool has installed.
    """
    known, _ = beam_parser().parse_known_args(beam_args)
    if (known.environment_type or "").upper() != "EXTERNAL":
        return
    staged = [
        f"--{name}"
        for name in ("setup_file", "requirements_file", "extra_packages")
        if getattr(known, name, None)
    ]
    if staged:
        raise RunError(
            f"{', '.join(staged)} is not installed by EXTERNAL workers: install "
            "deid-pipeline in the worker pool's environment instead (docs/flink.md)"
        )
