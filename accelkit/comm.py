"""Collective communication and data-parallel scaling.

Bandwidth arguments are *per-direction* link bandwidth per device [bytes/s]: what
one device can send while it receives the same amount. Vendors print NVLink and
Infinity Fabric as the total of both directions (H100 SXM: 900 GB/s = 450 each
way); :func:`link_bandwidth` converts a catalogue row.

References
----------
.. [1] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", J. Parallel Distrib. Comput. 69(2), 117-124 (2009):
   ring all-reduce sends 2(n−1)/n of the data per device.
.. [2] NVIDIA nccl-tests, doc/PERFORMANCE.md: bus bandwidth = algorithm bandwidth
   × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather and reduce-scatter.
.. [3] S. Li et al., "PyTorch Distributed: Experiences on Accelerating Data
   Parallel Training", VLDB 2020, arXiv:2006.15704 (bucketing and overlap of
   gradient all-reduce with backward computation; no_sync for accumulation).
.. [4] Source article (seed 000): gradient accumulation over k micro-batches to fit
   memory.
.. [5] X. Jia et al., "Highly Scalable Deep Learning Training System with
   Mixed-Precision: Training ImageNet in Four Minutes", arXiv:1807.11205 (2018),
   §3.3 (hierarchical all-reduce: reduce inside a node, all-reduce across nodes,
   broadcast inside the node).
"""

from __future__ import annotations

import re

import numpy as np

from . import units
from ._validate import check_integer, check_non_negative, check_positive

__all__ = [
    "ring_allreduce_seconds",
    "hierarchical_allreduce_seconds",
    "allgather_seconds",
    "reduce_scatter_seconds",
    "gradient_bytes",
    "data_parallel_step_seconds",
    "scaling_efficiency",
    "accumulation_step",
    "link_bandwidth",
    "PCIE_GBS_PER_DIRECTION",
]

#: PCIe x16 bandwidth per direction [GB/s] by generation, after 128b/130b encoding
#: (PCI-SIG: 16 GT/s for Gen4, 32 GT/s for Gen5, 64 GT/s for Gen6); vendors
#: round these to 32 / 64 / 128 GB/s per direction.
PCIE_GBS_PER_DIRECTION = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


def _check_common(nbytes, n_devices, bandwidth, latency_s):
    check_non_negative("nbytes", nbytes, "a message size in bytes")
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    check_positive("bandwidth", bandwidth, "a link bandwidth in bytes/s")
    check_non_negative("latency_s", latency_s, "a per-step latency in seconds")


def ring_allreduce_seconds(nbytes, n_devices, bandwidth, latency_s=0.0):
    """Time of a ring all-reduce of ``nbytes`` over ``n_devices``.

    Parameters
    ----------
    nbytes : numeric
        Size of the buffer reduced on every device (e.g. the gradients) [bytes].
    n_devices : int
        Devices in the ring.
    bandwidth : numeric
        Per-direction link bandwidth of the slowest hop [bytes/s].
    latency_s : numeric, default 0
        Latency per ring step [s] (``2(n−1)`` steps).

    Returns
    -------
    numeric
        ``2(n−1)/n · nbytes / bandwidth + 2(n−1) · latency_s`` [s] ([1]_, [2]_);
        0 for a single device.

    Notes
    -----
    Worked example: 1 GB over 8 devices at 100 GB/s per direction takes
    2 · 7/8 · 1 GB / (100 GB/s) = 17.5 ms. Assumes the ring's bottleneck link is used
    at full rate and that reduction compute is hidden.
    """
    _check_common(nbytes, n_devices, bandwidth, latency_s)
    n = np.asarray(n_devices, dtype=float)
    return 2.0 * (n - 1) / n * nbytes / bandwidth + 2.0 * (n - 1) * latency_s


def allgather_seconds(nbytes, n_devices, bandwidth, latency_s=0.0):
    """Ring all-gather of a result of ``nbytes`` in total: ``(n−1)/n · nbytes / bw`` [s] ([2]_)."""
    _check_common(nbytes, n_devices, bandwidth, latency_s)
    n = np.asarray(n_devices, dtype=float)
    return (n - 1) / n * nbytes / bandwidth + (n - 1) * latency_s


def reduce_scatter_seconds(nbytes, n_devices, bandwidth, latency_s=0.0):
    """Ring reduce-scatter of an input of ``nbytes``: ``(n−1)/n · nbytes / bw`` [s] ([2]_)."""
    return allgather_seconds(nbytes, n_devices, bandwidth, latency_s)


def hierarchical_allreduce_seconds(nbytes, n_nodes, devices_per_node, intra_bandwidth, inter_bandwidth,
                                   latency_s=0.0):
    """All-reduce across nodes in three phases ([5]_): reduce-scatter inside each
    node, all-reduce of each shard across nodes, all-gather inside each node.

    Parameters
    ----------
    nbytes : numeric
        Buffer reduced on every device [bytes].
    n_nodes : int
        Nodes (servers).
    devices_per_node : int
        Devices per node (each with its own network port, as in DGX-class servers).
    intra_bandwidth : numeric
        Per-direction device-to-device bandwidth inside a node [bytes/s].
    inter_bandwidth : numeric
        Per-direction network bandwidth per device between nodes [bytes/s].

    Returns
    -------
    numeric
        ``2 · (g−1)/g · B / bw_intra + 2 · (m−1)/m · (B/g) / bw_inter`` [s] for g
        devices per node and m nodes; equals the flat ring inside one node.
    """
    check_integer("n_nodes", n_nodes, low=1, what="a number of nodes")
    check_integer("devices_per_node", devices_per_node, low=1, what="a number of devices per node")
    check_positive("inter_bandwidth", inter_bandwidth, "a network bandwidth in bytes/s")
    inside = reduce_scatter_seconds(nbytes, devices_per_node, intra_bandwidth, latency_s)
    inside = inside + allgather_seconds(nbytes, devices_per_node, intra_bandwidth, latency_s)
    across = ring_allreduce_seconds(nbytes / devices_per_node, n_nodes, inter_bandwidth, latency_s)
    return inside + across


def gradient_bytes(params, precision="bf16"):
    """Bytes of gradients all-reduced per step (``params × bytes``)."""
    from .memory import weight_bytes

    return weight_bytes(params, precision)


def data_parallel_step_seconds(compute_s, comm_s, overlap=0.0):
    """Step time of data-parallel training with part of the all-reduce hidden.

    Parameters
    ----------
    compute_s : numeric
        Forward + backward + optimizer time on one device [s].
    comm_s : numeric
        Gradient all-reduce time [s].
    overlap : float in [0, 1], default 0
        Fraction of the all-reduce that runs during the backward pass ([3]_:
        PyTorch DDP buckets gradients and starts reducing while backward runs).
        0: no overlap; 1: fully hidden while ``comm_s <= compute_s``.

    Returns
    -------
    numeric
        ``compute_s + comm_s − overlap · min(comm_s, compute_s)`` [s].
    """
    check_positive("compute_s", compute_s, "a time in seconds")
    check_non_negative("comm_s", comm_s, "a time in seconds")
    if np.any(np.asarray(overlap) < 0) or np.any(np.asarray(overlap) > 1):
        raise ValueError(f"overlap must be a fraction in [0, 1]; got {overlap}")
    return compute_s + comm_s - overlap * np.minimum(comm_s, compute_s)


def scaling_efficiency(compute_s, comm_s, overlap=0.0):
    """Fraction of ideal linear speed-up kept: ``compute_s / step time``."""
    return compute_s / data_parallel_step_seconds(compute_s, comm_s, overlap)


def accumulation_step(micro_compute_s, comm_s, accumulation_steps, overlap=0.0):
    """Gradient accumulation: ``k`` micro-batches share one all-reduce.

    Parameters
    ----------
    micro_compute_s : numeric
        Compute time of one micro-batch [s].
    comm_s : numeric
        All-reduce time of the gradients [s] (paid once per optimizer step; the
        other micro-batches run under ``no_sync`` [3]_).
    accumulation_steps : int
        Micro-batches per optimizer step k ([4]_).
    overlap : float in [0, 1]
        Fraction of the all-reduce hidden behind the last micro-batch's backward.

    Returns
    -------
    dict
        ``step_s`` (time per optimizer step [s]), ``efficiency`` (compute share),
        ``comm_fraction`` (share of time spent communicating).

    Notes
    -----
    Accumulating k micro-batches of size b/k gives the same gradient as one batch
    of b; activation memory scales with the micro-batch (÷k) while weights,
    gradients and optimizer state do not change.
    """
    check_positive("micro_compute_s", micro_compute_s, "a time in seconds")
    check_integer("accumulation_steps", accumulation_steps, low=1, what="a number of micro-batches")
    hidden = overlap * np.minimum(comm_s, micro_compute_s)
    step = accumulation_steps * micro_compute_s + comm_s - hidden
    compute = accumulation_steps * micro_compute_s
    return {"step_s": step, "efficiency": compute / step, "comm_fraction": (comm_s - hidden) / step}


def _pcie_generation(text):
    match = re.search(r"pcie\s*(?:gen\s*)?(\d)", str(text).lower())
    return int(match.group(1)) if match else None


def link_bandwidth(row, scope="node"):
    """Per-direction device-to-device bandwidth of a catalogue row [bytes/s].

    Parameters
    ----------
    row : pandas.Series or dict
        A catalogue row with ``interconnect``, ``interconnect_gbs`` and
        ``host_interface``.
    scope : {"node", "pcie"}
        ``"node"``: the device's fastest link (NVLink, Infinity Fabric, ICI, …);
        ``"pcie"``: its host PCIe link, for boards without a bridge.

    Returns
    -------
    float
        Half of the bidirectional figure in the catalogue, or the PCIe
        per-direction rate from the generation in ``host_interface``; NaN if
        neither is known.
    """
    if scope not in ("node", "pcie"):
        raise ValueError(f"scope must be 'node' or 'pcie'; got {scope!r}")
    total = row.get("interconnect_gbs", np.nan)
    if scope == "node" and total == total and total:  # not NaN
        return units.gbs_to_bytes_per_s(float(total) / 2.0)
    gen = _pcie_generation(row.get("host_interface", "")) or _pcie_generation(row.get("interconnect", ""))
    if gen in PCIE_GBS_PER_DIRECTION:
        return units.gbs_to_bytes_per_s(PCIE_GBS_PER_DIRECTION[gen])
    return float("nan")
