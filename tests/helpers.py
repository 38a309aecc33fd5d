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


