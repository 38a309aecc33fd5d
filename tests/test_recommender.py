"""Recommenders (DLRM-v2): the structure, the layers, where the tables live, and one answer for
the decision, the command line and the validation (accelkit.projection.recommender)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from accelkit.models import find_model
from accelkit.projection import validation as V
from accelkit.projection.recommender import RECOMMENDER_BATCH, recommender
from accelkit.projection.recommender_layers import (dense_params, embedding_rows, forward_flops, lookups_per_sample,
                                                    recommender_layers, recommender_structure, table_elements)


@pytest.fixture(scope="module")
def dlrm():
    return recommender_structure("DLRM-v2")


def test_dlrm_v2_structure_is_mlperfs(dlrm):
    # MLPerf DLRM-v2 (mlcommons/training recommendation_v2 README): 26 tables, five of 40 M rows, 128 wide,
    # 214 lookups per user-item pair
    assert len(dlrm["table_rows"]) == len(dlrm["lookups_per_sample"]) == 26
    assert embedding_rows(dlrm) == 204_184_588 and lookups_per_sample(dlrm) == 214
    # the fp32 tables: 104.5 GB, the inference README's "~100GB" checkpoint
    assert table_elements(dlrm) * 4 / 1e9 == pytest.approx(104.54, abs=0.01)


def test_the_preset_row_agrees_with_its_structure(dlrm):
    row = find_model("DLRM-v2")
    assert row["kind"] == "recommender"
    assert row["params"] == table_elements(dlrm) + dense_params(dlrm), "models.csv params != tables + MLPs"
    assert row["forward_flop_per_sample"] == forward_flops(dlrm), "models.csv FLOP per sample != the layers' sum"


def test_cross_layers_carry_two_thirds_of_the_work(dlrm):
    layers = recommender_layers(dlrm).set_index("layer")
    # DCN-v2 low rank 512 on a (26 + 1) x 128 = 3456-wide input: 2 x 3456 x 512 multiply-adds per layer
    assert layers.loc["cross0_v", "flops"] == 2 * 3456 * 512
    share = layers.filter(like="cross", axis=0)["flops"].sum() / layers["flops"].sum()
    assert 0.6 < share < 0.7
    assert layers.loc["embedding_gather", "flops"] == 0 and layers.loc["embedding_gather", "act_in"] == 214 * 128


def test_the_tables_live_where_they_fit():
    r = recommender(["H100 SXM", "L4", "T4"]).set_index("name")
    assert r.loc["H100 SXM", "layout"] == "replicated" and r.loc["H100 SXM", "exchange_s"] == 0
    # 26.1 GB of int8 tables do not fit a 24 GB L4: the rest stays in host memory, over PCIe
    assert r.loc["L4", "layout"] == "host" and 0 < r.loc["L4", "table_share_on_device"] < 1
    assert r.loc["L4", "exchange_s"] > 0
    two = recommender(["T4"], n_devices=2).set_index("name")
    assert two.loc["T4", "layout"] == "sharded" and two.loc["T4", "memory_needed_bytes"] < 16e9


def test_fewer_rows_on_the_device_is_slower():
    most = recommender("L4")
    third = recommender("L4", table_share_on_device=0.3)
    assert third["samples_per_s"] < most["samples_per_s"]


def test_wider_tables_read_more_bytes():
    int8 = recommender("H100 SXM")
    fp16 = recommender("H100 SXM", embedding_precision="fp16")
    assert fp16["gather_s"] == pytest.approx(2 * int8["gather_s"])
    assert fp16["samples_per_s"] < int8["samples_per_s"]
    assert fp16["table_bytes"] == pytest.approx(2 * int8["table_bytes"])


def test_every_figure_has_a_range_and_sources():
    r = recommender("H200 SXM")
    assert r["samples_per_s_low"] < r["samples_per_s"] < r["samples_per_s_high"]
    assert r["batch_ms_low"] < r["batch_ms"] < r["batch_ms_high"]
    assert r["matmul_source"] and r["memory_source"] and r["stack"] == "tensorrt"


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="not a recommender preset"):
        recommender("H100 SXM", "ResNet-50")
    with pytest.raises(ValueError, match="batch_size"):
        recommender("H100 SXM", batch_size=0)
    with pytest.raises(ValueError, match="embedding_precision"):
        recommender("H100 SXM", embedding_precision="int3")
    with pytest.raises(ValueError, match="table_share_on_device"):
        recommender("L4", table_share_on_device=1.5)


def test_mlperf_dlrm_cases_are_within_a_quarter():
    results = V.validate()
    rec = results[results["category"] == "recommender_offline"]
    assert len(rec) >= 20 and rec["source"].nunique() >= 10
    error = V.geometric_mean_error(rec["ratio"])
    assert error < 0.25, f"DLRM-v2 offline throughput is {error:.0%} off MLPerf (expected under 25 %)"
    assert (rec["ratio"].between(0.67, 1.5)).all(), rec.loc[~rec["ratio"].between(0.67, 1.5), "case_id"].tolist()


def test_the_decision_and_the_command_line_give_the_engines_figure(capsys):
    from accelkit.cli import main
    from accelkit.projection.for_scenario import project_scenario
    from accelkit.scenario import Scenario

    s = Scenario(workload="inference", model="DLRM-v2", precision="int8", requests_per_s=2e7, latency_target_ms=60,
                 deployment="on-prem", n_devices=1)
    frame = project_scenario(s).set_index("name")
    engine = recommender("L40S", batch_size=RECOMMENDER_BATCH)
    assert frame.loc["L40S", "kind"] == "recommender" and frame.loc["L40S", "work_unit"] == "pairs"
    assert frame.loc["L40S", "work_per_device_hour"] == pytest.approx(engine["samples_per_s"] * 3600, rel=1e-9)
    assert main(["project", "recommender", "--device", "L40S", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["samples_per_s"] == pytest.approx(engine["samples_per_s"], rel=1e-9)
    assert math.isclose(printed["batch_ms"], engine["batch_ms"], rel_tol=1e-9)


def test_the_decision_sizes_a_recommender_by_pairs_per_second():
    from accelkit import select
    from accelkit.scenario import Scenario

    s = Scenario(workload="inference", model="DLRM-v2", precision="int8", requests_per_s=2e7, latency_target_ms=60,
                 deployment="on-prem", n_devices=8, devices=["H100 SXM", "L40S", "L4"])
    ranked = select.rank(s).set_index("name")
    per_device = recommender(["H100 SXM", "L40S"]).set_index("name")["samples_per_s"]
    for name in ("H100 SXM", "L40S"):
        needed = np.ceil(2e7 / per_device[name])
        assert ranked.loc[name, "devices_needed"] == needed, f"{name}: {ranked.loc[name, 'devices_needed']} != {needed}"
    assert isinstance(ranked, pd.DataFrame)


# --- training ---------------------------------------------------------------------------------------------------------

def test_training_splits_the_tables_and_counts_their_exchange():
    from accelkit.projection.recommender_training import recommender_training

    one_node = recommender_training("H100 SXM", n_devices=8)
    # 104.5 GB of fp32 tables + an fp32 Adagrad accumulator per element, split over 8, + 16 M MLP parameters × 16 B
    assert one_node["memory_per_device_bytes"] == pytest.approx(2 * 104.54e9 / 8 + 16_044_545 * 16, rel=1e-3)
    rowwise = recommender_training("H100 SXM", n_devices=8, optimizer="rowwise-adagrad")
    assert rowwise["memory_per_device_bytes"] == pytest.approx((104.54e9 + 204_184_588 * 4) / 8 + 16_044_545 * 16,
                                                               rel=1e-3)
    assert rowwise["embedding_s"] < one_node["embedding_s"]
    assert one_node["exchange_s"] > 0 and one_node["embedding_s"] > 0 and one_node["mlp_s"] > 0
    two_nodes = recommender_training("H100 SXM", n_devices=16)
    # across nodes half the pooled vectors cross the network port, slower than NVLink
    assert two_nodes["exchange_s"] > one_node["exchange_s"]
    assert one_node["samples_per_s_low"] < one_node["samples_per_s"] < one_node["samples_per_s_high"]


def test_training_on_too_few_devices_says_how_many_hold_the_tables():
    from accelkit.projection.recommender_training import recommender_training

    with pytest.raises(ValueError, match="need 3 devices"):
        recommender_training("A100 80GB SXM", n_devices=2)
    assert recommender_training("A100 80GB SXM", n_devices=3)["feasible"]
    with pytest.raises(ValueError, match="optimizer"):
        recommender_training("A100 80GB SXM", optimizer="adam")


def test_the_decision_trains_a_recommender_per_sample_not_per_token():
    from accelkit import sizing
    from accelkit.projection.recommender_layers import forward_flops
    from accelkit.scenario import Scenario

    s = Scenario.load("examples/recsys-8xa100-overbought.yaml")
    need = sizing.compute_need(s)
    assert need["total_flops"] == pytest.approx(3 * forward_flops(recommender_structure("DLRM-v2")) * 8.3e8)
    mem = sizing.memory_need(s, n_devices=2)
    assert mem["total"] == pytest.approx(2 * 104.54e9 / 2 + 16_044_545 * 16, rel=1e-3)


def test_mlperf_training_cases_single_node_within_a_tenth():
    results = V.validate()
    train = results[results["category"] == "recommender_training"]
    assert len(train) >= 12 and train["source"].nunique() >= 6
    one_node = train[train["n_devices"] == 8]
    error = V.geometric_mean_error(one_node["ratio"])
    assert error < 0.10, f"DLRM-v2 training on one node is {error:.0%} off MLPerf (expected under 10 %)"
    assert train["ratio"].between(0.67, 1.5).all(), train.loc[~train["ratio"].between(0.67, 1.5), "case_id"].tolist()
