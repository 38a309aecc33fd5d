"""Chapter 10: how far to trust these numbers -- the engine against published measurements."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import plots, units
from ..i18n import N_, _
from ..select.reasons import source_words
from . import controls as C
from ._base import CSS, Panel, table_html

__all__ = ["ValidationPanel"]

#: the kinds a person can filter on: every kind of accelkit validate but the microbenchmarks
_CATEGORIES = ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft", "training", "serving_load_ttft",
               "serving_load_tpot", "serving_expert_parallel", "vision_single_stream", "vision_offline",
               "encoder_single_stream", "encoder_offline", "recommender_offline", "recommender_training", "gnn_offline")
#: how a category is named on screen (English: its identifier, as before)
CATEGORY_LABELS = {c: c for c in (N_("decode_batch1"), N_("fixed_batch_throughput"), N_("max_throughput"), N_("ttft"),
                                  N_("training"), N_("serving_load_ttft"), N_("serving_load_tpot"),
                                  N_("serving_expert_parallel"), N_("vision_single_stream"), N_("vision_offline"),
                                  N_("encoder_single_stream"), N_("encoder_offline"), N_("recommender_offline"),
                                  N_("recommender_training"), N_("gnn_offline"), N_("all"))}
#: the halves of the published cases
_SPLITS = (N_("all"), N_("fit"), N_("holdout"))


#: column headers of the page's tables (built with these English names, shown through _())
_HEADERS = (N_("category"), N_("cases"), N_("error (all)"), N_("error (fit)"), N_("error (holdout)"),
            N_("median ratio"), N_("worst case"), N_("worst ratio"), N_("case"), N_("half"), N_("device"), N_("model"),
            N_("metric"), N_("measured"), N_("projected"), N_("speed ratio"), N_("source"), N_("what"),
            N_("prompt tokens"), N_("measured [ms]"), N_("projected [ms]"), N_("range [ms]"), N_("inside"),
            N_("micro-batch × sequence"), N_("step [s] measured"), N_("projected [s]"), N_("range [s]"),
            N_("MFU measured"), N_("MFU projected"), N_("bf16 matmul [% of peak]"), N_("memory [% of peak]"),
            N_("bf16 source"), N_("memory source"), N_("vendor"), N_("sources"), N_("inside the range (all)"),
            N_("inside the range (held out)"))


def _table(frame, formats=None, **kwargs):
    """:func:`table_html` with the headers in the language in use (``formats`` keyed by the English names)."""
    shown = frame.rename(columns={c: _(c) for c in frame.columns})
    return table_html(shown, {_(k): f for k, f in (formats or {}).items()}, **kwargs)


def _yes_no(flags):
    return np.where(flags, _("yes"), _("no"))


def category_label(category):
    """A validation category (or "all") in the language in use."""
    return _(category) if category in CATEGORY_LABELS else category


class ValidationPanel(Panel):
    """Every published measurement next to the engine's projection of it."""

    title = N_("How far to trust these numbers")

    def __init__(self, scenario=None, categories=(), split="all", device=""):
        super().__init__(scenario)
        from ..projection import validation as V

        # projecting every case takes a few seconds: once, then the controls only filter
        self.results = V.validate()
        devices = [(_("(all)"), "(all)")] + [(d, d) for d in sorted(set(self.results["device"]))]
        self.controls = {
            "categories": C.multi_choice(_("categories"), [(category_label(c), c) for c in _CATEGORIES],
                                         tuple(categories), rows=7, tooltip=_("none selected: every category")),
            "split": C.choice(_("half"), [(_(h), h) for h in _SPLITS], split, width="200px",
                              tooltip=_("fit: the sources the fitted constants and the ranges were set on; holdout: whole "
                                        "sources never fitted")),
            "device": C.choice(_("device"), devices, device if device in set(self.results["device"]) else "(all)",
                               width="300px"),
        }
        self.start()

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        def h4(text):
            return W.HTML(f"<h4>{text}</h4>")

        return W.VBox([W.HTML(CSS), W.HBox([C.group(_("Show"), [c["categories"], c["split"], c["device"]])]),
                       self.message, self.summary, t["summary"], h4(_("By vendor")), t["vendors"], f["chart"],
                       h4(_("Every case")), t["cases"],
                       h4(_("On a GPU of our own ({command}, {folder})").format(command="accelkit probe --llm",
                                                                            folder="data/probe_results/llm")),
                       t["own"],
                       h4(_("Training steps on that GPU, plain eager PyTorch ({command})").format(
                           command="accelkit probe --train")),
                       t["trained"],
                       h4(_("The efficiencies behind the projections")), t["efficiency"]])

    def selected(self):
        """The cases the controls show."""
        c = {k: w.value for k, w in self.controls.items()}
        r = self.results
        if c["categories"]:
            r = r[r["category"].isin(c["categories"])]
        if c["split"] != "all":
            r = r[r["split"] == c["split"]]
        if c["device"] != "(all)":
            r = r[r["device"] == c["device"]]
        return r

    def compute(self):
        from ..projection import constants_table, validation as V
        from ..projection.intervals import INTERVAL_LEVEL

        shown = self.selected()
        if shown.empty:
            raise ValueError(_("no published measurement matches these filters; choose another device or category"))
        whole = V.summary(self.results).set_index("category")
        part = V.summary(shown)
        worst = shown.loc[np.abs(np.log(shown["ratio"])).idxmax()]
        fitted = constants_table()
        fitted = fitted[fitted["how_set"].str.contains("fit split")]
        summary = [
            _("{n} published measurements from {k} sources ({sources}) are projected by the same engine every "
              "chapter uses. Over all of them the projection is off by {error} in geometric mean; on the sources held "
              "out whole, which no constant was fitted or calibrated on, by {error_holdout}. The stated {level} range "
              "holds {inside} of all the measurements and {inside_holdout} of the held-out ones.").format(
                n=len(self.results), k=self.results["source"].nunique(),
                sources="MLPerf Inference, " + _("vendor serving tables") + " (NVIDIA, AMD, Intel), TensorRT-LLM, vLLM, "
                "lmdeploy, gpt-fast, NIM, GPUStack, DeepLearningExamples, TensorRT BERT, Megatron-LM, llm-foundry, torchtitan, "
                "MaxText, NeMo",
                error=f"{whole.loc['all', 'gm_error']:.1%}", error_holdout=f"{whole.loc['all', 'gm_error_holdout']:.1%}",
                level=f"{INTERVAL_LEVEL:.0%}", inside=f"{whole.loc['all', 'coverage']:.0%}",
                inside_holdout=f"{whole.loc['all', 'coverage_holdout']:.0%}"),
            _("Shown here: {n} case(s), {error} geometric-mean error; the worst is {case} ({device}, {model}): "
              "projected {ratio}× the measured speed.").format(
                n=len(shown), error=f"{V.geometric_mean_error(shown['ratio']):.1%}", case=worst["case_id"],
                device=worst["device"], model=worst["model"], ratio=f"{worst['ratio']:.2f}"),
            _("Where the efficiencies come from: published matmul, memory-bandwidth and all-reduce measurements "
              "({file}); {n} constants no datasheet gives (per-step overheads, how far GEMMs fall short of the best "
              "shape, overlap) were fitted on the fit half only. A device without its own measurement borrows its "
              "architecture's or vendor's, and its range shows their spread.").format(
                file="data/efficiency.csv", n=len(fitted)),
            _("Every projected figure elsewhere carries a range: the efficiencies' spread widened by a term "
              "calibrated for each kind of figure so that the range holds {level} of the measurements of a source "
              "the engine has not seen (the spread within a source on the kind's fit cases, combined with how far "
              "the kind's sources sit from the engine).").format(level=f"{INTERVAL_LEVEL:.0%}"),
        ]
        gap_sources = self.results.loc[V.known_gap_cases(self.results), "source"].unique()
        if len(gap_sources):
            summary.insert(1, _("{gaps} of them come from {k} source(s) listed as known gaps: a whole publication "
                                "the engine misses for a reason it does not model, named in measured.csv's known_gap "
                                "column ({names}). They count in every figure above; without them the error is "
                                "{error}.").format(
                gaps=int(whole.loc["all", "known_gap_cases"]), k=len(gap_sources), names="; ".join(gap_sources),
                error=f"{whole.loc['all', 'gm_error_without_gaps']:.1%}"))
        part_shown = part[["category", "cases", "gm_error", "gm_error_fit", "gm_error_holdout", "coverage",
                           "coverage_holdout", "median_ratio", "worst_case", "worst_ratio"]].copy()
        part_shown.columns = ["category", "cases", "error (all)", "error (fit)", "error (holdout)",
                              "inside the range (all)", "inside the range (held out)", "median ratio", "worst case",
                              "worst ratio"]
        vendors = V.summary_by_vendor(shown)[["vendor", "cases", "sources", "gm_error", "gm_error_holdout", "coverage",
                                              "coverage_holdout"]]
        vendors.columns = ["vendor", "cases", "sources", "error (all)", "error (holdout)", "inside the range (all)",
                           "inside the range (held out)"]
        part_shown["category"] = part_shown["category"].map(category_label)
        pct = "{:.1%}".format
        cases = pd.DataFrame({
            "case": shown["case_id"], "half": shown["split"].map(_), "device": shown["device"],
            "model": shown["model"], "metric": shown["metric"],
            "measured": [f"{v:.4g} {u}" for v, u in zip(shown["value"], shown["unit"])],
            "projected": [f"{p:.4g} {u}" for p, u in zip(shown["predicted"], shown["unit"])],
            "speed ratio": shown["ratio"],
            "source": [f'<a href="{html.escape(u, quote=True)}" target="_blank">{html.escape(t)}</a>'
                       for u, t in zip(shown["source_url"], shown["source_title"])],
        })
        cases["case"] = cases["case"].map(html.escape)
        cases["model"] = cases["model"].map(html.escape)
        from ..probes.checks import local_checks, local_training_checks

        local = local_checks()
        if len(local):
            summary.append(_(
                "And on a GPU of our own: {n} decode and prefill times measured with {command} on {devices} "
                "({models}), projected by the same engine: {error} geometric-mean error, {inside} of {n} inside the "
                "projected range (table below).").format(
                    n=len(local), command="accelkit probe --llm", devices=", ".join(sorted(set(local["device"]))),
                    models=", ".join(sorted(set(local["model"]))),
                    error=f"{V.geometric_mean_error(local['ratio']):.1%}", inside=int(local["inside_range"].sum())))
        own = pd.DataFrame({
            "device": local["device"], "model": local["model"],
            "what": [(_("time per output token, batch {batch}") if m == "tpot_s" else _("prefill, batch {batch}"))
                     .format(batch=b) for m, b in zip(local["metric"], local["batch_size"])],
            "prompt tokens": local["input_tokens"],
            "measured [ms]": units.s_to_ms(local["measured"]), "projected [ms]": units.s_to_ms(local["projected"]),
            "range [ms]": [f"{units.s_to_ms(lo):.3g}-{units.s_to_ms(hi):.3g}" for lo, hi in
                           zip(local["projected_low"], local["projected_high"])],
            "inside": _yes_no(local["inside_range"]),
        })
        trained = local_training_checks()
        if len(trained):
            summary.append(_(
                "Training on the same GPU, in plain eager PyTorch ({command}, {models}): {inside} of {n} steps inside "
                "the range; the others took up to {ratio}x the projected time -- the engine's constants come from "
                "tuned frameworks (fused kernels), so small models and micro-batches show what an unfused stack "
                "costs. The measured MFU is what a scenario takes as utilization.").format(
                    command="accelkit probe --train", models=", ".join(sorted(set(trained["model"]))),
                    inside=int(trained["inside_range"].sum()), n=len(trained), ratio=f"{trained['ratio'].max():.2f}"))
        trained_table = pd.DataFrame({
            "device": trained["device"], "model": trained["model"],
            "micro-batch × sequence": [f"{b} × {q}" for b, q in zip(trained["micro_batch_size"], trained["seq_len"])],
            "step [s] measured": trained["measured"], "projected [s]": trained["projected"],
            "range [s]": [f"{lo:.3g}-{hi:.3g}" for lo, hi in zip(trained["projected_low"], trained["projected_high"])],
            "MFU measured": trained["mfu"], "MFU projected": trained["projected_mfu"],
            "inside": _yes_no(trained["inside_range"]),
        })
        return {
            "results": shown, "summary_table": part, "summary": summary, "local": local, "trained": trained,
            "figures": {"chart": plots.validation_chart(shown)},
            "tables": {
                "summary": _table(part_shown, {k: pct for k in ("error (all)", "error (fit)", "error (holdout)")}
                                      | {k: "{:.0%}".format for k in ("inside the range (all)",
                                                                       "inside the range (held out)")}
                                      | {"median ratio": "{:.2f}".format, "worst ratio": "{:.2f}".format}),
                "vendors": _table(vendors, {k: pct for k in ("error (all)", "error (holdout)")}
                                  | {k: "{:.0%}".format for k in ("inside the range (all)", "inside the range (held out)")}),
                "cases": _table(cases, {"speed ratio": "{:.2f}".format}, max_rows=200, escape=False),
                "efficiency": _table(self._efficiency_table(), max_rows=80),
                "own": _table(own, {"measured [ms]": "{:.3g}".format, "projected [ms]": "{:.3g}".format}),
                "trained": _table(trained_table, {"step [s] measured": "{:.3g}".format,
                                                      "projected [s]": "{:.3g}".format,
                                                      "MFU measured": "{:.0%}".format, "MFU projected": "{:.0%}".format}),
            },
        }

    @staticmethod
    def _efficiency_table():
        from ..projection import device_ceilings

        ceil = device_ceilings()
        known = ceil[ceil["peak_bf16"].notna() | ceil["memory_bw_peak"].notna()]
        return pd.DataFrame({
            "device": known["name"],
            "bf16 matmul [% of peak]": [_pct_range(a, lo, hi, p) for a, lo, hi, p in
                                        zip(known["matmul_bf16"], known["matmul_bf16_low"], known["matmul_bf16_high"],
                                            known["peak_bf16"])],
            "memory [% of peak]": [_pct_range(a, lo, hi, p) for a, lo, hi, p in
                                   zip(known["memory_bw"], known["memory_bw_low"], known["memory_bw_high"],
                                       known["memory_bw_peak"])],
            "bf16 source": [source_words(t) for t in known["matmul_bf16_source"]],
            "memory source": [source_words(t) for t in known["memory_bw_source"]],
        })

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        from ..projection import validation as V

        whole = V.summary(self.results).set_index("category")
        shown = self.result["results"]
        lines = [f"published measurements: {len(self.results)}",
                 f"geometric-mean error, all: {whole.loc['all', 'gm_error']:.3f}",
                 f"geometric-mean error, holdout: {whole.loc['all', 'gm_error_holdout']:.3f}",
                 f"largest error factor: {np.exp(np.abs(np.log(self.results['ratio'])).max()):.2f}"]
        for category in _CATEGORIES:
            if category in whole.index:
                lines.append(f"{category}: {int(whole.loc[category, 'cases'])} cases, "
                             f"error {whole.loc[category, 'gm_error']:.3f}")
        lines.append(f"cases shown: {len(shown)}")
        local = self.result["local"]
        lines.append(f"own-GPU checks: {len(local)}, {int(local['inside_range'].sum())} inside the range, "
                     f"error {V.geometric_mean_error(local['ratio']):.3f}")
        trained = self.result["trained"]
        lines.append(f"own-GPU training steps: {len(trained)}, {int(trained['inside_range'].sum())} inside the range")
        return "\n".join(lines)


def _pct_range(value, low, high, peak):
    if not (np.isfinite(value) and np.isfinite(peak) and peak > 0):
        return "—"
    return f"{value / peak:.0%} ({low / peak:.0%}-{high / peak:.0%})"
