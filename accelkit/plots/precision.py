"""Figures of chapter 03: precision -- peaks per format, memory, loss scaling."""

from __future__ import annotations

from ..i18n import _
from ._common import PALETTE, empty_figure, figure, reference_lines

__all__ = ["precision_peaks_chart", "precision_memory_chart", "loss_scaling_chart"]


def precision_peaks_chart(table):
    """Grouped bars: dense peak per precision for each device (log scale)."""
    data = table.dropna(subset=["peak_tflops"])
    title = _("Dense peak per number format (missing bar = not published or not supported)")
    if data.empty:
        return empty_figure(_("No selected device publishes these figures"), title)
    traces = [{
        "type": "bar", "x": group["device"], "y": group["peak_tflops"], "name": p,
        "marker": {"color": PALETTE[i % len(PALETTE)]}, "customdata": group["speedup_vs_fp32"],
        "hovertemplate": (f"%{{x}} {p}: %{{y:,.1f}} T(FL)OP/s<br>"
                          + _("{ratio}× the fp32 peak").format(ratio="%{customdata:.1f}") + "<extra></extra>"),
    } for i, (p, group) in enumerate(data.groupby("precision", sort=False))]
    return figure(traces, title, barmode="group", height=440,
                  yaxis={"type": "log", "title": _("dense peak [TFLOP/s or TOP/s]")})


def precision_memory_chart(memory_gb, capacities_gb, title):
    """Bars: memory the model needs per format, with device capacities as lines."""
    bar = {
        "type": "bar", "x": list(memory_gb.index), "y": list(memory_gb.values), "marker": {"color": PALETTE[0]},
        "text": [f"{v:,.1f} GB" for v in memory_gb.values], "textposition": "outside",
        "hovertemplate": "%{x}: %{y:,.1f} GB<extra></extra>", "name": _("needed"),
    }
    caps = capacities_gb.dropna().sort_values()
    shapes, notes = reference_lines("h", list(caps.values), [_("{device} ({gb} GB usable)").format(device=n, gb=f"{c:,.0f}")
                                                            for n, c in caps.items()],
                                    [PALETTE[(i + 1) % len(PALETTE)] for i in range(len(caps))], log=True)
    return figure([bar], title, shapes=shapes, annotations=notes, yaxis={"title": _("memory [GB]"), "type": "log"},
                  height=420, margin={"l": 60, "r": 170, "t": 60, "b": 50})


def loss_scaling_chart(demo):
    """Fraction of gradients lost to underflow (solid) and overflow (dotted) vs loss scale."""
    traces = []
    for i, (fmt, group) in enumerate(demo.groupby("format", sort=False)):
        color = PALETTE[i]
        traces.append({"type": "scatter", "x": group["log2_scale"], "y": group["underflow"] * 100,
                       "mode": "lines+markers", "name": _("{format}: underflow to 0").format(format=fmt),
                       "line": {"color": color},
                       "hovertemplate": _("scale 2^{scale}: {value} % lost").format(scale="%{x:.0f}", value="%{y:.2f}")
                       + "<extra></extra>"})
        traces.append({"type": "scatter", "x": group["log2_scale"], "y": group["overflow"] * 100,
                       "mode": "lines+markers", "name": _("{format}: overflow to inf").format(format=fmt),
                       "line": {"color": color, "dash": "dot"},
                       "hovertemplate": _("scale 2^{scale}: {value} % overflow").format(scale="%{x:.0f}",
                                                                                        value="%{y:.3f}")
                       + "<extra></extra>"})
    return figure(traces, _("Why fp16 training needs loss scaling (synthetic gradients; assumptions adjustable)"),
                  height=380, xaxis={"title": _("loss scale [log2]"), "dtick": 4},
                  yaxis={"title": _("gradients lost [%]")})
