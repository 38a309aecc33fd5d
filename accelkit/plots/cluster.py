"""Figures of chapter 06: training-cluster scaling and gradient accumulation."""

from __future__ import annotations

from ..i18n import _
from ._common import PALETTE, figure

__all__ = ["scaling_chart", "accumulation_chart"]


def scaling_chart(curves, title):
    """Scaling efficiency vs device count, one line per interconnect setting.

    ``curves`` maps a label to a DataFrame from :func:`accelkit.cluster.cluster_scaling`.
    """
    traces = [{
        "type": "scatter", "x": frame["n_devices"], "y": frame["efficiency"] * 100, "mode": "lines+markers",
        "name": label,
        "line": {"color": PALETTE[i % len(PALETTE)], "width": 3 if i == 0 else 2,
                 "dash": "solid" if i == 0 else "dot"},
        "customdata": frame[["days", "comm_s", "step_s", "n_nodes"]].to_numpy(),
        "hovertemplate": "%{x} " + _("devices") + " (%{customdata[3]} " + _("servers") + ")<br>" + _("efficiency")
                         + " %{y:.1f} %<br>" + _("exposed all-reduce") + " %{customdata[1]:.3f} s / "
                         + _("step") + " %{customdata[2]:.3f} s<br>%{customdata[0]:,.1f} " + _("days")
                         + "<extra>" + label + "</extra>",
    } for i, (label, frame) in enumerate(curves.items())]
    return figure(traces, title, height=420, xaxis={"type": "log", "title": _("devices [count]")},
                  yaxis={"title": _("scaling efficiency [%]"), "range": [0, 105]})


def accumulation_chart(frame, title):
    """Activation memory (bars) and step efficiency (line) vs accumulation steps."""
    steps = frame["accumulation_steps"].astype(str)
    bar = {"type": "bar", "x": steps, "y": frame["activations_gb"], "name": _("activations per device"),
           "marker": {"color": PALETTE[0]}, "hovertemplate": "k=%{x}: %{y:,.1f} GB<extra></extra>",
           "xaxis": "x", "yaxis": "y"}
    line = {"type": "scatter", "x": steps, "y": frame["efficiency"] * 100, "mode": "lines+markers",
            "name": _("scaling efficiency"), "line": {"color": PALETTE[1]},
            "hovertemplate": "k=%{x}: %{y:.1f} %<extra></extra>", "xaxis": "x", "yaxis": "y2"}
    # the axes make_subplots(specs=[[{"secondary_y": True}]]) sets up: y2 on the right, over y
    return figure(
        [bar, line], title, height=380,
        xaxis={"anchor": "y", "domain": [0.0, 0.94],
               "title": _("accumulation steps k (same global batch, micro-batch ÷ k)")},
        yaxis={"anchor": "x", "domain": [0.0, 1.0], "title": _("activations [GB per device]")},
        yaxis2={"anchor": "x", "overlaying": "y", "side": "right", "title": _("efficiency [%]"), "range": [0, 105]},
    )
