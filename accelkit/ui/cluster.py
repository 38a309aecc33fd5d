"""Chapter 06: size a training cluster -- interconnect, all-reduce, scaling, power."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import cluster, plots, sizing, units
from ..catalog import find, load_catalog, peak_flops
from ..i18n import N_, _
from ..numbers import people, people_format
from ..select.reasons import source_words
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

    title = N_("Training cluster")

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
            "tokens_b": C.number(_("training tokens"), s.tokens / _B, _("billion"), width="250px"),
            "seq_len": C.integer(_("sequence length"), s.seq_len, _("tokens"), width="250px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8"]),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "device": C.choice(_("device"), usable, device if device in usable else usable[0], width="300px"),
            "n_devices": C.integer(_("devices"), s.n_devices, _("count"), width="200px"),
            "devices_per_node": C.integer(_("per server"), devices_per_node, _("devices"), width="210px"),
            "intra_gbs": C.number(_("inside a server"), intra_gbs, _("GB/s each way, 0 = datasheet"), width="330px"),
            "network_gbps": C.number(_("network"), network_gbps, _("Gbit/s per device, 0 = reference server"),
                                     width="380px",
                                     tooltip=_("0: the device's reference system (data/reference_systems.csv)")),
            "overlap": C.slider(_("all-reduce hidden"), overlap, 0.0, 1.0, 0.1, _("share"),
                                tooltip=_("share of the gradient all-reduce overlapped with the backward pass "
                                          "(default: the engine's value fitted on published training runs)")),
            "micro_batch": C.integer(_("micro-batch"), micro, _("sequences/device"), width="290px"),
            "accumulation_steps": C.integer(_("accumulation"), accumulation_steps, _("steps"), width="220px"),
            "zero_stage": C.choice(_("ZeRO stage"), [0, 1, 2, 3], s.zero_stage, width="150px"),
            "pue": C.number("PUE", s.pue, "", width="150px", tooltip=T.glossary.define("PUE", long=True)),
            "node_overhead_w": C.number(_("server overhead"), node_overhead_w, _("W per server"), width="280px",
                                        tooltip=_("CPUs, NICs, fans and storage of each server, on top of the "
                                                  "accelerators")),
            "electricity_usd_per_kwh": C.number(_("electricity"), s.electricity_usd_per_kwh, "USD/kWh", width="230px"),
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
            C.group(_("Job"), [c["model"], c["tokens_b"], c["seq_len"], c["precision"], c["own_mfu"], c["utilization"]]),
            C.group(_("Cluster"), [c["device"], c["n_devices"], c["devices_per_node"], c["intra_gbs"], c["network_gbps"],
                                c["overlap"]]),
            C.group(_("Batch and memory"), [c["micro_batch"], c["accumulation_steps"], c["zero_stage"]]),
            C.group(_("Power"), [c["pue"], c["node_overhead_w"], c["electricity_usd_per_kwh"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, t["step"], f["scaling"], f["accumulation"],
                       t["power"], self.words.widget, self.save_box()])

    def compute(self):
        from ..projection.training import TRAIN_PRECISIONS

        from ..projection.for_scenario import is_vision_model

        s = self.scenario
        notes = []
        model_name = sizing.model_of(s)["name"]
        # the chapter sizes a transformer's training; say so where the scenario is something else
        if s.workload not in sizing.TRAINING_WORKLOADS:
            notes.append(_("Your scenario serves {model} (inference): this chapter shows what training it on {tokens} "
                           "would take on a cluster, as a what-if; none of it enters the decision.").format(
                model=model_name, tokens=people(s.tokens, _("tokens"))))
        elif is_vision_model(s):
            notes.append(_("{model} is an image model: chapter 01 and the decision train it per image ({samples}); "
                           "this chapter's step counts token sequences of a transformer, so its days are not the "
                           "decision's.").format(model=model_name, samples=people(s.tokens, _("samples"))))
        if s.precision not in TRAIN_PRECISIONS:
            notes.append(_("Training in {precision} is not modelled (nobody trains in integer formats); this chapter "
                           "shows bf16.").format(precision=s.precision))
            s = s.copy().update(precision="bf16")
        c = {k: w.value for k, w in self.controls.items()}
        if not 0 <= c["intra_gbs"] < 1e5:
            raise ValueError(_("inside-a-server bandwidth must be GB/s >= 0 (0 = the datasheet's); got {value}").format(
                value=c["intra_gbs"]))
        if c["node_overhead_w"] < 0:
            raise ValueError(_("server overhead must be watts >= 0; got {value}").format(value=c["node_overhead_w"]))
        device = find(c["device"], self.catalog)
        if c["network_gbps"] < 0:
            raise ValueError(_("network must be Gbit/s >= 0 (0 = the reference server's); got {value}").format(
                value=c["network_gbps"]))
        intra = c["intra_gbs"] or None
        network = c["network_gbps"] or None
        args = dict(micro_batch=c["micro_batch"], accumulation_steps=c["accumulation_steps"],
                    devices_per_node=c["devices_per_node"], network_gbps=network, overlap=c["overlap"])
        step = cluster.cluster_step(s, device, s.n_devices, intra_gbs=intra, **args)
        counts = sorted({n for n in _COUNTS if n <= max(4096, s.n_devices)} | {s.n_devices})
        pcie = device.copy()
        pcie["interconnect_gbs"] = np.nan
        net = units.bytes_per_s_to_gbps(step["inter_bw"])  # Gbit/s per device actually used
        pcie_label = _("PCIe only inside the server")
        curves = {
            f"{device['name']}: {device['interconnect'] or _('datasheet link')} + {net:g} Gb/s":
                cluster.cluster_scaling(s, device, counts, intra_gbs=intra, **args),
            pcie_label: cluster.cluster_scaling(s, pcie, counts, **args),
            _("network at {gbps} Gb/s").format(gbps=f"{net / 4:g}"): cluster.cluster_scaling(
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
            _("{n} × {device} in {nodes} server(s): a step of {batch} sequences × {seq} tokens computes for "
              "{compute} s and all-reduces {gb} GB of gradients in {comm} s (inside servers at {intra} GB/s, between "
              "them at {inter} GB/s per device), {exposed} s of it left exposed after the overlap with the backward "
              "pass. Scaling efficiency: {efficiency}.").format(
                n=s.n_devices, device=device["name"], nodes=step["n_nodes"], batch=step["global_batch"],
                seq=s.seq_len, compute=f"{step['compute_s']:.2f}", gb=f"{m['params'] * 2 / _B:,.1f}",
                comm=f"{step['comm_total_s']:.3f}", intra=f"{step['intra_bw'] / _B:,.0f}",
                inter=f"{step['inter_bw'] / _B:,.1f}", exposed=f"{step['comm_s']:.3f}",
                efficiency=f"{step['efficiency']:.0%}"),
            _("{tokens} take {days} days at {rate} tokens/s, a projected MFU of {mfu} (efficiency source: "
              "{source}).").format(
                tokens=people(s.tokens, _("tokens")),
                days=range_text(step["days"], step["days_low"], step["days_high"], "{:,.1f}"),
                rate=f"{step['tokens_per_s']:,.0f}", mfu=f"{step['mfu']:.0%}",
                source=source_words(step["matmul_source"])),
            (_("Memory per device: {state} GB of model state (ZeRO-{stage}) + {activations} GB of activations for a "
               "micro-batch of {micro} = {total} GB of {usable} GB usable -- fits.") if foot["fits"] else
             _("Memory per device: {state} GB of model state (ZeRO-{stage}) + {activations} GB of activations for a "
               "micro-batch of {micro} = {total} GB of {usable} GB usable -- does NOT fit: raise the ZeRO stage or "
               "accumulate smaller micro-batches.")).format(
                state=f"{state:,.1f}", stage=s.zero_stage, activations=f"{step['activations_gb']:,.1f}",
                micro=c["micro_batch"], total=f"{per_device_gb:,.1f}", usable=f"{usable:,.0f}"),
        ]
        summary[:0] = notes
        pcie_eff = curves[pcie_label].set_index("n_devices").loc[s.n_devices, "efficiency"]
        summary.append(_("With PCIe instead of {link} inside the servers the efficiency at {n} devices would be "
                         "{efficiency}.").format(link=device["interconnect"] or _("the datasheet link"), n=s.n_devices,
                                                 efficiency=f"{pcie_eff:.0%}"))
        if len(acc) > 1:
            summary.append(_(
                "Gradient accumulation (the source text's advice) at the same global batch: {steps} micro-batches of "
                "{micro} cut activations from {before} to {after} GB per device; the all-reduce is paid once per step "
                "either way.").format(steps=acc["accumulation_steps"].iloc[-1], micro=acc["micro_batch"].iloc[-1],
                                      before=f"{acc['activations_gb'].iloc[0]:,.1f}",
                                      after=f"{acc['activations_gb'].iloc[-1]:,.1f}"))
        summary.append(_(
            "Power: {it} kW of IT load, {facility} kW at the meter with PUE {pue} ({cooling} kW for cooling and the "
            "hall); the job uses {kwh} kWh ({cost}). The source text's liquid-cooled cluster targets PUE below "
            "1.2.").format(it=f"{units.watts_to_kw(it_w):,.1f}", facility=f"{units.watts_to_kw(facility_w):,.1f}",
                           pue=f"{s.pue:g}", cooling=f"{units.watts_to_kw(facility_w - it_w):,.1f}",
                           kwh=f"{kwh:,.0f}", cost=f"${foot['electricity_usd']:,.0f}"))
        step_table = pd.DataFrame([{
            _("devices"): s.n_devices, _("servers"): step["n_nodes"], _("global batch"): step["global_batch"],
            _("compute [s]"): step["compute_s"], _("all-reduce exposed [s]"): step["comm_s"],
            _("step [s]"): step["step_s"], _("efficiency"): step["efficiency"], "tokens/s": step["tokens_per_s"],
            _("days"): step["days"],
        }])
        power = pd.DataFrame([{_("IT load [kW]"): units.watts_to_kw(it_w),
                               _("at the meter [kW]"): units.watts_to_kw(facility_w),
                               _("cooling and hall [kW]"): units.watts_to_kw(facility_w - it_w),
                               _("job energy [kWh]"): kwh, _("electricity [USD]"): foot["electricity_usd"]}])
        return {
            "step": step, "curves": curves, "accumulation": acc, "memory_gb": per_device_gb, "usable_gb": usable,
            "kwh": kwh, "summary": summary,
            "figures": {
                "scaling": plots.scaling_chart(curves, _("Scaling efficiency of {model} training on {device}").format(
                    model=m["name"], device=device["name"])),
                "accumulation": plots.accumulation_chart(
                    acc, _("Gradient accumulation at a global batch of {batch}").format(batch=global_batch))
                if len(acc) else
                plots.empty_figure(_("No accumulation step divides the global batch evenly"),
                                   _("Gradient accumulation")),
            },
            "tables": {
                "step": table_html(step_table, {_("compute [s]"): "{:.3f}".format,
                                                _("all-reduce exposed [s]"): "{:.3f}".format,
                                                _("step [s]"): "{:.3f}".format, _("efficiency"): "{:.1%}".format,
                                                "tokens/s": people_format(), _("days"): "{:,.1f}".format}),
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
