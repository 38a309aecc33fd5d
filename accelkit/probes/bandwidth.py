"""Memory bandwidth: device copy and read, host<->device copies (STREAM-style).

Units: bytes/s; buffer sizes in MiB (2**20 bytes) in the ``shape`` column.

Reference: J. D. McCalpin, *Memory Bandwidth and Machine Balance in Current High
Performance Computers*, IEEE TCCA Newsletter (1995) -- the STREAM benchmark:
arrays larger than the caches, read and written bytes both counted.
"""

from __future__ import annotations

import statistics

from ..local.devices import import_torch, resolve_device
from ..units import bytes_to_mib
from ._base import _check_fraction, _finish, _guard, _row, _safe, _settings
from .timing import measure_seconds

__all__ = ["memory_bandwidth"]


def _bandwidth_rows(torch, device, kind, settings, memory_fraction):
    nbytes = settings["copy_bytes"]
    label = f"{bytes_to_mib(nbytes):.0f} MiB"
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
    label = f"{bytes_to_mib(nbytes):.0f} MiB"
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
    torch = import_torch()
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
