"""Roofline: ridge points from datasheets, kernel intensities, vectorised bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accelkit import catalog as cat
from accelkit import roofline


def test_a100_ridge_point_from_datasheet(catalog):
    # NVIDIA A100 80GB SXM datasheet: 312 TFLOPS dense BF16, 2,039 GB/s -> 153 FLOP/byte
    a100 = cat.find("A100 80GB SXM", catalog)
    ridge = roofline.ridge_point(a100["bf16_tflops"] * 1e12, a100["memory_bw_gbs"] * 1e9)
    assert ridge == pytest.approx(153.0, abs=0.5)


def test_h100_ridge_point_from_datasheet():
    # H100 SXM datasheet: 989 TFLOPS dense BF16, 3.35 TB/s -> ~295 FLOP/byte
    assert roofline.ridge_point(989.4e12, 3.35e12) == pytest.approx(295.3, abs=0.5)


def test_attainable_is_the_lower_roof():
    assert roofline.attainable_flops(312e12, 2.039e12, 10) == pytest.approx(20.39e12)
    assert roofline.attainable_flops(312e12, 2.039e12, 1000) == 312e12
    assert roofline.bound(312e12, 2.039e12, 10) == "memory"
    assert roofline.bound(312e12, 2.039e12, 1000) == "compute"


def test_gemm_intensity():
    # NVIDIA "GPU Performance Background": 2MNK / (2(MK + NK + MN)) in fp16
    assert roofline.gemm_intensity(4096, 4096, 4096, "fp16") == pytest.approx(2 * 4096**3 / (2 * 3 * 4096**2))
    # a matrix-vector product is ~1 FLOP/byte in bf16: always memory-bound
    assert roofline.gemm_intensity(1, 4096, 4096) == pytest.approx(1.0, abs=0.01)


def test_elementwise_add_is_memory_bound():
    assert roofline.elementwise_intensity(1, 2, 1, "bf16") == pytest.approx(1 / 6)


def test_attention_intensity_fused_vs_unfused():
    fused = roofline.attention_intensity(2048, 2048, 128, "bf16", fused=True)
    unfused = roofline.attention_intensity(2048, 2048, 128, "bf16", fused=False)
    # fused: 4 s² d / (4 s d · 2) = s/2 = 1024 ... (FlashAttention avoids the s² traffic)
    assert fused == pytest.approx(4 * 2048 * 2048 * 128 / ((2 * 2048 * 128 + 2 * 2048 * 128) * 2))
    assert unfused < fused / 3
    # one decode step (sq = 1) reads the whole cache: ~1 FLOP/byte
    assert roofline.attention_intensity(1, 4096, 128) == pytest.approx(1.0, abs=0.01)


def test_decode_intensity_is_about_the_batch_in_bf16():
    assert roofline.decode_intensity(7e9, 1) == pytest.approx(1.0)
    assert roofline.decode_intensity(7e9, 64) == pytest.approx(64.0)
    with_kv = roofline.decode_intensity(7e9, 64, kv_bytes_per_sequence=0.5e9)
    assert with_kv < 64


def test_prefill_is_compute_bound_on_every_device(catalog):
    # the highest bf16 ridge point in the catalogue is ~560 FLOP/byte (TPU v6e)
    intensity = roofline.prefill_intensity(7e9, 1, 1024)
    known = catalog.dropna(subset=["bf16_tflops", "memory_bw_gbs"])
    ridges = roofline.ridge_point(known["bf16_tflops"] * 1e12, known["memory_bw_gbs"] * 1e9)
    assert (intensity > ridges).all()


def test_catalog_roofline_covers_every_device_and_workload(catalog):
    peak = cat.peak_flops(catalog, "bf16")
    bw = cat.datasheet_memory_bandwidth(catalog)
    workloads = np.array([1.0, 10.0, 100.0, 1000.0])
    table = roofline.catalog_roofline(peak, bw, workloads, catalog["name"], ["a", "b", "c", "d"])
    assert len(table) == len(catalog) * 4
    h100 = table[(table["device"] == "H100 SXM")].set_index("workload")
    assert h100.loc["a", "bound"] == "memory" and h100.loc["d", "bound"] == "compute"
    assert h100.loc["a", "attainable_flops"] == pytest.approx(3.35e12)
    t4 = table[table["device"] == "T4"]
    assert (t4["bound"] == "unknown").all(), "T4 has no bf16 figure: its rows must say unknown"


def test_series_in_series_out(catalog):
    peak = cat.peak_flops(catalog, "bf16").dropna()
    bw = cat.datasheet_memory_bandwidth(catalog)[peak.index]
    ridge = roofline.ridge_point(peak, bw)
    assert isinstance(ridge, pd.Series) and ridge.index.equals(peak.index)
    assert isinstance(roofline.bound(peak, bw, 100.0), pd.Series)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: roofline.ridge_point(312e12, 0), "bandwidth"),
        (lambda: roofline.attainable_flops(312e12, 2e12, -1), "intensity"),
        (lambda: roofline.gemm_intensity(0, 10, 10), "m"),
        (lambda: roofline.gemm_intensity(10, 10, 10, "fp7"), "precision"),
        (lambda: roofline.attainable_flops(float("nan"), 2e12, 1), "peak_flops"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()
