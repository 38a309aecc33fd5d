"""Shared fixtures.

``ACCELKIT_REQUIRE_ALL=1`` (set by ``make test`` and therefore by CI) turns a
missing optional part -- chromium, torch -- into a failure instead of a skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_ALL = os.environ.get("ACCELKIT_REQUIRE_ALL") == "1"


def require(condition, what):
    """Skip (locally) or fail (under make test / CI) when a required part is missing."""
    if condition:
        return
    if REQUIRE_ALL:
        pytest.fail(f"{what} is missing, and make test requires it (ACCELKIT_REQUIRE_ALL=1)")
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def catalog():
    import accelkit

    return accelkit.load_catalog()


@pytest.fixture(scope="session")
def python():
    return sys.executable
