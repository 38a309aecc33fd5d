"""Figures of chapter 09: the score breakdown and the sensitivity tornado."""

from __future__ import annotations

import numpy as np

from ._common import PALETTE, empty_figure, figure

__all__ = ["score_breakdown_chart", "tornado_chart"]


def score_breakdown_chart(ranked, weights, top=10):
    """Stacked bars: each criterion's weighted contribution to the score of the top devices."""
    short = ranked[ranked["status"] == "shortlisted"].head(top)
    title = f"Score of the top {len(short)} devices, by criterion (weights: " + \
        ", ".join(f"{k} {v:g}" for k, v in weights.items()) + ")"
    if short.empty:
        return empty_figure("No device passes every hard constraint", title)
    total = sum(weights.values())
    traces = [{
        "type": "bar", "y": short["name"], "x": short[f"score_{criterion}"] * weight / total * 100, "orientation": "h",
        "name": criterion, "marker": {"color": PALETTE[i % len(PALETTE)]}, "customdata": short[f"score_{criterion}"],
        "hovertemplate": f"%{{y}}<br>{criterion}: %{{customdata:.2f}} × weight {weight:g} → %{{x:.1f}} points"
                         "<extra></extra>",
    } for i, (criterion, weight) in enumerate(weights.items())]
    return figure(traces, title, barmode="stack", yaxis={"autorange": "reversed"},
                  xaxis={"title": "score (0-100)", "range": [0, 100]}, height=max(320, 30 * len(short) + 150))


def tornado_chart(summary, title=None):
    """The winner's lead over the runner-up across each assumption's range.

    One bar per assumption from the smallest to the largest lead in its range; red
    where the lead crosses zero (the order flips, at the value in the label), grey
    where it holds (the label gives the smallest lead). Never blank: without
    assumptions it says why.
    """
    if summary.empty:
        return empty_figure("No assumption to scan for this scenario", title or "Sensitivity")
    winner = summary["winner_at_base"].iloc[0]
    runner = summary["runner_up"].iloc[0] if "runner_up" in summary else ""
    title = title or (f"What would put {runner} ahead of {winner}?" if runner else f"How firm is {winner}'s lead?")
    data = summary.assign(lo=summary["margin_min"].fillna(summary["margin_at_base"]),
                          hi=summary["margin_max"].fillna(summary["margin_at_base"]))
    data = data.assign(span=(data["hi"] - data["lo"]).clip(lower=0.5)).sort_values("span")
    labels = [f"{a}: flips at {s:g} → {w}" if s == s else f"{a}: holds (lead ≥ {lo:.1f} points)"
              for a, s, w, lo in zip(data["assumption"], data["switches_at"], data["new_winner"], data["lo"])]
    bar = {
        "type": "bar", "y": labels, "x": data["span"], "base": data["lo"], "orientation": "h",
        "marker": {"color": ["#d62728" if s == s else "#9e9e9e" for s in data["switches_at"]]},
        "customdata": np.column_stack([data["lo"], data["hi"], data["base"]]),
        "hovertemplate": "%{y}<br>lead from %{customdata[0]:.1f} to %{customdata[1]:.1f} points "
                         "(base value %{customdata[2]:g})<extra></extra>",
    }
    zero = {"type": "line", "xref": "x", "x0": 0, "x1": 0, "yref": "y domain", "y0": 0, "y1": 1,
            "line": {"color": "#333", "width": 1}}
    return figure([bar], title, shapes=[zero], height=340, margin={"l": 340, "r": 20, "t": 60, "b": 50},
                  xaxis={"title": f"{winner}'s lead over {runner or 'nobody'} across the range [score points]"})
