"""Serving engines as data (issue 24, item 2): the stack of an LLM projection, its default per
vendor, and the one sourced difference it carries -- vLLM's and SGLang's custom all-reduce
size limit, above which their tensor-parallel all-reduces pay NCCL's measured latency."""

import json

import numpy as np
import pandas as pd
import pytest

from accelkit.projection import constants, device_ceilings, inference, vision
from accelkit.projection.shapes import resolve_model
from accelkit.projection.stacks import default_stack, load_stacks, stack_row
from accelkit.paths import data_path

MIB = 1024 * 1024


def _nccl_latency_s(device):
    return float(device_ceilings().set_index("name").loc[device, "allreduce_latency_s"])


def _fitted_latency_s():
    return float(constants()["serving_allreduce_latency_s"])


def test_each_vendor_serves_llms_on_its_default_engine_and_images_on_its_compiler():
    assert default_stack("NVIDIA", workload="llm") == "tensorrt-llm"
    assert default_stack("AMD", workload="llm") == "vllm"
    assert default_stack("Intel", workload="llm") == "vendor-serving"
    assert default_stack("NoSuchVendor", workload="llm") == "vendor-serving"
    # the image-model defaults are untouched by the serving rows
    assert default_stack("NVIDIA") == "tensorrt" and default_stack("AMD") == "vendor-compiler"
    frame = inference(["H100 SXM", "Instinct MI300X", "Gaudi 3"], "Llama-3.1 8B")
    assert frame.set_index("name")["stack"].to_dict() == {
        "H100 SXM": "tensorrt-llm", "Instinct MI300X": "vllm", "Gaudi 3": "vendor-serving"}


def test_a_serving_engine_is_no_image_stack_and_the_error_names_the_choices():
    with pytest.raises(ValueError, match=r"stack must be one of tensorrt, .*got 'vllm'"):
        vision("T4", "ResNet-50", stack="vllm")
    with pytest.raises(ValueError, match=r"stack must be one of tensorrt-llm, vllm, sglang, vendor-serving.*'vllm'"):
        inference("H100 SXM", "Llama-3.1 8B", stack="vlm")


def test_the_custom_all_reduce_limits_are_the_sources_figures():
    stacks = load_stacks().set_index("stack")
    assert stacks.loc["vllm", "custom_allreduce_max_bytes"] == 8 * MIB
    assert "max_size=8192 * 1024" in stacks.loc["vllm", "notes"]
    assert stacks.loc["sglang", "custom_allreduce_max_bytes"] == 8 * MIB
    assert stacks.loc["sglang", "custom_allreduce_max_bytes_rocm"] == 16 * MIB
    assert "2 * 8192 * 1024" in stacks.loc["sglang", "notes"]
    # no stated limit: the engine's fitted latencies at every size
    assert np.isnan(stacks.loc["tensorrt-llm", "custom_allreduce_max_bytes"])
    for name in ("tensorrt-llm", "vllm", "sglang", "vendor-serving"):
        assert stack_row(name, workload="llm")["source_url"].startswith("https://github.com/")


def _decode(device, stack, batch, tp=8, model="Llama-3.1 70B"):
    return inference(device, model, precision="fp8", n_devices=tp, tensor_parallel=tp, batch_size=batch,
                     input_tokens=128, output_tokens=128, schedule="static", check_memory=False, stack=stack)


def test_below_vllms_limit_a_decode_step_costs_what_tensorrt_llms_does():
    # 256 sequences × d_model 8192 × 2 bytes = 4 MiB: vLLM's own kernel, the fitted latency
    assert 256 * 8192 * 2 < 8 * MIB
    vllm, trt = _decode("H100 SXM", "vllm", 256), _decode("H100 SXM", "tensorrt-llm", 256)
    assert vllm["tpot_s"] == pytest.approx(trt["tpot_s"], rel=1e-12)


def test_above_vllms_limit_each_all_reduce_pays_nccls_latency_instead():
    # 1,024 sequences: a 16 MiB all-reduce, over vLLM's 8 MiB -> NCCL, two per layer
    n_layers = resolve_model("Llama-3.1 70B").n_layers
    vllm, trt = _decode("H100 SXM", "vllm", 1024), _decode("H100 SXM", "tensorrt-llm", 1024)
    extra = 2 * n_layers * (_nccl_latency_s("H100 SXM") - _fitted_latency_s())
    assert extra > 0, "NCCL's measured latency should exceed the fitted custom-kernel latency"
    assert vllm["tpot_s"] - trt["tpot_s"] == pytest.approx(extra, rel=1e-6), \
        "vLLM's decode step should be slower than TensorRT-LLM's by exactly the NCCL latency of its 160 all-reduces"


def test_sglang_on_rocm_keeps_its_own_kernel_up_to_16_mib():
    # 768 sequences × 8192 × 2 = 12 MiB: over vLLM's limit, under SGLang's ROCm one
    vllm, sgl = _decode("Instinct MI300X", "vllm", 768), _decode("Instinct MI300X", "sglang", 768)
    # SGLang's kernel keeps the fitted latency; vLLM's two all-reduces a layer pay RCCL's measured one
    extra = 2 * resolve_model("Llama-3.1 70B").n_layers * (_nccl_latency_s("Instinct MI300X") - _fitted_latency_s())
    assert vllm["tpot_s"] - sgl["tpot_s"] == pytest.approx(extra, rel=1e-6)
    assert vllm["tpot_s"] > sgl["tpot_s"]


def test_a_stack_named_for_a_part_it_does_not_run_on_prices_nothing_and_says_why():
    # TensorRT-LLM and TensorRT are NVIDIA's (data/stacks.csv runs_on_vendors, each row sourced)
    with pytest.raises(ValueError, match="TensorRT-LLM does not run on the Instinct MI300X"):
        _decode("Instinct MI300X", "tensorrt-llm", 8)
    frame = inference(["H100 SXM", "Instinct MI300X", "Gaudi 3"], "Llama-3.1 8B", stack="sglang")
    frame = frame.set_index("name")
    assert frame.loc["H100 SXM", "feasible"] and frame.loc["Instinct MI300X", "feasible"]
    assert not frame.loc["Gaudi 3", "feasible"] and frame.loc["Gaudi 3", "tpot_s"] != frame.loc["Gaudi 3", "tpot_s"]
    assert "SGLang does not run on the Gaudi 3" in frame.loc["Gaudi 3", "why"]
    from accelkit.projection import vision

    frame = vision(["T4", "Instinct MI300X"], "ResNet-50", stack="tensorrt").set_index("name")
    assert frame.loc["T4", "feasible"] and not frame.loc["Instinct MI300X", "feasible"]
    assert "TensorRT does not run on the Instinct MI300X" in frame.loc["Instinct MI300X", "why"]
    # a chip priced from its vendor's published rate ran its own compiler, not the stack named
    hailo = vision(["Hailo-8"], "YOLOv8s", stack="tensorrt").iloc[0]
    assert not hailo["feasible"] and "TensorRT does not run on the Hailo-8" in hailo["why"]
    assert vision(["Hailo-8"], "YOLOv8s", stack="vendor-compiler").iloc[0]["feasible"]


def test_more_than_two_pcie_only_gpus_run_vllm_on_nccl_at_every_size():
    n_layers = resolve_model("Llama-3.1 8B").n_layers
    kw = dict(precision="bf16", n_devices=4, tensor_parallel=4, batch_size=4, input_tokens=128, output_tokens=128,
              schedule="static", check_memory=False)
    vllm = inference("L40S", "Llama-3.1 8B", stack="vllm", **kw)
    trt = inference("L40S", "Llama-3.1 8B", stack="tensorrt-llm", **kw)
    extra = 2 * n_layers * (_nccl_latency_s("L40S") - _fitted_latency_s())
    assert vllm["tpot_s"] - trt["tpot_s"] == pytest.approx(extra, rel=1e-6)
    # two PCIe GPUs: vLLM's kernel runs ('world_size == 2')
    two = dict(kw, n_devices=2, tensor_parallel=2)
    assert inference("L40S", "Llama-3.1 8B", stack="vllm", **two)["tpot_s"] == pytest.approx(
        inference("L40S", "Llama-3.1 8B", stack="tensorrt-llm", **two)["tpot_s"], rel=1e-12)


def test_a_short_prompt_under_vllm_is_reduced_by_its_own_kernel_even_outside_cuda_graphs():
    # 128 tokens × 8192 × 2 = 2 MiB: vLLM copies it into its registered buffer and runs its kernel;
    # TensorRT-LLM's prompt steps keep NCCL's measured latency
    n_layers = resolve_model("Llama-3.1 70B").n_layers
    vllm, trt = _decode("H100 SXM", "vllm", 1), _decode("H100 SXM", "tensorrt-llm", 1)
    saved = 2 * n_layers * (_nccl_latency_s("H100 SXM") - _fitted_latency_s())
    assert trt["ttft_s"] - vllm["ttft_s"] == pytest.approx(saved, rel=1e-6)


def test_every_validation_case_served_by_a_named_engine_carries_that_engine():
    m = pd.read_csv(data_path("validation/measured.csv"), keep_default_na=False)
    fw = m["framework"]
    for pattern, stack in (("vLLM", "vllm"), ("SGLang", "sglang"), ("TensorRT-LLM", "tensorrt-llm")):
        rows = m[fw.str.contains(pattern, regex=False)]
        assert len(rows) > 0
        wrong = rows.loc[rows["stack"] != stack, "case_id"].tolist()
        assert not wrong, f"cases run on {pattern} but not marked stack={stack}: {wrong[:5]}"


def test_the_cli_names_the_serving_engine_and_projects_on_it(capsys):
    from accelkit.cli import main

    assert main(["project", "llm", "--device", "Instinct MI300X", "--model", "Llama-3.1 8B"]) == 0
    assert "serving engine: vllm" in capsys.readouterr().out
    argv = ["project", "llm", "--device", "H100 SXM", "--model", "Llama-3.1 70B", "--precision", "fp8",
            "--devices", "8", "--tensor-parallel", "8", "--batch-size", "1024", "--stack", "vllm"]
    assert main(argv) == 0
    assert "serving engine: vllm" in capsys.readouterr().out
    assert main(argv + ["--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=8, tensor_parallel=8, batch_size=1024,
                     stack="vllm")
    assert got["stack"] == "vllm" and got["tpot_s"] == pytest.approx(want["tpot_s"], rel=1e-12)
    assert main(["project", "llm", "--device", "H100 SXM", "--stack", "tensorrt"]) == 2
    assert "Did you mean 'tensorrt-llm'" in capsys.readouterr().err


def test_the_decision_names_the_engine_a_decoders_figures_assume_and_not_an_encoders():
    from pathlib import Path

    from accelkit.scenario import load
    from accelkit.select import rank

    examples = Path(__file__).resolve().parents[1] / "examples"
    ranked = rank(load(examples / "serve-70b-at-latency-target.yaml")).set_index("name")
    assert ranked.loc["Instinct MI300X", "configuration"].endswith("served by vLLM")
    assert ranked.loc["H200 SXM", "configuration"].endswith("served by TensorRT-LLM")
    # the vendor's own stack prices nothing engine-specific: no engine named
    assert "served by" not in ranked.loc["Gaudi 3", "configuration"]
    bert = rank(load(examples / "bert-inference-small-team.yaml")).set_index("name")
    assert not bert["configuration"].str.contains("served by").any()


def test_the_decision_names_the_stack_an_image_models_or_encoders_figures_assume():
    # TensorRT's fused layers and an eager framework's differ 2-5x (data/stacks.csv): the page says which
    from pathlib import Path

    from accelkit.scenario import load
    from accelkit.select import rank

    examples = Path(__file__).resolve().parents[1] / "examples"
    bert = rank(load(examples / "bert-inference-small-team.yaml")).set_index("name")
    for device in ("T4", "L4", "A100 80GB SXM"):
        assert bert.loc[device, "configuration"].endswith("compiled by TensorRT"), bert.loc[device, "configuration"]
    assert bert.loc["Instinct MI300X", "configuration"].endswith("compiled by the vendor's graph compiler")
    edge = rank(load(examples / "smart-factory-edge-vision.yaml")).set_index("name")
    assert "compiled by TensorRT" in edge.loc["Jetson AGX Orin 64GB", "configuration"]


def test_the_grid_of_the_decision_space_serves_on_the_same_engines_as_inference():
    from accelkit.projection import inference_grid

    grid = inference_grid("Llama-3.1 70B", [1024], [128], [128], precision="fp8", tensor_parallel=8)
    at = {n: i for i, n in enumerate(grid["name"])}
    for device in ("Instinct MI300X", "H100 SXM"):
        one = inference(device, "Llama-3.1 70B", precision="fp8", n_devices=8, tensor_parallel=8, batch_size=1024,
                        input_tokens=128, output_tokens=128, check_memory=False)
        assert grid["tpot_s"][at[device], 0] == pytest.approx(one["tpot_s"], rel=1e-9), device


def test_a_scenarios_stack_is_the_one_every_figure_of_the_decision_assumes():
    from pathlib import Path

    from accelkit.errors import ScenarioError
    from accelkit.projection import vision
    from accelkit.scenario import load
    from accelkit.select import rank

    examples = Path(__file__).resolve().parents[1] / "examples"
    bert = load(examples / "bert-inference-small-team.yaml")
    eager = rank(bert.copy().update(stack="pytorch-eager")).set_index("name")
    engine = vision("T4", "BERT-base", "fp16", bert.batch_size, seq_len=bert.seq_len, stack="pytorch-eager")
    assert eager.loc["T4", "latency_ms"] == pytest.approx(engine["frame_ms"], rel=5e-3)
    assert eager.loc["T4", "latency_ms"] > 1.5 * rank(bert).set_index("name").loc["T4", "latency_ms"], \
        "an eager framework's BERT pass should be well slower than TensorRT's"
    assert eager.loc["T4", "configuration"].endswith("run op by op by PyTorch (eager)")
    compiled = rank(bert.copy().update(stack="tensorrt")).set_index("name")
    assert compiled.loc["Instinct MI300X", "status"] == "excluded"
    assert "TensorRT does not run on the Instinct MI300X" in compiled.loc["Instinct MI300X", "excluded_because"]
    with pytest.raises(ScenarioError, match="'stack'.*does not serve encoders"):
        rank(bert.copy().update(stack="vllm"))
    serving = load(examples / "serve-70b-at-latency-target.yaml")
    vllm = rank(serving.copy().update(stack="vllm")).set_index("name")
    assert vllm.loc["H200 SXM", "configuration"].endswith("served by vLLM")
    trt = rank(serving.copy().update(stack="tensorrt-llm")).set_index("name")
    assert trt.loc["Instinct MI300X", "status"] == "excluded"
    assert "TensorRT-LLM does not run on the Instinct MI300X" in trt.loc["Instinct MI300X", "excluded_because"]
    # training figures assume no serving stack: the same ranking
    tune = load(examples / "finetune-7b-in-a-day.yaml")
    assert rank(tune.copy().update(stack="vllm"))["name"].head(3).tolist() == rank(tune)["name"].head(3).tolist()


def test_the_way_forward_offers_each_devices_default_stack_when_the_named_one_excludes_them_all():
    from pathlib import Path

    from accelkit.scenario import load
    from accelkit.select import nearest_feasible

    examples = Path(__file__).resolve().parents[1] / "examples"
    scenario = load(examples / "serve-70b-at-latency-target.yaml").update(stack="tensorrt-llm", vendors=["AMD"])
    forward = nearest_feasible(scenario)
    first = forward.iloc[0]
    assert first["field"] == "stack" and first["value"] is None, forward[["field", "change"]].to_string()
    assert "Instinct MI300X" in first["admits"]


@pytest.mark.parametrize("word", ["default", "Default", " NONE ", ""])
def test_default_or_none_in_any_case_means_each_devices_own_stack(word):
    from accelkit.scenario import Scenario

    s = Scenario.load("examples/bert-inference-small-team.yaml").update(stack=word)
    assert s.stack is None, f"stack {word!r} should mean each device's default, got {s.stack!r}"
