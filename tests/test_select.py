"""The decision engine: hard constraints with reasons, weighted score, sensitivity.

These tests check behaviour and internal consistency, not a published worked
example: the method is a weighted-sum multi-criteria decision (Triantaphyllou,
*Multi-Criteria Decision Making Methods: A Comparative Study*, Springer 2000, ch. 2,
doi:10.1007/978-1-4757-3157-6) after hard constraints, with one-at-a-time sensitivity
(Saltelli et al., *Global Sensitivity Analysis: The Primer*, Wiley 2008, ch. 1) and
Monte-Carlo rank acceptability (Lahdelma & Salminen, Operations Research 49(3),
2001, doi:10.1287/opre.49.3.444.11220). Device figures (TDP, memory, peaks) are the
catalogue's datasheet values; model memory follows ZeRO (Rajbhandari et al. 2020,
arXiv:1910.02054, §3.1: 16 bytes per parameter for mixed-precision Adam).
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import select
from accelkit.scenario import Scenario


def _row(ranked, name):
    return ranked.set_index("name").loc[name]


@pytest.fixture(scope="module")
def base():
    return Scenario(model="Llama-2 7B", tokens=2e10, time_target_days=30, n_devices=8, deployment="cloud")


def test_every_device_appears_once_with_a_status(base, catalog):
    """Internal consistency: every catalogue row is ranked or excluded with a reason."""
    ranked = select.rank(base, catalog)
    assert sorted(ranked["name"]) == sorted(catalog["name"])
    assert set(ranked["status"]) <= {"shortlisted", "excluded"}
    short = ranked[ranked["status"] == "shortlisted"]
    assert list(short["rank"]) == list(range(1, len(short) + 1))
    assert short["score"].is_monotonic_decreasing
    assert (ranked.loc[ranked["status"] == "excluded", "excluded_because"] != "").all()
    assert ranked["reason"].str.len().gt(10).all()


@pytest.mark.parametrize(
    "changes, device, expected",
    [
        ({"precision": "fp8"}, "A100 80GB SXM", "no published dense fp8 peak"),
        ({"n_devices": 1, "zero_stage": 0, "search_configurations": False}, "L4", "does not fit one device"),
        # searched: 7B's 16 bytes per parameter of state need six 24 GB L4s, fully sharded
        ({"n_devices": 1}, "L4", "needs 6 devices to hold the model even with ZeRO-3"),
        ({"n_devices": 2, "zero_stage": 3}, "A10G", "no published dense bf16 peak"),
        ({"n_devices": 2, "zero_stage": 3, "deployment": "on-prem"}, "L4", "devices to hold the model even with ZeRO-3 and one sequence per device; the scenario allows 2"),
        ({"power_envelope_w": 500}, "H100 SXM", "700 W TDP > power envelope 500 W"),
        ({"segments": ["workstation"], "deployment": "on-prem"}, "H100 SXM", "segment datacenter not allowed"),
        ({"deployment": "edge"}, "H100 SXM", "not an edge device"),
        ({}, "Instinct MI210", "not rentable"),
        ({"time_target_days": 2}, "A100 80GB SXM", "days on 8 devices > target 2 days"),
        ({"budget_usd": 100}, "H100 SXM", "> budget $100"),
        ({"frameworks": ["tensorflow"], "deployment": "on-prem"}, "Gaudi 3", "ecosystem:"),
    ],
)
def test_each_hard_constraint_excludes_with_its_reason(base, catalog, changes, device, expected):
    """Each hard constraint excludes a device whose datasheet figure fails it (e.g. H100 SXM 700 W TDP, NVIDIA datasheet); the reason names it."""
    scenario = base.copy().update(**changes)
    row = _row(select.rank(scenario, catalog), device)
    assert row["status"] == "excluded", f"{device} should be excluded by {changes}"
    assert expected in row["excluded_because"], row["excluded_because"]


def test_latency_target_excludes_slow_inference(catalog):
    """Behaviour: a 5 ms per-token target excludes an L4 (300 GB/s datasheet bandwidth: 13.5 GB of weights take ~45 ms per token, Pope et al. 2023 memory-bound floor)."""
    s = Scenario(workload="inference", model="Llama-2 7B", deployment="on-prem", latency_target_ms=5, batch_size=1,
                 n_devices=1)
    ranked = select.rank(s, catalog)
    t4 = _row(ranked, "L4")
    assert t4["status"] == "excluded" and "> target 5 ms" in t4["excluded_because"], t4["excluded_because"]


def test_a_70b_model_in_bf16_never_ranks_a_24gb_card_as_a_single_device(catalog):
    """Hand-worked: 70e9 parameters × 2 bytes = 140 GB of bf16 weights (Llama 2 paper, arXiv:2307.09288); only devices with enough memory may pass."""
    # 70e9 × 2 bytes = 140 GB of weights: only devices with >= 140 GB usable may be shortlisted
    s = Scenario(workload="inference", model="Llama-2 70B", precision="bf16", n_devices=1, deployment="on-prem",
                 latency_target_ms=1000, batch_size=1)
    ranked = select.rank(s, catalog)
    short = ranked[ranked["status"] == "shortlisted"]
    assert not short.empty
    memory = catalog.set_index("name").loc[short["name"], "memory_gb"]
    assert (memory >= 160).all(), f"shortlisted without room for 140 GB: {list(memory[memory < 160].index)}"
    assert _row(ranked, "GeForce RTX 4090")["status"] == "excluded"


def test_raising_a_weight_moves_the_devices_strong_on_it_up(base, catalog):
    """Property of a weighted sum (Triantaphyllou 2000, ch. 2): a larger weight widens the lead of the device best on that criterion."""
    low = select.rank(base, catalog, weights={"cost": 0.1})
    high = select.rank(base, catalog, weights={"cost": 10})
    short = low[low["status"] == "shortlisted"].set_index("name")
    a, b = short.sort_values("score_cost").index[[-1, 0]]  # cheapest and dearest on cost
    gap_low = short.loc[a, "score"] - short.loc[b, "score"]
    h = high.set_index("name")
    assert h.loc[a, "score"] - h.loc[b, "score"] > gap_low
    assert list(high[high["status"] == "shortlisted"]["name"])[0] == a or h.loc[a, "score"] >= h.loc[b, "score"]


def test_bad_weights_are_rejected(base, catalog):
    """Behaviour, not a formula: unknown or negative weights raise a clear ValueError."""
    with pytest.raises(ValueError, match="unknown criterion 'speed'"):
        select.rank(base, catalog, weights={"speed": 1})
    with pytest.raises(ValueError, match="time must be a weight >= 0"):
        select.rank(base, catalog, weights={"time": -1})


def test_grid_agrees_with_rank_at_the_scenario_point(catalog):
    """Internal consistency: the vectorised grid and rank() pick the same winner at the scenario point."""
    # the grid counts model state only (no activations: a custom size has no shape), so its
    # headroom differs; where rank()'s lead is clear the winner must agree, where it is a
    # couple of points the grid's winner must still be one of rank()'s top three
    for deployment, params, tokens in (("cloud", 7e9, 2e10), ("on-prem", 7e9, 2e10)):
        s = Scenario(model="custom", params=params, tokens=tokens, deployment=deployment)
        ranked = select.rank(s, catalog)
        short = ranked[ranked["status"] == "shortlisted"]
        grid = select.rank_grid(s, [params], [tokens], catalog)
        lead = short["score"].iloc[0] - short["score"].iloc[1]
        if lead >= 3:
            assert grid["winner"][0, 0] == short["name"].iloc[0], (deployment, params, tokens)
        else:
            assert grid["winner"][0, 0] in set(short["name"].head(3)), (deployment, params, tokens, lead)
    big = select.rank_grid(s, np.logspace(8, 12, 20), np.logspace(9, 13, 20), catalog)
    assert big["winner"].shape == (20, 20)
    assert (big["winner"] == "").any() and (big["winner"] != "").any()


def test_sensitivity_finds_the_price_at_which_the_winner_changes(base, catalog):
    """Internal consistency of one-at-a-time sensitivity (Saltelli et al. 2008, ch. 1): the reported switch value is where the scan changes winner."""
    summary, scan = select.sensitivity(base, catalog)
    assert set(summary["assumption"]) == {"winner_efficiency", "utilization", "winner_price", "hours_per_day",
                                          "horizon_months", "electricity_usd_per_kwh"}
    # never blank: every assumption says its flip point (the lead goes negative somewhere in
    # its scan) or the lead that holds (the smallest lead over the scan, > 0)
    assert summary["margin_min"].notna().all(), summary.to_string()
    for _, row in summary.iterrows():
        switches = row["switches_at"] == row["switches_at"]
        assert switches == (row["margin_min"] < 0), row.to_dict()
        assert switches == bool(row["new_winner"]), row.to_dict()
    price = summary.set_index("assumption").loc["winner_price"]
    winner = summary["winner_at_base"].iloc[0]
    # the winner's price scanned up to 8x must dethrone it in this scenario (the runner-up is within
    # a few points), and the reported switch is the first scanned price whose winner differs
    assert price["switches_at"] == price["switches_at"], "no price switch found: " + price.to_string()
    prices = scan[scan["assumption"] == "winner_price"].sort_values("value")
    at = prices[prices["value"] == price["switches_at"]]
    assert at["winner"].iloc[0] != winner and at["winner"].iloc[0] == price["new_winner"]
    assert price["switches_at"] > 1
    assert (prices.loc[prices["value"] < price["switches_at"], "winner"] == winner).all(), prices.to_string()
    assert len(scan) == sum(len(v) for v in select.SENSITIVITY_RANGES.values())
    assert summary.set_index("assumption").loc["utilization", "base"] < 1, "base MFU is the projected one"


def test_the_efficiency_criterion_is_the_workloads_work_per_joule_not_peak_per_watt(catalog):
    """The efficiency criterion is the scenario's projected work per joule at the maximum power
    (MLPerf Power's energy efficiency, Tschand et al. 2024, arXiv:2410.12032): its figure is the
    device's projected work per device-hour over 3,600 s × TDP, and it orders the shortlist as the
    efficiency scores do. Serving Llama-3.1 70B (memory-bound decode), the Instinct MI300X has the
    higher peak per watt than the H200 SXM, but the H200 gets more tokens out per joule: the score
    must follow the tokens."""
    s = Scenario.load("examples/serve-70b-at-latency-target.yaml")
    ranked = select.rank(s, catalog)
    short = ranked[ranked["status"] == "shortlisted"].set_index("name")
    expected = short["tokens_per_device_hour"] / (3600.0 * catalog.set_index("name").loc[short.index, "tdp_w"])
    np.testing.assert_allclose(short["work_per_joule"], expected, rtol=1e-12,
                               err_msg="the decision's work per joule is not its projected rate over TDP")
    mi300x, h200 = short.loc["Instinct MI300X"], short.loc["H200 SXM"]
    assert mi300x["flops_per_w"] > h200["flops_per_w"], "premise: MI300X has the higher peak per watt"
    assert h200["work_per_joule"] > mi300x["work_per_joule"], "premise: H200 gets more tokens per joule"
    assert h200["score_efficiency"] > mi300x["score_efficiency"], (
        "the efficiency criterion rewarded peak FLOP/s per watt instead of the tokens per joule served")
    order = short.sort_values("work_per_joule").index
    assert list(short.loc[order, "score_efficiency"]) == sorted(short["score_efficiency"]), (
        "efficiency scores do not follow work per joule")


def test_work_per_joule_is_work_per_hour_over_energy_per_hour():
    """Energy per hour at P watts is 3,600·P joules: 3.6 million tokens an hour at 1,000 W is one token per
    joule (MLPerf Power: throughput / power); unknown power stays unknown; a zero power is refused."""
    from accelkit import energy

    assert energy.work_per_joule(3.6e6, 1000.0) == pytest.approx(1.0)
    out = energy.work_per_joule(np.array([3.6e6, 7.2e6]), np.array([np.nan, 500.0]))
    assert np.isnan(out[0]) and out[1] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="watts"):
        energy.work_per_joule(3.6e6, 0.0)
