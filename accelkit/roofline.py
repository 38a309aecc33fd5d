"""Roofline model: ridge point, attainable FLOP/s, arithmetic intensity of kernels.

A kernel that does ``F`` FLOP while moving ``Q`` bytes to and from device memory
has arithmetic intensity ``I = F / Q`` [FLOP/byte]. On a device with peak compute
``P`` [FLOP/s] and memory bandwidth ``B`` [bytes/s] it can reach at most
``min(P, B · I)``. Below the ridge point ``I* = P / B`` the kernel is
memory-bound; above it, compute-bound.

Intensity functions count the *minimum* traffic (each operand read once, each
result written once): real kernels move more, so real intensity is lower.

References
----------
.. [1] S. Williams, A. Waterman, D. Patterson, "Roofline: An Insightful Visual
   Performance Model for Multicore Architectures", Commun. ACM 52(4), 65-76 (2009).
.. [2] NVIDIA, "GPU Performance Background User's Guide" (Deep Learning
   Performance documentation): GEMM arithmetic intensity 2MNK / (2(MK + NK + MN))
   for fp16.
.. [3] T. Dao et al., "FlashAttention", NeurIPS 2022, arXiv:2205.14135, section 3.2
   (IO of standard vs fused attention).
.. [4] NVIDIA A100 Tensor Core GPU datasheet (312 TFLOPS dense BF16, 2,039 GB/s
   for the 80 GB SXM part); H100 datasheet (989 TFLOPS dense BF16, 3.35 TB/s).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._validate import check_choice, check_positive
from .memory import BYTES_PER_PARAM

__all__ = [
    "ridge_point",
    "attainable_flops",
    "bound",
    "gemm_flops",
    "gemm_bytes",
    "gemm_intensity",
    "elementwise_intensity",
    "attention_intensity",
    "decode_intensity",
    "prefill_intensity",
    "catalog_roofline",
]


def _bytes(precision):
    return BYTES_PER_PARAM[check_choice("precision", precision, BYTES_PER_PARAM)]


def ridge_point(peak_flops, bandwidth):
    """Arithmetic intensity where a device turns from memory- to compute-bound.

    Parameters
    ----------
    peak_flops : numeric
        Peak compute at the precision of interest [FLOP/s].
    bandwidth : numeric
        Peak memory bandwidth [bytes/s].

    Returns
    -------
    numeric
        ``peak_flops / bandwidth`` [FLOP/byte].

    Notes
    -----
    [1]_. Worked example from datasheet figures [4]_: A100 80 GB SXM,
    312e12 / 2.039e12 ≈ 153 FLOP/byte; H100 SXM, 989e12 / 3.35e12 ≈ 295 FLOP/byte.
    """
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_positive("bandwidth", bandwidth, "a memory bandwidth in bytes/s")
    return peak_flops / bandwidth


def attainable_flops(peak_flops, bandwidth, intensity):
    """Roofline bound: ``min(peak_flops, bandwidth × intensity)``.

    Parameters
    ----------
    peak_flops : numeric [FLOP/s]
    bandwidth : numeric [bytes/s]
    intensity : numeric
        Arithmetic intensity of the kernel [FLOP/byte].

    Returns
    -------
    numeric
        Highest FLOP/s the kernel can reach on the device [FLOP/s] ([1]_ eq. 1).
    """
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_positive("bandwidth", bandwidth, "a memory bandwidth in bytes/s")
    check_positive("intensity", intensity, "an arithmetic intensity in FLOP/byte")
    return np.minimum(peak_flops, bandwidth * intensity)


def bound(peak_flops, bandwidth, intensity):
    """``"memory"`` where ``intensity`` is below the ridge point, else ``"compute"``.

    Returns a string for scalars, an array (or Series) of strings otherwise.
    """
    ridge = ridge_point(peak_flops, bandwidth)
    check_positive("intensity", intensity, "an arithmetic intensity in FLOP/byte")
    label = np.where(np.asarray(intensity) < np.asarray(ridge), "memory", "compute")
    if label.ndim == 0:
        return str(label)
    for arg in (intensity, peak_flops, bandwidth):
        if isinstance(arg, pd.Series) and len(arg) == label.size:
            return pd.Series(label, index=arg.index)
    return label


def gemm_flops(m, n, k):
    """FLOP of ``C[m,n] = A[m,k] · B[k,n]``: ``2 m n k``."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        check_positive(name, value, "a matrix dimension")
    return 2.0 * m * n * k


def gemm_bytes(m, n, k, precision="bf16"):
    """Minimum bytes moved by a GEMM: read A and B, write C, ``(mk + kn + mn) × bytes``."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        check_positive(name, value, "a matrix dimension")
    return (m * k + k * n + m * n) * _bytes(precision)


def gemm_intensity(m, n, k, precision="bf16"):
    """Arithmetic intensity of a GEMM ``[m,k] × [k,n]`` [FLOP/byte].

    Notes
    -----
    ``2mnk / ((mk + kn + mn) · bytes)`` ([2]_). Example: a 4096³ bf16 GEMM has
    intensity 2·4096³ / (3 · 4096² · 2) ≈ 1365 FLOP/byte; a matrix-vector product
    (m = 1) about 1 FLOP/byte in bf16.
    """
    return gemm_flops(m, n, k) / gemm_bytes(m, n, k, precision)


def elementwise_intensity(flops_per_element=1, n_inputs=2, n_outputs=1, precision="bf16"):
    """Intensity of an elementwise kernel (add, scale, activation) [FLOP/byte].

    ``flops_per_element / ((n_inputs + n_outputs) × bytes)``: e.g. a bf16 add
    (1 FLOP, two reads, one write) has 1/6 FLOP/byte -- always memory-bound.
    """
    check_positive("flops_per_element", flops_per_element, "a FLOP count")
    check_positive("n_inputs", n_inputs, "a count of input tensors")
    check_positive("n_outputs", n_outputs, "a count of output tensors")
    return flops_per_element / ((n_inputs + n_outputs) * _bytes(precision))


def attention_intensity(seq_len_q, seq_len_kv, head_dim, precision="bf16", fused=True):
    """Intensity of the attention core ``softmax(QKᵀ)V`` for one head [FLOP/byte].

    Parameters
    ----------
    seq_len_q, seq_len_kv : numeric
        Query and key/value lengths (``seq_len_q = 1`` for one decode step).
    head_dim : numeric
        Dimension per head d.
    precision : str
        Storage format of Q, K, V, O.
    fused : bool, default True
        ``True``: fused kernel (FlashAttention [3]_): read Q, K, V, write O.
        ``False``: also write and read the score matrix S and P (sq × skv each).

    Notes
    -----
    FLOP = ``4 · sq · skv · d`` (QKᵀ and PV); bytes = ``(2 sq d + 2 skv d) · b`` fused,
    plus ``4 sq skv · b`` unfused (S written, read; P written, read) [3]_.
    Batch and head counts cancel out of the ratio.
    """
    for name, value in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv), ("head_dim", head_dim)):
        check_positive(name, value, "a size")
    b = _bytes(precision)
    flops = 4.0 * seq_len_q * seq_len_kv * head_dim
    moved = (2.0 * seq_len_q * head_dim + 2.0 * seq_len_kv * head_dim) * b
    if not fused:
        moved = moved + 4.0 * seq_len_q * seq_len_kv * b
    return flops / moved


def decode_intensity(params, batch, weight_precision="bf16", kv_bytes_per_sequence=0.0):
    """Intensity of one LLM decode step (one new token for each of ``batch`` sequences).

    Parameters
    ----------
    params : numeric
        Parameters read per step (active parameters for mixture-of-experts) [count].
    batch : numeric
        Sequences decoded together [count].
    weight_precision : str
        Storage format of the weights.
    kv_bytes_per_sequence : numeric, default 0
        KV-cache bytes read per sequence per step (see
        :func:`accelkit.memory.kv_cache_bytes`) [bytes].

    Returns
    -------
    numeric
        ``2 N B / (N · bytes + B · kv)`` [FLOP/byte]: ≈ B FLOP/byte for bf16 weights
        and a short context, which is why decode is memory-bound until the batch
        reaches the ridge point.
    """
    check_positive("params", params, "a number of parameters")
    check_positive("batch", batch, "a batch size")
    if np.any(np.asarray(kv_bytes_per_sequence) < 0):
        raise ValueError(f"kv_bytes_per_sequence must be >= 0 bytes; got {kv_bytes_per_sequence}")
    return 2.0 * params * batch / (params * _bytes(weight_precision) + batch * kv_bytes_per_sequence)


def prefill_intensity(params, batch, seq_len, weight_precision="bf16"):
    """Intensity of an LLM prefill (prompt) pass, weights read once.

    ``2 N B s / (N · bytes)``: every weight is used for ``B · s`` tokens, so in bf16
    the intensity equals the number of prompt tokens, and a prompt of about a
    thousand tokens is compute-bound on every device in the catalogue (the highest
    bf16 ridge point there is ~560 FLOP/byte).
    Activation traffic is ignored (small next to weights for short prompts).
    """
    check_positive("params", params, "a number of parameters")
    check_positive("batch", batch, "a batch size")
    check_positive("seq_len", seq_len, "a prompt length in tokens")
    return 2.0 * params * batch * seq_len / (params * _bytes(weight_precision))


def catalog_roofline(peak_flops, bandwidth, intensity, device_names=None, workload_names=None):
    """Every device × every workload in one vectorised call.

    Parameters
    ----------
    peak_flops, bandwidth : array-like (n_devices,)
        Per-device peak [FLOP/s] and bandwidth [bytes/s]; NaN where unpublished.
    intensity : array-like (n_workloads,)
        Arithmetic intensity of each workload [FLOP/byte].
    device_names, workload_names : sequence, optional
        Labels for the result.

    Returns
    -------
    pandas.DataFrame
        Long format, one row per (device, workload): ``device, workload,
        intensity, ridge_point, attainable_flops, fraction_of_peak, bound``.
    """
    peak = np.asarray(peak_flops, dtype=float)
    bw = np.asarray(bandwidth, dtype=float)
    inten = np.asarray(intensity, dtype=float)
    check_positive("peak_flops", peak, "a peak compute rate in FLOP/s")
    check_positive("bandwidth", bw, "a memory bandwidth in bytes/s")
    check_positive("intensity", inten, "an arithmetic intensity in FLOP/byte")
    attain = np.minimum(peak[:, None], bw[:, None] * inten[None, :])
    ridge = peak / bw
    n_dev, n_work = attain.shape
    devices = np.asarray(device_names if device_names is not None else np.arange(n_dev))
    workloads = np.asarray(workload_names if workload_names is not None else np.arange(n_work))
    with np.errstate(invalid="ignore"):
        memory_bound = inten[None, :] < ridge[:, None]
    label = np.where(np.isnan(attain), "unknown", np.where(memory_bound, "memory", "compute"))
    return pd.DataFrame(
        {
            "device": np.repeat(devices, n_work),
            "workload": np.tile(workloads, n_dev),
            "intensity": np.tile(inten, n_dev),
            "ridge_point": np.repeat(ridge, n_work),
            "attainable_flops": attain.ravel(),
            "fraction_of_peak": (attain / peak[:, None]).ravel(),
            "bound": label.ravel(),
        }
    )
