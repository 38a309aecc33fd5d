"""Chapter 09: the decision -- a ranked shortlist with reasons, and what would change it."""

from __future__ import annotations

import html
import re

import ipywidgets as W
import pandas as pd

from .. import plots, select, sizing
from ..catalog import load_catalog
from ..decision_page import summary_html as decision_page_html
from ..i18n import DEFAULT_LANGUAGE, N_, _, language
from ..names import display_name, vendor_name
from ..select import plan_words
from ..select.robustness import assumption_label
from ..select.summary import CRITERION_NAMES, DEPLOYMENT_NAMES, WORKLOAD_NAMES, _unrented, money_range, usd_words
from . import controls as C
from ._base import CSS, FigureOutput, HTMLOutput, Panel, error_html, range_text, table_html

__all__ = ["DecisionPanel", "parse_prices", "plan_words"]


#: what a device is counted in, per work unit (``select.rank``'s ``work_unit``)
_UNITS = {"tokens": N_("token"), "frames": N_("frame"), "requests": N_("request")}


def _stack_names():
    """The software stacks a scenario may name (``data/stacks.csv``), in the table's order."""
    from ..projection.stacks import load_stacks

    return load_stacks()["stack"].tolist()


def _options(names, values):
    """(label, value) pairs of a dropdown: the label translated, the value the scenario's (English)."""
    return [(_(names[v]), v) for v in values]


def _total_cell(row):
    """The total over the horizon with its range, for the shortlist table."""
    if language() == DEFAULT_LANGUAGE:
        return range_text(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"], "${:,.0f}",
                          "price unknown")
    return money_range(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"],
                       _("price unknown"), collapse=False)


def _projected_cell(row, training):
    """The projected time with its range; the efficiency source on hover (a title attribute)."""
    if training:
        text = _("{days} days").format(days=range_text(row["days_on_n"], row["days_on_n_low"], row["days_on_n_high"],
                                                       "{:,.1f}"))
    else:
        unit = _(_UNITS.get(row["work_unit"], N_("unit")))
        text = _("{latency} ms/{unit}").format(
            latency=range_text(row["latency_ms"], row["latency_ms_low"], row["latency_ms_high"], "{:,.3g}"), unit=unit)
    source = html.escape(_("efficiency: {source}").format(source=row["efficiency_source"])
                         + (" | " + _("engine: {record}").format(record=row["engine_track_record"])
                            if row.get("engine_track_record") else ""), quote=True)
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

    title = N_("Decision")

    def __init__(self, scenario=None, catalog=None, quoted_prices="", run_sensitivity=True):
        super().__init__(scenario)
        s = self.scenario
        self.base_catalog = catalog if catalog is not None else load_catalog()
        weights = {**select.DEFAULT_WEIGHTS, **(s.weights or {})}
        pricing = {"on-demand": N_("on-demand"), "committed-1y": N_("committed-1y"),
                   "committed-3y": N_("committed-3y"), "lowest": N_("lowest")}
        markets = {"global": N_("global"), "china": N_("china")}
        self.controls = {
            "workload": C.choice(_("workload"), _options(WORKLOAD_NAMES, ["training", "fine-tuning", "inference"]),
                                 s.workload, width="210px"),
            "model": C.model_picker(s.model if s.model != "custom" else "Llama-2 7B", description=_("model"),
                                    include_custom=False),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"],
                                            description=_("precision")),
            "deployment": C.choice(_("deployment"), _options(DEPLOYMENT_NAMES, ["cloud", "on-prem", "edge"]),
                                   s.deployment, width="200px"),
            "stack": C.choice(_("software stack"), [(_("each device's default"), "")] + [(name, name) for name in
                                                                                          _stack_names()],
                              s.stack or "", width="300px",
                              tooltip=_("the stack the inference figures assume (data/stacks.csv); a device it does "
                                        "not run on is excluded, saying so")),
            "n_devices": C.integer(_("devices allowed"), s.n_devices, _("count"), width="240px"),
            "time_target_days": C.number(_("training within"), s.time_target_days, _("days"), width="240px"),
            "latency_target_ms": C.number(_("latency target"), s.latency_target_ms, _("ms per token"), width="280px"),
            "ttft_target_ms": C.number(_("first-token target"), s.ttft_target_ms or 0.0, _("ms, 0 = none"),
                                       width="300px"),
            "search_configurations": C.toggle(_("search each device's best configuration"), s.search_configurations,
                                              _("ZeRO stage, micro-batch, tensor parallel, batch under the latency "
                                                "targets, and precision when lower ones are allowed")),
            "allow_lower_precision": C.toggle(_("allow lower precisions (fp8, int8, int4)"), s.allow_lower_precision,
                                              _("let the search quantise: faster and smaller, with a quality risk")),
            "exclude_unknown": C.toggle(_("exclude devices with an unknown criterion"), s.exclude_unknown,
                                        _("off: a device with an unknown figure that is not a limit (its power, its "
                                          "ecosystem fit) is scored on the criteria that are known")),
            "finetune_method": C.choice(_("fine-tuning"), [(_("full"), "full"), ("LoRA", "lora"),
                                                           (_("QLoRA (4-bit base)"), "qlora")],
                                        s.finetune_method, width="260px",
                                        tooltip=_("for fine-tuning: train every weight, or small adapters on frozen "
                                                  "(QLoRA: 4-bit) weights")),
            "market": C.choice(_("market"), _options(markets, ["global", "china"]), s.market, width="200px"),
            "cloud_pricing": C.choice(_("cloud price"), _options(pricing, ["on-demand", "committed-1y", "committed-3y",
                                                                            "lowest"]),
                                      s.cloud_pricing, width="240px"),
            "budget_usd": C.number(_("budget"), s.budget_usd or 0.0, _("USD, 0 = none"), width="260px"),
            "power_envelope_w": C.number(_("power envelope"), s.power_envelope_w or 0.0, _("W per device, 0 = none"),
                                         width="320px"),
            "quoted_prices": W.Textarea(value=quoted_prices, description=_("quoted prices"),
                                        placeholder="H100 SXM: 30000\nInstinct MI300X: 20000",
                                        layout=W.Layout(width="330px", height="70px"), style=C.STYLE),
        }
        for k in select.CRITERIA:
            self.controls[f"w_{k}"] = C.slider(_(CRITERION_NAMES.get(k, k)), weights.get(k, 1.0), 0.0, 5.0, 0.25,
                                               _("weight"), tooltip=_(select.CRITERIA[k][0]), width="320px")
        self.bind_same("workload", "model", "precision", "deployment", "n_devices", "time_target_days",
                     "latency_target_ms", "search_configurations", "allow_lower_precision", "exclude_unknown",
                     "market", "cloud_pricing", "finetune_method")
        self.bind("ttft_target_ms", "ttft_target_ms", lambda v: v or None, lambda v: v or 0.0)
        self.bind("stack", "stack", lambda v: v or None, lambda v: v or "")
        self.bind("budget_usd", "budget_usd", lambda v: v or None, lambda v: v or 0.0)
        self.bind("power_envelope_w", "power_envelope_w", lambda v: v or None, lambda v: v or 0.0)
        self.sensitivity_button = W.Button(description=_("Check sensitivity"), icon="balance-scale",
                                           layout=W.Layout(width="180px"))
        self.sensitivity_button.on_click(lambda _b: self.run_sensitivity())
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
            C.group(_("Job"), [c["workload"], c["model"], c["precision"], c["deployment"], c["finetune_method"],
                               c["stack"]]),
            C.group(_("Constraints"), [c["n_devices"], c["time_target_days"], c["latency_target_ms"], c["ttft_target_ms"],
                                    c["budget_usd"], c["power_envelope_w"], c["market"], c["cloud_pricing"],
                                    c["quoted_prices"]]),
            C.group(_("Search"), [c["search_configurations"], c["allow_lower_precision"], c["exclude_unknown"]]),
            C.group(_("Weights"), [c[f"w_{k}"] for k in select.CRITERIA]),
        )

        def heading(text):
            return W.HTML(f"<h4>{html.escape(text)}</h4>")

        return W.VBox([W.HTML(CSS), self.decision_page, boxes, self.message, self.summary, self.forward_box,
                       heading(_("Shortlist")), t["shortlist"],
                       f["breakdown"], heading(_("What would change the answer")),
                       W.HBox([self.sensitivity_button, self.sensitivity_note]), f["tornado"], t["sensitivity"],
                       heading(_("Cannot be verified: a figure a limit needs is unknown")), t["unverified"],
                       heading(_("Excluded, and why")), t["excluded"], self.save_box()])

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
        workload = _(WORKLOAD_NAMES[s.workload]) if s.workload in WORKLOAD_NAMES else s.workload
        if short.empty:
            if len(excluded):
                counts = excluded["excluded_because"].str.split(":").str[0].str.replace(r"\b\d[\d,.]*", "N",
                                                                                       regex=True)
                summary.append(_("For {workload} of {model}, the most common reason a device fails: {reason}. "
                                 "Relax that limit.").format(workload=workload, model=m["name"],
                                                             reason=counts.value_counts().index[0]))
        else:
            top = short.iloc[0]
            deployment = _(DEPLOYMENT_NAMES[s.deployment]) if s.deployment in DEPLOYMENT_NAMES else s.deployment
            summary.append(_("Recommendation for {workload} of {model} ({precision}, {deployment}): {device} -- "
                             "{reason}.").format(workload=workload, model=m["name"], precision=s.precision,
                                                 deployment=deployment, device=display_name(top["name"]),
                                                 reason=top["reason"]))
            summary.append(plan_words(top, s))
            for _i, other in short.iloc[1:3].iterrows():
                summary.append(_("Runner-up: {device} ({score} vs {top_score} points) -- {plan}").format(
                    device=display_name(other["name"]), score=f"{other['score']:.0f}", top_score=f"{top['score']:.0f}",
                    plan=plan_words(other, s)))
            summary.append(_("{shortlisted} device(s) shortlisted, {unverified} cannot be verified, {excluded} "
                             "excluded by a hard limit.").format(shortlisted=len(short), unverified=len(unverified),
                                                                 excluded=len(excluded)))
            if stable is not None:
                shares = ", ".join(f"{display_name(n)} {v:.0%}" for n, v in zip(stable["name"], stable["first_share"])
                                   if v > 0)
                summary.append(_("Drawn 500 times over the projection's and the prices' ranges, first place goes "
                                 "to: {shares}.").format(shares=shares))
        page = select.decision_summary(s, ranked, stable, catalog=catalog, weights=weights, quoted_prices=prices)
        if prices:
            summary.append(_("Using quoted prices for {prices}.").format(
                prices=", ".join(_("{device} ({price})").format(device=display_name(k), price=usd_words(v))
                                 for k, v in prices.items())))
        rows = short.to_dict("records")
        action = _("rent") if s.deployment == "cloud" else _("buy")
        horizon = _("the run") if training else _("{months} months").format(months=s.horizon_months)
        col = {k: _(k) for k in (N_("rank"), N_("device"), N_("score"), N_("configuration"), N_("projected (range)"),
                                 N_("risks"), N_("why"))}
        crit = {k: _(CRITERION_NAMES[k]) for k in ("time", "cost", "efficiency", "ecosystem", "headroom")}
        shown = pd.DataFrame({
            col["rank"]: short["rank"], col["device"]: short["name"].map(display_name).map(html.escape),
            col["score"]: short["score"],
            col["configuration"]: [_configuration(r, training) for r in rows],
            col["projected (range)"]: [_projected_cell(r, training) for r in rows],
            action: short["purchase_unit"].map(lambda x: html.escape(_unrented(x))),
            _("total, {horizon} (range)").format(horizon=horizon): [_total_cell(r) for r in rows],
            crit["time"]: short["score_time"], crit["cost"]: short["score_cost"],
            crit["efficiency"]: short["score_efficiency"], crit["ecosystem"]: short["score_ecosystem"],
            crit["headroom"]: short["score_headroom"],
            col["risks"]: [f'<span title="{html.escape(src, quote=True)}">{html.escape(text)}</span>' if text else "—"
                           for text, src in zip(short["purchase_risks"], short["purchase_risk_sources"])],
            col["why"]: short["reason"].map(html.escape),
        })
        forward = select.nearest_feasible(s, catalog, weights) if len(short) <= 1 else None
        if forward is not None and forward.empty:
            summary.append(_("No single change of precision, devices, targets, power, budget or deployment admits "
                             "another device."))
        fmt = {col["rank"]: "{:.0f}".format, col["score"]: "{:.1f}".format,
               **{crit[k]: "{:.2f}".format for k in ("time", "cost", "efficiency", "ecosystem", "headroom")}}
        # the devices and vendors by the names the reader knows (the frames keep the catalogue's)
        uv = unverified[["name", "vendor", "unknown_figure", "would_settle"]].assign(
            name=unverified["name"].map(display_name), vendor=unverified["vendor"].map(vendor_name))
        uv.columns = [_("device"), _("vendor"), _("unknown"), _("what would settle it")]
        ex = excluded[["name", "vendor", "excluded_because"]].assign(
            name=excluded["name"].map(display_name), vendor=excluded["vendor"].map(vendor_name))
        ex.columns = [_("device"), _("vendor"), _("excluded because")]
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
            note = html.escape(_("inputs changed: click to recompute"))
            self.sensitivity_note.value = f'<span class="ak-note">{note}</span>'

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
        for _i, row in forward.iterrows():
            admits = ", ".join(display_name(n) for n in row["admits"][:3]) + (" …" if len(row["admits"]) > 3 else "")
            button = W.Button(description=row["change"], layout=W.Layout(width="auto"),
                              tooltip=_("admits {devices}; winner {device}").format(devices=admits,
                                                                                    device=display_name(row["best"])))
            button.add_class("ak-forward")
            button.on_click(lambda _b, field=row["field"], value=row["value"]: self.apply_change(field, value))
            note = html.escape(_("admits {devices}").format(devices=admits))
            buttons.append(W.HBox([button, W.HTML(f'<span class="ak-note">{note}</span>')]))
        heading = html.escape(_("The way forward: one change that admits devices"))
        self.forward_box.children = (W.HTML(f"<h4>{heading}</h4>"), *buttons)

    def apply_change(self, field, value):
        """Apply one of :func:`accelkit.select.nearest_feasible`'s changes (what a button does)."""
        control = next((name for name, (f, _g, _s) in self.bindings.items() if f == field), None)
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
            catalog, _quoted = self._catalog()
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
        # the assumptions by their labels, the devices by the names the reader knows
        shown["assumption"] = shown["assumption"].map(assumption_label)
        for column in ("winner_at_base", "runner_up", "new_winner"):
            shown[column] = shown[column].map(display_name)
        names = [_("assumption"), _("base value"), _("winner"), _("runner-up"), _("lead [points]"),
                 _("smallest lead in range"), _("order flips at"), _("new winner")]
        shown.columns = names
        self.table_outputs["sensitivity"].value = table_html(
            shown, {names[1]: "{:g}".format, names[6]: "{:g}".format, names[4]: "{:.1f}".format,
                    names[5]: "{:.1f}".format})
        if self.result is not None:
            self.result["figures"]["tornado"] = self.figure_outputs["tornado"].figure
            self.result["sensitivity"] = summary
        return summary

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        ranked = self.result["ranked"]
        short = ranked[ranked["status"] == "shortlisted"]
        n_unverified = int((ranked["status"] == "cannot verify").sum())
        n_excluded = int((ranked["status"] == "excluded").sum())
        lines = [_("shortlisted: {n}").format(n=len(short)), _("cannot verify: {n}").format(n=n_unverified),
                 _("excluded: {n}").format(n=n_excluded),
                 _("headline: {text}").format(text=self.result["headline"]["text"])]
        for i, (_i, row) in enumerate(short.head(3).iterrows(), 1):
            lines.append(f"#{i}: {row['name']} ({row['score']:.1f}); {plan_words(row, self.scenario)}")
        if self.sensitivity is not None:
            for _i, row in self.sensitivity[0].iterrows():
                at = (f"{row['switches_at']:g} -> {row['new_winner']}" if row["switches_at"] == row["switches_at"]
                      else _("no switch (lead >= {lead})").format(lead=f"{row['margin_min']:.1f}"))
                lines.append(_("sensitivity {assumption}: {change}").format(assumption=row["assumption"], change=at))
        return "\n".join(lines)

