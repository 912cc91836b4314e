"""The ``deid-pipeline`` console script: signals handled before anything loads.

A SIGINT during the first second of ``run`` (importing Beam, Faker)
raised ``KeyboardInterrupt`` inside some library's import, where a bare
``except`` swallowed it: the run went on and published. So the script
installs the run's handlers before importing anything heavy; the handler
records the signal, and the run refuses to publish once one was recorded,
whoever caught the exception it raised. This module imports only
``deid_pipeline.runtime`` (interrupts, process) at load time: numpy, which
it asks for one BLAS thread, is not loaded yet.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from deid_pipeline.pipelines import forked_workers
from deid_pipeline.runtime.interrupts import RunInterrupted, handling_signals
from deid_pipeline.runtime.process import collections_deferred, one_blas_thread


def main(argv: list[str] | None = None) -> int:
    """Run the command line; ``run`` under the interrupt handlers from the start."""
    argv = list(sys.argv[1:] if argv is None else argv)
    one_blas_thread()  # before numpy loads, here and in the workers started
    command = next((a for a in argv if not a.startswith("-")), None)
    if command != "run":
        from deid_pipeline.pipelines.cli import main as cli_main

        return cli_main(argv)
    # Collections wait until the pipeline runs (runtime/process.py).
    with handling_signals(), collections_deferred(), _zygote_stopped():
        try:
            from deid_pipeline.pipelines.cli import main as cli_main

            return cli_main(argv)
        except RunInterrupted as exc:
            # Before the run itself started (``run`` reports its own).
            print(f"deid-pipeline: interrupted ({exc}) before the run started; "
                  "nothing written", file=sys.stderr)
            return exc.exit_code


@contextlib.contextmanager
def _zygote_stopped() -> Iterator[None]:
    try:
        yield
    finally:
        forked_workers.stop()


if __name__ == "__main__":
    sys.exit(main())
