"""Lint is enforced, not configured: ``ruff check`` over the repository is clean.

ruff.toml selected rules nobody ran; this test runs them in the suite, so CI
(``.ci/run``) fails on a lint error like on any other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_when_repository_linted_then_ruff_finds_nothing():
    ruff = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(ruff):
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
