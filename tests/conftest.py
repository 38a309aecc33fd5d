"""Shared fixtures.

``ACCELKIT_REQUIRE_ALL=1`` (set by ``make test`` and therefore by CI) turns a
missing optional part -- chromium, prometheus, torch -- into a failure instead of a skip.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from helpers import REQUIRE_ALL, require  # noqa: F401  (re-exported for tests)


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


@pytest.fixture(scope="session")
def torch():
    """torch, or a skip (locally) / failure (under make test) where it is not installed."""
    require(importlib.util.find_spec("torch") is not None, "torch (pip install 'accelkit[probe]')")
    import torch

    return torch
