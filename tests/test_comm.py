"""Collectives and data-parallel scaling.

Sources: ring all-reduce time 2(n-1)/n · S / B from Patarasuk & Yuan, "Bandwidth
optimal all-reduce algorithms for clusters of workstations", J. Parallel Distrib.
Comput. 69(2), 2009, doi:10.1016/j.jpdc.2008.09.002, and NCCL's bus-bandwidth
definition (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md:
all-gather and reduce-scatter move (n-1)/n · S, half an all-reduce); NVLink 4 and
PCIe rates from NVIDIA's H100 and L4 datasheets (the catalogue's source_url).
"""

from __future__ import annotations

import pytest

from accelkit import comm
from accelkit.catalog import find


def test_ring_allreduce_worked_example():
    """Worked example of the ring formula (Patarasuk & Yuan 2009; nccl-tests PERFORMANCE.md), computed by hand."""
    # 2(n-1)/n · bytes / bw (Patarasuk & Yuan 2009; nccl-tests PERFORMANCE.md):
    # 1 GB over 8 devices at 100 GB/s per direction = 17.5 ms
    assert comm.ring_allreduce_seconds(1e9, 8, 100e9) == pytest.approx(0.0175)
    assert comm.ring_allreduce_seconds(1e9, 1, 100e9) == 0.0
    assert comm.ring_allreduce_seconds(1e9, 8, 100e9, latency_s=1e-5) == pytest.approx(0.0175 + 14e-5)


def test_allgather_and_reduce_scatter_are_half_an_allreduce():
    """nccl-tests PERFORMANCE.md: all-gather and reduce-scatter factor (n-1)/n against all-reduce's 2(n-1)/n."""
    ar = comm.ring_allreduce_seconds(4e9, 16, 50e9)
    assert comm.allgather_seconds(4e9, 16, 50e9) == pytest.approx(ar / 2)
    assert comm.reduce_scatter_seconds(4e9, 16, 50e9) == pytest.approx(ar / 2)


def test_overlap_hides_communication():
    """Internal consistency: step = compute + (1 - overlap) · comm, bounded below by max(compute, comm) (the overlap model of PyTorch DDP, Li et al. 2020, VLDB 13(12), arXiv:2006.15704)."""
    assert comm.data_parallel_step_seconds(1.0, 0.5, overlap=0.0) == 1.5
    assert comm.data_parallel_step_seconds(1.0, 0.5, overlap=1.0) == 1.0
    assert comm.data_parallel_step_seconds(1.0, 2.0, overlap=1.0) == 2.0
    assert comm.scaling_efficiency(1.0, 0.25) == pytest.approx(0.8)


def test_gradient_accumulation_amortises_the_allreduce():
    """Internal consistency, hand-worked: one all-reduce per accumulated step (Li et al. 2020, arXiv:2006.15704, §3.2 no_sync)."""
    one = comm.accumulation_step(0.25, 0.5, 1)
    four = comm.accumulation_step(0.25, 0.5, 4)
    assert one["efficiency"] == pytest.approx(1 / 3)
    # 4 × 0.25 s of compute + 0.5 s of all-reduce: 1.0 / 1.5 of the time computes
    assert four["efficiency"] == pytest.approx(1.0 / 1.5)
    assert four["step_s"] == pytest.approx(1.5)


def test_link_bandwidth_from_the_catalogue(catalog):
    """Datasheets: H100 SXM NVLink 4 at 900 GB/s total (450 GB/s each way); PCIe 4.0 x16 at 31.5 GB/s per direction (PCI-SIG)."""
    # NVLink 4 on H100 SXM: 900 GB/s in both directions = 450 GB/s each way
    assert comm.link_bandwidth(find("H100 SXM", catalog)) == pytest.approx(450e9)
    # a PCIe-only card: the host link's per-direction rate
    l4 = find("L4", catalog)
    assert comm.link_bandwidth(l4, scope="pcie") == pytest.approx(31.5e9)


def test_gradient_bytes():
    """Hand-worked: 7e9 gradients × 2 bytes (bf16) = 14e9 bytes; internal consistency with memory.bytes_per_param."""
    assert comm.gradient_bytes(7e9, "bf16") == 14e9


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: comm.ring_allreduce_seconds(1e9, 0, 1e9), "n_devices"),
        (lambda: comm.ring_allreduce_seconds(1e9, 2.5, 1e9), "n_devices"),
        (lambda: comm.ring_allreduce_seconds(1e9, 8, 0), "bandwidth"),
        (lambda: comm.ring_allreduce_seconds(-1, 8, 1e9), "nbytes"),
        (lambda: comm.data_parallel_step_seconds(1.0, 0.5, overlap=1.5), "overlap"),
        (lambda: comm.accumulation_step(0.1, 0.1, 0), "accumulation_steps"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    """Behaviour, not a formula: bad input raises a ValueError naming the argument (DESIGN.md conventions)."""
    with pytest.raises(ValueError, match=argument):
        call()


def test_hierarchical_allreduce_reduces_to_the_ring_inside_one_node():
    """Internal consistency: a single node is a flat ring (Patarasuk & Yuan 2009)."""
    one_node = comm.hierarchical_allreduce_seconds(1e9, 1, 8, 300e9, 25e9)
    assert one_node == pytest.approx(comm.ring_allreduce_seconds(1e9, 8, 300e9))


def test_hierarchical_allreduce_worked_example():
    """Hand-worked two-level all-reduce: ring inside the node, ring over nodes on 1/8 of the data (the hierarchical scheme of Jia et al. 2018, arXiv:1807.11205; NCCL's tree/ring over nodes)."""
    # 4 nodes × 8 devices, 1 GB: inside 2·7/8·1e9/300e9 = 5.83 ms; across 2·3/4·(1e9/8)/25e9 = 7.5 ms
    t = comm.hierarchical_allreduce_seconds(1e9, 4, 8, 300e9, 25e9)
    assert t == pytest.approx(2 * 7 / 8 * 1e9 / 300e9 + 2 * 3 / 4 * 1.25e8 / 25e9)
    # slower than inside one node, faster than a flat ring over the network
    assert comm.ring_allreduce_seconds(1e9, 8, 300e9) < t < comm.ring_allreduce_seconds(1e9, 32, 25e9)
