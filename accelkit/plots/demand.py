"""Figures of chapter 01: compute demand and memory."""

from __future__ import annotations

import numpy as np

from .. import units
from ..i18n import N_, _
from ._common import PALETTE, empty_figure, figure, reference_lines, vendor_color

__all__ = ["devices_needed_chart", "memory_breakdown_chart", "seed_rule_chart"]

#: the kinds of memory per device, in words (translated where shown)
_PARTS = {"weights": N_("weights"), "gradients": N_("gradients"), "optimizer": N_("optimizer"),
          "activations": N_("activations"), "kv_cache": N_("KV cache")}


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
        return empty_figure(_("No selected device publishes a peak at this precision"), title)
    data["memory_shown"] = data["min_devices_memory"].replace(np.inf, np.nan)
    data = data.sort_values("devices_needed", ascending=False, na_position="first")
    hover_cost = [f"${c:,.0f}" if c == c and c != np.inf else (_("does not fit") if c == np.inf else
                  _("no price in the catalogue")) for c in data["cloud_usd"]]
    low = data.get("devices_for_target_low", data["devices_for_target"])
    high = data.get("devices_for_target_high", data["devices_for_target"])
    source = data.get("matmul_source", "").astype(str) if "matmul_source" in data else [""] * len(data)
    bar = {
        "type": "bar", "y": data["name"], "x": data["devices_for_target"], "orientation": "h",
        "name": _("for the target (projected)"), "marker": {"color": [vendor_color(v) for v in data["vendor"]]},
        "error_x": {"type": "data", "symmetric": False, "array": (high - data["devices_for_target"]).clip(lower=0),
                    "arrayminus": (data["devices_for_target"] - low).clip(lower=0), "color": "#555"},
        "customdata": np.stack([units.flops_to_tflops(data["peak_flops"]), data["device_hours"], hover_cost, low, high,
                                _wrap(source)], axis=-1),
        "hovertemplate": "<b>%{y}</b><br>%{x:.0f} " + _("devices for the target") + " (%{customdata[3]:.0f}-"
        "%{customdata[4]:.0f})<br>" + _("peak") + " %{customdata[0]:,.1f} TFLOP/s<br>%{customdata[1]:,.0f} "
        + _("device-hours") + "<br>" + _("rent") + ": %{customdata[2]}<br>" + _("efficiency") + ": %{customdata[5]}"
        "<extra></extra>",
    }
    memory = {
        "type": "scatter", "y": data["name"], "x": data["memory_shown"], "mode": "markers",
        "name": _("to hold the memory"),
        "marker": {"symbol": "diamond", "size": 11, "color": "#333"},
        "hovertemplate": "<b>%{y}</b><br>%{x:.0f} " + _("devices to hold the memory") + "<extra></extra>",
    }
    no_fit = data[np.isinf(data["min_devices_memory"])]
    notes = [
        {"y": name, "x": 0, "xref": "paper", "text": "  " + _("never fits (replicated state too big)"), "showarrow": False,
         "xanchor": "left", "font": {"size": 10, "color": "#b00"}} for name in no_fit["name"]
    ]
    return figure([bar, memory], title, annotations=notes, height=max(320, 28 * len(data) + 140),
                  xaxis={"title": _("devices [count]"), "type": "log" if data["devices_needed"].max() > 50 else "linear"})


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
        return empty_figure(_("Nothing to hold"), title)
    needed = _("needed per device")
    traces = [{"type": "bar", "x": [needed], "y": [parts_gb[key]], "name": _(_PARTS.get(key, key)),
               "marker": {"color": PALETTE[i % len(PALETTE)]},
               "hovertemplate": _(_PARTS.get(key, key)) + ": %{y:,.1f} GB<extra></extra>"}
              for i, key in enumerate(labels)]
    caps = capacities_gb.dropna().sort_values()
    traces.append({"type": "bar", "x": list(caps.index), "y": list(caps.values), "name": _("usable memory of one device"),
                   "marker": {"color": "#cfd8dc"},
                   "hovertemplate": "%{x}: %{y:,.0f} GB " + _("usable") + "<extra></extra>"})
    total = sum(parts_gb[k] for k in labels)
    shapes, notes = reference_lines("h", [total], [_("needed {gb} GB").format(gb=f"{total:,.1f}")], ["#d62728"], dash="dash")
    return figure(traces, title, shapes=shapes, annotations=notes, barmode="stack", yaxis={"title": _("memory [GB]")})


def seed_rule_chart(seed_table):
    """The source text's demand example: its claim vs the arithmetic, log scale."""
    bar = {
        "type": "bar", "x": seed_table["method"], "y": units.flops_to_tflops(seed_table["flops_per_s"]),
        "marker": {"color": ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"][: len(seed_table)]},
        "text": [f"{units.flops_to_tflops(v):.3g}" for v in seed_table["flops_per_s"]], "textposition": "outside",
        "customdata": seed_table["explanation"],
        "hovertemplate": "%{x}<br>%{y:.3g} TFLOP/s<br>%{customdata}<extra></extra>",
    }
    return figure([bar], _("The source text's example, recomputed"), height=380,
                  yaxis={"type": "log", "title": _("compute needed [TFLOP/s]")})
