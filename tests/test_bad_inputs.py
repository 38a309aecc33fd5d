"""Bad input anywhere -> one clear line and exit 2, never a traceback (issue 26, finding 8),
plus a hypothesis fuzz of the scenario loader and the CLI's file readers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelkit.cli import main
from accelkit.scenario import Scenario, ScenarioError

ROOT = Path(__file__).resolve().parent.parent


def _one_line(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def _exit_code(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # argparse
        return exc.code


# --- the CLI ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["app", "--port", "99999"], "--port: expected a port number 1-65535, got 99999"),
    (["app", "--port", "0"], "--port"),
    (["app", "--port", "http"], "--port"),
    (["app", "--cull-idle", "30.5"], "--cull-idle: expected whole seconds"),
    (["app", "--cull-idle", "-5"], "--cull-idle"),
    (["app", "--cull-interval", "nan"], "--cull-interval"),
    (["app", "--cull-idle", "inf"], "--cull-idle"),
    (["nonsense"], "invalid choice"),
])
def test_bad_app_options_are_one_line_exit_2(capsys, monkeypatch, argv, words):
    def started(*args):
        raise AssertionError(f"the server was started: {args[1]}")

    monkeypatch.setattr("os.execve", started)  # a bad option accepted must not start Voila here
    assert _exit_code(argv) == 2
    assert words in _one_line(capsys)


def test_whole_seconds_are_accepted():
    from accelkit.cli import build_parser

    args = build_parser().parse_args(["app", "--cull-idle", "30", "--cull-interval", "5.0", "--port", "65535"])
    assert (args.cull_idle, args.cull_interval, args.port) == (30, 5, 65535)


def test_non_utf8_scenario_names_the_file(tmp_path, capsys):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("name: café\n".encode("latin-1"))
    assert main(["report", "--scenario", str(bad), "--quiet", "--out", str(tmp_path / "r")]) == 2
    assert "latin1.yaml is not UTF-8" in _one_line(capsys)


def test_yaml_aliases_are_refused_quickly_with_a_short_message(tmp_path, capsys):
    """A 321-byte 'billion laughs' once produced a 351 MB error line."""
    bomb = tmp_path / "bomb.yaml"
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines.append("name: *i")
    bomb.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(ScenarioError, match="anchors and aliases") as info:
        Scenario.load(bomb)
    assert time.monotonic() - started < 2 and len(str(info.value)) < 400
    assert main(["report", "--scenario", str(bomb), "--quiet", "--out", str(tmp_path / "r")]) == 2
    assert len(_one_line(capsys)) < 400


def test_a_huge_scenario_file_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("name: x\n" + "#" * (2 * 2**20) + "\n")
    with pytest.raises(ScenarioError, match="larger than 1024 KiB"):
        Scenario.load(big)


@pytest.mark.parametrize("value", ["x" * 100_000, list(range(100_000)), {"k" * 1000: 1}])
def test_errors_quote_a_short_prefix_of_a_bad_value(value):
    with pytest.raises(ScenarioError) as info:
        Scenario(batch_size=value)
    assert len(str(info.value)) < 400


def test_catalogue_with_a_cell_too_many_names_the_line(tmp_path, capsys):
    lines = (ROOT / "data" / "accelerators.csv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "mine.csv"
    bad.write_text("\n".join([lines[0], lines[1] + ",extra"]) + "\n", encoding="utf-8")
    assert main(["devices", "--catalog", str(bad)]) == 2
    err = _one_line(capsys)
    assert "mine.csv, line 2" in err and "cells, but the header has" in err, err


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xff\xfe\x00\x01"])
def test_empty_or_binary_catalogue_is_one_line(tmp_path, capsys, content):
    bad = tmp_path / "mine.csv"
    bad.write_bytes(content)
    assert main(["devices", "--catalog", str(bad)]) == 2
    assert "mine.csv" in _one_line(capsys)


def test_monitor_log_line_over_128_kib_is_one_line(tmp_path, capsys):
    log = tmp_path / "gpu.csv"
    log.write_text("timestamp, index, utilization.gpu [%]\n" + "9" * (200 * 1024) + "\n")
    assert main(["monitor", "--log", str(log)]) == 2
    assert "gpu.csv, line 2" in _one_line(capsys)


@pytest.mark.slow
def test_validate_csv_to_an_unwritable_path_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["validate", "--csv", str(blocker / "cases.csv")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err, err


# --- the app's link values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("query, field", [
    ('weights={"zzz":5}&tab=decision', "weights"),
    ("weights={bad&tab=decision", "weights"),
    ('weights={"time":0,"cost":0,"efficiency":0,"ecosystem":0,"headroom":0}&tab=decision', "weights"),
    ("batch_size=1e400&tab=decision", "batch_size"),
])
def test_bad_link_values_give_a_message_naming_the_field(query, field):
    with pytest.raises(ScenarioError) as info:
        Scenario.from_query_string(query.replace("&tab=decision", ""))
    assert info.value.field == field


@pytest.mark.slow
def test_bad_link_opens_the_decision_tab_with_a_message(monkeypatch):
    import ipywidgets  # noqa: F401 (required: a missing one fails, never skips)
    from accelkit.ui.app import App

    monkeypatch.setenv("QUERY_STRING", 'weights={"zzz":5}&tab=decision')
    app = App.from_environment()
    assert "weights" in app.message.value and "zzz" in app.message.value
    assert app.tab.selected_index == app.keys.index("decision")


# --- hypothesis fuzz: random bytes -> a loaded object or a clean ValueError ----------------------------------

FIELDS = Scenario.field_names()
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                    st.text(max_size=30))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                                          inner, max_size=4),
                      max_leaves=10)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


@FUZZ
@given(raw=st.binary(max_size=400) | st.text(alphabet="ab:&*-[]{},\n '\"!|>#", max_size=200).map(str.encode),
       suffix=st.sampled_from([".yaml", ".json", ".yml"]))
def test_fuzz_scenario_file(tmp_path_factory, raw, suffix):
    path = tmp_path_factory.mktemp("s") / ("s" + suffix)
    path.write_bytes(raw)
    try:
        assert isinstance(Scenario.load(path), Scenario)
    except ScenarioError as exc:
        assert len(str(exc)) <= 420


@FUZZ
@given(data=st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=10), values, max_size=6),
       as_json=st.booleans())
def test_fuzz_scenario_documents(tmp_path_factory, data, as_json):
    import json

    import yaml

    try:
        raw = (json.dumps(data) if as_json else yaml.safe_dump(data)).encode()
    except (ValueError, yaml.YAMLError):
        return
    path = tmp_path_factory.mktemp("s") / ("s.json" if as_json else "s.yaml")
    path.write_bytes(raw)
    try:
        Scenario.load(path)
    except ScenarioError as exc:
        assert len(str(exc)) <= 420


@FUZZ
@given(text=st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_fuzz_query_strings(text):
    try:
        Scenario.from_query_string(text)
    except ScenarioError:
        pass


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(alphabet=',"\n x1.', max_size=200).map(str.encode))
def test_fuzz_catalogue_reader(tmp_path_factory, raw):
    from accelkit.catalog import CatalogError, load_catalog

    path = tmp_path_factory.mktemp("cat") / "mine.csv"
    path.write_bytes(raw)
    try:
        load_catalog(path)
    except CatalogError:
        pass


@FUZZ
@given(text=st.text(max_size=400) | st.sampled_from(["timestamp, index, utilization.gpu [%]\n"]).flatmap(
    lambda head: st.text(alphabet='0123456789,. %"\n:/-', max_size=200).map(lambda body: head + body)))
def test_fuzz_nvidia_smi_log_reader(text):
    from accelkit.monitor.nvsmi import parse_log_text
    from accelkit.monitor.samples import MonitorError

    try:
        parse_log_text(text, "gpu.csv")
    except MonitorError:
        pass


@FUZZ
@given(raw=st.binary(max_size=300))
def test_fuzz_measured_demand_json(tmp_path_factory, raw):
    from accelkit.monitor.demand import load_measured_demand

    path = tmp_path_factory.mktemp("md") / "m.json"
    path.write_bytes(raw)
    try:
        load_measured_demand(path)
    except ValueError:
        pass
