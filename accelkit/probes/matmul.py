"""Dense matrix-multiply throughput per number format: the maximum achievable matmul FLOPS.

* :func:`time_matmul` -- one M x N x K product timed (2·M·N·K FLOP per call);
* :func:`matmul_flops` -- every format over a few shapes, best shape reported.

Units: FLOP/s (OP/s for int8), seconds.

References: NVIDIA's *Matrix Multiplication Background User's Guide* (2·M·N·K, tile
and wave quantisation), S. Bekman's MAMF finder, B. Sander (AMD ROCm blog, 2025);
full entries in :mod:`accelkit.probes`.
"""

from __future__ import annotations

import math
import statistics

from ..local.devices import import_torch, resolve_device
from ._base import _check_fraction, _cleanup, _failure_note, _finish, _guard, _row, _settings, _Skipped
from .results import MATMUL_DTYPES
from .timing import _Float32Precision, measure_seconds

__all__ = ["time_matmul", "matmul_flops"]

_TORCH_DTYPES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}
_ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
_OUT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 2, "int8": 4}


def _check_dtype(dtype):
    if dtype not in MATMUL_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(MATMUL_DTYPES)}; got {dtype!r}")
    return dtype


def _check_shape(shape):
    try:
        m, n, k = (int(v) for v in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be three whole numbers (M, N, K); got {shape!r}") from None
    if min(m, n, k) < 1:
        raise ValueError(f"shape must be three whole numbers >= 1 (M, N, K); got {shape!r}")
    return m, n, k


def _matmul_call(torch, device, dtype, m, n, k, seed=0):
    """(call, note) for one M x N x K product in ``dtype`` on ``device``."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    if dtype == "tf32" and device.type != "cuda":
        raise _Skipped("not supported: TF32 is a tensor-core mode of NVIDIA (Ampere and later) and AMD GPUs; "
                       "CPU and MPS matmuls run in fp32")
    if dtype in _TORCH_DTYPES:
        tdt = getattr(torch, _TORCH_DTYPES[dtype])
        a = torch.randn(m, k, generator=gen).to(device=device, dtype=tdt)
        b = torch.randn(k, n, generator=gen).to(device=device, dtype=tdt)
        c = torch.empty(m, n, device=device, dtype=tdt)
        return (lambda: torch.mm(a, b, out=c)), "torch.mm"
    if dtype == "fp8":
        if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
            raise _Skipped(f"not supported: torch {torch.__version__} has no float8_e4m3fn / _scaled_mm")
        a = torch.randn(m, k, generator=gen).to(device=device, dtype=torch.float8_e4m3fn)
        b = torch.randn(n, k, generator=gen).to(device=device, dtype=torch.float8_e4m3fn).t()  # column-major
        one = torch.tensor(1.0, device=device)
        call = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        note = "torch._scaled_mm e4m3 x e4m3 -> bf16"
        if device.type == "cpu":
            note += "; CPUs without FP8 units convert the inputs, so this is not a hardware FP8 rate"
        return call, note
    if dtype == "int8":
        if not hasattr(torch, "_int_mm"):
            raise _Skipped(f"not supported: torch {torch.__version__} has no _int_mm")
        a = torch.randint(-128, 128, (m, k), generator=gen, dtype=torch.int8).to(device)
        # column-major B, as for fp8: cuBLASLt's int8 tensor-core kernels take A row-major and B
        # column-major ("TN"); a row-major B measured 129 TOP/s on an H200 (7 % of its peak)
        b = torch.randint(-128, 128, (n, k), generator=gen, dtype=torch.int8).to(device).t()
        note = "torch._int_mm int8 x int8 -> int32, B column-major"
        if device.type == "cpu":
            note += " (CPU kernel; the catalogue's int8 figures are for matrix engines)"
        return (lambda: torch._int_mm(a, b)), note
    raise ValueError(f"dtype must be one of {', '.join(MATMUL_DTYPES)}; got {dtype!r}")


def time_matmul(m, n, k, dtype="fp32", device=None, *, warmup=2, min_repeats=3, max_repeats=50, budget_s=1.0):
    """Time one M x N x K matrix product in ``dtype``; returns a dict.

    Keys: ``seconds`` (median per call), ``times`` (every timed call, s),
    ``flop`` (2·M·N·K, the count in NVIDIA's GEMM guide), ``flops``
    (``flop / seconds``, FLOP/s or OP/s) and ``note``. Timing as
    :func:`measure_seconds`. The output buffer is preallocated (``torch.mm(out=)``)
    so the allocator is not timed. ``tf32`` sets torch's fp32 matmul precision to
    'high' for the call (GPUs only); ``fp32`` sets 'highest'.
    """
    torch = import_torch()
    device = resolve_device(device)
    dtype = _check_dtype(dtype)
    m, n, k = _check_shape((m, n, k))
    call, note = _matmul_call(torch, device, dtype, m, n, k)
    with _Float32Precision(torch, "high" if dtype == "tf32" else "highest"):
        times = measure_seconds(call, device, warmup=warmup, min_repeats=min_repeats, max_repeats=max_repeats,
                                budget_s=budget_s)
    seconds = statistics.median(times)
    flop = 2.0 * m * n * k
    return {"seconds": seconds, "times": times, "flop": flop, "flops": flop / seconds, "note": note}


def _matmul_rows(torch, device, dtype, settings, memory_fraction):
    """Rows of one dtype over the shapes; the fastest shape's note says 'best of N'."""
    unit = "OP/s" if dtype == "int8" else "FLOP/s"
    rows, skipped, last, last_flop = [], [], None, None
    for m, n, k in settings["shapes"]:
        shape = f"{m}x{n}x{k}"
        flop = 2.0 * m * n * k
        try:
            nbytes = (m * k + k * n) * _ELEMENT_BYTES[dtype] + m * n * _OUT_BYTES[dtype]
            _guard(nbytes, device, memory_fraction, f"a {shape} {dtype} matmul")
        except _Skipped as exc:
            rows.append(_row("matmul", dtype, shape, float("nan"), unit, _failure_note(exc)))
            continue
        if last is not None:
            predicted = last * flop / last_flop * (settings["warmup"] + 3)
            if predicted > 4 * settings["budget_s"]:
                skipped.append(f"{shape} (about {predicted / (settings['warmup'] + 3):.2f} s a call)")
                continue
        try:
            result = time_matmul(m, n, k, dtype, device, warmup=settings["warmup"], min_repeats=3,
                                 max_repeats=settings["max_repeats"], budget_s=settings["budget_s"])
        except Exception as exc:  # unsupported dtype, OOM: record and go on
            rows.append(_row("matmul", dtype, shape, float("nan"), unit, _failure_note(exc)))
            _cleanup(torch, device)
            if isinstance(exc, _Skipped) and exc.args[0].startswith("not supported"):
                break  # the same for every shape
            continue
        last, last_flop = result["seconds"], flop
        rows.append(_row("matmul", dtype, shape, result["flops"], unit,
                         f"{result['note']}; median of {len(result['times'])} calls"))
        _cleanup(torch, device)
    measured = [r for r in rows if math.isfinite(r["measured"])]
    if measured:
        best = max(measured, key=lambda r: r["measured"])
        best["note"] = (f"best of {len(measured)} shapes (MAMF); " if len(measured) > 1 else "one shape; ") + best["note"]
        if skipped:
            best["note"] += "; larger shapes skipped in this mode: " + ", ".join(skipped)
    return rows


def matmul_flops(dtypes=MATMUL_DTYPES, device=None, quick=True, shapes=None, memory_fraction=0.25):
    """Dense matmul throughput per number format, in FLOP/s (OP/s for int8).

    Method (MAMF practice; NVIDIA GEMM guide): for each dtype and each shape
    (M, N, K) -- a few sizes, scaled down in quick mode -- build random operands on
    the device, run warm-up calls, then time repeated ``torch.mm`` (fp32, tf32,
    bf16, fp16), ``torch._scaled_mm`` (fp8 e4m3, unit scales) or
    ``torch._int_mm`` (int8 -> int32) calls with device synchronisation and take
    the median; throughput = 2·M·N·K / median seconds. The fastest shape of each
    dtype is the device's *maximum achievable* figure (its note says "best of N
    shapes"). Shapes whose time would blow the mode's budget are skipped (the note
    says which). A format the device or torch cannot run gives a row with
    ``measured`` NaN and the reason in ``note`` (e.g. TF32 on a CPU); so does a
    shape the memory guard refuses (more than ``memory_fraction`` of free memory)
    or an out-of-memory error.

    Returns a DataFrame with :data:`COLUMNS`.
    """
    torch = import_torch()
    device = resolve_device(device)
    memory_fraction = _check_fraction(memory_fraction)
    settings = dict(_settings(device, quick))
    if shapes is not None:
        settings["shapes"] = [_check_shape(s) for s in shapes]
    rows = []
    for dtype in dtypes:
        rows += _matmul_rows(torch, device, _check_dtype(dtype), settings, memory_fraction)
    return _finish(rows, device)
