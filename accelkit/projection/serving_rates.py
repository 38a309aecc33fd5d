"""The achievable rates a serving projection runs on, per device and level, and its stack.

:func:`serving_rates` gathers, from :func:`~accelkit.projection.ceilings.ceilings_for`'s
table, what :func:`~accelkit.projection.inference.serve_core` reads: the matmul rates
(the compute precision's and bf16's for attention), memory bandwidth, the all-reduce's
bus bandwidth over the link and over PCIe, and NCCL's measured small-message latency.

:func:`llm_stack_limits` adds the serving engine of each device (``data/stacks.csv``,
workload ``llm``; the vendor's default unless ``stack=`` names one) and the largest
tensor-parallel all-reduce its custom kernel takes: vLLM runs its own all-reduce below
``max_size`` (8 MiB) on NVLink / xGMI or two GPUs and falls back to NCCL above
it ([1]_); SGLang the same, 16 MiB on ROCm ([2]_). A stack with no stated limit
(TensorRT-LLM, whose AUTO strategy picks its kernels itself; the vendors' own) keeps the
engine's fitted latencies: infinity here.

References
----------
.. [1] vLLM, ``vllm/distributed/device_communicators/custom_all_reduce.py``
   (``CustomAllreduce.should_custom_ar``).
.. [2] SGLang, ``python/sglang/srt/distributed/device_communicators/custom_all_reduce.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["serving_rates", "llm_stack_limits", "llm_stack_why"]


def serving_rates(ceil, compute_precision, level=""):
    """Achievable rates per device as column arrays (shape (devices, 1)) for ``serve_core``.

    ``level`` ``""``, ``"_low"`` or ``"_high"``: the ceilings' spread; the all-reduce
    latency runs the other way (a slow level takes the high latency).
    Returns ``mm``, ``mm_attn`` [FLOP/s], ``bw``, ``ar_bw``, ``ar_bw_pcie`` [bytes/s],
    ``link_max`` (devices one link joins), ``linked`` (a scale-up link, not PCIe alone) and ``ar_lat`` [s].
    """
    attn = ceil[f"matmul_bf16{level}"].fillna(ceil[f"matmul_fp16{level}"])
    if compute_precision in ("fp32", "tf32"):
        attn = ceil[f"matmul_{compute_precision}{level}"]
    lat_level = {"": "", "_low": "_high", "_high": "_low"}[level]
    return {"mm": ceil[f"matmul_{compute_precision}{level}"].to_numpy(dtype=float)[:, None],
            "mm_attn": attn.to_numpy(dtype=float)[:, None],
            "bw": ceil[f"memory_bw{level}"].to_numpy(dtype=float)[:, None],
            "ar_bw": ceil[f"allreduce_bw{level}"].to_numpy(dtype=float)[:, None],
            "ar_bw_pcie": ceil[f"allreduce_bw_pcie{level}"].to_numpy(dtype=float)[:, None],
            "link_max": ceil["link_max_devices"].to_numpy(dtype=float)[:, None],
            # a scale-up link (NVLink, xGMI, a bridge), not PCIe alone: vLLM's "fully connected"
            "linked": ~ceil["link_kind"].astype(str).str.startswith("PCIe").to_numpy()[:, None],
            "ar_lat": ceil[f"allreduce_latency_s{lat_level}"].to_numpy(dtype=float)[:, None]}


def llm_stack_limits(ceil, stack=None, catalog=None):
    """The serving stack of each device and its custom all-reduce's size limit.

    Parameters
    ----------
    ceil : DataFrame
        :func:`~accelkit.projection.ceilings.ceilings_for`'s table (``name``).
    stack : str, optional
        A stack of ``data/stacks.csv`` serving ``llm`` (``tensorrt-llm``, ``vllm``,
        ``sglang``, ``vendor-serving``) for every device; ``None``: each device's
        vendor's default (TensorRT-LLM on NVIDIA, vLLM on AMD, the vendor's own elsewhere).

    Returns
    -------
    (names, car_max)
        ``names``: the stack per device (object array); ``car_max``: the largest
        all-reduce [bytes] its custom kernel takes, shape (devices, 1); ``inf`` where the
        stack states none (the engine's fitted latencies for every size). An AMD part
        takes the stack's ROCm figure.
    """
    from ..catalog import load_catalog
    from .stacks import default_stack, stack_row

    vendors = (load_catalog() if catalog is None else catalog).set_index("name")["vendor"]
    vendor = np.array([vendors.get(n, "") for n in ceil["name"]], dtype=object)
    if stack is not None:
        names = np.full(len(ceil), stack_row(stack, workload="llm")["stack"], dtype=object)
    else:
        names = np.array([default_stack(v, workload="llm") for v in vendor], dtype=object)
    rows = {s: stack_row(s, workload="llm") for s in set(names)}
    # the engines' custom all-reduce kernels are CUDA's and ROCm's: elsewhere (vLLM on Gaudi, TPU, Ascend) the
    # vendor's collectives run every size, priced as vendor-serving's (the fitted latencies)
    limit = np.array([rows[s]["custom_allreduce_max_bytes_rocm"] if v == "AMD" else
                      rows[s]["custom_allreduce_max_bytes"] if v == "NVIDIA" else np.nan
                      for s, v in zip(names, vendor)], dtype=float)
    return names, np.where(np.isfinite(limit), limit, np.inf)[:, None]


def llm_stack_why(names, stack, ceil, catalog=None):
    """Per device: "" where its serving stack runs on it, else why not (:func:`~accelkit.projection.stacks.stack_not_run_why`).
    Only a stack asked for by name is checked: each vendor's default runs on its own parts."""
    from .stacks import stack_not_run_why

    if stack is None:
        return np.full(len(ceil), "", dtype=object)
    return stack_not_run_why(names, ceil["name"], catalog)
