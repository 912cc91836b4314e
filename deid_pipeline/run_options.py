"""Options of ``deid-pipeline run`` (Beam-free, so ``--help`` is instant).

Our own options are parsed here; the rest goes to Beam's PipelineOptions
untouched if Beam declares it (``--runner``, ``--direct_num_workers``,
``--direct_running_mode``, ``--flink_master``, ``--s3_endpoint_url``, ...) and
is a usage error otherwise (``pipelines/job_options.py``, ``check_beam_args``).
"""

from __future__ import annotations

import argparse
import datetime

from deid_pipeline.hl7.writeback import Z_SEGMENT_MODES
from deid_pipeline.policy import Mode, Policy
from deid_pipeline.readers.formats import FORMATS
from deid_pipeline.tagger.confidence import DEFAULT_REVIEW_FLOOR
from deid_pipeline.tagger.detectors import DEFAULT_BIAS, DEFAULT_DETECTORS

# Documents per chunk of the batch job (deid_pipeline.transforms.chunks, which
# imports Beam: kept here so that --help stays instant).
DEFAULT_CHUNK_SIZE = 256
# Largest input file read, after decompression (--max-file-bytes). A file is
# read whole, so this bounds a worker's memory; a gzip bomb stops here.
DEFAULT_MAX_FILE_BYTES = 2 * 1024**3
_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}

EPILOG = """\
Options Apache Beam declares are passed to it (any other is an error, exit 2):
  --runner=DirectRunner --direct_running_mode=multi_processing --direct_num_workers=2
  --runner=FlinkRunner --flink_master=HOST:8081 --flink_version=1.19
    --flink_job_server_jar="$(deid-flink-cluster jar)" --environment_type=EXTERNAL
    --environment_config=localhost:50000 --environment_cache_millis=5000
    --parallelism=2   (deid-flink-cluster start prints these; docs/flink.md)

Outputs under DIR: documents/ (research extract), identifiers/ and quarantine/
(PROTECTED: contain PHI), run.json (counts, wall seconds, options; no PHI).
"""


def _byte_size(value: str) -> int:
    """``1048576``, ``512M``, ``2G`` (binary units) -> bytes, at least 1."""
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _SIZE_UNITS else ""
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a size (bytes, or a number with K, M, G or T)"
        ) from None
    size = int(number * _SIZE_UNITS[unit])
    if size < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, not {value!r}")
    return size


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Declare the ``run`` options on ``parser``."""
    parser.add_argument(
        "--input",
        action="append",
        metavar="PATTERN",
        help="input file or glob; repeat for several. A pattern that matches "
        "no file is an error (exit 2) unless --allow-empty-input; a directory "
        "is an error unless --recursive. Globs and --recursive skip hidden "
        "files and gold/annotation files (.ann, .phrase, JSONL with spans). "
        "Required unless --table is given",
    )
    parser.add_argument(
        "--table",
        action="append",
        metavar="NAME=PATTERN",
        help="a table of a research extract (CSV, TSV, JSONL or Parquet; a "
        "glob's files are one table), de-identified column by column under "
        "its --column-policy and written to DIR/tables/NAME/; repeat for "
        "several tables (docs/tables.md)",
    )
    parser.add_argument(
        "--column-policy",
        action="append",
        metavar="NAME=FILE",
        help="the column policy (YAML or JSON) of --table NAME: each column's "
        "action (text, person, pseudonym, date, datetime, birth_date, age, "
        "zip, keep, drop); checked before anything runs (docs/tables.md)",
    )
    parser.add_argument(
        "--recursive",
        action="store_true",
        help="an --input that is a directory reads every file under it "
        "(but hidden and gold/annotation files)",
    )
    parser.add_argument(
        "--allow-empty-input",
        action="store_true",
        help="a pattern that matches no file is not an error (a nightly job "
        "over a folder that may be empty); with no input at all the tables "
        "are published empty",
    )
    parser.add_argument(
        "--input-format",
        default="auto",
        choices=("auto",) + FORMATS,
        help="input format (default: auto, by extension then content)",
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="DIR",
        help="output directory (tables are replaced on success)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="add this run as a partition of DIR (documents/run=<UTC ts>/, ...) "
        "with runs/<ts>.json, reading only input files that are new or "
        "changed since the runs already in DIR (docs/incremental.md)",
    )
    parser.add_argument(
        "--mode",
        default=Mode.SURROGATE.value,
        choices=[m.value for m in Mode],
        help="surrogate: realistic replacements (default); redact: "
        "[**LABEL**] placeholders; tag: inline <LABEL>..</LABEL>",
    )
    parser.add_argument(
        "--policy",
        default=Policy.SAFE_HARBOR.value,
        choices=[p.value for p in Policy],
        help="what surrogate mode must remove (default: %(default)s)",
    )
    add_as_of_year(parser)
    add_language(parser)
    add_review_floor(parser)
    parser.add_argument(
        "--keep-metadata",
        metavar="KEY[,KEY...]",
        action="append",
        default=[],
        help="JSONL keys / Parquet columns (besides id, text and person_key) to "
        "publish in the research extract's metadata column, as written: nothing "
        "de-identifies them, so by default none is (an mrn or name key would "
        "reach the research output); repeatable",
    )
    parser.add_argument(
        "--key-file",
        metavar="FILE",
        help="secret key for person ids and surrogates (default: $DEID_KEY_FILE)",
    )
    parser.add_argument(
        "--ephemeral-key",
        action="store_true",
        help="demo only: use a random key (outputs cannot be "
        "reproduced or linked with other runs)",
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help="CRF model file (default: the model shipped in the package)",
    )
    parser.add_argument(
        "--bias",
        type=float,
        default=None,
        help="shift of the CRF's O-label score; negative finds more "
        "PHI at some precision cost (default: the bias a site model records, "
        f"else {DEFAULT_BIAS})",
    )
    parser.add_argument(
        "--detectors",
        default=",".join(DEFAULT_DETECTORS),
        help="comma-separated detectors (default: %(default)s)",
    )
    add_rules_option(parser)
    parser.add_argument(
        "--hl7-output",
        metavar="DIR",
        help="also write de-identified HL7: one file per HL7 input file, same "
        "name (less a .gz/.bz2 suffix: written uncompressed) and framing",
    )
    parser.add_argument(
        "--hl7-z-segments",
        choices=Z_SEGMENT_MODES,
        default="empty",
        help="with --hl7-output: Z-segments (site-defined, so no field list "
        "says which fields hold PHI) are written as their bare segment id "
        "(empty, the default) or as received (keep; the leak guard then "
        "refuses a message only if a header value is left in one)",
    )
    parser.add_argument(
        "--max-quarantine-ratio",
        type=float,
        metavar="R",
        help="fail (exit 4, nothing published) if more than this share of "
        "records was quarantined (default: only if every record was; "
        "1 never fails)",
    )
    parser.add_argument(
        "--output-shards",
        type=int,
        metavar="N",
        help="Parquet files of the persons and quarantine tables (default: "
        "one per 64 MB of input); documents and identifiers get one file per "
        "chunk (--chunk-size)",
    )
    parser.add_argument(
        "--chunk-size",
        type=_positive_int,
        default=DEFAULT_CHUNK_SIZE,
        metavar="N",
        help="documents of one input file per unit of work and per "
        "documents/identifiers Parquet file (default: %(default)s); bounds "
        "what a worker holds at a time",
    )
    parser.add_argument(
        "--max-file-bytes",
        type=_byte_size,
        default=DEFAULT_MAX_FILE_BYTES,
        metavar="SIZE",
        help="largest input file, after decompression, e.g. 512M or 4G "
        "(default: 2G); a larger one (or a gzip bomb) is quarantined whole at "
        "stage read, since each file is read into memory",
    )
    return parser


def build_parser(prog: str = "deid-pipeline run") -> argparse.ArgumentParser:
    """A standalone parser for ``run`` (used by ``python -m`` and tests)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="De-identify clinical documents into Parquet.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        # As Beam's: ``--out`` is no ``--output``, but a typo to name.
        allow_abbrev=False,
    )
    return add_run_arguments(parser)


def metadata_keys(values: list[str]) -> frozenset[str]:
    """``--keep-metadata a,b --keep-metadata c`` -> {a, b, c} (blanks ignored)."""
    return frozenset(k.strip() for v in values for k in v.split(",") if k.strip())


def add_as_of_year(parser: argparse.ArgumentParser) -> None:
    """``--as-of-year``: shared by ``run`` and ``mllp``."""
    parser.add_argument(
        "--as-of-year",
        type=int,
        default=datetime.date.today().year,
        metavar="YEAR",
        help="the year ages over 89 and two-digit years are reckoned from "
        "(default: this year, %(default)s). Pin it, e.g. "
        "to the archive's extraction year, so that re-runs across a new year "
        "give the same bytes",
    )


def add_language(parser: argparse.ArgumentParser) -> None:
    """``--language``: shared by ``run`` and ``mllp``.

    Absent unless given (``argparse.SUPPRESS``): the model's recorded language
    decides, and run.json's options stay as they were for a run without it.
    """
    parser.add_argument(
        "--language",
        choices=("en", "es"),
        default=argparse.SUPPRESS,
        help="language of the surrogates: en (US names and places, dates read "
        "month first) or es (Spanish names, places, DNI/NIE, phones, dates read "
        "day first); default: the language the model records (en for the "
        "shipped model)",
    )


def surrogate_language(args: argparse.Namespace) -> str:
    """``--language`` if given, else the language ``--model`` records."""
    given = getattr(args, "language", None)
    if given is not None:
        return given
    from deid_pipeline.tagger.crf_model import model_language

    return model_language(args.model)


def _floor(value: str) -> float:
    floor = float(value)
    if not 0.0 <= floor <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return floor


def add_review_floor(parser: argparse.ArgumentParser) -> None:
    """``--review-floor``: shared by ``run`` and ``mllp``."""
    parser.add_argument(
        "--review-floor",
        type=_floor,
        default=DEFAULT_REVIEW_FLOOR,
        metavar="C",
        help="hold a document whose confidence (the F-score its tagging is "
        "expected to have, 0-1) is below C for review: it goes to the "
        "quarantine with stage 'review' and the review page lists it, instead "
        "of the research output (default: %(default)s; 0 publishes every "
        "document; docs/tagger.md shows what a floor holds)",
    )


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """``--rules``: shared by ``run``, ``evaluate`` and ``train``."""
    parser.add_argument(
        "--rules",
        metavar="FILE",
        help="site rules (JSON): phrases always PHI, words never PHI, extra "
        "patterns; checked before anything runs, its sha256 in run.json "
        "(docs/site-rules.md)",
    )
