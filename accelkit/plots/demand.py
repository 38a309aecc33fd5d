"""Figures of chapter 01: compute demand and memory."""

from __future__ import annotations

import numpy as np

from .. import units
from ._common import PALETTE, empty_figure, figure, reference_lines, vendor_color

__all__ = ["devices_needed_chart", "memory_breakdown_chart", "seed_rule_chart"]


def _wrap(texts, width=70):
    """Hover text broken into lines (plotly does not wrap)."""
    import textwrap

    return ["<br>".join(textwrap.wrap(str(t), width)) for t in texts]


def devices_needed_chart(table, title):
    """Devices needed per accelerator: for compute (bar) and for memory (marker).

    ``table`` is :func:`accelkit.sizing.per_device` output; devices without a peak
    at the precision are left out.
    """
    data = table.dropna(subset=["devices_for_target"]).copy()
    if data.empty:
        return empty_figure("No selected device publishes a peak at this precision", title)
    data["memory_shown"] = data["min_devices_memory"].replace(np.inf, np.nan)
    data = data.sort_values("devices_needed", ascending=False, na_position="first")
    hover_cost = [f"${c:,.0f}" if c == c else "no price in the catalogue" for c in data["cloud_usd"]]
    low = data.get("devices_for_target_low", data["devices_for_target"])
    high = data.get("devices_for_target_high", data["devices_for_target"])
    source = data.get("matmul_source", "").astype(str) if "matmul_source" in data else [""] * len(data)
    bar = {
        "type": "bar", "y": data["name"], "x": data["devices_for_target"], "orientation": "h",
        "name": "for the target (projected)", "marker": {"color": [vendor_color(v) for v in data["vendor"]]},
        "error_x": {"type": "data", "symmetric": False, "array": (high - data["devices_for_target"]).clip(lower=0),
                    "arrayminus": (data["devices_for_target"] - low).clip(lower=0), "color": "#555"},
        "customdata": np.stack([units.flops_to_tflops(data["peak_flops"]), data["device_hours"], hover_cost, low, high,
                                _wrap(source)], axis=-1),
        "hovertemplate": "<b>%{y}</b><br>%{x:.0f} devices for the target (range %{customdata[3]:.0f}-"
        "%{customdata[4]:.0f})<br>peak %{customdata[0]:,.1f} TFLOP/s<br>%{customdata[1]:,.0f} device-hours"
        "<br>rent: %{customdata[2]}<br>efficiency: %{customdata[5]}<extra></extra>",
    }
    memory = {
        "type": "scatter", "y": data["name"], "x": data["memory_shown"], "mode": "markers",
        "name": "to hold the memory",
        "marker": {"symbol": "diamond", "size": 11, "color": "#333"},
        "hovertemplate": "<b>%{y}</b><br>%{x:.0f} devices to hold the memory<extra></extra>",
    }
    no_fit = data[np.isinf(data["min_devices_memory"])]
    notes = [
        {"y": name, "x": 0, "xref": "paper", "text": "  never fits (replicated state too big)", "showarrow": False,
         "xanchor": "left", "font": {"size": 10, "color": "#b00"}} for name in no_fit["name"]
    ]
    return figure([bar, memory], title, annotations=notes, height=max(320, 28 * len(data) + 140),
                  xaxis={"title": "devices [count]", "type": "log" if data["devices_needed"].max() > 50 else "linear"})


def memory_breakdown_chart(parts_gb, capacities_gb, title):
    """Per-device memory by kind (stacked) next to device capacities (lines).

    Parameters
    ----------
    parts_gb : dict
        ``{"weights": GB, "gradients": GB, ...}`` per device.
    capacities_gb : pandas.Series
        Device name -> usable memory [GB].
    """
    labels = [k for k, v in parts_gb.items() if v > 0]
    if not labels:
        return empty_figure("Nothing to hold", title)
    traces = [{"type": "bar", "x": ["needed per device"], "y": [parts_gb[key]], "name": key.replace("_", " "),
               "marker": {"color": PALETTE[i % len(PALETTE)]},
               "hovertemplate": f"{key.replace('_', ' ')}: %{{y:,.1f}} GB<extra></extra>"}
              for i, key in enumerate(labels)]
    caps = capacities_gb.dropna().sort_values()
    traces.append({"type": "bar", "x": list(caps.index), "y": list(caps.values), "name": "usable memory of one device",
                   "marker": {"color": "#cfd8dc"}, "hovertemplate": "%{x}: %{y:,.0f} GB usable<extra></extra>"})
    total = sum(parts_gb[k] for k in labels)
    shapes, notes = reference_lines("h", [total], [f"needed {total:,.1f} GB"], ["#d62728"], dash="dash")
    return figure(traces, title, shapes=shapes, annotations=notes, barmode="stack", yaxis={"title": "memory [GB]"})


def seed_rule_chart(seed_table):
    """The source text's demand example: its claim vs the arithmetic, log scale."""
    bar = {
        "type": "bar", "x": seed_table["method"], "y": units.flops_to_tflops(seed_table["flops_per_s"]),
        "marker": {"color": ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"][: len(seed_table)]},
        "text": [f"{units.flops_to_tflops(v):.3g}" for v in seed_table["flops_per_s"]], "textposition": "outside",
        "customdata": seed_table["explanation"],
        "hovertemplate": "%{x}<br>%{y:.3g} TFLOP/s<br>%{customdata}<extra></extra>",
    }
    return figure([bar], "The source text's example, recomputed", height=380,
                  yaxis={"type": "log", "title": "compute needed [TFLOP/s]"})
