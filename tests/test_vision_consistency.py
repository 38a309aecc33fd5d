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


def _edge_chapter_and_decision(scenario, catalog):
    """Frame times per device [ms] of chapter 07's panel and of the decision for one scenario."""
    import ipywidgets  # noqa: F401 (required: a missing one fails, never skips)
    from accelkit.ui.edge import EdgePanel

    panel = EdgePanel(scenario.copy(), catalog=catalog)
    assert panel.error is None, panel.error
    chapter = panel.result["table"].set_index("name")["frame_ms"]
    return chapter, select.rank(scenario, catalog).set_index("name")["latency_ms"]


def test_frame_time_agrees_across_edge_chapter_decision_and_engine(scenario):
    catalog = load_catalog()
    chapter, decision = _edge_chapter_and_decision(scenario, catalog)
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


BERT_DEVICES = ["T4", "L4", "A100 80GB SXM", "V100 PCIe 32GB"]


def test_an_encoders_pass_agrees_across_decision_claims_cli_and_engine(capsys):
    """One encoder model: the decision (chapter 09, the report), chapter 02's BERT claim and ``accelkit project
    vision`` price BERT with ``projection.vision`` layer by layer, the model ``accelkit validate`` checks on the
    TensorRT demo and DeepLearningExamples (the decision used to take a decoder's prefill: T4 7.75 vs 6.79 ms,
    L4 4.84 vs 2.85 ms, A100 80GB SXM 2.65 vs 1.27 ms at batch 8 of 128 tokens)."""
    import json

    from accelkit import claims
    from accelkit.cli import main

    scenario = Scenario.load("examples/bert-inference-small-team.yaml")
    catalog = load_catalog()
    decision = select.rank(scenario, catalog).set_index("name")
    table, _ = claims.bert_t4_vs_v100(catalog, batches=(scenario.batch_size,), seq_len=scenario.seq_len,
                                      precision=scenario.precision, t4_int8=False)
    claim = table.set_index("device")["latency_ms"]
    for device in BERT_DEVICES:
        engine = vision(device, scenario.model, scenario.precision, scenario.batch_size, catalog=catalog,
                        seq_len=scenario.seq_len)
        assert 0.3 < engine["frame_ms"] < 30.0, f"{device}: {engine['frame_ms']} ms is not a BERT-base pass of 8"
        assert decision.loc[device, "latency_ms"] == pytest.approx(engine["frame_ms"], rel=5e-3), \
            f"{device}: the decision says {decision.loc[device, 'latency_ms']:.3f} ms, projection.vision " \
            f"{engine['frame_ms']:.3f}"
        assert decision.loc[device, "latency_ms_high"] == pytest.approx(engine["frame_ms_high"], rel=5e-3), \
            f"{device}: the decision's slow end is not projection.vision's"
        if device in claim:
            assert claim[device] == pytest.approx(engine["frame_ms"], rel=5e-3), \
                f"{device}: chapter 02's BERT claim says {claim[device]:.3f} ms, projection.vision " \
                f"{engine['frame_ms']:.3f}"
        assert main(["project", "vision", "--device", device, "--model", scenario.model, "--precision",
                     scenario.precision, "--batch-size", str(scenario.batch_size), "--seq-len",
                     str(scenario.seq_len), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert cli["frame_ms"] == pytest.approx(engine["frame_ms"], rel=5e-3), \
            f"{device}: accelkit project vision says {cli['frame_ms']:.3f} ms, projection.vision " \
            f"{engine['frame_ms']:.3f}"
    assert set(claim.index) == {"T4", "V100 PCIe 32GB"}, "chapter 02's claim compares the T4 and the V100"


def test_an_encoders_tokens_per_request_change_its_pass():
    short = vision("T4", "BERT-base", "fp16", 8, seq_len=128)["frame_ms"]
    long = vision("T4", "BERT-base", "fp16", 8, seq_len=384)["frame_ms"]
    assert long > 2.5 * short, f"three times the tokens should cost about three times the pass: {short} vs {long} ms"
    with pytest.raises(ValueError, match="seq_len"):
        vision("T4", "BERT-base", "fp16", 8, seq_len=0)


@pytest.mark.parametrize("model, where", [("BERT-base", "project vision --model BERT-base --seq-len"),
                                          ("ResNet-50", "project vision"), ("DLRM-v2", "project recommender")])
def test_the_llm_engine_refuses_a_model_that_generates_no_tokens_and_says_where_it_is_projected(model, where):
    """A second, decoder-shaped answer for an encoder (time per output token of BERT) is not given."""
    from accelkit.cli import main
    from accelkit.projection import inference

    with pytest.raises(ValueError, match="model: .* decoder's") as err:
        inference("T4", model, "fp16")
    assert where in str(err.value), str(err.value)
    assert main(["project", "llm", "--device", "T4", "--model", model]) == 2


def test_the_scenarios_stack_gives_one_frame_time_in_the_edge_chapter_the_decision_and_the_engine():
    # ResNet-50: an eager stack needs the model's layer table (YOLOv8s has none: it cannot be priced eager)
    scenario = Scenario.load("examples/smart-factory-edge-vision.yaml").update(model="ResNet-50",
                                                                               stack="pytorch-eager")
    catalog = load_catalog()
    chapter, decision = _edge_chapter_and_decision(scenario, catalog)
    for device in DEVICES:
        kw = dict(catalog=catalog, power_envelope_w=scenario.power_envelope_w, utilization=scenario.utilization)
        engine = vision(device, scenario.model, scenario.precision, scenario.batch_size, stack="pytorch-eager",
                        **kw)["frame_ms"]
        default = vision(device, scenario.model, scenario.precision, scenario.batch_size, **kw)["frame_ms"]
        assert engine > default, f"{device}: eager PyTorch should be slower than TensorRT ({engine} vs {default} ms)"
        assert chapter[device] == pytest.approx(engine, rel=5e-3), \
            f"{device}: chapter 07 says {chapter[device]:.3f} ms under eager PyTorch, projection.vision {engine:.3f}"
        assert decision[device] == pytest.approx(engine, rel=5e-3), \
            f"{device}: the decision says {decision[device]:.3f} ms under eager PyTorch, projection.vision {engine:.3f}"
