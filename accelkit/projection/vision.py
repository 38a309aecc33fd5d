"""Image models (CNNs, ViTs) and encoders: time per batch, frames per second.

A forward pass of a batch of ``B`` images costs ``B × F`` FLOP (``F`` the preset's
published ``forward_flop_per_sample``, or ``2·N`` where none is published) and reads
the weights once: ``time = roofline(weights / bandwidth, B·F / matmul rate) +
overhead`` on the achievable ceilings, with the same ``gemm_fraction``,
``roofline_overlap`` and per-pass overhead (``prefill_overhead_s``) as an LLM's
prefill (:mod:`accelkit.projection.inference`). Convolutions run as implicit GEMMs
on the tensor units (NVIDIA, *Convolutional Layers User's Guide*, "Convolution
algorithms"), so the matmul ceiling applies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import check_integer
from .ceilings import ceilings_for
from .constants import constants
from .precisions import resolve_precision

__all__ = ["vision", "vision_seconds", "frame_flops", "seconds_at_utilization"]


def seconds_at_utilization(flops_per_frame, peak_ops, utilization):
    """Compute-bound time of one frame when the person states the share of the peak a
    pipeline reaches: ``F / (peak × u)`` [s]. The edge chapter and the source text's
    edge claims use it, since no edge accelerator has a published matmul efficiency."""
    from .._validate import check_fraction, check_positive

    check_positive("flops_per_frame", flops_per_frame, "an amount of compute in FLOP")
    check_fraction("utilization", utilization, "a utilisation")
    return flops_per_frame / (peak_ops * utilization)


def frame_flops(model):
    """FLOP of one forward pass of a preset (its published figure, or 2·N) and the row."""
    from ..models import find_model

    row = find_model(model) if isinstance(model, str) else model
    flops = row.get("forward_flop_per_sample", np.nan)
    if flops == flops and flops:
        return float(flops), row
    return 2.0 * float(row["params"]), row


def vision_seconds(flops_per_sample, weight_bytes, matmul_rate, bandwidth, batch, k=None):
    """Time of one forward pass of ``batch`` samples [s] on one device.

    Parameters
    ----------
    flops_per_sample : numeric [FLOP]
    weight_bytes : numeric [bytes]
    matmul_rate : numeric
        Achievable matmul rate [FLOP/s] (before ``gemm_fraction``).
    bandwidth : numeric
        Achievable memory bandwidth [bytes/s].
    batch : numeric
        Samples per pass.
    """
    k = constants() if k is None else k
    compute = flops_per_sample * batch / (matmul_rate * k["gemm_fraction"])
    weights = weight_bytes / bandwidth
    overlap = k["roofline_overlap"]
    return np.maximum(compute, weights) + (1.0 - overlap) * np.minimum(compute, weights) + k["prefill_overhead_s"]


def vision(device=None, model="ResNet-50", precision="int8", batch_size=1, catalog=None, measurements=None,
           **overrides):
    """Projected latency and throughput of an image model per device.

    Returns
    -------
    dict or pandas.DataFrame
        ``latency_s`` (one pass of ``batch_size``), ``frames_per_s`` (per device), each
        with ``_low``/``_high``, ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    check_integer("batch_size", batch_size, low=1, what="a batch size")
    mode, w_bytes, mm_precision, _ = resolve_precision(precision)
    flops, row = frame_flops(model)
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    weights = float(row["params"]) * w_bytes
    out = {"name": ceil["name"].to_numpy()}
    for level, rate_level in (("", ""), ("_low", "_high"), ("_high", "_low")):
        t = vision_seconds(flops, weights, ceil[f"matmul_{mm_precision}{rate_level}"].to_numpy(dtype=float),
                           ceil[f"memory_bw{rate_level}"].to_numpy(dtype=float), batch_size, k)
        out[f"latency_s{level}"] = t
    # image models are not in the validation set: widen by the largest error the engine shows elsewhere
    e = max(k[n] for n in ("model_error_training", "model_error_decode", "model_error_throughput", "model_error_ttft"))
    out["latency_s_low"], out["latency_s_high"] = out["latency_s_low"] / (1 + e), out["latency_s_high"] * (1 + e)
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"frames_per_s{level}"] = batch_size / out[f"latency_s{src}"]
    out["matmul_source"] = ceil[f"matmul_{mm_precision}_source"].to_numpy()
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    feasible = np.isfinite(out["latency_s"])
    out["feasible"] = feasible
    out["why"] = np.where(feasible, "", f"no published dense {mm_precision} peak or memory bandwidth")
    if single:
        r = {c: (v[0].item() if hasattr(v[0], "item") else v[0]) for c, v in out.items()}
        if not r["feasible"]:
            raise ValueError(f"{r['name']}: {r['why']}")
        return r
    return pd.DataFrame(out)
