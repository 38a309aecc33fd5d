"""Energy, emissions and number formats."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import energy, precision


def test_seed_a100_efficiency_example():
    # the source article: A100 312 TFLOPS / 400 W = 0.78 TFLOPS per W
    assert energy.flops_per_watt(312e12, 400) / 1e12 == pytest.approx(0.78)


def test_llama2_energy_and_emissions():
    """Touvron et al. 2023 (arXiv:2307.09288), table 2, also in meta-llama/llama MODEL_CARD.md:
    7B 184,320 GPU-hours at 400 W, 31.22 tCO2eq; 13B 368,640 h at 400 W, 62.44 t; 70B
    1,720,320 h at 400 W, 291.42 t; 34B 1,038,336 h at 350 W (the production cluster's cap,
    section 2.2.1); total 3,311,616 h, 539.00 t.

    The paper states no grid carbon intensity, so it is read off the 7B row only (31.22 t /
    73,728 kWh = 0.4234 kg/kWh); the other rows and the total, at their own power, are then
    predictions the functions must reproduce (to the table's two decimals).
    """
    kwh_7b = energy.job_energy_kwh(400, 184320 * 3600)
    assert kwh_7b == pytest.approx(73728)  # 184,320 h x 0.4 kW
    intensity = 31.22e3 / 73728
    assert energy.co2_kg(energy.job_energy_kwh(400, 368640 * 3600), intensity) == pytest.approx(62.44e3, rel=5e-4)
    assert energy.co2_kg(energy.job_energy_kwh(400, 1720320 * 3600), intensity) == pytest.approx(291.42e3, rel=5e-4)
    total_kwh = sum(energy.job_energy_kwh(w, h * 3600) for w, h in
                    ((400, 184320), (400, 368640), (350, 1038336), (400, 1720320)))
    assert total_kwh == pytest.approx(1_272_729.6)
    assert energy.co2_kg(total_kwh, intensity) == pytest.approx(539.00e3, rel=5e-4)


def test_pue_scales_energy():
    assert energy.job_energy_joules(700, 3600, n_devices=8, pue=1.2) == pytest.approx(700 * 3600 * 8 * 1.2)


def test_effective_efficiency_at_utilization():
    assert energy.effective_flops_per_watt(312e12, 400, 0.5) == pytest.approx(0.39e12)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: energy.flops_per_watt(312e12, 0), "watts"),
        (lambda: energy.job_energy_joules(400, 10, pue=0.9), "pue"),
        (lambda: energy.effective_flops_per_watt(1e12, 100, 0), "utilization"),
        (lambda: energy.co2_kg(-1, 0.4), "energy_kwh"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_format_table_matches_numpy_and_the_fp8_paper():
    f = precision.FORMATS
    assert f.loc["fp16", "max"] == float(np.finfo(np.float16).max) == 65504.0
    assert f.loc["fp16", "epsilon"] == float(np.finfo(np.float16).eps)
    assert f.loc["fp32", "epsilon"] == float(np.finfo(np.float32).eps)
    assert f.loc["fp64", "smallest_normal"] == float(np.finfo(np.float64).tiny)
    assert f.loc["fp16", "smallest_normal"] == float(np.finfo(np.float16).tiny)
    # Micikevicius et al. 2022, table 1: E4M3 max 448
    assert f.loc["fp8", "max"] == 448.0
    # bfloat16: fp32's range, 8 significant bits
    assert f.loc["bf16", "max"] == pytest.approx(3.3895e38, rel=1e-4)
    assert f.loc["bf16", "epsilon"] == 2**-7


def test_speedup_and_fast_devices(catalog):
    speed = precision.speedup_over_fp32(catalog, "bf16")
    h100 = catalog.index[catalog["name"] == "H100 SXM"][0]
    assert speed[h100] == pytest.approx(989.5 / 67, rel=0.01)
    fast = precision.fast_devices(catalog, "fp8")
    assert "H100 SXM" in fast and "A100 80GB SXM" not in fast and "T4" not in fast


def test_memory_saved_matches_the_seed_ct_example():
    assert precision.memory_saved_fraction("fp32", "fp16") == 0.5
    assert precision.SEED_CT_EXAMPLE["memory_saved_fraction"] == 0.5
    assert precision.memory_saved_fraction("bf16", "int4") == 0.75


def test_guidance_table_restates_the_article():
    table = precision.guidance_table()
    assert list(table["precision"])[:3] == ["fp32", "fp16 / bf16", "int8"]
    assert "Jetson" in table.loc[2, "article_devices"]


def test_bf16_rounding_is_round_to_nearest_even():
    out = precision.round_to([1.0, 1 + 2**-8, 1 + 2**-7, 1 + 3 * 2**-8], "bf16")
    np.testing.assert_array_equal(out, [1.0, 1.0, 1 + 2**-7, 1 + 2**-6])


def test_fp16_underflow_and_loss_scaling():
    # fp16's smallest subnormal is 2^-24: 2^-26 flushes to zero, 2^-26 × 2^16 does not
    assert precision.underflow_fraction([2.0**-26], "fp16") == 1.0
    assert precision.underflow_fraction([2.0**-26], "fp16", scale=2.0**16) == 0.0
    assert precision.underflow_fraction([2.0**-26], "bf16") == 0.0
    assert precision.overflow_fraction([1.0e5], "fp16") == 1.0  # above 65504
    with pytest.raises(ValueError, match="scale"):
        precision.underflow_fraction([1.0], "fp16", scale=0)


def test_loss_scaling_demo_shape():
    demo = precision.loss_scaling_demo()
    fp16 = demo[demo["format"] == "fp16"].set_index("log2_scale")
    assert fp16.loc[0.0, "underflow"] > fp16.loc[16.0, "underflow"]
    assert (demo[demo["format"] == "bf16"]["underflow"] == 0).all()
