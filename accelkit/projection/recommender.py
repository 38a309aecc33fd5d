"""Recommenders (DLRM-class) served: samples scored per second, per device.

The one home of a recommender's serving figures: the decision
(:func:`accelkit.projection.for_scenario.project_scenario`), ``accelkit project
recommender`` and ``accelkit validate`` call :func:`recommender`.

A pass scores ``batch_size`` samples; its layers (:mod:`accelkit.projection.
recommender_layers`) are priced by :func:`accelkit.projection.vision.vision` -- the same
layer-by-layer roofline as a CNN's, on the same stack (TensorRT on NVIDIA parts):

* the **embedding gather** reads ``Σh · dim`` elements per sample at the embedding
  precision, at the achievable memory bandwidth (no FLOP, no reuse: the tables are far
  larger than any cache);
* the **MLPs and cross layers** run as GEMMs at the achievable matmul rate × the
  stack's GEMM share;
* the **capacity**: every device holds all tables (``replicated``, MLPerf's layout for
  DLRM-v2 on one node) when tables + MLP weights fit its memory less the runtime's
  share (``serving_reserve_fraction``); otherwise the tables are split over
  ``n_devices`` (``sharded``, table-wise model parallel, Naumov et al. 2019 §3) and each
  sample's pooled vectors cross the link in an all-to-all, ``(n − 1)/n`` of
  ``n_sparse · dim`` elements per sample per device at the link's achievable collective
  rate, plus a start-up of ``2 · α · log2 n`` (as
  :mod:`~accelkit.projection.recommender_training`), added to the pass (not overlapped);
  where they do not fit even then, the rows that do not fit stay in **host** memory and
  each lookup of one crosses PCIe (the datasheet's per-direction rate), rows looked up
  uniformly -- a lower bound on the device's hit rate, since a runtime keeps the most used
  rows on the device (NVIDIA's MLPerf DLRM-v2 engine on an L4 keeps 30 % of them there,
  ``embedding_weights_on_gpu_part``); a device with no published host link is not
  feasible and says by how much the tables miss.

The range widens the efficiencies' spread by ``model_error_recommender``, calibrated on
MLPerf Inference DLRM-v2 results of the fit sources (``accelkit validate``).

References
----------
M. Naumov et al., "Deep Learning Recommendation Model for Personalization and
Recommendation Systems", arXiv:1906.00091 (2019). R. Wang et al., "DCN V2: Improved Deep
& Cross Network", WWW 2021, arXiv:2008.13535. MLCommons, MLPerf Inference DLRM-v2
reference (``recommendation/dlrm_v2``), whose structure ``data/recommender_models.csv`` holds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_choice, check_integer
from .ceilings import ceilings_for, one_or_frame
from .constants import constants
from .precisions import KV_BYTES, resolve_precision
from .recommender_layers import dense_params, recommender_layers, recommender_structure, table_elements
from .vision import vision
from .vision_layers import ACT_BYTES

__all__ = ["recommender", "RECOMMENDER_BATCH", "EMBEDDING_BYTES", "recommender_row"]

#: user-item pairs per pass when none is given: NVIDIA's per-GPU batch for DLRM-v2 under MLPerf's
#: Server scenario (a 60 ms p99 latency bound) on 8 × H100 SXM and 8 × H200 (``gpu_batch_size 51200``,
#: mlcommons/inference_results_v4.1, closed/NVIDIA/configs/dlrm-v2/Server/__init__.py, commit a2f5d66);
#: its Offline engines run 600,000 per pass on those GPUs
RECOMMENDER_BATCH = 51200

#: storage bytes per embedding element
EMBEDDING_BYTES = dict(KV_BYTES)


def recommender_row(model):
    """``(model row, structure)`` of a recommender preset; a clear error for any other model."""
    from ..models import find_model, load_models

    row = find_model(model) if isinstance(model, str) else model
    structure = recommender_structure(str(row.get("name", "")))
    if structure is None:
        names = load_models().query("kind == 'recommender'")["name"].tolist()
        raise ValueError(f"model: {row.get('name', model)!r} is not a recommender preset with a structure in "
                         f"data/recommender_models.csv (presets: {', '.join(names) or 'none'})")
    return row, structure


def recommender(device=None, model="DLRM-v2", precision="int8", batch_size=RECOMMENDER_BATCH, n_devices=1,
                embedding_precision=None, table_share_on_device=None, catalog=None, measurements=None,
                utilization=None, stack=None, **overrides):
    """Projected samples per second of a recommender, per device, and the time of one pass.

    Parameters
    ----------
    device : str, list of str or None
        One device (a dict), several or ``None`` (every device of ``catalog``; a DataFrame).
    model : str
        A recommender preset (``kind == "recommender"``: ``DLRM-v2``).
    precision : str
        The MLPs' precision (``int8``, ``fp16``, ...).
    batch_size : int
        Samples per pass (:data:`RECOMMENDER_BATCH` by default).
    n_devices : int
        Devices available: the tables are replicated on each when they fit one, else
        sharded over all ``n_devices``.
    embedding_precision : str, optional
        Storage of the tables (``fp32``, ``fp16``, ``bf16``, ``int8``, ``fp8``); default the
        MLPs' bytes (``fp16`` under ``fp16``, ``int8`` under ``int8``).
    table_share_on_device : float, optional
        Where the tables do not fit a device: the share (0-1] of their rows it holds, the
        rest served from host memory (a runtime's setting, e.g. NVIDIA's
        ``embedding_weights_on_gpu_part``); default as much as fits.
    utilization, stack
        As :func:`~accelkit.projection.vision.vision`.

    Returns
    -------
    dict or pandas.DataFrame
        ``samples_per_s`` (per device), ``latency_s`` (one pass), ``batch_ms`` (the same in
        ms), each with ``_low``/``_high``; ``gather_s`` (the pass's embedding gather),
        ``exchange_s`` (the all-to-all when sharded, the host rows over PCIe when ``host``; 0 when
        replicated), ``table_bytes``, ``memory_needed_bytes`` (per device),
        ``table_share_on_device``, ``layout`` (``replicated`` / ``sharded`` / ``host``),
        ``stack``, ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    check_integer("batch_size", batch_size, low=1, what="a batch size (samples per pass)")
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    row, structure = recommender_row(model)
    mode, w_bytes, mm_precision, _ = resolve_precision(precision)
    emb_name = check_choice("embedding_precision", embedding_precision or
                            ("int8" if w_bytes <= 1.0 else "fp16" if w_bytes <= 2.0 else "fp32"), list(EMBEDDING_BYTES))
    e_bytes = EMBEDDING_BYTES[emb_name]
    act_bytes = ACT_BYTES.get(mm_precision, 2.0)
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    layers = recommender_layers(structure)
    # the gather reads rows at the tables' precision; the layer pricer counts elements at the activations'
    layers.loc[layers["layer"] == "embedding_gather", "act_in"] *= e_bytes / act_bytes
    # the same device argument: vision() selects the same ceilings (a name list would be looked up again)
    r = vision(device, row, precision=mode, batch_size=int(batch_size), catalog=catalog, measurements=measurements,
               utilization=utilization, stack=stack, layers=layers, **overrides)
    if single:
        r = pd.DataFrame([r])
    n, b = int(n_devices), int(batch_size)
    table = table_elements(structure) * e_bytes
    dense = dense_params(structure) * w_bytes
    usable = ceil["memory_bytes"].to_numpy(dtype=float) * (1.0 - k["serving_reserve_fraction"])
    replicated = table + dense <= usable
    sharded = ~replicated & (n > 1) & (table / n + dense <= usable)
    # the rest: the tables' rows that do not fit stay in host memory and cross PCIe when looked up
    on_device = np.clip((usable - dense) / table, 0.0, 1.0)
    if table_share_on_device is not None:
        from .._validate import check_fraction

        check_fraction("table_share_on_device", table_share_on_device, "a share of the tables' rows (0-1]")
        on_device = np.minimum(on_device, float(table_share_on_device))
    host = ~replicated & ~sharded & (on_device > 0) & np.isfinite(ceil["pcie_bw"].to_numpy(dtype=float))
    gather_bytes = float(layers.loc[layers["layer"] == "embedding_gather", "act_in"].iloc[0]) * act_bytes
    # the achievable all-to-all rate: the link's measured collective efficiency (PCIe past a bridge's reach)
    link = np.where(n <= ceil["link_max_devices"].to_numpy(dtype=float), ceil["allreduce_bw"].to_numpy(dtype=float),
                    ceil["allreduce_bw_pcie"].to_numpy(dtype=float))
    startup = 2.0 * ceil["allreduce_latency_s"].to_numpy(dtype=float) * np.log2(max(n, 1))
    pooled = len(structure["table_rows"]) * float(structure["embedding_dim"]) * act_bytes
    with np.errstate(invalid="ignore", divide="ignore"):
        exchange = np.where(sharded, b * pooled * (n - 1.0) / n / link + startup, 0.0)
        # rows looked up uniformly (a lower bound on the device's hit rate: a runtime keeps the hot rows on it)
        exchange = np.where(host, b * gather_bytes * (1.0 - on_device) / ceil["pcie_bw"].to_numpy(dtype=float),
                            exchange)
    out = pd.DataFrame({"name": ceil["name"].to_numpy()})
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        lat = r[f"latency_s{level}"].to_numpy(dtype=float) + exchange
        out[f"latency_s{level}"] = lat
        out[f"batch_ms{level}"] = units.s_to_ms(lat)
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"samples_per_s{level}"] = b / out[f"latency_s{src}"]
    out["gather_s"] = b * gather_bytes / ceil["memory_bw"].to_numpy(dtype=float)
    out["exchange_s"] = exchange
    out["compute_s"] = r["compute_s"].to_numpy(dtype=float)
    out["table_bytes"] = table
    out["memory_needed_bytes"] = np.where(sharded, table / n + dense, np.where(host, usable, table + dense))
    out["table_share_on_device"] = np.where(host, on_device, np.where(replicated | sharded, 1.0, on_device))
    out["layout"] = np.where(replicated, "replicated", np.where(sharded, "sharded", np.where(host, "host", "")))
    out["n_devices"] = np.where(sharded, n, 1)
    out["embedding_precision"] = emb_name
    out["precision"] = mode
    out["batch_size"] = b
    out["model"] = row["name"]
    for col in ("stack", "matmul_source", "memory_source"):
        out[col] = r[col].to_numpy()
    fits = replicated | sharded | host
    feasible = r["feasible"].to_numpy(dtype=bool) & fits
    out["feasible"] = feasible
    gb = units.GIGA
    room = [f"{table / gb:,.1f} GB of {emb_name} embedding tables + {dense / gb:.2f} GB of MLP weights do not fit "
            f"{n} × {u / gb:,.1f} GB usable, and no host link is published" for u in usable]
    out["why"] = np.where(~r["feasible"].to_numpy(dtype=bool), r["why"].to_numpy(), np.where(fits, "", room))
    for col in [c for c in out.columns if c.startswith(("latency_s", "batch_ms", "samples_per_s"))]:
        out[col] = out[col].where(feasible, np.nan)
    return one_or_frame(out, single)
