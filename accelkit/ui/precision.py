"""Chapter 03: the cost of precision -- speed, memory, accuracy risk."""

from __future__ import annotations


import ipywidgets as W
import numpy as np
import pandas as pd

from .. import memory, plots, precision, sizing, units
from ..catalog import find, load_catalog
from ..i18n import N_, _, language
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html
from .catalogue import devices_label
from .measurements import ProbeMeasurements

__all__ = ["PrecisionPanel", "DEFAULT_PRECISION_DEVICES"]

DEFAULT_PRECISION_DEVICES = ("T4", "V100 SXM2 32GB", "A100 80GB SXM", "H100 SXM", "Instinct MI300X", "Gaudi 3",
                             "L4")
_FORMATS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("mixed precision", "Mixed precision", "ZeRO", "ZeRO sharding", "Adam", "8-bit optimizer", "tensor cores",
         "loss scaling", "Loss scaling", "binades", "underflow", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4",
         "nvfp4", "dense", "memory-bound", "compute-bound", "KV cache", "activations", "epsilon", "mantissa", "AUC",
         "W8A8", "W4A16", "quantisation")


def _translated(frame, text_columns, headers):
    """``frame`` as shown: its text cells and headers in the language now in use (English: unchanged).

    The guidance and formats tables come from :mod:`accelkit.precision`, whose English sentences are
    marked there with ``N_()`` (the data stay English), so a Chinese reader sees them translated here.
    """
    if language() == "en":
        return frame
    shown = frame.copy()
    for column in text_columns:
        if column in shown:
            shown[column] = shown[column].map(lambda v: _(v) if isinstance(v, str) else v)
    return shown.rename(columns={c: _(h) for c, h in headers.items()})


#: headers of the tables from accelkit.precision, as people read them
#: the workloads as people read them (the values stay English)
_WORKLOADS = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference")}


def _labelled(values, labels):
    """Dropdown options: the values themselves in English, (label, value) pairs in another language.

    (Plain values in English keep :meth:`Panel.pull_scenario`, which compares a value with the
    options, working as before.)
    """
    if language() == "en":
        return list(values)
    return [(_(labels[v]) if v in labels else v, v) for v in values]


def _translated_header(column):
    return column if language() == "en" else _(_FORMAT_HEADERS[column])


_GUIDANCE_HEADERS = {"precision": N_("precision"), "use_cases": N_("use_cases"),
                     "article_devices": N_("article_devices"), "comment": N_("comment")}
_FORMAT_HEADERS = {"format": N_("format"), "bits": N_("bits"), "exponent_bits": N_("exponent_bits"),
                   "mantissa_bits": N_("mantissa_bits"), "max": N_("max"), "epsilon": N_("epsilon"),
                   "note": N_("note")}


class PrecisionPanel(Panel):
    """Peaks and memory per number format, the guidance table, loss scaling."""

    title = N_("Precision")

    def __init__(self, scenario=None, catalog=None, measured_results="", median_log2=-22.0, spread_log2=4.0):
        super().__init__(scenario)
        s = self.scenario
        self.catalog = catalog if catalog is not None else load_catalog()
        names = set(self.catalog["name"])
        devices = [d for d in (s.devices or DEFAULT_PRECISION_DEVICES) if d in names]
        self.measurements = ProbeMeasurements(measured_results)
        self.controls = {
            "model": C.model_picker(s.model, description=_("model"), include_custom=False),
            "workload": C.choice(_("workload"), _labelled(("training", "fine-tuning", "inference"), _WORKLOADS),
                                 s.workload, width="210px"),
            "devices": C.device_picker(self.catalog, devices, description=devices_label()),
            "median_log2": C.slider(_("typical gradient"), median_log2, -34, -8, 1, "log2", readout_format=".0f"),
            "spread_log2": C.slider(_("spread"), spread_log2, 0.5, 8, 0.5, _("binades"), readout_format=".1f"),
        }
        self.bind("model", "model")
        self.bind("workload", "workload")
        self.bind_list("devices")
        self.measured = W.HTML()
        self.words = T.WordsBox(TERMS)
        self.start()

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group(_("Model"), [c["model"], c["workload"]]),
            C.group(_("Devices"), [c["devices"]]),
            C.group(_("Loss-scaling assumptions"), [c["median_log2"], c["spread_log2"]]),
        )
        guidance, formats = _("Guidance: which format for which job"), _("The formats")
        measured = _("Measured on this machine (chapter 08)")
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["peaks"], f["memory"],
                       W.HTML(f"<h4>{guidance}</h4>"), t["guidance"],
                       W.HTML(f"<h4>{formats}</h4>"), t["formats"], f["loss_scaling"],
                       W.HTML(f"<h4>{measured}</h4>"), self.measured, self.words.widget,
                       self.save_box()])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["devices"]:
            raise ValueError(_("devices: pick at least one device to compare"))
        model = sizing.model_of(s)
        table = precision.precision_table(self.catalog, c["devices"], _FORMATS)
        summary = []

        # memory per format for this model
        training = s.workload in sizing.TRAINING_WORKLOADS
        if training:
            mem = pd.Series({
                _("fp32 (Adam)"): memory.training_bytes(model["params"], "fp32", "adam"),
                _("mixed bf16/fp16 (Adam)"): memory.training_bytes(model["params"], "mixed", "adam"),
                _("mixed + 8-bit Adam"): memory.training_bytes(model["params"], "mixed", "adam-8bit"),
            }) / units.GIGA
            mem_title = _("Training state of {model} per format (weights + gradients + optimizer; no "
                          "activations)").format(model=model["name"])
        else:
            mem = pd.Series({p: memory.weight_bytes(model["params"], p) for p in ("fp32", "bf16", "fp8", "int8", "int4")}) / units.GIGA
            mem_title = _("Weights of {model} per format (KV cache and activations come on top)").format(
                model=model["name"])
        chosen = self.catalog[self.catalog["name"].isin(c["devices"])].set_index("name")
        caps = memory.usable_bytes(chosen["memory_gb"].dropna() * units.GIGA) / units.GIGA
        fits = {k: int((v <= caps).sum()) for k, v in mem.items()}
        if training:
            summary.append(_(
                "Mixed precision does not shrink Adam's model state: 2 + 2 + 12 bytes per parameter, the same 16 as "
                "pure fp32 (ZeRO §3.1). It halves activations and runs on tensor cores; 8-bit optimizer states or "
                "ZeRO sharding are what cut the state."
            ))
        first, last = mem.index[0], mem.index[-1]
        summary.append(_(
            "{model} needs {first_gb} GB in {first} and {last_gb} GB in {last}: it fits on one of {first_fits} vs "
            "{last_fits} of the {total} selected devices.").format(
            model=model["name"], first_gb=f"{mem[first]:,.1f}", first=first, last_gb=f"{mem[last]:,.1f}", last=last,
            first_fits=fits[first], last_fits=fits[last], total=len(caps)))
        wide = table.pivot(index="device", columns="precision", values="speedup_vs_fp32")
        if "bf16" in wide and wide["bf16"].notna().any():
            best = wide["bf16"].idxmax()
            summary.append(_(
                "Largest bf16 speed-up over the fp32 (non-tensor) peak: {device}, {ratio}×. That ratio is the ceiling "
                "for compute-bound layers; memory-bound layers gain about the ratio of bytes (2× for fp32 → "
                "16-bit).").format(device=best, ratio=f"{wide.loc[best, 'bf16']:.1f}"))
        peaks = table.pivot(index="device", columns="precision", values="peak_tflops")
        no_fp8 = [d for d in c["devices"] if d in peaks.index and np.isnan(peaks.loc[d, "fp8"])]
        if no_fp8:
            summary.append(_("No published dense fp8 figure (no fp8 tensor units, or not published): {devices}.").format(
                devices=", ".join(no_fp8)))
        summary.append(self._ct_context())

        demo = precision.loss_scaling_demo(median_log2=c["median_log2"], spread_log2=c["spread_log2"])
        fp16_1 = demo[(demo["format"] == "fp16") & (demo["scale"] == 1.0)]["underflow"].iloc[0]
        fp16_16 = demo[(demo["format"] == "fp16") & (demo["log2_scale"] == 16)]["underflow"].iloc[0]
        bf16_1 = demo[(demo["format"] == "bf16") & (demo["scale"] == 1.0)]["underflow"].iloc[0]
        summary.append(_(
            "Loss scaling: with these synthetic gradients fp16 flushes {unscaled} of them to zero unscaled and "
            "{scaled} at a scale of 2^16 (the source text's starting value); bf16 loses {bf16} without any "
            "scaling.").format(unscaled=f"{fp16_1:.1%}", scaled=f"{fp16_16:.2%}", bf16=f"{bf16_1:.1%}"))

        shown = table.pivot(index="device", columns="precision", values="peak_tflops").reindex(columns=list(_FORMATS))
        fmts = precision.formats_table()[["format", "bits", "exponent_bits", "mantissa_bits", "max", "epsilon", "note"]]
        return {
            "table": table, "memory": mem, "demo": demo, "summary": summary,
            "measured_html": self.measurements.html(),
            "figures": {
                "peaks": plots.precision_peaks_chart(table),
                "memory": plots.precision_memory_chart(mem, caps, mem_title),
                "loss_scaling": plots.loss_scaling_chart(demo),
            },
            "tables": {
                "guidance": table_html(_translated(precision.guidance_table(),
                                                   ("precision", "use_cases", "article_devices", "comment"),
                                                   _GUIDANCE_HEADERS)),
                "formats": table_html(_translated(fmts, ("note",), _FORMAT_HEADERS),
                                      {_translated_header("max"): "{:.4g}".format,
                                       _translated_header("epsilon"): "{:.3g}".format}),
                "peaks": table_html(_translated(shown.reset_index(), (), {"device": N_("device")}),
                                    {p: "{:,.1f}".format for p in _FORMATS}),
            },
        }

    def _ct_context(self):
        ex = precision.SEED_CT_EXAMPLE
        t4 = find("T4", self.catalog)
        roof = t4["fp16_tflops"] / t4["fp32_tflops"]
        return _(
            "The source text's CT-scan case ({source} → {target}: {speedup}× faster, {saved} less memory, AUC "
            "{auc}): halving the bytes gives 2× on memory-bound layers, while tensor cores raise the compute roof up "
            "to {roof}× on a T4 ({fp32} → {fp16} TFLOP/s). A 2.1× gain says the pipeline was mostly memory-bound (or "
            "ran layers off the tensor cores); 50 % matches weights and activations halving. The AUC change is "
            "plausible but only a validation run on your data shows it."
        ).format(source=ex["from"], target=ex["to"], speedup=ex["speedup"], saved=f"{ex['memory_saved_fraction']:.0%}",
                 auc=f"{ex['auc_change']:+.3f}", roof=f"{roof:.0f}", fp32=f"{t4['fp32_tflops']:g}",
                 fp16=f"{t4['fp16_tflops']:g}")

    def render(self, result):
        self.measured.value = result["measured_html"]
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        r = self.result
        lines = []
        wide = r["table"].pivot(index="device", columns="precision", values="speedup_vs_fp32")
        for name in ("H100 SXM", "T4"):
            for p in ("bf16", "fp16", "fp8"):
                if name in wide.index and p in wide and not np.isnan(wide.loc[name, p]):
                    lines.append(f"{name} {p} speed-up over fp32: {wide.loc[name, p]:.1f}")
        for k, v in r["memory"].items():
            lines.append(f"memory in {k} [GB]: {v:.1f}")
        d = r["demo"]
        for fmt in ("fp16", "bf16"):
            lost = d[(d["format"] == fmt) & (d["scale"] == 1.0)]["underflow"].iloc[0]
            lines.append(f"{fmt} gradients lost without loss scaling: {lost:.1%}")
        return "\n".join(lines)
