"""Figures of chapter 06: training-cluster scaling and gradient accumulation."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._common import PALETTE, layout

__all__ = ["scaling_chart", "accumulation_chart"]


def scaling_chart(curves, title):
    """Scaling efficiency vs device count, one line per interconnect setting.

    ``curves`` maps a label to a DataFrame from :func:`accelkit.sizing.cluster_scaling`.
    """
    fig = go.Figure()
    for i, (label, frame) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(
            x=frame["n_devices"], y=frame["efficiency"] * 100, mode="lines+markers", name=label,
            line={"color": PALETTE[i % len(PALETTE)], "width": 3 if i == 0 else 2, "dash": "solid" if i == 0 else "dot"},
            customdata=frame[["days", "comm_s", "step_s", "n_nodes"]].to_numpy(),
            hovertemplate="%{x} devices (%{customdata[3]} nodes)<br>efficiency %{y:.1f} %"
                          "<br>exposed all-reduce %{customdata[1]:.3f} s of a %{customdata[2]:.3f} s step"
                          "<br>%{customdata[0]:,.1f} days for the tokens<extra>" + label + "</extra>",
        ))
    fig.update_xaxes(type="log", title="devices [count]")
    fig.update_yaxes(title="scaling efficiency [%]", range=[0, 105])
    return layout(fig, title, height=420)


def accumulation_chart(frame, title):
    """Activation memory (bars) and step efficiency (line) vs accumulation steps."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=frame["accumulation_steps"].astype(str), y=frame["activations_gb"], name="activations per device",
                         marker={"color": PALETTE[0]}, hovertemplate="k=%{x}: %{y:,.1f} GB<extra></extra>"),
                  secondary_y=False)
    fig.add_trace(go.Scatter(x=frame["accumulation_steps"].astype(str), y=frame["efficiency"] * 100, mode="lines+markers",
                             name="scaling efficiency", line={"color": PALETTE[1]},
                             hovertemplate="k=%{x}: %{y:.1f} %<extra></extra>"), secondary_y=True)
    fig.update_xaxes(title="accumulation steps k (same global batch, micro-batch ÷ k)")
    fig.update_yaxes(title_text="activations [GB per device]", secondary_y=False)
    fig.update_yaxes(title_text="efficiency [%]", secondary_y=True, range=[0, 105])
    return layout(fig, title, height=380)
