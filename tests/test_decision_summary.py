"""The decision page a buyer signs (issue 27, point 2): ``select.decision_summary`` is the one
home of its content, and the HTML renders that dict and nothing else."""

from __future__ import annotations

import re

import pytest

from accelkit import select
from accelkit.decision_page import summary_document, summary_html
from accelkit.scenario import Scenario

SCENARIOS = {
    # a training run on our own servers: right-sized to fewer devices than the 64 allowed
    "training on-prem": Scenario(name="pretrain Llama-2 13B on our own racks", workload="training",
                                 model="Llama-2 13B", tokens=2e11, time_target_days=20, deployment="on-prem",
                                 n_devices=64, seq_len=4096, batch_size=512),
    # LLM serving in the cloud with a latency and a first-token target
    "serving with a latency target": Scenario(name="chat assistant <beta> & co", workload="inference",
                                              model="Llama-3.1 8B", deployment="cloud", latency_target_ms=25,
                                              ttft_target_ms=800, requests_per_s=5, seq_len=2048,
                                              output_tokens=300, frameworks=["pytorch", "vllm"]),
    # a parcel scanner at the edge: four cameras, a power envelope, two devices at most
    "edge vision": Scenario(name="parcel scanner", workload="inference", model="YOLOv8m", deployment="edge",
                            streams=4, frames_per_s=15, latency_target_ms=60, power_envelope_w=40, n_devices=2,
                            precision="int8", frameworks=["onnxruntime"]),
}


@pytest.fixture(scope="module", params=list(SCENARIOS), ids=list(SCENARIOS))
def decided(request):
    s = SCENARIOS[request.param]
    ranked = select.rank(s)
    stability = select.rank_stability(s, ranked=ranked)
    return request.param, s, ranked, stability, select.decision_summary(s, ranked, stability)


def test_the_page_names_the_device_the_decision_tab_names(decided):
    _, s, ranked, stability, d = decided
    verdict = select.headline(ranked, stability)
    assert d["device"] == verdict["devices"][0]
    assert d["headline"] == verdict["text"] and d["verdict"] == verdict["verdict"]
    # computing the draws itself gives the same device
    assert select.decision_summary(s)["device"] == d["device"]


def test_what_to_buy_and_the_total_are_the_ranked_rows(decided):
    _, s, ranked, _, d = decided
    row = ranked[ranked["name"] == d["device"]].iloc[0]
    assert row["status"] == "shortlisted"
    if s.deployment == "cloud":
        assert d["action"] == "rent" and d["units"] == row["devices_rented"]
        assert d["order"].startswith(row["purchase_unit"].removeprefix("rent "))
    else:
        assert d["action"] == "buy" and d["units"] == row["units_to_buy"]
        assert d["order"] == row["purchase_unit"]
        assert re.match(r"\d+ × ", d["order"])
    assert d["total"]["usd"] == pytest.approx(row["total_cost_usd"])
    assert d["total"]["low"] == pytest.approx(row["total_cost_usd_low"])
    assert d["total"]["high"] == pytest.approx(row["total_cost_usd_high"])
    assert f"${row['total_cost_usd']:,.0f}" in d["total"]["text"]
    assert d["total"]["horizon"] == ("the run" if s.workload == "training" else f"{s.horizon_months} months")


def test_runners_up_are_the_next_two_shortlisted_with_a_reason(decided):
    _, _, ranked, _, d = decided
    short = ranked[ranked["status"] == "shortlisted"]
    expected = [n for n in short["name"] if n != d["device"]][:2]
    assert [r["name"] for r in d["runners_up"]] == expected
    top = short[short["name"] == d["device"]].iloc[0]
    for r in d["runners_up"]:
        row = short[short["name"] == r["name"]].iloc[0]
        assert r["gap"] == pytest.approx(top["score"] - row["score"])
        assert r["why"].startswith(f"{r['gap']:.1f} points behind")
        assert "mostly" in r["why"]


def test_performance_is_against_the_scenarios_target(decided):
    _, s, ranked, _, d = decided
    row = ranked[ranked["name"] == d["device"]].iloc[0]
    perf = d["performance"]
    if s.workload == "training":
        assert perf["target"] == s.time_target_days and "days" in perf["text"]
        # the order is right-sized: the time quoted is the devices ordered
        assert perf["projected"] == pytest.approx(row["days_right_sized"])
        assert f"{row['devices_needed']:.0f} devices ordered" in perf["text"]
    else:
        assert perf["target"] == s.latency_target_ms and perf["projected"] == pytest.approx(row["latency_ms"])
        unit = "frame" if s.model.startswith("YOLO") else "token"
        assert f"ms per {unit}" in perf["text"]
        if s.ttft_target_ms:
            assert "first token" in perf["text"]
    assert perf["meets"] == (perf["projected"] <= perf["target"])


def test_cannot_verify_risks_assumptions_and_price_dates(decided):
    key, s, ranked, _, d = decided
    unverified = ranked[ranked["status"] == "cannot verify"]
    assert [c["device"] for c in d["cannot_verify"]] == unverified["name"].tolist()
    assert all(c["missing"] for c in d["cannot_verify"])
    named = {d["device"], *(r["name"] for r in d["runners_up"])}
    assert {r["device"] for r in d["risks"]} <= named
    assumed = dict(d["assumptions"])
    assert assumed["precision"].startswith(s.precision)
    assert "utilisation" in assumed and "horizon" in assumed and "speed headroom" in assumed
    if s.deployment == "cloud":
        assert "median on-demand" in assumed["cloud price"] and "power" not in assumed
    else:
        assert f"PUE {s.pue:g}" in assumed["power"] and f"${s.electricity_usd_per_kwh:g}" in assumed["power"]
    if key == "edge vision":
        assert "4 camera streams at 15 frames per second" == assumed["load"]
        assert assumed["power envelope"] == "40 W per device"
    assert set(d["price_dates"]) == named
    assert re.search(r"\d{4}-\d{2}", d["prices_dated"])


def test_the_html_renders_the_dict_and_escapes_every_string(decided):
    _, s, _, _, d = decided
    page = summary_html(d)
    assert page.count('id="decision-summary"') == 1
    assert "@media print" in page and "size: A4" in page
    assert "<beta>" not in page  # the scenario's name is the person's text
    from html import escape

    assert escape(d["title"]) in page and escape(d["order"]) in page and escape(d["total"]["text"]) in page
    for r in d["runners_up"]:
        assert escape(r["name"]) in page
    assert summary_document(d).startswith("<!DOCTYPE html>")


def test_nothing_passes_says_so_and_offers_the_most_common_reason():
    s = Scenario(name="impossible", workload="inference", model="Llama-3.1 405B", deployment="edge", n_devices=1,
                 latency_target_ms=1)
    d = select.decision_summary(s)
    assert d["device"] is None and d["verdict"] == "none" and not d["runners_up"]
    assert d["next_step"].startswith("The most common reason a device fails")
    page = summary_html(d)
    assert 'id="decision-summary"' in page and "<dt>Buy</dt>" not in page and "No device passes" in page


def test_plan_words_lives_in_select_and_the_panel_uses_it():
    from accelkit.ui import decision

    assert decision.plan_words is select.plan_words
