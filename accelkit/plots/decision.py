"""Figures of chapter 09: the score breakdown and the sensitivity tornado."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ._common import PALETTE, empty_figure, layout

__all__ = ["score_breakdown_chart", "tornado_chart"]


def score_breakdown_chart(ranked, weights, top=10):
    """Stacked bars: each criterion's weighted contribution to the score of the top devices."""
    short = ranked[ranked["status"] == "shortlisted"].head(top)
    title = f"Score of the top {len(short)} devices, by criterion (weights: " + \
        ", ".join(f"{k} {v:g}" for k, v in weights.items()) + ")"
    if short.empty:
        return empty_figure("No device passes every hard constraint", title)
    total = sum(weights.values())
    fig = go.Figure()
    for i, (criterion, weight) in enumerate(weights.items()):
        contribution = short[f"score_{criterion}"] * weight / total * 100
        fig.add_trace(go.Bar(
            y=short["name"], x=contribution, orientation="h", name=criterion, marker={"color": PALETTE[i % len(PALETTE)]},
            customdata=short[f"score_{criterion}"],
            hovertemplate=f"%{{y}}<br>{criterion}: %{{customdata:.2f}} × weight {weight:g} → %{{x:.1f}} points<extra></extra>",
        ))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title="score (0-100)", range=[0, 100])
    return layout(fig, title, height=max(320, 30 * len(short) + 150))


def tornado_chart(summary, title=None):
    """How far the winner's score moves across each assumption's range; markers where the winner changes."""
    if summary.empty:
        return empty_figure("No sensitivity to show", title or "Sensitivity")
    winner = summary["winner_at_base"].iloc[0]
    title = title or f"What would change the winner ({winner})?"
    data = summary.assign(lo=np.fmin(summary["score_low"], summary["score_high"]),
                          hi=np.fmax(summary["score_low"], summary["score_high"]))
    data = data.assign(span=(data["hi"] - data["lo"]).fillna(0)).sort_values("span")
    labels = [f"{a}: switches at {s:g} → {w}" if s == s else f"{a}: no switch in range"
              for a, s, w in zip(data["assumption"], data["switches_at"], data["new_winner"])]
    fig = go.Figure(go.Bar(
        y=labels, x=data["span"], base=data["lo"], orientation="h",
        marker={"color": ["#d62728" if s == s else "#9e9e9e" for s in data["switches_at"]]},
        hovertemplate="%{y}<br>winner's score from %{base:.1f} to %{x:.1f} higher<extra></extra>",
    ))
    fig.update_xaxes(title=f"{winner}'s score across the range (NaN = excluded)")
    return layout(fig, title, height=320, margin={"l": 320, "r": 20, "t": 60, "b": 50})
