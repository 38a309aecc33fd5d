"""Measure what you run: what a person's own GPUs do, and what that work needs.

The source texts' first rule is to measure before buying: run the current job,
watch ``nvidia-smi``, tell compute-bound (GPU utilisation above 70 %) from
IO-bound. This package reads that measurement from four places into one tidy
sample table (:mod:`~accelkit.monitor.samples`):

* live NVML samples of this machine's GPUs (:func:`sample`, :mod:`~accelkit.monitor.live`,
  over :mod:`accelkit.local.nvml`, the NVML layer the probes and the ecosystem audit share);
* ``nvidia-smi --query-gpu=... --format=csv -l 1`` logs (:func:`read_log`);
* DCGM-exporter metrics through a Prometheus server's HTTP API (:func:`query_prometheus`);
* ``nvidia-smi topo -m`` (:func:`read_topology`).

:func:`summarize` gives per-GPU and overall statistics, ``effective_devices``,
the verdict and throttling; :func:`right_size` says what the observed work needs of
other devices through the projection engine. :func:`example_log` is the shipped
synthetic 8 × A100 log at ~30 % (the source text's anecdote).

Everything here is lazy: ``import accelkit.monitor`` loads only the sample table.
"""

from __future__ import annotations

from importlib import import_module as _import

from .samples import COLUMNS, MonitorError

__all__ = ["COLUMNS", "MonitorError", "read_log", "read_logs", "read_topology", "query_prometheus", "sample",
           "summarize", "right_size", "example_path", "example_log", "example_topology", "example_metrics",
           "EXAMPLE_LOG", "EXAMPLE_TOPOLOGY", "EXAMPLE_METRICS"]

_LAZY = {
    "read_log": ("nvsmi", "read_log"), "read_logs": ("nvsmi", "read_logs"),
    "read_topology": ("topology", "read_topology"),
    "query_prometheus": ("prometheus", "query_prometheus"),
    "sample": ("live", "sample"),
    "summarize": ("summary", "summarize"),
    "right_size": ("rightsize", "right_size"),
}

EXAMPLE_LOG = "examples/monitor/nvidia-smi-8xA100-30pct.csv"
EXAMPLE_TOPOLOGY = "examples/monitor/topo-m-8xA100.txt"
EXAMPLE_METRICS = "examples/monitor/dcgm-exporter-metrics.txt"


def example_path(name=EXAMPLE_LOG):
    """Path of a shipped example file (under the built-in data folder)."""
    from ..catalog import data_path

    return data_path(name)


def example_log():
    """The shipped synthetic nvidia-smi log: 8 × A100-SXM4-80GB at ~30 % (see its README)."""
    from .nvsmi import read_log

    frame = read_log(example_path(EXAMPLE_LOG))
    from ..i18n import _

    frame.attrs["path"] = _("shipped example {file} (synthetic: 8 x A100 at ~30 %)").format(
        file=EXAMPLE_LOG.rsplit("/", 1)[-1])
    return frame


def example_topology():
    """The shipped synthetic ``nvidia-smi topo -m`` matrix of the same 8 × A100 machine."""
    from .topology import read_topology

    return read_topology(example_path(EXAMPLE_TOPOLOGY))


def example_metrics():
    """Text of the shipped synthetic DCGM-exporter ``/metrics`` page."""
    return example_path(EXAMPLE_METRICS).read_text(encoding="utf-8")


def __getattr__(name):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(_import(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'accelkit.monitor' has no attribute {name!r}")
