"""Serving precisions: what is stored, what the matmuls run in, what the KV cache holds.

"int8" means different things in different engines, so each mode here says it:
full W8A8 modes (``fp8``, ``int8``: weights and activations quantised, the matmul
runs on the 8-bit tensor units) against weight-only modes (``w8a16``, ``w4a16``:
8- or 4-bit weights dequantised on the fly, matmuls in bf16), and the 4-bit float
formats (``nvfp4``, ``mxfp4``) that run on FP4 tensor units where a device has them.

References
----------
.. [1] G. Xiao et al., "SmoothQuant: Accurate and Efficient Post-Training
   Quantization for Large Language Models", ICML 2023, arXiv:2211.10438 (W8A8).
.. [2] J. Lin et al., "AWQ: Activation-aware Weight Quantization for LLM
   Compression and Acceleration", MLSys 2024, arXiv:2306.00978 (W4A16, group 128).
.. [3] Open Compute Project, "OCP Microscaling Formats (MX) Specification" v1.0
   (2023): MXFP4 = FP4 E2M1 values with one 8-bit scale per block of 32.
.. [4] NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
   Inference" (technical blog, 2025): FP4 E2M1 with one FP8 E4M3 scale per 16 values.
"""

from __future__ import annotations

from .._validate import check_choice

__all__ = ["PRECISION_MODES", "KV_BYTES", "resolve_precision", "resolve_kv_precision", "mode_words"]

#: mode -> (weight bytes per parameter, matmul precision, default KV precision, words)
PRECISION_MODES = {
    "fp32": (4.0, "fp32", "fp32", "fp32 weights and matmuls"),
    "tf32": (4.0, "tf32", "fp32", "fp32 weights, TF32 tensor-core matmuls"),
    "bf16": (2.0, "bf16", "bf16", "bf16 weights and matmuls"),
    "fp16": (2.0, "fp16", "fp16", "fp16 weights and matmuls"),
    "fp8": (1.0, "fp8", "bf16", "FP8 weights and activations (W8A8), FP8 tensor-core matmuls"),
    "int8": (1.0, "int8", "bf16", "INT8 weights and activations (W8A8, SmoothQuant-style), INT8 matmuls [1]"),
    # per-channel scales: negligible bytes
    "w8a16": (1.0, "bf16", "bf16", "INT8 weight-only: 1-byte weights dequantised to bf16, bf16 matmuls"),
    # group 128 with a 16-bit scale and a 16-bit zero point: 0.5 + 4/128 bytes per weight [2]
    "w4a16": (0.5 + 4.0 / 128.0, "bf16", "bf16", "INT4 weight-only (group 128, AWQ/GPTQ-style), bf16 matmuls [2]"),
    # gpt-fast's default int4 checkpoints: group 32 with a bf16 scale and zero point
    "w4a16-g32": (0.5 + 4.0 / 32.0, "bf16", "bf16", "INT4 weight-only (group 32, gpt-fast's default), bf16 matmuls"),
    # one FP8 scale per 16 values [4]
    "nvfp4": (0.5 + 1.0 / 16.0, "fp4", "fp8", "NVFP4 weights and activations, FP4 tensor-core matmuls [4]"),
    # one 8-bit scale per 32 values [3]
    "mxfp4": (0.5 + 1.0 / 32.0, "fp4", "fp8", "MXFP4 weights and activations, FP4 tensor-core matmuls [3]"),
}

#: other names people use for the modes
ALIASES = {"int4": "w4a16", "int4-weight-only": "w4a16", "int8-weight-only": "w8a16", "fp4": "nvfp4",
           "awq": "w4a16", "gptq": "w4a16", "w8a8": "int8", "w8a8-fp8": "fp8"}

#: KV-cache storage bytes per element
KV_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}


def resolve_precision(precision):
    """``(mode name, weight bytes per parameter, matmul precision, default KV precision)``."""
    if isinstance(precision, str) and precision.strip().lower() in ALIASES:
        precision = ALIASES[precision.strip().lower()]
    mode = check_choice("precision", precision, list(PRECISION_MODES))
    w, mm, kv, _ = PRECISION_MODES[mode]
    return mode, w, mm, kv


def resolve_kv_precision(kv_precision, default):
    """KV-cache precision name and bytes per element (``None`` takes ``default``)."""
    name = check_choice("kv_precision", default if kv_precision is None else kv_precision, list(KV_BYTES))
    return name, KV_BYTES[name]


def mode_words(precision):
    """One line saying what a precision mode stores and computes in."""
    return PRECISION_MODES[resolve_precision(precision)[0]][3]
