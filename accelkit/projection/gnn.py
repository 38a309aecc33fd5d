"""Graph neural networks (R-GAT class) on a sampled neighbourhood: seeds classified per second.

The one home of a GNN's serving figures: ``accelkit project gnn`` and ``accelkit validate``
call :func:`gnn`. The source articles' rule of thumb -- "CNNs want bandwidth, transformers
memory, GNNs interconnect" -- is what this model makes a number of.

Serving a seed node (MLPerf Inference's R-GAT on IGBH-full, node classification) samples its
neighbourhood hop by hop (15 neighbours of the seed, 10 of each, 5 of each of those, per
relation of the heterogeneous graph), **gathers the feature row of every sampled node** and
runs the GAT layers over the small subgraph. The feature table (547 M rows × 1,024 elements:
560 GB at FP8) is far larger than one device, so NVIDIA's harness shards it over the node's
GPUs (a WholeGraph table, ``wg_sharding_partition = "node"``) and every gather of a row held
by another GPU crosses the scale-up link. Per device, per seed::

    rows     = gnn_rows_per_fanout_bound × (1 + 15 + 15·10 + 15·10·5)     (fitted, see below)
    bytes    = rows × feature_dim × feature bytes
    link     = bytes × (n − 1)/n / per-direction link rate     (NVLink / xGMI through a switch)
             = max(bytes/n / bridge rate, bytes·(n − 2)/n / PCIe rate)   (bridged pairs, n > 2)
             = bytes × (n − 1)/n / PCIe rate                   (PCIe only)
    memory   = bytes / achievable memory bandwidth             (the rows this device serves)
    compute  = rows × 2 · feature_dim · hidden / (achievable matmul rate × gemm_fraction)
    time     = max(link, host, memory, compute)                 (``infer_overlap``: gathers run
                                                                 on their own stream)

and seeds per second = n / time over ``n`` devices. Where the table and the graph do not fit
the devices' memory (less ``serving_reserve_fraction``), the rows that do not fit stay in host
memory and cross PCIe at the same time (``host``: the rows off the devices / the PCIe rate;
``layout = "host"``); one device holding it all gathers locally.

The link rates are the datasheets' per-direction figures (``accelkit.comm.link_bandwidth``), so
an 8-GPU NVSwitch box and 8 bridged PCIe boards differ by what their links carry, not by a
fitted factor. The one fitted constant, ``gnn_rows_per_fanout_bound``, is the rows a seed
gathers per row of the single-relation fan-out bound (916 for 15-10-5); it folds in what the
published code does not state: how many of the 11 relations a hop fans out over, the sampler's
de-duplication, and the efficiency of 1 KB random reads against the link's datasheet rate.
``accelkit validate --fit`` sets it on the fit sources' MLPerf results and NVIDIA's own held-out
8 × H200 result checks it; the H100 NVL box (bridged pairs over PCIe, measured 6.3× below an
8 × H200 box) checks the links: with the constant fitted on the H200 results alone it comes out
at 1.02× of its measurement.

Not modelled: the sampling kernels' own reads of the graph structure (8-byte indices per
sampled edge, under 1 % of the 1 KB feature rows), per-batch launch costs, training (MLPerf
Training's GNN runs are collected in ``data/validation/excluded.csv``).

References
----------
MLCommons, MLPerf Inference R-GAT reference (``graph/R-GAT``: ``backend_dgl.py``,
``dgl_utilities/pyg_sampler.py``, ``feature_fetching.py``); NVIDIA's MLPerf Inference v5.1
R-GAT harness, ``closed/NVIDIA/code/rgat/pytorch/config.py`` (``fp8_embedding``,
``wg_sharding_*``, ``sampling_device``, ``infer_overlap``); D. Busbridge et al., "Relational
Graph Attention Networks", arXiv:1904.05811; A. Khatua et al., "IGB: Addressing the gaps in
labeling, features, heterogeneity, and size of public graph datasets for deep learning
research", KDD 2023, arXiv:2302.13522. ``data/gnn_models.csv`` quotes each figure.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_choice, check_integer
from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table
from .ceilings import ceilings_for, one_or_frame
from .constants import constants
from .precisions import KV_BYTES, resolve_precision

__all__ = ["gnn", "load_gnn_models", "gnn_row", "fanout_bound", "predict_gnn_case", "BOUNDS", "FEATURE_BYTES", "GRAPH_INDEX_BYTES"]

#: what can bound a seed: the peers' rows over the link, the host's rows over PCIe, the local reads, the matmuls
BOUNDS = ("link", "host", "memory", "compute")

#: storage bytes per feature element
FEATURE_BYTES = dict(KV_BYTES)

#: bytes per stored edge of the sampled graph's structure: a 64-bit neighbour index ([accelkit: assumed])
GRAPH_INDEX_BYTES = 8.0

GNN_SCHEMA = Schema("the graph-network models CSV", (
    Column("name", required=True, nonempty=True), Column("dataset", required=True, nonempty=True),
    Column("graph_nodes", "number", required=True, nonempty=True, low=0),
    Column("graph_edges", "number", required=True, nonempty=True, low=0),
    Column("feature_dim", "integer", required=True, nonempty=True, low=0),
    Column("feature_dtype_published", required=True),
    Column("layers", "integer", required=True, nonempty=True, low=0),
    Column("hidden", "integer", required=True, nonempty=True, low=0),
    Column("heads", "integer", required=True, nonempty=True, low=0),
    Column("classes", "integer", required=True, low=0),
    Column("fanouts", required=True, nonempty=True), Column("relations", "integer", required=True, low=0),
    Column("source_url", required=True, nonempty=True), Column("source_url_2", required=True),
    Column("harness_source_url", required=True), Column("notes", required=True),
), label="name", unique="name")


@lru_cache(maxsize=2)
def _load(path):
    return read_table(path, GNN_SCHEMA, Path(path).name, CatalogError)


def load_gnn_models(path=None):
    """The graph-network presets (``data/gnn_models.csv``), a copy."""
    return _load(data_path("gnn_models.csv") if path is None else path).copy()


def gnn_row(model):
    """One preset's row as a dict; an unknown name raises naming the presets and close matches."""
    table = _load(data_path("gnn_models.csv"))
    name = check_choice("model", model, table["name"].tolist())
    return table.set_index("name").loc[name].to_dict() | {"name": name}


def fanout_bound(fanouts):
    """Rows a seed's neighbourhood holds when each hop samples its full fan-out over one
    relation and no node repeats: ``1 + f1 + f1·f2 + ...`` (916 for 15, 10, 5).

    ``fanouts``: the hops from the seed outwards, a list or a ``;``-separated text."""
    f = [float(x) for x in (fanouts.split(";") if isinstance(fanouts, str) else fanouts)]
    return float(1.0 + np.cumprod(f).sum())


def _link_seconds(ceil, n, remote_bytes):
    """Seconds per seed the remote rows take over the links, per device (see the module notes)."""
    link = ceil["link_bw"].to_numpy(dtype=float)
    pcie = ceil["pcie_bw"].to_numpy(dtype=float)
    pcie_only = ceil["link_kind"].astype(str).str.startswith("PCIe").to_numpy()
    pairs = ceil["link_max_devices"].to_numpy(dtype=float) < n
    with np.errstate(divide="ignore", invalid="ignore"):
        switched = remote_bytes / link
        # bridged pairs: the partner's share over the bridge, the rest over PCIe, both at once
        bridged = np.maximum(remote_bytes / (n - 1.0) / link, remote_bytes * (n - 2.0) / (n - 1.0) / pcie)
        over_pcie = remote_bytes / np.where(np.isfinite(pcie), pcie, link)
    return np.where(n <= 1, 0.0, np.where(pcie_only, over_pcie, np.where(pairs, bridged, switched)))


def gnn(device=None, model="R-GAT (IGBH-full)", precision="bf16", feature_precision="fp8", n_devices=8,
        catalog=None, measurements=None, **overrides):
    """Projected seeds classified per second of a graph network over ``n_devices``.

    Parameters
    ----------
    device : str, list of str or None
        One device (a dict), several or ``None`` (every device of ``catalog``; a DataFrame).
    model : str
        A preset of ``data/gnn_models.csv`` (``R-GAT (IGBH-full)``).
    precision : str
        The GAT layers' precision (``bf16``; NVIDIA's harness runs ``fp16``, the same peak on its GPUs).
    feature_precision : str
        Storage of the node features (``fp8`` as NVIDIA's harness; ``fp16``, ``fp32``, ...).
    n_devices : int
        Devices of one node sharing the feature table (default 8, MLPerf's systems).

    Returns
    -------
    dict or pandas.DataFrame
        ``samples_per_s`` (seeds per second over all ``n_devices``), ``samples_per_s_per_device``,
        each with ``_low``/``_high``; ``link_s``, ``host_s``, ``memory_s``, ``compute_s`` (seconds
        per seed per device: the parts), ``bound`` (one of :data:`BOUNDS`), ``rows_per_seed``,
        ``feature_bytes_per_seed``, ``store_bytes`` (features + graph), ``layout``
        (``one device`` / ``sharded`` / ``host``), ``link`` (what carries the remote rows) and
        ``link_pairs_only`` (a bridge of two: the rest cross PCIe),
        ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    row = gnn_row(model)
    mode, _, mm_precision, _ = resolve_precision(precision)
    feat_name = check_choice("feature_precision", feature_precision, list(FEATURE_BYTES))
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    n = float(n_devices)
    rows = k["gnn_rows_per_fanout_bound"] * fanout_bound(row["fanouts"])
    per_seed = rows * float(row["feature_dim"]) * FEATURE_BYTES[feat_name]
    store = (float(row["graph_nodes"]) * float(row["feature_dim"]) * FEATURE_BYTES[feat_name]
             + float(row["graph_edges"]) * GRAPH_INDEX_BYTES)
    usable = ceil["memory_bytes"].to_numpy(dtype=float) * (1.0 - k["serving_reserve_fraction"])
    on_devices = np.clip(n * usable / store, 0.0, 1.0)  # share of the rows the devices hold
    pcie = ceil["pcie_bw"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        link_s = _link_seconds(ceil, n, per_seed * on_devices * (n - 1.0) / n)
        host_s = np.where(on_devices < 1.0, per_seed * (1.0 - on_devices) / pcie, 0.0)
    flops = rows * 2.0 * float(row["feature_dim"]) * float(row["hidden"])
    out = pd.DataFrame({"name": ceil["name"].to_numpy()})
    for level, rate in (("", ""), ("_low", "_low"), ("_high", "_high")):
        with np.errstate(invalid="ignore", divide="ignore"):
            memory_s = per_seed / ceil[f"memory_bw{rate}"].to_numpy(dtype=float)
            compute_s = flops / (ceil[f"matmul_{mm_precision}{rate}"].to_numpy(dtype=float) * k["gemm_fraction"])
        # the peers' rows over the link and the host's over PCIe travel at once, beside the local reads
        parts = np.vstack([link_s, host_s, memory_s, compute_s])
        out[f"samples_per_s_per_device{level}"] = 1.0 / parts.max(axis=0)
        if level == "":
            out["link_s"], out["host_s"], out["memory_s"], out["compute_s"] = parts
            out["bound"] = np.array(BOUNDS)[np.argmax(np.nan_to_num(parts, nan=-1.0), axis=0)]
    # widen by the engine's own error on published graph-network measurements
    e = k["model_error_gnn"]
    out["samples_per_s_per_device_low"] = out["samples_per_s_per_device_low"] / (1.0 + e)
    out["samples_per_s_per_device_high"] = out["samples_per_s_per_device_high"] * (1.0 + e)
    for level in ("", "_low", "_high"):
        out[f"samples_per_s{level}"] = out[f"samples_per_s_per_device{level}"] * n
    out["rows_per_seed"] = rows
    out["feature_bytes_per_seed"] = per_seed
    out["store_bytes"] = store
    out["share_on_devices"] = on_devices
    out["layout"] = np.where(on_devices < 1.0, "host", np.where(n > 1, "sharded", "one device"))
    kind = ceil["link_kind"].astype(str).to_numpy()
    pairs = ceil["link_max_devices"].to_numpy(dtype=float) < n
    out["link"] = np.where(n <= 1, "", kind)
    out["link_pairs_only"] = (n > 1) & pairs  # a bridge joins pairs: the other devices' rows cross PCIe
    out["n_devices"] = int(n_devices)
    out["precision"], out["feature_precision"], out["model"] = mode, feat_name, row["name"]
    out["matmul_source"] = ceil[f"matmul_{mm_precision}_source"].to_numpy()
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    why = np.full(len(out), "", dtype=object)
    no_peak = ~np.isfinite(ceil[f"matmul_{mm_precision}"].to_numpy(dtype=float))
    why[no_peak] = f"no published dense {mm_precision} peak"
    no_mem = (why == "") & ~np.isfinite(ceil["memory_bw"].to_numpy(dtype=float) * usable)
    why[no_mem] = "no published memory size or bandwidth"
    no_link = (why == "") & ~np.isfinite(link_s + host_s)
    gb = units.GIGA
    why[no_link] = (f"{store / gb:,.0f} GB of {feat_name} features and graph: no published link or PCIe rate "
                    "to gather the rows held elsewhere")
    out["feasible"] = why == ""
    out["why"] = why
    for col in [c for c in out.columns if c.startswith("samples_per_s")]:
        out[col] = out[col].where(out["feasible"], np.nan)
    return one_or_frame(out, single)


def predict_gnn_case(case, **constant_overrides):
    """A ``gnn_offline`` validation case's projection ``(mid, low, high)``: seeds per second over
    the case's ``n_devices`` (MLPerf Inference R-GAT Offline's "Samples per second")."""
    if case["metric"] != "samples_per_s":
        raise ValueError(f"metric {case['metric']!r} is not a graph-network metric (samples_per_s)")
    n = case["n_devices"]
    r = gnn(case["device"], case["model"], precision=case["precision"] or "bf16",
            n_devices=int(n) if n == n else 1, **constant_overrides)
    return tuple(r[f"samples_per_s{level}"] for level in ("", "_low", "_high"))
