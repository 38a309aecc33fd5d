"""The projection engine: sourced ceilings, the serving and training models, bad input.

Published figures these tests reproduce:
- S. Bekman, *ml-engineering*, MAMF table: H100 SXM bf16 794.5 / 792.1 TFLOPS (two
  versions of the table), a community torch run 789.24 -> median 792.1 TFLOPS;
- Azure AI-benchmarking-guide, ND H100 v5: STREAM-style triad 2.97 TB/s;
- nccl-tests on 8 x A100 SXM (Bekman 234.89 GB/s, Azure 231.58 GB/s bus bandwidth);
- the nccl-tests bus-bandwidth convention (doc/PERFORMANCE.md): busbw = algbw x 2(n-1)/n.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accelkit import projection as P
from accelkit.catalog import CatalogError, load_catalog
from accelkit.projection import ceilings, shapes


def test_h100_bf16_matmul_ceiling_is_the_median_of_its_published_mamf_figures():
    assert P.matmul_flops("H100 SXM", "bf16") == pytest.approx(792.1e12, rel=1e-6)


def test_h100_memory_ceiling_is_the_published_stream_triad():
    assert P.memory_bandwidth("H100 SXM") == pytest.approx(2970e9, rel=1e-6)


def test_a100_large_message_allreduce_matches_nccl_tests():
    # 8 GB message: the latency term is negligible, the bus bandwidth is the published median
    busbw = P.allreduce_bus_bandwidth("A100 80GB SXM", 8, 8 * 2**30)
    assert busbw == pytest.approx(np.median([234.89e9, 231.58e9]), rel=0.01)


def test_small_allreduce_is_latency_bound():
    big = P.allreduce_bus_bandwidth("A100 80GB SXM", 8, 8 * 2**30)
    small = P.allreduce_bus_bandwidth("A100 80GB SXM", 8, 32 * 1024)
    assert small < big / 20, "a 32 KB all-reduce should be far below the large-message bus bandwidth"


def test_allreduce_seconds_is_the_alpha_beta_model():
    t = P.allreduce_seconds(1e9, 8, 100e9, 20e-6)
    assert t == pytest.approx(20e-6 + 2 * 7 / 8 * 1e9 / 100e9)
    assert float(P.allreduce_seconds(1e9, 1, 100e9, 20e-6)) == 0.0


def test_device_without_a_measurement_takes_its_architecture_and_says_so():
    r = P.matmul_flops("A30", "bf16", with_range=True)
    assert "Ampere" in r["source"] and "no published" in r["source"]
    assert r["matmul_flops_low"] <= r["matmul_flops"] <= r["matmul_flops_high"]


def test_every_ceiling_names_its_source():
    ceil = P.device_ceilings()
    has_peak = ceil["peak_bf16"].notna()
    assert (ceil.loc[has_peak, "matmul_bf16_source"].str.len() > 10).all()
    has_bw = ceil["memory_bw_peak"].notna()
    assert (ceil.loc[has_bw, "memory_bw_source"].str.len() > 10).all()


def test_probe_results_override_the_published_efficiency():
    frame = pd.DataFrame([
        {"probe": "matmul", "dtype": "bf16", "shape": "8192x8192x8192", "measured": 700e12, "unit": "FLOP/s",
         "datasheet": 989.5e12, "ratio": 700 / 989.5, "device": "cuda:0", "device_name": "NVIDIA H100 80GB HBM3",
         "torch_version": "2.x", "timestamp": "", "note": ""},
    ])
    frame.attrs["source"] = "my-h100.json"
    r = P.matmul_flops("H100 SXM", "bf16", measurements=frame, with_range=True)
    assert r["matmul_flops"] == pytest.approx(700e12, rel=1e-6)
    assert "your probe" in r["source"] and "my-h100.json" in r["source"]


# --- inference -----------------------------------------------------------------------

def test_inference_returns_every_figure_with_its_range():
    r = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=8, input_tokens=512, output_tokens=128)
    for name in ("ttft_s", "tpot_s", "request_latency_s"):
        assert r[f"{name}_low"] <= r[name] <= r[f"{name}_high"], name
    for name in ("output_tokens_per_s", "output_tokens_per_s_per_device"):
        assert r[f"{name}_low"] <= r[name] <= r[f"{name}_high"], name
    assert r["batch_size"] == 8 and r["tensor_parallel"] == 1
    assert r["request_latency_s"] == pytest.approx(r["ttft_s"] + 127 * r["tpot_s"])
    assert "measured" in r["memory_source"]


def test_batch1_decode_is_set_by_reading_the_weights():
    # Llama-2 7B in bf16 reads 13.5 GB per token: the step cannot beat weights / bandwidth
    r = P.inference("A100 80GB SXM", "Llama-2 7B", batch_size=1, input_tokens=8, output_tokens=200)
    floor = 6738415616 * 2 / P.memory_bandwidth("A100 80GB SXM")
    assert r["memory_bound"] and r["tpot_s"] > floor
    assert r["tpot_s"] < 1.5 * floor, "batch-1 decode should stay near the memory floor"


def test_more_batch_more_throughput_slower_tokens():
    small = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=4)
    big = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=64)
    assert big["output_tokens_per_s"] > 5 * small["output_tokens_per_s"]
    assert big["tpot_s"] > small["tpot_s"]


def test_prefill_counts_compute_attention_and_weight_read():
    short = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=1, input_tokens=16, output_tokens=1)
    long = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=1, input_tokens=8192, output_tokens=1)
    weights = 8030261248 * 2 / P.memory_bandwidth("H100 SXM")
    assert short["ttft_s"] > weights, "a short prompt still reads every weight once"
    assert long["ttft_s"] > 100 * weights / 4, "an 8k prompt is compute-bound"


def test_a_prefill_pays_the_decode_steps_per_layer_overhead_once_per_layer():
    # a forward pass launches the same kernels per layer whatever its token count, so the fitted per-layer
    # cost of a decode step is paid by the prefill too: 80 layers of Llama-3.1 70B, 32 of the 8B
    for model, layers in (("Llama-3.1 8B", 32), ("Llama-3.1 70B", 80)):
        args = dict(precision="fp8", n_devices=8, tensor_parallel=8, batch_size=1, input_tokens=200, output_tokens=1)
        base = P.inference("H100 SXM", model, decode_layer_overhead_s=0.0, **args)["prefill_s"]
        more = P.inference("H100 SXM", model, decode_layer_overhead_s=1e-4, **args)["prefill_s"]
        assert more - base == pytest.approx(layers * 1e-4, rel=1e-6), (
            f"{model}: a prefill with 100 µs per layer should take {layers} × 100 µs longer, took {more - base:.6f} s")
    k = P.constants()
    fixed = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=1, input_tokens=1, output_tokens=1,
                        decode_layer_overhead_s=0.0)["prefill_s"]
    assert fixed > k["prefill_overhead_s"], "the fixed part of a prefill stays beside the per-layer one"


def test_tensor_parallel_cuts_latency_of_a_70b_model_but_pays_for_all_reduces():
    one = P.inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=1, tensor_parallel=1, batch_size=1)
    eight = P.inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=8, tensor_parallel=8, batch_size=1)
    # measured: gpt-fast's Llama-2 70B bf16 on A100 goes from 21.3 (TP2) to 62.5 tokens/s (TP8), 2.9× for 4× the
    # devices: per-layer launches and all-reduces do not shrink with TP
    assert eight["tpot_s"] < one["tpot_s"] / 2.5
    assert eight["tp_comm_s"] > 0 and one["tp_comm_s"] == 0
    assert eight["tpot_s"] > one["tpot_s"] / 8, "all-reduces keep TP from scaling perfectly"


def test_weight_only_int4_reads_fewer_bytes_than_bf16():
    bf16 = P.inference("A100 80GB SXM", "Llama-2 7B", precision="bf16", batch_size=1)
    int4 = P.inference("A100 80GB SXM", "Llama-2 7B", precision="int4", batch_size=1)
    assert int4["precision"] == "w4a16" and int4["tpot_s"] < bf16["tpot_s"] / 2


def test_batch_none_fills_memory_up_to_the_engine_cap():
    r = P.inference("H200 SXM", "Llama-3.1 8B", precision="fp8", input_tokens=128, output_tokens=2048)
    assert r["batch_size"] == P.constants()["max_batch_size"]
    tight = P.inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=1, input_tokens=2048,
                        output_tokens=2048)
    assert 1 <= tight["batch_size"] < 64 and tight["batch_size"] == tight["max_batch_size"]


def test_tensor_parallel_none_picks_a_layout_that_fits():
    r = P.inference("H100 SXM", "Llama-3.1 70B", precision="bf16", n_devices=8)
    assert r["tensor_parallel"] >= 2 and r["tensor_parallel"] * r["replicas"] == 8


def test_catalogue_wide_projection_has_one_row_per_device_and_says_why_not():
    frame = P.inference(None, "Llama-3.1 8B", batch_size=1)
    assert len(frame) == len(load_catalog())
    v100 = frame.set_index("name").loc["V100 SXM2 32GB"]
    assert not v100["feasible"] and "bf16" in v100["why"] and np.isnan(v100["tpot_s"])
    assert frame["feasible"].sum() > 20


def test_continuous_batching_counts_the_prefill_work():
    light = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=64, input_tokens=128, output_tokens=1024)
    heavy = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=64, input_tokens=4096, output_tokens=1024)
    assert heavy["output_tokens_per_s"] < 0.8 * light["output_tokens_per_s"]


@pytest.mark.parametrize("call, words", [
    (lambda: P.inference("H100 SXM", "Llama-3.1 70B", n_devices=3, tensor_parallel=3), "tensor_parallel=3"),
    (lambda: P.inference("H100 SXM", "Llama-3.1 70B", n_devices=6, tensor_parallel=3), "does not divide the 64"),
    (lambda: P.inference("H100 SXM", "Llama-3.1 8B", batch_size=100000), "batch_size=100000 does not fit"),
    (lambda: P.inference("H100 SXM", "Llama-3.1 405B", n_devices=1), "does not fit"),
    (lambda: P.inference("V100 SXM2 32GB", "Llama-2 7B"), "fp16"),
    (lambda: P.inference("H100 SXM", "Llama-3.1 8B", precision="int3"), "precision"),
    (lambda: P.inference("H100 SXM", "Llama-3.1 8B", batch_size=0), "batch_size"),
    (lambda: P.inference("H100 SXM", {"n_layers": 32}), "params"),
])
def test_bad_input_names_the_argument_and_what_would_fit(call, words):
    with pytest.raises(ValueError) as err:
        call()
    assert words in str(err.value)


def test_unknown_device_and_model_suggest_close_names():
    with pytest.raises(CatalogError, match="closest"):
        P.inference("H10O SXM", "Llama-3.1 8B")
    with pytest.raises(CatalogError, match="closest"):
        P.inference("H100 SXM", "Llama-3.1 8C")


def test_a_model_can_be_given_as_a_dict_of_its_shape():
    custom = {"params": 8030261248, "n_layers": 32, "d_model": 4096, "n_heads": 32, "n_kv_heads": 8,
              "vocab": 128256}
    a = P.inference("H100 SXM", custom, batch_size=8)
    b = P.inference("H100 SXM", "Llama-3.1 8B", batch_size=8)
    assert a["tpot_s"] == pytest.approx(b["tpot_s"], rel=1e-6)


def test_mixture_of_experts_reads_only_the_experts_a_small_batch_touches():
    shape = shapes.resolve_model("Mixtral 8x7B")
    one, many = shape.read_params(1), shape.read_params(256)
    assert one < 0.4 * shape.params and many == pytest.approx(shape.params - shape.embedding_params, rel=1e-3)


# --- training ------------------------------------------------------------------------

def test_training_projects_mfu_as_a_result():
    r = P.training("H100 SXM", "Llama-3.1 8B", tokens=1e12, n_devices=8, seq_len=4096)
    assert 0.2 < r["mfu"] < 0.8
    assert r["days"] == pytest.approx(r["seconds"] / 86400)
    assert r["device_hours"] == pytest.approx(r["seconds"] * 8 / 3600)
    for name in ("step_s", "days"):
        assert r[f"{name}_low"] <= r[name] <= r[f"{name}_high"]
    for name in ("tokens_per_s", "mfu"):
        assert r[f"{name}_low"] <= r[name] <= r[f"{name}_high"]
    parts = sum(r[p] for p in ("compute_s", "elementwise_s", "tp_comm_s", "bubble_s", "dp_comm_s", "optimizer_s"))
    assert parts <= r["step_s"]


def test_more_devices_finish_sooner_but_less_than_linearly_across_nodes():
    eight = P.training("H100 SXM", "Llama-3.1 8B", tokens=1e12, n_devices=8, global_batch_tokens=2**24)
    sixty_four = P.training("H100 SXM", "Llama-3.1 8B", tokens=1e12, n_devices=64, global_batch_tokens=2**24)
    speedup = eight["seconds"] / sixty_four["seconds"]
    assert 4 < speedup <= 8


def test_pipeline_bubble_shrinks_with_more_micro_batches():
    few = P.training("H100 SXM", "Llama-3.1 70B", n_devices=64, tensor_parallel=8, pipeline_parallel=8,
                     global_batch_tokens=2**21)
    many = P.training("H100 SXM", "Llama-3.1 70B", n_devices=64, tensor_parallel=8, pipeline_parallel=8,
                      global_batch_tokens=2**24)
    assert many["bubble_s"] / many["step_s"] < few["bubble_s"] / few["step_s"]


def test_your_own_mfu_replaces_the_projected_compute():
    r = P.training("A100 80GB SXM", "Llama-2 7B", tokens=2e12, n_devices=8, zero_stage=3, utilization=0.4,
                   seq_len=4096)
    assert 0.3 < r["mfu"] <= 0.4, "your MFU bounds the compute; communication only slows it"
    assert "your MFU" in r["matmul_source"]


def test_palm_model_flops_per_token():
    # Chowdhery et al. 2022, appendix B: 6 N + 12 L H Q T
    shape = shapes.resolve_model({"params": 1e9, "n_layers": 10, "d_model": 1000, "n_heads": 10})
    assert P.model_flops_per_token(shape, 2048) == pytest.approx(6e9 + 12 * 10 * 1000 * 2048)


@pytest.mark.parametrize("call, words", [
    (lambda: P.training("H100 SXM", "Llama-3.1 8B", n_devices=8, tensor_parallel=3), "tensor_parallel"),
    (lambda: P.training("H100 SXM", "Llama-3.1 8B", n_devices=6, tensor_parallel=4), "must divide n_devices"),
    (lambda: P.training("H100 SXM", "Llama-3.1 405B", n_devices=8), "does not fit"),
    (lambda: P.training("H100 SXM", "Llama-3.1 8B", precision="int8"), "precision"),
    (lambda: P.training("H100 SXM", "Llama-3.1 8B", global_batch_tokens=100), "global_batch_tokens"),
    (lambda: P.training("H100 SXM", "Llama-3.1 8B", zero_stage=4), "zero_stage"),
])
def test_training_bad_input(call, words):
    with pytest.raises(ValueError) as err:
        call()
    assert words in str(err.value)


def test_a_bridge_links_two_boards_only():
    ceil = P.device_ceilings().set_index("name")
    assert ceil.loc["A100 80GB PCIe", "link_max_devices"] == 2
    assert np.isinf(ceil.loc["A100 80GB SXM", "link_max_devices"])
    two = P.inference("A100 80GB PCIe", "Llama-3.1 70B", n_devices=2, tensor_parallel=2, batch_size=1)
    four = P.inference("A100 80GB PCIe", "Llama-3.1 70B", n_devices=4, tensor_parallel=4, batch_size=1)
    assert four["tp_comm_s"] > two["tp_comm_s"], "four bridged boards talk over PCIe"


def test_ceilings_are_cached_per_catalogue():
    assert ceilings.device_ceilings() is ceilings.device_ceilings()


def test_per_device_zero_stage_and_micro_batch_project_each_device_as_alone():
    """The configuration search projects every device in its own ZeRO stage and
    micro-batch in one pass; each row must equal that device projected on its own."""
    from accelkit import projection

    names = ["H100 SXM", "A100 80GB SXM", "MI300X", "Gaudi 3"]
    zero, micro = [1, 3, 2, 0], [4, 1, 2, 8]
    together = projection.training(names, "Llama-2 7B", n_devices=8, zero_stage=zero, micro_batch_size=micro,
                                   global_batch_tokens=[m * 8 * 2048 * 4 for m in micro], check_memory=False)
    for i, name in enumerate(names):
        alone = projection.training(name, "Llama-2 7B", n_devices=8, zero_stage=zero[i], micro_batch_size=micro[i],
                                    global_batch_tokens=micro[i] * 8 * 2048 * 4, check_memory=False)
        for column in ("step_s", "days", "days_low", "days_high", "mfu", "memory_per_device_bytes"):
            assert together[column].iloc[i] == pytest.approx(alone[column], rel=1e-12), (
                f"{name} (ZeRO-{zero[i]}, micro-batch {micro[i]}): {column} differs when projected with others")


def test_jetson_orin_nano_decodes_4bit_weights_through_its_bandwidth():
    """Orin Nano publishes only its GPU's INT8 rate (20 / 33 dense TOPS): FP16 and BF16 run at half of it
    (the AGX Orin data sheet's 170 sparse INT8 TOPS and 85 sparse FP16 TFLOPS for one GPU), so 4-bit-weight
    decode, whose matmuls run in bf16, is projected: the Jetson AI Lab's MLC runs measured 14.0 (Orin Nano)
    and 19.14 tokens/s (Super) for Llama 3.1 8B; the validation cases hold the ratio."""
    ceil = P.device_ceilings().set_index("name")
    assert ceil.loc["Jetson Orin Nano Super 8GB", "peak_bf16"] == 16.5e12
    assert ceil.loc["Jetson Orin Nano Super 8GB", "matmul_bf16_source"].endswith("half the published dense INT8 figure")
    # only where the INT8 figure is the GPU's alone: the AGX Orin's headline includes its two DLAs
    assert np.isnan(ceil.loc["Jetson AGX Orin 64GB", "peak_bf16"])
    nano = P.inference("Jetson Orin Nano 8GB", "Llama-3.1 8B", precision="w4a16", batch_size=1, input_tokens=16,
                       output_tokens=128)
    assert nano["memory_bound"] and 10 < nano["output_tokens_per_s"] < 20
