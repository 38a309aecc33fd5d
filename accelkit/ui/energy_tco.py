"""Chapter 05: energy efficiency and total cost of ownership (edge vs cloud)."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import claims, energy, plots, projection, sizing, units
from ..catalog import int8_dense_estimate, load_catalog
from ..numbers import people_format
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html

__all__ = ["EnergyPanel", "TCOPanel"]

#: the words of these panels explained on tap (each a term or alias in data/glossary.csv)
ENERGY_TERMS = ("PUE", "TDP", "CO2e", "MFU", "T(FL)OP/s", "TFLOP/s", "achievable matmul rate", "dense",
                "device-hours", "int8", "bf16", "fp8")
TCO_TERMS = ("TCO", "break-even", "pays for itself", "discount rate", "on demand", "utilisation", "fps",
             "latency target", "int8", "DLA", "TDP")


class EnergyPanel(Panel):
    """Compute per watt across the catalogue, and the energy of the scenario's job."""

    title = "Energy efficiency"

    def __init__(self, scenario=None, catalog=None, grid_kg_per_kwh=0.4):
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        names = set(self.catalog["name"])
        devices = [d for d in (s.devices or C.DEFAULT_DEVICES) if d in names]
        self.controls = {
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            "segments": C.multi_choice("segment", ["datacenter", "workstation", "edge", "consumer"], s.segments, rows=4),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "pue": C.number("PUE", s.pue, "", width="150px", tooltip=T.glossary.define("PUE", long=True)),
            "grid_kg_per_kwh": C.number("grid intensity", grid_kg_per_kwh, "kg CO2e/kWh", width="290px",
                                        tooltip="carbon intensity of the electricity; ~0.02 (hydro/nuclear) to ~0.8 (coal)"),
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
            C.group("Efficiency", [c["precision"], c["segments"], c["own_mfu"], c["utilization"]]),
            C.group("Your job", [c["devices"], c["pue"], c["grid_kg_per_kwh"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["efficiency"], t["claims"],
                       f["job_energy"], t["job_energy"], self.words.widget])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["grid_kg_per_kwh"] >= 0:
            raise ValueError(f"grid intensity must be kg CO2e per kWh >= 0; got {c['grid_kg_per_kwh']}")
        shown = self.catalog if not c["segments"] else self.catalog[self.catalog["segment"].isin(c["segments"])]
        summary = []
        claim_table, claim_verdict = claims.efficiency_claims(self.catalog)
        summary.append(claim_verdict)

        table = sizing.per_device(s, self.catalog, list(c["devices"]) or None)
        training = s.workload in sizing.TRAINING_WORKLOADS
        hours = table["device_hours"] if training else table["devices_for_target"] * units.HOURS_PER_YEAR / 12
        table["energy_kwh"] = energy.job_energy_kwh(table["tdp_w"], hours * units.SECONDS_PER_HOUR, pue=s.pue) \
            if table["tdp_w"].notna().any() else np.nan
        table["co2_kg"] = energy.co2_kg(table["energy_kwh"], c["grid_kg_per_kwh"])
        table["device_hours"] = hours
        known = table[table["feasible"].astype(bool)].dropna(subset=["energy_kwh"])
        speed = "projected speed" if s.utilization is None else f"your MFU of {s.utilization:.0%}"
        what = "the training job" if training else "a month of serving"
        model = sizing.model_of(s)["name"]
        if not known.empty:
            best = known.loc[known["energy_kwh"].idxmin()]
            worst = known.loc[known["energy_kwh"].idxmax()]
            summary.append(
                f"Energy of {what} ({model}, {s.precision}, at the {speed}, PUE {s.pue:g}): "
                f"{best['energy_kwh']:,.0f} kWh on {best['name']} up to {worst['energy_kwh']:,.0f} kWh on {worst['name']}; "
                f"at {c['grid_kg_per_kwh']:g} kg/kWh that is {best['co2_kg'] / units.KG_PER_TONNE:,.2f} to {worst['co2_kg'] / units.KG_PER_TONNE:,.2f} t CO2e. "
                "TDP is an upper bound on average draw; measure with NVML (chapter 08) for a tighter figure."
            )
        col = {"int8": "int8_tops"}.get(s.precision, f"{s.precision}_tflops")
        eff = shown.dropna(subset=[col, "tdp_w"])
        if not eff.empty:
            per_w = eff[col] / eff["tdp_w"]
            top = eff.loc[per_w.idxmax()]
            line = (f"Highest {s.precision} peak per watt among {len(eff)} devices: {top['name']}, {per_w.max():.2f} "
                    f"T(FL)OP/s per W")
            if s.precision in projection.COMPUTE_PRECISIONS:
                got = projection.matmul_flops(top["name"], s.precision, self.catalog, with_range=True)
                line += (f"; its achievable matmul rate gives {got['matmul_flops'] / units.TERA / top['tdp_w']:.2f} "
                         f"per W (efficiency: {got['source']})")
            summary.append(line + ".")
        job = known[["name", "device_hours", "tdp_w", "energy_kwh", "co2_kg"]].sort_values("energy_kwh")
        job.columns = ["device", "device-hours", "TDP [W]", "energy [kWh]", "CO2e [kg]"]
        claim_shown = claim_table[["device", "article_tflops", "article_w", "article_per_w", "catalogue_figure",
                                   "catalogue_w", "catalogue_per_w", "basis"]]
        claim_shown.columns = ["device", "article T(FL)OP/s", "article W", "article per W", "datasheet T(FL)OP/s",
                               "datasheet W", "datasheet per W", "basis"]
        fmt = {k: "{:,.2f}".format for k in ("article per W", "datasheet per W")}
        return {
            "table": table, "claims": claim_table, "summary": summary,
            "figures": {
                "efficiency": plots.efficiency_bar(shown, s.precision),
                "job_energy": plots.job_energy_chart(known, f"Energy of {what} per device ({model})"),
            },
            "tables": {
                "claims": table_html(claim_shown, fmt),
                "job_energy": table_html(job, {"device-hours": people_format(), "energy [kWh]": people_format(),
                                               "CO2e [kg]": people_format(), "TDP [W]": "{:,.0f}".format}),
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
    """Edge vs cloud: cumulative cost, break-even, and the latency budget."""

    title = "Edge vs cloud TCO"

    def __init__(self, scenario=None, catalog=None, model="YOLOv8s", edge_device="Jetson Orin Nano Super 8GB",
                 edge_unit_price_usd=None, cloud_device="T4", cloud_usd_per_hour=None, maintenance_per_year=0.10,
                 network_usd_per_month=0.0, discount_rate_per_year=0.0, rtt_ms=40.0, uplink_mbps=20.0,
                 frame_kb=150.0, server_overhead_ms=20.0, edge_overhead_ms=10.0, utilization=0.3):
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        edges, clouds = _edge_devices(self.catalog), _cloud_devices(self.catalog)
        edge_row = self.catalog.set_index("name").loc[edge_device] if edge_device in edges else None
        price = edge_unit_price_usd if edge_unit_price_usd is not None else (
            float(edge_row["price_usd"]) if edge_row is not None and edge_row["price_usd"] == edge_row["price_usd"] else 0.0)
        cloud_row = self.catalog.set_index("name").loc[cloud_device] if cloud_device in clouds else None
        hourly = cloud_usd_per_hour if cloud_usd_per_hour is not None else (
            float(cloud_row["cloud_usd_per_hour"]) if cloud_row is not None and
            cloud_row["cloud_usd_per_hour"] == cloud_row["cloud_usd_per_hour"] else 0.0)
        self.controls = {
            "streams": C.integer("streams", s.streams, "cameras", width="200px"),
            "frames_per_s": C.number("frame rate", s.frames_per_s, "fps", width="180px"),
            "model": C.model_picker(model, include_custom=False, kinds=["cnn", "vit"]),
            "utilization": C.slider("utilisation", utilization, 0.05, 1.0, 0.05,
                                    tooltip=T.glossary.define("MFU", long=True)),
            "edge_device": C.choice("edge device", edges, edge_device if edge_device in edges else edges[0], width="320px"),
            "edge_unit_price_usd": C.number("edge unit price", price, "USD", width="240px",
                                            tooltip="list price per edge box (0 = not set)"),
            "maintenance_per_year": C.slider("edge maintenance", maintenance_per_year, 0.0, 0.5, 0.01, "of price/yr"),
            "cloud_device": C.choice("cloud GPU", clouds, cloud_device if cloud_device in clouds else clouds[0], width="300px"),
            "cloud_usd_per_hour": C.number("cloud price", hourly, "USD/h per instance", width="300px"),
            "network_usd_per_month": C.number("cloud network", network_usd_per_month, "USD/month", width="260px",
                                              tooltip="uplink from the site to the cloud (cloud ingress itself is free)"),
            "horizon_months": C.integer("horizon", s.horizon_months, "months", width="190px"),
            "electricity_usd_per_kwh": C.number("electricity", s.electricity_usd_per_kwh, "USD/kWh", width="230px"),
            "discount_rate_per_year": C.number("discount rate", discount_rate_per_year, "per year", width="230px"),
            "rtt_ms": C.number("round trip", rtt_ms, "ms", width="180px"),
            "uplink_mbps": C.number("uplink", uplink_mbps, "Mbit/s", width="190px"),
            "frame_kb": C.number("frame size", frame_kb, "kB", width="180px"),
            "server_overhead_ms": C.number("server overhead", server_overhead_ms, "ms", width="220px"),
            "edge_overhead_ms": C.number("edge overhead", edge_overhead_ms, "ms", width="210px"),
        }
        # registered before watch(): the price is in place when the panel recomputes
        self.controls["edge_device"].observe(self._bring_in_price, names="value")
        self.controls["cloud_device"].observe(self._bring_in_price, names="value")
        self.bind_same("streams", "frames_per_s", "horizon_months", "electricity_usd_per_kwh")
        self.words = T.WordsBox(TCO_TERMS)
        self.start()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TCO_TERMS)

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group("Workload", [c["streams"], c["frames_per_s"], c["model"], c["utilization"]]),
            C.group("Edge", [c["edge_device"], c["edge_unit_price_usd"], c["maintenance_per_year"],
                             c["electricity_usd_per_kwh"]]),
            C.group("Cloud", [c["cloud_device"], c["cloud_usd_per_hour"], c["network_usd_per_month"]]),
            C.group("Money", [c["horizon_months"], c["discount_rate_per_year"]]),
            C.group("Latency", [c["rtt_ms"], c["uplink_mbps"], c["frame_kb"], c["server_overhead_ms"],
                                c["edge_overhead_ms"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["cumulative"], t["compare"],
                       f["latency"], self.words.widget, self.save_box()])

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

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if c["edge_unit_price_usd"] <= 0:
            raise ValueError(f"edge unit price: the catalogue has no list price for {c['edge_device']}; "
                             "enter the price you would pay (USD per unit)")
        if c["cloud_usd_per_hour"] <= 0:
            raise ValueError(f"cloud price: no on-demand price for {c['cloud_device']} in data/cloud_prices.csv; "
                             "enter the hourly price of one instance")
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
        summary = [result["verdict"]]
        be = table.loc[0, "break_even_month_vs_cloud"]
        summary.append(
            f"The edge option pays for itself from month {be:.0f}." if be == be else
            "The edge option does not pay for itself within the horizon."
        )
        summary.append(latency_verdict)
        shown = table[["option", "upfront_usd", "running_usd_per_month", "energy_usd", "total_usd", "vs_cheapest"]].copy()
        shown.columns = ["option", "up front [USD]", "per month [USD]", "energy [USD]",
                         f"{s.horizon_months}-month total [USD]", "× cheapest"]
        fmt = {k: "{:,.0f}".format for k in shown.columns[1:5]}
        fmt["× cheapest"] = "{:.2f}".format
        return {
            "tco": result, "latency": latency, "summary": summary,
            "figures": {
                "cumulative": plots.cumulative_cost_chart(
                    result["cumulative"], f"Cumulative cost over {s.horizon_months} months", be),
                "latency": plots.latency_chart(latency, "Latency per frame: where the time goes"),
            },
            "tables": {"compare": table_html(shown, fmt)},
        }

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result["tco"], self.scenario
        totals = self.result["latency"].groupby("path")["ms"].sum()
        return "\n".join([
            f"streams: {s.streams}",
            f"edge units: {r['edge_units']}",
            f"cloud instances: {r['cloud_instances']}",
            f"edge total [USD]: {r['compare'].loc[0, 'total_usd']:,.0f}",
            f"cloud total [USD]: {r['compare'].loc[1, 'total_usd']:,.0f}",
            f"edge saving (article 62%): {r['saving']:.0%}",
            f"cloud latency [ms]: {totals['cloud']:.0f}",
            f"edge latency [ms]: {totals['edge']:.0f}",
        ])
