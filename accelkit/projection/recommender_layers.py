"""The layers of a DLRM-class recommender: embedding lookups, feature interaction, MLPs.

A recommender scores one (user, item) pair -- a *sample* -- from dense features
(counts, ages) and sparse ones (ids), Naumov et al., "Deep Learning Recommendation Model
for Personalization and Recommendation Systems", arXiv:1906.00091 (2019), §2:

* each sparse feature looks up ``h`` rows (its multi-hot size) of its embedding table
  of ``dim`` elements and pools them (a sum): a gather of ``h · dim`` elements from a
  table of millions of rows, bound by memory bandwidth, with no reuse across samples;
* the dense features pass a bottom MLP to ``dim`` elements;
* the ``n_sparse + 1`` vectors are concatenated (``W = (n_sparse + 1) · dim``) and
  crossed: DLRM-v2 uses DCN-v2's low-rank cross layers ``x_{l+1} = x_0 ⊙ (U_l (V_l x_l)
  + b_l) + x_l``, ``V_l: W → r``, ``U_l: r → W`` (Wang et al., "DCN V2", WWW 2021,
  §3.1 and §3.3);
* a top MLP maps ``W`` to the click probability.

:func:`recommender_layers` lists them in :mod:`~accelkit.projection.vision_layers`'s
columns (FLOP, input and output elements, weights, element-wise layers after each, per
sample), so :mod:`accelkit.projection.vision` prices a recommender pass layer by layer on
a device and stack as it does a CNN's. The embedding gather is a layer with no FLOP and
no weights read per pass: its input is the ``Σh · dim`` gathered elements of each sample
(the tables themselves never stream). The structure of each preset is in
``data/recommender_models.csv`` (MLPerf's DLRM-v2 from its reference implementation).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["load_recommender_models", "recommender_structure", "recommender_layers", "embedding_rows",
           "lookups_per_sample", "dense_params", "forward_flops", "table_elements"]

_COLUMNS = ["layer", "flops", "act_in", "act_out", "weights", "elementwise"]

STRUCTURE_SCHEMA = Schema("the recommender models CSV", (
    Column("name", required=True, nonempty=True),
    Column("dense_features", "number", expected="a whole number of dense input features", low=1, required=True),
    Column("embedding_dim", "number", expected="elements per embedding row", low=1, required=True),
    Column("table_rows", required=True, nonempty=True,
           empty_message="list each embedding table's rows, separated by ';'"),
    Column("lookups_per_sample", required=True, nonempty=True,
           empty_message="list each sparse feature's rows looked up per sample (multi-hot size), separated by ';'"),
    Column("bottom_mlp", required=True, nonempty=True), Column("top_mlp", required=True, nonempty=True),
    Column("interaction", required=True, nonempty=True, choices=("dcn", "dot")),
    Column("dcn_layers", "number", expected="a whole number of cross layers", low=0, low_inclusive=True),
    Column("dcn_low_rank", "number", expected="the cross layers' rank", low=1),
    Column("source_url", required=True, nonempty=True, empty_message="every structure needs a source"),
), label="name", unique="name")


def _numbers(text, field, name):
    try:
        values = [int(v) for v in str(text).split(";") if v.strip()]
    except ValueError:
        raise CatalogError(f"recommender_models.csv, {name}: {field} must be whole numbers separated by ';', "
                           f"got {text!r}") from None
    if not values or min(values) < 1:
        raise CatalogError(f"recommender_models.csv, {name}: {field} must list whole numbers >= 1, got {text!r}")
    return values


@lru_cache(maxsize=2)
def _load(path):
    frame = read_table(path, STRUCTURE_SCHEMA, Path(path).name, CatalogError)
    for name, rows, lookups in zip(frame["name"], frame["table_rows"], frame["lookups_per_sample"]):
        if len(_numbers(rows, "table_rows", name)) != len(_numbers(lookups, "lookups_per_sample", name)):
            raise CatalogError(f"recommender_models.csv, {name}: table_rows and lookups_per_sample must name the same "
                               f"number of sparse features")
    return frame


def load_recommender_models(path=None):
    """The recommender structures (``data/recommender_models.csv``), a copy."""
    return _load(data_path("recommender_models.csv") if path is None else path).copy()


def recommender_structure(name, path=None):
    """One preset's structure as a dict with lists (``table_rows``, ``lookups_per_sample``,
    ``bottom_mlp``, ``top_mlp``); ``None`` where the preset has none."""
    table = _load(data_path("recommender_models.csv") if path is None else path)
    hit = table[table["name"] == name]
    if hit.empty:
        return None
    row = hit.iloc[0].to_dict()
    for field in ("table_rows", "lookups_per_sample", "bottom_mlp", "top_mlp"):
        row[field] = _numbers(row[field], field, name)
    return row


def embedding_rows(structure):
    """Rows over all embedding tables."""
    return float(sum(structure["table_rows"]))


def lookups_per_sample(structure):
    """Embedding rows gathered per sample (the multi-hot sizes' sum)."""
    return float(sum(structure["lookups_per_sample"]))


def _mlp(prefix, widths, width_in):
    rows, w_in = [], float(width_in)
    for i, w_out in enumerate(widths):
        last = i == len(widths) - 1
        rows.append({"layer": f"{prefix}{i}", "flops": 2.0 * w_in * w_out, "act_in": w_in, "act_out": float(w_out),
                     "weights": w_in * w_out + w_out, "elementwise": 0 if last else 1})  # ReLU between layers
        w_in = float(w_out)
    return rows


def recommender_layers(structure):
    """One row per layer of a sample's forward pass (per sample; columns as
    :func:`~accelkit.projection.vision_layers.layer_table`)."""
    s = structure
    dim, n_sparse = float(s["embedding_dim"]), len(s["table_rows"])
    rows = [{"layer": "embedding_gather", "flops": 0.0, "act_in": lookups_per_sample(s) * dim,
             "act_out": n_sparse * dim, "weights": 0.0, "elementwise": 0}]
    rows += _mlp("bottom", s["bottom_mlp"], s["dense_features"])
    width = (n_sparse + 1) * dim if s["bottom_mlp"][-1] == dim else n_sparse * dim + s["bottom_mlp"][-1]
    if s["interaction"] == "dcn":
        r = float(s["dcn_low_rank"])
        for layer in range(int(s["dcn_layers"])):
            rows.append({"layer": f"cross{layer}_v", "flops": 2.0 * width * r, "act_in": width, "act_out": r,
                         "weights": width * r, "elementwise": 0})
            rows.append({"layer": f"cross{layer}_u", "flops": 2.0 * r * width, "act_in": r + width,  # + x0
                         "act_out": width, "weights": r * width + width, "elementwise": 2})  # x0 ⊙ ., + x_l
    else:
        # DLRM's pairwise dot products of the n + 1 vectors (Naumov et al. 2019, §2.1.4)
        pairs = (n_sparse + 1) * n_sparse / 2.0
        rows.append({"layer": "dot_interaction", "flops": 2.0 * pairs * dim, "act_in": (n_sparse + 1) * dim,
                     "act_out": pairs + dim, "weights": 0.0, "elementwise": 0})
        width = pairs + dim
    rows += _mlp("top", s["top_mlp"], width)
    return pd.DataFrame(rows, columns=_COLUMNS)


def dense_params(structure):
    """Parameters outside the embedding tables (the MLPs and cross layers)."""
    return float(recommender_layers(structure)["weights"].sum())


def forward_flops(structure):
    """FLOP of one sample's forward pass (2 × multiply-adds of its GEMMs)."""
    return float(recommender_layers(structure)["flops"].sum())


def table_elements(structure):
    """Elements over all embedding tables (rows × dim)."""
    return embedding_rows(structure) * float(structure["embedding_dim"])

