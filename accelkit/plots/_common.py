"""Shared look of every figure: template, vendor colours, layout, empty figures."""

from __future__ import annotations

import plotly.graph_objects as go

TEMPLATE = "plotly_white"

VENDOR_COLORS = {
    "NVIDIA": "#76b900",
    "AMD": "#ed1c24",
    "Google": "#4285f4",
    "Intel": "#0071c5",
    "Huawei": "#c7000b",
    "Cambricon": "#7b3fa0",
    "Graphcore": "#ff6f00",
    "Hailo": "#00a6a6",
    "Apple": "#555555",
}

#: a qualitative palette for series that are not vendors
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def vendor_color(vendor):
    return VENDOR_COLORS.get(vendor, "#888888")


def unit_of(precision):
    """TOP/s for integer formats, TFLOP/s otherwise."""
    return "TOP/s" if str(precision).startswith("int") else "TFLOP/s"


def layout(fig, title, **kwargs):
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "x": 0.01, "xanchor": "left"},
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        height=kwargs.pop("height", 430),
        legend={"orientation": "h", "y": -0.18},
        **kwargs,
    )
    return fig


def empty_figure(message, title=""):
    """A blank figure that says why it is blank (no device has the figure, …)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 15})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return layout(fig, title, height=300)
