"""Jetson power modes as data: the GPU and memory each nvpmodel mode keeps, checked against
the one per-mode table NVIDIA publishes (Deep-Learning-Accelerator-SW README, AGX Orin 64GB)."""

from __future__ import annotations

import pytest

from accelkit.projection import vision
from accelkit.projection.power_modes import dla_share, load_power_modes, mode_scale, power_modes_of


def test_every_mode_cites_the_configuration_file_it_comes_from():
    modes = load_power_modes()
    assert modes["source_url"].str.startswith("https://github.com/").all()
    assert modes["quote"].str.len().gt(10).all()
    assert power_modes_of("Jetson AGX Orin 64GB") == ["MAXN", "50W", "30W", "15W"]


@pytest.mark.parametrize("mode", ["50W", "30W"])
def test_tpcs_times_clock_give_nvidias_published_tops_per_mode(mode):
    modes = load_power_modes().set_index(["device", "power_mode"])
    published = modes.loc[("Jetson AGX Orin 64GB", mode), "gpu_int8_tops_sparse"]
    top = modes.loc[("Jetson AGX Orin 64GB", "MAXN"), "gpu_int8_tops_sparse"]
    gpu, _, _ = mode_scale("Jetson AGX Orin 64GB", mode)
    assert gpu * top == pytest.approx(published, rel=0.05), f"{mode}: {gpu * top:.1f} vs the published {published}"


@pytest.mark.parametrize("mode", ["MAXN", "50W", "30W", "15W"])
def test_the_dla_clock_gives_nvidias_published_dla_tops_per_mode(mode):
    """The AGX Orin's two DLAs: 105, 92, 90 and 40 sparse INT8 TOPS (DLA README); the mode's DLA clock
    over the top mode's (1,600, 1,369.6, 1,369.6, 614.4 MHz from the nvpmodel confs and the data sheet)
    gives 105, 90, 90 and 40."""
    modes = load_power_modes().set_index(["device", "power_mode"])
    published = modes.loc[("Jetson AGX Orin 64GB", mode), "dla_int8_tops_sparse"]
    rule = dla_share("Jetson AGX Orin 64GB", mode) * 105.0
    assert rule == pytest.approx(published, rel=0.03), f"{mode}: {rule:.1f} vs the published {published}"


def test_a_mode_keeps_the_gpu_and_the_dla_parts_of_the_int8_rate_by_their_own_clocks():
    """At INT8 the AGX Orin's dense peak is half of 170 (GPU) + 105 (DLA) sparse TOPS. In its 30W mode the
    GPU keeps 23.5 % (4 of 8 TPCs at 612 of 1,300 MHz) and the DLAs 85.6 % (1,369.6 of 1,600 MHz): the
    convolutions' rate keeps (85 × 0.235 + 52.5 × 0.856) / 137.5 = 47 % -- NVIDIA's per-mode table gives
    (41 + 90) / (171 + 105) = 47.5 %. GPU only (chapter 07 with the DLAs idle), the GPU's 23.5 %."""
    both = vision("Jetson AGX Orin 64GB", "YOLOv8s", "int8", 64, power_mode="30W")
    top = vision("Jetson AGX Orin 64GB", "YOLOv8s", "int8", 64)
    assert both["compute_s"] / top["compute_s"] == pytest.approx(137.5 / (85 * 612 / 1300 * 4 / 8
                                                                           + 52.5 * 1369.6 / 1600), rel=1e-6)
    gpu_peak = [85e12]
    gpu_only = vision("Jetson AGX Orin 64GB", "YOLOv8s", "int8", 64, power_mode="30W", peak=gpu_peak)
    gpu_top = vision("Jetson AGX Orin 64GB", "YOLOv8s", "int8", 64, peak=gpu_peak)
    assert gpu_only["compute_s"] / gpu_top["compute_s"] == pytest.approx(1300 * 8 / (612 * 4), rel=1e-6)
    # fp16 never counts the DLAs (chapter 07's fp16 peak is the GPU's)
    assert dla_share("Jetson Orin Nano 8GB", "7W") == 1.0  # no DLA listed: nothing to scale


def test_the_15w_mode_is_one_tpc_above_nvidias_table():
    # nvpmodel's 15 W mask (248) leaves 3 of 8 TPCs on: 3/8 × 408/1300 × 170 = 20 TOPS; the DLA README says 14,
    # which two TPCs would give. The rule follows the configuration file; the gap is stated, not hidden.
    gpu, memory, _ = mode_scale("Jetson AGX Orin 64GB", "15W")
    assert gpu * 170 == pytest.approx(20.0, rel=0.01)
    assert memory == pytest.approx(2133 / 3200)


def test_a_lower_mode_is_slower_and_the_result_names_it():
    top = vision("Jetson AGX Orin 64GB", "ResNet-50", precision="int8", batch_size=8)
    low = vision("Jetson AGX Orin 64GB", "ResNet-50", precision="int8", batch_size=8, power_mode="30W")
    assert low["frames_per_s"] < 0.85 * top["frames_per_s"]  # the GPU keeps 23.5 %, the DLAs 85.6 %
    assert low["power_mode"] == "30W" and top["power_mode"] == ""
    assert low["power_w"] == 30


def test_an_unknown_mode_names_the_devices_modes():
    with pytest.raises(ValueError, match=r"power_mode must be one of MAXN, 50W, 30W, 15W.*Did you mean.*'30W'"):
        vision("Jetson AGX Orin 64GB", "ResNet-50", power_mode="30")
    with pytest.raises(ValueError, match="T4 has no power modes listed"):
        vision("T4", "ResNet-50", power_mode="15W")


def test_the_edge_chapter_runs_a_jetson_over_the_envelope_in_its_highest_mode_within_it():
    """A 60 W AGX Orin under a 30 W budget is configured as an engineer would: nvpmodel 30W (4 of 8 TPCs
    at 612 of 1,300 MHz, the DLAs at 1,369.6 of 1,600), projected in that mode by projection.vision and
    drawing 30 W a box; under
    10 W no listed mode fits and the budget excludes it."""
    from accelkit import load_catalog, sizing

    kwargs = dict(streams=10, fps=30, model="YOLOv8s", precision="int8", devices=["Jetson AGX Orin 64GB"])
    top = sizing.edge_fit(load_catalog(), **kwargs).iloc[0]
    capped = sizing.edge_fit(load_catalog(), power_w=30, **kwargs).iloc[0]
    assert capped["run_mode"] == "30W" and capped["unit_w"] == 30 and top["run_mode"] == ""
    assert capped["power_w"] == capped["units"] * 30, "the boxes' power is not the mode's"
    assert capped["frame_ms"] > 1.2 * top["frame_ms"], "the 30W mode runs as fast as the top mode"
    engine = vision("Jetson AGX Orin 64GB", "YOLOv8s", "int8", 1, power_mode="30W")["frame_ms"]
    assert capped["frame_ms"] == pytest.approx(engine, rel=1e-9)
    assert capped["meets"], capped["reason"]
    assert sizing.edge_fit(load_catalog(), power_w=50, **kwargs).iloc[0]["run_mode"] == "50W"
    no_fit = sizing.edge_fit(load_catalog(), power_w=10, **kwargs).iloc[0]
    assert no_fit["reason"] == "60 W per box > 10 W" and no_fit["run_mode"] == ""


def test_the_decision_runs_the_same_mode_as_the_edge_chapter():
    """One answer: under a vision scenario's 30 W envelope the decision runs the AGX Orin in its 30W mode,
    as chapter 07 does -- the same frame time, the mode's power against the envelope, for the energy and the
    work per joule, and the mode named in the configuration. An LLM scenario has no per-mode projection:
    the datasheet's 60 W stands there."""
    from accelkit import load_catalog, select, sizing
    from accelkit.scenario import Scenario

    s = Scenario(name="yard cameras", workload="inference", model="YOLOv8s", deployment="edge", streams=10,
                 frames_per_s=30, power_envelope_w=30, precision="int8", batch_size=1)
    ranked = select.rank(s).set_index("name")
    chapter = sizing.edge_fit(load_catalog(), streams=10, fps=30, model="YOLOv8s", precision="int8", power_w=30,
                              devices=["Jetson AGX Orin 64GB"]).iloc[0]
    row = ranked.loc["Jetson AGX Orin 64GB"]
    assert row["status"] == "shortlisted" and chapter["meets"], row["reason"]
    assert row["latency_ms"] == pytest.approx(chapter["frame_ms"], rel=1e-9)
    assert row["run_power_w"] == 30 and row["power_mode"] == "30W"
    assert "its 30W power mode (30 W)" in row["configuration"]
    assert row["work_per_joule"] == pytest.approx(row["tokens_per_device_hour"] / 3600 / 30, rel=1e-9)
    llm = select.rank(Scenario(name="edge chat", workload="inference", model="Llama-3.1 8B", deployment="edge",
                               power_envelope_w=30, precision="int4")).set_index("name")
    assert llm.loc["Jetson AGX Orin 64GB", "status"] == "excluded"
    assert llm.loc["Jetson AGX Orin 64GB", "run_power_w"] == 60, "an LLM scenario ran the Orin in a lower mode"


def test_no_mode_figures_where_the_precision_has_no_published_peak():
    # the AGX Orin publishes no dense bf16 / fp16 figure: the decision excludes it with no error
    from accelkit import select
    from accelkit.scenario import Scenario

    s = Scenario(workload="inference", model="ResNet-50", deployment="edge", power_envelope_w=30, precision="bf16",
                 streams=10)
    row = select.rank(s).set_index("name").loc["Jetson AGX Orin 64GB"]
    assert row["status"] == "excluded" and "power mode" not in row["excluded_because"]
