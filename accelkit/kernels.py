"""The main kernels of a scenario's model and their arithmetic intensity (for the roofline chapter).

Moved out of :mod:`accelkit.sizing` (one job per module); it reads the scenario's model
through :func:`accelkit.sizing.model_of` (imports run one way: kernels -> sizing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import llm, memory, roofline
from .i18n import N_, _
from .sizing import model_of

__all__ = ["kernel_workloads"]

#: the kernels' names; ``workload`` keeps the English (other code matches on it), ``label`` is what is shown
_NAMES = {
    "mlp_prefill": N_("MLP GEMM, prefill ({b}×{s} tokens)"),
    "mlp": N_("MLP GEMM ({b}×{s} tokens)"),
    "mlp_decode": N_("MLP GEMM, decode ({b} tokens)"),
    "attention_prefill": N_("attention, prefill ({s}×{s2}, fused)"),
    "attention_decode": N_("attention, decode (1×{s})"),
    "decode_step": N_("LLM decode step (batch {b})"),
    "prefill": N_("LLM prefill (batch {b}, {s} tokens)"),
    "forward": N_("forward pass (batch {b}, {s} tokens)"),
    "forward_weights": N_("forward pass (batch {b})"),
    "add": N_("elementwise add"),
}
_NOTES = {
    "attention_prefill": N_("FlashAttention-style: Q, K, V read once"),
    "attention_decode": N_("one new token reads the whole KV cache"),
    "decode_step": N_("weights + KV cache read once per step"),
    "prefill": N_("weights read once; activations ignored"),
    "forward_weights": N_("weights only: an upper bound on intensity"),
    "add": N_("two reads, one write per FLOP"),
}


def _name(key, **values):
    """(English name, name in the language now in use) of a kernel."""
    return _NAMES[key].format(**values), _(_NAMES[key]).format(**values)


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
        ``note``, and ``label``: the workload's name in the language now in use (``workload``
        stays English; code matches on it).
    """
    m = model_of(scenario)
    preset = m["preset"]
    p = scenario.precision if scenario.precision in memory.BYTES_PER_PARAM else "bf16"
    nbytes = memory.bytes_per_param(p)
    b, s = scenario.batch_size, scenario.seq_len
    rows = []

    def add(name, intensity, flops, nbytes_moved, note):
        """One kernel: ``name`` is (English, shown) from :func:`_name`."""
        rows.append((name[0], intensity, flops, nbytes_moved, note, name[1]))

    shaped = preset is not None and pd.notna(preset.get("d_model")) and pd.notna(preset.get("n_layers"))
    if shaped and preset["kind"] in ("decoder", "moe-decoder", "encoder", "vit"):
        d = float(preset["d_model"])
        ff = float(preset["d_ff"]) if pd.notna(preset.get("d_ff")) else 4.0 * d
        hd = float(preset["head_dim"])
        decoder = preset["kind"] in ("decoder", "moe-decoder")
        gemms = [(_name("mlp_prefill", b=b, s=s) if decoder else _name("mlp", b=b, s=s), b * s)]
        if decoder:
            gemms.append((_name("mlp_decode", b=b), b))
        for name, rows_m in gemms:
            f = roofline.gemm_flops(rows_m, ff, d)
            q = roofline.gemm_bytes(rows_m, ff, d, p)
            add(name, f / q, f, q, f"[{rows_m:g} × {d:g}] · [{d:g} × {ff:g}]")
        add(_name("attention_prefill", s=s, s2=s), roofline.attention_intensity(s, s, hd, p), np.nan, np.nan,
            _(_NOTES["attention_prefill"]))
        if preset["kind"] in ("decoder", "moe-decoder"):
            add(_name("attention_decode", s=s), roofline.attention_intensity(1, s, hd, p), np.nan, np.nan,
                _(_NOTES["attention_decode"]))
            f = 2.0 * m["active_params"] * b
            kv = llm.model_kv_bytes(preset, s, 1, "bf16" if p in ("fp32", "tf32") else p) if p != "int4" else \
                llm.model_kv_bytes(preset, s, 1, "int8")
            q = m["active_params"] * nbytes + b * kv
            add(_name("decode_step", b=b), f / q, f, q, _(_NOTES["decode_step"]))
        f = 2.0 * m["active_params"] * b * s
        q = m["active_params"] * nbytes
        add(_name("prefill" if decoder else "forward", b=b, s=s), f / q, f, q, _(_NOTES["prefill"]))
    else:
        per_sample = float(preset["forward_flop_per_sample"]) if preset is not None and \
            pd.notna(preset.get("forward_flop_per_sample")) else 2.0 * m["params"]
        f = per_sample * b
        q = m["params"] * nbytes
        add(_name("forward_weights", b=b), f / q, f, q, _(_NOTES["forward_weights"]))
    add(_name("add"), roofline.elementwise_intensity(1, 2, 1, p), np.nan, np.nan, _(_NOTES["add"]))
    return pd.DataFrame(rows, columns=["workload", "intensity", "flops", "bytes", "note", "label"])
