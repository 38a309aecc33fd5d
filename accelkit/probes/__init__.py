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
cheap and works without torch (:mod:`~accelkit.probes.results` -- results,
calibration, display -- never needs it); without torch every probe raises
:class:`ProbeUnavailable` saying how to install it. Without a GPU the probes run on
the CPU and say so. Nothing here touches the network.

Modules, one job each: :mod:`~accelkit.probes.timing` (synchronised timing),
:mod:`~accelkit.probes.inventory` (devices and their catalogue match),
:mod:`~accelkit.probes.datasheet` (the catalogue figure of a result row),
:mod:`~accelkit.probes.matmul`, :mod:`~accelkit.probes.bandwidth`,
:mod:`~accelkit.probes.numerics` (the precision probe),
:mod:`~accelkit.probes.utilization` (NVML sampler), :mod:`~accelkit.probes.runner`
(:func:`run_all`), :mod:`~accelkit.probes.results` (torch-free) and
:mod:`~accelkit.probes._base` (sizes, memory guard, rows). The facts of the machine
(torch devices, NVML, host memory and CPU) come from :mod:`accelkit.local`.

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

from ..local import INSTALL_HINT
from ..local.devices import ProbeUnavailable, available_devices, free_memory_bytes, resolve_device, torch_available
from .bandwidth import memory_bandwidth
from .inventory import inventory, nvml_info
from .matmul import matmul_flops, time_matmul
from .numerics import BF16_REL_L2_BOUND, precision_probe
from .results import (
    COLUMNS, MATMUL_DTYPES, PRECISION_MODES, RESULTS_FORMAT, RESULTS_VERSION, calibrated_utilization, calibration,
    display_table, example_results, format_value, load_example_results, load_results, precision_table,
    results_from_text, results_json, save_results,
)
from .runner import run_all
from .timing import measure_seconds
from .utilization import UtilizationSampler, sample_utilization

__all__ = [
    "ProbeUnavailable",
    "INSTALL_HINT",
    "COLUMNS",
    "MATMUL_DTYPES",
    "PRECISION_MODES",
    "RESULTS_FORMAT",
    "RESULTS_VERSION",
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
    "results_json",
    "load_results",
    "results_from_text",
    "calibration",
    "calibrated_utilization",
    "example_results",
    "load_example_results",
    "format_value",
    "display_table",
]
