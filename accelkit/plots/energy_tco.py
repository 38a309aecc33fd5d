"""Figures of chapter 05: energy per device, cumulative TCO, latency budget."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ._common import PALETTE, add_lines, empty_figure, layout, vendor_color

__all__ = ["cumulative_cost_chart", "latency_chart", "job_energy_chart"]


def cumulative_cost_chart(cumulative, title, break_even_month=None):
    """Cumulative cost by month, one line per option (from ``tco.monthly_cumulative``)."""
    fig = go.Figure()
    for i, (option, group) in enumerate(cumulative.groupby("option", sort=False)):
        fig.add_trace(go.Scatter(
            x=group["month"], y=group["cumulative_usd"], mode="lines", name=option,
            line={"color": PALETTE[i % len(PALETTE)], "width": 3 if i == 0 else 2},
            hovertemplate=f"{option}<br>month %{{x}}: $%{{y:,.0f}} so far<extra></extra>",
        ))
    if break_even_month is not None and break_even_month == break_even_month:
        add_lines(fig, "v", [break_even_month], [f"break-even: month {break_even_month:.0f}"], ["#444444"],
                  dash="dash", label_position=0.95, font_size=11)
    fig.update_xaxes(title="month")
    fig.update_yaxes(title="cumulative cost [USD]")
    return layout(fig, title, height=420)


def latency_chart(table, title):
    """Stacked horizontal bars: latency components of the cloud and edge paths."""
    fig = go.Figure()
    for i, (component, group) in enumerate(table.groupby("component", sort=False)):
        fig.add_trace(go.Bar(y=group["path"], x=group["ms"], orientation="h", name=component,
                             marker={"color": PALETTE[i % len(PALETTE)]},
                             hovertemplate=f"{component}: %{{x:.1f}} ms<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="latency per frame [ms]")
    return layout(fig, title, height=300)


def job_energy_chart(table, title):
    """Energy (bars) and CO2 (hover) of the scenario's job per device."""
    data = table.dropna(subset=["energy_kwh"]).sort_values("energy_kwh")
    if data.empty:
        return empty_figure("No selected device has both a peak at this precision and a TDP", title)
    fig = go.Figure(go.Bar(
        x=data["energy_kwh"], y=data["name"], orientation="h",
        marker={"color": [vendor_color(v) for v in data["vendor"]]},
        customdata=np.stack([data["co2_kg"], data["device_hours"], data["tdp_w"]], axis=-1),
        hovertemplate="<b>%{y}</b><br>%{x:,.0f} kWh<br>%{customdata[0]:,.0f} kg CO2e"
                      "<br>%{customdata[1]:,.0f} device-hours at %{customdata[2]:.0f} W<extra></extra>",
    ))
    fig.update_xaxes(title="energy [kWh] (TDP × device-hours × PUE)")
    return layout(fig, title, height=max(300, 26 * len(data) + 130))
