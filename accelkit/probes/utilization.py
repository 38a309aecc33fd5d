"""GPU utilisation and power sampled through NVML while something runs.

:class:`UtilizationSampler` samples in a background thread (the "is my GPU
starved?" question); :func:`sample_utilization` wraps one call. NVML itself is
read through the shared layer :mod:`accelkit.local.nvml`.

Reference: NVIDIA, *NVML API Reference*, ``nvmlUtilization_t``: "percent of time
over the past sample period during which one or more kernels was executing".
"""

from __future__ import annotations

import threading
import time

import pandas as pd

from ..local.nvml import handle as _nvml_handle
from ..local.nvml import init as _nvml
from ..units import milliwatts_to_watts
from ._base import _row

__all__ = ["UtilizationSampler", "sample_utilization"]


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
                sample["power_w"] = milliwatts_to_watts(pynvml.nvmlDeviceGetPowerUsage(handle))
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
