"""The Scenario: checked fields, JSON/YAML round trips, user files never overwritten."""

from __future__ import annotations

import json

import pytest

from accelkit.scenario import Scenario, ScenarioError


def test_defaults_are_valid_and_round_trip_json(tmp_path):
    s = Scenario(model="Llama-2 70B", workload="inference", deployment="edge", devices=["H100 SXM"])
    path = s.save(tmp_path / "s.json")
    back = Scenario.load(path)
    assert back == s


def test_yaml_round_trip(tmp_path):
    s = Scenario(frameworks=["pytorch", "onnxruntime"], weights={"cost": 2, "time": 1})
    back = Scenario.load(s.save(tmp_path / "s.yaml"))
    assert back.frameworks == ["pytorch", "onnxruntime"] and back.weights == {"cost": 2.0, "time": 1.0}


def test_bad_value_names_the_field():
    with pytest.raises(ScenarioError, match="scenario field 'batch_size': expected a number >= 1, got 0"):
        Scenario(batch_size=0)
    with pytest.raises(ScenarioError, match="'utilization'"):
        Scenario(utilization=1.5)
    with pytest.raises(ScenarioError, match="'deployment': expected one of cloud, on-prem, edge, got 'edeg'.*'edge'"):
        Scenario(deployment="edeg")


def test_setting_a_field_is_checked():
    s = Scenario()
    with pytest.raises(ScenarioError, match="'precision'"):
        s.precision = "fp12"
    with pytest.raises(ScenarioError, match="no such field .*'batch_size'"):
        s.batchsize = 3


def test_bad_file_names_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("model: Llama-2 7B\nseq_len: long\n")
    with pytest.raises(ScenarioError, match="'seq_len': expected a number, got 'long'"):
        Scenario.load(path)
    path.write_text("modle: Llama-2 7B\n")
    with pytest.raises(ScenarioError, match="bad.yaml: no such field.*'model'"):
        Scenario.load(path)
    path.write_text("model: [unclosed\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        Scenario.load(path)


def test_user_file_is_never_overwritten(tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"model": "BERT-base"}))
    with pytest.raises(FileExistsError, match="not written by accelkit"):
        Scenario().save(mine)
    assert json.loads(mine.read_text()) == {"model": "BERT-base"}
    # a file accelkit wrote may be updated
    ours = Scenario().save(tmp_path / "ours.json")
    Scenario(batch_size=7).save(ours)
    assert Scenario.load(ours).batch_size == 7


def test_query_string_presets_a_scenario():
    s = Scenario.from_query_string("?model=Llama-2+70B&batch_size=8&devices=H100 SXM,Instinct MI300X&workload=inference")
    assert s.model == "Llama-2 70B" and s.batch_size == 8 and s.workload == "inference"
    assert s.devices == ["H100 SXM", "Instinct MI300X"]
    assert Scenario.from_query_string(s.to_query_string()) == s
    with pytest.raises(ScenarioError, match="'batch_size'"):
        Scenario.from_query_string("batch_size=-4")


# --- the app's copy-link: every field round-trips through the URL query (issue 27 point 5) ----------------

def _every_field_changed():
    """A scenario where every field differs from its default (None <-> value, lists, mappings, booleans)."""
    s = Scenario(
        name="Q4 serving & tests, team #2", workload="fine-tuning", model="custom", params=3.2e9, n_layers=26,
        d_model=3072, tokens=1.5e9, batch_size=64, seq_len=4096, output_tokens=300, precision="fp8",
        utilization=0.35, time_target_days=2.5, latency_target_ms=42.0, ttft_target_ms=800.0, requests_per_s=12.5,
        budget_usd=250000.0, power_envelope_w=350.0, deployment="on-prem", segments=["datacenter", "workstation"],
        frameworks=[], stack="vllm", custom_cuda_kernels=True, search_configurations=False, allow_lower_precision=True,
        exclude_unknown=True, devices=["H100 SXM", "Instinct MI300X"], vendors=["NVIDIA", "AMD"],
        exclude_vendors=["Intel"], market="china", cloud_pricing="committed-3y", providers=["aws", "a, comma"],
        target_headroom=0.5, n_devices=16, zero_stage=3, finetune_method="qlora", lora_rank=64,
        horizon_months=48, hours_per_day=12.0, electricity_usd_per_kwh=0.11, pue=1.2, streams=40,
        frames_per_s=15.0, weights={"time": 3, "cost": 0, "ecosystem.serving": 7},
    )
    default = Scenario()
    same = [f for f in Scenario.field_names() if getattr(s, f) == getattr(default, f)]
    assert not same, f"the test scenario should change every field; unchanged: {same}"
    return s


def test_every_field_round_trips_through_the_query_string():
    s = _every_field_changed()
    query = s.to_query_string(keys="all")
    assert set(k.split("=")[0] for k in query.split("&")) == set(Scenario.field_names())
    back = Scenario.from_query_string(query)
    assert back == s, [f for f in Scenario.field_names() if getattr(back, f) != getattr(s, f)]
    # and back to the defaults: None, empty lists and mappings are written empty and read back empty
    default = Scenario()
    assert Scenario.from_query_string(default.to_query_string(keys="all"), base=s) == default
    # the short form (fields that differ from the defaults) round-trips too
    assert Scenario.from_query_string(s.to_query_string()) == s


def test_an_empty_value_empties_only_fields_that_may_be_empty():
    s = Scenario.from_query_string("budget_usd=&devices=&frameworks=&weights=&batch_size=&workload=",
                                   base=Scenario(budget_usd=5.0, devices=["T4"], weights={"cost": 2}))
    assert s.budget_usd is None and s.devices == [] and s.frameworks == [] and s.weights == {}
    assert s.batch_size == Scenario().batch_size and s.workload == "training"  # ignored, as before
    with pytest.raises(ScenarioError, match="'devices'"):
        Scenario.from_query_string("devices=[bad json")


def test_observers_hear_of_changes_once_per_update_and_copies_carry_none():
    s = Scenario()
    heard = []
    s.observe(lambda scenario, names: heard.append((scenario, names)))
    s.batch_size = 32
    s.batch_size = 32  # the same value: no change, no call
    s.update(n_devices=2, seq_len=1024, pue=s.pue)
    twin = s.copy()
    twin.batch_size = 4
    Scenario.from_query_string("batch_size=8", base=s)
    assert heard == [(s, ["batch_size"]), (s, ["n_devices", "seq_len"])]
    with pytest.raises(ScenarioError):
        s.batch_size = -1
    assert len(heard) == 2 and s.batch_size == 32
    callback = heard[0]  # not an observer: unobserve is quiet
    s.unobserve(callback)


def test_an_observer_method_does_not_keep_its_object_alive_and_unobserve_stops_the_calls():
    import gc
    import weakref

    class Watcher:
        def __init__(self):
            self.heard = []

        def on_change(self, scenario, names):
            self.heard.append(names)

    s = Scenario()
    watcher = Watcher()
    s.observe(watcher.on_change)
    s.n_devices = 2
    assert watcher.heard == [["n_devices"]]
    s.unobserve(watcher.on_change)
    s.n_devices = 3
    assert watcher.heard == [["n_devices"]]
    s.observe(watcher.on_change)
    gone = weakref.ref(watcher)
    del watcher
    gc.collect()
    assert gone() is None, "the scenario kept its observer alive"
    s.n_devices = 4  # a dead observer is skipped
