"""Panels: ``compute`` is pure (inputs in, a result out) and the panel renders the result.

DESIGN.md: widget panels in ``accelkit/ui/`` render results and compute nothing of
their own; a panel's ``compute`` must not write into the page, so the same result can
be computed for a check cell, a report or a test without touching the widgets.
"""

from __future__ import annotations

import importlib
import json

import ipywidgets as W
import pytest

PANELS = [
    ("catalogue", "CataloguePanel"), ("demand", "DemandPanel"), ("roofline", "RooflinePanel"),
    ("precision", "PrecisionPanel"), ("ecosystem", "EcosystemPanel"), ("energy_tco", "EnergyPanel"),
    ("energy_tco", "TCOPanel"), ("cluster", "ClusterPanel"), ("edge", "EdgePanel"), ("probe", "ProbePanel"),
    ("decision", "DecisionPanel"), ("validation", "ValidationPanel"), ("monitor", "MonitorPanel"),
]


def _html_widgets(panel):
    """Every HTML widget the panel holds (directly or in a dict/list attribute): its output areas."""
    found = {}

    def visit(name, obj):
        if isinstance(obj, W.HTML):
            found[name] = obj
        elif isinstance(obj, dict):
            for k, v in obj.items():
                visit(f"{name}.{k}", v)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                visit(f"{name}[{i}]", v)

    for name, obj in vars(panel).items():
        visit(name, obj)
    return found


@pytest.mark.parametrize("module, cls", PANELS, ids=[c for _, c in PANELS])
def test_compute_writes_nothing_into_the_page(module, cls):
    panel_class = getattr(importlib.import_module(f"accelkit.ui.{module}"), cls)
    kwargs = {"run_sensitivity": False} if cls == "DecisionPanel" else {}
    panel = panel_class(**kwargs)
    assert panel.error is None, f"{cls} should start without an error: {panel.error}"
    if cls == "DecisionPanel":
        panel.sensitivity = object()  # as after a sensitivity run: the stale note is the render's job
    outputs = _html_widgets(panel)
    assert outputs, f"{cls} holds no HTML output widgets to check"
    for widget in outputs.values():
        widget.value = "untouched"  # a sentinel, so rewriting the same text is caught too
    result = panel.compute()
    assert isinstance(result, dict) and "summary" in result, f"{cls}.compute should return a result dict"
    changed = sorted(k for k, w in outputs.items() if w.value != "untouched")
    assert not changed, f"{cls}.compute wrote into {changed}; writing the page belongs in render()"

@pytest.mark.parametrize("module, cls", PANELS, ids=[c for _, c in PANELS])
def test_redrawing_makes_no_new_widgets(module, cls):
    """Every widget made stays registered with the kernel until it is closed, so a panel
    that made new output widgets on each redraw would grow the kernel's memory with
    every control change (it did: 8 widgets per change in the decision tab)."""
    import warnings

    panel_class = getattr(importlib.import_module(f"accelkit.ui.{module}"), cls)
    panel = panel_class(**({"run_sensitivity": False} if cls == "DecisionPanel" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        registry = W.Widget.widgets
    panel.refresh()
    before = len(registry)
    for _ in range(3):
        panel.refresh()
    assert len(registry) == before, (
        f"{cls}: three redraws made {len(registry) - before} new widgets; output widgets must be made once")


def test_decision_render_marks_the_sensitivity_as_stale_after_an_input_changes():
    from accelkit.ui.decision import DecisionPanel

    panel = DecisionPanel(run_sensitivity=False)
    panel.sensitivity = object()
    panel.refresh()
    assert "click to recompute" in panel.sensitivity_note.value


# --- "use my measurements": one helper for every panel ------------------------------------------


def test_measurements_without_a_file_say_what_to_give():
    from accelkit.ui.measurements import ProbeMeasurements

    m = ProbeMeasurements("")
    assert m.when(False) is None, "switched off, no file is needed"
    with pytest.raises(ValueError, match="give measured_results, a JSON file written by chapter 08"):
        m.when(True)
    assert "No measurements loaded" in m.html()


def test_measurements_read_the_shipped_probe_results_once():
    """The shipped CPU run (data/probe_results/cpu-2core-vm-quick.json, read here with json):
    every one of its results, the first matmul's figure as stored, and in the page one table
    row per matmul / precision result plus the header."""
    import re

    from accelkit.probes.results import example_results
    from accelkit.ui.measurements import ProbeMeasurements

    path = next(p for p in example_results() if p.name == "cpu-2core-vm-quick.json")
    stored = json.loads(path.read_text(encoding="utf-8"))["results"]
    m = ProbeMeasurements(path)
    frame = m.when(True)
    assert frame is m.frame(), "the file is read once and kept"
    assert len(frame) == len(stored) == 50
    assert list(frame["probe"]) == [r["probe"] for r in stored]
    assert frame["measured"].iloc[0] == pytest.approx(stored[0]["measured"])
    page = m.html()
    assert page.startswith('<div class="ak-note">From cpu-2core-vm-quick.json:</div>')
    shown = sum(1 for r in stored if re.search("precision|matmul", r["probe"]))
    assert page.count("<tr") == shown + 1, (page.count("<tr"), shown)


def test_an_unreadable_measurements_file_is_a_note_in_the_page_not_an_exception(tmp_path):
    from accelkit.ui.measurements import ProbeMeasurements

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "probe results"}))
    assert "Could not read" in ProbeMeasurements(bad).html()


def test_the_three_chapters_share_the_one_helper():
    from accelkit.ui.demand import DemandPanel
    from accelkit.ui.measurements import ProbeMeasurements
    from accelkit.ui.precision import PrecisionPanel
    from accelkit.ui.roofline import RooflinePanel

    for cls in (DemandPanel, RooflinePanel, PrecisionPanel):
        panel = cls()
        assert isinstance(panel.measurements, ProbeMeasurements), f"{cls.__name__} reads measurements its own way"


def test_a_range_is_never_printed_as_one_number():
    from accelkit.ui._base import range_text

    assert range_text(12.34, 10.0, 15.0, "{:,.1f}") == "12.3 (10.0-15.0)"
    # 0.083 days with a real spread would read "0.1 (0.1-0.1)" at one decimal: certainty it does not have
    assert range_text(0.0833, 0.0712, 0.101, "{:,.1f}") == "0.0833 (0.0712-0.101)"
    assert range_text(float("nan"), 1.0, 2.0, "{:,.1f}") == "—"
    assert range_text(float("inf"), 1.0, 2.0, "{:,.1f}") == "—"
    assert range_text(5.0, 6.0, 4.0, "{:.0f}") == "5 (4-6)", "low and high given the wrong way round are put in order"
