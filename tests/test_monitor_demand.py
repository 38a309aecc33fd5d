"""The measured demand feeds chapter 01, the decision and reports.

The example is the shipped synthetic 8 × A100 log built on the source text's
anecdote (eight A100s never above 30 %): its work is 2.4 A100s, so a scenario sized
for that pace needs ceil(2.4) = 3 A100s for the target -- the right-size table's
figure, reached through the scenario instead.
"""

from __future__ import annotations

import json

import pytest

from accelkit import monitor as M
from accelkit.cli import main
from accelkit.monitor import summary as S
from accelkit.monitor.demand import load_measured_demand, scenario_for_measured
from accelkit.monitor.rightsize import right_size
from accelkit.monitor.samples import MonitorError
from accelkit.scenario import Scenario
from accelkit.sizing import per_device

A100 = "A100 80GB SXM"


@pytest.fixture(scope="module")
def example_demand():
    return load_measured_demand("example")


def test_the_example_demand_is_2_4_a100s_of_work(example_demand):
    assert example_demand["device"] == A100
    assert example_demand["effective_devices"] == pytest.approx(2.4, abs=0.01)


def test_a_training_scenario_sized_for_the_measured_pace_needs_3_a100s_for_the_target(example_demand):
    scenario = Scenario(workload="training", model="Llama-2 7B", tokens=2e10, time_target_days=30)
    changed, note = scenario_for_measured(scenario, example_demand)
    assert scenario.time_target_days == 30, "the person's scenario must not be modified in place"
    assert changed.tokens == scenario.tokens
    row = per_device(changed, devices=[A100], catalog=_catalog()).iloc[0]
    assert row["devices_for_target"] == 3, (
        f"the pace of 2.4 A100s should need 3 whole A100s, got {row['devices_for_target']}")
    assert "did the work of 2.40" in note and "days, now the time target" in note, note


def test_a_serving_scenario_takes_the_measured_pace_as_its_request_rate(example_demand):
    scenario = Scenario(workload="inference", model="Llama-2 7B", output_tokens=200)
    changed, note = scenario_for_measured(scenario, example_demand)
    one = per_device(scenario, devices=[A100], catalog=_catalog()).iloc[0]
    tokens_per_s = 2.4 * one["work_per_device_hour"] / 3600
    assert changed.requests_per_s * 200 == pytest.approx(tokens_per_s, rel=0.01)
    assert "requests/s, now the serving target" in note


def test_a_monitor_json_file_gives_the_same_demand_as_the_log(tmp_path, example_demand, capsys):
    target = tmp_path / "summary.json"
    assert main(["monitor", "--example", "--json", str(target)]) == 0
    capsys.readouterr()
    demand = load_measured_demand(target)
    assert demand["device"] == A100
    assert demand["effective_devices"] == pytest.approx(example_demand["effective_devices"], rel=1e-9)


@pytest.mark.parametrize("content, words", [
    ("not json", "is not readable JSON"),
    (json.dumps({"format": "something else"}), "field 'format'"),
    (json.dumps({"format": "accelkit-monitor-summary"}), "no field 'demand'"),
    (json.dumps({"format": "accelkit-monitor-summary", "demand": {"device": A100}}), "demand.effective_devices"),
    (json.dumps({"format": "accelkit-monitor-summary", "demand": {"device": A100, "effective_devices": -1}}),
     "expected a number > 0"),
])
def test_a_bad_measured_demand_file_names_the_field(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(MonitorError, match=words):
        load_measured_demand(path)


def test_a_missing_measured_demand_file_says_what_is_expected(tmp_path):
    with pytest.raises(MonitorError, match="is not a file; expected 'example'"):
        load_measured_demand(tmp_path / "nothing.json")


def test_an_unknown_measured_device_suggests_close_matches(example_demand):
    with pytest.raises(MonitorError, match="field 'device'"):
        scenario_for_measured(Scenario(), {**example_demand, "device": "A100 80GB SXMM"})


def test_replicated_memory_counts_one_copy_not_the_sum():
    """Data parallel: each GPU holds the model, so a candidate needs the largest GPU's peak per replica."""
    summary = S.summarize(M.example_log())
    sharded = right_size(summary, candidates=["L4"]).set_index("name").loc["L4"]
    replicated = right_size(summary, candidates=["L4"], memory_layout="replicated").set_index("name").loc["L4"]
    total, largest = summary.overall["memory_used_total_bytes"], summary.overall["memory_used_max_bytes"]
    assert largest < total
    assert sharded["devices_for_memory"] == pytest.approx(total / sharded["memory_bytes"], rel=1e-9)
    assert replicated["devices_for_memory"] == pytest.approx(largest / replicated["memory_bytes"], rel=1e-9)
    per_replica = -(-largest // replicated["memory_bytes"])
    assert replicated["devices"] % per_replica == 0, "whole replicas, each spanning enough L4s to hold one copy"
    assert replicated["devices"] >= replicated["devices_for_work"]


def test_an_unknown_memory_layout_is_refused():
    with pytest.raises(MonitorError, match="memory_layout must be one of sharded, replicated"):
        right_size(S.summarize(M.example_log()), memory_layout="mirrored")


def test_chapter_01_button_sets_the_time_target_to_the_measured_pace():
    from accelkit.ui.demand import DemandPanel

    panel = DemandPanel(Scenario(workload="training", model="Llama-2 7B", tokens=2e10, time_target_days=30))
    before = panel.controls["time_target_days"].value
    panel.measured_controls["source"].value = "example"
    panel.measured_controls["button"].click()
    assert panel.error is None, panel.error
    assert panel.controls["time_target_days"].value != before, "the time-target control should show the new target"
    assert panel.scenario.time_target_days == pytest.approx(panel.controls["time_target_days"].value)
    assert any(line.startswith("Demand from your cluster") for line in panel.result["summary"])
    panel.set(time_target_days=10)
    assert not any(line.startswith("Demand from your cluster") for line in panel.result["summary"]), \
        "once the person changes the target, the measured note must go"


def test_chapter_01_shows_a_bad_measured_file_as_a_message(tmp_path):
    from accelkit.ui.demand import DemandPanel

    panel = DemandPanel(Scenario())
    panel.use_measured(str(tmp_path / "none.json"))
    assert "is not a file" in panel.message.value


def _catalog():
    from accelkit import load_catalog

    return load_catalog()


def test_the_app_queries_only_the_prometheus_its_operator_allowed(monkeypatch):
    """In the shared app a visitor must not make the server send requests to an address of their choosing."""
    from accelkit.appserver import PROMETHEUS_ENV
    from accelkit.ui.app import allowed_prometheus
    from accelkit.ui.monitor import MonitorPanel

    monkeypatch.setenv(PROMETHEUS_ENV, "http://prom:9090/, http://other:9090")
    assert allowed_prometheus() == ("http://prom:9090", "http://other:9090")
    panel = MonitorPanel(prometheus_allowed=allowed_prometheus())
    assert panel.source_controls["prometheus_url"].value == "http://prom:9090", "the first allowed URL is offered"
    panel.source_controls["prometheus_url"].value = "http://169.254.169.254/latest"
    panel.source_controls["source"].value = "Prometheus"
    panel.load()
    assert "only the Prometheus its operator allowed: http://prom:9090, http://other:9090" in panel.message.value
    closed = MonitorPanel(prometheus_allowed=())
    closed.source_controls["prometheus_url"].value = "http://127.0.0.1:9090"
    closed.source_controls["source"].value = "Prometheus"
    closed.load()
    assert "accelkit app --prometheus URL" in closed.message.value
