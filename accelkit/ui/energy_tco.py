"""Chapter 05: energy efficiency and total cost of ownership (edge vs cloud)."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from .. import claims, energy, plots, projection, sizing, units
from ..catalog import int8_dense_estimate, load_catalog
from ..i18n import N_, _, language
from ..numbers import UNKNOWN, people, people_format
from ..projection.for_scenario import scenario_stack
from ..select.reasons import source_words
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html

__all__ = ["EnergyPanel", "TCOPanel"]

#: the words of these panels explained on tap (each a term or alias in data/glossary.csv)
ENERGY_TERMS = ("PUE", "TDP", "CO2e", "MFU", "T(FL)OP/s", "TFLOP/s", "achievable matmul rate", "dense",
                "device-hours", "int8", "bf16", "fp8")
TCO_TERMS = ("TCO", "break-even", "pays for itself", "discount rate", "on demand", "utilisation", "fps",
             "latency target", "int8", "DLA", "TDP")

#: the scenario's words, translated where shown
_WORKLOAD_WORDS = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference")}
_DEPLOYMENT_WORDS = {"cloud": N_("in the cloud"), "on-prem": N_("on-prem"), "edge": N_("at the edge")}
_UNIT_WORDS = {"tokens": N_("tokens"), "frames": N_("frames"), "requests": N_("requests"), "samples": N_("samples")}
_STATUS_WORDS = {"shortlisted": N_("shortlisted"), "cannot verify": N_("cannot verify"), "excluded": N_("excluded")}
#: the latency claim's paths and components (accelkit.claims.latency_edge_vs_cloud; the data keep the English,
#: which is also what an English page shows)
_PATH_WORDS = {"cloud": N_("cloud"), "edge": N_("edge")}
_COMPONENT_WORDS = {"network round trip": N_("network round trip"), "frame upload": N_("frame upload"),
                    "server overhead": N_("server overhead (decode, queueing, pre/post-processing)"),
                    "local overhead": N_("local overhead")}
_INFERENCE_ON = "inference on "


def _latency_words(latency):
    """The latency table as shown: its paths and components in the language in use."""
    if language() == "en":
        return latency

    def component(text):
        if text.startswith(_INFERENCE_ON):
            return _("inference on {device}").format(device=text[len(_INFERENCE_ON):])
        return _(_COMPONENT_WORDS[text]) if text in _COMPONENT_WORDS else text

    return latency.assign(path=[_(_PATH_WORDS.get(p, p)) for p in latency["path"]],
                          component=[component(c) for c in latency["component"]])


class EnergyPanel(Panel):
    """Compute per watt across the catalogue, and the energy of the scenario's job."""

    title = N_("Energy efficiency")

    def __init__(self, scenario=None, catalog=None, grid_kg_per_kwh=0.4):
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        names = set(self.catalog["name"])
        from .demand import _default_devices

        devices = [d for d in (s.devices or _default_devices(s, self.catalog)) if d in names]
        self.controls = {
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            "segments": C.multi_choice(_("segment"), ["datacenter", "workstation", "edge", "consumer"], s.segments, rows=4),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "pue": C.number("PUE", s.pue, "", width="150px", tooltip=T.glossary.define("PUE", long=True)),
            "grid_kg_per_kwh": C.number(_("grid intensity"), grid_kg_per_kwh, "kg CO2e/kWh", width="290px",
                                        tooltip=_("carbon intensity of the electricity; ~0.02 (hydro/nuclear) to ~0.8 "
                                                  "(coal)")),
            "devices": C.device_picker(self.catalog, devices),
        }
        self.bind_same("precision", "pue")
        C.mfu_bindings(self)
        self.bind_list("segments", "devices")
        self.words = T.WordsBox(ENERGY_TERMS)
        self.start()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], ENERGY_TERMS)

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group(_("Efficiency"), [c["precision"], c["segments"], c["own_mfu"], c["utilization"]]),
            C.group(_("Your job"), [c["devices"], c["pue"], c["grid_kg_per_kwh"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["efficiency"], t["claims"],
                       f["job_energy"], t["job_energy"], self.words.widget])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["grid_kg_per_kwh"] >= 0:
            raise ValueError(_("grid intensity must be kg CO2e per kWh >= 0; got {value}").format(
                value=c["grid_kg_per_kwh"]))
        shown = self.catalog if not c["segments"] else self.catalog[self.catalog["segment"].isin(c["segments"])]
        summary = []
        claim_table, claim_verdict = claims.efficiency_claims(self.catalog)
        summary.append(claim_verdict)

        table = sizing.per_device(s, self.catalog, list(c["devices"]) or None)
        training = s.workload in sizing.TRAINING_WORKLOADS
        # serving: the devices the decision counts (the rate and the memory) for the hours a day the scenario serves
        hours = table["device_hours"] if training else (
            table["devices_needed"] * s.hours_per_day * units.DAYS_PER_YEAR / 12)
        # only where both the hours and the TDP are known (an edge box that cannot run the job has no hours)
        known_hours = np.isfinite(hours.astype(float)) & table["tdp_w"].notna()
        table["energy_kwh"] = np.nan
        if known_hours.any():
            table.loc[known_hours, "energy_kwh"] = energy.job_energy_kwh(
                table.loc[known_hours, "tdp_w"], hours[known_hours] * units.SECONDS_PER_HOUR, pue=s.pue)
        table["co2_kg"] = energy.co2_kg(table["energy_kwh"], c["grid_kg_per_kwh"]) if known_hours.any() else np.nan
        table["device_hours"] = hours
        # a device the model never fits on has no energy figure
        known = table[table["feasible"].astype(bool) & np.isfinite(table["devices_needed"].astype(float))
                      & np.isfinite(table["energy_kwh"].astype(float))]
        speed = _("the projected speed") if s.utilization is None else _("your MFU of {share}").format(
            share=f"{s.utilization:.0%}")
        what = _("the training job") if training else _("a month of serving")
        model = sizing.model_of(s)["name"]
        if not known.empty:
            best = known.loc[known["energy_kwh"].idxmin()]
            worst = known.loc[known["energy_kwh"].idxmax()]
            summary.append(_(
                "Energy of {what} ({model}, {precision}, at {speed}, PUE {pue}): {best_kwh} kWh on {best} up to "
                "{worst_kwh} kWh on {worst}; at {grid} kg/kWh that is {best_t} to {worst_t} t CO2e. TDP is an upper "
                "bound on average draw; measure with NVML (chapter 08) for a tighter figure.").format(
                what=what, model=model, precision=s.precision, speed=speed, pue=f"{s.pue:g}",
                best_kwh=f"{best['energy_kwh']:,.0f}", best=best["name"], worst_kwh=f"{worst['energy_kwh']:,.0f}",
                worst=worst["name"], grid=f"{c['grid_kg_per_kwh']:g}",
                best_t=f"{best['co2_kg'] / units.KG_PER_TONNE:,.2f}", worst_t=f"{worst['co2_kg'] / units.KG_PER_TONNE:,.2f}"))
        col = {"int8": "int8_tops"}.get(s.precision, f"{s.precision}_tflops")
        eff = shown.dropna(subset=[col, "tdp_w"])
        if not eff.empty:
            per_w = eff[col] / eff["tdp_w"]
            top = eff.loc[per_w.idxmax()]
            if s.precision in projection.COMPUTE_PRECISIONS:
                got = projection.matmul_flops(top["name"], s.precision, self.catalog, with_range=True)
                line = _("Highest {precision} peak per watt among {n} devices: {name}, {per_w} T(FL)OP/s per W; its "
                         "achievable matmul rate gives {achieved} per W (efficiency: {source}).").format(
                    precision=s.precision, n=len(eff), name=top["name"], per_w=f"{per_w.max():.2f}",
                    achieved=f"{got['matmul_flops'] / units.TERA / top['tdp_w']:.2f}",
                    source=source_words(got["source"]))
            else:
                line = _("Highest {precision} peak per watt among {n} devices: {name}, {per_w} T(FL)OP/s per W.").format(
                    precision=s.precision, n=len(eff), name=top["name"], per_w=f"{per_w.max():.2f}")
            summary.append(line)
        job = known[["name", "device_hours", "tdp_w", "energy_kwh", "co2_kg"]].sort_values("energy_kwh")
        job.columns = [_("device"), _("device-hours"), _("TDP [W]"), _("energy [kWh]"), "CO2e [kg]"]
        claim_shown = claim_table[["device", "article_tflops", "article_w", "article_per_w", "catalogue_figure",
                                   "catalogue_w", "catalogue_per_w", "basis"]]
        claim_shown.columns = [_("device"), _("article T(FL)OP/s"), _("article W"), _("article per W"),
                               _("datasheet T(FL)OP/s"), _("datasheet W"), _("datasheet per W"), _("basis")]
        fmt = {k: "{:,.2f}".format for k in (_("article per W"), _("datasheet per W"))}
        return {
            "table": table, "claims": claim_table, "summary": summary,
            "figures": {
                "efficiency": plots.efficiency_bar(shown, s.precision),
                "job_energy": plots.job_energy_chart(known, _("Energy of {what} per device ({model})").format(
                    what=what, model=model)),
            },
            "tables": {
                "claims": table_html(claim_shown, fmt),
                "job_energy": table_html(job, {_("device-hours"): people_format(), _("energy [kWh]"): people_format(),
                                               "CO2e [kg]": people_format(), _("TDP [W]"): "{:,.0f}".format}),
            },
        }

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        s, r = self.scenario, self.result
        m = sizing.model_of(s)
        lines = [f"model: {m['name']} ({m['params']:.3g} parameters)", f"deployment: {s.deployment}",
                 f"A100 TFLOP/s per W (article 0.78): {r['claims'].loc[0, 'catalogue_per_w']:.2f}"]
        known = r["table"].dropna(subset=["energy_kwh"]).set_index("name")
        for name in ("H100 SXM", "A100 80GB SXM"):
            if name in known.index:
                lines.append(f"energy on {name} [kWh]: {known.loc[name, 'energy_kwh']:,.0f}")
        return "\n".join(lines)


def _edge_devices(catalog):
    int8, _ = int8_dense_estimate(catalog)
    return catalog.loc[(catalog["segment"] == "edge") & int8.notna(), "name"].tolist()


def _cloud_devices(catalog):
    int8, _ = int8_dense_estimate(catalog)
    return catalog.loc[(catalog["segment"] == "datacenter") & int8.notna(), "name"].tolist()


class TCOPanel(Panel):
    """What the scenario costs over its horizon (the decision's figures), and -- for a scenario that
    serves an image model -- the source text's edge-vs-cloud cameras calculator: cumulative cost,
    break-even and the latency budget."""

    title = N_("Edge vs cloud TCO")

    def __init__(self, scenario=None, catalog=None, model=None, edge_device="Jetson Orin Nano Super 8GB",
                 edge_unit_price_usd=None, cloud_device="T4", cloud_usd_per_hour=None, maintenance_per_year=0.10,
                 network_usd_per_month=0.0, discount_rate_per_year=0.0, rtt_ms=40.0, uplink_mbps=20.0,
                 frame_kb=150.0, server_overhead_ms=20.0, edge_overhead_ms=10.0, utilization=None, cameras=None):
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        # cameras: None follows the scenario (the calculator only for one that serves an image model); True
        # shows it anyway, labelled as the source text's example (the chapter opened without a scenario)
        self.cameras_example = cameras
        cameras = self._serves_vision() if cameras is None else bool(cameras)
        # the cameras calculator works on the scenario's own image model and utilisation when it serves one
        model = s.model if self._serves_vision() else (model or "YOLOv8s")
        if utilization is None:
            utilization = s.utilization if cameras and s.utilization is not None else 0.3
        edges, clouds = _edge_devices(self.catalog), _cloud_devices(self.catalog)
        edge_row = self.catalog.set_index("name").loc[edge_device] if edge_device in edges else None
        price = edge_unit_price_usd if edge_unit_price_usd is not None else (
            float(edge_row["price_usd"]) if edge_row is not None and edge_row["price_usd"] == edge_row["price_usd"] else 0.0)
        cloud_row = self.catalog.set_index("name").loc[cloud_device] if cloud_device in clouds else None
        hourly = cloud_usd_per_hour if cloud_usd_per_hour is not None else (
            float(cloud_row["cloud_usd_per_hour"]) if cloud_row is not None and
            cloud_row["cloud_usd_per_hour"] == cloud_row["cloud_usd_per_hour"] else 0.0)
        self.controls = {
            "streams": C.integer(_("streams"), s.streams, _("cameras"), width="200px"),
            "frames_per_s": C.number(_("frame rate"), s.frames_per_s, "fps", width="180px"),
            "model": C.model_picker(model, include_custom=False, kinds=["cnn", "vit"]),
            "utilization": C.slider(_("utilisation"), utilization, 0.05, 1.0, 0.05,
                                    tooltip=T.glossary.define("MFU", long=True)),
            "edge_device": C.choice(_("edge device"), edges, edge_device if edge_device in edges else edges[0],
                                    width="320px"),
            "edge_unit_price_usd": C.number(_("edge unit price"), price, "USD", width="240px",
                                            tooltip=_("list price per edge box (0 = not set)")),
            "maintenance_per_year": C.slider(_("edge maintenance"), maintenance_per_year, 0.0, 0.5, 0.01,
                                             _("of price/yr")),
            "cloud_device": C.choice(_("cloud GPU"), clouds, cloud_device if cloud_device in clouds else clouds[0],
                                     width="300px"),
            "cloud_usd_per_hour": C.number(_("cloud price"), hourly, _("USD/h per instance"), width="300px"),
            "network_usd_per_month": C.number(_("cloud network"), network_usd_per_month, _("USD/month"), width="260px",
                                              tooltip=_("uplink from the site to the cloud (cloud ingress itself is "
                                                        "free)")),
            "horizon_months": C.integer(_("horizon"), s.horizon_months, _("months"), width="190px"),
            "electricity_usd_per_kwh": C.number(_("electricity"), s.electricity_usd_per_kwh, "USD/kWh", width="230px"),
            "discount_rate_per_year": C.number(_("discount rate"), discount_rate_per_year, _("per year"), width="230px"),
            "rtt_ms": C.number(_("round trip"), rtt_ms, "ms", width="180px"),
            "uplink_mbps": C.number(_("uplink"), uplink_mbps, "Mbit/s", width="190px"),
            "frame_kb": C.number(_("frame size"), frame_kb, "kB", width="180px"),
            "server_overhead_ms": C.number(_("server overhead"), server_overhead_ms, "ms", width="220px"),
            "edge_overhead_ms": C.number(_("edge overhead"), edge_overhead_ms, "ms", width="210px"),
        }
        # registered before watch(): the price is in place when the panel recomputes
        self.controls["edge_device"].observe(self._bring_in_price, names="value")
        self.controls["cloud_device"].observe(self._bring_in_price, names="value")
        self.bind_same("streams", "frames_per_s", "horizon_months", "electricity_usd_per_kwh")
        self.cameras = cameras
        if self._serves_vision():
            self.bind_same("model")
        self.words = T.WordsBox(TCO_TERMS)
        self.body = W.VBox()
        self.start()

    def _serves_vision(self):
        """True when the scenario serves an image model: then the cameras calculator is its own."""
        from ..projection.for_scenario import is_vision_model

        return self.scenario.workload == "inference" and is_vision_model(self.scenario)

    def pull_scenario(self):
        """Bring in the shared scenario; the cameras calculator shows only while it serves an image model."""
        vision = self._serves_vision()
        self.cameras = vision if self.cameras_example is None else bool(self.cameras_example)
        self.bindings.pop("model", None)
        if vision:
            self.bind_same("model")
        super().pull_scenario()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TCO_TERMS)
        if self._widget is not None:
            self.body.children = self._body()

    def _body(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        money_box = C.group(_("Money"), [c["horizon_months"], c["electricity_usd_per_kwh"]])
        scenario_part = [W.HTML("<h4>" + html.escape(_("Your scenario over the horizon (the decision's figures)"))
                                + "</h4>"), t["scenario_cost"], f["scenario_cost"]]
        if not self.cameras or "compare" not in t:
            return [C.groups(money_box), self.message, self.summary] + scenario_part
        boxes = C.groups(
            C.group(_("Workload"), [c["streams"], c["frames_per_s"], c["model"], c["utilization"]]),
            C.group(_("Edge"), [c["edge_device"], c["edge_unit_price_usd"], c["maintenance_per_year"],
                                c["electricity_usd_per_kwh"]]),
            C.group(_("Cloud"), [c["cloud_device"], c["cloud_usd_per_hour"], c["network_usd_per_month"]]),
            C.group(_("Money"), [c["horizon_months"], c["discount_rate_per_year"]]),
            C.group(_("Latency"), [c["rtt_ms"], c["uplink_mbps"], c["frame_kb"], c["server_overhead_ms"],
                                   c["edge_overhead_ms"]]),
        )
        return ([boxes, self.message, self.summary] + scenario_part
                + [W.HTML("<h4>" + html.escape(_("Edge vs cloud for your cameras")) + "</h4>"), f["cumulative"],
                   t["compare"], f["latency"]])

    def layout(self):
        self.body.children = self._body()
        return W.VBox([W.HTML(CSS), self.body, self.words.widget, self.save_box()])

    def _bring_in_price(self, change):
        """Picking another device brings in its catalogue price (the person can still edit it)."""
        rows = self.catalog.set_index("name")
        edge = change["owner"] is self.controls["edge_device"]
        column = "price_usd" if edge else "cloud_usd_per_hour"
        target = self.controls["edge_unit_price_usd" if edge else "cloud_usd_per_hour"]
        value = rows.loc[change["new"], column]
        was = self._suspended
        self._suspended = True
        try:
            target.value = float(value) if value == value else 0.0
        finally:
            self._suspended = was

    def _scenario_cost(self):
        """The decision's ranking of the scenario (what each device costs over the horizon), reused while the
        scenario is unchanged (the cameras controls do not change it)."""
        from .. import select

        s = self.scenario
        return self.reuse("rank", repr(sorted(s.to_dict().items(), key=lambda kv: kv[0])),
                          lambda: select.rank(s.copy(), self.catalog))

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        ranked = self._scenario_cost()
        summary, part = self._scenario_part(ranked)
        out = {"ranked": ranked, "summary": summary, "figures": {"scenario_cost": part["figure"]},
               "tables": {"scenario_cost": part["table"]}}
        model = sizing.model_of(s)["name"]
        if self.cameras and not self._serves_vision():
            summary.append(_("The cameras calculator below is the source text's example ({streams} cameras running "
                             "{vision}), not your scenario ({workload} of {model}).").format(
                streams=s.streams, vision=c["model"], workload=_(_WORKLOAD_WORDS.get(s.workload, s.workload)),
                model=model))
        if not self.cameras:
            summary.append(_("The source text's edge-vs-cloud cameras calculator applies to a scenario that serves "
                             "an image model; yours is {workload} of {model}, so it is not shown.").format(
                workload=_(_WORKLOAD_WORDS.get(s.workload, s.workload)), model=model))
            return out
        if c["edge_unit_price_usd"] <= 0:
            raise ValueError(_("edge unit price: the catalogue has no list price for {device}; enter the price you "
                               "would pay (USD per unit)").format(device=c["edge_device"]))
        if c["cloud_usd_per_hour"] <= 0:
            raise ValueError(_("cloud price: no on-demand price for {device} in data/cloud_prices.csv; enter the "
                               "hourly price of one instance").format(device=c["cloud_device"]))
        result = claims.edge_vs_cloud(
            self.catalog, streams=s.streams, fps=s.frames_per_s, model=c["model"], edge_device=c["edge_device"],
            edge_unit_price_usd=c["edge_unit_price_usd"], cloud_device=c["cloud_device"],
            cloud_usd_per_hour=c["cloud_usd_per_hour"], utilization=c["utilization"], horizon_months=s.horizon_months,
            electricity_usd_per_kwh=s.electricity_usd_per_kwh, edge_maintenance_per_year=c["maintenance_per_year"],
            cloud_network_usd_per_month=c["network_usd_per_month"], discount_rate_per_year=c["discount_rate_per_year"],
        )
        latency, latency_verdict = claims.latency_edge_vs_cloud(
            self.catalog, model=c["model"], edge_device=c["edge_device"], cloud_device=c["cloud_device"],
            utilization=c["utilization"], rtt_ms=c["rtt_ms"], uplink_mbps=c["uplink_mbps"], frame_kb=c["frame_kb"],
            server_overhead_ms=c["server_overhead_ms"], edge_overhead_ms=c["edge_overhead_ms"],
        )
        table = result["compare"]
        summary.append(result["verdict"])
        be = table.loc[0, "break_even_month_vs_cloud"]
        summary.append(
            _("The edge option pays for itself from month {month}.").format(month=f"{be:.0f}") if be == be else
            _("The edge option does not pay for itself within the horizon.")
        )
        summary.append(latency_verdict)
        if s.batch_size != 1:
            from ..projection.vision import vision

            stack = scenario_stack(s, "vision") if self._serves_vision() else None
            ms = vision(c["edge_device"], c["model"], "int8", s.batch_size, catalog=self.catalog,
                        utilization=s.utilization, stack=stack)["frame_ms"]
            if ms == ms:
                summary.append(_("That latency budget times one frame alone (batch 1); chapter 07 and the decision "
                                 "time a pass of your batch of {batch} frames: {ms} ms per frame on {device}.").format(
                    batch=s.batch_size, ms=f"{ms:.1f}", device=c["edge_device"]))
        shown = table[["option", "upfront_usd", "running_usd_per_month", "energy_usd", "total_usd", "vs_cheapest"]].copy()
        shown.columns = [_("option"), _("up front [USD]"), _("per month [USD]"), _("energy [USD]"),
                         _("{months}-month total [USD]").format(months=s.horizon_months), _("× cheapest")]
        fmt = {k: "{:,.0f}".format for k in shown.columns[1:5]}
        fmt[_("× cheapest")] = "{:.2f}".format
        out.update({"tco": result, "latency": latency})
        out["figures"].update({
            "cumulative": plots.cumulative_cost_chart(
                result["cumulative"], _("Cumulative cost over {months} months").format(months=s.horizon_months), be),
            "latency": plots.latency_chart(_latency_words(latency), _("Latency per frame: where the time goes")),
        })
        out["tables"]["compare"] = table_html(shown, fmt)
        return out

    def _scenario_part(self, ranked):
        """Sentences, table and chart of what the scenario costs over its horizon, device by device, as the
        decision (chapter 09) counts it: purchase and electricity when bought, rent when rented."""
        from ..plots.energy_tco import scenario_cost_chart
        from ..select.summary import money_range

        s = self.scenario
        training = s.workload in sizing.TRAINING_WORKLOADS
        top = ranked[ranked["status"] == "shortlisted"]
        rows = (top if len(top) else ranked).head(8).copy()
        rows["how"] = "rent" if s.deployment == "cloud" else "buy"
        unit = rows["work_unit"].iloc[0] if len(rows) else "tokens"
        model = sizing.model_of(s)["name"]
        span = (_("the whole run") if training else
                _("{months} months").format(months=s.horizon_months))
        summary = []
        if len(top):
            best = top.iloc[0]
            summary.append(_(
                "Over {span}, your scenario ({workload} of {model}, {deployment}) costs {total} on the recommended "
                "{device}: {plan}. These are the decision's figures (chapter 09), counted the same "
                "way: purchase and electricity when you buy, rent when you rent.").format(
                span=span, workload=_(_WORKLOAD_WORDS.get(s.workload, s.workload)), model=model,
                deployment=_(_DEPLOYMENT_WORDS.get(s.deployment, s.deployment)),
                total=money_range(best["total_cost_usd"], best["total_cost_usd_low"], best["total_cost_usd_high"],
                                  _(UNKNOWN), collapse=False),
                device=best["name"],
                plan=best["purchase_unit"] if best["purchase_unit"] == best["purchase_unit"] else ""))
        else:
            summary.append(_("No device meets every limit of your scenario, so the decision recommends none; the "
                             "table shows the closest ones and why each fails."))
        cols = ["name", "status", "purchase_unit", "devices_needed", "purchase_usd", "energy_usd", "rent_usd",
                "total_cost_usd", "cost_per_million_tokens"]
        shown = rows[[c for c in cols if c in rows]].copy()
        shown["status"] = [_(_STATUS_WORDS.get(v, v)) for v in shown["status"]]
        shown["total_cost_usd"] = [
            money_range(v, lo, hi, people(v), collapse=False)
            for v, lo, hi in zip(rows["total_cost_usd"], rows["total_cost_usd_low"], rows["total_cost_usd_high"])]
        over = _("total over {span} [USD] (range)").format(span=span)
        per_million = _("per million {unit} [USD]").format(unit=_(_UNIT_WORDS.get(unit, unit)))
        shown.columns = [_("device"), _("status"), _("buy or rent"), _("devices"), _("purchase [USD]"),
                         _("electricity [USD]"), _("rent [USD]"), over, per_million][:len(shown.columns)]
        fmt = {_("devices"): people_format(), _("purchase [USD]"): people_format(),
               _("electricity [USD]"): people_format(), _("rent [USD]"): people_format(),
               per_million: "{:,.3g}".format}
        figure = scenario_cost_chart(rows.assign(name=rows["name"] if "name" in rows else rows.index),
                                     _("{model}: total over {span} per device").format(model=model, span=span))
        return summary, {"table": table_html(shown, fmt), "figure": figure}

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        s = self.scenario
        ranked = self.result["ranked"]
        top = ranked[ranked["status"] == "shortlisted"]
        lines = []
        if len(top):
            best = top.iloc[0]
            lines += [f"scenario: {s.workload} of {sizing.model_of(s)['name']} ({s.deployment})",
                      f"recommended: {best['name']}",
                      f"total over the horizon [USD]: {best['total_cost_usd']:,.0f} "
                      f"({best['total_cost_usd_low']:,.0f}-{best['total_cost_usd_high']:,.0f})"]
        else:
            lines.append(f"scenario: {s.workload} of {sizing.model_of(s)['name']}: no device meets every limit")
        if not self.cameras:
            lines.append("cameras calculator: not shown (the scenario does not serve an image model)")
            return "\n".join(lines)
        r = self.result["tco"]
        totals = self.result["latency"].groupby("path")["ms"].sum()
        return "\n".join(lines + [
            f"streams: {s.streams}",
            f"edge units: {r['edge_units']}",
            f"cloud instances: {r['cloud_instances']}",
            f"edge total [USD]: {r['compare'].loc[0, 'total_usd']:,.0f}",
            f"cloud total [USD]: {r['compare'].loc[1, 'total_usd']:,.0f}",
            f"edge saving (article 62%): {r['saving']:.0%}",
            f"cloud latency [ms]: {totals['cloud']:.0f}",
            f"edge latency [ms]: {totals['edge']:.0f}",
        ])
