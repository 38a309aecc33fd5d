"""Memory footprint against the ZeRO, Korthikanti and vLLM papers."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import memory


def test_weight_bytes_per_precision():
    assert memory.weight_bytes(7e9, "bf16") == 14e9
    assert memory.weight_bytes(7e9, "fp32") == 28e9
    assert memory.weight_bytes(7e9, "int4") == 3.5e9
    assert memory.weight_bytes(7e9, "FP8") == 7e9


@pytest.mark.parametrize(
    "stage, expected_gb",
    # Rajbhandari et al. 2020 (ZeRO), figure 1: Ψ = 7.5B, N_d = 64, K = 12
    [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_zero_stages_match_the_paper(stage, expected_gb):
    got = memory.training_bytes(7.5e9, "mixed", "adam", zero_stage=stage, n_devices=64) / 1e9
    assert got == pytest.approx(expected_gb, abs=0.05)


def test_zero_paper_gpt2_example():
    # ZeRO §3.1: a 1.5B-parameter model needs at least 24 GB of model states (16 bytes/param)
    assert memory.training_bytes(1.5e9) == pytest.approx(24e9)


def test_eighteen_byte_convention_with_fp32_gradients():
    # Hugging Face "model training anatomy": 18 bytes per parameter for mixed-precision AdamW
    assert memory.training_bytes(1e9, fp32_grads=True) == pytest.approx(18e9)


def test_other_optimizers():
    assert memory.training_bytes(1e9, optimizer="sgd-momentum") == pytest.approx(12e9)
    assert memory.training_bytes(1e9, optimizer="adam-8bit") == pytest.approx(10e9)
    assert memory.training_bytes(1e9, optimizer="adafactor") == pytest.approx(8e9)
    assert memory.training_bytes(1e9, precision="fp32", optimizer="adam") == pytest.approx(16e9)


def test_breakdown_adds_up():
    parts = memory.training_bytes_breakdown(7.5e9, zero_stage=2, n_devices=64)
    assert parts["total"] == pytest.approx(parts["weights"] + parts["gradients"] + parts["optimizer"])
    assert parts["weights"] == pytest.approx(15e9)


def test_activation_memory_korthikanti_equations():
    # Korthikanti et al. 2022, eq. 1: sbh(34 + 5as/h); GPT-3 175B shape s=2048, h=12288, a=96, b=1
    s, b, h, a = 2048, 1, 12288, 96
    expected = s * b * h * (34 + 5 * a * s / h)
    assert memory.activation_bytes_per_layer(s, b, h, a) == pytest.approx(expected)
    # eq. 2, tensor parallel t = 8
    t = 8
    assert memory.activation_bytes_per_layer(s, b, h, a, tensor_parallel=t) == pytest.approx(
        s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    )
    # table 2: sequence parallel + selective recomputation = 34 sbh / t
    assert memory.activation_bytes_per_layer(
        s, b, h, a, tensor_parallel=t, sequence_parallel=True, recompute="selective"
    ) == pytest.approx(34 * s * b * h / t)
    # full recomputation keeps only the layer input: 2 sbh
    assert memory.activation_bytes_per_layer(s, b, h, a, recompute="full") == pytest.approx(2 * s * b * h)


def test_kv_cache_matches_vllm_paper():
    # Kwon et al. 2023 (vLLM), §2.3: OPT-13B needs 2 × 5120 × 40 × 2 bytes = 800 KB per token
    per_token = memory.kv_cache_bytes(40, 40, 128, 1, 1, "fp16")
    assert per_token == 819_200
    # ... and up to 1.6 GB for a 2048-token request
    assert memory.kv_cache_bytes(40, 40, 128, 2048, 1, "fp16") / 1e9 == pytest.approx(1.68, abs=0.01)


def test_grouped_query_attention_shrinks_the_cache():
    # Llama-2 70B: 80 layers, 8 KV heads of 128 (GQA) vs 64 heads: 8x smaller
    gqa = memory.kv_cache_bytes(80, 8, 128, 4096, 1, "bf16")
    mha = memory.kv_cache_bytes(80, 64, 128, 4096, 1, "bf16")
    assert mha / gqa == 8
    assert gqa == pytest.approx(1.34e9, rel=0.01)


def test_fits_and_min_devices_use_the_reserve():
    # 70B in bf16 = 140 GB; an 80 GB device leaves 72 GB usable at the default 10 % reserve
    need = memory.weight_bytes(70e9, "bf16")
    assert memory.min_devices(need, 80e9) == 2
    assert not memory.fits(need, 80e9)
    assert memory.fits(memory.weight_bytes(7e9, "bf16"), 24e9)
    assert memory.min_devices(need, 80e9, reserve_fraction=0.5) == 4
    np.testing.assert_array_equal(memory.min_devices(need, np.array([24e9, 80e9, 192e9])), [7, 2, 1])


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: memory.weight_bytes(0, "bf16"), "params"),
        (lambda: memory.weight_bytes(1e9, "fp12"), "precision"),
        (lambda: memory.training_bytes(1e9, zero_stage=4), "zero_stage"),
        (lambda: memory.training_bytes(1e9, optimizer="lion"), "optimizer"),
        (lambda: memory.kv_cache_bytes(32, 8, 128, -5, 1, "bf16"), "seq_len"),
        (lambda: memory.usable_bytes(80e9, reserve_fraction=1.0), "reserve_fraction"),
        (lambda: memory.min_devices(float("nan"), 80e9), "required_bytes"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_unknown_precision_suggests_a_close_name():
    with pytest.raises(ValueError, match="Did you mean 'bf16'"):
        memory.weight_bytes(1e9, "bf61")
