"""Training projected for many layouts or model sizes at once (vectorised :func:`train_core`).

:func:`training_sweep` -- one device over many data-parallel layouts (the cluster
chapter's scaling curves and accumulation splits); :func:`tokens_per_second_grid` --
every device for thousands of model sizes (the decision maps). Split out of
:mod:`accelkit.projection.training` (one job per module).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_choice, check_positive
from .ceilings import ceilings_for
from .constants import constants
from .shapes import resolve_model
from .systems import network_bandwidth
from .training import TRAIN_PRECISIONS, _rates, train_core

__all__ = ["training_sweep", "tokens_per_second_grid"]


def tokens_per_second_grid(params, precision="bf16", n_devices=8, seq_len=2048, global_batch_tokens=None,
                           zero_stage=None, catalog=None, measurements=None, utilization=None, **overrides):
    """Projected training tokens/s per device for models known only by their size.

    The decision maps (:func:`accelkit.select.rank_grid`) need thousands of sizes at
    once; this evaluates :func:`train_core` for each size over every device (data
    parallel on ``n_devices``; no layer shape, so no attention or tensor-parallel
    terms).

    Returns
    -------
    numpy.ndarray, shape (len(params), devices) [tokens/s per device]
    """
    from .ceilings import ceilings_for as _ceilings

    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    params = np.atleast_1d(np.asarray(params, dtype=float))
    check_positive("params", params, "a number of parameters")
    n = int(n_devices)
    zero = (1 if n > 1 else 0) if zero_stage is None else int(zero_stage)
    gbt = float(2**22 if global_batch_tokens is None else global_batch_tokens)
    step_seqs = max(np.floor(gbt / seq_len / n), 1.0) * n
    k = constants(**overrides)
    ceil, _ = _ceilings(None, catalog, measurements)
    net_bw, _ = network_bandwidth(ceil, catalog, None)
    rates = _rates(ceil, precision, "", net_bw, utilization)
    out = np.empty((len(params), len(ceil)))
    for i, size in enumerate(params):
        shape = resolve_model({"name": "custom", "params": size})
        res = train_core(shape, rates, 1, 1, n, seq_len, 1, step_seqs, 1, "selective", zero, 8, k)
        out[i] = step_seqs * seq_len / res["step_s"] / n
    return out


def training_sweep(catalog, model, n_devices, micro_batch_size=1, accumulation_steps=1, tokens=2e12,
                   precision="bf16", seq_len=2048, zero_stage=1, devices_per_node=8, network_gbps=None,
                   measurements=None, utilization=None, **overrides):
    """:func:`training` of one device over many data-parallel layouts at once.

    The cluster chapter asks for a dozen cluster sizes per scaling curve and half a
    dozen micro-batch / accumulation splits of one global batch; one vectorised
    :func:`train_core` over the layouts replaces a full projection per layout. Each
    layout runs ``micro_batch_size × accumulation_steps`` sequences per device per
    optimizer step, activation recomputation ``selective``, no tensor or pipeline
    parallelism, with the memory check off, like :func:`accelkit.sizing.cluster_step`.

    Parameters
    ----------
    catalog : DataFrame
        One catalogue row (the device, with any link override already applied).
    n_devices, micro_batch_size, accumulation_steps : int or sequence of int
        The layouts; sequences broadcast against each other (NumPy rules).

    Returns
    -------
    pandas.DataFrame
        One row per layout: ``n_devices, micro_batch_size, accumulation_steps,
        step_s, compute_s`` (matmul, non-matmul and optimizer time per step),
        ``comm_s`` (exposed gradient all-reduce), ``comm_total_s``, ``efficiency``
        (share of the step not waiting on communication), ``tokens_per_s``, ``days``,
        ``n_nodes`` -- the central projection, equal to :func:`training` of each layout.
    """
    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    n, mb, acc = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float))
                                       for v in (n_devices, micro_batch_size, accumulation_steps)))
    for name, values in (("n_devices", n), ("micro_batch_size", mb), ("accumulation_steps", acc)):
        if (values < 1).any() or (values != np.round(values)).any():
            raise ValueError(f"{name} must be whole numbers >= 1; got {values.tolist()!r}")
    if len(catalog) != 1:
        raise ValueError(f"training_sweep projects one device; got {len(catalog)} catalogue rows")
    shape = resolve_model(model)
    k = constants(**overrides)
    ceil, _ = ceilings_for(None, catalog, measurements)
    net_bw, _ = network_bandwidth(ceil, catalog, network_gbps)
    step_seqs = mb * acc * n
    r = train_core(shape, _rates(ceil, precision, "", net_bw, utilization), 1, 1, n, seq_len, mb, step_seqs, 1,
                   "selective", int(zero_stage), devices_per_node, k)
    tokens_per_s = step_seqs * seq_len / r["step_s"]
    return pd.DataFrame({
        "n_devices": n.astype(int), "micro_batch_size": mb.astype(int), "accumulation_steps": acc.astype(int),
        "step_s": r["step_s"], "compute_s": r["compute_s"] + r["elementwise_s"] + r["optimizer_s"],
        "comm_s": r["dp_comm_s"], "comm_total_s": r["dp_comm_total_s"], "efficiency": 1.0 - r["dp_comm_s"] / r["step_s"],
        "tokens_per_s": tokens_per_s, "days": tokens / tokens_per_s / units.SECONDS_PER_DAY,
        "n_nodes": np.ceil(n / np.minimum(devices_per_node, n)).astype(int),
    })
