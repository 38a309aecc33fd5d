"""Figures of chapter 08: local probes -- measured against datasheet, shapes, precision."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import units
from ..i18n import N_, _
from ..probes.results import note_text as _probe_note
from ._common import PALETTE, empty_figure, layout

__all__ = ["probe_vs_datasheet_bar", "matmul_shapes_chart", "precision_chart", "utilization_chart"]

_DTYPE_ORDER = ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]
#: the memory probes as the chart names them (the probe's name, "_" as a space)
_MEMORY_LABELS = (N_("memory copy"), N_("memory read"), N_("host to device"), N_("device to host"))


def _best(results, probe):
    data = results[(results["probe"] == probe) & results["measured"].notna()]
    if data.empty:
        return data
    return data.loc[data.groupby("dtype", sort=False)["measured"].idxmax()]


def probe_vs_datasheet_bar(results, title=None):
    """Measured against datasheet: matmul per dtype (TFLOP/s) and memory bandwidth (GB/s).

    Two panels side by side, each quantity a pair of bars (measured, datasheet)
    labelled with the measured/datasheet ratio. Matmul shows each dtype's best
    shape. A missing datasheet bar means the device is not in the catalogue or
    publishes no figure for that format.
    """
    device = results["device_name"].iloc[0] if len(results) else ""
    title = title or _("Measured vs datasheet on {device}").format(device=device) if device else \
        _("Measured vs datasheet")
    matmul = _best(results, "matmul")
    memory = results[results["probe"].isin(["memory_copy", "memory_read", "host_to_device", "device_to_host"])
                     & results["measured"].notna()]
    if matmul.empty and memory.empty:
        return empty_figure(_("No measured figures in these results"), title)
    matmul = matmul.assign(order=matmul["dtype"].map({d: i for i, d in enumerate(_DTYPE_ORDER)})).sort_values("order")
    fig = make_subplots(rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.12,
                        subplot_titles=(_("matmul, best shape [TFLOP/s, TOP/s for int8]"),
                                        _("memory bandwidth [GB/s]")))
    for col, data, scale in ((1, matmul, units.TERA), (2, memory, units.GIGA)):
        if data.empty:
            continue
        labels = (data["dtype"] if col == 1 else data["probe"].str.replace("_", " ").map(_)).tolist()
        ratio_text = [f"{r:.0%}" if np.isfinite(r) else _("no datasheet") for r in data["ratio"].astype(float)]
        fig.add_trace(go.Bar(
            x=labels, y=data["measured"] / scale, name=_("measured"), marker_color=PALETTE[0],
            text=ratio_text, textposition="outside", showlegend=col == 1, legendgroup="measured",
            customdata=np.stack([data["shape"], data["note"].map(_probe_note).str.slice(0, 120)], axis=-1),
            hovertemplate="%{x}: %{y:,.3g}<br>" + _("shape {shape}").format(shape="%{customdata[0]}")
            + "<br>%{customdata[1]}<extra>" + _("measured") + "</extra>",
        ), row=1, col=col)
        fig.add_trace(go.Bar(
            x=labels, y=data["datasheet"] / scale, name=_("datasheet (dense peak)"), marker_color="#bbbbbb",
            showlegend=col == 1, legendgroup="datasheet",
            hovertemplate="%{x}: %{y:,.3g}<extra>" + _("datasheet") + "</extra>",
        ), row=1, col=col)
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log", title_text="TFLOP/s", row=1, col=1)
    fig.update_yaxes(type="log", title_text="GB/s", row=1, col=2)
    if results["datasheet"].isna().all():
        fig.add_annotation(text=_("no datasheet figures: this device is not in the catalogue"), showarrow=False,
                           x=0.5, y=1.12, xref="paper", yref="paper", font={"size": 11, "color": "#a33"})
    return layout(fig, title, height=440)


def matmul_shapes_chart(results, title=None):
    """Measured matmul TFLOP/s for every shape tried, one line per dtype (why MAMF sweeps shapes)."""
    title = title or _("Matmul throughput by shape")
    data = results[(results["probe"] == "matmul") & results["measured"].notna()]
    if data.empty:
        return empty_figure(_("No matmul figures in these results"), title)
    fig = go.Figure()
    for i, dtype in enumerate([d for d in _DTYPE_ORDER if d in set(data["dtype"])]):
        group = data[data["dtype"] == dtype]
        fig.add_trace(go.Scatter(
            x=group["shape"], y=units.flops_to_tflops(group["measured"]), mode="lines+markers", name=dtype,
            marker={"color": PALETTE[i % len(PALETTE)], "size": 9},
            hovertemplate=f"{dtype} %{{x}}: %{{y:,.3g}} T{'OP' if dtype == 'int8' else 'FLOP'}/s<extra></extra>",
        ))
    fig.update_xaxes(title=_("shape M x N x K"), type="category")
    fig.update_yaxes(title=_("measured [TFLOP/s, TOP/s for int8]"), type="log")
    return layout(fig, title, height=380)


def precision_chart(table, title=None):
    """Speed-up against fp32 (x) and relative L2 error (y, log) per model and format.

    ``table`` is :func:`accelkit.probes.precision_table`'s output. fp32 sits at
    speed-up 1 with no error and is left off the log axis.
    """
    title = title or _("Lower precision: speed-up against error")
    data = table[(table["dtype"] != "fp32") & table["speedup_vs_fp32"].notna() & (table["rel_l2_error"] > 0)]
    if data.empty:
        return empty_figure(_("No lower-precision results to compare"), title)
    fig = go.Figure()
    symbols = {"mlp": "circle", "transformer": "diamond"}
    for i, dtype in enumerate([d for d in _DTYPE_ORDER if d in set(data["dtype"])]):
        group = data[data["dtype"] == dtype]
        fig.add_trace(go.Scatter(
            x=group["speedup_vs_fp32"], y=group["rel_l2_error"], mode="markers+text", name=dtype,
            text=group["model"].map(_), textposition="top center",
            marker={"size": 12, "color": PALETTE[(i + 1) % len(PALETTE)],
                    "symbol": [symbols.get(m, "square") for m in group["model"]]},
            hovertemplate=_("{model}: {speedup}x fp32 speed, relative error {error}").format(
                model="%{text}", speedup="%{x:.2f}", error="%{y:.2e}") + "<extra>" + dtype + "</extra>",
        ))
    fig.add_vline(x=1.0, line={"dash": "dot", "color": "#999"})
    fig.update_xaxes(title=_("speed-up against fp32 [x] (right of the dotted line = faster)"))
    fig.update_yaxes(title=_("relative L2 error against fp32"), type="log")
    return layout(fig, title, height=380)


def utilization_chart(samples, reason="", title=None):
    """NVML samples over time: GPU busy %, memory busy % and power (W, right axis)."""
    title = title or _("GPU utilisation while the probes ran (NVML)")
    frame = pd.DataFrame(samples or [])
    if frame.empty:
        return empty_figure(reason or _("No utilisation samples (no NVIDIA GPU / NVML here)"), title)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=frame["t_s"], y=frame["gpu_util_pct"], name=_("GPU busy [%]"), line={"color": PALETTE[0]}))
    fig.add_trace(go.Scatter(x=frame["t_s"], y=frame["memory_util_pct"], name=_("memory busy [%]"),
                             line={"color": PALETTE[1]}))
    fig.add_trace(go.Scatter(x=frame["t_s"], y=frame["power_w"], name=_("power [W]"), line={"color": PALETTE[3],
                                                                                       "dash": "dot"}),
                  secondary_y=True)
    fig.add_hline(y=70, line={"dash": "dash", "color": "#999"}, annotation_text=_("70 %: fed / compute-bound"))
    fig.update_xaxes(title=_("time [s]"))
    fig.update_yaxes(title_text=_("busy [%]"), range=[0, 105], secondary_y=False)
    fig.update_yaxes(title_text=_("power [W]"), secondary_y=True)
    return layout(fig, title, height=360)
