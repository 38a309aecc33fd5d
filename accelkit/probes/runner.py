"""Run every probe on one device: :func:`run_all` -> one tidy DataFrame.

Matmul per format, memory bandwidth, the precision probe and NVML utilisation
sampled while the matmuls run, each step recorded (or its reason for a missing
figure), with the machine described in ``attrs["header"]``. See
:mod:`accelkit.probes` for the method and references of each probe.
"""

from __future__ import annotations

import sys
import time

from ..local.devices import device_str, import_torch, mps_available, resolve_device
from ..local.nvml import reason as _nvml_reason
from ._base import _check_fraction, _finish, _row, _safe, _settings
from .bandwidth import _BANDWIDTH_KINDS, _bandwidth_rows
from .inventory import _inventory_row, _machine, _pci_bus_id, inventory
from .matmul import _check_dtype, _matmul_rows
from .numerics import _models, _precision_one
from .results import MATMUL_DTYPES, PRECISION_MODES, RESULTS_FORMAT, _now, _records
from .utilization import UtilizationSampler, _utilization_rows

__all__ = ["run_all"]


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
    torch = import_torch()
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
    if device.type == "cpu" and not torch.cuda.is_available() and not mps_available(torch):
        note = "no GPU found by torch (torch.cuda.is_available() is False): the probes ran on the CPU"
    elif device.type == "cpu":
        note = "the probes ran on the CPU (asked for)"
    frame.attrs["header"] = {
        "format": RESULTS_FORMAT,
        "label": "",
        "machine": _machine(device, inv, inv_row, torch),
        "device": device_str(device),
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
