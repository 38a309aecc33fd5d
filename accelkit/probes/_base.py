"""What every probe shares: sizes per mode, the memory guard, result rows and frames.

* :func:`_settings` -- shapes, buffer sizes and time budgets per device kind and
  mode (quick or full); CPU buffers are sized past the last-level cache;
* :func:`_guard` -- refuse an allocation above a fraction of the free memory
  (:class:`_Skipped`, with the sizes in GB of 1e9 bytes);
* :func:`_row`, :func:`_failure_note`, :func:`_safe` -- one result row, and a row
  that says why a measurement is missing;
* :func:`_finish` -- rows -> a frame with :data:`~accelkit.probes.results.COLUMNS`,
  each row next to its datasheet figure.
"""

from __future__ import annotations

import pandas as pd

from ..local import host
from ..local.devices import device_str, free_memory_bytes, import_torch
from ..units import MIB, bytes_to_gb
from .datasheet import _datasheet
from .inventory import _inventory_row, inventory
from .results import COLUMNS, _now


class _Skipped(RuntimeError):
    """A measurement left out on purpose (memory guard, not applicable); the message says why."""


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
            f"skipped by the memory guard: {what} needs {bytes_to_gb(nbytes):.2f} GB, more than "
            f"{memory_fraction:.0%} of the {bytes_to_gb(free):.2f} GB free"
        )


def _settings(device, quick):
    gpu = device.type in ("cuda", "mps")
    if gpu and quick:
        return {"shapes": [(2048,) * 3, (4096,) * 3, (8192, 8192, 4096)], "budget_s": 0.4, "max_repeats": 200,
                "warmup": 3, "copy_bytes": 512 * MIB, "h2d_bytes": 256 * MIB,
                "mlp": (256, 1024, 4096), "block": (8, 256, 512, 8, 2048)}
    if gpu:
        return {"shapes": [(4096,) * 3, (8192,) * 3, (8192, 8192, 4096), (16384, 8192, 8192)], "budget_s": 1.5,
                "max_repeats": 500, "warmup": 5, "copy_bytes": 2048 * MIB, "h2d_bytes": 1024 * MIB,
                "mlp": (1024, 4096, 16384), "block": (16, 512, 1024, 16, 4096)}
    llc = host.last_level_cache_bytes() or 32 * MIB
    if quick:
        return {"shapes": [(256,) * 3, (512,) * 3, (1024,) * 3], "budget_s": 0.3, "max_repeats": 20, "warmup": 1,
                "copy_bytes": max(64 * MIB, 2 * llc), "h2d_bytes": 0,
                "mlp": (64, 256, 1024), "block": (4, 64, 128, 4, 512)}
    return {"shapes": [(512,) * 3, (1024,) * 3, (2048,) * 3], "budget_s": 1.5, "max_repeats": 50, "warmup": 2,
            "copy_bytes": max(256 * MIB, 4 * llc), "h2d_bytes": 0,
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


def _safe(produce, probe, dtype, shape, unit, torch, device):
    try:
        return produce()
    except Exception as exc:  # record why and go on
        _cleanup(torch, device)
        return [_row(probe, dtype, shape, float("nan"), unit, _failure_note(exc))]


def _finish(rows, device, inv_row=None):
    torch = import_torch()
    if inv_row is None:
        inv_row = _inventory_row(device, inventory())
    frame = pd.DataFrame(rows, columns=["probe", "dtype", "shape", "measured", "unit", "note"])
    pcie = None
    if "pcie_gen" in inv_row and pd.notna(inv_row.get("pcie_gen")) and pd.notna(inv_row.get("pcie_width")):
        pcie = (inv_row["pcie_gen"], inv_row["pcie_width"])
    frame["datasheet"] = [_datasheet(r, inv_row["catalogue_name"], pcie) for _, r in frame.iterrows()]
    frame["ratio"] = frame["measured"] / frame["datasheet"]
    frame["device"] = device_str(device)
    frame["device_name"] = inv_row["name"]
    frame["torch_version"] = torch.__version__
    frame["timestamp"] = _now()
    frame["measured"] = frame["measured"].astype(float)
    return frame[COLUMNS]
