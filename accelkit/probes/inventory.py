"""What this machine has: the devices torch sees, with NVML details and the catalogue match.

* :func:`inventory` -- one row per device (GPUs first, the CPU last);
* :func:`_inventory_row` -- the row of one torch device;
* :func:`_machine` -- the machine description written in a result file's header.

The facts themselves come from :mod:`accelkit.local` (torch devices, NVML, host);
this module joins them and matches each device to the catalogue
(:func:`~accelkit.probes.datasheet._catalogue_match`).

Reference: PyTorch documentation, ``torch.cuda.get_device_properties``; NVIDIA,
*NVML API Reference Guide* (Device Queries).
"""

from __future__ import annotations

import platform

import pandas as pd

from ..local import host
from ..local.devices import device_str, import_torch, mps_available
from ..local.nvml import device_info as nvml_info
from .datasheet import _catalogue_match

__all__ = ["inventory", "nvml_info"]


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
    torch = import_torch()
    rows = []
    common = {
        "cuda_version": torch.version.cuda or "",
        "hip_version": getattr(torch.version, "hip", None) or "",
        "torch_version": torch.__version__,
        "cpu_model": host.cpu_model(),
        "cpu_cores": host.cpu_cores(),
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
    if mps_available(torch):
        rows.append({"device": "mps", "kind": "mps", "name": f"Apple GPU (MPS) on {platform.machine()}",
                     "memory_bytes": host.total_memory_bytes(), "compute_capability": "", "multiprocessors": None,
                     **common, "nvml_note": "NVML is NVIDIA-only"})
    cpu = {"device": "cpu", "kind": "cpu", "name": common["cpu_model"], "memory_bytes": host.total_memory_bytes(),
           "compute_capability": "", "multiprocessors": None, **common}
    cpu["nvml_note"] = "" if rows else nvml_info().get("nvml_note", "")
    rows.append(cpu)
    for row in rows:
        row["catalogue_name"], row["catalogue_match"] = _catalogue_match(row["name"])
    frame = pd.DataFrame(rows)
    first = ["device", "kind", "name", "catalogue_match", "memory_bytes", "compute_capability"]
    return frame[first + [c for c in frame.columns if c not in first]]


def _inventory_row(device, inv):
    key = device_str(device)
    match = inv[inv["device"] == key]
    if match.empty and device.type == "cuda":
        match = inv[inv["device"] == f"cuda:{device.index or 0}"]
    return match.iloc[0] if not match.empty else inv.iloc[-1]


def _machine(device, inv, inv_row, torch):
    gpus = inv[inv["kind"] == "gpu"]["name"].tolist()
    return {
        "device": device_str(device),
        "device_name": inv_row["name"],
        "kind": inv_row["kind"],
        "catalogue_match": inv_row["catalogue_match"],
        "memory_bytes": None if pd.isna(inv_row["memory_bytes"]) else int(inv_row["memory_bytes"]),
        "cpu_model": host.cpu_model(),
        "cpu_cores": host.cpu_cores(),
        "torch_threads": torch.get_num_threads(),
        "host_memory_bytes": host.total_memory_bytes(),
        "gpus": gpus or "none found by torch",
        "load_average_1min": host.load_average_1min(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda or "",
        "hip_version": getattr(torch.version, "hip", None) or "",
        "driver_version": str(inv_row.get("driver_version", "") or "") if pd.notna(inv_row.get("driver_version")) else "",
    }
