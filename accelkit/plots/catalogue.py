"""Figures of chapter 00: the catalogue."""

from __future__ import annotations

import numpy as np
from .. import units
from ..catalog import PRECISION_COLUMNS

from ._common import empty_figure, figure, unit_of, vendor_color

__all__ = ["catalogue_scatter", "efficiency_bar"]


def _hover(frame, extra):
    parts = ["<b>%{customdata[0]}</b> (%{customdata[1]})"] + extra + ["source: %{customdata[2]}"]
    return "<br>".join(parts) + "<extra></extra>"


def catalogue_scatter(catalog, precision="bf16"):
    """Peak compute at ``precision`` against memory bandwidth, log-log, one dot per device.

    Devices without both figures are left out (the caption says how many).
    The dashed diagonals are ridge points of 10, 100 and 1000 FLOP/byte: a device
    above a line needs kernels of at least that intensity to reach its peak.
    """
    col = PRECISION_COLUMNS[precision]
    data = catalog.dropna(subset=[col, "memory_bw_gbs"])
    missing = len(catalog) - len(data)
    title = f"Peak {precision.upper()} compute vs memory bandwidth ({len(data)} devices"
    title += f"; {missing} without both figures)" if missing else ")"
    if data.empty:
        return empty_figure(f"No device in the selection publishes both a {precision} peak and a bandwidth", title)
    traces = [{
        "type": "scatter", "x": group["memory_bw_gbs"], "y": group[col], "mode": "markers+text", "name": vendor,
        "text": group["name"], "textposition": "top center", "textfont": {"size": 9},
        "marker": {"size": 10, "color": vendor_color(vendor), "line": {"width": 0.5, "color": "#333"}},
        "customdata": np.stack([group["name"], group["segment"], group["source_url"]], axis=-1),
        "hovertemplate": _hover(group, [f"{precision}: %{{y:,.1f}} {unit_of(precision)}",
                                        "memory bandwidth: %{x:,.0f} GB/s"]),
    } for vendor, group in data.groupby("vendor", sort=True)]
    lo, hi = data["memory_bw_gbs"].min() / 1.5, data["memory_bw_gbs"].max() * 1.5
    xs = np.array([lo, hi])
    notes = []
    for ridge in (10, 100, 1000):
        ys = units.flops_to_tflops(units.gbs_to_bytes_per_s(xs) * ridge)
        traces.append({"type": "scatter", "x": xs, "y": ys, "mode": "lines", "name": f"ridge {ridge} FLOP/B",
                       "line": {"dash": "dot", "width": 1, "color": "#bbbbbb"}, "hoverinfo": "skip",
                       "showlegend": False})
        notes.append({"x": float(np.log10(hi)), "y": float(np.log10(ys[1])), "text": f"{ridge} FLOP/B",
                      "showarrow": False, "font": {"size": 9, "color": "#999"}, "xanchor": "right"})
    ymin, ymax = data[col].min() / 2, data[col].max() * 2
    return figure(traces, title, annotations=notes,
                  xaxis={"type": "log", "title": "memory bandwidth [GB/s]", "range": [np.log10(lo), np.log10(hi)]},
                  yaxis={"type": "log", "title": f"dense {precision} peak [{unit_of(precision)}]",
                         "range": [np.log10(ymin), np.log10(ymax)]})


def efficiency_bar(catalog, precision="bf16", top=25):
    """Peak compute per watt of TDP at ``precision``, best first (top ``top``)."""
    col = PRECISION_COLUMNS[precision]
    data = catalog.dropna(subset=[col, "tdp_w"]).copy()
    title = f"{precision.upper()} peak per watt of TDP"
    if data.empty:
        return empty_figure(f"No device in the selection publishes both a {precision} peak and a TDP", title)
    data["per_w"] = data[col] / data["tdp_w"]
    data = data.sort_values("per_w", ascending=True).tail(top)
    bar = {
        "type": "bar", "x": data["per_w"], "y": data["name"], "orientation": "h",
        "marker": {"color": [vendor_color(v) for v in data["vendor"]]},
        "customdata": np.stack([data["name"], data["vendor"], data["source_url"], data[col], data["tdp_w"],
                                data["power_mode"]], axis=-1),
        "hovertemplate": (
            "<b>%{customdata[0]}</b> (%{customdata[1]})<br>"
            f"%{{x:.3f}} {unit_of(precision)} per W = %{{customdata[3]:,.1f}} / %{{customdata[4]:.0f}} W"
            "<br>power mode: %{customdata[5]}<br>source: %{customdata[2]}<extra></extra>"
        ),
    }
    return figure([bar], title, height=max(300, 22 * len(data) + 120),
                  xaxis={"title": f"{unit_of(precision)} per W (peak / TDP)"}, yaxis={"title": ""})
