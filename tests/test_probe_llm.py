"""The LLM probe (accelkit.probes.llm): a decoder's decode step and prefill timed on this device.

CPU runs use one or two layers of a real preset or a tiny shape; the GPU tests (skipped
where torch sees no GPU, never faked) check the full Llama-2 7B against physics.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit.probes import llm
from accelkit.projection import resolve_model
from helpers import TINY_DECODER as TINY


def test_the_built_layers_hold_the_presets_parameters():
    # Llama-2 7B (Touvron et al. 2023, table 1: 6,738,415,616 parameters in the released checkpoint):
    # the probe's matmul weights plus the output head are the preset less its input embedding
    # (32000 x 4096) and its 65 RMSNorm vectors (2 per layer + 1 final, 4096 each).
    shape = resolve_model("Llama-2 7B")
    built = llm._Model.bytes_needed(shape, 32, 1, batch=1, max_context=0)
    assert built == 6_738_415_616 - 32_000 * 4_096 - 65 * 4_096


def test_kv_cache_bytes_follow_the_grouped_query_heads():
    # Llama-3.1 8B: 8 KV heads of 128 over 32 layers -> 2 x 32 x 8 x 128 = 65,536 elements per token
    shape = resolve_model("Llama-3.1 8B")
    one = llm._Model.bytes_needed(shape, 32, 2, batch=1, max_context=1)
    two = llm._Model.bytes_needed(shape, 32, 2, batch=1, max_context=2)
    assert two - one == 65_536 * 2


def test_probe_runs_on_the_cpu_and_reports_positive_times(torch):
    frame = llm.llm_probe(TINY, device="cpu", batch_sizes=[1, 4], input_tokens=32, output_tokens=8,
                          precision="fp32", budget_s=0.05)
    assert list(frame["metric"]) == ["tpot_s", "tpot_s", "ttft_s"]
    assert (frame["measured"] > 0).all() and np.isfinite(frame["measured"]).all()
    assert list(frame["context_tokens"]) == [36, 36, 32]
    assert "projected" not in frame  # no catalogue device named: nothing to compare


def test_probe_on_a_catalogue_device_carries_the_engines_projection(torch):
    frame = llm.llm_probe("Llama-2 7B", device="cpu", batch_sizes=[1], input_tokens=16, output_tokens=4,
                          precision="fp32", catalog_device="H200 SXM", n_layers=1, budget_s=0.05)
    assert "projected" not in frame, "a probe of fewer layers than the model has must not be compared"


@pytest.mark.parametrize("kwargs, words", [
    ({"model": "Mixtral 8x7B"}, "mixture of experts"),
    ({"model": "ResNet-50"}, "needs a decoder"),
    ({"model": TINY, "precision": "fp8"}, "precision must be one of bf16, fp16, fp32"),
    ({"model": TINY, "batch_size": 0}, "batch_size must be a batch size >= 1"),
    ({"model": "Lama-2 7B"}, "Llama-2 7B"),
])
def test_bad_input_is_refused_with_the_field_named(torch, kwargs, words):
    args = {"batch_size": 1, "context_tokens": 8, "precision": "fp32", "device": "cpu", "budget_s": 0.01}
    args.update(kwargs)
    with pytest.raises(ValueError, match=words):
        llm.decode_step_seconds(**args)


def test_the_memory_guard_refuses_a_model_that_does_not_fit(torch):
    with pytest.raises(ValueError, match="memory guard.*choose a smaller model"):
        llm.decode_step_seconds("Llama-3.1 405B", 1, 8, precision="fp32", device="cpu")


def test_cli_names_the_closest_model_for_a_misspelt_one(torch, capsys):
    from accelkit.cli import main

    assert main(["probe", "--llm", "Lama-2 7B", "--device", "cpu"]) == 2
    assert "Llama-2 7B" in capsys.readouterr().err


# --- GPU (skipped where torch sees no GPU; never faked) ----------------------------------

@pytest.mark.gpu
def test_gpu_decode_step_cannot_beat_reading_the_weights(torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA/ROCm GPU visible to torch")
    from accelkit.probes.inventory import _catalogue_match

    name, _ = _catalogue_match(torch.cuda.get_device_name(0))
    if not name:
        pytest.skip(f"{torch.cuda.get_device_name(0)} is not in the catalogue")
    import accelkit
    from accelkit import units

    bw = units.gbs_to_bytes_per_s(accelkit.catalog.find(name)["memory_bw_gbs"])
    shape = resolve_model("Llama-2 7B")
    weights = llm._Model.bytes_needed(shape, 32, 2, batch=1, max_context=0)
    step = llm.decode_step_seconds("Llama-2 7B", 1, 1024, "bf16", "cuda:0", budget_s=0.5)
    eager = llm.decode_step_seconds("Llama-2 7B", 1, 1024, "bf16", "cuda:0", budget_s=0.5, cuda_graph=False)
    assert weights / bw < step < 4 * weights / bw, (step, weights / bw)
    assert step <= eager * 1.05, f"the CUDA-graph step ({step}) should not be slower than eager ({eager})"


# --- the shipped measurements of a real GPU (data/probe_results/llm/) ----------------------

def _shipped():
    return [llm.load_llm_results(p) for p in llm.example_llm_results()]


def test_the_shipped_gpu_measurements_name_their_machine():
    frames = _shipped()
    assert frames, "data/probe_results/llm/ should ship the H200 measurements of tools/gpu_check.sh"
    for frame in frames:
        header = frame.attrs["header"]
        assert header["label"] and header["date"] and header["machine"]["torch_version"], frame.attrs["source"]
        assert (frame["measured"] > 0).all()


def test_the_engine_still_projects_the_measured_h200_inside_its_range():
    """The engine as it is now (not the figures stored with the measurement) against our own
    H200 runs (2026-12-04): Llama-2 7B, Llama-3.1 8B and Qwen2.5 7B, decode at batch 1-128 and
    prefill of 1k-8k tokens. A change of constants or formulas that moves a projection off these
    measurements fails here (and chapter 10 shows the same table)."""
    from accelkit.probes.checks import local_checks

    checks = local_checks()
    assert len(checks) >= 15
    outside = checks[~checks["inside_range"]]
    assert outside.empty, "measured outside the projected range:\n" + "\n".join(
        f"  {r.model} {r.metric} batch {r.batch_size}, {r.input_tokens}-token prompts: measured "
        f"{r.measured * 1e3:.2f} ms, projected {r.projected * 1e3:.2f} ms ({r.projected_low * 1e3:.2f}-"
        f"{r.projected_high * 1e3:.2f})" for r in outside.itertuples())
    assert llm.geometric_mean_error(checks["ratio"]) < 0.10, f"{llm.geometric_mean_error(checks['ratio']):.1%}"


def test_load_refuses_a_file_of_another_kind(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "accelkit-probe-results"}')
    with pytest.raises(ValueError, match="expected format 'accelkit-llm-probe'"):
        llm.load_llm_results(path)


def test_the_measured_h200_log_shows_the_power_cap():
    """The real nvidia-smi log of the H200 run: one GPU, and the driver's software power cap
    (0x4) that held the clock down during the sustained matmuls is reported."""
    from accelkit import monitor as M

    samples = M.read_log(M.example_path("examples/monitor/nvidia-smi-1xH200-probes.csv"))
    summary = M.summarize(samples)
    assert summary.device == "H200 SXM" and summary.n_gpus == 1
    assert 0.3 < summary.mean_utilization < 0.6
    causes = " ".join(t["text"] for t in summary.throttling)
    assert "software power cap" in causes, causes
