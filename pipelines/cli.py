"""The ``deid-pipeline`` command line: one entry point, one subcommand per job.

Subcommands live next to the code they drive and add themselves through an
``add_subcommand(subparsers)`` function; this module only assembles them, and
imports Beam only when ``run`` actually runs.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from deid_pipeline import __version__
from deid_pipeline.run_options import EPILOG, add_run_arguments
from deid_pipeline.run_options import build_parser as build_run_parser

# Modules that contribute a subcommand, in --help order.
_SUBCOMMAND_MODULES = (
    "deid_pipeline.training.train",
    "deid_pipeline.training.train_neural",
    "deid_pipeline.evaluation.cross_validation",
    "deid_pipeline.synthetic.cli",
    "deid_pipeline.outputs.report",
    "deid_pipeline.pipelines.compact",
    "deid_pipeline.outputs.brat_export",
    "deid_pipeline.mllp.cli",
)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from deid_pipeline.pipelines.job import main as run_main

    return run_main(argv)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with ``run`` alone for ``run``.

    A ``run`` never needs the other subcommands' modules (the gateway,
    training, the generators: half a second of imports per run).
    """
    parser = argparse.ArgumentParser(
        prog="deid-pipeline",
        description="De-identify clinical notes and HL7v2 reports: tag PHI with a "
        "CRF plus rules and header dictionaries, replace it, write Parquet.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more logging (ids and counts only, never PHI)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run = sub.add_parser(
        "run",
        help="de-identify input files into Parquet tables",
        description="De-identify clinical documents into Parquet.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    add_run_arguments(run)
    run.set_defaults(func=_run, passes_argv=True)
    if command != "run":
        for module in _SUBCOMMAND_MODULES:
            importlib.import_module(module).add_subcommand(sub)
    return parser


class _BigQueryImportNoise(logging.Filter):
    """Drops Beam's import-time warning that BigQuery's client is missing.

    Beam logs it on the root logger whenever its GCP file systems load; this
    tool never uses BigQuery, so it only alarms whoever reads the job's log.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("apitools not found")


def _misspelt_run_option(argv: list[str]) -> str | None:
    """``run``'s first option that neither it nor Beam declares, as an error.

    Checked before parsing: argparse reports the required options it misses
    first, so ``--ouptut out/`` came out as "--output is required". Beam is
    imported only when an option is not ``run``'s own.
    """
    # The top-level options take no value: the first word is the command.
    command = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if command is None or argv[command] != "run":
        return None
    rest = argv[command + 1:]
    own = build_run_parser()
    if all(a.split("=", 1)[0] in own._option_string_actions  # noqa: SLF001
           for a in rest if a.startswith("--") and a != "--"):
        return None
    # Beam's import logs a warning on the root logger, which would configure
    # logging before ``main`` does: a handler meanwhile keeps it unconfigured.
    hold = logging.NullHandler()
    logging.getLogger().addHandler(hold)
    try:
        from deid_pipeline.pipelines.job_options import RunError, check_option_names
    finally:
        logging.getLogger().removeHandler(hold)
    try:
        check_option_names(rest, own)
    except RunError as exc:
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and dispatch; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # The top-level options take no value: the first word is the command.
    parser = build_parser(next((a for a in argv if not a.startswith("-")), None))
    typo = _misspelt_run_option(argv)
    if typo:
        print(f"deid-pipeline run: error: {typo}", file=sys.stderr)
        return 2
    # ``run`` hands options it does not know to Beam, which refuses what no
    # PipelineOptions class declares (exit 2); the others reject them here.
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Beam's workers log every element's repr at DEBUG; our reprs hold no PHI,
    # but elements of other types might, so Beam never logs below INFO.
    logging.getLogger("apache_beam").setLevel(max(level, logging.INFO))
    logging.getLogger().addFilter(_BigQueryImportNoise())
    if getattr(args, "passes_argv", False):
        return args.func(args, argv[argv.index(args.command) + 1 :])
    return args.func(args)


if __name__ == "__main__":
    from deid_pipeline.pipelines.entry import main as entry_main

    sys.exit(entry_main())
