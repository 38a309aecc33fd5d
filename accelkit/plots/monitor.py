"""Figures of chapter 11: what your hardware really does (monitor samples, right-size)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from ._common import PALETTE, add_lines, empty_figure, layout

__all__ = ["utilization_timeline", "utilization_histogram", "rightsize_chart"]


def _label(host, gpu):
    return f"{host}/GPU{gpu}" if host else f"GPU{gpu}"


def utilization_timeline(samples, threshold=0.70, title=None):
    """One line per GPU: utilisation [%] against time since the first sample [s],
    with the source text's 70 % compute-bound threshold dotted."""
    title = title or _("GPU utilisation over time")
    data = samples[samples["util_fraction"].notna()]
    if data.empty:
        return empty_figure(_("No utilisation samples"), title)
    t0 = data["timestamp_s"].min()
    fig = go.Figure()
    for i, ((host, gpu), g) in enumerate(data.groupby(["host", "gpu"], sort=True)):
        fig.add_trace(go.Scatter(
            x=(g["timestamp_s"] - t0).round(3), y=(g["util_fraction"] * 100).round(2), mode="lines",
            name=_label(host, gpu), line={"width": 1.3, "color": PALETTE[i % len(PALETTE)]},
            hovertemplate="%{x:.0f} s: %{y:.0f} %<extra>" + _label(host, gpu) + "</extra>"))
    add_lines(fig, "h", [threshold * 100], [_("{threshold}: compute-bound").format(threshold=f"{threshold:.0%}")],
              ["#d62728"])
    fig.update_xaxes(title_text=_("time since the first sample [s]"))
    fig.update_yaxes(title_text=_("GPU utilisation [%]"), range=[0, 105])
    return layout(fig, title)


def utilization_histogram(samples, threshold=0.70, idle=0.05, title=None):
    """Share of samples per 5 % utilisation bin (all GPUs pooled), idle and 70 % lines marked."""
    title = title or _("How busy the GPUs were: all samples")
    u = samples["util_fraction"].dropna().to_numpy() * 100
    if not len(u):
        return empty_figure(_("No utilisation samples"), title)
    edges = np.arange(0, 105, 5)
    counts, _edges = np.histogram(np.clip(u, 0, 100), bins=edges)
    share = counts / counts.sum() * 100
    fig = go.Figure(go.Bar(x=edges[:-1] + 2.5, y=share.round(2), width=4.6, marker_color=PALETTE[0],
                           customdata=np.stack([edges[:-1], edges[1:]], axis=-1),
                           hovertemplate="%{customdata[0]}-%{customdata[1]} %: "
                           + _("{share} % of samples").format(share="%{y:.1f}") + "<extra></extra>",
                           name=_("samples")))
    add_lines(fig, "v", [idle * 100, threshold * 100],
              [_("idle < {idle}").format(idle=f"{idle:.0%}"),
               _("compute-bound ≥ {threshold}").format(threshold=f"{threshold:.0%}")],
              ["#888888", "#d62728"])
    fig.update_xaxes(title_text=_("GPU utilisation [%]"), range=[0, 100])
    fig.update_yaxes(title_text=_("share of samples [%]"))
    return layout(fig, title, showlegend=False)


def rightsize_chart(table, title=None):
    """Devices each candidate needs for the observed work and for the memory in use (bars),
    and the whole devices it takes (markers)."""
    if table is None or table.empty:
        return empty_figure(_("No right-size table (the monitored device is unknown)"), title or _("Right-size"))
    from ..monitor.rightsize import basis_words

    title = title or _("What the observed work needs ({what})").format(what=basis_words(table.attrs))
    names = (table["name"] + table["is_monitored"].map({True: _(" (monitored)"), False: ""})).tolist()[::-1]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=names, x=table["devices_for_work"].round(3).tolist()[::-1], orientation="h",
                         name=_("devices for the work"), marker_color=PALETTE[0],
                         hovertemplate="%{y}: " + _("{n} devices for the work").format(n="%{x:.2f}")
                         + "<extra></extra>"))
    fig.add_trace(go.Bar(y=names, x=table["devices_for_memory"].round(3).tolist()[::-1], orientation="h",
                         name=_("devices for the memory in use"), marker_color="#bbbbbb",
                         hovertemplate="%{y}: " + _("{n} devices for the memory").format(n="%{x:.2f}")
                         + "<extra></extra>"))
    fig.add_trace(go.Scatter(y=names, x=table["devices"].tolist()[::-1], mode="markers", name=_("whole devices"),
                             marker={"symbol": "diamond", "size": 10, "color": "#d62728"},
                             hovertemplate="%{y}: " + _("{n} whole devices").format(n="%{x}") + "<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text=_("devices"))
    return layout(fig, title, height=max(320, 60 + 34 * len(table)))
