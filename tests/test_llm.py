"""LLM inference bounds.

Sources: decode is memory-bound at small batch -- each token reads every weight
(Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
https://huggingface.co/papers/2211.05102, §2); the KV cache holds K and V per layer,
KV head and head dimension for every token (Kwon et al., "Efficient Memory Management
for Large Language Model Serving with PagedAttention", SOSP 2023,
https://huggingface.co/papers/2309.06180, §2.2); forward FLOP 2·N per token (Kaplan
et al. 2020, arXiv:2001.08361, §2.1); the critical batch is the roofline ridge point
(Williams, Waterman & Patterson, CACM 52(4), 2009, doi:10.1145/1498765.1498785).
Device figures: H100 SXM 3.35 TB/s and 989 dense BF16 TFLOP/s, A100 80GB 2.039 TB/s
and 312 TFLOP/s (NVIDIA datasheets); Llama-2 7B shape from Meta's model card.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import llm, memory
from accelkit.models import find_model, load_models


def test_decode_floor_llama2_7b_on_h100():
    """Memory-bound decode floor W / BW (Pope et al. 2023, §2), hand-worked with the H100 SXM datasheet bandwidth."""
    # 13.48 GB of bf16 weights read per token at 3.35 TB/s: ≥ 4.0 ms per token (~248 tokens/s)
    weights = memory.weight_bytes(6.74e9, "bf16")
    step = llm.decode_seconds_per_token(weights, 0, 3.35e12)
    assert step == pytest.approx(4.02e-3, rel=0.01)
    # tensor parallel over 2 devices halves the floor
    assert llm.decode_seconds_per_token(weights, 0, 3.35e12, n_devices=2) == pytest.approx(step / 2)


def test_prefill_time():
    """Prefill = 2·N·tokens / (peak × utilisation) (Kaplan et al. 2020, §2.1), hand-worked with the H100 SXM datasheet peak."""
    # 2 · 7e9 · 2048 tokens on 989e12 FLOP/s at 50 %: 58 ms
    flops = 2 * 7e9 * 2048
    assert llm.prefill_seconds(flops, 989e12, 0.5) == pytest.approx(0.058, rel=0.01)


def test_critical_batch_equals_ridge_point_without_kv():
    """Without KV traffic the critical batch is the ridge point P / BW (Williams et al. 2009; Pope et al. 2023, §3.1), A100 datasheet figures."""
    # with kv = 0 and W = 2N (bf16), B* = P·u / BW: the ridge point
    n = 7e9
    b_star = llm.critical_batch(n, 2 * n, 0.0, 312e12, 2.039e12)
    assert b_star == pytest.approx(312e12 / 2.039e12)


def test_decode_switches_from_memory_to_compute_bound_at_the_critical_batch():
    """Roofline of a decode step, max(W / BW, 2·N·B / P) (Pope et al. 2023, §2): flat below the critical batch, linear above; internal consistency."""
    n, w, kv = 7e9, 14e9, 0.5e9 * 0  # no KV for a clean crossover
    b_star = llm.critical_batch(n, w, kv, 989e12, 3.35e12)
    small = llm.decode_step_seconds(n, w, kv, b_star / 4, 989e12, 3.35e12)
    large = llm.decode_step_seconds(n, w, kv, b_star * 4, 989e12, 3.35e12)
    assert small == pytest.approx(w / 3.35e12)  # memory-bound: flat in batch
    assert large == pytest.approx(2 * n * b_star * 4 / 989e12)  # compute-bound: grows with batch
    tps = llm.decode_tokens_per_second(n, w, kv, np.array([1, 8, 64]), 989e12, 3.35e12)
    assert np.all(np.diff(tps) > 0)


def test_kv_traffic_can_keep_decode_memory_bound():
    """Internal consistency of the roofline with KV traffic (Pope et al. 2023, §3.1): KV bytes per sequence above P/BW · 2 never cross over."""
    # KV per sequence larger than 2N/(P/BW) bytes: never compute-bound
    assert llm.critical_batch(1e9, 2e9, 1e12, 1e14, 1e12) == float("inf")


def test_max_batch_that_fits():
    """KV cache per sequence 2 · layers · KV heads · head dim · tokens · bytes (Kwon et al. 2023, §2.2), Llama-2 7B shape from Meta's model card; hand-worked."""
    # Llama-2 7B bf16 on an 80 GB device (72 GB usable): (72 - 13.5) GB / 2.1 GB per 4k sequence
    model = find_model("Llama-2 7B")
    weights = llm.model_weight_bytes(model, "bf16")
    kv = llm.model_kv_bytes(model, 4096, 1, "bf16")
    assert kv == pytest.approx(2 * 32 * 32 * 128 * 4096 * 2)  # 2.1 GB: MHA, 32 KV heads
    assert llm.max_batch_that_fits(80e9, weights, kv) == np.floor((72e9 - weights) / kv)
    assert llm.max_batch_that_fits(16e9, weights, kv) == 0


def test_request_latency():
    """Hand-worked: TTFT + (output tokens − 1) · TPOT = 0.05 + 100 × 0.004 = 0.45 s (the latency decomposition of Pope et al. 2023, §2)."""
    assert llm.request_latency_seconds(0.05, 0.004, 101) == pytest.approx(0.45)


def test_model_presets_are_sourced_and_shaped():
    """Data check, not a formula: presets carry a source URL; Llama-2 70B uses 8 KV heads of 128 (GQA, Meta's Llama 2 paper, arXiv:2307.09288, table 1)."""
    models = load_models()
    assert models["source_url"].str.match(r"https?://").all()
    for name in ["BERT-base", "GPT-3 175B", "Llama-2 70B", "Llama-3.1 405B", "Mixtral 8x7B", "ResNet-50"]:
        find_model(name)
    mixtral = find_model("Mixtral 8x7B")
    assert mixtral["active_params"] < mixtral["params"]
    llama70 = find_model("llama-2 70b")
    assert llama70["n_kv_heads"] == 8 and llama70["head_dim"] == 128


def test_unknown_model_suggests_presets():
    """Behaviour, not a formula: an unknown name suggests close matches (DESIGN.md conventions)."""
    with pytest.raises(ValueError, match="closest: Llama-2 7B"):
        find_model("Llama-2 8B")


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: llm.decode_seconds_per_token(14e9, 0, 0), "bandwidth"),
        (lambda: llm.decode_seconds_per_token(14e9, -1, 3e12), "kv_bytes"),
        (lambda: llm.prefill_seconds(1e15, 1e15, 1.2), "utilization"),
        (lambda: llm.max_batch_that_fits(80e9, 14e9, 0), "kv_bytes_per_sequence"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    """Behaviour, not a formula: bad input raises a ValueError naming the argument (DESIGN.md conventions)."""
    with pytest.raises(ValueError, match=argument):
        call()
