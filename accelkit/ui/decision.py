"""Chapter 09: the decision -- a ranked shortlist with reasons, and what would change it."""

from __future__ import annotations

import html
import re

import ipywidgets as W
import pandas as pd

from .. import plots, select, sizing
from ..catalog import load_catalog
from ..decision_page import summary_html as decision_page_html
from ..select import plan_words
from . import controls as C
from ._base import CSS, FigureOutput, HTMLOutput, Panel, error_html, range_text, table_html

__all__ = ["DecisionPanel", "parse_prices", "plan_words"]


def _projected_cell(row, training):
    """The projected time with its range; the efficiency source on hover (a title attribute)."""
    if training:
        text = range_text(row["days_on_n"], row["days_on_n_low"], row["days_on_n_high"], "{:,.1f}") + " days"
    else:
        unit = {"tokens": "token", "frames": "frame", "requests": "request"}.get(row["work_unit"], "unit")
        text = range_text(row["latency_ms"], row["latency_ms_low"], row["latency_ms_high"], "{:,.3g}") + f" ms/{unit}"
    source = html.escape(f"efficiency: {row['efficiency_source']}", quote=True)
    return f'<span class="ak-projected" title="{source}">{html.escape(text)}</span>'


def _configuration(row, training):
    """The searched configuration in words (``select.rank``'s ``configuration``), with the MFU when training."""
    text = str(row.get("configuration") or "")
    mfu = row.get("mfu", float("nan"))
    if training and mfu == mfu:
        text += f", MFU {mfu:.0%}"
    return html.escape(text)


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
            "ttft_target_ms": C.number("first-token target", s.ttft_target_ms or 0.0, "ms, 0 = none", width="300px"),
            "search_configurations": C.toggle("search each device's best configuration", s.search_configurations,
                                              "ZeRO stage, micro-batch, tensor parallel, batch under the latency "
                                              "targets, and precision when lower ones are allowed"),
            "allow_lower_precision": C.toggle("allow lower precisions (fp8, int8, int4)", s.allow_lower_precision,
                                              "let the search quantise: faster and smaller, with a quality risk"),
            "exclude_unknown": C.toggle("exclude devices with an unknown criterion", s.exclude_unknown,
                                        "off: a device with an unknown figure that is not a limit (its power, its "
                                        "ecosystem fit) is scored on the criteria that are known"),
            "finetune_method": C.choice("fine-tuning", [("full", "full"), ("LoRA", "lora"), ("QLoRA (4-bit base)", "qlora")],
                                        s.finetune_method, width="260px",
                                        tooltip="for fine-tuning: train every weight, or small adapters on frozen "
                                                "(QLoRA: 4-bit) weights"),
            "market": C.choice("market", ["global", "china"], s.market, width="200px"),
            "cloud_pricing": C.choice("cloud price", ["on-demand", "committed-1y", "committed-3y", "lowest"],
                                      s.cloud_pricing, width="240px"),
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
        self.bind_same("workload", "model", "precision", "deployment", "n_devices", "time_target_days",
                     "latency_target_ms", "search_configurations", "allow_lower_precision", "exclude_unknown",
                     "market", "cloud_pricing", "finetune_method")
        self.bind("ttft_target_ms", "ttft_target_ms", lambda v: v or None, lambda v: v or 0.0)
        self.bind("budget_usd", "budget_usd", lambda v: v or None, lambda v: v or 0.0)
        self.bind("power_envelope_w", "power_envelope_w", lambda v: v or None, lambda v: v or 0.0)
        self.sensitivity_button = W.Button(description="Check sensitivity", icon="balance-scale",
                                           layout=W.Layout(width="180px"))
        self.sensitivity_button.on_click(lambda _: self.run_sensitivity())
        self.sensitivity_note = W.HTML()
        self.sensitivity = None
        # the way forward: one button per change that would admit devices (filled when few pass)
        self.forward_box = W.VBox()
        self.forward = None
        # filled by run_sensitivity(), not by every control change (it takes seconds)
        self.figure_outputs["tornado"] = FigureOutput()
        self.table_outputs["sensitivity"] = W.HTML()
        # made before the first compute, so a failing first compute still lays out (a message, not Voilà's error page)
        self.figure_outputs["breakdown"] = FigureOutput()
        # the decision page a buyer signs (select.decision_summary, rendered by accelkit.decision_page): first
        self.decision_page = HTMLOutput()
        for name in ("shortlist", "unverified", "excluded"):
            self.table_outputs[name] = HTMLOutput()
        self.start()
        if run_sensitivity:
            self.run_sensitivity()

    def _weights(self):
        return {k: self.controls[f"w_{k}"].value for k in select.CRITERIA}

    def _catalog(self):
        prices = parse_prices(self.controls["quoted_prices"].value, self.base_catalog)
        if not prices:
            return self.base_catalog, prices
        catalog = self.base_catalog.copy()
        catalog["price_quoted"] = False
        for name, usd in prices.items():
            row = catalog["name"] == name
            catalog.loc[row, ["price_usd", "price_low_usd", "price_high_usd"]] = usd
            catalog.loc[row, "price_quoted"] = True
        return catalog, prices

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group("Job", [c["workload"], c["model"], c["precision"], c["deployment"], c["finetune_method"]]),
            C.group("Constraints", [c["n_devices"], c["time_target_days"], c["latency_target_ms"], c["ttft_target_ms"],
                                    c["budget_usd"], c["power_envelope_w"], c["market"], c["cloud_pricing"],
                                    c["quoted_prices"]]),
            C.group("Search", [c["search_configurations"], c["allow_lower_precision"], c["exclude_unknown"]]),
            C.group("Weights", [c[f"w_{k}"] for k in select.CRITERIA]),
        )
        return W.VBox([W.HTML(CSS), self.decision_page, boxes, self.message, self.summary, self.forward_box, W.HTML("<h4>Shortlist</h4>"),
                       t["shortlist"],
                       f["breakdown"], W.HTML("<h4>What would change the answer</h4>"),
                       W.HBox([self.sensitivity_button, self.sensitivity_note]), f["tornado"], t["sensitivity"],
                       W.HTML("<h4>Cannot be verified: a figure a limit needs is unknown</h4>"), t["unverified"],
                       W.HTML("<h4>Excluded, and why</h4>"), t["excluded"], self.save_box()])

    def compute(self):
        s = self.scenario
        catalog, prices = self._catalog()
        weights = self._weights()
        ranked = select.rank(s, catalog, weights)
        short = ranked[ranked["status"] == "shortlisted"]
        unverified = ranked[ranked["status"] == "cannot verify"]
        excluded = ranked[ranked["status"] == "excluded"]
        m = sizing.model_of(s)
        training = s.workload in sizing.TRAINING_WORKLOADS
        stable = select.rank_stability(s, catalog, weights, ranked=ranked) if len(short) > 1 else None
        verdict = select.headline(ranked, stable)
        summary = [verdict["text"]]
        if short.empty:
            if len(excluded):
                counts = excluded["excluded_because"].str.split(":").str[0].str.replace(r"\b\d[\d,.]*", "N",
                                                                                       regex=True)
                summary.append(f"For {s.workload} of {m['name']}, the most common reason a device fails: "
                               f"{counts.value_counts().index[0]}. Relax that limit.")
        else:
            top = short.iloc[0]
            summary.append(f"Recommendation for {s.workload} of {m['name']} ({s.precision}, {s.deployment}): "
                           f"{top['name']} -- {top['reason']}.")
            summary.append(plan_words(top, s))
            for _, other in short.iloc[1:3].iterrows():
                summary.append(f"Runner-up: {other['name']} ({other['score']:.0f} vs {top['score']:.0f} points) -- "
                               f"{plan_words(other, s)}")
            summary.append(f"{len(short)} device(s) shortlisted, {len(unverified)} cannot be verified, "
                           f"{len(excluded)} excluded by a hard limit.")
            if stable is not None:
                shares = ", ".join(f"{n} {v:.0%}" for n, v in zip(stable["name"], stable["first_share"]) if v > 0)
                summary.append(f"Drawn 500 times over the projection's and the prices' ranges, first place goes to: "
                               f"{shares}.")
        page = select.decision_summary(s, ranked, stable, catalog=catalog, weights=weights, quoted_prices=prices)
        if prices:
            summary.append("Using quoted prices for " + ", ".join(f"{k} (${v:,.0f})" for k, v in prices.items()) + ".")
        rows = short.to_dict("records")
        money = "rent" if s.deployment == "cloud" else "buy"
        shown = pd.DataFrame({
            "rank": short["rank"], "device": short["name"].map(html.escape), "score": short["score"],
            "configuration": [_configuration(r, training) for r in rows],
            "projected (range)": [_projected_cell(r, training) for r in rows],
            money: short["purchase_unit"].map(lambda x: html.escape(str(x).removeprefix("rent "))),
            f"total, {('the run' if training else f'{s.horizon_months} months')} (range)": [
                range_text(r["total_cost_usd"], r["total_cost_usd_low"], r["total_cost_usd_high"], "${:,.0f}",
                           "price unknown") for r in rows],
            "time": short["score_time"], "cost": short["score_cost"], "efficiency": short["score_efficiency"],
            "ecosystem": short["score_ecosystem"], "headroom": short["score_headroom"],
            "risks": [f'<span title="{html.escape(src, quote=True)}">{html.escape(text)}</span>' if text else "—"
                      for text, src in zip(short["purchase_risks"], short["purchase_risk_sources"])],
            "why": short["reason"].map(html.escape),
        })
        forward = select.nearest_feasible(s, catalog, weights) if len(short) <= 1 else None
        if forward is not None and forward.empty:
            summary.append("No single change of precision, devices, targets, power, budget or deployment admits "
                           "another device.")
        fmt = {"rank": "{:.0f}".format, "score": "{:.1f}".format,
               **{k: "{:.2f}".format for k in ("time", "cost", "efficiency", "ecosystem", "headroom")}}
        uv = unverified[["name", "vendor", "unknown_figure", "would_settle"]]
        uv.columns = ["device", "vendor", "unknown", "what would settle it"]
        ex = excluded[["name", "vendor", "excluded_because"]]
        ex.columns = ["device", "vendor", "excluded because"]
        return {
            "ranked": ranked, "weights": weights, "summary": summary, "forward": forward, "headline": verdict,
            "decision_summary": page,
            "figures": {"breakdown": plots.score_breakdown_chart(ranked, weights)},
            "tables": {"shortlist": table_html(shown, fmt, escape=False), "unverified": table_html(uv, max_rows=80),
                       "excluded": table_html(ex, max_rows=80)},
        }

    def render(self, result):
        self.decision_page.value = decision_page_html(result["decision_summary"])
        self._show_forward(result.get("forward"))
        if self.sensitivity is not None:
            self.sensitivity_note.value = '<span class="ak-note">inputs changed: click to recompute</span>'

    def refresh(self):
        result = super().refresh()
        if result is None:  # an input error: no way forward, and no decision page, from stale figures
            self._show_forward(None)
            self.decision_page.value = ""
        return result

    def _show_forward(self, forward):
        """Buttons for the smallest changes that admit devices; a click applies one."""
        self.forward = forward
        if forward is None or forward.empty:
            self.forward_box.children = ()
            return
        buttons = []
        for _, row in forward.iterrows():
            admits = ", ".join(row["admits"][:3]) + (" …" if len(row["admits"]) > 3 else "")
            button = W.Button(description=row["change"], layout=W.Layout(width="auto"),
                              tooltip=f"admits {admits}; winner {row['best']}")
            button.add_class("ak-forward")
            button.on_click(lambda _, field=row["field"], value=row["value"]: self.apply_change(field, value))
            buttons.append(W.HBox([button, W.HTML(f'<span class="ak-note">admits {html.escape(admits)}</span>')]))
        self.forward_box.children = (W.HTML("<h4>The way forward: one change that admits devices</h4>"), *buttons)

    def apply_change(self, field, value):
        """Apply one of :func:`accelkit.select.nearest_feasible`'s changes (what a button does)."""
        control = next((name for name, (f, _, _) in self.bindings.items() if f == field), None)
        if control is not None:
            self.set(**{control: self.bindings[control][2](value)})
        else:
            setattr(self.scenario, field, value)
            self.refresh()

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
        shown = summary[["assumption", "base", "winner_at_base", "runner_up", "margin_at_base", "margin_min",
                         "switches_at", "new_winner"]].copy()
        shown.columns = ["assumption", "base value", "winner", "runner-up", "lead [points]", "smallest lead in range",
                         "order flips at", "new winner"]
        self.table_outputs["sensitivity"].value = table_html(
            shown, {"base value": "{:g}".format, "order flips at": "{:g}".format, "lead [points]": "{:.1f}".format,
                    "smallest lead in range": "{:.1f}".format})
        if self.result is not None:
            self.result["figures"]["tornado"] = self.figure_outputs["tornado"].figure
            self.result["sensitivity"] = summary
        return summary

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        ranked = self.result["ranked"]
        short = ranked[ranked["status"] == "shortlisted"]
        lines = [f"shortlisted: {len(short)}", f"cannot verify: {int((ranked['status'] == 'cannot verify').sum())}",
                 f"excluded: {int((ranked['status'] == 'excluded').sum())}", f"headline: {self.result['headline']['text']}"]
        for i, (_, row) in enumerate(short.head(3).iterrows(), 1):
            lines.append(f"#{i}: {row['name']} ({row['score']:.1f}); {plan_words(row, self.scenario)}")
        if self.sensitivity is not None:
            for _, row in self.sensitivity[0].iterrows():
                at = (f"{row['switches_at']:g} -> {row['new_winner']}" if row["switches_at"] == row["switches_at"]
                      else f"no switch (lead >= {row['margin_min']:.1f})")
                lines.append(f"sensitivity {row['assumption']}: {at}")
        return "\n".join(lines)

