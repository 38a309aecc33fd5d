"""Figure of the validation page: projected against measured, log-log."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from ._common import PALETTE, empty_figure, layout

__all__ = ["validation_chart"]


def validation_chart(results, band=0.25, title=None):
    """Projected / measured for every case on log-log axes, with y = x and a ±``band`` band.

    ``results`` is :func:`accelkit.projection.validation.validate`'s frame. Values are
    drawn as *rates* (a time is shown as its inverse) so "above the line" always
    means the projection is too optimistic; the hover names the case, the source
    and both values in the case's own unit.
    """
    ok = results[np.isfinite(results["predicted"]) & (results["predicted"] > 0)]
    title = title or _("Projected against measured (log-log; points above y = x are too optimistic)")
    if ok.empty:
        return empty_figure(_("No case could be projected"), title)
    is_time = ok["unit"].isin(["s", "h"])
    measured = np.where(is_time, 1.0 / ok["value"], ok["value"])
    predicted = np.where(is_time, 1.0 / ok["predicted"], ok["predicted"])
    fig = go.Figure()
    lo, hi = float(np.min([measured, predicted])) / 2, float(np.max([measured, predicted])) * 2
    xs = np.geomspace(lo, hi, 50)
    fig.add_trace(go.Scatter(x=np.r_[xs, xs[::-1]], y=np.r_[xs * (1 + band), xs[::-1] / (1 + band)], fill="toself",
                             line={"width": 0}, fillcolor="rgba(120,120,120,0.15)", hoverinfo="skip",
                             name=f"±{band:.0%}"))
    fig.add_trace(go.Scatter(x=xs, y=xs, mode="lines", line={"color": "#777", "dash": "dot"}, name="y = x",
                             hoverinfo="skip"))
    for i, (category, g) in enumerate(ok.groupby("category", sort=False)):
        mask = ok["category"].to_numpy() == category
        words = _("measured {measured}, projected {projected} ({difference})")
        text = [f"{c}<br>{d} · {m}<br>"
                + words.format(measured=f"{v:.4g} {u}", projected=f"{p:.4g} {u}", difference=f"{(p / v - 1):+.0%}")
                + f"<br>{s}"
                for c, d, m, v, p, u, s in zip(g["case_id"], g["device"], g["model"], g["value"], g["predicted"],
                                               g["unit"], g["source_title"])]
        fig.add_trace(go.Scatter(x=measured[mask], y=predicted[mask], mode="markers", name=_(category),
                                 marker={"size": 9, "color": PALETTE[i % len(PALETTE)],
                                         "symbol": ["circle" if s == "fit" else "diamond-open"
                                                    for s in g["split"]]},
                                 text=text, hovertemplate="%{text}<extra></extra>"))
    fig.update_xaxes(type="log", title=_("measured (rate in its own unit; times as 1/time)"))
    fig.update_yaxes(type="log", title=_("projected (same unit)"))
    return layout(fig, title, height=520)
