"""Short PyTorch probes of the machine you are sitting at, next to its datasheet.

A datasheet peak is what the silicon could do if every multiplier were busy on
every clock; what a program gets is lower, and how much lower depends on the
matrix shapes, the number format, the memory system and the software. These
probes measure the three things that decide most of it, with small, repeatable
experiments, and put each figure next to the catalogue's datasheet value:

* :func:`inventory` -- the devices torch sees (CUDA, ROCm through torch's CUDA
  API, Apple MPS, the CPU), with NVML details where an NVIDIA driver is present,
  and the matching catalogue row;
* :func:`matmul_flops` -- dense matrix-multiply throughput per number format over a
  few shapes, best shape reported: the *maximum achievable matmul FLOPS* (MAMF)
  practice of S. Bekman's *ml-engineering* (``mamf-finder.py``), with the shape
  effects explained in NVIDIA's *Matrix Multiplication Background User's Guide*;
* :func:`memory_bandwidth` -- device copy and read bandwidth, STREAM-style
  (McCalpin), and host<->device copies from pinned memory on a GPU;
* :func:`precision_probe` -- a small MLP and a small transformer block (built in
  code, fixed seed, nothing downloaded) in fp32, bf16/fp16 autocast and int8
  dynamic quantisation: time per batch and output error against fp32;
* :class:`UtilizationSampler` -- NVML utilisation and power sampled in a
  background thread while something runs (the "is my GPU starved?" question).

:func:`run_all` runs them all and returns one tidy DataFrame (:data:`COLUMNS`);
:func:`save_results` / :func:`load_results` keep it as JSON; :func:`calibration`
turns it into measured/datasheet ratios for the projections.

Units are SI throughout: FLOP/s (OP/s for integer formats), bytes/s, seconds,
watts. torch is imported inside the functions, so ``import accelkit.probes`` is
cheap and works without torch; without torch every probe raises
:class:`ProbeUnavailable` saying how to install it. Without a GPU the probes run on
the CPU and say so. Nothing here touches the network.

References
----------
- NVIDIA, *Matrix Multiplication Background User's Guide* (DU-09799-001, Deep
  Learning Performance documentation, 2023): FLOPs of a GEMM (2·M·N·K), tile and
  wave quantisation -- why throughput depends on the shape.
- S. Bekman, *Machine Learning Engineering*, "Maximum Achievable Matmul FLOPS
  (MAMF) Finder" (github.com/stas00/ml-engineering, compute/accelerator/benchmarks).
- B. Sander, *Understanding Peak, Max-Achievable & Delivered FLOPs*, AMD ROCm
  blog (2025).
- J. D. McCalpin, *Memory Bandwidth and Machine Balance in Current High
  Performance Computers*, IEEE TCCA Newsletter (1995) -- the STREAM benchmark:
  arrays larger than the caches, read and written bytes both counted.
- PyTorch documentation, *Benchmark Utils - torch.utils.benchmark* (warm-up,
  synchronisation, thread count, median of replicates) and *CUDA semantics*
  (asynchronous execution, CUDA events for timing).
- NVIDIA, *NVML API Reference*, ``nvmlUtilization_t``: "percent of time over the
  past sample period during which one or more kernels was executing".
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import platform
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

# One NVML layer for the probes, the ecosystem audit and the monitor: accelkit.monitor.nvml.
from .monitor.nvml import device_info as nvml_info  # public name of this module
from .monitor.nvml import handle as _nvml_handle
from .monitor.nvml import init as _nvml
from .monitor.nvml import reason as _nvml_reason  # noqa: F401
from .monitor.nvml import text as _text  # noqa: F401

__all__ = [
    "ProbeUnavailable",
    "INSTALL_HINT",
    "COLUMNS",
    "MATMUL_DTYPES",
    "BF16_REL_L2_BOUND",
    "torch_available",
    "resolve_device",
    "available_devices",
    "inventory",
    "nvml_info",
    "free_memory_bytes",
    "measure_seconds",
    "time_matmul",
    "matmul_flops",
    "memory_bandwidth",
    "precision_probe",
    "precision_table",
    "UtilizationSampler",
    "sample_utilization",
    "run_all",
    "save_results",
    "load_results",
    "calibration",
    "calibrated_utilization",
    "example_results",
    "load_example_results",
    "format_value",
    "display_table",
]

INSTALL_HINT = "install the probe extra: pip install 'accelkit[probe]' (or torch==2.13.0 on this kind of machine)"

#: columns of every probe result frame, in order
COLUMNS = [
    "probe", "dtype", "shape", "measured", "unit", "datasheet", "ratio",
    "device", "device_name", "torch_version", "timestamp", "note",
]

#: number formats the matmul probe tries, in order
MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")

#: documented upper bound of the relative L2 error of bf16 autocast against fp32
#: for the precision probe's models. bf16 keeps 8 significant bits (unit roundoff
#: u = 2**-8 ≈ 3.9e-3); autocast rounds inputs and weights to bf16 and accumulates
#: in fp32, so each layer adds an error of a few u. Measured here: ~4e-3 (MLP) and
#: ~6e-3 (transformer block); the bound leaves room for other CPUs and GPUs.
BF16_REL_L2_BOUND = 0.05

RESULTS_FORMAT = "accelkit-probe-results"
RESULTS_VERSION = 1

_MIB = 1 << 20


class ProbeUnavailable(RuntimeError):
    """The probes cannot run here: torch is missing, or the asked-for device is absent."""


class _Skipped(RuntimeError):
    """A measurement left out on purpose (memory guard, not applicable); the message says why."""


# --- torch, devices -----------------------------------------------------------------

def _torch():
    try:
        import torch
    except ImportError as exc:  # also `sys.modules["torch"] = None`
        raise ProbeUnavailable(f"PyTorch is not installed ({exc}), so the probes cannot run; {INSTALL_HINT}") from None
    return torch


def torch_available():
    """True when torch imports (imports it: ~1-2 s the first time)."""
    try:
        _torch()
    except ProbeUnavailable:
        return False
    return True


def resolve_device(device=None):
    """The torch device to probe.

    ``None``, ``""`` or ``"auto"`` pick the best available: the first CUDA/ROCm GPU,
    else Apple MPS, else the CPU. Raises ``ValueError`` for a malformed name and
    :class:`ProbeUnavailable` for a device this machine does not have.
    """
    torch = _torch()
    if device is None or (isinstance(device, str) and device.strip().lower() in ("", "auto")):
        if torch.cuda.is_available():
            return torch.device("cuda", 0)
        if _mps_available(torch):
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device.strip() if isinstance(device, str) else device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(
            f"device must be a torch device such as 'cpu', 'cuda:0' or 'mps'; got {device!r}"
        ) from None
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ProbeUnavailable(
                f"device={device!r}: torch {torch.__version__} sees no CUDA/ROCm GPU "
                "(torch.cuda.is_available() is False); leave device empty to probe the CPU"
            )
        index = 0 if dev.index is None else dev.index
        count = torch.cuda.device_count()
        if index >= count:
            raise ValueError(f"device={device!r}: this machine has {count} GPU(s), cuda:0 to cuda:{count - 1}")
        return torch.device("cuda", index)
    if dev.type == "mps":
        if not _mps_available(torch):
            raise ProbeUnavailable(f"device={device!r}: Apple MPS is not available in this torch build or machine")
        return torch.device("mps")
    raise ValueError(f"device={device!r}: the probes support cpu, cuda[:N] (NVIDIA or AMD ROCm) and mps")


def _mps_available(torch):
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def available_devices():
    """Device names the probes can use here, best first (``['cuda:0', …, 'cpu']``)."""
    torch = _torch()
    names = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    if _mps_available(torch):
        names.append("mps")
    return names + ["cpu"]


def _device_str(device):
    return f"{device.type}:{device.index}" if device.index is not None else device.type


def _synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


# --- host facts (no psutil) ---------------------------------------------------------

def _meminfo_bytes(key):
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _host_available_bytes():
    """Memory the OS could hand out now, in bytes (MemAvailable, else free pages)."""
    available = _meminfo_bytes("MemAvailable")
    if available:
        return available
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _host_total_bytes():
    total = _meminfo_bytes("MemTotal")
    if total:
        return total
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _cpu_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _last_level_cache_bytes():
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    best = 0
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            text = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": 1024, "M": _MIB, "G": 1 << 30}.get(text[-1:], 1)
        try:
            best = max(best, int(text.rstrip("KMG")) * scale)
        except ValueError:
            continue
    return best or None


def free_memory_bytes(device=None):
    """Free memory on ``device`` now, in bytes.

    GPU: ``torch.cuda.mem_get_info``; CPU and MPS (unified memory): the host's
    ``MemAvailable`` from /proc/meminfo, else ``os.sysconf('SC_AVPHYS_PAGES')`` x
    page size. ``None`` when nothing can tell.
    """
    torch = _torch()
    device = resolve_device(device)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    return _host_available_bytes()


def _check_fraction(memory_fraction):
    if not isinstance(memory_fraction, (int, float)) or not 0 < memory_fraction <= 1:
        raise ValueError(f"memory_fraction must be a fraction in (0, 1]; got {memory_fraction!r}")
    return float(memory_fraction)


def _guard(nbytes, device, memory_fraction, what):
    """Raise _Skipped when ``nbytes`` exceeds ``memory_fraction`` of the free memory."""
    free = free_memory_bytes(device)
    if free is None:
        return
    allowed = memory_fraction * free
    if nbytes > allowed:
        raise _Skipped(
            f"skipped by the memory guard: {what} needs {nbytes / 1e9:.2f} GB, more than "
            f"{memory_fraction:.0%} of the {free / 1e9:.2f} GB free"
        )


#: PCIe transfer rate per lane [GT/s] and line-code efficiency, per generation (PCI-SIG)
_PCIE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130), 5: (32.0, 128 / 130),
         6: (64.0, 242 / 256)}


def _pcie_bytes_per_s(gen, width):
    """Theoretical one-direction PCIe bandwidth in bytes/s: GT/s x encoding / 8 bits x lanes."""
    try:
        rate, efficiency = _PCIE[int(gen)]
        return rate * 1e9 * efficiency / 8 * int(width)
    except (KeyError, TypeError, ValueError):
        return float("nan")


# --- inventory ----------------------------------------------------------------------

def _catalogue_match(name):
    """(catalogue row name or '', text for the catalogue_match column)."""
    from .catalog import CatalogError, find

    try:
        row = find(name)
    except CatalogError as exc:
        text = str(exc)
        if "closest:" in text:
            return "", "not in the catalogue; closest: " + text.split("closest:", 1)[1].strip()
        if "matches several" in text:
            return "", "ambiguous in the catalogue: " + text.split("matches several devices:", 1)[-1].strip()
        return "", "not in the catalogue"
    return row["name"], row["name"]


def _pci_bus_id(props):
    try:
        return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    except AttributeError:
        return None


def inventory():
    """The devices torch sees on this machine, one row each (GPUs first, the CPU last).

    Columns: ``device`` (torch name), ``kind`` (gpu|mps|cpu), ``name``,
    ``memory_bytes``, ``compute_capability`` (CUDA ``major.minor``; the gfx
    architecture on ROCm), ``multiprocessors``, ``cuda_version``, ``hip_version``,
    ``driver_version``, ``cpu_model``, ``cpu_cores`` (usable logical cores),
    ``torch_threads``, ``torch_version``; the NVML fields of :func:`nvml_info`
    where an NVIDIA driver answers (power limit [W], max clocks [Hz], temperature
    [°C], utilisation [%], PCIe generation/width) and ``nvml_note`` otherwise;
    ``catalogue_name`` (the matched catalogue row, or "") and ``catalogue_match``
    (that name, or "not in the catalogue; closest: …").
    """
    torch = _torch()
    rows = []
    common = {
        "cuda_version": torch.version.cuda or "",
        "hip_version": getattr(torch.version, "hip", None) or "",
        "torch_version": torch.__version__,
        "cpu_model": _cpu_model(),
        "cpu_cores": _cpu_cores(),
        "torch_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            hip = bool(common["hip_version"])
            capability = getattr(props, "gcnArchName", "") if hip else f"{props.major}.{props.minor}"
            row = {
                "device": f"cuda:{index}", "kind": "gpu", "name": props.name,
                "memory_bytes": int(props.total_memory), "compute_capability": capability,
                "multiprocessors": int(props.multi_processor_count), **common,
            }
            if hip:
                row["nvml_note"] = "NVML is NVIDIA-only; use rocm-smi for AMD GPUs"
            else:
                row.update(nvml_info(index, _pci_bus_id(props)))
            rows.append(row)
    if _mps_available(torch):
        rows.append({"device": "mps", "kind": "mps", "name": f"Apple GPU (MPS) on {platform.machine()}",
                     "memory_bytes": _host_total_bytes(), "compute_capability": "", "multiprocessors": None,
                     **common, "nvml_note": "NVML is NVIDIA-only"})
    cpu = {"device": "cpu", "kind": "cpu", "name": common["cpu_model"], "memory_bytes": _host_total_bytes(),
           "compute_capability": "", "multiprocessors": None, **common}
    cpu["nvml_note"] = "" if rows else nvml_info().get("nvml_note", "")
    rows.append(cpu)
    for row in rows:
        row["catalogue_name"], row["catalogue_match"] = _catalogue_match(row["name"])
    frame = pd.DataFrame(rows)
    first = ["device", "kind", "name", "catalogue_match", "memory_bytes", "compute_capability"]
    return frame[first + [c for c in frame.columns if c not in first]]


def _inventory_row(device, inv):
    key = _device_str(device)
    match = inv[inv["device"] == key]
    if match.empty and device.type == "cuda":
        match = inv[inv["device"] == f"cuda:{device.index or 0}"]
    return match.iloc[0] if not match.empty else inv.iloc[-1]


# --- timing -------------------------------------------------------------------------

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
    torch = _torch()
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
            return start.elapsed_time(end) / 1e3
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
    repeats = int(budget_s / max(times[0], 1e-9))
    repeats = max(min_repeats, min(max_repeats, repeats))
    times += [timed() for _ in range(repeats - 1)]
    return times


# --- matmul -------------------------------------------------------------------------

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


class _Float32Precision:
    """Context: torch's fp32 matmul precision ('highest' = true fp32, 'high' = TF32 on GPUs)."""

    def __init__(self, torch, precision):
        self.torch, self.precision, self.before = torch, precision, None

    def __enter__(self):
        self.before = self.torch.get_float32_matmul_precision()
        self.torch.set_float32_matmul_precision(self.precision)

    def __exit__(self, *exc):
        self.torch.set_float32_matmul_precision(self.before)


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
        b = torch.randint(-128, 128, (k, n), generator=gen, dtype=torch.int8).to(device)
        note = "torch._int_mm int8 x int8 -> int32"
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
    torch = _torch()
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


def _settings(device, quick):
    gpu = device.type in ("cuda", "mps")
    if gpu and quick:
        return {"shapes": [(2048,) * 3, (4096,) * 3, (8192, 8192, 4096)], "budget_s": 0.4, "max_repeats": 200,
                "warmup": 3, "copy_bytes": 512 * _MIB, "h2d_bytes": 256 * _MIB,
                "mlp": (256, 1024, 4096), "block": (8, 256, 512, 8, 2048)}
    if gpu:
        return {"shapes": [(4096,) * 3, (8192,) * 3, (8192, 8192, 4096), (16384, 8192, 8192)], "budget_s": 1.5,
                "max_repeats": 500, "warmup": 5, "copy_bytes": 2048 * _MIB, "h2d_bytes": 1024 * _MIB,
                "mlp": (1024, 4096, 16384), "block": (16, 512, 1024, 16, 4096)}
    llc = _last_level_cache_bytes() or 32 * _MIB
    if quick:
        return {"shapes": [(256,) * 3, (512,) * 3, (1024,) * 3], "budget_s": 0.3, "max_repeats": 20, "warmup": 1,
                "copy_bytes": max(64 * _MIB, 2 * llc), "h2d_bytes": 0,
                "mlp": (64, 256, 1024), "block": (4, 64, 128, 4, 512)}
    return {"shapes": [(512,) * 3, (1024,) * 3, (2048,) * 3], "budget_s": 1.5, "max_repeats": 50, "warmup": 2,
            "copy_bytes": max(256 * _MIB, 4 * llc), "h2d_bytes": 0,
            "mlp": (256, 1024, 4096), "block": (8, 128, 256, 8, 1024)}


def _row(probe, dtype, shape, measured, unit, note=""):
    return {"probe": probe, "dtype": dtype, "shape": shape, "measured": float(measured), "unit": unit, "note": note}


def _failure_note(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, _Skipped):
        return text
    return f"failed: {type(exc).__name__}: {text}"[:300]


def _cleanup(torch, device):
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _matmul_rows(torch, device, dtype, settings, memory_fraction):
    """Rows of one dtype over the shapes; the fastest shape's note says 'best of N'."""
    unit = "OP/s" if dtype == "int8" else "FLOP/s"
    rows, skipped, last = [], [], None
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
    torch = _torch()
    device = resolve_device(device)
    memory_fraction = _check_fraction(memory_fraction)
    settings = dict(_settings(device, quick))
    if shapes is not None:
        settings["shapes"] = [_check_shape(s) for s in shapes]
    rows = []
    for dtype in dtypes:
        rows += _matmul_rows(torch, device, _check_dtype(dtype), settings, memory_fraction)
    return _finish(rows, device)


# --- memory bandwidth ---------------------------------------------------------------

def _bandwidth_rows(torch, device, kind, settings, memory_fraction):
    nbytes = settings["copy_bytes"]
    label = f"{nbytes / _MIB:.0f} MiB"
    budget = dict(warmup=settings["warmup"], min_repeats=3, max_repeats=settings["max_repeats"],
                  budget_s=settings["budget_s"])
    if kind in ("memory_copy", "memory_read"):
        need = 2 * nbytes if kind == "memory_copy" else nbytes
        _guard(need, device, memory_fraction, f"the {kind} buffers")
        src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        if kind == "memory_copy":
            dst = torch.empty_like(src)
            times = measure_seconds(lambda: dst.copy_(src), device, **budget)
            moved, note = 2 * nbytes, "dst.copy_(src): bytes read + bytes written per second (STREAM Copy counting)"
        else:
            times = measure_seconds(lambda: src.sum(), device, **budget)
            moved, note = nbytes, "src.sum(): bytes read per second"
        return [_row(kind, "fp32", label, moved / statistics.median(times), "B/s",
                     f"{note}; median of {len(times)} calls")]
    # host <-> device
    if device.type == "cpu":
        return [_row(kind, "fp32", "", float("nan"), "B/s",
                     "not applicable: the probed device is the CPU, so there is no host-device copy")]
    nbytes = settings["h2d_bytes"]
    label = f"{nbytes / _MIB:.0f} MiB"
    _guard(nbytes, device, memory_fraction, "the host-device buffer")
    pin = device.type == "cuda"
    host = torch.ones(nbytes // 4, dtype=torch.float32, pin_memory=pin)
    dev = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
    if kind == "host_to_device":
        times = measure_seconds(lambda: dev.copy_(host, non_blocking=pin), device, **budget)
    else:
        times = measure_seconds(lambda: host.copy_(dev, non_blocking=pin), device, **budget)
    note = ("pinned" if pin else "pageable") + f" host memory; bytes per second one way; median of {len(times)} calls"
    return [_row(kind, "fp32", label, nbytes / statistics.median(times), "B/s", note)]


_BANDWIDTH_KINDS = ("memory_copy", "memory_read", "host_to_device", "device_to_host")


def memory_bandwidth(device=None, quick=True, memory_fraction=0.25, kinds=_BANDWIDTH_KINDS):
    """Memory bandwidth in bytes/s: device copy, device read, host<->device.

    Method (STREAM, McCalpin): buffers several times larger than the last-level
    cache (64-256 MiB on a CPU, 512 MiB-2 GiB on a GPU), warm-up, median of timed
    calls with device synchronisation. *Copy* counts the bytes read plus the bytes
    written (2 x buffer) per second, as STREAM's Copy kernel does (write-allocate
    traffic is not counted); *read* is a sum reduction over the buffer (buffer
    bytes per second). *host_to_device* / *device_to_host* copy one buffer between
    pinned host memory and the GPU (one direction, bytes per second); on a CPU
    they are rows with NaN and the reason. The datasheet figure for copy and read
    is the catalogue's ``memory_bw_gbs``; for host copies, the theoretical PCIe
    link rate NVML reports (generation x width).

    Returns a DataFrame with :data:`COLUMNS`.
    """
    torch = _torch()
    device = resolve_device(device)
    memory_fraction = _check_fraction(memory_fraction)
    settings = _settings(device, quick)
    rows = []
    for kind in kinds:
        if kind not in _BANDWIDTH_KINDS:
            raise ValueError(f"kinds must be among {', '.join(_BANDWIDTH_KINDS)}; got {kind!r}")
        rows += _safe(lambda: _bandwidth_rows(torch, device, kind, settings, memory_fraction),
                      kind, "fp32", "", "B/s", torch, device)
    return _finish(rows, device)


def _safe(produce, probe, dtype, shape, unit, torch, device):
    try:
        return produce()
    except Exception as exc:  # record why and go on
        _cleanup(torch, device)
        return [_row(probe, dtype, shape, float("nan"), unit, _failure_note(exc))]


# --- precision ----------------------------------------------------------------------

def _mlp(torch, d, h):
    nn = torch.nn
    return nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d))


def _transformer_block(torch, d, heads, ff):
    nn = torch.nn

    class Block(nn.Module):
        """Pre-norm transformer block: x + attn(ln(x)); x + mlp(ln(x))."""

        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

        def forward(self, x):
            h = self.norm1(x)
            a, _ = self.attn(h, h, h, need_weights=False)
            x = x + a
            return x + self.mlp(self.norm2(x))

    return Block()


def _models(torch, settings, seed):
    batch, d, h = settings["mlp"]
    b, s, dm, heads, ff = settings["block"]
    torch.manual_seed(seed)
    mlp = _mlp(torch, d, h).eval()
    block = _transformer_block(torch, dm, heads, ff).eval()
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    return [
        ("mlp", f"mlp {batch}x{d}-{h}-{d}", mlp, torch.randn(batch, d, generator=gen)),
        ("transformer", f"transformer {b}x{s}x{dm} h{heads} ff{ff}", block, torch.randn(b, s, dm, generator=gen)),
    ]


PRECISION_MODES = ("fp32", "bf16", "fp16", "int8")


def _error_metrics(torch, out, ref):
    out, ref = out.detach().double().flatten().cpu(), ref.detach().double().flatten().cpu()
    diff = out - ref
    return {
        "max_abs_error": float(diff.abs().max()),
        "rel_l2_error": float(diff.norm() / ref.norm()),
        "cosine": float(torch.dot(out, ref) / (out.norm() * ref.norm())),
    }


def _precision_rows(torch, device, name, label, model, x, mode, settings):
    """Rows for one (model, mode): time per batch [s] and three error figures."""
    base = model.to(device)
    xd = x.to(device)
    with torch.no_grad(), _Float32Precision(torch, "highest"):
        ref = base(xd).float()
        if mode == "fp32":
            run, note = (lambda: base(xd)), "fp32 (reference)"
        elif mode in ("bf16", "fp16"):
            if mode == "fp16" and device.type == "cpu":
                raise _Skipped("not run: fp16 autocast is a GPU mode here (CPUs without fp16 matrix units "
                               "emulate it); bf16 autocast and int8 cover the CPU")
            if not torch.amp.is_autocast_available(device.type):
                raise _Skipped(f"not supported: torch has no autocast for {device.type}")
            tdt = torch.bfloat16 if mode == "bf16" else torch.float16

            def run():
                with torch.autocast(device_type=device.type, dtype=tdt):
                    return base(xd)

            note = f"torch.autocast({device.type}, {tdt}): matmuls in {mode}, accumulation and norms in fp32"
        elif mode == "int8":
            if device.type != "cpu":
                raise _Skipped("not run: torch's dynamic int8 quantisation (torch.ao) runs on the CPU only")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated in favour of torchao
                from torch.ao.quantization import quantize_dynamic

                qmodel = quantize_dynamic(copy.deepcopy(base), {torch.nn.Linear}, dtype=torch.qint8)
            run = lambda: qmodel(xd)  # noqa: E731
            note = ("torch.ao.quantization.quantize_dynamic: nn.Linear weights int8 (per tensor), activations "
                    "quantised per batch; attention projections stay fp32")
        else:
            raise ValueError(f"mode must be one of {', '.join(PRECISION_MODES)}; got {mode!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run()
            metrics = _error_metrics(torch, out.float(), ref)
            times = measure_seconds(run, device, warmup=settings["warmup"], min_repeats=3,
                                    max_repeats=settings["max_repeats"], budget_s=settings["budget_s"])
    seconds = statistics.median(times)
    note += f"; median of {len(times)} batches"
    return [
        _row("precision_time", mode, label, seconds, "s", note),
        _row("precision_max_abs_error", mode, label, metrics["max_abs_error"], "1", "max |y - y_fp32|"),
        _row("precision_rel_l2_error", mode, label, metrics["rel_l2_error"], "1", "||y - y_fp32|| / ||y_fp32||"),
        _row("precision_cosine", mode, label, metrics["cosine"], "1", "cosine similarity of y and y_fp32"),
    ]


def precision_probe(device=None, quick=True, modes=PRECISION_MODES, seed=0):
    """Speed and error of lower precision on two small models, against fp32.

    Models, built in code with a fixed seed (nothing downloaded): an MLP
    (Linear-GELU-Linear) and a pre-norm transformer block (LayerNorm, 4-8 head
    self-attention, GELU MLP), sizes scaled to the device and mode. Modes:
    ``fp32`` (reference, TF32 off), ``bf16`` autocast (CPU and GPU), ``fp16``
    autocast (GPU), ``int8`` dynamic quantisation of the Linear layers
    (``torch.ao.quantization.quantize_dynamic``, CPU). For each: time per batch in
    seconds (median, as :func:`measure_seconds`) and the output error against fp32
    -- max absolute, relative L2 (``||y - y32|| / ||y32||``) and cosine similarity
    (dimensionless, unit "1"). A mode that cannot run gives NaN rows with the
    reason. bf16's relative L2 error stays below :data:`BF16_REL_L2_BOUND`
    (Micikevicius et al., *Mixed Precision Training*, 2018, for why fp32
    accumulation keeps it small).

    Returns a DataFrame with :data:`COLUMNS`; :func:`precision_table` pivots it.
    """
    torch = _torch()
    device = resolve_device(device)
    settings = _settings(device, quick)
    rows = []
    for name, label, model, x in _models(torch, settings, seed):
        for mode in modes:
            rows += _precision_one(torch, device, name, label, model, x, mode, settings)
    return _finish(rows, device)


def _precision_one(torch, device, name, label, model, x, mode, settings):
    try:
        return _precision_rows(torch, device, name, label, model, x, mode, settings)
    except Exception as exc:
        _cleanup(torch, device)
        note = _failure_note(exc)
        return [_row(p, mode, label, float("nan"), u, note) for p, u in
                (("precision_time", "s"), ("precision_max_abs_error", "1"),
                 ("precision_rel_l2_error", "1"), ("precision_cosine", "1"))]


def precision_table(results):
    """One row per (model, dtype): time per batch [s], speed-up vs fp32, errors, note.

    Works on any probe result frame (live or loaded); no torch needed.
    """
    data = results[results["probe"].astype(str).str.startswith("precision_")]
    columns = ["model", "dtype", "seconds_per_batch", "speedup_vs_fp32", "max_abs_error", "rel_l2_error",
               "cosine", "note"]
    if data.empty:
        return pd.DataFrame(columns=columns)
    data = data.assign(model=data["shape"].astype(str).str.split().str[0],
                       metric=data["probe"].str.replace("precision_", "", regex=False))
    keys = ["model", "shape", "dtype"]
    wide = data.drop_duplicates(keys + ["metric"]).set_index(keys + ["metric"])["measured"].unstack("metric")
    wide = wide.reindex(columns=["time", "max_abs_error", "rel_l2_error", "cosine"])
    notes = data[data["metric"] == "time"].drop_duplicates(keys).set_index(keys)["note"]
    table = wide.reset_index().rename(columns={"time": "seconds_per_batch"})
    table["note"] = [notes.get((m, s, d), "") for m, s, d in zip(table["model"], table["shape"], table["dtype"])]
    fp32 = table[table["dtype"] == "fp32"].drop_duplicates("shape").set_index("shape")["seconds_per_batch"]
    table["speedup_vs_fp32"] = table["shape"].map(fp32) / table["seconds_per_batch"]
    order = {m: i for i, m in enumerate(PRECISION_MODES)}
    table = table.sort_values(["model", "dtype"], key=lambda s: s.map(order) if s.name == "dtype" else s,
                              kind="stable")
    return table[columns].reset_index(drop=True)


# --- utilisation sampler ------------------------------------------------------------

class UtilizationSampler:
    """Sample NVML GPU utilisation, memory utilisation and power in a background thread.

    Use as a context manager around any work -- a probe, or your own training
    loop -- to answer "is my GPU starved?"::

        with UtilizationSampler(index=0, interval_s=0.1) as sampler:
            train_for_a_minute()
        sampler.summary()   # mean gpu_util_pct, memory_util_pct, power_w

    NVML's ``gpu`` utilisation is the percent of time in the last sample period
    (1/6 s to 1 s, by product) during which at least one kernel was running; it
    says the GPU was *busy*, not how much of its peak it used. Sustained values
    above ~70 % mean the device is fed and compute-bound; low values during
    training mean it waits on input (data loading, host code, communication).

    Samples are dicts ``{"t_s", "gpu_util_pct", "memory_util_pct", "power_w"}``.
    Without NVML (no NVIDIA driver) nothing is sampled: ``samples`` stays empty and
    ``reason`` says why; nothing raises.
    """

    def __init__(self, index=0, interval_s=0.1, pci_bus_id=None):
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"index must be a GPU index >= 0; got {index!r}")
        if not isinstance(interval_s, (int, float)) or not interval_s > 0:
            raise ValueError(f"interval_s must be a time in seconds > 0; got {interval_s!r}")
        self.index, self.interval_s, self.pci_bus_id = index, float(interval_s), pci_bus_id
        self.samples, self.reason = [], ""
        self._stop = threading.Event()
        self._thread = None
        self._pynvml = None

    def start(self):
        pynvml, reason = _nvml()
        if pynvml is None:
            self.reason = reason
            return self
        try:
            handle = _nvml_handle(pynvml, self.index, self.pci_bus_id)
        except pynvml.NVMLError as exc:
            self.reason = f"NVML has no GPU {self.index} ({exc})"
            pynvml.nvmlShutdown()
            return self
        self._pynvml = pynvml
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(pynvml, handle), daemon=True,
                                        name="accelkit-nvml-sampler")
        self._thread.start()
        return self

    def _loop(self, pynvml, handle):
        t0 = time.perf_counter()
        while not self._stop.is_set():
            sample = {"t_s": time.perf_counter() - t0}
            try:
                util = pynvml.nvmlDeviceGetUtilizationRates(handle)
                sample["gpu_util_pct"], sample["memory_util_pct"] = float(util.gpu), float(util.memory)
            except pynvml.NVMLError as exc:
                self.reason = f"utilisation not readable: {exc}"
                sample["gpu_util_pct"] = sample["memory_util_pct"] = float("nan")
            try:
                sample["power_w"] = pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
            except pynvml.NVMLError:
                sample["power_w"] = float("nan")
            self.samples.append(sample)
            self._stop.wait(self.interval_s)

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5 * self.interval_s + 1)
            self._thread = None
        if self._pynvml is not None:
            try:
                self._pynvml.nvmlShutdown()
            except Exception:
                pass
            self._pynvml = None
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def summary(self):
        """Means over the samples (NaN without samples) and ``n_samples``, ``reason``."""
        frame = pd.DataFrame(self.samples, columns=["t_s", "gpu_util_pct", "memory_util_pct", "power_w"])
        return {
            "n_samples": len(frame),
            "gpu_util_pct": float(frame["gpu_util_pct"].mean()) if len(frame) else float("nan"),
            "memory_util_pct": float(frame["memory_util_pct"].mean()) if len(frame) else float("nan"),
            "power_w": float(frame["power_w"].mean()) if len(frame) else float("nan"),
            "reason": self.reason,
        }


def sample_utilization(fn, index=0, interval_s=0.1):
    """Run ``fn()`` while sampling NVML; returns ``(fn's result, samples, reason)``.

    ``samples`` is a list of dicts (see :class:`UtilizationSampler`); empty with a
    ``reason`` on machines without NVML.
    """
    with UtilizationSampler(index, interval_s) as sampler:
        result = fn()
    return result, list(sampler.samples), sampler.reason


def _utilization_rows(summary, what):
    if not summary["n_samples"]:
        return [_row("gpu_utilization", "", "", float("nan"), "%", summary["reason"] or "no samples")]
    label = f"{summary['n_samples']} samples during {what}"
    hint = ("NVML 'gpu' = % of time a kernel was running (busy, not % of peak); "
            "> 70 % while training = compute-bound, low = starved by input")
    return [
        _row("gpu_utilization", "", label, summary["gpu_util_pct"], "%", hint),
        _row("gpu_memory_utilization", "", label, summary["memory_util_pct"], "%",
             "NVML 'memory' = % of time device memory was read or written"),
        _row("gpu_power", "", label, summary["power_w"], "W", "mean board power (NVML)"),
    ]


# --- assembling results -------------------------------------------------------------

def _now():
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _datasheet(row, match_name, header_pcie=None):
    """Datasheet value in SI units for one result row (NaN when unknown)."""
    from . import units
    from .catalog import PRECISION_COLUMNS, find

    probe, dtype = row["probe"], row["dtype"]
    if probe in ("host_to_device", "device_to_host") and header_pcie:
        return _pcie_bytes_per_s(*header_pcie)
    if not match_name:
        return float("nan")
    entry = find(match_name)
    if probe == "matmul" and dtype in PRECISION_COLUMNS:
        return float(units.tflops_to_flops(entry[PRECISION_COLUMNS[dtype]]))
    if probe in ("memory_copy", "memory_read"):
        return float(units.gbs_to_bytes_per_s(entry["memory_bw_gbs"]))
    return float("nan")


def _finish(rows, device, inv_row=None):
    torch = _torch()
    if inv_row is None:
        inv_row = _inventory_row(device, inventory())
    frame = pd.DataFrame(rows, columns=["probe", "dtype", "shape", "measured", "unit", "note"])
    pcie = None
    if "pcie_gen" in inv_row and pd.notna(inv_row.get("pcie_gen")) and pd.notna(inv_row.get("pcie_width")):
        pcie = (inv_row["pcie_gen"], inv_row["pcie_width"])
    frame["datasheet"] = [_datasheet(r, inv_row["catalogue_name"], pcie) for _, r in frame.iterrows()]
    frame["ratio"] = frame["measured"] / frame["datasheet"]
    frame["device"] = _device_str(device)
    frame["device_name"] = inv_row["name"]
    frame["torch_version"] = torch.__version__
    frame["timestamp"] = _now()
    frame["measured"] = frame["measured"].astype(float)
    return frame[COLUMNS]


def _machine(device, inv, inv_row, torch):
    gpus = inv[inv["kind"] == "gpu"]["name"].tolist()
    return {
        "device": _device_str(device),
        "device_name": inv_row["name"],
        "kind": inv_row["kind"],
        "catalogue_match": inv_row["catalogue_match"],
        "memory_bytes": None if pd.isna(inv_row["memory_bytes"]) else int(inv_row["memory_bytes"]),
        "cpu_model": _cpu_model(),
        "cpu_cores": _cpu_cores(),
        "torch_threads": torch.get_num_threads(),
        "host_memory_bytes": _host_total_bytes(),
        "gpus": gpus or "none found by torch",
        "load_average_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda or "",
        "hip_version": getattr(torch.version, "hip", None) or "",
        "driver_version": str(inv_row.get("driver_version", "") or "") if pd.notna(inv_row.get("driver_version")) else "",
    }


def run_all(device=None, quick=True, progress=False, callback=None, memory_fraction=0.25,
            dtypes=MATMUL_DTYPES, precision_modes=PRECISION_MODES):
    """Run every probe on one device; one tidy DataFrame.

    Parameters
    ----------
    device : str, optional
        ``"cuda:0"``, ``"mps"``, ``"cpu"``; default the best available (a GPU, else
        the CPU -- the frame's ``attrs["header"]["note"]`` then says the probes ran
        on the CPU because no GPU was found).
    quick : bool
        Small sizes and short time budgets (under 30 s on a 2-core CPU).
    progress : bool
        Show a tqdm progress bar on stderr.
    callback : callable, optional
        ``callback(done, total, label)`` after each step (for a widget).
    memory_fraction : float
        The memory guard: no probe allocates more than this fraction of the free
        device memory (GPU: ``torch.cuda.mem_get_info``; CPU: MemAvailable).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`: ``probe`` (matmul, memory_copy, memory_read,
        host_to_device, device_to_host, precision_time, precision_max_abs_error,
        precision_rel_l2_error, precision_cosine, gpu_utilization, …), ``dtype``,
        ``shape``, ``measured`` (SI: FLOP/s, OP/s, B/s, s; % and W for NVML),
        ``unit``, ``datasheet`` (the catalogue's dense peak at that dtype, or its
        memory bandwidth, in the same unit; NaN when the device is not in the
        catalogue or publishes no figure), ``ratio`` (measured/datasheet),
        ``device``, ``device_name``, ``torch_version``, ``timestamp`` (UTC) and
        ``note`` (method, or why a figure is missing). ``attrs["header"]``
        describes the machine, ``attrs["inventory"]`` lists its devices and
        ``attrs["utilization_samples"]`` holds NVML samples (GPU only).
    """
    torch = _torch()
    device = resolve_device(device)
    memory_fraction = _check_fraction(memory_fraction)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be a function callback(done, total, label); got {callback!r}")
    for dtype in dtypes:
        _check_dtype(dtype)
    for mode in precision_modes:
        if mode not in PRECISION_MODES:
            raise ValueError(f"precision_modes must be among {', '.join(PRECISION_MODES)}; got {mode!r}")
    started = time.perf_counter()
    inv = inventory()
    inv_row = _inventory_row(device, inv)
    settings = _settings(device, quick)
    rows, samples = [], []

    steps = [(f"matmul {dtype}", lambda d=dtype: _matmul_rows(torch, device, d, settings, memory_fraction))
             for dtype in dtypes]
    steps += [(kind.replace("_", " "), lambda k=kind: _safe(
        lambda: _bandwidth_rows(torch, device, k, settings, memory_fraction), k, "fp32", "", "B/s", torch, device))
        for kind in _BANDWIDTH_KINDS]
    models = _models(torch, settings, 0)
    steps += [(f"{name} {mode}", lambda m=(name, label, model, x), mode=mode:
               _precision_one(torch, device, *m, mode, settings))
              for name, label, model, x in models for mode in precision_modes]

    sampler = None
    if device.type == "cuda" and not _is_hip(torch):  # NVML index order may differ from CUDA's: match the PCI bus
        bus = _pci_bus_id(torch.cuda.get_device_properties(device.index or 0))
        sampler = UtilizationSampler(device.index or 0, 0.1, pci_bus_id=bus)
    from tqdm.auto import tqdm

    bar = tqdm(total=len(steps), desc="accelkit probe", disable=not progress, file=sys.stderr, leave=False)
    n_matmul = len(dtypes)
    try:
        for done, (label, step) in enumerate(steps, 1):
            bar.set_postfix_str(label)
            if sampler is not None and done == 1 and n_matmul:
                sampler.start()  # NVML samples while the matmul steps run
            rows += step()
            if sampler is not None and done == n_matmul:
                sampler.stop()
            bar.update(1)
            if callback is not None:
                callback(done, len(steps), label)
    finally:
        bar.close()
        if sampler is not None:
            sampler.stop()
            samples = list(sampler.samples)
    if device.type == "cuda":
        summary = sampler.summary() if sampler is not None else {
            "n_samples": 0, "reason": "NVML is NVIDIA-only; use rocm-smi for AMD GPUs"}
        rows += _utilization_rows(summary, "the matmul probe")
    else:
        reason = _nvml_reason() or "NVML found a driver, but the probed device is not an NVIDIA GPU"
        if device.type == "cpu":
            reason = f"no GPU utilisation on the CPU: {reason}"
        rows.append(_row("gpu_utilization", "", "", float("nan"), "%", reason))

    frame = _finish(rows, device, inv_row)
    note = ""
    if device.type == "cpu" and not torch.cuda.is_available() and not _mps_available(torch):
        note = "no GPU found by torch (torch.cuda.is_available() is False): the probes ran on the CPU"
    elif device.type == "cpu":
        note = "the probes ran on the CPU (asked for)"
    frame.attrs["header"] = {
        "format": RESULTS_FORMAT,
        "label": "",
        "machine": _machine(device, inv, inv_row, torch),
        "device": _device_str(device),
        "device_name": inv_row["name"],
        "torch_version": torch.__version__,
        "date": _now(),
        "quick": bool(quick),
        "memory_fraction": memory_fraction,
        "elapsed_s": round(time.perf_counter() - started, 2),
        "note": note,
    }
    frame.attrs["inventory"] = _records(inv)
    frame.attrs["utilization_samples"] = samples
    frame.attrs["source"] = "this session's run (not saved)"
    return frame


def _is_hip(torch):
    return bool(getattr(torch.version, "hip", None))


# --- JSON ---------------------------------------------------------------------------

def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _records(frame):
    return [_plain(r) for r in frame.to_dict(orient="records")]


def save_results(frame, path, overwrite=False, label=None):
    """Write probe results to JSON; returns the path.

    The file holds ``format``, ``version``, a ``header`` (machine description,
    torch version, date, mode, ``label``), the ``inventory`` and the ``results``
    rows (NaN written as null). An existing file is never replaced unless
    ``overwrite=True``: ``FileExistsError`` names it. ``label`` describes the
    machine in words ("2-core VM, CPU only").
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be the DataFrame returned by run_all; got {type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame is missing the column(s) {', '.join(missing)}; expected the output of run_all")
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ValueError(f"path must end in .json; got {str(path)!r}")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; pass overwrite=True (accelkit probe --force) to replace it")
    header = dict(frame.attrs.get("header") or {})
    if not header:
        first = frame.iloc[0] if len(frame) else {}
        header = {"device": first.get("device", ""), "device_name": first.get("device_name", ""),
                  "torch_version": first.get("torch_version", ""), "date": _now(), "machine": {}}
    if label is not None:
        header["label"] = str(label)
    header.setdefault("saved", _now())
    payload = {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "header": _plain(header),
        "inventory": frame.attrs.get("inventory", []),
        "utilization_samples": _plain(frame.attrs.get("utilization_samples", [])),
        "columns": COLUMNS,
        "results": _records(frame[COLUMNS]),
    }
    text = json.dumps(payload, indent=1, allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w" if overwrite else "x", encoding="utf-8") as handle:
        handle.write(text + "\n")
    return path


def load_results(path):
    """Read a JSON file written by :func:`save_results` into a DataFrame.

    ``attrs["header"]``, ``attrs["inventory"]``, ``attrs["utilization_samples"]``
    and ``attrs["source"]`` (the file) carry the rest. Needs no torch.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"probe results file not found: {path}")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"path={str(path)!r} is not a JSON file of probe results ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != RESULTS_FORMAT:
        raise ValueError(f"path={str(path)!r} is not an accelkit probe results file (expected format "
                         f"{RESULTS_FORMAT!r}, written by accelkit probe --json)")
    frame = pd.DataFrame(payload.get("results", []))
    for col in COLUMNS:
        if col not in frame.columns:
            frame[col] = np.nan if col in ("measured", "datasheet", "ratio") else ""
    frame = frame[COLUMNS].copy()
    for col in ("measured", "datasheet", "ratio"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    for col in ("probe", "dtype", "shape", "unit", "device", "device_name", "torch_version", "timestamp", "note"):
        frame[col] = frame[col].fillna("").astype(str)
    frame.attrs["header"] = payload.get("header", {})
    frame.attrs["inventory"] = payload.get("inventory", [])
    frame.attrs["utilization_samples"] = payload.get("utilization_samples", [])
    frame.attrs["source"] = str(path)
    return frame


def example_results():
    """Paths of the shipped example results (``data/probe_results/*.json``), sorted."""
    from .catalog import data_path

    folder = data_path("probe_results")
    return sorted(folder.glob("*.json")) if folder.exists() else []


def load_example_results(name=None):
    """The shipped example results as a DataFrame (see :func:`load_results`).

    ``name``: a file name in ``data/probe_results`` (default: the first GPU result
    if there is one, else the first file). Raises ``FileNotFoundError`` when no
    example results exist.
    """
    paths = example_results()
    if not paths:
        raise FileNotFoundError("no example probe results in data/probe_results/ (run accelkit probe --json FILE)")
    if name:
        chosen = [p for p in paths if p.name == name or p.stem == name]
        if not chosen:
            raise FileNotFoundError(f"name={name!r}: no such example; available: {', '.join(p.name for p in paths)}")
        return load_results(chosen[0])
    frames = [load_results(p) for p in paths]
    gpu = [f for f in frames if str(f.attrs["header"].get("device", "")).startswith("cuda")]
    return (gpu or frames)[0]


# --- calibration --------------------------------------------------------------------

def calibration(results):
    """Measured/datasheet ratios, the "use my measurements" defaults for projections.

    One row per matmul dtype (its best shape) and per memory probe (copy, read):
    ``quantity``, ``precision``, ``measured`` (SI), ``unit``, ``datasheet``,
    ``ratio``, ``device_name`` and ``source`` (the results file, or "this
    session's run"). The matmul ratio is the maximum achievable fraction of the
    dense peak; real training reaches less (MFU 0.3-0.5 is typical), so use it as
    an upper bound on utilisation. NaN ratios where the device has no datasheet
    figure.
    """
    if not isinstance(results, pd.DataFrame) or "probe" not in results:
        raise ValueError("results must be a probe result DataFrame (run_all or load_results)")
    source = results.attrs.get("source", "this session's run (not saved)")
    device_name = results["device_name"].iloc[0] if len(results) else ""
    rows = []
    matmul = results[(results["probe"] == "matmul") & results["measured"].notna()]
    for dtype in [d for d in MATMUL_DTYPES if d in set(matmul["dtype"])]:
        group = matmul[matmul["dtype"] == dtype]
        best = group.loc[group["measured"].idxmax()]
        rows.append({"quantity": f"matmul {dtype}", "precision": dtype, "measured": best["measured"],
                     "unit": best["unit"], "datasheet": best["datasheet"], "ratio": best["ratio"]})
    for probe, label in (("memory_copy", "memory bandwidth (copy)"), ("memory_read", "memory bandwidth (read)")):
        group = results[(results["probe"] == probe) & results["measured"].notna()]
        if not group.empty:
            best = group.loc[group["measured"].idxmax()]
            rows.append({"quantity": label, "precision": "", "measured": best["measured"], "unit": best["unit"],
                         "datasheet": best["datasheet"], "ratio": best["ratio"]})
    frame = pd.DataFrame(rows, columns=["quantity", "precision", "measured", "unit", "datasheet", "ratio"])
    frame["device_name"] = device_name
    frame["source"] = source
    return frame


def calibrated_utilization(results, precision="bf16", default=None):
    """``(utilisation, source text)`` for a projection at ``precision``.

    The measured/datasheet matmul ratio at ``precision`` from ``results`` (a probe
    result frame or a :func:`calibration` frame). Falls back to ``default`` with a
    text saying why when the ratio is unknown (device not in the catalogue, dtype
    not measured).
    """
    calib = results if "quantity" in results.columns else calibration(results)
    row = calib[calib["precision"] == precision]
    if row.empty or not np.isfinite(row["ratio"].iloc[0]):
        why = "not measured" if row.empty else "no datasheet figure to compare with"
        return default, f"default utilisation ({precision} {why} in {calib['source'].iloc[0] if len(calib) else 'the results'})"
    r = row.iloc[0]
    return float(r["ratio"]), f"measured {precision} matmul on {r['device_name']}: {r['ratio']:.0%} of datasheet ({r['source']})"


# --- display ------------------------------------------------------------------------

_PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def format_value(value, unit):
    """A measured value with an SI prefix: ``format_value(4.3e10, "FLOP/s") -> '43.2 GFLOP/s'``.

    Seconds below 1 s are shown in ms or µs; dimensionless figures ("1") in
    scientific notation; NaN as an em dash.
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "—"
    if not math.isfinite(value):
        return "—"
    if unit == "s":
        if value >= 1:
            return f"{value:.3g} s"
        return f"{value * 1e3:.3g} ms" if value >= 1e-3 else f"{value * 1e6:.3g} µs"
    if unit == "1":
        return f"{value:.3g}" if value == 0 or 1e-2 <= abs(value) < 1e3 else f"{value:.2e}"
    if unit in ("%", "W"):
        return f"{value:.0f} {unit}" if unit == "W" else f"{value:.0f} %"
    if unit == "B/s":
        unit = "B/s"
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def display_table(results, max_note=90):
    """The results as readable text columns: probe, dtype, shape, measured, datasheet, ratio, note."""
    out = pd.DataFrame({
        "probe": results["probe"],
        "dtype": results["dtype"],
        "shape": results["shape"],
        "measured": [format_value(v, u) for v, u in zip(results["measured"], results["unit"])],
        "datasheet": [format_value(v, u) for v, u in zip(results["datasheet"], results["unit"])],
        "ratio": [f"{r:.0%}" if np.isfinite(r) else "—" for r in results["ratio"].astype(float)],
        "note": [n if len(n) <= max_note else n[: max_note - 1] + "…" for n in results["note"].astype(str)],
    })
    return out
