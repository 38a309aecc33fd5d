"""The decision searches each device's configuration, scores unknowns as unknown, and shows a way forward.

Scenarios of our own design, each checking one promise of the decision engine:
serving a 70B model on-prem ranks datacenter parts with their configuration;
training a 7B model shards state where it must (ZeRO-3 / FSDP, Rajbhandari et al. 2020);
a missing price drops the cost criterion instead of scoring it worst; an empty edge
shortlist comes with the change that fills it.
"""

import numpy as np
import pandas as pd
import pytest

from accelkit import configsearch, projection, select
from accelkit.catalog import load_catalog
from accelkit.scenario import Scenario


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _short(ranked):
    return ranked[ranked["status"] == "shortlisted"]


def test_serving_70b_on_prem_ranks_datacenter_parts_each_with_its_configuration(catalog):
    s = Scenario(workload="inference", model="Llama-3.1 70B", deployment="on-prem", latency_target_ms=50,
                 ttft_target_ms=1000, requests_per_s=2.0)
    ranked = select.rank(s, catalog)
    top = _short(ranked).head(5)
    assert len(top) == 5
    assert (top["segment"] == "datacenter").all(), list(zip(top["name"], top["segment"]))
    for column in configsearch.CONFIG_COLUMNS:
        if column == "zero_stage":  # ZeRO shards training state (Rajbhandari et al. 2020); serving has no stage
            assert top[column].isna().all(), list(zip(top["name"], top[column]))
        else:
            assert top[column].notna().all(), column
    for _, row in top.iterrows():
        assert "tensor parallel" in row["configuration"] or row["tensor_parallel"] == 1
        assert f"batch {row['batch_size']:.0f}" in row["configuration"]
        # the configuration meets both targets at the engine's own projection
        r = projection.inference(row["name"], "Llama-3.1 70B", n_devices=int(row["tensor_parallel"]),
                                 tensor_parallel=int(row["tensor_parallel"]), batch_size=int(row["batch_size"]),
                                 input_tokens=s.seq_len, output_tokens=s.output_tokens)
        assert r["tpot_s"] * 1e3 <= s.latency_target_ms + 1e-9, row["name"]
        assert r["ttft_s"] * 1e3 <= s.ttft_target_ms + 1e-9, row["name"]
    assert top["reason"].str.contains("runs as").all()


def test_a_tighter_latency_target_picks_a_smaller_batch(catalog):
    loose = Scenario(workload="inference", model="Llama-3.1 8B", deployment="on-prem", latency_target_ms=100)
    tight = loose.copy().update(latency_target_ms=12)
    a = select.rank(loose, catalog).set_index("name").loc["H100 SXM"]
    b = select.rank(tight, catalog).set_index("name").loc["H100 SXM"]
    assert b["batch_size"] < a["batch_size"], (a["batch_size"], b["batch_size"])
    assert b["latency_ms"] <= 12 < a["latency_ms"]


def test_training_7b_on_eight_tpu_v6e_fits_with_sharded_state(catalog):
    # TPUs are rented from Google Cloud only: the cloud scenario
    s = Scenario(model="Llama-2 7B", tokens=2e10, deployment="cloud", n_devices=8, zero_stage=1,
                 frameworks=["jax"])
    row = select.rank(s, catalog).set_index("name").loc["TPU v6e"]
    assert row["status"] == "shortlisted", row["excluded_because"]
    assert row["zero_stage"] == 3 and "ZeRO-3" in row["configuration"]
    # taken as given, ZeRO-1 does not hold the model on 8 chips of 32 GB
    given = select.rank(s.copy().update(search_configurations=False), catalog).set_index("name").loc["TPU v6e"]
    assert given["status"] == "excluded" and "devices to hold the model" in given["excluded_because"]


def test_the_search_keeps_zero_1_where_it_fits(catalog):
    s = Scenario(model="Llama-2 7B", tokens=2e10, n_devices=8)
    row = select.rank(s, catalog).set_index("name").loc["H100 SXM"]
    assert row["zero_stage"] == 1


def test_lower_precisions_only_when_allowed(catalog):
    s = Scenario(workload="inference", model="Llama-3.1 70B", deployment="on-prem", latency_target_ms=50)
    # fp16 stands in for bf16 (same quality level) only where a device lacks bf16
    assert configsearch.candidate_precisions(s) == ["bf16", "fp16"]
    allowed = s.copy().update(allow_lower_precision=True)
    assert configsearch.candidate_precisions(allowed) == ["bf16", "fp16", "fp8", "int8", "int4"]
    ranked = select.rank(allowed, catalog).set_index("name")
    h100 = ranked.loc["H100 SXM"]
    assert h100["precision"] in ("fp8", "int8", "int4") and "check quality" in h100["configuration"]
    assert configsearch.candidate_precisions(Scenario(precision="bf16", allow_lower_precision=True)) == ["bf16", "fp16",
                                                                                                         "fp8"]


def test_removing_a_price_never_makes_the_cost_score_zero(catalog):
    s = Scenario(workload="inference", model="Llama-3.1 8B", deployment="on-prem", latency_target_ms=50)
    priced = catalog.copy()
    priced.loc[priced["name"] == "GeForce RTX 4090", "price_usd"] = 1599.0
    ranked = select.rank(s, priced).set_index("name")
    candidates = ranked[(ranked["status"] == "shortlisted") & ranked["cost_per_million_tokens"].notna()].index
    assert len(candidates) >= 2
    device = candidates[0]
    unpriced = priced.copy()
    for col in ("price_usd", "price_low_usd", "price_high_usd"):
        if col in unpriced:
            unpriced.loc[unpriced["name"] == device, col] = np.nan
    row = select.rank(s, unpriced).set_index("name").loc[device]
    # right-sizing ranks on the cost of meeting the demand: an unknown price cannot be placed,
    # so the device is shown apart, never shortlisted (and never given the worst cost)
    assert row["status"] == "cannot verify" and "price unknown" in row["unknown_figure"], row["reason"]
    assert np.isnan(row["score"]) and np.isnan(row["score_cost"])
    # with cost not weighted it is ranked on the rest, its price still unknown (never the worst)
    free = select.rank(s, unpriced, weights={"cost": 0}).set_index("name").loc[device]
    assert free["status"] == "shortlisted" and np.isnan(free["cost_per_million_tokens"])
    assert free["criteria_known"] == free["criteria_weighted"]
    # the switch excludes such devices instead
    strict = select.rank(s.copy().update(exclude_unknown=True), unpriced).set_index("name").loc[device]
    assert strict["status"] == "excluded" and "price unknown" in strict["excluded_because"]


def test_weighted_score_renormalises_over_known_criteria():
    score, known = select.weighted_score({"time": np.array([1.0, 1.0]), "cost": np.array([0.0, np.nan])},
                                         {"time": 1.0, "cost": 1.0})
    assert score.tolist() == [50.0, 100.0] and known.tolist() == [2, 1]


def test_an_empty_edge_shortlist_comes_with_the_change_that_fills_it(catalog):
    s = Scenario(workload="inference", model="ResNet-50", deployment="edge", power_envelope_w=30, precision="bf16",
                 streams=10)
    assert _short(select.rank(s, catalog)).empty
    forward = select.nearest_feasible(s, catalog)
    assert not forward.empty
    first = forward.iloc[0]
    trial = s.copy()
    setattr(trial, first["field"], first["value"])
    after = _short(select.rank(trial, catalog))
    assert set(first["admits"]) <= set(after["name"]) and len(after) == first["n_shortlisted"]
    assert forward["size"].is_monotonic_increasing


def test_sensitivity_is_never_blank_and_says_the_lead(catalog):
    s = Scenario.load("examples/serve-70b-at-latency-target.yaml")
    summary, _ = select.sensitivity(s, catalog)
    assert len(summary) >= 4
    assert summary["runner_up"].iloc[0]
    holds = summary[summary["switches_at"].isna()]
    assert holds["margin_min"].notna().all(), "an assumption that flips nothing must say the smallest lead"


def test_rank_stability_counts_first_places_over_the_ranges(catalog):
    s = Scenario(model="Llama-2 7B", tokens=2e10, deployment="cloud")
    stable = select.rank_stability(s, catalog, draws=300)
    assert stable["first_share"].sum() == pytest.approx(1.0)
    assert stable["first_share"].is_monotonic_decreasing
    # the point ranking's winner is among the devices that come first in some draws (a close race
    # can favour another in most draws: that is what the table is for)
    winner = _short(select.rank(s, catalog)).iloc[0]["name"]
    assert stable.set_index("name").loc[winner, "first_share"] > 0.1, stable


def test_cost_carries_the_price_range(catalog):
    s = Scenario(model="Llama-2 7B", tokens=2e10, deployment="cloud")
    short = _short(select.rank(s, catalog))
    assert (short["cost_per_million_tokens_low"] <= short["cost_per_million_tokens"]).all()
    assert (short["cost_per_million_tokens"] <= short["cost_per_million_tokens_high"]).all()


def test_a_purchase_price_file_reports_a_bad_cell_by_line_and_column(tmp_path):
    from accelkit.catalog import CatalogError, load_purchase_prices

    path = tmp_path / "prices.csv"
    pd.DataFrame([{"device": "H100 SXM", "price_usd": "lots", "price_kind": "rumour", "source_url": "x"}]).to_csv(
        path, index=False)
    with pytest.raises(CatalogError) as err:
        load_purchase_prices(path)
    text = str(err.value)
    assert "line 2, column price_usd" in text and "line 2, column price_kind" in text


def test_purchase_risks_are_sourced_and_follow_the_deployment(catalog):
    from accelkit.device_facts import load_facts, purchase_risks

    facts = load_facts()
    assert (facts["source_url"].str.startswith("http")).all() and (facts["quote"].str.len() > 20).all()
    names = ["GeForce RTX 4090", "H100 SXM"]
    cloud = purchase_risks(names, "cloud", [True, True])
    assert "does not allow datacenter deployment" in cloud.loc[0, "purchase_risks"]
    assert "no GPU peer-to-peer" in cloud.loc[0, "purchase_risks"]
    assert cloud.loc[1, "purchase_risks"] == ""
    # one card at the edge: neither the datacenter clause nor the links apply
    edge = purchase_risks(names, "edge", [False, False])
    assert edge.loc[0, "purchase_risks"] == ""
    s = Scenario(workload="inference", model="Llama-3.1 8B", deployment="on-prem", latency_target_ms=50)
    row = select.rank(s, catalog).set_index("name").loc["GeForce RTX 5090"]
    assert "risks: the GeForce driver licence" in row["reason"]


def test_a_bad_fact_row_is_reported_by_line_and_column(tmp_path):
    from accelkit.catalog import CatalogError
    from accelkit.device_facts import load_facts

    path = tmp_path / "facts.csv"
    pd.DataFrame([{"device": "T4", "fact": "haunted", "severity": "risk", "quote": "", "source_url": "x"}]).to_csv(
        path, index=False)
    with pytest.raises(CatalogError, match="line 2, column fact"):
        load_facts(path)


# --- the training layout search (tensor, pipeline, ZeRO, micro-batch, recomputation) ---------

def test_the_zero_paper_worked_example_holds_for_the_layout_memory():
    # Rajbhandari et al. 2020, figure 1: 7.5B parameters over 64 data-parallel ranks hold 120 GB
    # (stage 0), 31.4 GB (stage 1), 16.6 GB (stage 2) and 1.9 GB (stage 3) of model state each
    shape = projection.resolve_model({"name": "7.5B", "params": 7.5e9})
    got = [projection.training_memory_bytes(shape, 1, 1, 64, z, 1, 2048, "selective", 64) / 1e9 for z in range(4)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.875], rel=0.01)


def test_layouts_keep_tensor_parallel_in_a_node_and_zero_1_with_pipelines():
    layouts = projection.training_layouts(64, "Llama-2 70B", max_micro_batch=4)
    assert layouts["tensor_parallel"].max() == 8 and (64 % layouts["tensor_parallel"] == 0).all()
    assert (layouts["tensor_parallel"] * layouts["pipeline_parallel"] * layouts["data_parallel"] == 64).all()
    piped = layouts[layouts["pipeline_parallel"] > 1]
    assert not piped.empty and set(piped["zero_stage"]) == {0, 1}
    assert (layouts["zero_stage"].eq(0) == layouts["data_parallel"].eq(1)).all(), "ZeRO 0 only without data parallel"
    assert set(layouts["micro_batch_size"]) == {1, 2, 4} and set(layouts["recompute"]) == {"selective", "full"}
    # a model known only by its size gets data parallelism alone
    sized = projection.training_layouts(8, {"name": "x", "params": 1e9})
    assert set(sized["tensor_parallel"]) == {1} and set(sized["pipeline_parallel"]) == {1}


def test_the_search_keeps_the_fastest_layout_that_fits(catalog):
    """Brute force over every layout with projection.training agrees with the vectorised search."""
    device = catalog[catalog["name"] == "H100 SXM"]
    best = projection.training_search(device, "Llama-2 70B", tokens=1e11, n_devices=16, max_micro_batch=2).iloc[0]
    rates = []
    for lay in projection.training_layouts(16, "Llama-2 70B", max_micro_batch=2).itertuples():
        steps = projection.step_sequences(lay.micro_batch_size, lay.data_parallel, 2048)
        r = projection.training(None, "Llama-2 70B", tokens=1e11, n_devices=16, catalog=device,
                                tensor_parallel=lay.tensor_parallel, pipeline_parallel=lay.pipeline_parallel,
                                zero_stage=lay.zero_stage, micro_batch_size=lay.micro_batch_size,
                                recompute=lay.recompute, global_batch_tokens=steps * 2048).iloc[0]
        if r["feasible"]:
            rates.append(r["tokens_per_s"])
    assert rates and best["tokens_per_s"] == pytest.approx(max(rates))
    assert best["memory_per_device_bytes"] <= 80e9 * 0.9
    # 70B does not fit 16 x 80 GB without sharding the weights: tensor parallel or ZeRO-3
    assert best["tensor_parallel"] > 1 or best["zero_stage"] == 3


def test_training_70b_on_sixteen_h100_is_shortlisted_with_its_layout_in_words(catalog):
    s = Scenario(model="Llama-2 70B", tokens=1e11, n_devices=16, time_target_days=365, deployment="on-prem")
    ranked = select.rank(s, catalog).set_index("name")
    row = ranked.loc["H100 SXM"]
    assert row["status"] == "shortlisted", row["excluded_because"]
    words = row["configuration"]
    assert ("tensor parallel" in words) == (row["tensor_parallel"] > 1), words
    assert f"ZeRO-{row['zero_stage']:.0f}" in words and "16 devices" in words
    # as given (ZeRO-1, no model parallelism) the model does not fit these 16 devices
    given = select.rank(s.copy().update(search_configurations=False), catalog).set_index("name").loc["H100 SXM"]
    assert given["status"] == "excluded" and "does not fit" in given["excluded_because"]


def test_a_model_no_layout_holds_says_how_many_devices_it_needs(catalog):
    # Llama-2 70B's 1.1 TB of mixed-precision Adam state cannot sit on 8 x 80 GB, however it is split
    s = Scenario(model="Llama-2 70B", tokens=1e11, n_devices=8, time_target_days=365, deployment="on-prem")
    row = select.rank(s, catalog).set_index("name").loc["H100 SXM"]
    assert row["status"] == "excluded"
    assert "devices to hold the model even with ZeRO-3" in row["excluded_because"], row["excluded_because"]
    needed = int(row["excluded_because"].split("needs ")[1].split(" ")[0])
    assert needed > 8
    # and with that many devices it is shortlisted
    more = select.rank(s.copy().update(n_devices=16), catalog).set_index("name").loc["H100 SXM"]
    assert more["status"] == "shortlisted"


def test_the_precision_pick_takes_each_row_from_the_better_frame_and_keeps_each_columns_type():
    """configsearch._pick (a row-by-row choice between the figures at two precisions) assembles its frame
    with numpy where both frames give a column one type: the rows, values and types must be what pandas'
    own where gives, strings, objects, booleans and an int / float pair included."""
    a = pd.DataFrame({"days_on_n": [1.0, 5.0, 3.0], "feasible": [True, True, False], "peak_flops": [1.0, 1.0, 1.0],
                      "name": pd.array(["a0", "a1", "a2"], dtype="str"), "why": ["", {"k": 1}, None],
                      "n": np.array([8, 8, 8], dtype="int64"), "x": np.array([1, 2, 3], dtype="int64")})
    b = pd.DataFrame({"days_on_n": [2.0, 1.0, 1.0], "feasible": [True, True, True], "peak_flops": [1.0, 1.0, 1.0],
                      "name": pd.array(["b0", "b1", "b2"], dtype="str"), "why": ["b", "b", "b"],
                      "n": np.array([4.0, 4.0, 2.5]), "x": np.array([10, 20, 30], dtype="int64")})
    out = configsearch._pick([a, b], "days_on_n", lower_is_better=True)
    take = pd.Series([False, True, True])  # row 0: a is faster; rows 1, 2: b (a cannot run row 2)
    for column in a.columns:
        expected = a[column].where(~take, b[column])
        pd.testing.assert_series_equal(out[column], expected, check_names=False,
                                       obj=f"column {column!r} of the pick")
    assert list(out["name"]) == ["a0", "b1", "b2"] and out["x"].dtype == np.int64
