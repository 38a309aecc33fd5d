"""The front door (accelkit.ui.app): the copy-link, the phone's chapter menu, labels that follow the
workload, and the language (issue 27 points 1, 5, 6 and 7). Browser tests: tests/browser/test_front_door_v2.py."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs

import pytest

pytest.importorskip("ipywidgets")

from accelkit import i18n  # noqa: E402
from accelkit.scenario import Scenario  # noqa: E402


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def _app(monkeypatch, query="", accept=None):
    from accelkit.ui.app import App

    monkeypatch.setenv("QUERY_STRING", query)
    if accept is None:
        monkeypatch.delenv("HTTP_ACCEPT_LANGUAGE", raising=False)
    else:
        monkeypatch.setenv("HTTP_ACCEPT_LANGUAGE", accept)
    return App.from_environment()


def _visible_text(widget):
    """The text a person reads in a widget tree: HTML (tags stripped), labels, choices, titles."""
    import ipywidgets as W

    out = []
    if isinstance(widget, W.HTML):
        out.append(html.unescape(re.sub(r"<[^>]+>", " ", widget.value)))
    if getattr(widget, "description", ""):
        out.append(widget.description)
    if isinstance(widget, W.Dropdown):
        out += [str(label) for label in widget._options_labels]
    for child in getattr(widget, "children", ()):
        out.append(_visible_text(child))
    return "\n".join(out)


def _link_scenario(query):
    fields = "&".join(p for p in query.split("&") if p.split("=")[0] not in ("tab", "lang"))
    return Scenario.from_query_string(fields)


# --- point 5: the link carries every field and follows every change -------------------------------------------

def test_the_copy_link_carries_every_field_tab_and_language_and_reopens_the_same_scenario(monkeypatch):
    app = _app(monkeypatch, "workload=inference&model=Llama-3.1+8B&precision=fp8&n_devices=4&budget_usd=20000"
                            "&weights=%7B%22cost%22%3A3%7D&devices=H100+SXM,L40S&tab=decision")
    query = app.link_query()
    keys = parse_qs(query, keep_blank_values=True)
    assert set(keys) == set(Scenario.field_names()) | {"tab", "lang"}
    assert keys["tab"] == ["decision"] and keys["lang"] == ["en"]
    assert _link_scenario(query) == app.scenario
    # the button's HTML carries the query; the URL itself is made in the browser from the page's address
    assert 'class="ak-copy-button' in app.link.value and html.escape(query) in app.link.value
    assert html.escape(query) in app.header_link.value
    assert "location.origin+location.pathname" in html.unescape(app.link.value)
    # reopening the link gives the same scenario, tab and language
    again = _app(monkeypatch, query)
    assert again.scenario == app.scenario and again.keys[again.tab.selected_index] == "decision"


def test_the_link_follows_a_change_made_in_any_tab_and_the_open_tab(monkeypatch):
    app = _app(monkeypatch)
    before = app.header_link.value
    app.scenario.budget_usd = 12345.0  # as a chapter's control would (Panel._push sets the shared scenario)
    assert "budget_usd=12345.0" in app.header_link.value and app.header_link.value != before
    assert "budget_usd=12345.0" in app.link.value  # the start page lists what differs from the defaults
    app.scenario.n_devices = 3
    assert app.start_controls["n_devices"].value == 3, "the start page follows a change made elsewhere"
    app.start_controls["time_target_days"].value = 5
    assert app.scenario.time_target_days == 5 and "time_target_days=5.0" in app.link.value
    app.tab.selected_index = app.keys.index("catalogue")
    assert "tab=catalogue" in app.header_link.value


def test_a_bad_link_value_and_a_bad_language_name_the_problem(monkeypatch):
    app = _app(monkeypatch, "batch_size=-3&lang=klingon")
    text = app.message.value
    assert "batch_size" in text and "klingon" in text
    assert i18n.language() == "en"


# --- point 6: the chapter menu reaches every tab, both ways ------------------------------------------------------

def test_the_chapter_menu_and_the_tab_bar_stay_in_step(monkeypatch):
    app = _app(monkeypatch)
    assert [label for label, _ in app.menu.options] == list(app.tab.titles)
    assert len(app.menu.options) == len(app.keys) == 13
    app.menu.value = app.keys.index("monitor")
    assert app.tab.selected_index == app.keys.index("monitor")
    app.tab.selected_index = app.keys.index("trust")
    assert app.menu.value == app.keys.index("trust")
    assert "ak-chapter-menu" in app.menu._dom_classes and "ak-tabs" in app.tab._dom_classes
    from accelkit.ui._base import CSS

    assert "@media (max-width: 700px)" in CSS and ".ak-table {overflow-x:auto" in CSS


# --- point 1: the start page's labels follow the workload ---------------------------------------------------------

@pytest.mark.parametrize("workload, model, shown, hidden, latency_unit, data_label", [
    ("training", "Llama-2 7B", {"tokens_b", "time_target_days"}, {"latency_target_ms"}, None,
     "training tokens [billion]"),
    ("fine-tuning", "Llama-2 7B", {"tokens_b", "time_target_days"}, {"latency_target_ms"}, None,
     "training tokens [billion]"),
    ("training", "ResNet-50", {"tokens_b", "time_target_days"}, {"latency_target_ms"}, None,
     "training samples [billion]"),
    ("inference", "Llama-2 70B", {"latency_target_ms"}, {"tokens_b", "time_target_days"}, "ms per token", None),
    ("inference", "YOLOv8s", {"latency_target_ms"}, {"tokens_b", "time_target_days"}, "ms per frame", None),
    ("inference", "BERT-base", {"latency_target_ms"}, {"tokens_b", "time_target_days"}, "ms per request", None),
])
def test_start_page_labels_follow_the_workload(monkeypatch, workload, model, shown, hidden, latency_unit, data_label):
    app = _app(monkeypatch)
    days = app.scenario.time_target_days
    app.start_controls["workload"].value = workload
    app.start_controls["model"].value = model
    c = app.start_controls
    assert {k for k in shown if c[k].layout.display != "none"} == shown
    assert {k for k in hidden if c[k].layout.display == "none"} == hidden
    if latency_unit:
        assert c["latency_target_ms"].description == f"latency target [{latency_unit}]"
    if data_label:
        assert c["tokens_b"].description == data_label
    assert app.scenario.time_target_days == days, "a hidden control keeps its scenario value"


def test_the_workload_labels_follow_an_example_loaded_on_the_start_page(monkeypatch):
    app = _app(monkeypatch)
    app.example.value = "smart-factory-edge-vision"
    assert app.scenario.workload == "inference"
    assert app.start_controls["latency_target_ms"].description == "latency target [ms per frame]"
    assert app.start_controls["time_target_days"].layout.display == "none"


# --- point 7: the language ------------------------------------------------------------------------------------------

def test_lang_in_the_link_sets_the_language_before_any_widget_is_built(monkeypatch):
    from helpers import english_leftovers

    app = _app(monkeypatch, "lang=zh_CN&workload=inference")
    assert i18n.language() == "zh_CN"
    assert app.tab.titles[app.keys.index("decision")] == "9 决策"
    assert all(re.search(r"[\u4e00-\u9fff]", t) for t in app.tab.titles), app.tab.titles
    start = _visible_text(app.tab.children[0]) + "\n" + _visible_text(app.widget)
    assert not english_leftovers(start), english_leftovers(start)
    assert "复制链接" in app.header_link.value and "下载报告" == app.report_button.description
    assert "lang=zh_CN" in app.link_query()
    # the language picker links to the same view in English
    assert "English" in app.languages.value and "lang=en" in app.languages.value


def test_the_browser_language_is_the_default_and_lang_overrides_it(monkeypatch):
    _app(monkeypatch, accept="zh-CN,zh;q=0.9,en;q=0.8")
    assert i18n.language() == "zh_CN"
    _app(monkeypatch, "lang=en", accept="zh-CN,zh;q=0.9")
    assert i18n.language() == "en"
    app = _app(monkeypatch, accept="fr-FR,fr;q=0.9")
    assert i18n.language() == "en" and app.tab.titles[0] == "Start"


def test_english_front_door_reads_as_before(monkeypatch):
    app = _app(monkeypatch)
    c = app.start_controls
    assert [c[k].description for k in ("tokens_b", "time_target_days", "n_devices")] == [
        "training tokens [billion]", "finish within [days]", "devices allowed [count]"]
    assert list(app.tab.titles)[:3] == ["Start", "Catalogue", "1 Demand"]
    assert app.report_button.description == "Download report"
    assert "choose an AI accelerator" in _visible_text(app.tab.children[0])


def test_the_app_server_passes_the_browser_language_to_the_kernel():
    """Both parsers (the standalone Voila app and a Jupyter Server under JupyterHub) give Voila the header list."""
    from jupyter_server.serverapp import ServerApp
    from voila.app import Voila
    from voila.configuration import VoilaConfiguration

    from accelkit.appserver import AppSettings

    server = ServerApp()
    server.parse_command_line([o for o in AppSettings().server_extension_options() if "http_header_envs" in o])
    assert VoilaConfiguration(parent=server).http_header_envs == ["Accept-Language"]
    voila = Voila()
    voila.parse_command_line(["app.ipynb", *[o for o in AppSettings().voila_options() if "http_header_envs" in o]])
    assert VoilaConfiguration(parent=voila).http_header_envs == ["Accept-Language"]
