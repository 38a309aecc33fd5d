"""One vision model: chapter 07's panel, the decision and ``projection.vision`` project the
same frame time for the same device and scenario (figures compared, not source text)."""

from __future__ import annotations

import pytest

from accelkit import select
from accelkit.catalog import load_catalog
from accelkit.projection import vision
from accelkit.scenario import Scenario

DEVICES = ["Jetson AGX Orin 64GB", "Jetson Orin Nano Super 8GB", "Jetson Orin NX 16GB"]


@pytest.fixture(scope="module", params=[0.3, None], ids=["your-utilisation", "projected"])
def scenario(request):
    # the smart-factory example's workload (YOLOv8s int8, 10 cameras × 30 fps), with and without the
    # person's utilisation, on the devices the two chapters disagreed on (0.70 vs 4.02 ms, 0.74 vs 4.04 ms)
    s = Scenario.load("examples/smart-factory-edge-vision.yaml")
    return s.copy().update(utilization=request.param)


def test_frame_time_agrees_across_edge_chapter_decision_and_engine(scenario):
    import ipywidgets  # noqa: F401 (required: a missing one fails, never skips)
    from accelkit.ui.edge import EdgePanel

    catalog = load_catalog()
    panel = EdgePanel(scenario.copy(), catalog=catalog)
    assert panel.error is None, panel.error
    chapter = panel.result["table"].set_index("name")["frame_ms"]
    decision = select.rank(scenario, catalog).set_index("name")["latency_ms"]
    for device in DEVICES:
        engine = vision(device, scenario.model, scenario.precision, scenario.batch_size, catalog=catalog,
                        utilization=scenario.utilization)["frame_ms"]
        assert 0.5 < engine < 50.0, f"{device}: {engine} ms per frame is not a YOLOv8s pass"
        assert chapter[device] == pytest.approx(engine, rel=5e-3), \
            f"{device}: chapter 07 says {chapter[device]:.3f} ms per frame, projection.vision {engine:.3f}"
        assert decision[device] == pytest.approx(engine, rel=5e-3), \
            f"{device}: the decision says {decision[device]:.3f} ms per frame, projection.vision {engine:.3f}"
    # the T4 (a cloud GPU: not in the edge chapter's table) through the decision and the claims' latency path
    from accelkit import claims

    engine = vision("T4", scenario.model, scenario.precision, scenario.batch_size, catalog=catalog,
                    utilization=scenario.utilization)["frame_ms"]
    assert decision["T4"] == pytest.approx(engine, rel=5e-3), f"T4: decision {decision['T4']:.3f} vs {engine:.3f} ms"
    if scenario.utilization is not None:
        table, _ = claims.latency_edge_vs_cloud(catalog, scenario.model, cloud_device="T4",
                                                utilization=scenario.utilization)
        one = table.set_index("component")["ms"]["inference on T4"]
        assert one == pytest.approx(vision("T4", scenario.model, "int8", 1, catalog=catalog,
                                           utilization=scenario.utilization)["frame_ms"], rel=5e-3)


@pytest.mark.parametrize("device, ms", [
    pytest.param("T4", 1.000, marks=pytest.mark.xfail(strict=True, reason=(
        "the T4 runs ResNet-50 at batch 1 in 0.82-1.00 ms (MLPerf v0.7-v3.0, NVIDIA, Dell, Lenovo), 1.4-1.7x the "
        "engine's 0.58 ms: its kernels' cycles at the 1,590 MHz boost clock and its 4 MiB L2 say less than it takes, "
        "while an A10, of nearly the same dense INT8 rate per SM (3.5 against 3.25 TOPS), measures 0.46 ms; what "
        "holds the T4 back is not modelled"))),
    ("Jetson AGX Orin 64GB", 0.636), ("A100 40GB PCIe", 0.497), ("L4", 0.346)])
def test_small_batch_floor_reproduces_mlperf_resnet50_single_stream(device, ms):
    """NVIDIA's MLPerf Inference ResNet-50 SingleStream (TensorRT, INT8) mean latencies:
    T4 1.000 ms (v0.7, T4x1_TRT), Jetson AGX Orin 64GB 0.636 ms (v3.1, Orin_TRT), A100 PCIe
    0.497 ms (v1.0, A100-PCIex1_TRT), L4 0.346 ms (v3.1, L4x1_TRT). The engine stays within 30 % of
    each (the 3.65 ms LLM prefill overhead it used before was 4-7× too slow, F / (peak × 0.3) 3-11×
    too fast; one per-kernel time in seconds for every clock, and no L2, left the L4 at 0.68 ms)."""
    projected = vision(device, "ResNet-50", "int8", 1)["frame_ms"]
    assert projected / ms == pytest.approx(1.0, abs=0.3), f"{device}: {projected:.3f} ms vs MLPerf {ms} ms"


def test_the_example_still_shortlists_an_edge_device():
    ranked = select.rank(Scenario.load("examples/smart-factory-edge-vision.yaml"))
    assert (ranked["status"] == "shortlisted").any(), ranked[["name", "reason"]].head(8).to_string()
