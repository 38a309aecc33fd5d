"""Chapter 02: memory bandwidth and the roofline."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import claims, llm, plots, roofline, sizing
from ..catalog import load_catalog, memory_bandwidth, peak_flops
from . import controls as C
from ._base import CSS, Panel, table_html

__all__ = ["RooflinePanel", "DEFAULT_ROOFLINE_DEVICES"]

DEFAULT_ROOFLINE_DEVICES = ("T4", "L4", "A100 80GB SXM", "H100 SXM", "Instinct MI300X", "TPU v5e")


class RooflinePanel(Panel):
    """Rooflines of chosen devices with the scenario's kernels on them."""

    title = "Bandwidth and the roofline"

    def __init__(self, scenario=None, catalog=None, bert_seq_len=128, t4_int8=True, measured_results="",
                 use_measurements=False):
        super().__init__(scenario)
        self.measured_results = measured_results
        self._measurements = None
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        names = set(self.catalog["name"])
        devices = [d for d in (s.devices or DEFAULT_ROOFLINE_DEVICES) if d in names]
        self.controls = {
            "model": C.model_picker(s.model, include_custom=False),
            "batch_size": C.integer("batch", s.batch_size, "sequences", width="210px"),
            "seq_len": C.integer("sequence length", s.seq_len, "tokens", width="250px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
            "devices": C.device_picker(self.catalog, devices),
            "bert_seq_len": C.integer("BERT sequence length", bert_seq_len, "tokens", width="260px"),
            "t4_int8": C.toggle("also run the T4 in int8", t4_int8),
            "use_measurements": C.toggle("use my measurements", use_measurements,
                                         tooltip="scale peak and bandwidth by the measured/datasheet ratios of "
                                                 "chapter 08's results (measured_results) in the decode estimate"),
        }
        for name in ("model", "batch_size", "seq_len", "precision"):
            self.bind(name, name)
        self.bind("devices", "devices", list, tuple)
        self.watch()
        self.refresh()

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = W.HBox([
            C.group("Workload", [c["model"], c["batch_size"], c["seq_len"], c["precision"], c["use_measurements"]]),
            C.group("Devices", [c["devices"]]),
            C.group("The source text's BERT claim", [c["bert_seq_len"], c["t4_int8"]]),
        ], layout=W.Layout(flex_flow="row wrap"))
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["roofline"], t["attainable"],
                       W.HTML("<h4>The source text: “T4 beats V100 at small batch for BERT inference”</h4>"),
                       self.claim_summary, f["bert"], self.save_box()])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["devices"]:
            raise ValueError("devices: pick at least one device to draw its roofline")
        if c["bert_seq_len"] < 1:
            raise ValueError(f"BERT sequence length must be a number of tokens >= 1; got {c['bert_seq_len']}")
        chosen = self.catalog[self.catalog["name"].isin(c["devices"])].copy()
        chosen["peak_flops"] = peak_flops(chosen, s.precision)
        chosen["bandwidth"] = memory_bandwidth(chosen)
        work = sizing.kernel_workloads(s)
        known = chosen.dropna(subset=["peak_flops", "bandwidth"])
        table = roofline.catalog_roofline(known["peak_flops"], known["bandwidth"], work["intensity"],
                                          known["name"], work["workload"])
        summary = []
        if known.empty:
            summary.append(f"None of the selected devices publishes both a {s.precision} peak and a bandwidth.")
        else:
            ridge = known["peak_flops"] / known["bandwidth"]
            summary.append(
                f"Ridge points of the selected devices at {s.precision}: {ridge.min():.0f} to {ridge.max():.0f} "
                f"FLOP/byte ({known.loc[ridge.idxmin(), 'name']} to {known.loc[ridge.idxmax(), 'name']}). "
                "A kernel below a device's ridge point is limited by its memory bandwidth."
            )
            for _, w in work.iterrows():
                bound_on = table[table["workload"] == w["workload"]]["bound"]
                n_mem = int((bound_on == "memory").sum())
                verdict = ("memory-bound on every selected device" if n_mem == len(bound_on) else
                           "compute-bound on every selected device" if n_mem == 0 else
                           f"memory-bound on {n_mem} of {len(bound_on)} devices")
                if w["workload"].startswith(("LLM decode", "LLM prefill", "forward pass")):
                    summary.append(f"{w['workload']}: intensity {w['intensity']:.3g} FLOP/byte, {verdict}.")
            self._decode_sentence(known, summary)
        missing = sorted(set(c["devices"]) - set(known["name"]))
        if missing:
            summary.append(f"Left out (no published {s.precision} peak or bandwidth): {', '.join(missing)}.")

        pivot = table.assign(cell=[f"{a / 1e12:,.1f} ({'mem' if b == 'memory' else 'cmp'})"
                                   for a, b in zip(table["attainable_flops"], table["bound"])])
        pivot = pivot.pivot(index="workload", columns="device", values="cell").reindex(work["workload"])
        pivot.insert(0, "intensity [FLOP/B]", [f"{v:.3g}" for v in work["intensity"]])
        pivot = pivot.reset_index()
        pivot.columns.name = None

        bert, verdict = claims.bert_t4_vs_v100(self.catalog, seq_len=c["bert_seq_len"], t4_int8=c["t4_int8"])
        self.claim_summary.value = f'<div class="ak-summary">{verdict}</div>'
        return {
            "table": table, "workloads": work, "bert": bert, "bert_verdict": verdict, "devices": known,
            "summary": summary,
            "figures": {
                "roofline": plots.roofline_chart(known, work, s.precision),
                "bert": plots.bert_claim_chart(bert),
            },
            "tables": {"attainable": table_html(pivot)},
        }

    @property
    def claim_summary(self):
        if not hasattr(self, "_claim_summary"):
            self._claim_summary = W.HTML()
        return self._claim_summary

    def _decode_sentence(self, known, summary):
        s = self.scenario
        self._decode_best = None
        model = sizing.model_of(s)
        preset = model["preset"]
        if preset is None or preset["kind"] not in ("decoder", "moe-decoder") or s.precision not in ("bf16", "fp16", "fp8", "int8"):
            return
        weight_bytes = llm.model_weight_bytes(preset, s.precision)
        kv = llm.model_kv_bytes(preset, s.seq_len, 1, s.precision if s.precision != "int4" else "int8")
        peak, bw = known["peak_flops"].to_numpy(), known["bandwidth"].to_numpy()
        flops_ratio, bw_ratio, note = self._measured_ratios()
        if note:
            summary.append(note)
        peak, bw = peak * flops_ratio, bw * bw_ratio
        b_star = llm.critical_batch(model["active_params"], weight_bytes, kv, peak, bw)
        tps = llm.decode_tokens_per_second(model["active_params"], weight_bytes, kv, s.batch_size, peak, bw)
        best = int(np.argmax(tps))
        self._decode_best = (known["name"].iloc[best], float(tps[best]))
        finite = np.isfinite(b_star)
        basis = "measured fractions of the datasheet" if note and note.startswith("Using") else "memory-bound floor"
        text = (f"Decoding {model['name']} at batch {s.batch_size} with a {s.seq_len}-token context: at most "
                f"{tps[best]:,.0f} tokens/s on {known['name'].iloc[best]} ({basis}, single device). ")
        if finite.any():
            i = int(np.argmin(np.where(finite, b_star, np.inf)))
            text += (f"The step turns compute-bound from batch {b_star[i]:,.0f} on {known['name'].iloc[i]}"
                     + ("" if finite.all() else "; on some devices the KV-cache traffic keeps it memory-bound at any batch")
                     + ".")
        else:
            text += "At this context length the KV-cache traffic keeps decode memory-bound at any batch."
        summary.append(text)

    def _measured_ratios(self):
        """(compute ratio, bandwidth ratio, sentence) from chapter 08's results, or (1, 1, None)."""
        if not self.controls["use_measurements"].value:
            return 1.0, 1.0, None
        if not self.measured_results:
            raise ValueError("use my measurements: give measured_results, a JSON file written by chapter 08 "
                             "(accelkit probe --json)")
        from .. import probes

        if self._measurements is None:
            self._measurements = probes.load_results(self.measured_results)
        calib = probes.calibration(self._measurements)
        flops = calib[calib["precision"] == self.scenario.precision]["ratio"]
        bw = calib[calib["quantity"] == "memory bandwidth (read)"]["ratio"]
        f = float(flops.iloc[0]) if len(flops) and np.isfinite(flops.iloc[0]) else np.nan
        b = float(bw.iloc[0]) if len(bw) and np.isfinite(bw.iloc[0]) else np.nan
        source = calib["source"].iloc[0] if len(calib) else self.measured_results
        device = calib["device_name"].iloc[0] if len(calib) else "?"
        if np.isnan(f) and np.isnan(b):
            return 1.0, 1.0, (f"Measurements not used: {source} has no datasheet to compare with "
                              f"({device} is not in the catalogue).")
        f, b = (1.0 if np.isnan(f) else f), (1.0 if np.isnan(b) else b)
        return f, b, (f"Using measured fractions from {source} ({device}): {f:.0%} of the {self.scenario.precision} "
                      f"matmul peak and {b:.0%} of the memory bandwidth, applied to every device shown.")

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result, self.scenario
        lines = [f"precision: {s.precision}", f"batch: {s.batch_size}"]
        for _, w in r["workloads"].iterrows():
            if w["workload"].startswith(("LLM decode", "LLM prefill", "forward pass")):
                lines.append(f"{w['workload']} intensity [FLOP/B]: {w['intensity']:.3g}")
        dev = r["devices"].set_index("name")
        for name in ("A100 80GB SXM", "H100 SXM"):
            if name in dev.index:
                lines.append(f"ridge point {name} [FLOP/B]: {dev.loc[name, 'peak_flops'] / dev.loc[name, 'bandwidth']:.0f}")
        if getattr(self, "_decode_best", None):
            lines.append(f"decode upper bound [tokens/s]: {self._decode_best[1]:,.0f} on {self._decode_best[0]}")
        attrs = r["bert"].attrs
        lines.append(f"BERT claim, T4 faster than V100 at some batch: {'yes' if attrs['holds_on_speed'] else 'no'}")
        lines.append(f"BERT claim, T4 more efficient per watt: {'yes' if attrs['t4_wins_per_watt'] else 'no'}")
        return "\n".join(lines)
