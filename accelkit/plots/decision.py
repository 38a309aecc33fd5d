"""Figures of chapter 09: the score breakdown and the sensitivity tornado."""

from __future__ import annotations

import numpy as np

from ..i18n import _
from ..names import display_name
from ..select.robustness import assumption_label
from ..select.summary import CRITERION_NAMES
from ._common import PALETTE, empty_figure, figure

__all__ = ["score_breakdown_chart", "tornado_chart"]


def score_breakdown_chart(ranked, weights, top=10):
    """Stacked bars: each criterion's weighted contribution to the score of the top devices."""
    short = ranked[ranked["status"] == "shortlisted"].head(top)

    def name(criterion):
        return _(CRITERION_NAMES[criterion]) if criterion in CRITERION_NAMES else criterion

    title = _("Score of the top {n} devices, by criterion (weights: {weights})").format(
        n=len(short), weights=", ".join(f"{name(k)} {v:g}" for k, v in weights.items()))
    if short.empty:
        return empty_figure(_("No device passes every hard constraint"), title)
    total = sum(weights.values())
    traces = [{
        "type": "bar", "y": short["name"].map(display_name), "x": short[f"score_{criterion}"] * weight / total * 100,
        "orientation": "h",
        "name": name(criterion), "marker": {"color": PALETTE[i % len(PALETTE)]},
        "customdata": short[f"score_{criterion}"],
        # plotly's own placeholders (%{...}) go in as values, so the sentence around them is translated whole
        "hovertemplate": "%{y}<br>" + _("{criterion}: {score} × weight {weight} → {points} points").format(
            criterion=name(criterion), score="%{customdata:.2f}", weight=f"{weight:g}", points="%{x:.1f}")
                         + "<extra></extra>",
    } for i, (criterion, weight) in enumerate(weights.items())]
    return figure(traces, title, barmode="stack", yaxis={"autorange": "reversed"},
                  xaxis={"title": _("score (0-100)"), "range": [0, 100]}, height=max(320, 30 * len(short) + 150))


def tornado_chart(summary, title=None):
    """The winner's lead over the runner-up across each assumption's range.

    One bar per assumption from the smallest to the largest lead in its range; red
    where the lead crosses zero (the order flips, at the value in the label), grey
    where it holds (the label gives the smallest lead). Never blank: without
    assumptions it says why.
    """
    if summary.empty:
        return empty_figure(_("No assumption to scan for this scenario"), title or _("Sensitivity"))
    winner = display_name(summary["winner_at_base"].iloc[0])
    runner = display_name(summary["runner_up"].iloc[0]) if "runner_up" in summary else ""
    title = title or (_("What would put {runner} ahead of {winner}?").format(runner=runner, winner=winner) if runner
                      else _("How firm is {winner}'s lead?").format(winner=winner))
    data = summary.assign(lo=summary["margin_min"].fillna(summary["margin_at_base"]),
                          hi=summary["margin_max"].fillna(summary["margin_at_base"]))
    data = data.assign(span=(data["hi"] - data["lo"]).clip(lower=0.5)).sort_values("span")
    # the assumptions by their labels, the devices by the names the reader knows
    labels = [_("{assumption}: flips at {value} → {winner}").format(assumption=assumption_label(a), value=f"{s:g}",
                                                                     winner=display_name(w)) if s == s
              else _("{assumption}: holds (lead ≥ {lead} points)").format(assumption=assumption_label(a),
                                                                         lead=f"{lo:.1f}")
              for a, s, w, lo in zip(data["assumption"], data["switches_at"], data["new_winner"], data["lo"])]
    bar = {
        "type": "bar", "y": labels, "x": data["span"], "base": data["lo"], "orientation": "h",
        "marker": {"color": ["#d62728" if s == s else "#9e9e9e" for s in data["switches_at"]]},
        "customdata": np.column_stack([data["lo"], data["hi"], data["base"]]),
        "hovertemplate": "%{y}<br>" + _("lead from {low} to {high} points (base value {base})").format(
            low="%{customdata[0]:.1f}", high="%{customdata[1]:.1f}", base="%{customdata[2]:g}") + "<extra></extra>",
    }
    zero = {"type": "line", "xref": "x", "x0": 0, "x1": 0, "yref": "y domain", "y0": 0, "y1": 1,
            "line": {"color": "#333", "width": 1}}
    return figure([bar], title, shapes=[zero], height=340, margin={"l": 340, "r": 20, "t": 60, "b": 50},
                  xaxis={"title": _("{winner}'s lead over {runner} across the range [score points]").format(
                      winner=winner, runner=runner or _("nobody"))})
