"""Chapter 09: the decision -- a ranked shortlist with reasons, and what would change it."""

from __future__ import annotations

import html
import re

import ipywidgets as W
import pandas as pd

from .. import plots, select, sizing
from ..catalog import load_catalog
from . import controls as C
from ._base import CSS, FigureOutput, Panel, error_html, table_html

__all__ = ["DecisionPanel", "parse_prices"]


def _range_cell(value, low, high, fmt, missing="—"):
    if not (value == value):
        return missing
    return f"{fmt.format(value)} ({fmt.format(min(low, high))}-{fmt.format(max(low, high))})"


def _projected_cell(row, training):
    """The projected time with its range; the efficiency source on hover (a title attribute)."""
    if training:
        text = _range_cell(row["days_on_n"], row["days_on_n_low"], row["days_on_n_high"], "{:,.1f}") + " days"
    else:
        unit = {"tokens": "token", "frames": "frame", "requests": "request"}.get(row["work_unit"], "unit")
        text = _range_cell(row["latency_ms"], row["latency_ms_low"], row["latency_ms_high"], "{:,.3g}") + f" ms/{unit}"
    source = html.escape(f"efficiency: {row['efficiency_source']}", quote=True)
    return f'<span class="ak-projected" title="{source}">{html.escape(text)}</span>'


def _configuration(row, scenario, training):
    if training:
        mfu = row.get("mfu", float("nan"))
        return html.escape(f"{scenario.n_devices} × data parallel, ZeRO-{scenario.zero_stage}"
                           + (f", MFU {mfu:.0%}" if mfu == mfu else ""))
    tp, batch = row.get("tensor_parallel", float("nan")), row.get("batch_size", float("nan"))
    parts = [f"{row['devices_needed']:.0f} device(s)"]
    if tp == tp:
        parts.append(f"TP {tp:.0f}")
    if batch == batch:
        parts.append(f"batch {batch:.0f}")
    return html.escape(", ".join(parts) + f", {scenario.precision}")


def parse_prices(text, catalog):
    """``"H100 SXM: 30000; MI300X = 20000"`` -> {catalogue name: USD}.

    One ``name: price`` (or ``name = price``) per line or separated by ``;``. Names go through
    :func:`accelkit.catalog.find`, so aliases and close matches work; a bad line
    raises ``ValueError`` naming it.
    """
    from ..catalog import find

    prices = {}
    for part in filter(None, (p.strip() for p in re.split(r"[;\n]", text or ""))):
        sep = "=" if "=" in part else ":" if ":" in part else None
        if sep is None:
            raise ValueError(f"quoted prices: expected 'device: price in USD', got {part!r}")
        name, value = (x.strip() for x in part.rsplit(sep, 1))
        try:
            usd = float(value.replace(",", "").replace("$", ""))
        except ValueError:
            raise ValueError(f"quoted prices: the price for {name!r} must be a number of USD, got {value!r}") from None
        if not usd > 0:
            raise ValueError(f"quoted prices: the price for {name!r} must be > 0 USD, got {usd:g}")
        prices[find(name, catalog)["name"]] = usd
    return prices


class DecisionPanel(Panel):
    """Hard constraints, weighted score, shortlist, excluded devices, sensitivity."""

    title = "Decision"

    def __init__(self, scenario=None, catalog=None, quoted_prices="", run_sensitivity=True):
        super().__init__(scenario)
        s = self.scenario
        self.base_catalog = catalog if catalog is not None else load_catalog()
        weights = {**select.DEFAULT_WEIGHTS, **(s.weights or {})}
        self.controls = {
            "workload": C.choice("workload", ["training", "fine-tuning", "inference"], s.workload, width="210px"),
            "model": C.model_picker(s.model if s.model != "custom" else "Llama-2 7B", include_custom=False),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            "deployment": C.choice("deployment", ["cloud", "on-prem", "edge"], s.deployment, width="200px"),
            "n_devices": C.integer("devices allowed", s.n_devices, "count", width="240px"),
            "time_target_days": C.number("training within", s.time_target_days, "days", width="240px"),
            "latency_target_ms": C.number("latency target", s.latency_target_ms, "ms per token", width="280px"),
            "budget_usd": C.number("budget", s.budget_usd or 0.0, "USD, 0 = none", width="260px"),
            "power_envelope_w": C.number("power envelope", s.power_envelope_w or 0.0, "W per device, 0 = none",
                                         width="320px"),
            "quoted_prices": W.Textarea(value=quoted_prices, description="quoted prices",
                                        placeholder="H100 SXM: 30000\nInstinct MI300X: 20000",
                                        layout=W.Layout(width="330px", height="70px"), style=C.STYLE),
        }
        for k in select.CRITERIA:
            self.controls[f"w_{k}"] = C.slider(k, weights.get(k, 1.0), 0.0, 5.0, 0.25, "weight",
                                               tooltip=select.CRITERIA[k][0], width="320px")
        for name in ("workload", "model", "precision", "deployment", "n_devices", "time_target_days",
                     "latency_target_ms"):
            self.bind(name, name)
        self.bind("budget_usd", "budget_usd", lambda v: v or None, lambda v: v or 0.0)
        self.bind("power_envelope_w", "power_envelope_w", lambda v: v or None, lambda v: v or 0.0)
        self.sensitivity_button = W.Button(description="Check sensitivity", icon="balance-scale",
                                           layout=W.Layout(width="180px"))
        self.sensitivity_button.on_click(lambda _: self.run_sensitivity())
        self.sensitivity_note = W.HTML()
        self.sensitivity = None
        # filled by run_sensitivity(), not by every control change (it takes seconds)
        self.figure_outputs["tornado"] = FigureOutput()
        self.table_outputs["sensitivity"] = W.HTML()
        self.watch()
        self.refresh()
        if run_sensitivity:
            self.run_sensitivity()

    def _weights(self):
        return {k: self.controls[f"w_{k}"].value for k in select.CRITERIA}

    def _catalog(self):
        prices = parse_prices(self.controls["quoted_prices"].value, self.base_catalog)
        if not prices:
            return self.base_catalog, prices
        catalog = self.base_catalog.copy()
        for name, usd in prices.items():
            catalog.loc[catalog["name"] == name, "price_usd"] = usd
        return catalog, prices

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = W.HBox([
            C.group("Job", [c["workload"], c["model"], c["precision"], c["deployment"]]),
            C.group("Constraints", [c["n_devices"], c["time_target_days"], c["latency_target_ms"], c["budget_usd"],
                                    c["power_envelope_w"], c["quoted_prices"]]),
            C.group("Weights", [c[f"w_{k}"] for k in select.CRITERIA]),
        ], layout=W.Layout(flex_flow="row wrap"))
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, W.HTML("<h4>Shortlist</h4>"), t["shortlist"],
                       f["breakdown"], W.HTML("<h4>What would change the answer</h4>"),
                       W.HBox([self.sensitivity_button, self.sensitivity_note]), f["tornado"], t["sensitivity"],
                       W.HTML("<h4>Excluded, and why</h4>"), t["excluded"], self.save_box()])

    def compute(self):
        s = self.scenario
        catalog, prices = self._catalog()
        weights = self._weights()
        ranked = select.rank(s, catalog, weights)
        short = ranked[ranked["status"] == "shortlisted"]
        excluded = ranked[ranked["status"] == "excluded"]
        m = sizing.model_of(s)
        summary = []
        if short.empty:
            counts = excluded["excluded_because"].str.split(":").str[0].str.replace(r"\d[\d,.]*", "N", regex=True)
            summary.append(f"No device passes every hard constraint for {s.workload} of {m['name']}. Most common reason: "
                           f"{counts.value_counts().index[0]}. Relax that constraint.")
        else:
            top = short.iloc[0]
            summary.append(f"Recommendation for {s.workload} of {m['name']} ({s.precision}, {s.deployment}): "
                           f"{top['name']} -- {top['reason']}.")
            if len(short) > 1:
                second = short.iloc[1]
                summary.append(f"Runner-up: {second['name']} ({second['score']:.0f} vs {top['score']:.0f} points) -- "
                               f"{second['reason']}.")
            summary.append(f"{len(short)} device(s) shortlisted, {len(excluded)} excluded by a hard constraint.")
            if short["cost_per_million_tokens"].isna().all():
                summary.append("No shortlisted device has a price for this deployment, so cost does not separate them: "
                               "enter the prices you were quoted.")
        if prices:
            summary.append("Using quoted prices for " + ", ".join(f"{k} (${v:,.0f})" for k, v in prices.items()) + ".")
        if self.sensitivity is not None:
            self.sensitivity_note.value = '<span class="ak-note">inputs changed: click to recompute</span>'
        training = s.workload in sizing.TRAINING_WORKLOADS
        shown = pd.DataFrame({
            "rank": short["rank"], "device": short["name"].map(html.escape), "score": short["score"],
            "configuration": [_configuration(r, s, training) for _, r in short.iterrows()],
            "projected (range)": [_projected_cell(r, training) for _, r in short.iterrows()],
            "cost per M (range)": [_range_cell(r["cost_per_million_tokens"], r["cost_per_million_tokens_low"],
                                               r["cost_per_million_tokens_high"], "${:,.3g}", "price unknown")
                                   for _, r in short.iterrows()],
            "time": short["score_time"], "cost": short["score_cost"], "efficiency": short["score_efficiency"],
            "ecosystem": short["score_ecosystem"], "headroom": short["score_headroom"],
            "why": short["reason"].map(html.escape),
        })
        fmt = {"rank": "{:.0f}".format, "score": "{:.1f}".format,
               **{k: "{:.2f}".format for k in ("time", "cost", "efficiency", "ecosystem", "headroom")}}
        ex = excluded[["name", "vendor", "excluded_because"]]
        ex.columns = ["device", "vendor", "excluded because"]
        return {
            "ranked": ranked, "weights": weights, "summary": summary,
            "figures": {"breakdown": plots.score_breakdown_chart(ranked, weights)},
            "tables": {"shortlist": table_html(shown, fmt, escape=False), "excluded": table_html(ex, max_rows=80)},
        }

    def run_sensitivity(self):
        """Scan the assumptions (takes a few seconds) and draw the tornado chart."""
        if self.error or self.result is None:
            return None
        try:
            catalog, _ = self._catalog()
            summary, scan = select.sensitivity(self.scenario, catalog, weights=self._weights())
        except ValueError as exc:
            self.sensitivity = None
            self.sensitivity_note.value = error_html(exc)
            return None
        self.sensitivity = (summary, scan)
        self.sensitivity_note.value = ""
        self.figure_outputs["tornado"].show(plots.tornado_chart(summary))
        shown = summary[["assumption", "base", "winner_at_base", "switches_at", "new_winner"]].copy()
        shown.columns = ["assumption", "base value", "winner", "winner changes at", "new winner"]
        self.table_outputs["sensitivity"].value = table_html(
            shown, {"base value": "{:g}".format, "winner changes at": "{:g}".format})
        if self.result is not None:
            self.result["figures"]["tornado"] = self.figure_outputs["tornado"].figure
            self.result["sensitivity"] = summary
        return summary

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        ranked = self.result["ranked"]
        short = ranked[ranked["status"] == "shortlisted"]
        lines = [f"shortlisted: {len(short)}", f"excluded: {int((ranked['status'] == 'excluded').sum())}"]
        for i, (_, row) in enumerate(short.head(3).iterrows(), 1):
            lines.append(f"#{i}: {row['name']} ({row['score']:.1f})")
        if self.sensitivity is not None:
            for _, row in self.sensitivity[0].iterrows():
                at = f"{row['switches_at']:g} -> {row['new_winner']}" if row["switches_at"] == row["switches_at"] else "no switch"
                lines.append(f"sensitivity {row['assumption']}: {at}")
        return "\n".join(lines)

