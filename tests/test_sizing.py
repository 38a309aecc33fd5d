"""Sizing a scenario: compute, memory and edge units, against hand-worked values.

Every expected number below is worked by hand in the comment above its assertion,
from the formula and the figures in data/models.csv and data/accelerators.csv
(Llama-2 7B: 6,738,415,616 parameters, 32 layers, 32 KV heads of 128 dimensions,
Meta's model card; YOLOv8s: 11,166,560 parameters and 28.8 GFLOP per 640×640
frame, Ultralytics' yolov8.yaml; T4: 65 dense FP16 TFLOP/s, 70 W, NVIDIA's T4
datasheet).
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import cluster, load_catalog, sizing
from accelkit.scenario import Scenario

LLAMA2_7B_PARAMS = 6_738_415_616
YOLOV8S_FLOP_PER_FRAME = 28.8e9


def test_training_compute_is_six_flop_per_parameter_per_token():
    """6·N·D (Kaplan et al. 2020, arXiv:2001.08361, §2.1): the default scenario trains
    Llama-2 7B on 2e10 tokens within 30 days."""
    need = sizing.compute_need(Scenario())
    # 6 × 6,738,415,616 × 2e10 = 8.0860987392e20 FLOP
    assert need["total_flops"] == pytest.approx(8.0860987392e20), "training FLOP should be 6 × parameters × tokens"
    # 30 days = 30 × 86,400 s = 2,592,000 s; 8.0860987392e20 / 2.592e6 = 3.1196368592e14 FLOP/s
    assert need["deadline_s"] == pytest.approx(2.592e6), "a 30-day target is 2,592,000 seconds"
    assert need["required_flops_per_s"] == pytest.approx(3.1196368592e14), \
        "the FLOP/s needed should be the training FLOP spread evenly over the deadline"


def test_inference_compute_is_two_flop_per_parameter_per_token_of_each_request():
    """2·N per token (Kaplan et al. 2020, §2.1) over prompt + output tokens."""
    need = sizing.compute_need(Scenario(workload="inference", seq_len=2048, output_tokens=256, requests_per_s=4.0))
    # per request: 2 × 6,738,415,616 × (2048 + 256) = 3.1050619158528e13 FLOP
    assert need["total_flops"] == pytest.approx(3.1050619158528e13), \
        "a request should cost 2 FLOP per parameter for every prompt and output token"
    # 4 requests/s × 3.1050619158528e13 = 1.24202476634112e14 FLOP/s
    assert need["required_flops_per_s"] == pytest.approx(1.24202476634112e14), \
        "the FLOP/s needed should be the FLOP per request times the request rate"


def test_inference_memory_is_weights_plus_kv_cache_shared_over_the_devices():
    """Weights: N × 2 bytes in bf16; KV cache: 2 (K and V) × layers × KV heads × head
    dim × bytes per element per token (Kwon et al. 2023, PagedAttention, arXiv:2309.06180, §2)."""
    s = Scenario(workload="inference", precision="bf16", seq_len=2048, output_tokens=256, batch_size=16, n_devices=8)
    mem = sizing.memory_need(s)
    # weights: 6,738,415,616 × 2 bytes / 8 devices = 1,684,603,904 bytes
    assert mem["weights"] == pytest.approx(1_684_603_904), "bf16 weights should be 2 bytes per parameter, split over 8"
    # KV per token: 2 × 32 layers × 32 heads × 128 × 2 bytes = 524,288 bytes;
    # × 2,304 tokens × 16 sequences = 19,327,352,832 bytes; / 8 devices = 2,415,919,104 bytes
    assert mem["kv_cache"] == pytest.approx(2_415_919_104), \
        "the KV cache should hold K and V of every layer for every token of every sequence, split over 8"
    assert mem["total"] == pytest.approx(1_684_603_904 + 2_415_919_104), "total should be weights plus KV cache"
    assert mem["gradients"] == 0 and mem["optimizer"] == 0, "inference holds no gradients or optimizer state"


def test_zero3_shards_all_model_state_so_devices_follow_from_memory():
    """Mixed-precision Adam holds 16 bytes per parameter (2 weights + 2 gradients + 12
    optimizer incl. fp32 master; Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, §3.1);
    ZeRO stage 3 divides all of it by the device count."""
    s = Scenario(model="custom", params=1e10, workload="training", precision="bf16", zero_stage=3)
    fixed, sharded = sizing.memory_split(s)
    # 16 bytes × 1e10 = 1.6e11 bytes, all sharded; a custom model has no shape, so no activations
    assert fixed == pytest.approx(0.0, abs=1.0), "under ZeRO-3 no model state is replicated"
    assert sharded == pytest.approx(1.6e11), "mixed-precision Adam should be 16 bytes per parameter"
    # 1.6e11 / 8e10 usable = 2 devices; 1.6e11 / 7e10 = 2.29 -> 3 devices
    assert sizing.min_devices_for_memory(s, 8e10) == 2, "160 GB of state needs 2 devices with 80 GB usable"
    assert sizing.min_devices_for_memory(s, 7e10) == 3, "160 GB of state needs 3 devices with 70 GB usable"


def test_without_zero_the_replicated_state_never_fits_a_smaller_device():
    """ZeRO stage 0 replicates the 16 bytes per parameter on every device (ZeRO §3.1)."""
    s = Scenario(model="custom", params=1e10, workload="training", precision="bf16", zero_stage=0)
    # 1.6e11 bytes on each device > 8e10 usable: no device count helps
    assert np.isinf(sizing.min_devices_for_memory(s, 8e10)), \
        "a replicated 160 GB state cannot fit 80 GB devices however many there are"
    assert sizing.min_devices_for_memory(s, 2e11) == 1, "160 GB of state fits one device with 200 GB usable"


def test_edge_fit_counts_whole_units_from_the_frame_rate_one_unit_delivers():
    """Frame time = roofline(F / (peak × utilisation), weights / bandwidth) + the small-batch
    floor (projection.vision; roofline: Williams et al. 2009, CACM 52(4)) with the T4's
    datasheet 65 dense FP16 TFLOP/s and its measured 239.8 GB/s."""
    from accelkit import load_catalog

    table = sizing.edge_fit(load_catalog(), streams=30, fps=30, model="YOLOv8s", precision="fp16",
                            utilization=0.3, devices=["T4"])
    row = table.iloc[0]
    from accelkit.projection.constants import constants

    k = constants()
    # YOLOv8s has no layer table: the whole-net roofline plus a fused stack's 56 kernels of a ResNet-50 depth.
    # compute 28.8e9 / (65e12 × 0.3) = 1.476923 ms; weights 11,166,560 × 2 B / 239.8e9 B/s = 0.093132 ms
    # the kernels: vision_kernel_cycles_fused cycles each at the T4's 1,590 MHz boost clock (data/clocks_caches.csv)
    expected_ms = 1.476923 + (1 - k["roofline_overlap"]) * 0.093132 + 56 * k["vision_kernel_cycles_fused"] / 1590e6 * 1e3
    assert row["frame_ms"] == pytest.approx(expected_ms, rel=1e-5), \
        "frame time should be compute + the unhidden weight traffic + 56 fused kernels"
    assert row["fps_per_unit"] == pytest.approx(1e3 / expected_ms, rel=1e-5), "fps is the inverse of the frame time"
    assert row["units"] == 2, "900 frames/s at 479 per unit needs 2 whole units"
    # 2 × 70 W = 140 W
    assert row["power_w"] == pytest.approx(140.0), "power should be units × TDP"
    assert bool(row["meets"]), f"no target was set, so the T4 should pass; reason given: {row['reason']!r}"


def test_edge_fit_names_the_latency_target_it_misses():
    from accelkit import load_catalog

    table = sizing.edge_fit(load_catalog(), streams=1, fps=30, precision="fp16", utilization=0.3,
                            latency_ms=1.0, devices=["T4"])
    # 2.02 ms per frame (above) > 1 ms
    assert not table.iloc[0]["meets"], "a 2.02 ms frame should miss a 1 ms target"
    assert table.iloc[0]["reason"] == "2.0 ms per frame > 1 ms", "the reason should name the frame time and the target"


@pytest.mark.parametrize("device, options", [
    ("H100 SXM", {}),
    ("A100 80GB SXM", {"network_gbps": 50.0, "overlap": 0.3}),
    ("RTX 4090", {"intra_gbs": 32.0}),
])
def test_scaling_curve_is_the_cluster_step_at_each_count(device, options):
    """The chapter's scaling curves are projected for all counts at once; each point must
    be exactly what one cluster step at that count projects (same engine, same inputs)."""
    from accelkit.catalog import find

    row = find(device, load_catalog())
    s = Scenario(workload="training", model="Llama-2 7B", zero_stage=2)
    counts = [1, 2, 8, 16, 64, 512]
    curve = cluster.cluster_scaling(s, row, counts, 2, 4, 8, **options)
    for i, n in enumerate(counts):
        step = cluster.cluster_step(s, row, n, 2, 4, 8, **options)
        for column in ("step_s", "compute_s", "comm_s", "comm_total_s", "efficiency", "tokens_per_s", "days",
                       "n_nodes"):
            assert curve[column].iloc[i] == pytest.approx(step[column], rel=1e-12), (
                f"{device}, {n} devices: the scaling curve's {column} ({curve[column].iloc[i]}) differs from the "
                f"cluster step's ({step[column]})")


def test_accumulation_splits_are_the_cluster_step_of_each_split():
    """Splitting a global batch of 256 over 8 devices into k accumulated micro-batches
    (k = 1, 2, 4, 8, 16, 32 all divide 32 sequences per device): each split must be what
    one cluster step with that micro-batch and k projects."""
    from accelkit.catalog import find

    row = find("H100 SXM", load_catalog())
    s = Scenario(workload="training", model="Llama-2 7B")
    splits = cluster.accumulation_sweep(s, row, 8, 256, network_gbps=100.0, overlap=0.5)
    assert list(splits["accumulation_steps"]) == [1, 2, 4, 8, 16, 32]
    assert list(splits["micro_batch"]) == [32, 16, 8, 4, 2, 1]
    for _, split in splits.iterrows():
        step = cluster.cluster_step(s, row, 8, int(split["micro_batch"]), int(split["accumulation_steps"]), 8, 100.0,
                                   0.5)
        for column in ("step_s", "efficiency", "activations_gb"):
            assert split[column] == pytest.approx(step[column], rel=1e-12), (
                f"{split['accumulation_steps']} micro-batches: the sweep's {column} differs from the cluster step's")


def test_cluster_footprint_hand_worked():
    """8 × H100 SXM (700 W) in one server with 2 kW of host overhead at PUE 1.2 for a 2-day run:
    IT load 7.6 kW, 9.12 kW at the meter, 437.76 kWh; state from memory.training_bytes."""
    from accelkit import memory, units

    catalog = load_catalog()
    device = catalog.set_index("name").loc["H100 SXM"].copy()
    device["name"] = "H100 SXM"
    s = Scenario(model="Llama-2 7B", n_devices=8, zero_stage=1, pue=1.2, electricity_usd_per_kwh=0.1)
    step = {"activations_gb": 10.0, "n_nodes": 1, "days": 2.0}
    f = cluster.cluster_footprint(s, device, step, node_overhead_w=2000.0)
    assert f["it_w"] == pytest.approx(8 * 700 + 2000) and f["facility_w"] == pytest.approx(7600 * 1.2)
    assert f["kwh"] == pytest.approx(9.12 * 48) and f["electricity_usd"] == pytest.approx(9.12 * 48 * 0.1)
    state = memory.training_bytes(sizing.model_of(s)["params"], "mixed", "adam", 1, 8) / units.GIGA
    assert f["state_gb"] == pytest.approx(state) and f["per_device_gb"] == pytest.approx(state + 10.0)
    assert f["fits"] == (f["per_device_gb"] <= f["usable_gb"])
