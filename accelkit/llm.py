"""LLM inference bounds: prefill time, decode time per token, throughput vs batch.

Decoding one token for each of ``B`` sequences reads every weight once and each
sequence's KV cache once, and does ``2 N B`` FLOP. At small batch the step is
limited by memory bandwidth (the weights dominate); past the *critical batch*
the compute term takes over. Prefill (the prompt) is compute-bound.

All bounds are floors (best case): real kernels reach 60-90 % of peak bandwidth
and 30-70 % of peak FLOP/s. Tensor parallelism over ``n_devices`` divides
traffic and compute evenly and ignores its all-reduce cost (see :mod:`accelkit.comm`).

References
----------
.. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
   arXiv:2211.05102, section 2 (memory time vs compute time per step).
.. [2] W. Kwon et al., "Efficient Memory Management for Large Language Model
   Serving with PagedAttention", SOSP 2023, arXiv:2309.06180 (KV cache).
.. [3] J. Kaplan et al., arXiv:2001.08361 (2020), section 2.1 (2N FLOP per token).
"""

from __future__ import annotations

import numpy as np

from ._validate import check_fraction, check_non_negative, check_positive
from .memory import DEFAULT_RESERVE_FRACTION, bytes_per_param, usable_bytes

__all__ = [
    "decode_seconds_per_token",
    "prefill_seconds",
    "decode_step_seconds",
    "decode_tokens_per_second",
    "critical_batch",
    "max_batch_that_fits",
    "request_latency_seconds",
    "model_weight_bytes",
    "model_kv_bytes",
]


def decode_seconds_per_token(weight_bytes, kv_bytes, bandwidth, n_devices=1):
    """Memory-bound floor of one decode step: ``(weights + KV) / (bandwidth · n)``.

    Parameters
    ----------
    weight_bytes : numeric
        Bytes of weights read per step (all resident weights for a dense model;
        the active experts' for mixture-of-experts at batch 1) [bytes].
    kv_bytes : numeric
        KV-cache bytes read per step, summed over the batch [bytes].
    bandwidth : numeric
        Memory bandwidth per device [bytes/s].
    n_devices : numeric, default 1
        Tensor-parallel devices sharing the reads.

    Returns
    -------
    numeric
        Seconds per decode step (one new token per sequence) [s].

    Notes
    -----
    [1]_ §2: at small batch, per-token latency is set by reading the weights.
    Example: Llama-2-7B in bf16 (13.5 GB) on an H100 SXM (3.35 TB/s) cannot decode
    faster than 4.0 ms per token, i.e. ≈ 248 tokens/s for one stream.
    """
    check_positive("weight_bytes", weight_bytes, "a size in bytes")
    check_non_negative("kv_bytes", kv_bytes, "a size in bytes")
    check_positive("bandwidth", bandwidth, "a memory bandwidth in bytes/s")
    check_positive("n_devices", n_devices, "a number of devices")
    return (weight_bytes + kv_bytes) / (bandwidth * n_devices)


def prefill_seconds(flops, peak_flops, utilization, n_devices=1):
    """Compute-bound time of a prefill (prompt) pass: ``flops / (peak · u · n)``.

    Parameters
    ----------
    flops : numeric
        FLOP of the pass, ≈ ``2 · N · prompt_tokens · batch`` [FLOP].
    peak_flops : numeric
        Dense peak per device at the compute precision [FLOP/s].
    utilization : numeric
        Achieved fraction of peak, in (0, 1].
    n_devices : numeric, default 1

    Returns
    -------
    numeric [s]
    """
    check_positive("flops", flops, "an amount of compute in FLOP")
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_fraction("utilization", utilization, "a utilisation")
    check_positive("n_devices", n_devices, "a number of devices")
    return flops / (peak_flops * utilization * n_devices)


def decode_step_seconds(
    active_params, weight_bytes, kv_bytes_per_sequence, batch, peak_flops, bandwidth, utilization=1.0, n_devices=1
):
    """Time of one decode step, the larger of the memory and compute bounds.

    Parameters
    ----------
    active_params : numeric
        Parameters used per token [count].
    weight_bytes : numeric
        Weight bytes read per step [bytes].
    kv_bytes_per_sequence : numeric
        KV-cache bytes read per sequence per step [bytes].
    batch : numeric
        Sequences decoded together.
    peak_flops, bandwidth : numeric
        Per-device peak [FLOP/s] and bandwidth [bytes/s].
    utilization : numeric, default 1
        Fraction of peak FLOP/s reached by the decode GEMMs, in (0, 1].
    n_devices : numeric, default 1

    Returns
    -------
    numeric
        ``max((W + B·kv) / (BW·n), 2·N·B / (P·u·n))`` [s] ([1]_ §2).
    """
    check_positive("batch", batch, "a batch size")
    memory_s = decode_seconds_per_token(weight_bytes, batch * kv_bytes_per_sequence, bandwidth, n_devices)
    compute_s = prefill_seconds(2.0 * active_params * batch, peak_flops, utilization, n_devices)
    return np.maximum(memory_s, compute_s)


def decode_tokens_per_second(
    active_params, weight_bytes, kv_bytes_per_sequence, batch, peak_flops, bandwidth, utilization=1.0, n_devices=1
):
    """Generated tokens per second across the batch: ``batch / step time``."""
    step = decode_step_seconds(
        active_params, weight_bytes, kv_bytes_per_sequence, batch, peak_flops, bandwidth, utilization, n_devices
    )
    return batch / step


def critical_batch(active_params, weight_bytes, kv_bytes_per_sequence, peak_flops, bandwidth, utilization=1.0):
    """Batch at which a decode step turns from memory-bound to compute-bound.

    Solves ``2 N B / (P u) = (W + B kv) / BW`` for B:
    ``B* = (W / BW) / (2N / (P u) − kv / BW)``.

    Returns
    -------
    numeric
        B* [sequences] (not rounded); ``inf`` where the KV traffic grows as fast as
        compute so the step never becomes compute-bound. With kv = 0 and bf16
        weights (W = 2N), B* = P·u / BW, the ridge point in FLOP/byte.
    """
    check_positive("active_params", active_params, "a number of parameters")
    check_positive("weight_bytes", weight_bytes, "a size in bytes")
    check_non_negative("kv_bytes_per_sequence", kv_bytes_per_sequence, "a size in bytes")
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_positive("bandwidth", bandwidth, "a memory bandwidth in bytes/s")
    check_fraction("utilization", utilization, "a utilisation")
    denom = 2.0 * active_params / (peak_flops * utilization) - kv_bytes_per_sequence / bandwidth
    with np.errstate(divide="ignore", invalid="ignore"):
        b_star = (weight_bytes / bandwidth) / denom
    return np.where(denom > 0, b_star, np.inf) if np.ndim(b_star) else (float(b_star) if denom > 0 else float("inf"))


def max_batch_that_fits(
    device_bytes, weight_bytes, kv_bytes_per_sequence, n_devices=1, reserve_fraction=DEFAULT_RESERVE_FRACTION
):
    """Largest number of sequences whose KV cache fits next to the weights.

    Parameters
    ----------
    device_bytes : numeric
        Memory per device [bytes].
    weight_bytes : numeric
        Weights, sharded over ``n_devices`` [bytes in total].
    kv_bytes_per_sequence : numeric
        KV cache of one sequence at the context length served [bytes].
    n_devices : numeric, default 1
    reserve_fraction : float, default 0.10
        Memory kept for the runtime (see :func:`accelkit.memory.usable_bytes`).

    Returns
    -------
    numeric
        ``floor((n · usable − W) / kv)`` [sequences]; 0 where the weights alone do
        not fit.
    """
    check_positive("weight_bytes", weight_bytes, "a size in bytes")
    check_positive("kv_bytes_per_sequence", kv_bytes_per_sequence, "a size in bytes")
    check_positive("n_devices", n_devices, "a number of devices")
    free = n_devices * usable_bytes(device_bytes, reserve_fraction) - weight_bytes
    return np.maximum(np.floor(free / kv_bytes_per_sequence), 0)


def request_latency_seconds(prefill_s, decode_step_s, output_tokens):
    """End-to-end latency of one request: time to first token + ``(n − 1)`` steps.

    Parameters
    ----------
    prefill_s : numeric
        Prefill time (≈ time to first token) [s].
    decode_step_s : numeric
        Time per decode step [s].
    output_tokens : numeric
        Tokens generated [count], ≥ 1.
    """
    check_non_negative("prefill_s", prefill_s, "a time in seconds")
    check_positive("decode_step_s", decode_step_s, "a time in seconds")
    check_positive("output_tokens", output_tokens, "a number of tokens")
    return prefill_s + (output_tokens - 1) * decode_step_s


# --- helpers over model presets (rows of accelkit.models.load_models()) ------------

def model_weight_bytes(model, precision):
    """Bytes of all weights of a preset at ``precision`` (all experts resident)."""
    return float(model["params"]) * bytes_per_param(precision)


def model_kv_bytes(model, seq_len, batch, precision):
    """KV-cache bytes of a preset for ``batch`` sequences of ``seq_len`` tokens."""
    from .models import kv_elements_per_token

    check_positive("seq_len", seq_len, "a number of tokens")
    check_positive("batch", batch, "a batch size")
    per_token_layer = kv_elements_per_token(model)
    if np.isnan(per_token_layer):
        return 0.0 * seq_len * batch
    return per_token_layer * float(model["n_layers"]) * seq_len * batch * bytes_per_param(precision)
