"""The projection engine's few model constants, each with how it was set.

``data/projection_constants.csv`` lists every constant the engine uses besides the
catalogue and the efficiencies: serving-engine defaults (taken from the engines'
documentation) and a handful of overheads that no datasheet gives (fitted by
``accelkit validate --fit`` on the *fit* half of ``data/validation/measured.csv``
and reported on the other half). Nothing else in the engine is a tuned number.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["constants", "constants_table", "FITTED"]

#: constants that ``accelkit validate --fit`` may change
FITTED = ("decode_step_overhead_s", "decode_layer_overhead_s", "prefill_overhead_s",
          "train_elementwise_bytes_per_token_layer", "train_step_overhead_s", "dp_overlap", "roofline_overlap",
          "gemm_fraction", "attention_fraction", "serving_allreduce_latency_s", "serving_allreduce_bw_fraction",
          "vision_kernel_cycles_fused",
          "vision_kernel_s_eager", "vision_gemm_fraction_fused", "vision_gemm_fraction_eager", "gnn_rows_per_fanout_bound",
          "vision_l2_usable_fraction")


CONSTANTS_SCHEMA = Schema("the projection constants CSV", (
    Column("name", required=True, nonempty=True), Column("value", "number", required=True, nonempty=True),
    Column("unit", required=True), Column("meaning", required=True), Column("how_set", required=True),
    Column("source_url", required=True),
), label="name", unique="name")


@lru_cache(maxsize=4)
def _load(path):
    return read_table(path, CONSTANTS_SCHEMA, Path(path).name, CatalogError)


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
