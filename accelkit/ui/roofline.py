"""Chapter 02: memory bandwidth and the roofline."""

from __future__ import annotations

import ipywidgets as W

from .. import claims, plots, projection, roofline, sizing, units
from ..catalog import datasheet_memory_bandwidth, load_catalog, peak_flops
from ..i18n import N_, _
from ..kernels import kernel_workloads
from ..numbers import people
from ..projection.for_scenario import scenario_stack
from ..select.reasons import source_words
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html
from .catalogue import devices_label
from .measurements import ProbeMeasurements

__all__ = ["RooflinePanel", "DEFAULT_ROOFLINE_DEVICES"]

DEFAULT_ROOFLINE_DEVICES = ("T4", "L4", "A100 80GB SXM", "H100 SXM", "Instinct MI300X", "TPU v5e")

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("roofline", "ridge point", "Ridge point", "arithmetic intensity", "intensity", "memory-bound", "compute-bound",
         "memory bandwidth", "LLM decode", "LLM prefill", "decoding", "Decoding", "tensor parallel", "tokens/s",
         "batch", "dense", "TFLOP/s", "HBM", "achievable matmul rate", "TPOT", "TTFT", "KV cache", "int8")


class RooflinePanel(Panel):
    """Rooflines of chosen devices with the scenario's kernels on them."""

    title = N_("Bandwidth and the roofline")

    def __init__(self, scenario=None, catalog=None, bert_seq_len=128, t4_int8=True, measured_results="",
                 use_measurements=False):
        super().__init__(scenario)
        self.measurements = ProbeMeasurements(measured_results)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        names = set(self.catalog["name"])
        devices = [d for d in (s.devices or DEFAULT_ROOFLINE_DEVICES) if d in names]
        self.controls = {
            "model": C.model_picker(s.model, description=_("model"), include_custom=False),
            "batch_size": C.integer(_("batch"), s.batch_size, _("sequences"), width="210px"),
            "seq_len": C.integer(_("sequence length"), s.seq_len, _("tokens"), width="250px"),
            "precision": C.precision_picker(s.precision, ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"],
                                            description=_("precision")),
            "devices": C.device_picker(self.catalog, devices, description=devices_label()),
            "bert_seq_len": C.integer(_("BERT sequence length"), bert_seq_len, _("tokens"), width="260px"),
            "t4_int8": C.toggle(_("also run the T4 in int8"), t4_int8),
            "use_measurements": C.toggle(_("use my measurements"), use_measurements,
                                         tooltip=_("replace the published efficiencies of the measured device with "
                                                   "chapter 08's results (measured_results)")),
        }
        self.bind_same("model", "batch_size", "seq_len", "precision")
        self.bind_list("devices")
        self.words = T.WordsBox(TERMS)
        self.start()

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group(_("Workload"), [c["model"], c["batch_size"], c["seq_len"], c["precision"], c["use_measurements"]]),
            C.group(_("Devices"), [c["devices"]]),
            C.group(_("The source text's BERT claim"), [c["bert_seq_len"], c["t4_int8"]]),
        )
        heading = _("The source text: “T4 beats V100 at small batch for BERT inference”")
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["roofline"], t["attainable"],
                       W.HTML(f"<h4>{heading}</h4>"),
                       self.claim_summary, f["bert"], self.words.widget, self.save_box()])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["devices"]:
            raise ValueError(_("devices: pick at least one device to draw its roofline"))
        if c["bert_seq_len"] < 1:
            raise ValueError(_("BERT sequence length must be a number of tokens >= 1; got {value}").format(
                value=c["bert_seq_len"]))
        chosen = self.catalog[self.catalog["name"].isin(c["devices"])].copy()
        chosen["peak_flops"] = peak_flops(chosen, s.precision)
        chosen["bandwidth"] = datasheet_memory_bandwidth(chosen)
        measurements = self.measurements.when(self.controls["use_measurements"].value)
        if s.precision in projection.COMPUTE_PRECISIONS:
            mm = projection.matmul_flops(list(chosen["name"]), s.precision, self.catalog, measurements, True)
            bw = projection.memory_bandwidth(list(chosen["name"]), self.catalog, measurements, True)
            chosen["achievable_flops"] = mm["matmul_flops"].to_numpy()
            chosen["achievable_bandwidth"] = bw["memory_bandwidth"].to_numpy()
            chosen["efficiency_source"] = ("matmul: " + mm["source"] + " | memory: " + bw["source"]).to_numpy()
        work = kernel_workloads(s)
        known = chosen.dropna(subset=["peak_flops", "bandwidth"])
        table = roofline.catalog_roofline(known["peak_flops"], known["bandwidth"], work["intensity"],
                                          known["name"], work["workload"])
        summary = []
        if known.empty:
            summary.append(_("None of the selected devices publishes both a {precision} peak and a "
                             "bandwidth.").format(precision=s.precision))
        else:
            ridge = known["peak_flops"] / known["bandwidth"]
            summary.append(
                _("Ridge points of the selected devices at {precision}: {low} to {high} FLOP/byte ({low_device} to "
                  "{high_device}). A kernel below a device's ridge point is limited by its memory bandwidth.").format(
                    precision=s.precision, low=f"{ridge.min():.0f}", high=f"{ridge.max():.0f}",
                    low_device=known.loc[ridge.idxmin(), "name"], high_device=known.loc[ridge.idxmax(), "name"])
            )
            for _i, w in work.iterrows():
                bound_on = table[table["workload"] == w["workload"]]["bound"]
                n_mem = int((bound_on == "memory").sum())
                verdict = (_("memory-bound on every selected device") if n_mem == len(bound_on) else
                           _("compute-bound on every selected device") if n_mem == 0 else
                           _("memory-bound on {count} of {total} devices").format(count=n_mem, total=len(bound_on)))
                if w["workload"].startswith(("LLM decode", "LLM prefill", "forward pass")):
                    summary.append(_("{workload}: intensity {intensity} FLOP/byte, {verdict}.").format(
                        workload=w["label"], intensity=people(w["intensity"]), verdict=verdict))
            self._decode_sentence(known, summary)
        missing = sorted(set(c["devices"]) - set(known["name"]))
        if missing:
            summary.append(_("Left out (no published {precision} peak or bandwidth): {devices}.").format(
                precision=s.precision, devices=", ".join(missing)))

        mem_word, cmp_word = _("mem"), _("cmp")
        pivot = table.assign(cell=[f"{a / units.TERA:,.1f} ({mem_word if b == 'memory' else cmp_word})"
                                   for a, b in zip(table["attainable_flops"], table["bound"])])
        pivot = pivot.pivot(index="workload", columns="device", values="cell").reindex(work["workload"])
        pivot.insert(0, _("intensity [FLOP/B]"), [people(v) for v in work["intensity"]])
        pivot = pivot.reset_index()
        pivot.columns.name = None
        pivot = pivot.rename(columns={"workload": _("workload")})
        pivot.iloc[:, 0] = work["label"].to_numpy()
        shown_work = work.assign(workload=work["label"])

        # the claim depends on its own two controls only, not on the scenario
        bert, verdict, bert_figure = self.reuse("bert", (c["bert_seq_len"], c["t4_int8"]), lambda: self._bert_claim(c))
        return {
            "table": table, "workloads": work, "bert": bert, "bert_verdict": verdict, "devices": known,
            "summary": summary,
            "figures": {
                "roofline": plots.roofline_chart(known, shown_work, s.precision),
                "bert": bert_figure,
            },
            "tables": {"attainable": table_html(pivot)},
        }

    def _bert_claim(self, c):
        bert, verdict = claims.bert_t4_vs_v100(self.catalog, seq_len=c["bert_seq_len"], t4_int8=c["t4_int8"])
        return bert, verdict, plots.bert_claim_chart(bert)

    @property
    def claim_summary(self):
        if not hasattr(self, "_claim_summary"):
            self._claim_summary = W.HTML()
        return self._claim_summary

    def render(self, result):
        self.claim_summary.value = f'<div class="ak-summary">{result["bert_verdict"]}</div>'
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def _decode_sentence(self, known, summary):
        """Projected decode speed of the scenario's LLM on the devices shown (the engine's figure)."""
        s = self.scenario
        self._decode_best = None
        self._decode_source = None
        model = sizing.model_of(s)
        preset = model["preset"]
        if preset is None or preset["kind"] not in ("decoder", "moe-decoder") or s.precision not in (
                "bf16", "fp16", "fp8", "int8"):
            return
        frame = projection.inference(list(known["name"]), preset["name"], precision=s.precision,
                                     n_devices=s.n_devices, batch_size=s.batch_size, input_tokens=s.seq_len,
                                     output_tokens=s.output_tokens, catalog=self.catalog, stack=scenario_stack(s, "llm"),
                                     measurements=self.measurements.when(self.controls["use_measurements"].value), check_memory=False)
        frame = frame[frame["feasible"]]
        if frame.empty:
            summary.append(_("Decoding {model}: none of the selected devices can hold it on {n} device(s).").format(
                model=model["name"], n=s.n_devices))
            return
        best = frame.loc[frame["output_tokens_per_s_per_device"].idxmax()]
        self._decode_best = (best["name"], float(best["output_tokens_per_s_per_device"]))
        bound = _("memory-bound") if best["memory_bound"] else _("compute-bound")
        # where the efficiency comes from, in the language in use (the titles of its sources as published)
        self._decode_source = source_words(best["memory_source"] if best["memory_bound"] else best["matmul_source"])
        summary.append(_(
            "Decoding {model} at batch {batch} with a {prompt}-token prompt and {output} output tokens (projected, "
            "{n} device(s), tensor parallel {tp}): {rate} tokens/s per device ({low}-{high}) on {device}, {tpot} ms "
            "per token, {bound}. Efficiency: {source}.").format(
            model=model["name"], batch=s.batch_size, prompt=s.seq_len, output=s.output_tokens, n=s.n_devices,
            tp=f"{best['tensor_parallel']:.0f}", rate=f"{best['output_tokens_per_s_per_device']:,.0f}",
            low=f"{best['output_tokens_per_s_per_device_low']:,.0f}",
            high=f"{best['output_tokens_per_s_per_device_high']:,.0f}", device=best["name"],
            tpot=f"{best['tpot_s'] * units.MILLISECONDS_PER_SECOND:,.2f}", bound=bound,
            source=self._decode_source))

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r, s = self.result, self.scenario
        lines = [f"precision: {s.precision}", f"batch: {s.batch_size}"]
        for _i, w in r["workloads"].iterrows():
            if w["workload"].startswith(("LLM decode", "LLM prefill", "forward pass")):
                lines.append(f"{w['workload']} intensity [FLOP/B]: {w['intensity']:.3g}")
        dev = r["devices"].set_index("name")
        for name in ("A100 80GB SXM", "H100 SXM"):
            if name in dev.index:
                lines.append(f"ridge point {name} [FLOP/B]: {dev.loc[name, 'peak_flops'] / dev.loc[name, 'bandwidth']:.0f}")
        if getattr(self, "_decode_best", None):
            lines.append(f"decode projected [tokens/s per device]: {self._decode_best[1]:,.0f} on {self._decode_best[0]}")
        attrs = r["bert"].attrs
        lines.append(f"BERT claim, T4 faster than V100 at some batch: {'yes' if attrs['holds_on_speed'] else 'no'}")
        lines.append(f"BERT claim, T4 more efficient per watt: {'yes' if attrs['t4_wins_per_watt'] else 'no'}")
        return "\n".join(lines)
