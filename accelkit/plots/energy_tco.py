"""Figures of chapter 05: energy per device, cumulative TCO, latency budget."""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from ._common import PALETTE, empty_figure, figure, reference_lines, vendor_color

__all__ = ["cumulative_cost_chart", "latency_chart", "job_energy_chart", "scenario_cost_chart"]


def cumulative_cost_chart(cumulative, title, break_even_month=None):
    """Cumulative cost by month, one line per option (from ``tco.monthly_cumulative``)."""
    traces = [{
        "type": "scatter", "x": group["month"], "y": group["cumulative_usd"], "mode": "lines", "name": option,
        "line": {"color": PALETTE[i % len(PALETTE)], "width": 3 if i == 0 else 2},
        "hovertemplate": option + "<br>" + _("month") + " %{x}: $%{y:,.0f}<extra></extra>",
    } for i, (option, group) in enumerate(cumulative.groupby("option", sort=False))]
    shapes, notes = [], []
    if break_even_month is not None and break_even_month == break_even_month:
        shapes, notes = reference_lines("v", [break_even_month], [_("break-even: month {month}").format(month=f"{break_even_month:.0f}")],
                                        ["#444444"], dash="dash", label_position=0.95, font_size=11)
    return figure(traces, title, shapes=shapes, annotations=notes, height=420, xaxis={"title": _("month")},
                  yaxis={"title": _("cumulative cost [USD]")})


def latency_chart(table, title):
    """Stacked horizontal bars: latency components of the cloud and edge paths."""
    traces = [{"type": "bar", "y": group["path"], "x": group["ms"], "orientation": "h", "name": component,
               "marker": {"color": PALETTE[i % len(PALETTE)]},
               "hovertemplate": f"{component}: %{{x:.1f}} ms<extra></extra>"}
              for i, (component, group) in enumerate(table.groupby("component", sort=False))]
    return figure(traces, title, barmode="stack", xaxis={"title": _("latency per frame [ms]")}, height=300)


def job_energy_chart(table, title):
    """Energy (bars) and CO2 (hover) of the scenario's job per device."""
    data = table.dropna(subset=["energy_kwh"]).sort_values("energy_kwh")
    if data.empty:
        return empty_figure(_("No selected device has both a peak at this precision and a TDP"), title)
    bar = {
        "type": "bar", "x": data["energy_kwh"], "y": data["name"], "orientation": "h",
        "marker": {"color": [vendor_color(v) for v in data["vendor"]]},
        "customdata": np.stack([data["co2_kg"], data["device_hours"], data["tdp_w"]], axis=-1),
        "hovertemplate": "<b>%{y}</b><br>%{x:,.0f} kWh<br>%{customdata[0]:,.0f} kg CO2e"
                         "<br>%{customdata[1]:,.0f} " + _("device-hours") + ", %{customdata[2]:.0f} W<extra></extra>",
    }
    return figure([bar], title, height=max(300, 26 * len(data) + 130),
                  xaxis={"title": _("energy [kWh] (TDP × device-hours × PUE)")})


#: how a device is paid for, in words (translated where shown)
_HOW = {"buy": N_("buy"), "rent": N_("rent")}


def scenario_cost_chart(table, title):
    """The scenario's total over the horizon per device, with its range (the decision's figures).

    ``table``: ``name``, ``total_cost_usd`` (+ ``_low``/``_high``), ``how`` ("buy" or "rent").
    """
    data = table.dropna(subset=["total_cost_usd"])
    data = data[np.isfinite(data["total_cost_usd"].astype(float))]
    if data.empty:
        return empty_figure(_("No device has a known total for this scenario"), title)
    traces = []
    for i, (how, group) in enumerate(data.groupby("how", sort=False)):
        total = group["total_cost_usd"].astype(float)
        traces.append({
            "type": "bar", "x": group["name"], "y": total, "name": _(_HOW.get(how, how)),
            "marker": {"color": PALETTE[i % len(PALETTE)]},
            "error_y": {"type": "data", "symmetric": False,
                        "array": (group["total_cost_usd_high"].astype(float) - total).clip(lower=0),
                        "arrayminus": (total - group["total_cost_usd_low"].astype(float)).clip(lower=0)},
            "hovertemplate": "<b>%{x}</b><br>$%{y:,.0f}<extra></extra>",
        })
    return figure(traces, title, height=380, yaxis={"title": _("total over the horizon [USD]")})
