"""The main kernels of a scenario's model and their arithmetic intensity (for the roofline chapter).

Moved out of :mod:`accelkit.sizing` (one job per module); it reads the scenario's model
through :func:`accelkit.sizing.model_of` (imports run one way: kernels -> sizing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import llm, memory, roofline
from .sizing import model_of

__all__ = ["kernel_workloads"]


def kernel_workloads(scenario):
    """The scenario's main kernels with their arithmetic intensity.

    For a transformer preset (decoder, encoder, ViT) at the scenario's batch B,
    sequence length S and precision: the MLP GEMM in prefill (m = B·S) and in decode
    (m = B), fused attention in prefill (S × S) and in one decode step (1 × S), the
    whole-model prefill and decode steps, and an elementwise add. For other models
    (CNNs, custom sizes): the whole-model forward pass counting weight traffic only,
    an upper bound on intensity.

    Returns
    -------
    pandas.DataFrame
        ``workload, intensity`` [FLOP/byte], ``flops`` [FLOP], ``bytes`` [bytes],
        ``note``.
    """
    m = model_of(scenario)
    preset = m["preset"]
    p = scenario.precision if scenario.precision in memory.BYTES_PER_PARAM else "bf16"
    nbytes = memory.bytes_per_param(p)
    b, s = scenario.batch_size, scenario.seq_len
    rows = []
    shaped = preset is not None and pd.notna(preset.get("d_model")) and pd.notna(preset.get("n_layers"))
    if shaped and preset["kind"] in ("decoder", "moe-decoder", "encoder", "vit"):
        d = float(preset["d_model"])
        ff = float(preset["d_ff"]) if pd.notna(preset.get("d_ff")) else 4.0 * d
        hd = float(preset["head_dim"])
        decoder = preset["kind"] in ("decoder", "moe-decoder")
        gemms = [(f"MLP GEMM, prefill ({b}×{s} tokens)" if decoder else f"MLP GEMM ({b}×{s} tokens)", b * s)]
        if decoder:
            gemms.append((f"MLP GEMM, decode ({b} tokens)", b))
        for label, rows_m in gemms:
            f = roofline.gemm_flops(rows_m, ff, d)
            q = roofline.gemm_bytes(rows_m, ff, d, p)
            rows.append((label, f / q, f, q, f"[{rows_m:g} × {d:g}] · [{d:g} × {ff:g}]"))
        rows.append((f"attention, prefill ({s}×{s}, fused)", roofline.attention_intensity(s, s, hd, p), np.nan, np.nan,
                     "FlashAttention-style: Q, K, V read once"))
        if preset["kind"] in ("decoder", "moe-decoder"):
            rows.append((f"attention, decode (1×{s})", roofline.attention_intensity(1, s, hd, p), np.nan, np.nan,
                         "one new token reads the whole KV cache"))
            f = 2.0 * m["active_params"] * b
            kv = llm.model_kv_bytes(preset, s, 1, "bf16" if p in ("fp32", "tf32") else p) if p != "int4" else \
                llm.model_kv_bytes(preset, s, 1, "int8")
            q = m["active_params"] * nbytes + b * kv
            rows.append((f"LLM decode step (batch {b})", f / q, f, q, "weights + KV cache read once per step"))
        f = 2.0 * m["active_params"] * b * s
        q = m["active_params"] * nbytes
        label = f"LLM prefill (batch {b}, {s} tokens)" if preset["kind"] in ("decoder", "moe-decoder") else \
            f"forward pass (batch {b}, {s} tokens)"
        rows.append((label, f / q, f, q, "weights read once; activations ignored"))
    else:
        per_sample = float(preset["forward_flop_per_sample"]) if preset is not None and \
            pd.notna(preset.get("forward_flop_per_sample")) else 2.0 * m["params"]
        f = per_sample * b
        q = m["params"] * nbytes
        rows.append((f"forward pass (batch {b})", f / q, f, q, "weights only: an upper bound on intensity"))
    rows.append(("elementwise add", roofline.elementwise_intensity(1, 2, 1, p), np.nan, np.nan,
                 "two reads, one write per FLOP"))
    return pd.DataFrame(rows, columns=["workload", "intensity", "flops", "bytes", "note"])
