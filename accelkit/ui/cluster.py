"""Chapter 06: size a training cluster -- interconnect, all-reduce, scaling, power."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import cluster, plots, sizing, units
from ..catalog import find, load_catalog, peak_flops
from ..numbers import people, people_format
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, range_text, table_html

__all__ = ["ClusterPanel"]

_B = units.GIGA
_COUNTS = tuple(2**k for k in range(13))  # 1 ... 4096 devices

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("MFU", "ZeRO", "ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3", "all-reduce", "micro-batch", "gradient accumulation",
         "global batch", "scaling efficiency", "data parallel", "activations", "PUE", "NVLink", "PCIe", "InfiniBand",
         "tokens/s", "bf16", "FSDP", "tensor parallel", "pipeline parallel", "HBM")


class ClusterPanel(Panel):
    """Data-parallel training on N devices: step time, all-reduce, efficiency, power."""

    title = "Training cluster"

    def __init__(self, scenario=None, catalog=None, device="A100 80GB SXM", devices_per_node=8, network_gbps=0.0,
                 intra_gbs=0.0, micro_batch=None, accumulation_steps=None, overlap=None, node_overhead_w=0.0):
        from ..projection import constants
        from ..projection.for_scenario import training_layout

        overlap = constants()["dp_overlap"] if overlap is None else overlap
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        usable = self.catalog[peak_flops(self.catalog, "bf16").notna() & self.catalog["segment"].isin(
            ["datacenter", "workstation", "consumer"])]["name"].tolist()
        # the same step as every other chapter's projection unless the person changes it
        default_micro, default_accumulation = training_layout(s)
        micro = micro_batch if micro_batch is not None else default_micro
        accumulation_steps = accumulation_steps if accumulation_steps is not None else default_accumulation
        self.controls = {
            "model": C.model_picker(s.model, include_custom=False),
            "tokens_b": C.number("training tokens", s.tokens / _B, "billion", width="250px"),
            "seq_len": C.integer("sequence length", s.seq_len, "tokens", width="250px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8"]),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "device": C.choice("device", usable, device if device in usable else usable[0], width="300px"),
            "n_devices": C.integer("devices", s.n_devices, "count", width="200px"),
            "devices_per_node": C.integer("per server", devices_per_node, "devices", width="210px"),
            "intra_gbs": C.number("inside a server", intra_gbs, "GB/s each way, 0 = datasheet", width="330px"),
            "network_gbps": C.number("network", network_gbps, "Gbit/s per device, 0 = reference server",
                                     width="380px", tooltip="0: the device's reference system (data/reference_systems.csv)"),
            "overlap": C.slider("all-reduce hidden", overlap, 0.0, 1.0, 0.1, "share",
                                tooltip="share of the gradient all-reduce overlapped with the backward pass "
                                        "(default: the engine's value fitted on published training runs)"),
            "micro_batch": C.integer("micro-batch", micro, "sequences/device", width="290px"),
            "accumulation_steps": C.integer("accumulation", accumulation_steps, "steps", width="220px"),
            "zero_stage": C.choice("ZeRO stage", [0, 1, 2, 3], s.zero_stage, width="150px"),
            "pue": C.number("PUE", s.pue, "", width="150px", tooltip=T.glossary.define("PUE", long=True)),
            "node_overhead_w": C.number("server overhead", node_overhead_w, "W per server", width="280px",
                                        tooltip="CPUs, NICs, fans and storage of each server, on top of the accelerators"),
            "electricity_usd_per_kwh": C.number("electricity", s.electricity_usd_per_kwh, "USD/kWh", width="230px"),
        }
        self.bind("tokens_b", "tokens", lambda v: v * _B, lambda v: v / _B)
        self.bind_same("model", "seq_len", "precision", "n_devices", "zero_stage", "pue",
                     "electricity_usd_per_kwh")
        C.mfu_bindings(self)
        self.words = T.WordsBox(TERMS)
        self.start()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group("Job", [c["model"], c["tokens_b"], c["seq_len"], c["precision"], c["own_mfu"], c["utilization"]]),
            C.group("Cluster", [c["device"], c["n_devices"], c["devices_per_node"], c["intra_gbs"], c["network_gbps"],
                                c["overlap"]]),
            C.group("Batch and memory", [c["micro_batch"], c["accumulation_steps"], c["zero_stage"]]),
            C.group("Power", [c["pue"], c["node_overhead_w"], c["electricity_usd_per_kwh"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, t["step"], f["scaling"], f["accumulation"],
                       t["power"], self.words.widget, self.save_box()])

    def compute(self):
        from ..projection.training import TRAIN_PRECISIONS

        s = self.scenario
        note = None
        if s.precision not in TRAIN_PRECISIONS:
            note = (f"Training in {s.precision} is not modelled (nobody trains in integer formats); this chapter "
                    "shows bf16.")
            s = s.copy().update(precision="bf16")
        c = {k: w.value for k, w in self.controls.items()}
        if not 0 <= c["intra_gbs"] < 1e5:
            raise ValueError(f"inside-a-server bandwidth must be GB/s >= 0 (0 = the datasheet's); got {c['intra_gbs']}")
        if c["node_overhead_w"] < 0:
            raise ValueError(f"server overhead must be watts >= 0; got {c['node_overhead_w']}")
        device = find(c["device"], self.catalog)
        if c["network_gbps"] < 0:
            raise ValueError(f"network must be Gbit/s >= 0 (0 = the reference server's); got {c['network_gbps']}")
        intra = c["intra_gbs"] or None
        network = c["network_gbps"] or None
        args = dict(micro_batch=c["micro_batch"], accumulation_steps=c["accumulation_steps"],
                    devices_per_node=c["devices_per_node"], network_gbps=network, overlap=c["overlap"])
        step = cluster.cluster_step(s, device, s.n_devices, intra_gbs=intra, **args)
        counts = sorted({n for n in _COUNTS if n <= max(4096, s.n_devices)} | {s.n_devices})
        pcie = device.copy()
        pcie["interconnect_gbs"] = np.nan
        net = units.bytes_per_s_to_gbps(step["inter_bw"])  # Gbit/s per device actually used
        curves = {
            f"{device['name']}: {device['interconnect'] or 'datasheet link'} + {net:g} Gb/s":
                cluster.cluster_scaling(s, device, counts, intra_gbs=intra, **args),
            "PCIe only inside the server": cluster.cluster_scaling(s, pcie, counts, **args),
            f"network at {net / 4:g} Gb/s": cluster.cluster_scaling(
                s, device, counts, intra_gbs=intra, **{**args, "network_gbps": net / 4}),
        }
        # gradient accumulation at a fixed global batch
        global_batch = step["global_batch"]
        acc = cluster.accumulation_sweep(s, device, s.n_devices, global_batch, devices_per_node=c["devices_per_node"],
                                        network_gbps=network, overlap=c["overlap"], intra_gbs=intra)

        m = sizing.model_of(s)
        foot = cluster.cluster_footprint(s, device, step, c["node_overhead_w"])
        state, per_device_gb, usable = foot["state_gb"], foot["per_device_gb"], foot["usable_gb"]
        it_w, facility_w, kwh = foot["it_w"], foot["facility_w"], foot["kwh"]
        summary = [
            f"{s.n_devices} × {device['name']} in {step['n_nodes']} server(s): a step of {step['global_batch']} sequences "
            f"× {s.seq_len} tokens computes for {step['compute_s']:.2f} s and all-reduces {m['params'] * 2 / _B:,.1f} GB "
            f"of gradients in {step['comm_total_s']:.3f} s (inside servers at {step['intra_bw'] / _B:,.0f} GB/s, between them "
            f"at {step['inter_bw'] / _B:,.1f} GB/s per device), {step['comm_s']:.3f} s of it left exposed after the "
            f"overlap with the backward pass. Scaling efficiency: {step['efficiency']:.0%}.",
            f"{people(s.tokens, 'tokens')} take {range_text(step['days'], step['days_low'], step['days_high'], '{:,.1f}')} days "
            f"at {step['tokens_per_s']:,.0f} tokens/s, a projected MFU of {step['mfu']:.0%} "
            f"(efficiency source: {step['matmul_source']}).",
            f"Memory per device: {state:,.1f} GB of model state (ZeRO-{s.zero_stage}) + {step['activations_gb']:,.1f} GB "
            f"of activations for a micro-batch of {c['micro_batch']} = {per_device_gb:,.1f} GB of "
            f"{usable:,.0f} GB usable -- {'fits' if foot['fits'] else 'does NOT fit: raise the ZeRO stage or accumulate smaller micro-batches'}.",
        ]
        if note:
            summary.insert(0, note)
        pcie_eff = curves["PCIe only inside the server"].set_index("n_devices").loc[s.n_devices, "efficiency"]
        summary.append(
            f"With PCIe instead of {device['interconnect'] or 'the datasheet link'} inside the servers the efficiency at "
            f"{s.n_devices} devices would be {pcie_eff:.0%}."
        )
        if len(acc) > 1:
            summary.append(
                f"Gradient accumulation (the source text's advice) at the same global batch: {acc['accumulation_steps'].iloc[-1]} "
                f"micro-batches of {acc['micro_batch'].iloc[-1]} cut activations from {acc['activations_gb'].iloc[0]:,.1f} to "
                f"{acc['activations_gb'].iloc[-1]:,.1f} GB per device; the all-reduce is paid once per step either way."
            )
        summary.append(
            f"Power: {units.watts_to_kw(it_w):,.1f} kW of IT load, {units.watts_to_kw(facility_w):,.1f} kW at the meter with PUE {s.pue:g} "
            f"({units.watts_to_kw(facility_w - it_w):,.1f} kW for cooling and the hall); the job uses {kwh:,.0f} kWh "
            f"(${foot['electricity_usd']:,.0f}). The source text's liquid-cooled cluster targets PUE below 1.2."
        )
        step_table = pd.DataFrame([{
            "devices": s.n_devices, "servers": step["n_nodes"], "global batch": step["global_batch"],
            "compute [s]": step["compute_s"], "all-reduce exposed [s]": step["comm_s"], "step [s]": step["step_s"],
            "efficiency": step["efficiency"], "tokens/s": step["tokens_per_s"], "days": step["days"],
        }])
        power = pd.DataFrame([{"IT load [kW]": units.watts_to_kw(it_w), "at the meter [kW]": units.watts_to_kw(facility_w),
                               "cooling and hall [kW]": units.watts_to_kw(facility_w - it_w), "job energy [kWh]": kwh,
                               "electricity [USD]": foot["electricity_usd"]}])
        return {
            "step": step, "curves": curves, "accumulation": acc, "memory_gb": per_device_gb, "usable_gb": usable,
            "kwh": kwh, "summary": summary,
            "figures": {
                "scaling": plots.scaling_chart(curves, f"Scaling efficiency of {m['name']} training on {device['name']}"),
                "accumulation": plots.accumulation_chart(
                    acc, f"Gradient accumulation at a global batch of {global_batch}") if len(acc) else
                plots.empty_figure("No accumulation step divides the global batch evenly", "Gradient accumulation"),
            },
            "tables": {
                "step": table_html(step_table, {"compute [s]": "{:.3f}".format, "all-reduce exposed [s]": "{:.3f}".format,
                                                "step [s]": "{:.3f}".format, "efficiency": "{:.1%}".format,
                                                "tokens/s": people_format(), "days": "{:,.1f}".format}),
                "power": table_html(power, {k: "{:,.1f}".format for k in power.columns}),
            },
        }

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result, self.scenario
        st = r["step"]
        return "\n".join([
            f"devices: {s.n_devices} in {st['n_nodes']} servers",
            f"all-reduce per step [s]: {st['comm_total_s']:.3f}",
            f"all-reduce exposed after overlap [s]: {st['comm_s']:.3f}",
            f"step [s]: {st['step_s']:.3f}",
            f"scaling efficiency: {st['efficiency']:.1%}",
            f"days for the tokens: {st['days']:,.1f}",
            f"memory per device [GB]: {r['memory_gb']:.1f}",
            f"job energy [kWh]: {r['kwh']:,.0f}",
        ])
