"""A run's start-up loads only what its inputs need (issue 45)."""

from __future__ import annotations

import subprocess
import sys

_IMPORTS_OF_A_RUN = """\
import sys
import deid_pipeline.pipelines.job, deid_pipeline.tagger.tagging
import deid_pipeline.transforms.composites
from deid_pipeline.hl7 import fields
print("hl7apy" in sys.modules)
pid = fields.fields_of("PID")
print("hl7apy" in sys.modules, len(fields.header_fields()) > len(fields._LISTED),
      any(f.key == "PID.3" for f in pid))
"""


def test_hl7apys_tables_load_when_a_header_is_first_read_not_at_import():
    """0.05 s of every process (a run over notes too) went into loading them."""
    out = subprocess.run([sys.executable, "-c", _IMPORTS_OF_A_RUN],
                         capture_output=True, text=True, check=True, timeout=120)
    at_import, after = out.stdout.splitlines()
    assert at_import == "False"
    # Read on first use: HL7 2.5's typed fields join the hand list.
    assert after == "True True True"
