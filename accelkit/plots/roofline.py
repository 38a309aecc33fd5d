"""Figures of chapter 02: rooflines, workloads on them, the BERT T4/V100 claim."""

from __future__ import annotations

import numpy as np

from .. import units
from ..i18n import _
from ._common import PALETTE, empty_figure, figure, reference_lines, unit_of

__all__ = ["roofline_chart", "bert_claim_chart"]


def roofline_chart(devices, workloads, precision, title=None):
    """Log-log rooflines of several devices with workloads as vertical markers.

    Parameters
    ----------
    devices : DataFrame
        ``name, peak_flops`` [FLOP/s], ``bandwidth`` [bytes/s], ``source_url``.
    workloads : DataFrame
        ``workload, intensity`` [FLOP/byte].
    precision : str
        For the axis label.
    """
    title = title or _("Roofline at {precision}: attainable = min(peak, bandwidth × intensity); dashed: the "
                       "achievable ceilings").format(precision=precision)
    devices = devices.dropna(subset=["peak_flops", "bandwidth"])
    if devices.empty:
        return empty_figure(_("No selected device publishes both a {precision} peak and a bandwidth").format(
            precision=precision), title)
    lo = min(0.05, float(workloads["intensity"].min()) / 2) if len(workloads) else 0.05
    hi = max(5000.0, float(workloads["intensity"].max()) * 2) if len(workloads) else 5000.0
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    unit = unit_of(precision)
    traces = []
    for i, (_i, d) in enumerate(devices.iterrows()):
        color = PALETTE[i % len(PALETTE)]
        y = np.minimum(d["peak_flops"], d["bandwidth"] * x) / units.TERA
        ridge = d["peak_flops"] / d["bandwidth"]
        traces.append({
            "type": "scatter", "x": x, "y": y, "mode": "lines", "name": d["name"], "line": {"color": color, "width": 2},
            "hovertemplate": (f"<b>{d['name']}</b><br>"
                              + _("intensity {value} FLOP/B").format(value="%{x:.3g}") + "<br>"
                              + _("attainable {value} {unit}").format(value="%{y:,.1f}", unit=unit) + "<br>"
                              + _("ridge {value} FLOP/B").format(value=f"{ridge:.0f}") + "<br>"
                              + _("source: {url}").format(url=d.get("source_url", "")) + "<extra></extra>"),
        })
        if np.isfinite(d.get("achievable_flops", np.nan)) and np.isfinite(d.get("achievable_bandwidth", np.nan)):
            ya = np.minimum(d["achievable_flops"], d["achievable_bandwidth"] * x) / units.TERA
            src = "<br>".join(str(d.get("efficiency_source", ""))[i:i + 80]
                              for i in range(0, len(str(d.get("efficiency_source", ""))), 80))
            traces.append({
                "type": "scatter", "x": x, "y": ya, "mode": "lines",
                "name": _("{device} (achievable)").format(device=d["name"]),
                "showlegend": False, "line": {"color": color, "width": 1.5, "dash": "dash"},
                "hovertemplate": ("<b>" + _("{device}</b>, achievable (published measurements)").format(
                                      device=d["name"]) + "<br>"
                                  + _("intensity {value} FLOP/B").format(value="%{x:.3g}") + "<br>"
                                  + _("attainable {value} {unit}").format(value="%{y:,.1f}", unit=unit)
                                  + f"<br>{src}<extra></extra>"),
            })
        pts = np.minimum(d["peak_flops"], d["bandwidth"] * workloads["intensity"].to_numpy()) / units.TERA
        traces.append({
            "type": "scatter", "x": workloads["intensity"], "y": pts, "mode": "markers", "showlegend": False,
            "marker": {"color": color, "size": 9, "line": {"width": 1, "color": "white"}},
            "text": workloads["workload"],
            "hovertemplate": (_("<b>{workload}</b> on {device}").format(workload="%{text}", device=d["name"])
                              + f"<br>%{{x:.3g}} FLOP/B → %{{y:,.1f}} {unit}<extra></extra>"),
        })
    # on log axes, shapes take data values and annotations take log10 values
    shapes, notes = reference_lines("v", list(workloads["intensity"]), [], ["#aaaaaa"] * len(workloads))
    for j, (_k, w) in enumerate(workloads.iterrows()):
        notes.append({"x": float(np.log10(w["intensity"])), "y": 1.0 - 0.055 * (j % 6), "yref": "paper",
                      "text": w["workload"], "showarrow": False, "font": {"size": 9, "color": "#555"},
                      "xanchor": "left"})
    return figure(traces, title, height=520, shapes=shapes, annotations=notes,
                  xaxis={"type": "log", "title": _("arithmetic intensity [FLOP/byte]"),
                         "range": [np.log10(lo), np.log10(hi)]},
                  yaxis={"type": "log", "title": _("attainable [{unit}]").format(unit=unit)})


def bert_claim_chart(table):
    """Latency of a BERT forward pass vs batch on V100 and T4 (roofline bound)."""
    traces = [{
        "type": "scatter", "x": group["batch"], "y": group["latency_ms"], "mode": "lines+markers",
        "name": f"{device} ({precision})",
        "line": {"color": PALETTE[i % len(PALETTE)], "dash": "dot" if precision == "int8" else "solid"},
        "error_y": {"type": "data", "symmetric": False, "array": group["latency_ms_high"] - group["latency_ms"],
                    "arrayminus": group["latency_ms"] - group["latency_ms_low"]},
        "customdata": np.stack([group["sequences_per_s"], group["sequences_per_s_per_w"],
                                group["latency_ms_low"], group["latency_ms_high"],
                                ["<br>".join(str(t)[i:i + 80] for i in range(0, len(str(t)), 80))
                                 for t in group["source"]]], axis=-1),
        "hovertemplate": (_("batch {batch}").format(batch="%{x}") + "<br>"
                          + _("{ms} ms per batch ({low}-{high})").format(
                              ms="%{y:.3f}", low="%{customdata[2]:.3f}", high="%{customdata[3]:.3f}") + "<br>"
                          + _("{rate} sequences/s, {per_watt} per W").format(
                              rate="%{customdata[0]:,.0f}", per_watt="%{customdata[1]:.2f}")
                          + "<br>%{customdata[4]}<extra></extra>"),
    } for i, ((device, precision), group) in enumerate(table.groupby(["device", "precision"], sort=False))]
    return figure(traces, _("BERT-base inference: V100 vs T4 (the source text's claim)"), height=400,
                  xaxis={"type": "log", "title": _("batch [sequences]")},
                  yaxis={"type": "log", "title": _("time per batch [ms] (projected)")})
