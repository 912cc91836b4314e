"""Policy and mode as enumerations that keep their CLI spelling."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass

import pytest

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.policy import Mode, Policy
from deid_pipeline.rewrite import RewriteContext
from deid_pipeline.surrogates import surrogate

KEY = b"policy-test-key-0123456789abcdef"


@pytest.mark.parametrize("mode,policy", [
    ("surrogate", "safe-harbor"), ("redact", "limited-dataset"), ("tag", "safe-harbor"),
])
def test_when_rewriter_made_from_cli_strings_then_members_that_spell_them(mode, policy):
    rewriter = Rewriter(mode, KEY, policy, as_of_year=2026)
    assert rewriter.mode is Mode(mode) and rewriter.policy is Policy(policy)
    # run.json and a pickle to a Beam worker keep the CLI's spelling.
    assert json.dumps([rewriter.mode, rewriter.policy]) == json.dumps([mode, policy])
    assert pickle.loads(pickle.dumps(rewriter)).policy == policy


def test_when_context_made_from_a_string_then_policy_is_a_member():
    ctx = RewriteContext(KEY, "p1", "limited-dataset", as_of_year=2026)
    assert ctx.policy is Policy.LIMITED_DATASET


@dataclass(frozen=True)
class _NoPolicy:
    key: bytes
    person_id: str


def test_when_context_has_no_policy_then_error_not_safe_harbor_by_default():
    # A context without a policy is a caller's bug: it used to be read as
    # safe harbor, which hid a limited-dataset run written as safe harbor.
    with pytest.raises(AttributeError, match="policy"):
        surrogate("Boston", "CITY", _NoPolicy(KEY, "p1"))
