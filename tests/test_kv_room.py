"""How many sequences a serving engine holds (issue 24, item 2): TensorRT-LLM's default policy reserves a
request's whole output when it admits it, in a share of the memory the weights leave; vLLM's paged cache
holds the tokens a sequence has, in a share of the whole device. The figures below are worked by hand."""

import numpy as np

from accelkit.projection import constants, inference
from accelkit.projection.kv_room import sequences_that_fit
from accelkit.projection.stacks import kv_cache_policy, load_stacks

GB = 1e9
# Llama-3.1 8B: 32 layers x 8 KV heads x 128 (K and V) at 2 bytes
KV_BF16_8B = 32 * 8 * 128 * 2 * 2


def _most(stack, L=500, O=2000, device="H100 SXM"):
    r = inference(device, "Llama-3.1 8B", input_tokens=L, output_tokens=O, concurrency=400, stack=stack,
                  check_memory=False)
    return r["most_sequences"], r["weight_bytes_per_device"]


def test_the_stacks_table_states_each_serving_engines_kv_policy_with_its_source():
    stacks = load_stacks().set_index("stack")
    assert stacks.loc["tensorrt-llm", "kv_reservation"] == "whole_request"
    assert stacks.loc["tensorrt-llm", "kv_cache_share_of"] == "memory_after_weights"
    assert "GUARANTEED_NO_EVICT (default)" in stacks.loc["tensorrt-llm", "kv_policy_quote"]
    assert "kv_cache_free_gpu_mem_fraction" in stacks.loc["tensorrt-llm", "kv_policy_quote"]
    assert stacks.loc["vllm", "kv_reservation"] == "tokens_held"
    assert stacks.loc["vllm", "kv_cache_share_of"] == "device_memory"
    for name in ("tensorrt-llm", "vllm"):
        assert stacks.loc[name, "kv_policy_source_url"].startswith("https://"), f"{name}'s KV policy has no source"
    for name in ("sglang", "vendor-serving"):
        assert "assumed" in stacks.loc[name, "kv_policy_quote"], f"{name}'s policy is assumed and must say so"


def test_every_serving_engine_states_its_kv_policy_and_no_other_stack_does():
    stacks = load_stacks()
    serving = stacks["workloads"].str.contains("llm")
    for _, row in stacks[serving].iterrows():
        assert row["kv_reservation"] and row["kv_cache_share_of"] and row["kv_policy_quote"], \
            f"serving engine {row['stack']!r} does not say how it sets KV cache aside"
    assert not stacks.loc[~serving, ["kv_reservation", "kv_cache_share_of"]].astype(bool).any().any(), \
        "an image, encoder or recommender stack states a serving KV policy"


def test_an_unknown_stack_holds_what_vllm_holds():
    whole, after = kv_cache_policy(np.array(["vllm", "tensorrt-llm", "no-such-stack"], dtype=object))
    assert whole.tolist() == [False, True, False] and after.tolist() == [False, True, False]


def test_tensorrt_llm_reserves_each_requests_whole_output_in_what_the_weights_leave():
    most, weights = _most("tensorrt-llm")
    reserve = constants()["serving_reserve_fraction"]
    room = (80 * GB - weights) * (1 - reserve)
    assert most == min(256, np.floor(room / (KV_BF16_8B * (500 + 2000))))


def test_vllm_holds_each_prompt_and_half_its_output_in_its_share_of_the_whole_device():
    most, weights = _most("vllm")
    reserve = constants()["serving_reserve_fraction"]
    room = 80 * GB * (1 - reserve) - weights
    assert most == min(256, np.floor(room / (KV_BF16_8B * (500 + 2000 / 2))))


def test_a_long_output_fits_fewer_requests_under_tensorrt_llm_than_under_vllm():
    trt, _ = _most("tensorrt-llm", L=200, O=4000)
    vllm, _ = _most("vllm", L=200, O=4000)
    assert trt < vllm, "reserving 4,200 tokens per request must hold fewer than holding 2,200 on average"


def test_a_fixed_batch_holds_every_sequence_to_its_full_length_on_any_stack():
    mem, weights = np.array([[80 * GB]]), np.array([[16 * GB]])
    for stack in ("vllm", "tensorrt-llm"):
        fit, room, kv_seq = sequences_that_fit(mem, weights, KV_BF16_8B, 1000, 1000, np.array([stack], dtype=object),
                                               0.1, fixed_batch=True)
        assert kv_seq[0, 0] == KV_BF16_8B * 2000
        assert fit[0, 0] == np.floor(room[0, 0] / kv_seq[0, 0])


def test_weights_that_leave_no_room_fit_no_sequence():
    fit, room, _ = sequences_that_fit(np.array([[80 * GB]]), np.array([[79 * GB]]), KV_BF16_8B, 100, 100,
                                      np.array(["vllm"], dtype=object), 0.1)
    assert room[0, 0] < 0 and fit[0, 0] == 0


def test_the_slot_bound_nim_run_waits_for_slots_under_tensorrt_llm():
    # NIM 1.8.0, Llama 3.3 70B on two H100s at FP8 (FP8 KV cache), 200 clients of 500 + 2,000 tokens: 4.87 s
    # measured; priced as vLLM (256 slots) the engine said 0.096 s
    r = inference("H100 SXM", "Llama-3.1 70B", precision="fp8", kv_precision="fp8", n_devices=2, tensor_parallel=2,
                  input_tokens=500, output_tokens=2000, concurrency=200, check_memory=False)
    assert r["most_sequences"] < 200
    assert r["ttft_mean_s"] > 1.0, f"the slot wait is missing: {r['ttft_mean_s']:.3f} s"


def test_the_cli_says_how_each_engine_sets_kv_cache_aside_and_holds_what_inference_holds(capsys):
    from accelkit.cli import main

    argv = ["project", "llm", "--device", "H100 SXM", "--model", "Llama-3.1 8B", "--input-tokens", "500",
            "--output-tokens", "2000"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    most = inference("H100 SXM", "Llama-3.1 8B", input_tokens=500, output_tokens=2000)["max_batch_size"]
    assert f"memory holds {most:.0f}" in out
    assert "TensorRT-LLM reserves each request's prompt and whole output (2,500 tokens) in 90% of the memory " \
           "the weights leave" in out
    assert main(argv + ["--stack", "vllm"]) == 0
    assert "vLLM holds the tokens each sequence has (on average 1,500" in capsys.readouterr().out
    assert main(["--lang", "zh_CN"] + argv) == 0
    assert "为每个请求预留提示词和全部输出（2,500 个 token）" in capsys.readouterr().out
    # a fixed batch is the caller's: no admission policy is at work
    assert main(argv + ["--batch-size", "8"]) == 0
    assert "KV cache:" not in capsys.readouterr().out
