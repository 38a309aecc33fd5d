"""Small helpers shared by the tests."""

from __future__ import annotations

import os

import pytest

REQUIRE_ALL = os.environ.get("ACCELKIT_REQUIRE_ALL") == "1"


def require(condition, what):
    """Skip (locally) or fail (under make test / CI) when a required part is missing."""
    if condition:
        return
    if REQUIRE_ALL:
        pytest.fail(f"{what} is missing, and make test requires it (ACCELKIT_REQUIRE_ALL=1)")
    pytest.skip(f"{what} is missing")




#: a two-layer grouped-query decoder small enough for a CPU probe run in well under a second
TINY_DECODER = {"name": "tiny", "params": 2e6, "n_layers": 2, "d_model": 128, "n_heads": 4, "n_kv_heads": 2,
                "ffn_dim": 256, "vocab": 1000, "kind": "decoder"}
