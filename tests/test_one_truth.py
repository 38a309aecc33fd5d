"""One truth per scenario (issue 27 point 1), through the panels' Python objects.

For a vision, an LLM-serving and a training scenario, every chapter that shows a per-device
figure -- ms per frame, ms per output token, training days, the total over the horizon --
shows the decision's figure for that device; a device the model does not fit on is never
called the fewest, the fastest or the cheapest; a control that belongs to one chapter stays
there (or visibly changes the shared scenario); and the words follow the workload.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from accelkit import select
from accelkit.catalog import load_catalog
from accelkit.scenario import Scenario

pytest.importorskip("ipywidgets")

EXAMPLES = {
    "vision": "examples/smart-factory-edge-vision.yaml",
    "serving": "examples/serve-70b-at-latency-target.yaml",
    "training": "examples/finetune-7b-in-a-day.yaml",
}
#: devices checked in every chapter that lists them (datacentre and edge)
DEVICES = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200", "Instinct MI300X", "Gaudi 3", "L40S", "L4",
           "GeForce RTX 4090", "TPU v5p", "Jetson AGX Orin 64GB", "Jetson Orin NX 16GB", "Jetson Orin Nano Super 8GB",
           "Jetson Xavier NX 8GB"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _scenario(kind):
    return Scenario.load(EXAMPLES[kind]).update(devices=list(DEVICES))


def _ranked(scenario, catalog):
    return select.rank(scenario.copy(), catalog).set_index("name")


def _text(html_text):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html_text))


def test_vision_frame_time_is_one_figure_in_demand_edge_and_decision(catalog):
    from accelkit.ui.demand import DemandPanel
    from accelkit.ui.edge import EdgePanel

    s = _scenario("vision")
    ranked = _ranked(s, catalog)
    edge = EdgePanel(s.copy(), catalog=catalog)
    demand = DemandPanel(s.copy(), catalog=catalog)
    assert edge.error is None and demand.error is None, (edge.error, demand.error)
    chapter07 = edge.result["table"].set_index("name")["frame_ms"].dropna()
    chapter01 = demand.result["table"].set_index("name")["latency_s"].dropna() * 1e3
    searched = demand.result["decision"].set_index("name")["latency_s"].dropna() * 1e3
    compared = 0
    for device, ms in ranked["latency_ms"].dropna().items():
        for label, figures in (("chapter 07", chapter07), ("chapter 01", chapter01),
                               ("chapter 01's decision column", searched)):
            if device in figures.index:
                compared += 1
                assert figures[device] == pytest.approx(ms, rel=1e-6), \
                    f"{device}: {label} says {figures[device]:.3f} ms per frame, the decision {ms:.3f}"
    assert compared >= 12, "too few devices compared"
    # the recommended device's figure is written on chapter 07's page as the decision writes it
    best = ranked[ranked["status"] == "shortlisted"].index[0]
    shown = _text(edge.table_outputs["fit"].value)
    assert f"{chapter07[best]:.3g}" in shown or f"{chapter07[best]:,.1f}" in shown


def test_serving_decision_figure_appears_in_the_demand_chapter(catalog):
    from accelkit.ui.demand import DemandPanel

    s = _scenario("serving")
    ranked = _ranked(s, catalog)
    demand = DemandPanel(s.copy(), catalog=catalog)
    assert demand.error is None, demand.error
    searched = demand.result["decision"].set_index("name")
    compared = 0
    for device, row in ranked.dropna(subset=["latency_ms"]).iterrows():
        if device in searched.index:
            compared += 1
            assert searched.loc[device, "latency_s"] * 1e3 == pytest.approx(row["latency_ms"], rel=1e-6), device
            assert searched.loc[device, "configuration"] == row["configuration"], device
    assert compared >= 8
    table = _text(demand.table_outputs["devices"].value)
    best = ranked[ranked["status"] == "shortlisted"].iloc[0]
    assert f"{best['configuration']}: {best['latency_ms']:,.3g} ms per output token" in table, table[:2000]
    assert "the decision's configuration (chapter 09)" in table


def test_training_days_are_one_figure_in_demand_cluster_and_decision(catalog):
    from accelkit.ui.cluster import ClusterPanel
    from accelkit.ui.demand import DemandPanel

    s = _scenario("training")
    ranked = _ranked(s, catalog)
    demand = DemandPanel(s.copy(), catalog=catalog)
    searched = demand.result["decision"].set_index("name")
    table = demand.result["table"].set_index("name")
    for device, row in ranked.dropna(subset=["days_on_n"]).iterrows():
        if device in searched.index:
            assert searched.loc[device, "days_on_n"] == pytest.approx(row["days_on_n"], rel=1e-6), device
    for device in ("A100 80GB SXM", "H100 SXM"):
        cluster = ClusterPanel(s.copy(), catalog=catalog, device=device)
        assert cluster.error is None, cluster.error
        days = cluster.result["step"]["days"]
        assert days == pytest.approx(table.loc[device, "days_on_n"], rel=1e-9), f"{device}: cluster vs demand"
        # the scenario's own layout and the decision's searched one agree to the shown decimal
        assert f"{days:.1f}" == f"{ranked.loc[device, 'days_on_n']:.1f}", device


def test_a_device_chapter_01_cannot_project_at_bf16_says_how_the_decision_runs_it(catalog):
    """The T4 publishes no dense bf16 peak: chapter 01 cannot project a bf16 run on it, while the decision
    runs it in fp16, bf16's stand-in. Chapter 01 says so, with the decision's configuration and days --
    one answer for the device, not 'cannot be projected' here and a figure there."""
    from accelkit.ui.demand import DemandPanel

    s = Scenario(model="Llama-2 7B", tokens=2e10, time_target_days=30, n_devices=8, deployment="cloud",
                 devices=["T4", "A100 80GB SXM"])
    ranked = _ranked(s, catalog)
    assert ranked.loc["T4", "precision"] == "fp16", "premise: the decision runs the T4 in fp16"
    words = " ".join(DemandPanel(s.copy(), catalog=catalog).result["summary"])
    said = re.search(r"T4 \(no published dense bf16 peak; chapter 09 runs it as (fp16, .+?): ([\d.]+) days\)", words)
    assert said, f"chapter 01 does not say how the decision runs the T4: {words[-600:]}"
    assert said.group(1) == ranked.loc["T4", "configuration"]
    assert said.group(2) == f"{ranked.loc['T4', 'days_on_n']:.1f}"


@pytest.mark.parametrize("kind", ["serving", "training", "vision"])
def test_the_total_over_the_horizon_is_the_decisions(kind, catalog):
    from accelkit.ui.energy_tco import TCOPanel

    s = _scenario(kind)
    ranked = _ranked(s, catalog)
    panel = TCOPanel(s.copy(), catalog=catalog)
    assert panel.error is None, panel.error
    best = ranked[ranked["status"] == "shortlisted"].iloc[0]
    shown = panel.result["ranked"].set_index("name").loc[best.name]
    assert shown["total_cost_usd"] == pytest.approx(best["total_cost_usd"], rel=1e-9)
    summary = " ".join(panel.result["summary"])
    assert f"on the recommended {best.name}" in summary
    assert f"${best['total_cost_usd']:,.0f}" in summary or f"${best['total_cost_usd']:.3g}" in summary


def test_chapter_05_shows_the_cameras_calculator_only_for_an_image_model(catalog):
    from accelkit.ui.energy_tco import TCOPanel

    llm = TCOPanel(_scenario("serving"), catalog=catalog)
    assert "compare" not in llm.result["tables"] and "cumulative" not in llm.result["figures"]
    assert "so it is not shown" in " ".join(llm.result["summary"])
    body = llm.widget  # the page holds no camera control
    assert llm.controls["streams"] not in _descendants(body)
    vision = Scenario.load(EXAMPLES["vision"]).update(model="ResNet-50")
    cams = TCOPanel(vision, catalog=catalog)
    assert "compare" in cams.result["tables"]
    assert cams.controls["model"].value == "ResNet-50", "the calculator runs the scenario's own model"
    assert cams.controls["streams"] in _descendants(cams.widget)


def _descendants(widget):
    out, todo = [], [widget]
    while todo:
        w = todo.pop()
        out.append(w)
        todo.extend(getattr(w, "children", ()))
    return out


def test_demand_never_calls_a_device_that_does_not_fit_the_cheapest(catalog):
    from accelkit.ui.demand import DemandPanel

    # pretraining a 70B model on 32 devices, fully sharded: the consumer card is the cheapest per device-hour
    # (it was called 'cheapest to rent for the whole run') and cannot hold its share of the model
    s = Scenario(model="Llama-2 70B", tokens=2e11, n_devices=32, zero_stage=3,
                 devices=["GeForce RTX 4090", "L4", "A100 80GB SXM", "H100 SXM", "H200 SXM", "B200"])
    panel = DemandPanel(s, catalog=catalog)
    assert panel.error is None, panel.error
    table = panel.result["table"].set_index("name")
    fitting = table[np.isfinite(table["devices_needed"].astype(float)) & table["fits"].astype(bool)]
    unfit = [n for n in table.index if n not in fitting.index]
    assert "GeForce RTX 4090" in unfit and table["cloud_usd"].idxmin() == "GeForce RTX 4090"
    for sentence in panel.result["summary"]:
        if sentence.startswith(("Cheapest to rent", "Projected with", "On 32 devices the job takes")):
            named = [n for n in table.index if n in sentence]
            assert named and not set(named) & set(unfit), sentence
    cheapest = next(line for line in panel.result["summary"] if line.startswith("Cheapest to rent"))
    assert fitting["cloud_usd"].idxmin() in cheapest
    assert any(line.startswith("Does not fit on 32 devices") and "GeForce RTX 4090" in line
               for line in panel.result["summary"])
    shown = _text(panel.table_outputs["devices"].value)
    assert "inf" not in shown.split() and "nan" not in shown.split()
    row = re.search(r"GeForce RTX 4090 .*?(?= [A-Z][\w ]*(SXM|L4|B200)|$)", shown).group(0)
    assert "does not fit" in row, row


def test_an_edge_power_envelope_stays_in_chapter_07_for_a_cloud_training_scenario(catalog):
    from accelkit.ui.edge import EdgePanel

    s = _scenario("training")
    before = _ranked(s, catalog)
    panel = EdgePanel(s, catalog=catalog)
    panel.set(power_w=15.0, budget_usd=800.0, streams=64)
    assert s.power_envelope_w is None and s.budget_usd is None and s.streams != 64
    assert "nothing here changes your scenario" in panel.scope.value
    after = _ranked(s, catalog)
    assert (after["status"] == "shortlisted").sum() == (before["status"] == "shortlisted").sum() > 0
    # the chapter's own 15 W still applies on its own page: the Jetsons over it run in their 15 W modes
    table = panel.result["table"]
    assert table["run_mode"].eq("15W").any() and (table.loc[table["run_mode"] != "", "unit_w"] <= 15).all(), \
        table[["name", "run_mode", "unit_w"]].to_string()


def test_an_edge_scenario_shares_its_targets_with_chapter_07_and_says_so(catalog):
    from accelkit.ui.edge import EdgePanel

    s = Scenario.load(EXAMPLES["vision"])
    panel = EdgePanel(s, catalog=catalog)
    assert panel.controls["power_w"].value == 60.0 and panel.controls["budget_usd"].value == 0.0
    assert "a change here changes them there" in panel.scope.value
    panel.set(power_w=15.0, latency_ms=20.0)
    assert s.power_envelope_w == 15.0 and s.latency_target_ms == 20.0
    ranked = _ranked(s, catalog)
    hot = ranked[ranked["segment"] == "edge"]
    assert not ((hot["status"] == "shortlisted") & (catalog.set_index("name").loc[hot.index, "tdp_w"] > 15)).any()
    # the scenario turns into an LLM one: the tab lets go of the scenario when reopened
    s.update(model="Llama-3.1 8B", deployment="cloud", power_envelope_w=None)
    panel.pull_scenario()
    panel.set(power_w=25.0)
    assert s.power_envelope_w is None
    assert "not an edge camera workload" in panel.scope.value


def test_words_follow_the_workload(catalog):
    from accelkit.ui.cluster import ClusterPanel
    from accelkit.ui.demand import DemandPanel

    vision = DemandPanel(_scenario("vision"), catalog=catalog)
    text = " ".join(vision.result["summary"][:4])
    assert "frames/s" in text and "TOP/s" in text and "tokens" not in text, text
    assert "ms per frame (range)" in vision.table_outputs["devices"].value
    serving = DemandPanel(_scenario("serving"), catalog=catalog)
    assert "ms per output token (range)" in serving.table_outputs["devices"].value
    training = DemandPanel(_scenario("training"), catalog=catalog)
    assert "days on 8 (range)" in training.table_outputs["devices"].value
    # chapter 06 says when it is only a what-if for the scenario
    cluster = ClusterPanel(_scenario("serving"), catalog=catalog)
    assert cluster.result["summary"][0].startswith("Your scenario serves Llama-3.1 70B (inference)")
