"""``accelkit project``: one projection from the terminal -- the engine's own figures (one
answer per question), each with its range and efficiency source; bad input named."""

from __future__ import annotations

import json

import pytest

from accelkit import projection as P
from accelkit.cli import main

LLM = ["project", "llm", "--device", "H100 SXM", "--model", "Llama-3.1 70B", "--precision", "fp8", "--devices", "2",
       "--input-tokens", "1000", "--output-tokens", "1000"]


def _json(capsys, argv):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_command_prints_the_engines_own_load_figures(capsys):
    got = _json(capsys, LLM + ["--concurrency", "50", "--requests-per-client", "3"])
    want = P.inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=2, input_tokens=1000,
                       output_tokens=1000, concurrency=50, requests_per_client=3)
    for key in ("ttft_s", "ttft_mean_s", "ttft_first_wave_s", "tpot_s", "output_tokens_per_s", "ttft_s_high"):
        assert got[key] == pytest.approx(want[key], rel=1e-12), key
    assert got["ttft_first_wave_s"] > got["ttft_mean_s"] > got["ttft_s"] * 0.99


def test_clients_in_step_are_the_engines_figure(capsys):
    got = _json(capsys, LLM + ["--concurrency", "50", "--synchronized"])
    want = P.inference("H100 SXM", "Llama-3.1 70B", precision="fp8", n_devices=2, input_tokens=1000,
                       output_tokens=1000, concurrency=50, synchronized=True)
    for key in ("ttft_s", "ttft_mean_s", "ttft_p90_s", "output_tokens_per_s"):
        assert got[key] == pytest.approx(want[key], rel=1e-12), key
    assert got["ttft_mean_s"] == pytest.approx(got["ttft_first_wave_s"], rel=1e-12)
    assert main(LLM + ["--concurrency", "50", "--synchronized"]) == 0
    assert "50 closed-loop clients, in step (fixed lengths: every wave queues as the first)" in capsys.readouterr().out
    assert main(["project", "llm", "--device", "H100 SXM", "--synchronized"]) == 2
    assert "--synchronized needs --concurrency" in capsys.readouterr().err


def test_the_text_shows_each_figure_with_its_range_and_sources(capsys):
    assert main(LLM + ["--concurrency", "50"]) == 0
    out = capsys.readouterr().out
    assert "50 closed-loop clients (steady state)" in out
    assert "first token when all 50 arrive at once (mean)" in out
    ttft = next(line for line in out.splitlines() if "time to first token (median)" in line)
    assert "ms" in ttft and "(" in ttft and "–" in ttft, ttft  # value and its range
    assert "efficiencies: matmul: measured fp8 matmul of this device" in out
    assert "80 % intervals" in out


def test_vision_in_a_jetson_power_mode_is_the_engines_figure(capsys):
    got = _json(capsys, ["project", "vision", "--device", "Jetson AGX Orin 64GB", "--model", "ResNet-50",
                         "--power-mode", "30W"])
    want = P.vision("Jetson AGX Orin 64GB", "ResNet-50", "int8", 1, power_mode="30W")
    top = P.vision("Jetson AGX Orin 64GB", "ResNet-50", "int8", 1)
    assert got["power_mode"] == "30W" and got["power_w"] == 30
    assert got["frames_per_s"] == pytest.approx(want["frames_per_s"], rel=1e-12)
    assert got["frames_per_s"] < top["frames_per_s"]


def test_vision_names_the_clock_and_the_l2_it_priced_with(capsys):
    from accelkit.projection.constants import constants

    k = constants()
    assert main(["project", "vision", "--device", "L4", "--model", "ResNet-50", "--batch-size", "32"]) == 0
    out = capsys.readouterr().out
    want = P.vision("L4", "ResNet-50", "int8", 32)
    assert f"kernels: 56 per pass, {k['vision_kernel_cycles_fused']:,.0f} cycles each at 2,040 MHz (https://" in out
    assert f"L2 cache: 48 MiB, {k['vision_l2_usable_fraction']:.0%} of it holds a layer's feature maps" in out
    assert f"{want['frame_ms']:,.3g} ms" in out
    assert main(["project", "vision", "--device", "Gaudi 3", "--precision", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "the median of the listed GPUs' clocks (none is published for this device)" in out
    assert "L2 cache: not published for this device (every feature map goes to DRAM)" in out
    assert main(["project", "vision", "--device", "T4", "--precision", "fp16", "--stack", "pytorch-eager"]) == 0
    out = capsys.readouterr().out
    assert f"{k['vision_kernel_s_eager'] * 1e6:.1f} µs each (the framework's dispatch on the host)" in out
    assert "cycles" not in out and "L2 cache" not in out, "an eager stack pays the host's dispatch, not cycles"
    assert main(["project", "vision", "--device", "Hailo-8", "--model", "YOLOv8s"]) == 0
    assert "kernels:" not in capsys.readouterr().out, "a chip priced from its vendor's rate has no kernel line"


def test_bad_input_names_the_field_and_close_matches(capsys):
    assert main(["project", "llm", "--device", "H100 SMX"]) == 2
    assert "closest: H100 SXM" in capsys.readouterr().err
    assert main(["project", "llm", "--device", "H100 SXM", "--requests-per-client", "3"]) == 2
    assert "--requests-per-client needs --concurrency" in capsys.readouterr().err
    assert main(["project", "vision", "--device", "Jetson AGX Orin 64GB", "--power-mode", "31W"]) == 2
    assert "Did you mean '30W'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["project", "llm", "--device", "H100 SXM", "--batch-size", "4", "--concurrency", "4"])
    assert stop.value.code == 2
    assert "--concurrency" in capsys.readouterr().err


def test_the_command_speaks_chinese(capsys):
    assert main(["--lang", "zh_CN", "project", "llm", "--device", "H100 SXM", "--concurrency", "10"]) == 0
    out = capsys.readouterr().out
    assert "首 token 时间（中位数）" in out and "10 个闭环客户端（稳态）" in out
    assert "效率来源：矩阵乘：" in out
    assert main(["--lang", "zh_CN", "project", "vision", "--device", "L4", "--model", "ResNet-50"]) == 0
    out = capsys.readouterr().out
    assert "内核：每次前向 56 个" in out and "时钟 2,040 MHz" in out and "L2 缓存：48 MiB" in out
    assert "cycles" not in out and "feature maps" not in out, "the kernel and L2 lines should be in Chinese"


def test_each_figure_says_how_the_engine_did_on_published_measurements_of_its_kind(capsys):
    from accelkit.projection.track_record import device_track_record

    assert main(LLM) == 0
    out = capsys.readouterr().out
    assert "engine: " + device_track_record("llm", "H100 SXM") in out
    assert "published measurements of LLM serving on this device" in out
    assert main(["project", "vision", "--device", "Instinct MI300X", "--model", "BERT-base", "--seq-len", "128"]) == 0
    out = capsys.readouterr().out
    assert "engine: never checked on published measurements of encoder inference on AMD parts" in out
