"""Chapter 01: quantify compute demand -- FLOPs, devices, days, memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import ipywidgets as W

from .. import demand, plots, sizing, units
from ..catalog import load_catalog
from ..memory import usable_bytes
from ..numbers import people, people_format
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, error_html, range_text, table_html
from .files import FilePicker
from .measurements import ProbeMeasurements

__all__ = ["DemandPanel"]


_B = units.GIGA

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("FLOP", "TFLOP/s", "MFU", "ZeRO", "ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3", "device-hours", "on demand",
         "tokens", "parameters", "batch", "sequence length", "KV cache", "activations", "Adam",
         "bf16", "fp8", "int8", "TTFT", "TPOT", "concurrency", "headroom", "right-sizing", "fine-tuning", "LoRA",
         "QLoRA")


class DemandPanel(Panel):
    """From model size and data (or the source text's rule) to devices and days."""

    title = "Compute demand"

    def __init__(self, scenario=None, catalog=None, seed_params=1e8, seed_batch=32, seed_iters_per_s=10.0,
                 seed_tokens_per_sample=512, measured_results="", use_measurements=False, measured_demand=""):
        super().__init__(scenario)
        self.measurements = ProbeMeasurements(measured_results)
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
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "n_devices": C.integer("cluster size", s.n_devices, "devices", width="220px"),
            "zero_stage": C.choice("ZeRO stage", [0, 1, 2, 3], s.zero_stage, width="150px",
                                   tooltip="0: replicate everything; 1: shard optimizer; 2: +gradients; 3: +weights"),
            "devices": C.device_picker(self.catalog, devices),
            "use_measurements": C.toggle("use my measurements", use_measurements,
                                         tooltip="replace the published efficiencies of the measured device with "
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
        self.bind_same("time_target_days", "requests_per_s", "seq_len", "batch_size", "precision",
                     "n_devices", "zero_stage")
        C.mfu_bindings(self)
        self.bind_list("devices")
        self.measured_note, self._measured_fields = "", {}
        given = measured_demand if str(measured_demand).strip().lower() not in ("", "example") else None
        self.measured_picker = FilePicker(
            "my cluster", builtin=[("example (8 × A100 at 30 %)", "example")], accept=".json,.csv,.txt,.log",
            suffixes=(".json", ".csv", ".txt", ".log"), given=given, width="330px")
        self.measured_picker.choice.tooltip = ("what `accelkit monitor --json` (chapter 11) measured, or an nvidia-smi "
                                               "log: upload it; 'example' is the shipped 8 × A100 at 30 %")
        self.measured_controls = {
            "source": self.measured_picker.choice,
            "upload": self.measured_picker.upload,
            "button": W.Button(description="Use my cluster's pace", icon="tachometer",
                               tooltip="set the time target (training) or request rate (serving) to the work your "
                                       "GPUs really do", layout=W.Layout(width="200px")),
        }
        self.measured_controls["button"].on_click(lambda _b: self.use_measured())
        self.words = T.WordsBox(TERMS)
        self.watch()
        if str(measured_demand).strip():
            self.use_measured(str(measured_demand).strip())
        else:
            self.refresh()

    def use_measured(self, source=None):
        """Set the scenario's demand to the pace the monitored GPUs keep (chapter 11's measurement).

        Training: the time target becomes the days the tokens take at that pace; serving:
        the request rate. See :mod:`accelkit.monitor.demand`.
        """
        from ..monitor.demand import load_measured_demand, measured_demand_from_text, scenario_for_measured
        from ..monitor.samples import MonitorError

        try:
            from ..projection import COMPUTE_PRECISIONS
            from ..userfiles import InputError

            p = self.scenario.precision
            precision = p if p in COMPUTE_PRECISIONS else "bf16"
            if source is not None:  # the notebook's own code named it ("example" or a file)
                demand = load_measured_demand(source, precision=precision)
            else:
                picked = self.measured_picker.read()
                if isinstance(picked, str):
                    demand = load_measured_demand(picked, precision=precision)
                elif isinstance(picked[0], Path):
                    demand = load_measured_demand(picked[0], precision=precision)
                else:
                    demand = measured_demand_from_text(*picked[0], precision=precision)
            changed, note = scenario_for_measured(self.scenario, demand, self.catalog)
        except (MonitorError, InputError, ValueError) as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            return None
        self._measured_fields = {k: getattr(changed, k) for k in ("time_target_days", "requests_per_s", "frames_per_s")}
        for key, value in self._measured_fields.items():
            setattr(self.scenario, key, value)
        self.measured_note = note
        self.pull_scenario()
        return note

    def layout(self):
        c = self.controls
        boxes = C.groups(
            C.group("Workload", [c["workload"], c["model"], c["params_b"], c["tokens_b"], c["time_target_days"],
                                 c["requests_per_s"], c["seq_len"], c["batch_size"]]),
            C.group("Hardware", [c["precision"], c["own_mfu"], c["utilization"], c["use_measurements"], c["n_devices"],
                                 c["zero_stage"], c["devices"]]),
            C.group("The source text's rule", [c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
                                               c["seed_tokens_per_sample"]]),
        )
        f, t = self.figure_outputs, self.table_outputs
        measured = W.HBox([self.measured_picker.widget, self.measured_controls["button"]],
                          layout=W.Layout(flex_flow="row wrap", gap="4px 16px"))
        return W.VBox([W.HTML(CSS), boxes, measured, self.message, self.summary, f["devices"], t["devices"], f["memory"],
                       f["seed"], t["seed"], self.words.widget, self.save_box()])

    def compute(self):
        s = self.scenario
        measurements = self.measurements.when(self.controls["use_measurements"].value)
        c = {k: w.value for k, w in self.controls.items()}
        need = sizing.compute_need(s)
        model = sizing.model_of(s)
        table = sizing.per_device(s, self.catalog, list(c["devices"]) or None, measurements=measurements)
        known = table[table["feasible"].astype(bool) & table["peak_flops"].notna()]
        mem = sizing.memory_need(s)
        training = s.workload in sizing.TRAINING_WORKLOADS
        rate = need["required_flops_per_s"]
        unit = table["work_unit"].iloc[0] if len(table) else "tokens"
        how = ("your own MFU of {:.0%}".format(s.utilization) if s.utilization is not None else
               "the projection engine (published efficiencies, fitted overheads; chapter 10 shows how well it matches "
               "published measurements)")

        summary = []
        if training:
            summary.append(
                f"{s.workload.capitalize()} {model['name']} on {people(s.tokens, 'tokens')} costs "
                f"{people(need['total_flops'], 'FLOP')} "
                f"({need['rule']}). Finishing in {s.time_target_days:g} days needs a sustained "
                f"{rate / units.TERA:,.1f} TFLOP/s."
            )
        else:
            summary.append(
                f"Serving {model['name']} at {s.requests_per_s:g} requests/s of {s.seq_len + s.output_tokens} tokens "
                f"needs {rate / units.TERA:,.1f} TFLOP/s ({need['rule']})."
            )
        if not known.empty:
            best = known.sort_values(["devices_needed", "peak_flops"], ascending=[True, False]).iloc[0]
            summary.append(
                f"Projected with {how}: the fewest devices among those selected is {best['devices_needed']:.0f} × "
                f"{best['name']} ({best['devices_for_target']:.0f} for the {'time target' if training else 'request rate'}, "
                f"{best['min_devices_memory']:.0f} to hold the memory)."
            )
            if training:
                fastest = known.sort_values("days_on_n").iloc[0]
                summary.append(
                    f"On {s.n_devices} devices the job takes {fastest['days_on_n']:.1f} days "
                    f"({fastest['days_on_n_low']:.1f}-{fastest['days_on_n_high']:.1f}) on {fastest['name']}, a projected "
                    f"MFU of {fastest['mfu']:.0%} (efficiency: {fastest['matmul_source']})."
                )
            else:
                quick = known.sort_values("latency_s").iloc[0]
                one = {"tokens": "output token", "frames": "frame", "requests": "request"}[unit]
                summary.append(
                    f"Fastest per {one}: {quick['name']} at {quick['latency_s'] * units.MILLISECONDS_PER_SECOND:,.3g} ms "
                    f"({quick['latency_s_low'] * units.MILLISECONDS_PER_SECOND:,.3g}-{quick['latency_s_high'] * units.MILLISECONDS_PER_SECOND:,.3g}), "
                    f"{quick['work_per_device_hour'] / units.SECONDS_PER_HOUR:,.0f} {unit}/s per device "
                    f"(efficiency: {quick['matmul_source']})."
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
        missing = table[~table["name"].isin(known["name"])]
        if len(missing):
            summary.append(f"{len(missing)} selected device(s) cannot be projected and are left out: "
                           + "; ".join(f"{n} ({w})" for n, w in zip(missing["name"], missing["why"])) + ".")
        if measurements is not None:
            summary.append(f"Using your measurements ({self.measurements.source()}) for "
                           f"{measurements['device_name'].iloc[0]} where it is in the catalogue.")
        # the note holds only while the targets are the measured ones (a person may change them after)
        if self.measured_note and all(getattr(s, k) == v for k, v in self._measured_fields.items()):
            summary.append(self.measured_note)
        summary.append(self._lesson(known, rate))

        seed = demand.seed_claim_check(c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
                                       c["seed_tokens_per_sample"])
        summary.append(
            f"The source text's rule (params × 3 × batch × it/s) gives {people(seed.loc[1, 'flops_per_s'], 'FLOP/s')} for its "
            f"example, {seed.loc[1, 'ratio_to_claim']:.2g}× its claimed 100 TFLOPS; 6·N per token with "
            f"{c['seed_tokens_per_sample']} tokens per sample gives {people(seed.loc[3, 'flops_per_s'] / units.TERA)} TFLOP/s."
        )

        parts = {k: mem[k] / units.GIGA for k in ("weights", "gradients", "optimizer", "activations", "kv_cache")}
        chosen = self.catalog[self.catalog["name"].isin(table["name"])].set_index("name")
        capacities = usable_bytes(chosen["memory_gb"].dropna() * units.GIGA) / units.GIGA
        how_mem = (f"ZeRO-{s.zero_stage}, {s.n_devices} devices, batch {s.batch_size} × {s.seq_len} tokens"
                   if training else f"batch {s.batch_size}, {s.seq_len + s.output_tokens}-token context, "
                   f"sharded over {s.n_devices}")
        mem_title = f"Memory per device: {mem['total'] / units.GIGA:,.1f} GB ({how_mem})"
        if training and not mem["activations_known"]:
            mem_title += " -- activations unknown for a custom model"
        target = f"in {s.time_target_days:g} days" if training else f"at {s.requests_per_s:g} requests/s"

        shown = known.assign(
            peak_t=known["peak_flops"] / units.TERA,
            speed=[range_text(v / units.SECONDS_PER_HOUR, lo / units.SECONDS_PER_HOUR, hi / units.SECONDS_PER_HOUR, "{:,.0f}") for v, lo, hi in
                   zip(known["work_per_device_hour"], known["work_per_device_hour_low"],
                       known["work_per_device_hour_high"])],
        )
        cols = ["name", "peak_t", "speed"]
        names = ["device", f"{s.precision} peak [TFLOP/s]", f"projected {unit}/s per device (range)"]
        if training:
            shown["days"] = [range_text(v, lo, hi, "{:,.1f}") for v, lo, hi in
                             zip(known["days_on_n"], known["days_on_n_low"], known["days_on_n_high"])]
            cols += ["mfu", "days"]
            names += ["MFU", f"days on {s.n_devices} (range)"]
        else:
            shown["latency"] = [range_text(v * units.MILLISECONDS_PER_SECOND, lo * units.MILLISECONDS_PER_SECOND, hi * units.MILLISECONDS_PER_SECOND, "{:,.3g}") for v, lo, hi in
                                zip(known["latency_s"], known["latency_s_low"], known["latency_s_high"])]
            cols += ["latency"]
            names += [f"ms per {'token' if unit == 'tokens' else unit[:-1]} (range)"]
        cols += ["devices_for_target", "min_devices_memory", "devices_needed", "device_hours", "cloud_usd",
                 "matmul_source"]
        names += ["for the target", "for memory", "devices needed", "device-hours", "rent [USD]", "efficiency source"]
        shown = shown.sort_values("devices_needed")[cols]
        shown.columns = names
        # counts and money may be infinite (a model that never fits): 'does not fit', never 'inf'
        fmt = {f"{s.precision} peak [TFLOP/s]": "{:,.1f}".format, "MFU": "{:.0%}".format,
               "for the target": people_format(), "for memory": people_format(),
               "devices needed": people_format(), "device-hours": people_format(), "rent [USD]": people_format()}
        seed_shown = seed.assign(tflops=seed["flops_per_s"] / units.TERA)[["method", "tflops", "ratio_to_claim", "explanation"]]
        seed_shown.columns = ["method", "TFLOP/s", "× the claim", "why"]
        return {
            "need": need, "table": table, "memory": mem, "seed": seed,
            "summary": summary,
            "figures": {
                "devices": plots.devices_needed_chart(table, f"Devices needed {target} ({s.precision}, projected)"),
                "memory": plots.memory_breakdown_chart(parts, capacities, mem_title),
                "seed": plots.seed_rule_chart(seed),
            },
            "tables": {
                "devices": table_html(shown, fmt),
                "seed": table_html(seed_shown, {"TFLOP/s": people_format(), "× the claim": people_format()}),
            },
        }

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def _lesson(self, known, rate):
        """The source text's '8 × A100 at under 30 %' story, with this scenario's numbers."""
        a100 = self.catalog[self.catalog["name"] == "A100 80GB SXM"]
        if a100.empty or np.isnan(a100["bf16_tflops"].iloc[0]):
            return ""
        peak = a100["bf16_tflops"].iloc[0] * units.TERA
        delivered = 8 * peak * 0.30
        a100_row = known[known["name"] == "A100 80GB SXM"]
        needed = (f"; this scenario needs {a100_row['devices_for_target'].iloc[0]:.0f} A100(s) at the projected speed"
                  if len(a100_row) else "")
        return (
            f"The text's lesson: 8 × A100 used at 30 % deliver {delivered / units.TERA:,.0f} TFLOP/s -- what "
            f"{8 * 0.30:.1f} fully used A100s would{needed}. Measure utilisation (nvidia-smi, chapter 08) before buying."
        )

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result, self.scenario
        known = r["table"][r["table"]["feasible"].astype(bool)].dropna(subset=["peak_flops"]).set_index("name")
        lines = [
            f"workload: {s.workload}",
            f"model: {sizing.model_of(s)['name']} ({sizing.model_of(s)['params']:.3g} parameters)",
            f"total compute [FLOP]: {r['need']['total_flops']:.3g}",
            f"compute needed [TFLOP/s]: {r['need']['required_flops_per_s'] / units.TERA:.1f}",
            f"memory per device [GB]: {r['memory']['total'] / units.GIGA:.1f}",
            f"utilisation: {'projected' if s.utilization is None else f'{s.utilization:.2f}'}",
        ]
        for name in ("H100 SXM", "A100 80GB SXM"):
            if name in known.index:
                row = known.loc[name]
                lines.append(f"devices needed on {name}: {row['devices_needed']:.0f}")
                if row["kind"] == "training":
                    lines.append(f"days on {s.n_devices} × {name}: {row['days_on_n']:.1f} "
                                 f"({row['days_on_n_low']:.1f}-{row['days_on_n_high']:.1f})")
        lines.append(f"source-text formula [FLOP/s]: {r['seed'].loc[1, 'flops_per_s']:.3g}")
        lines += [line for line in r["summary"] if line.startswith(("Using your measurements", "Demand from your cluster"))]
        return "\n".join(lines)
