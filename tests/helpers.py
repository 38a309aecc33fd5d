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


def english_leftovers(text, allowed=()):
    """Runs of four or more English words in ``text`` (a page that should read in Chinese).

    Names people keep in English (devices, models, vendors, frameworks, units) are removed
    first: the catalogue's and the model presets' names, and ``allowed``. What is left and
    still reads as an English phrase is a string nobody marked for translation.
    """
    import re

    from accelkit.catalog import load_catalog
    from accelkit.models import load_models

    names = set(allowed)
    catalogue = load_catalog()
    names.update(catalogue["name"].astype(str))
    names.update(str(v) for v in catalogue["vendor"].dropna())
    names.update(str(m) for m in load_models()["name"])
    # the validation's case ids are identifiers (chapter 10 names its worst cases by them), not prose
    from accelkit.projection.validation import load_measured

    names.update(load_measured()["case_id"].astype(str))
    for name in sorted(names, key=len, reverse=True):
        if len(name) > 2:
            text = text.replace(name, " ")
    text = re.sub(r"https?://\S+", " ", text)
    run = re.compile(r"\b[A-Za-z][A-Za-z'’]*(?:[ ,-]+[A-Za-z][A-Za-z'’]*){3,}")
    return [m.group(0) for m in run.finditer(text)]
