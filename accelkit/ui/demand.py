"""Chapter 01: quantify compute demand -- FLOPs, devices, days, memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import ipywidgets as W

from .. import demand, plots, sizing, units
from ..catalog import load_catalog
from ..memory import usable_bytes
from ..i18n import N_, _
from ..numbers import DOES_NOT_FIT, UNKNOWN, people, people_format
from ..select.reasons import source_words, why_words
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


#: words for the workload and its units of work (translated where shown)
_WORKLOAD_WORDS = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference")}
_UNIT_WORDS = {"tokens": N_("tokens"), "frames": N_("frames"), "requests": N_("requests"), "samples": N_("samples"),
               "pairs": N_("user-item pairs")}
_ONE_WORDS = {"tokens": N_("output token"), "frames": N_("frame"), "requests": N_("request"), "samples": N_("sample"),
              "pairs": N_("batch pass")}  # a recommender's latency: one pass over a batch of pairs


def _default_devices(scenario, catalog):
    """The devices a chapter lists when the person picked none: the edge boxes for an edge deployment
    (those the decision ranks first there), the usual datacentre set otherwise."""
    if scenario.deployment == "edge":
        return catalog.loc[catalog["segment"] == "edge", "name"].tolist()
    return [d for d in C.DEFAULT_DEVICES if d in set(catalog["name"])]


class DemandPanel(Panel):
    """From model size and data (or the source text's rule) to devices and days."""

    title = N_("Compute demand")

    def __init__(self, scenario=None, catalog=None, seed_params=1e8, seed_batch=32, seed_iters_per_s=10.0,
                 seed_tokens_per_sample=512, measured_results="", use_measurements=False, measured_demand=""):
        super().__init__(scenario)
        self.measurements = ProbeMeasurements(measured_results)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        devices = s.devices or _default_devices(s, self.catalog)
        self.controls = {
            # (label, value) pairs: the labels in the language in use, the values English (the scenario's)
            "workload": C.choice(_("workload"), [(_(_WORKLOAD_WORDS[w]), w) for w in ("training", "fine-tuning",
                                                                                      "inference")],
                                 s.workload, width="210px"),
            "model": C.model_picker(s.model if s.model != "custom" else "custom"),
            "params_b": C.number(_("custom size"), (s.params or 7e9) / _B, _("billion params"), width="260px"),
            "tokens_b": C.number(_("training tokens"), s.tokens / _B, _("billion"), width="250px"),
            "time_target_days": C.number(_("finish within"), s.time_target_days, _("days"), width="220px"),
            "requests_per_s": C.number(_("requests"), s.requests_per_s, _("per s"), width="200px"),
            "seq_len": C.integer(_("sequence length"), s.seq_len, _("tokens"), width="250px"),
            "batch_size": C.integer(_("batch"), s.batch_size, _("sequences"), width="210px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "n_devices": C.integer(_("cluster size"), s.n_devices, _("devices"), width="220px"),
            "zero_stage": C.choice(_("ZeRO stage"), [0, 1, 2, 3], s.zero_stage, width="150px",
                                   tooltip=_("0: replicate everything; 1: shard optimizer; 2: +gradients; 3: +weights")),
            "devices": C.device_picker(self.catalog, devices),
            "use_measurements": C.toggle(_("use my measurements"), use_measurements,
                                         tooltip=_("replace the published efficiencies of the measured device with "
                                                   "chapter 08's results (measured_results)")),
            "seed_params": C.number(_("params"), seed_params, _("count"), width="200px"),
            "seed_batch": C.integer(_("batch"), seed_batch, "", width="140px"),
            "seed_iters_per_s": C.number(_("iterations"), seed_iters_per_s, _("per s"), width="200px"),
            "seed_tokens_per_sample": C.integer(_("tokens per sample"), seed_tokens_per_sample, "", width="200px"),
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
            _("my cluster"), builtin=[(_("example (8 × A100 at 30 %)"), "example")], accept=".json,.csv,.txt,.log",
            suffixes=(".json", ".csv", ".txt", ".log"), given=given, width="330px")
        self.measured_picker.choice.tooltip = _("what `accelkit monitor --json` (chapter 11) measured, or an "
                                                 "nvidia-smi log: upload it; 'example' is the shipped 8 × A100 at 30 %")
        self.measured_controls = {
            "source": self.measured_picker.choice,
            "upload": self.measured_picker.upload,
            "button": W.Button(description=_("Use my cluster's pace"), icon="tachometer",
                               tooltip=_("set the time target (training) or request rate (serving) to the work your "
                                         "GPUs really do"), layout=W.Layout(width="200px")),
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
            C.group(_("Workload"), [c["workload"], c["model"], c["params_b"], c["tokens_b"], c["time_target_days"],
                                 c["requests_per_s"], c["seq_len"], c["batch_size"]]),
            C.group(_("Hardware"), [c["precision"], c["own_mfu"], c["utilization"], c["use_measurements"], c["n_devices"],
                                 c["zero_stage"], c["devices"]]),
            C.group(_("The source text's rule"), [c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
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
        decision = None
        if s.search_configurations and not table.empty:
            # the decision's own figure per device: the configuration chapter 09 searches (batch, tensor parallel,
            # ZeRO stage, precision), next to this chapter's figure at the scenario's settings -- also for a
            # device this chapter cannot project at the scenario's precision (fp16 stands in for bf16 there)
            from ..configsearch import best_configurations

            decision = best_configurations(s, self.catalog[self.catalog["name"].isin(table["name"])],
                                           measurements=measurements)
        mem = sizing.memory_need(s)
        training = s.workload in sizing.TRAINING_WORKLOADS
        rate = need["required_flops_per_s"]
        unit = table["work_unit"].iloc[0] if len(table) else "tokens"
        how = (_("your own MFU of {share}").format(share=f"{s.utilization:.0%}") if s.utilization is not None else
               _("the projection engine (published efficiencies, fitted overheads; chapter 10 shows how well it "
                 "matches published measurements)"))

        summary = []
        kind = table["kind"].iloc[0] if len(table) else ("training" if training else "llm")
        ops = "OP/s" if s.precision == "int8" else "FLOP/s"
        if training:
            summary.append(_(
                "{workload} {model} on {tokens} costs {flop} ({rule}). Finishing in {days} days needs a sustained "
                "{rate} TFLOP/s.").format(workload=_(_WORKLOAD_WORDS[s.workload]).capitalize(), model=model["name"],
                                  tokens=people(s.tokens, _(_UNIT_WORDS[unit])), flop=people(need["total_flops"], "FLOP"),
                                  rule=need["rule"], days=f"{s.time_target_days:g}", rate=f"{rate / units.TERA:,.1f}"))
        elif kind == "vision":
            summary.append(_("Serving {model} on {streams} camera streams × {fps} frames/s needs {rate} ({rule}).").format(
                model=model["name"], streams=s.streams, fps=f"{s.frames_per_s:g}", rate=people(rate, ops),
                rule=need["rule"]))
        elif kind == "recommender":
            summary.append(_("Scoring {rps} user-item pairs/s with {model} needs {rate} ({rule}).").format(
                model=model["name"], rps=f"{s.requests_per_s:g}", rate=people(rate, ops), rule=need["rule"]))
        else:
            summary.append(_("Serving {model} at {rps} requests/s of {tokens} tokens needs {rate} TFLOP/s "
                             "({rule}).").format(model=model["name"], rps=f"{s.requests_per_s:g}",
                                                 tokens=s.seq_len + (s.output_tokens if kind == "llm" else 0),
                                                 rate=f"{rate / units.TERA:,.1f}", rule=need["rule"]))
        # a device the model never fits on (or not on the scenario's cluster, for training) is no answer:
        # it is never the fewest, the fastest or the cheapest
        fitting = known[np.isfinite(known["devices_needed"].astype(float))
                        & (known["fits"].astype(bool) if training else True)]
        if not fitting.empty:
            best = fitting.sort_values(["devices_needed", "peak_flops"], ascending=[True, False]).iloc[0]
            target_words = _("time target") if training else (_("frame rate") if kind == "vision" else
                                                              _("pair rate") if kind == "recommender" else _("request rate"))
            summary.append(_(
                "Projected with {how}: the fewest devices among those selected is {n} × {name} ({for_target} for the "
                "{target}, {for_memory} to hold the memory).").format(
                how=how, n=f"{best['devices_needed']:.0f}", name=best["name"],
                for_target=f"{best['devices_for_target']:.0f}", target=target_words,
                for_memory=f"{best['min_devices_memory']:.0f}"))
            if training:
                fastest = fitting.sort_values("days_on_n").iloc[0]
                summary.append(_(
                    "On {n} devices the job takes {days} days ({low}-{high}) on {name}, a projected MFU of {mfu} "
                    "(efficiency: {source}).").format(
                    n=s.n_devices, days=f"{fastest['days_on_n']:.1f}", low=f"{fastest['days_on_n_low']:.1f}",
                    high=f"{fastest['days_on_n_high']:.1f}", name=fastest["name"], mfu=f"{fastest['mfu']:.0%}",
                    source=source_words(fastest["matmul_source"])))
            else:
                quick = fitting.sort_values("latency_s").iloc[0]
                ms = units.MILLISECONDS_PER_SECOND
                summary.append(_(
                    "Fastest per {one}: {name} at {value} ms ({low}-{high}), {rate} {unit}/s per device "
                    "(efficiency: {source}).").format(
                    one=_(_ONE_WORDS[unit]), name=quick["name"], value=f"{quick['latency_s'] * ms:,.3g}",
                    low=f"{quick['latency_s_low'] * ms:,.3g}", high=f"{quick['latency_s_high'] * ms:,.3g}",
                    rate=f"{quick['work_per_device_hour'] / units.SECONDS_PER_HOUR:,.0f}", unit=_(_UNIT_WORDS[unit]),
                    source=source_words(quick["matmul_source"])))
            priced = fitting.dropna(subset=["cloud_usd"])
            if not priced.empty:
                cheap = priced.sort_values("cloud_usd").iloc[0]
                sentence = (_("Cheapest to rent for the whole run: {name} at {cost} ({hours} device-hours at {rate}/h "
                              "on demand).") if training else
                            _("Cheapest to rent for an hour of serving: {name} at {cost} ({hours} device-hours at "
                              "{rate}/h on demand)."))
                summary.append(sentence.format(name=cheap["name"], cost=f"${cheap['cloud_usd']:,.0f}",
                                               hours=f"{cheap['device_hours']:,.0f}",
                                               rate=f"${cheap['cloud_usd_per_hour']:.2f}"))
        elif not known.empty:
            summary.append((_("The model does not fit on {n} of any selected device: no time or rent is shown for "
                              "them.") if training else
                            _("The model does not fit on any selected device: no time or rent is shown for them."))
                           .format(n=s.n_devices))
        unfit = known[~known["name"].isin(fitting["name"])]["name"].tolist()
        if len(unfit) and not fitting.empty:
            summary.append((_("Does not fit on {n} devices (left out of the fewest, fastest and cheapest): {names}.")
                            if training else _("Does not fit (left out of the fewest, fastest and cheapest): {names}."))
                           .format(n=s.n_devices, names=", ".join(unfit)))
        if decision is not None and not fitting.empty:
            chosen = decision.set_index("name")
            pick = (chosen.reindex(fitting["name"]).dropna(subset=["days_on_n" if training else "latency_s"]))
            if len(pick):
                top = pick.sort_values("days_on_n" if training else "latency_s").iloc[0]
                summary.append(_(
                    "The decision (chapter 09) searches each device's configuration; its figure for each device is the "
                    "last column of the table (fastest there: {name}, {configuration}: {figure}).").format(
                    name=top.name, configuration=top["configuration"], figure=self._decision_figure(top, unit)))
        if training and s.zero_stage < 3 and not known.empty:
            anchor = best if not fitting.empty else known.sort_values("min_devices_memory").iloc[0]
            sharded = sizing.per_device(s.copy().update(zero_stage=3), self.catalog, [anchor["name"]]).iloc[0]
            if sharded["min_devices_memory"] < anchor["min_devices_memory"] and not np.isfinite(
                    anchor["min_devices_memory"]):
                summary.append(_(
                    "ZeRO-3 (weights, gradients and optimizer sharded) would hold the memory on {n} × {name}, which "
                    "ZeRO-{stage} cannot hold on any number of them.").format(
                    n=people(sharded["min_devices_memory"]), name=anchor["name"], stage=s.zero_stage))
            elif sharded["min_devices_memory"] < anchor["min_devices_memory"]:
                summary.append(_(
                    "ZeRO-3 (weights, gradients and optimizer sharded) would hold the memory on {n} × {name} instead "
                    "of {before}.").format(n=people(sharded["min_devices_memory"]), name=anchor["name"],
                                           before=people(anchor["min_devices_memory"])))
        missing = table[~table["name"].isin(known["name"])]
        if len(missing):
            summary.append(_("{n} selected device(s) cannot be projected and are left out: {which}.").format(
                n=len(missing), which="; ".join(f"{n} ({self._missing_words(n, w, decision, unit, training)})"
                                                for n, w in zip(missing["name"], missing["why"]))))
        if measurements is not None:
            summary.append(_("Using your measurements ({source}) for {device} where it is in the catalogue.").format(
                source=self.measurements.source(), device=measurements["device_name"].iloc[0]))
        # the note holds only while the targets are the measured ones (a person may change them after)
        if self.measured_note and all(getattr(s, k) == v for k, v in self._measured_fields.items()):
            summary.append(self.measured_note)
        summary.append(self._lesson(fitting, rate))

        seed = demand.seed_claim_check(c["seed_params"], c["seed_batch"], c["seed_iters_per_s"],
                                       c["seed_tokens_per_sample"])
        summary.append(_(
            "The source text's rule (params × 3 × batch × it/s) gives {rate} for its example, {ratio}× its claimed "
            "100 TFLOPS; 6·N per token with {tokens} tokens per sample gives {tflops} TFLOP/s.").format(
            rate=people(seed.loc[1, "flops_per_s"], "FLOP/s"), ratio=f"{seed.loc[1, 'ratio_to_claim']:.2g}",
            tokens=c["seed_tokens_per_sample"], tflops=people(seed.loc[3, "flops_per_s"] / units.TERA)))

        parts = {k: mem[k] / units.GIGA for k in ("weights", "gradients", "optimizer", "activations", "kv_cache")}
        chosen = self.catalog[self.catalog["name"].isin(table["name"])].set_index("name")
        capacities = usable_bytes(chosen["memory_gb"].dropna() * units.GIGA) / units.GIGA
        if training:
            how_mem = _("ZeRO-{stage}, {n} devices, batch {batch} × {seq} tokens").format(
                stage=s.zero_stage, n=s.n_devices, batch=s.batch_size, seq=s.seq_len)
        elif kind == "vision":
            how_mem = _("batch {batch} frames").format(batch=s.batch_size)
        elif kind == "recommender":
            how_mem = _("embedding tables and MLPs over {n} devices").format(n=s.n_devices)
        else:
            how_mem = _("batch {batch}, {context}-token context, sharded over {n}").format(
                batch=s.batch_size, context=s.seq_len + s.output_tokens, n=s.n_devices)
        mem_title = _("Memory per device: {gb} GB ({how})").format(gb=f"{mem['total'] / units.GIGA:,.1f}", how=how_mem)
        if training and not mem["activations_known"]:
            mem_title += " -- " + _("activations unknown for a custom model")
        if training:
            target = _("in {days} days").format(days=f"{s.time_target_days:g}")
        elif kind == "vision":
            target = _("for {streams} streams × {fps} frames/s").format(streams=s.streams, fps=f"{s.frames_per_s:g}")
        elif kind == "recommender":
            target = _("at {rps} user-item pairs/s").format(rps=f"{s.requests_per_s:g}")
        else:
            target = _("at {rps} requests/s").format(rps=f"{s.requests_per_s:g}")

        fits_here = known["name"].isin(fitting["name"]).to_numpy()
        shown = known.assign(
            peak_t=known["peak_flops"] / units.TERA,
            speed=[range_text(v / units.SECONDS_PER_HOUR, lo / units.SECONDS_PER_HOUR, hi / units.SECONDS_PER_HOUR, "{:,.0f}") for v, lo, hi in
                   zip(known["work_per_device_hour"], known["work_per_device_hour_low"],
                       known["work_per_device_hour_high"])],
        )
        peak_name = _("{precision} peak [{unit}]").format(precision=s.precision,
                                                          unit="TOP/s" if s.precision == "int8" else "TFLOP/s")
        cols = ["name", "peak_t", "speed"]
        names = [_("device"), peak_name, _("projected {unit}/s per device (range)").format(unit=_(_UNIT_WORDS[unit]))]
        if training:
            # a run that cannot hold the model on the scenario's cluster has no time there: 'does not fit'
            shown["days"] = [range_text(v, lo, hi, "{:,.1f}") if ok else _(DOES_NOT_FIT) for v, lo, hi, ok in
                             zip(known["days_on_n"], known["days_on_n_low"], known["days_on_n_high"], fits_here)]
            cols += ["mfu", "days"]
            names += ["MFU", _("days on {n} (range)").format(n=s.n_devices)]
        else:
            shown["latency"] = [range_text(v * units.MILLISECONDS_PER_SECOND, lo * units.MILLISECONDS_PER_SECOND, hi * units.MILLISECONDS_PER_SECOND, "{:,.3g}") for v, lo, hi in
                                zip(known["latency_s"], known["latency_s_low"], known["latency_s_high"])]
            cols += ["latency"]
            names += [_("ms per {one} (range)").format(one=_(_ONE_WORDS[unit]))]
        # no rent for a device the model does not fit on: people_format writes 'does not fit' for inf
        shown["device_hours"] = np.where(fits_here, shown["device_hours"], np.inf)
        shown["cloud_usd"] = np.where(fits_here, shown["cloud_usd"], np.inf)
        cols += ["devices_for_target", "min_devices_memory", "devices_needed", "device_hours", "cloud_usd",
                 "matmul_source"]
        names += [_("for the target"), _("for memory"), _("devices needed"), _("device-hours"), _("rent [USD]"),
                  _("efficiency source")]
        if decision is not None:
            by_name = decision.set_index("name")
            shown["decision"] = [
                f"{by_name.loc[n, 'configuration']}: {self._decision_figure(by_name.loc[n], unit)}"
                if n in by_name.index and by_name.loc[n, "days_on_n" if training else "latency_s"] ==
                by_name.loc[n, "days_on_n" if training else "latency_s"] else _(UNKNOWN) for n in shown["name"]]
            cols += ["decision"]
            names += [_("the decision's configuration (chapter 09)")]
        shown["matmul_source"] = shown["matmul_source"].map(source_words)
        shown = shown.sort_values("devices_needed")[cols]
        shown.columns = names
        # counts and money may be infinite (a model that never fits): 'does not fit', never 'inf'
        fmt = {peak_name: "{:,.1f}".format, "MFU": "{:.0%}".format,
               _("for the target"): people_format(), _("for memory"): people_format(),
               _("devices needed"): people_format(), _("device-hours"): people_format(),
               _("rent [USD]"): people_format()}
        # the source text's example in words of the reader's language (the data keep their English names)
        seed_words = seed.assign(
            method=[_(m) if i < 3 else _("6·N per token ({tokens} tokens/sample)").format(
                tokens=f"{c['seed_tokens_per_sample']:g}") for i, m in enumerate(seed["method"])],
            explanation=[_(e) for e in seed["explanation"]])
        seed_shown = seed_words.assign(tflops=seed["flops_per_s"] / units.TERA)[
            ["method", "tflops", "ratio_to_claim", "explanation"]]
        seed_shown.columns = [_("method"), "TFLOP/s", _("× the claim"), _("why")]
        return {
            "need": need, "table": table, "memory": mem, "seed": seed, "decision": decision,
            "summary": summary,
            "figures": {
                "devices": plots.devices_needed_chart(table, _("Devices needed {target} ({precision}, projected)").format(
                    target=target, precision=s.precision)),
                "memory": plots.memory_breakdown_chart(parts, capacities, mem_title),
                "seed": plots.seed_rule_chart(seed_words),
            },
            "tables": {
                "devices": table_html(shown, fmt),
                "seed": table_html(seed_shown, {"TFLOP/s": people_format(), _("× the claim"): people_format()}),
            },
        }

    @classmethod
    def _missing_words(cls, name, why, decision, unit, training):
        """Why this chapter cannot project a device and, where chapter 09 can (fp16 standing in for bf16,
        say), how it runs it: one answer for the device in both places."""
        words = why_words(why)
        if decision is None or name not in set(decision["name"]):
            return words
        row = decision.set_index("name").loc[name]
        figure = row["days_on_n" if training else "latency_s"]
        if not figure == figure:
            return words
        return _("{why}; chapter 09 runs it as {configuration}: {figure}").format(
            why=words, configuration=row["configuration"], figure=cls._decision_figure(row, unit))

    @staticmethod
    def _decision_figure(row, unit):
        """The decision's figure of one device in words: days (training) or ms per token / frame / request."""
        if "days_on_n" in row and row["days_on_n"] == row["days_on_n"] and row.get("kind") == "training":
            return _("{days} days").format(days=f"{row['days_on_n']:.1f}")
        return _("{ms} ms per {one}").format(ms=f"{row['latency_s'] * units.MILLISECONDS_PER_SECOND:,.3g}",
                                              one=_(_ONE_WORDS[unit]))

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
        tflops = f"{delivered / units.TERA:,.0f}"
        if len(a100_row):
            return _("The text's lesson: 8 × A100 used at 30 % deliver {tflops} TFLOP/s -- what {n} fully used A100s "
                     "would; this scenario needs {needed} A100(s) at the projected speed. Measure utilisation "
                     "(nvidia-smi, chapter 08) before buying.").format(
                tflops=tflops, n=f"{8 * 0.30:.1f}", needed=f"{a100_row['devices_for_target'].iloc[0]:.0f}")
        return _("The text's lesson: 8 × A100 used at 30 % deliver {tflops} TFLOP/s -- what {n} fully used A100s "
                 "would. Measure utilisation (nvidia-smi, chapter 08) before buying.").format(
            tflops=tflops, n=f"{8 * 0.30:.1f}")

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
