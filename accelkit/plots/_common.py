"""Shared look of every figure: template, vendor colours, layout, empty figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

#: a small template in the spirit of plotly_white; applying the full built-in template
#: costs 30-130 ms per figure, which a live widget cannot afford
TEMPLATE = go.layout.Template(
    layout={
        "font": {"family": "Arial, sans-serif", "size": 12, "color": "#2a3f5f"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"],
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "xaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True},
        "yaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True},
    }
)

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


def _settings(title, kwargs):
    settings = {
        "template": TEMPLATE,
        "title": {"text": title, "x": 0.01, "xanchor": "left"},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 95},
        "height": 460,
        # at the foot of the figure, measured from its bottom edge (yref "container"), under the x-axis
        # title: placed as a share of the plot's height it met the title on charts whose tick labels are tall
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0.01,
                   "yanchor": "bottom"},
    }
    settings.update(kwargs)
    return settings


def layout(fig, title, **kwargs):
    """Apply the shared look to a figure built step by step."""
    fig.update_layout(**_settings(title, kwargs))
    return fig


def figure(traces, title, **layout_kwargs):
    """A figure built in one step from trace dicts (each with its ``type``) and layout
    settings (``xaxis={...}``, ``shapes=[...]``, ...), with the shared look.

    One construction validates everything once; building the same figure with
    ``add_trace`` and ``update_*`` calls validates it again at each step and costs
    three to four times as long, which the live panels cannot afford (the redraw
    budget is 100 ms per control change, see ``benchmarks/panels.py``).
    """
    return go.Figure(data=list(traces), layout=_settings(title, layout_kwargs))


def empty_figure(message, title=""):
    """A blank figure that says why it is blank (no device has the figure, …)."""
    return figure([], title, height=300, xaxis={"visible": False}, yaxis={"visible": False},
                  annotations=[{"text": message, "showarrow": False, "x": 0.5, "y": 0.5, "xref": "paper",
                                "yref": "paper", "font": {"size": 15}}])


def add_lines(fig, orientation, values, labels=(), colors=(), dash="dot", label_position=None, font_size=9, log=False):
    """Add horizontal (``"h"``) or vertical (``"v"``) reference lines with labels in
    one layout update (``fig.add_hline`` costs ~40 ms per line)."""
    shapes, notes = reference_lines(orientation, values, labels, colors, dash, label_position, font_size,
                                    shapes=fig.layout.shapes, notes=fig.layout.annotations, log=log)
    fig.update_layout(shapes=shapes, annotations=notes)
    return fig


def reference_lines(orientation, values, labels=(), colors=(), dash="dot", label_position=None, font_size=9,
                    shapes=(), notes=(), log=False):
    """``(shapes, annotations)``: horizontal (``"h"``) or vertical (``"v"``) reference
    lines with their labels, appended to ``shapes`` and ``notes``, for :func:`figure`.

    ``log``: the lines' axis is logarithmic. plotly places a shape in data units but an
    annotation on a log axis at log10 of the value (plotly.js docs, ``layout.annotations.x``:
    "If the axis type is 'log', then you must take the log of your desired range"), so a
    label at the raw value would sit at 10^value and stretch the axis to it."""
    shapes, notes = list(shapes or ()), list(notes or ())
    for i, value in enumerate(values):
        at = float(np.log10(value)) if log and value > 0 else value
        color = colors[i] if i < len(colors) else "#aaaaaa"
        if orientation == "h":
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
                           "line": {"dash": dash, "width": 1, "color": color}})
        else:
            shapes.append({"type": "line", "yref": "paper", "y0": 0, "y1": 1, "xref": "x", "x0": value, "x1": value,
                           "line": {"dash": dash, "width": 1, "color": color}})
        if i < len(labels) and labels[i]:
            if orientation == "h":
                notes.append({"xref": "paper", "x": 1.0, "xanchor": "left", "yref": "y", "y": at, "text": labels[i],
                              "showarrow": False, "font": {"size": font_size, "color": color}})
            else:
                y = 1.0 - 0.055 * (i % 6) if label_position is None else label_position
                notes.append({"yref": "paper", "y": y, "xref": "x", "x": at, "xanchor": "left", "text": labels[i],
                              "showarrow": False, "font": {"size": font_size, "color": "#555"}})
    return shapes, notes
