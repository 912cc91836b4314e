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


_A_CLIENT_THEN_A_REWRITE = """\
import sys
import deid_pipeline.pipelines.job, deid_pipeline.transforms.composites
from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument
rewriter = Rewriter(mode="surrogate", key=b"k" * 32)
print("faker" in sys.modules)
text = "Seen by Dr. Quentin Mirabel, a nurse, at Ridgeview on 3/14/2011."
spans = (PhiSpan(12, 27, "DOCTOR", "rules"), PhiSpan(31, 36, "PROFESSION", "rules"),
         PhiSpan(41, 50, "HOSPITAL", "rules"))
result = rewriter.rewrite(TaggedDocument(ClinicalDocument("d", text, "text"), spans))
print("faker" in sys.modules, "Quentin" not in result.text, "nurse" not in result.text)
"""


def test_faker_loads_where_a_surrogate_is_first_drawn_not_in_a_pipelines_client():
    """A multi-process run's client builds the graph and rewrites nothing.

    Faker's import scans every provider's locales: 0.05 CPU-s of the client.
    """
    out = subprocess.run([sys.executable, "-c", _A_CLIENT_THEN_A_REWRITE],
                         capture_output=True, text=True, check=True, timeout=120)
    at_import, after = out.stdout.splitlines()
    assert at_import == "False"
    assert after == "True True True"
