"""Timing torch work: device synchronisation, warm-up, median of timed calls.

* :func:`measure_seconds` -- seconds per call of a function, CUDA events on a GPU,
  ``time.perf_counter`` around a synchronised call on CPU and MPS;
* :class:`_Float32Precision` -- torch's fp32 matmul precision for a block (true fp32
  or TF32), restored afterwards.

Reference: PyTorch documentation, *Benchmark Utils - torch.utils.benchmark*
(warm-up, synchronisation, thread count, median of replicates) and *CUDA
semantics* (asynchronous execution, CUDA events for timing).
"""

from __future__ import annotations

import time

from ..local.devices import import_torch, resolve_device
from ..units import NANO, ms_to_s

__all__ = ["measure_seconds"]


def _synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def measure_seconds(fn, device=None, *, warmup=2, min_repeats=3, max_repeats=50, budget_s=1.0):
    """Seconds per call of ``fn()``, one figure per timed call (take the median).

    Method (as ``torch.utils.benchmark`` and MAMF practice): ``warmup`` untimed
    calls (lazy initialisation, kernel selection, caches), then timed calls with
    device synchronisation -- CUDA events recorded around each call on a GPU
    (device-side time), ``time.perf_counter`` around a synchronised call on CPU and
    MPS. The number of timed calls adapts to the first one so the whole
    measurement takes about ``budget_s`` seconds, within ``[min_repeats,
    max_repeats]``.
    """
    torch = import_torch()
    device = resolve_device(device)
    for name, value in (("warmup", warmup), ("min_repeats", min_repeats), ("max_repeats", max_repeats)):
        if not isinstance(value, int) or value < (0 if name == "warmup" else 1):
            raise ValueError(f"{name} must be a whole number >= {0 if name == 'warmup' else 1}; got {value!r}")
    if max_repeats < min_repeats:
        raise ValueError(f"max_repeats ({max_repeats}) must be >= min_repeats ({min_repeats})")
    if not budget_s > 0:
        raise ValueError(f"budget_s must be a time in seconds > 0; got {budget_s!r}")

    if device.type == "cuda":
        def timed():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return ms_to_s(start.elapsed_time(end))
    else:
        def timed():
            _synchronize(torch, device)
            t0 = time.perf_counter()
            fn()
            _synchronize(torch, device)
            return time.perf_counter() - t0

    for _ in range(warmup):
        fn()
    _synchronize(torch, device)
    times = [timed()]
    repeats = int(budget_s / max(times[0], NANO))
    repeats = max(min_repeats, min(max_repeats, repeats))
    times += [timed() for _ in range(repeats - 1)]
    return times


class _Float32Precision:
    """Context: torch's fp32 matmul precision ('highest' = true fp32, 'high' = TF32 on GPUs)."""

    def __init__(self, torch, precision):
        self.torch, self.precision, self.before = torch, precision, None

    def __enter__(self):
        self.before = self.torch.get_float32_matmul_precision()
        self.torch.set_float32_matmul_precision(self.precision)

    def __exit__(self, *exc):
        self.torch.set_float32_matmul_precision(self.before)
