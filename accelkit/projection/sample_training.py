"""The parts of a training step shared by models trained per sample: image models
(:func:`~accelkit.projection.vision.vision_training`) and recommenders
(:func:`~accelkit.projection.recommender_training.recommender_training`).

* :func:`sample_work_seconds`: forward and backward of ``b`` samples, ``3 · F · b`` FLOP
  (backward ≈ 2 × forward, Kaplan et al. 2020, arXiv:2001.08361, §2.1) at the achievable
  matmul rate × ``gemm_fraction``, against the step's non-matmul memory traffic at the
  achievable bandwidth, combined by ``roofline_overlap``; or ``3 · F · b`` at the person's
  share of the dense peak.
* :func:`data_parallel_allreduce_seconds`: a gradient all-reduce, hierarchical -- a ring
  within the node over its link, the nodes' shares over the network port -- plus a
  start-up of ``2 · α · log2 n`` (``α`` the device's measured small-message latency).
"""

from __future__ import annotations

import numpy as np

from .ceilings import allreduce_seconds

__all__ = ["sample_work_seconds", "collective_startup_seconds", "data_parallel_allreduce_seconds", "node_link"]


def sample_work_seconds(ceil, level, precision, flops_per_sample, traffic_bytes_per_sample, batch, k,
                        utilization=None):
    """``(compute, work)`` [s] per device for ``batch`` samples' forward and backward passes:
    the matmul time alone and the roofline of it with the memory traffic."""
    if utilization is not None:
        compute = 3.0 * flops_per_sample * batch / (ceil[f"peak_{precision}"].to_numpy(dtype=float) * utilization)
        return compute, compute
    rate = ceil[f"matmul_{precision}{level}"].to_numpy(dtype=float) * k["gemm_fraction"]
    compute = 3.0 * flops_per_sample * batch / rate
    moved = traffic_bytes_per_sample * batch / ceil[f"memory_bw{level}"].to_numpy(dtype=float)
    return compute, np.maximum(compute, moved) + (1.0 - k["roofline_overlap"]) * np.minimum(compute, moved)


def node_link(ceil, level, per_node):
    """Achievable collective bandwidth inside a node of ``per_node`` devices [bytes/s]: the device's
    link, or PCIe past the link's reach."""
    return np.where(per_node <= ceil["link_max_devices"].to_numpy(dtype=float),
                    ceil[f"allreduce_bw{level}"].to_numpy(dtype=float),
                    ceil[f"allreduce_bw_pcie{level}"].to_numpy(dtype=float))


def collective_startup_seconds(ceil, level, n):
    """``2 · α · log2 n`` [s]: a collective's start-up over ``n`` devices (0 for one)."""
    lat = {"": "", "_low": "_high", "_high": "_low"}[level]  # the fast ceilings go with the short latency
    return np.where(n > 1, 2.0 * ceil[f"allreduce_latency_s{lat}"].to_numpy(dtype=float) * np.log2(max(n, 1)), 0.0)


def data_parallel_allreduce_seconds(ceil, level, grad_bytes, n, per_node, net_bw):
    """A gradient all-reduce of ``grad_bytes`` over ``n`` devices in nodes of ``per_node`` [s]."""
    nodes = float(np.ceil(n / per_node))
    link = node_link(ceil, level, per_node)
    with np.errstate(invalid="ignore", divide="ignore"):
        intra = allreduce_seconds(grad_bytes, per_node, link, 0.0)
        across = np.where(nodes > 1, 2.0 * (nodes - 1.0) / nodes * grad_bytes / per_node / net_bw, 0.0)
    return np.where(n > 1, intra + across + collective_startup_seconds(ceil, level, n), 0.0)
