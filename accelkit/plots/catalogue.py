"""Figures of chapter 00: the catalogue."""

from __future__ import annotations

import numpy as np
from .. import units
from ..catalog import PRECISION_COLUMNS
from ..i18n import _

from ._common import empty_figure, figure, unit_of, vendor_color

__all__ = ["catalogue_scatter", "efficiency_bar"]


def _hover(frame, extra):
    parts = ["<b>%{customdata[0]}</b> (%{customdata[1]})"] + extra + [_("source: {url}").format(url="%{customdata[2]}")]
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
    if missing:
        title = _("Peak {precision} compute vs memory bandwidth ({shown} devices; {missing} without both "
                  "figures)").format(precision=precision.upper(), shown=len(data), missing=missing)
    else:
        title = _("Peak {precision} compute vs memory bandwidth ({shown} devices)").format(
            precision=precision.upper(), shown=len(data))
    if data.empty:
        return empty_figure(_("No device in the selection publishes both a {precision} peak and a "
                              "bandwidth").format(precision=precision), title)
    traces = [{
        "type": "scatter", "x": group["memory_bw_gbs"], "y": group[col], "mode": "markers+text", "name": vendor,
        "text": group["name"], "textposition": "top center", "textfont": {"size": 9},
        "marker": {"size": 10, "color": vendor_color(vendor), "line": {"width": 0.5, "color": "#333"}},
        "customdata": np.stack([group["name"], group["segment"], group["source_url"]], axis=-1),
        "hovertemplate": _hover(group, [f"{precision}: %{{y:,.1f}} {unit_of(precision)}",
                                        _("memory bandwidth: {value} GB/s").format(value="%{x:,.0f}")]),
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
                  xaxis={"type": "log", "title": _("memory bandwidth [GB/s]"), "range": [np.log10(lo), np.log10(hi)]},
                  yaxis={"type": "log", "title": _("dense {precision} peak [{unit}]").format(
                      precision=precision, unit=unit_of(precision)),
                         "range": [np.log10(ymin), np.log10(ymax)]})


def efficiency_bar(catalog, precision="bf16", top=25):
    """Peak compute per watt of TDP at ``precision``, best first (top ``top``)."""
    col = PRECISION_COLUMNS[precision]
    data = catalog.dropna(subset=[col, "tdp_w"]).copy()
    title = _("{precision} peak per watt of TDP").format(precision=precision.upper())
    if data.empty:
        return empty_figure(_("No device in the selection publishes both a {precision} peak and a TDP").format(
            precision=precision), title)
    data["per_w"] = data[col] / data["tdp_w"]
    data = data.sort_values("per_w", ascending=True).tail(top)
    bar = {
        "type": "bar", "x": data["per_w"], "y": data["name"], "orientation": "h",
        "marker": {"color": [vendor_color(v) for v in data["vendor"]]},
        "customdata": np.stack([data["name"], data["vendor"], data["source_url"], data[col], data["tdp_w"],
                                data["power_mode"]], axis=-1),
        "hovertemplate": (
            "<b>%{customdata[0]}</b> (%{customdata[1]})<br>"
            + _("{value} {unit} per W = {peak} / {tdp} W").format(
                value="%{x:.3f}", unit=unit_of(precision), peak="%{customdata[3]:,.1f}", tdp="%{customdata[4]:.0f}")
            + "<br>" + _("power mode: {mode}").format(mode="%{customdata[5]}")
            + "<br>" + _("source: {url}").format(url="%{customdata[2]}") + "<extra></extra>"
        ),
    }
    return figure([bar], title, height=max(300, 22 * len(data) + 120),
                  xaxis={"title": _("{unit} per W (peak / TDP)").format(unit=unit_of(precision))},
                  yaxis={"title": ""})
