"""Chapter 01: quantify compute demand -- FLOPs, devices, days, memory."""

from __future__ import annotations

import numpy as np
import ipywidgets as W

from .. import demand, plots, sizing
from ..catalog import load_catalog
from ..memory import usable_bytes
from . import controls as C
from ._base import CSS, Panel, table_html

__all__ = ["DemandPanel"]

_B = 1e9


class DemandPanel(Panel):
    """From model size and data (or the source text's rule) to devices and days."""

    title = "Compute demand"

    def __init__(self, scenario=None, catalog=None, seed_params=1e8, seed_batch=32, seed_iters_per_s=10.0,
                 seed_tokens_per_sample=512, measured_results="", use_measurements=False):
        super().__init__(scenario)
        self.measured_results = measured_results
        self._measurements = None
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        devices = s.devices or [d for d in C.DEFAULT_DEVICES if d in set(self.catalog["name"])]
        self.controls = {
            "workload": C.choice("workload", ["training", "fine-tuning", "inference"], s.workload, width="210px"),
            "model": C.model_picker(s.model if s.model != "custom" else "custom"),
            "params_b": C.number("custom size", (s.params or 7e9) / _B, "billion params", width="260px"),
            "tokens_b": C.number("training tokens", s.tokens / _B, "billion", width="250px"),
            "time_target_days": C.number("finish within", s.time_target_days, "days", width="220px"),
            "requests_per_s": C.number("requests", s.requests_per_s, "per s", width="200px"),
            "seq_len": C.integer("sequence length", s.seq_len, "tokens", width="250px"),
            "batch_size": C.integer("batch", s.batch_size, "sequences", width="210px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            "utilization": C.slider("utilisation (MFU)", s.utilization, 0.05, 1.0, 0.05,
                                    tooltip=C.GLOSSARY["mfu"]),
            "n_devices": C.integer("cluster size", s.n_devices, "devices", width="220px"),
            "zero_stage": C.choice("ZeRO stage", [0, 1, 2, 3], s.zero_stage, width="150px",
                                   tooltip="0: replicate everything; 1: shard optimizer; 2: +gradients; 3: +weights"),
            "devices": C.device_picker(self.catalog, devices),
            "use_measurements": C.toggle("use my measurements", use_measurements,
                                         tooltip="set the utilisation to the measured/datasheet matmul ratio from "
                                                 "chapter 08's results (measured_results)"),
            "seed_params": C.number("params", seed_params, "count", width="200px"),
            "seed_batch": C.integer("batch", seed_batch, "", width="140px"),
            "seed_iters_per_s": C.number("iterations", seed_iters_per_s, "per s", width="200px"),
            "seed_tokens_per_sample": C.integer("tokens per sample", seed_tokens_per_sample, "", width="200px"),
        }
        self.bind("workload", "workload")
        self.bind("model", "model")
        self.bind("params_b", "params", lambda v: v * _B, lambda v: (v or 7e9) / _B)
        self.bind("tokens_b", "tokens", lambda v: v * _B, lambda v: v / _B)
        for name in ("time_target_days", "requests_per_s", "seq_len", "batch_size", "precision", "utilization",
                     "n_devices", "zero_stage"):
            self.bind(name, name)
        self.bind("devices", "devices", list, tuple)
        self.watch()
        self.refresh()

    def layout(self):
        c = self.controls
        boxes = W.HBox([
            C.group("Workload", [c["workload"], c["model"], c["params_b"], c["tokens_b"], c["time_target_days"],
                                 c["requests_per_s"], c["seq_len"], c["batch_size"]]),
            C.group("Hardware", [c["precision"], c["utilization"], c["use_measurements"], c["n_devices"],
                                 c["zero_stage"], c["devices"]]),
            C.group("The source text's rule", [c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
                                               c["seed_tokens_per_sample"]]),
        ], layout=W.Layout(flex_flow="row wrap"))
        f, t = self.figure_outputs, self.table_outputs
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["devices"], t["devices"], f["memory"],
                       f["seed"], t["seed"], self.save_box()])

    def _calibrate(self):
        """With "use my measurements": utilisation = measured/datasheet matmul ratio (and where it came from)."""
        if not self.controls["use_measurements"].value:
            return None
        if not self.measured_results:
            raise ValueError("use my measurements: give measured_results, a JSON file written by chapter 08 "
                             "(accelkit probe --json)")
        from .. import probes

        if self._measurements is None:
            self._measurements = probes.load_results(self.measured_results)
        u, source = probes.calibrated_utilization(self._measurements, self.scenario.precision, default=None)
        if u is None:
            return f"Measurements not used: {source}; utilisation stays {self.scenario.utilization:.0%}."
        u = float(min(max(u, 0.05), 1.0))
        self.scenario.utilization = u
        was = self._suspended
        self._suspended = True
        try:
            self.controls["utilization"].value = u
        finally:
            self._suspended = was
        return f"Utilisation {u:.0%} from {source}. Real training reaches less than a bare matmul: treat it as a ceiling."

    def compute(self):
        s = self.scenario
        calibration_note = self._calibrate()
        c = {k: w.value for k, w in self.controls.items()}
        need = sizing.compute_need(s)
        model = sizing.model_of(s)
        table = sizing.per_device(s, self.catalog, list(c["devices"]) or None)
        known = table.dropna(subset=["peak_flops"])
        mem = sizing.memory_need(s)
        training = s.workload in sizing.TRAINING_WORKLOADS
        rate = need["required_flops_per_s"]

        summary = []
        if training:
            summary.append(
                f"{s.workload.capitalize()} {model['name']} on {s.tokens:.3g} tokens costs {need['total_flops']:.3g} FLOP "
                f"({need['rule']}). Finishing in {s.time_target_days:g} days needs a sustained "
                f"{rate / 1e12:,.1f} TFLOP/s."
            )
        else:
            summary.append(
                f"Serving {model['name']} at {s.requests_per_s:g} requests/s of {s.seq_len + s.output_tokens} tokens "
                f"needs {rate / 1e12:,.1f} TFLOP/s ({need['rule']})."
            )
        if not known.empty:
            best = known.sort_values(["devices_needed", "peak_flops"], ascending=[True, False]).iloc[0]
            summary.append(
                f"At {s.utilization:.0%} utilisation in {s.precision}, the fewest devices among those selected: "
                f"{best['devices_needed']:.0f} × {best['name']} "
                f"({best['devices_for_target']:.0f} for compute, {best['min_devices_memory']:.0f} to hold the memory)."
            )
            if training:
                fastest = known.sort_values("days_on_n").iloc[0]
                summary.append(
                    f"On {s.n_devices} devices the job takes {fastest['days_on_n']:.1f} days on {fastest['name']} "
                    f"(perfect scaling; communication is chapter 06)."
                )
            priced = known.dropna(subset=["cloud_usd"])
            if not priced.empty:
                cheap = priced.sort_values("cloud_usd").iloc[0]
                what = "the whole run" if training else "an hour of serving"
                summary.append(
                    f"Cheapest to rent for {what}: {cheap['name']} at ${cheap['cloud_usd']:,.0f} "
                    f"({cheap['device_hours']:,.0f} device-hours at ${cheap['cloud_usd_per_hour']:.2f}/h on demand)."
                )
        if training and s.zero_stage < 3 and not known.empty:
            sharded = sizing.per_device(s.copy().update(zero_stage=3), self.catalog, [best["name"]]).iloc[0]
            if sharded["min_devices_memory"] < best["min_devices_memory"]:
                summary.append(
                    f"ZeRO-3 (weights, gradients and optimizer sharded) would hold the memory on "
                    f"{sharded['min_devices_memory']:.0f} × {best['name']} instead of {best['min_devices_memory']:.0f}."
                )
        missing = len(table) - len(known)
        if missing:
            summary.append(f"{missing} selected device(s) publish no dense {s.precision} figure and are left out.")
        if calibration_note:
            summary.append(calibration_note)
        summary.append(self._lesson(known, rate))

        seed = demand.seed_claim_check(c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
                                       c["seed_tokens_per_sample"])
        summary.append(
            f"The source text's rule (params × 3 × batch × it/s) gives {seed.loc[1, 'flops_per_s']:.3g} FLOP/s for its "
            f"example, {seed.loc[1, 'ratio_to_claim']:.2g}× its claimed 100 TFLOPS; 6·N per token with "
            f"{c['seed_tokens_per_sample']} tokens per sample gives {seed.loc[3, 'flops_per_s'] / 1e12:.3g} TFLOP/s."
        )

        parts = {k: mem[k] / 1e9 for k in ("weights", "gradients", "optimizer", "activations", "kv_cache")}
        chosen = self.catalog[self.catalog["name"].isin(table["name"])].set_index("name")
        capacities = usable_bytes(chosen["memory_gb"].dropna() * 1e9) / 1e9
        how = (f"ZeRO-{s.zero_stage}, {s.n_devices} devices, batch {s.batch_size} × {s.seq_len} tokens"
               if training else f"batch {s.batch_size}, {s.seq_len + s.output_tokens}-token context, "
               f"sharded over {s.n_devices}")
        mem_title = f"Memory per device: {mem['total'] / 1e9:,.1f} GB ({how})"
        if training and not mem["activations_known"]:
            mem_title += " -- activations unknown for a custom model"
        target = f"in {s.time_target_days:g} days" if training else f"at {s.requests_per_s:g} requests/s"

        shown = known[["name", "peak_flops", "devices_for_target", "min_devices_memory", "devices_needed",
                       "days_on_n", "device_hours", "cloud_usd"]].copy()
        shown["peak_flops"] = shown["peak_flops"] / 1e12
        shown = shown.sort_values("devices_needed")
        shown.columns = ["device", f"{s.precision} peak [TFLOP/s]", "for compute", "for memory", "devices needed",
                         f"days on {s.n_devices}", "device-hours", "rent [USD]"]
        fmt = {f"{s.precision} peak [TFLOP/s]": "{:,.1f}".format, "for compute": "{:,.0f}".format,
               "for memory": "{:,.0f}".format, "devices needed": "{:,.0f}".format,
               f"days on {s.n_devices}": "{:,.1f}".format, "device-hours": "{:,.0f}".format,
               "rent [USD]": "{:,.0f}".format}
        seed_shown = seed.assign(tflops=seed["flops_per_s"] / 1e12)[["method", "tflops", "ratio_to_claim", "explanation"]]
        seed_shown.columns = ["method", "TFLOP/s", "× the claim", "why"]
        return {
            "need": need, "table": table, "memory": mem, "seed": seed,
            "summary": summary,
            "figures": {
                "devices": plots.devices_needed_chart(
                    table, f"Devices needed {target} at {s.utilization:.0%} utilisation ({s.precision})"),
                "memory": plots.memory_breakdown_chart(parts, capacities, mem_title),
                "seed": plots.seed_rule_chart(seed),
            },
            "tables": {
                "devices": table_html(shown, fmt),
                "seed": table_html(seed_shown, {"TFLOP/s": "{:.3g}".format, "× the claim": "{:.3g}".format}),
            },
        }

    def _lesson(self, known, rate):
        """The source text's '8 × A100 at under 30 %' story, with this scenario's numbers."""
        a100 = self.catalog[self.catalog["name"] == "A100 80GB SXM"]
        if a100.empty or np.isnan(a100["bf16_tflops"].iloc[0]):
            return ""
        peak = a100["bf16_tflops"].iloc[0] * 1e12
        delivered = 8 * peak * 0.30
        return (
            f"The text's lesson: 8 × A100 used at 30 % deliver {delivered / 1e12:,.0f} TFLOP/s -- what "
            f"{8 * 0.30:.1f} fully used A100s would; this scenario needs {rate / 1e12:,.1f} TFLOP/s, i.e. "
            f"{max(1, int(np.ceil(rate / (peak * self.scenario.utilization))))} A100(s) at "
            f"{self.scenario.utilization:.0%}. Measure utilisation (nvidia-smi, chapter 08) before buying."
        )

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result, self.scenario
        known = r["table"].dropna(subset=["peak_flops"]).set_index("name")
        lines = [
            f"workload: {s.workload}",
            f"model: {sizing.model_of(s)['name']} ({sizing.model_of(s)['params']:.3g} parameters)",
            f"total compute [FLOP]: {r['need']['total_flops']:.3g}",
            f"compute needed [TFLOP/s]: {r['need']['required_flops_per_s'] / 1e12:.1f}",
            f"memory per device [GB]: {r['memory']['total'] / 1e9:.1f}",
            f"utilisation: {s.utilization:.2f}",
        ]
        for name in ("H100 SXM", "A100 80GB SXM"):
            if name in known.index:
                row = known.loc[name]
                lines.append(f"devices needed on {name}: {row['devices_needed']:.0f}")
        lines.append(f"source-text formula [FLOP/s]: {r['seed'].loc[1, 'flops_per_s']:.3g}")
        return "\n".join(lines)
