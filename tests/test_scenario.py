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
