"""Compute demand against published worked examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accelkit import demand


def test_gpt3_training_compute_matches_brown_2020():
    # Brown et al. 2020 (arXiv:2005.14165), table D.1: GPT-3 175B, 300B tokens, 3.14e23 FLOP
    assert demand.training_flops(175e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_chinchilla_compute_rule():
    # Hoffmann et al. 2022: Chinchilla, 70B parameters on 1.4T tokens, C = 6ND = 5.88e23 FLOP
    assert demand.training_flops(70e9, 1.4e12) == pytest.approx(5.88e23)


def test_inference_is_two_flop_per_parameter_per_token():
    # Kaplan et al. 2020, section 2.1: C_forward ~ 2N
    assert demand.inference_flops(7e9, 1000) == pytest.approx(1.4e13)


def test_seed_formula_arithmetic_is_corrected():
    # The source article: 1e8 params x 3 x batch 32 x 10 it/s, "about 100 TFLOPS".
    assert demand.seed_flops_per_second(1e8, 32, 10) == pytest.approx(9.6e10)
    table = demand.seed_claim_check()
    by = dict(zip(table["method"], table["flops_per_s"]))
    assert by["article's claim"] == 100e12
    assert by["6·N per sample"] == pytest.approx(1.92e11)
    # only a ~512-token sequence per sample brings 6·N·D to the article's order of magnitude
    assert by["6·N per token (512 tokens/sample)"] == pytest.approx(9.83e13, rel=1e-3)
    assert table.loc[1, "ratio_to_claim"] == pytest.approx(9.6e-4)


def test_devices_needed_rounds_up_to_whole_devices():
    # 1e18 FLOP/s at 312e12 peak and 40 % utilisation: 8012.8 -> 8013 devices
    assert demand.devices_needed(1e18, 312e12, 0.4) == 8013
    # exact multiples do not gain a device from float noise
    assert demand.devices_needed(3 * 312e12 * 0.3, 312e12, 0.3) == 3
    assert demand.devices_needed(1.0, 312e12, 0.5) == 1


def test_training_days_for_gpt3_on_1024_a100s():
    # 3.14e23 FLOP on 1024 A100 (312 TFLOP/s) at 40 % MFU: 3.14e23 / (1024*312e12*0.4) s ≈ 28.4 days
    seconds = demand.training_seconds(3.14e23, 1024, 312e12, 0.4)
    assert seconds / 86400 == pytest.approx(28.44, rel=0.01)


def test_llama2_7b_implied_utilization():
    # Touvron et al. 2023, table 2: 184,320 A100-80GB GPU-hours for Llama 2 7B on 2.0T tokens.
    flops = demand.training_flops(6.74e9, 2.0e12)
    mfu = demand.implied_utilization(flops, 1, 312e12, 184320 * 3600)
    assert mfu == pytest.approx(0.39, abs=0.01)


def test_deadline_rate():
    assert demand.flops_per_second_for_deadline(8.64e20, 86400) == pytest.approx(1e16)


def test_series_in_gives_series_out():
    params = pd.Series([1e9, 7e9], index=["small", "big"])
    out = demand.training_flops(params, 1e12)
    assert isinstance(out, pd.Series) and list(out.index) == ["small", "big"]
    devices = demand.devices_needed(pd.Series([1e16, 1e17]), 312e12, 0.4)
    assert isinstance(devices, pd.Series)


def test_vectorised_over_arrays():
    out = demand.training_seconds(1e21, np.array([1, 2, 4]), 1e14, 0.5)
    np.testing.assert_allclose(out, [2e7, 1e7, 5e6])


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: demand.training_flops(-1, 10), "params"),
        (lambda: demand.training_flops(1e9, 0), "tokens"),
        (lambda: demand.training_flops(float("nan"), 10), "params"),
        (lambda: demand.devices_needed(1e15, 1e14, 1.5), "utilization"),
        (lambda: demand.devices_needed(1e15, 1e14, 0), "utilization"),
        (lambda: demand.devices_needed(1e15, 0, 0.5), "peak_flops"),
        (lambda: demand.training_seconds(1e20, 8, 1e14, -0.1), "utilization"),
        (lambda: demand.seed_flops_per_second("lots", 32, 10), "params"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_error_message_says_what_was_expected():
    with pytest.raises(ValueError) as err:
        demand.devices_needed(1e15, 1e14, 1.5)
    assert "utilization must be a utilisation in (0, 1]" in str(err.value) and "1.5" in str(err.value)
