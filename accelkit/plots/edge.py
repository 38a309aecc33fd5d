"""Figures of chapter 07: edge devices against latency, power and cost targets."""

from __future__ import annotations

import numpy as np

from ..i18n import _
from ._common import empty_figure, figure, reference_lines

__all__ = ["edge_fit_chart", "edge_units_chart"]


def edge_fit_chart(table, latency_ms=None, power_w=None, title=None):
    """Each device at (compute time per frame, power per box); green = meets every target."""
    title = title or _("Edge devices: time per frame vs power per box")
    # the power each box runs at: a Jetson configured into a lower nvpmodel mode under the envelope
    # draws that mode's watts (edge_fit's ``unit_w``), every other its TDP
    data = table.assign(
        box_w=table["unit_w"] if "unit_w" in table else table["tdp_w"],
        mode_words=table["run_mode"].where(table["run_mode"].astype(bool), table["power_mode"])
        if "run_mode" in table else table["power_mode"]).dropna(subset=["frame_ms", "box_w"])
    if data.empty:
        return empty_figure(_("No edge device has both a compute figure and a power figure"), title)
    traces = [{
        "type": "scatter", "x": group["frame_ms"], "y": group["box_w"], "mode": "markers+text", "text": group["name"],
        "textposition": "top center", "textfont": {"size": 9},
        "name": _("meets the targets") if meets else _("misses a target"),
        "marker": {"size": 8 + 3 * np.sqrt(group["units"].clip(upper=100)), "color": "#2ca02c" if meets else "#9e9e9e",
                   "line": {"width": 1, "color": "#333"}},
        "customdata": np.stack([group["units"], group["fps_per_unit"], group["reason"], group["basis"],
                                group["mode_words"]], axis=-1),
        "hovertemplate": "<b>%{text}</b><br>%{x:.2f} " + _("ms per frame") + "<br>%{y:g} " + _("W per box")
                         + " (%{customdata[4]})<br>%{customdata[0]:.0f} " + _("unit(s)") + ", %{customdata[1]:,.0f} "
                         + _("fps each") + "<br>%{customdata[3]}<br>%{customdata[2]}<extra></extra>",
    } for meets, group in data.groupby("meets")]
    shapes, notes = [], []
    if latency_ms:
        shapes, notes = reference_lines("v", [latency_ms], [_("latency target {ms} ms").format(ms=f"{latency_ms:g}")], ["#d62728"],
                                        label_position=0.98, shapes=shapes, notes=notes, log=True)
    if power_w:
        shapes, notes = reference_lines("h", [power_w], [_("power envelope {watts} W").format(watts=f"{power_w:g}")], ["#ff7f0e"],
                                        shapes=shapes, notes=notes, log=True)
    return figure(traces, title, shapes=shapes, annotations=notes, height=460,
                  margin={"l": 60, "r": 140, "t": 60, "b": 50},
                  xaxis={"type": "log", "title": _("time per frame [ms]")},
                  yaxis={"type": "log", "title": _("power per box [W]")})


def edge_units_chart(table, title=None):
    """Bars: units needed per device, with the purchase cost in the hover (where priced)."""
    title = title or _("Units needed and purchase cost")
    data = table.dropna(subset=["ops_per_s"]).sort_values("units")
    if data.empty:
        return empty_figure(_("No edge device publishes a figure at this precision"), title)
    cost = [f"${c:,.0f}" if c == c else _("no list price") for c in data["cost_usd"]]
    bar = {
        "type": "bar", "x": data["name"], "y": data["units"],
        "marker": {"color": ["#2ca02c" if m else "#9e9e9e" for m in data["meets"]]},
        "text": cost, "textposition": "outside", "customdata": np.stack([data["power_w"], cost], axis=-1),
        "hovertemplate": "<b>%{x}</b><br>%{y:.0f} " + _("unit(s)") + "<br>%{customdata[0]:,.0f} " + _("W in all")
                         + "<br>%{customdata[1]}<extra></extra>",
    }
    return figure([bar], title, height=380,
                  yaxis={"title": _("units needed"), "type": "log" if data["units"].max() > 50 else "linear"})
