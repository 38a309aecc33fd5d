"""The training-step probe (accelkit.probes.training_step): a decoder's training step timed on this device.

CPU runs use a tiny shape or GPT-2 small at short sequences; the GPU test (skipped where torch
sees no GPU, never faked) checks GPT-2 XL against the datasheet peak.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit.probes import training_step as T
from helpers import TINY_DECODER as TINY


def test_gpt2_small_is_built_with_its_published_parameter_count(torch):
    # GPT-2 small has 124,439,808 parameters (KerasHub gpt2_base_en). The probe builds the same
    # matrices -- tied output head, a 4 x 768 GELU MLP -- without the learned positions (786,432),
    # biases and LayerNorm shifts, which do no matrix work: within 1 %.
    shape = T._shape("GPT-2 small")[0]
    net = T._module(torch, shape, 12)
    built = sum(p.numel() for p in net.parameters())
    assert built == pytest.approx(124_439_808, rel=0.01)
    assert net.head.weight is net.embed.weight, "GPT-2 ties its output head to the input embedding"


def test_a_step_is_the_micro_batches_plus_the_optimizer(torch):
    frame = T.training_probe(TINY, device="cpu", micro_batch_sizes=[1, 2], seq_len=32, accumulation_steps=3,
                             precision="fp32", budget_s=0.05)
    assert list(frame["micro_batch_size"]) == [1, 2]
    assert (frame["microbatch_s"] > 0).all() and (frame["optimizer_s"] > 0).all()
    np.testing.assert_allclose(frame["step_s"], 3 * frame["microbatch_s"] + frame["optimizer_s"])
    np.testing.assert_allclose(frame["tokens_per_s"], 3 * frame["micro_batch_size"] * 32 / frame["step_s"])
    assert frame["mfu"].isna().all(), "no catalogue device named: no MFU"


@pytest.mark.parametrize("kwargs, words", [
    ({"model": "GPT-2 small", "seq_len": 4096}, "longer than GPT-2 small's 1024-token context"),
    ({"model": "Mixtral 8x7B"}, "mixture of experts"),
    ({"model": TINY, "precision": "int8"}, "precision must be one of bf16, fp16, fp32"),
    ({"model": TINY, "micro_batch_size": 0}, "micro_batch_size must be a micro-batch size >= 1"),
    ({"model": "Llama-3.1 405B"}, "memory guard.*choose a smaller model"),
])
def test_bad_input_is_refused_with_the_field_named(torch, kwargs, words):
    args = {"micro_batch_size": 1, "seq_len": 16, "precision": "fp32", "device": "cpu", "budget_s": 0.01}
    args.update(kwargs)
    with pytest.raises(ValueError, match=words):
        T.training_step_seconds(**args)


def test_cli_refuses_an_existing_json_before_measuring(torch, tmp_path, capsys):
    from accelkit.cli import main

    target = tmp_path / "mine.json"
    target.write_text("{}")
    assert main(["probe", "--train", "GPT-2 small", "--device", "cpu", "--json", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err and target.read_text() == "{}"


# --- GPU (skipped where torch sees no GPU; never faked) ----------------------------------

@pytest.mark.gpu
def test_gpu_training_step_stays_below_the_datasheet_peak(torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA/ROCm GPU visible to torch")
    from accelkit.probes.inventory import _catalogue_match

    name, _ = _catalogue_match(torch.cuda.get_device_name(0))
    if not name:
        pytest.skip(f"{torch.cuda.get_device_name(0)} is not in the catalogue")
    frame = T.training_probe("GPT-2 small", "cuda:0", [4], 1024, 4, "bf16", catalog_device=name, budget_s=0.5)
    # our H200 run of the same model in eager PyTorch (data/probe_results/train/h200-gpt2-small.json):
    # MFU 0.19-0.21 at micro-batch 8-32; micro-batch 4 on any datacenter GPU should sit within 3x of that
    assert 0.06 < frame["mfu"].iloc[0] < 0.6, frame.to_string()


# --- the shipped measurements of a real GPU (data/probe_results/train/) --------------------

def test_the_engine_projects_gpt2_xl_steps_at_useful_micro_batches_within_20_percent():
    """Our H200 run (2026-12-04): GPT-2 XL at micro-batch 4 and 8 x 1,024 tokens, 16 per step, in eager
    PyTorch measured 1.88 and 3.45 s a step; the engine (fitted on the fit sources, all tuned frameworks)
    projects 1.62 and 3.05 s, 13-16 % fast, just above its 80 % range (1.44-1.82, 2.71-3.42 s): the
    training model has one stack, and eager PyTorch pays for its unfused element-wise kernels (issue 24,
    stacks as data). Small micro-batches and GPT-2 small run slower still, which the table shows."""
    from accelkit.probes.checks import local_training_checks

    checks = local_training_checks()
    xl = checks[(checks["model"] == "GPT-2 XL") & (checks["micro_batch_size"] >= 4)]
    assert len(xl) == 2 and xl["ratio"].between(1 / 1.2, 1.2).all(), xl.to_string()
    # eager PyTorch is never faster than the tuned-framework projection's fast end
    assert (checks["measured"] >= checks["projected_low"]).all(), checks.to_string()
    # MFU as PaLM counts it: GPT-2 XL at micro-batch 8 reached about 40 % of the H200's dense bf16 peak
    assert 0.3 < xl["mfu"].max() < 0.5
