"""Model presets (``data/models.csv``): sizes and shapes of well-known models.

Every row carries ``source_url`` (paper or model card). Read through
:func:`load_models`; look one up with :func:`find_model`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from .catalog import CatalogError, _key, data_path
from .tables import Column, Schema, read_table
from ._validate import suggest

__all__ = ["load_models", "find_model", "model_kind", "model_names", "kv_elements_per_token"]

_INT_COLUMNS = [
    "year", "n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size",
    "max_seq_len", "n_experts", "n_active_experts",
]
_FLOAT_COLUMNS = ["params", "active_params", "kv_elements_per_token_layer", "forward_flop_per_sample"]


MODELS_SCHEMA = Schema("the models CSV", (
    Column("name", required=True, nonempty=True), Column("kind", required=True),
    *(Column(col, "number", expected="a number", low=0, low_inclusive=True, required=True)
      for col in _INT_COLUMNS + _FLOAT_COLUMNS),
    Column("source_url", required=True, nonempty=True, empty_message="every model needs a source (paper or model card)"),
), label="name", unique="name")


@lru_cache(maxsize=1)
def _load():
    frame = read_table(data_path("models.csv"), MODELS_SCHEMA, "models.csv", CatalogError)
    frame["active_params"] = frame["active_params"].fillna(frame["params"])
    # head_dim is d_model / n_heads unless the model card says otherwise
    frame["head_dim"] = frame["head_dim"].fillna(frame["d_model"] / frame["n_heads"])
    frame["n_kv_heads"] = frame["n_kv_heads"].fillna(frame["n_heads"])
    return frame


@lru_cache(maxsize=1)
def _key_index():
    frame = _load()
    index = {}
    for idx, name, aliases in zip(frame.index, frame["name"], frame["aliases"]):
        for key in [_key(name)] + [_key(a) for a in str(aliases).split("|") if a.strip()]:
            index.setdefault(key, idx)
    return index


def load_models():
    """Model presets as a DataFrame, one row per model (a copy; safe to modify)."""
    return _load().copy()


def model_names():
    """Names of the model presets."""
    return _load()["name"].tolist()


def find_model(name):
    """One model preset by name or alias (case- and punctuation-insensitive).

    Raises
    ------
    CatalogError
        For an unknown name, listing the closest presets.
    """
    frame = _load()
    if not isinstance(name, str) or not name.strip():
        raise CatalogError(f"model name must be a non-empty text, got {name!r}")
    idx = _key_index().get(_key(name))
    if idx is not None:
        return frame.loc[idx]
    close = suggest(name, frame["name"].tolist(), n=3)
    hint = f"; closest: {', '.join(close)}" if close else f"; presets: {', '.join(frame['name'])}"
    raise CatalogError(f"unknown model {name!r}{hint}")


@lru_cache(maxsize=256)
def model_kind(name):
    """A preset's ``kind`` (``decoder``, ``moe-decoder``, ``encoder``, ``cnn``, ``vit``, ``recommender``) by
    name or alias: :func:`find_model`'s, kept per name (a ranking asks for it a hundred times)."""
    return str(find_model(name)["kind"])


def kv_elements_per_token(model):
    """KV-cache elements per token per layer for a preset row.

    ``2 · n_kv_heads · head_dim`` for multi-head / grouped-query attention, or the
    preset's ``kv_elements_per_token_layer`` where the architecture differs (e.g.
    DeepSeek-V3's multi-head latent attention caches a compressed vector).
    NaN for models without a KV cache (encoders, CNNs).
    """
    override = model.get("kv_elements_per_token_layer", np.nan)
    if pd.notna(override):
        return float(override)
    if model.get("kind") not in ("decoder", "moe-decoder"):
        return float("nan")
    return 2.0 * float(model["n_kv_heads"]) * float(model["head_dim"])
