"""The projection engine's few model constants, each with how it was set.

``data/projection_constants.csv`` lists every constant the engine uses besides the
catalogue and the efficiencies: serving-engine defaults (taken from the engines'
documentation) and a handful of overheads that no datasheet gives (fitted by
``accelkit validate --fit`` on the *fit* half of ``data/validation/measured.csv``
and reported on the other half). Nothing else in the engine is a tuned number.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ..catalog import CatalogError, data_path

__all__ = ["constants", "constants_table", "FITTED"]

#: constants that ``accelkit validate --fit`` may change
FITTED = ("decode_step_overhead_s", "decode_layer_overhead_s", "prefill_overhead_s",
          "train_elementwise_bytes_per_token_layer", "train_step_overhead_s", "dp_overlap", "roofline_overlap",
          "gemm_fraction", "attention_fraction", "serving_allreduce_latency_s")


@lru_cache(maxsize=4)
def _load(path):
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    need = ["name", "value", "unit", "meaning", "how_set", "source_url"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise CatalogError(f"{path.name}: missing column(s) {', '.join(missing)}")
    values = pd.to_numeric(frame["value"], errors="coerce")
    bad = frame.index[values.isna()]
    if len(bad):
        i = bad[0]
        raise CatalogError(f"{path.name} line {i + 2}, column value: expected a number, got {frame.at[i, 'value']!r}")
    frame["value"] = values
    return frame


def constants_table(path=None):
    """The constants as a DataFrame (name, value, unit, meaning, how_set, source_url)."""
    return _load(data_path("projection_constants.csv") if path is None else path).copy()


def constants(path=None, **overrides):
    """The constants as a dict ``name -> value`` (overrides win; unknown names raise)."""
    table = _load(data_path("projection_constants.csv") if path is None else path)
    values = dict(zip(table["name"], table["value"].astype(float)))
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise ValueError(f"unknown projection constant {unknown[0]!r}; known: {', '.join(values)}")
    values.update({k: float(v) for k, v in overrides.items()})
    return values
