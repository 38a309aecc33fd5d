"""One engine: every tab shows the same projected figure for the same device and scenario,
and no chapter, the decision or the claims compute a time or a throughput of their own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelkit import select
from accelkit.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent / "accelkit"


@pytest.fixture(scope="module")
def training():
    return Scenario(model="Llama-2 7B", tokens=2e11, n_devices=8)


@pytest.fixture(scope="module")
def serving():
    return Scenario(workload="inference", model="Llama-3.1 8B", batch_size=8, seq_len=1024, output_tokens=256,
                    n_devices=1, latency_target_ms=1000)


@pytest.mark.parametrize("device", ["A100 80GB SXM", "H100 SXM"])
def test_training_days_agree_across_demand_cluster_and_decision(training, device):
    from accelkit.catalog import find
    from accelkit.ui.cluster import ClusterPanel
    from accelkit.ui.demand import DemandPanel

    demand = DemandPanel(training.copy()).result["table"].set_index("name").loc[device, "days_on_n"]
    cluster = ClusterPanel(training.copy(), device=device).result["step"]["days"]
    ranked = select.rank(training.copy()).set_index("name").loc[device, "days_on_n"]
    assert demand == pytest.approx(cluster, rel=1e-9), "demand and cluster tabs disagree"
    assert demand == pytest.approx(ranked, rel=1e-9), "demand and decision tabs disagree"
    assert find(device)["name"] == device


def test_decode_speed_agrees_across_roofline_demand_and_decision(serving):
    from accelkit import projection
    from accelkit.ui.demand import DemandPanel
    from accelkit.ui.roofline import RooflinePanel

    device = "H100 SXM"
    roof = RooflinePanel(serving.copy())
    roof.set(devices=(device,))
    name, per_device = roof._decode_best
    table = DemandPanel(serving.copy()).result["table"].set_index("name")
    demand = table.loc[device, "work_per_device_hour"] / 3600
    as_given = serving.copy().update(search_configurations=False)
    ranked = select.rank(as_given).set_index("name").loc[device, "tokens_per_device_hour"] / 3600
    engine = projection.inference(device, "Llama-3.1 8B", batch_size=8, input_tokens=1024, output_tokens=256)
    assert name == device
    for label, value in (("roofline", per_device), ("demand", demand), ("decision", ranked)):
        assert value == pytest.approx(engine["output_tokens_per_s_per_device"], rel=1e-9), f"{label} disagrees"


def test_the_decisions_searched_configuration_is_the_engines_figure_for_that_configuration(serving):
    """The decision's speed is the engine's at the batch and tensor-parallel size it chose, not another model."""
    from accelkit import projection

    row = select.rank(serving.copy()).set_index("name").loc["H100 SXM"]
    engine = projection.inference("H100 SXM", "Llama-3.1 8B", n_devices=serving.n_devices,
                                  tensor_parallel=int(row["tensor_parallel"]), batch_size=int(row["batch_size"]),
                                  input_tokens=1024, output_tokens=256)
    assert row["tokens_per_device_hour"] / 3600 == pytest.approx(engine["output_tokens_per_s_per_device"], rel=1e-9)
    assert engine["tpot_s"] * 1e3 <= serving.latency_target_ms, "the chosen batch must meet the latency target"


# patterns of the old, bound-only arithmetic: a FLOP count, a time from a peak, a decode bound
_FORBIDDEN = [
    (re.compile(r"\b6(\.0)?\s*\*\s*\w*(params|active)"), "a 6·N FLOP count"),
    (re.compile(r"peak\w*\s*\*\s*\w*utili[sz]ation"), "a time or rate from peak × utilisation"),
    (re.compile(r"\bllm\.decode_"), "the old decode bound"),
    (re.compile(r"\bdemand\.training_seconds\b"), "the old training-time bound"),
    (re.compile(r"roofline\.attainable_flops\("), "a roofline bound used as a speed"),
]


@pytest.mark.parametrize("path", sorted([*ROOT.glob("ui/*.py"), *ROOT.glob("select/*.py"), ROOT / "sizing.py",
                                        ROOT / "claims.py"]), ids=lambda p: p.name)
def test_no_time_or_throughput_formula_outside_the_engine(path):
    text = path.read_text(encoding="utf-8")
    for pattern, what in _FORBIDDEN:
        match = pattern.search(text)
        assert not match, f"{path.name} computes {what} itself ({match.group(0)!r}); call accelkit.projection"
