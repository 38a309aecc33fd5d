"""Chapter 07: pick an edge device for a latency, power and cost target."""

from __future__ import annotations

import html

import ipywidgets as W

from .. import claims, plots, sizing, units
from ..catalog import load_catalog
from ..currency import money
from ..i18n import N_, _
from ..numbers import people_format
from ..projection.for_scenario import scenario_stack
from ..select.reasons import why_words
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html

__all__ = ["EdgePanel"]

#: how an edge device's OP/s figure was obtained (accelkit.catalog.int8_dense_estimate, accelkit.sizing.edge_fit)
_BASIS_WORDS = (N_("published dense"), N_("half the 2:4-sparse figure"),
                N_("GPU only: half the (total − DLA) sparse figure"), N_("published dense fp16"))

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("fps", "int8", "fp16", "dense", "2:4 sparsity", "sparse", "DLA", "NPU",
         "latency target", "power envelope", "TDP", "TOPS", "T(FL)OP/s", "MFU", "quantisation", "batch",
         "memory bandwidth")

#: the scenario's deployment and workload in words (translated where shown)
_DEPLOYMENT_WORDS = {"cloud": N_("in the cloud"), "on-prem": N_("on-prem"), "edge": N_("at the edge")}
_WORKLOAD_WORDS = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference")}


class EdgePanel(Panel):
    """Streams × frame rate × model FLOPs against every edge device."""

    title = N_("Edge inference")

    def __init__(self, scenario=None, catalog=None, model=None, precision=None, utilization=None,
                 latency_ms=None, power_w=None, budget_usd=None, use_npu=True):
        super().__init__(scenario)
        s = self.scenario
        # the scenario's own image model, precision, utilisation and latency target when it serves one, so this
        # chapter and the decision project one figure (projection.vision) for one scenario; any other scenario
        # gets this chapter's own camera workload, which leaves the shared scenario alone
        vision = self._serves_vision()
        edge = s.deployment == "edge"
        if vision:
            # the scenario's own values win: this chapter and the decision then project one figure
            model, latency_ms, mfu = s.model, s.latency_target_ms, s.utilization
            precision = s.precision if s.precision in ("int8", "fp16") else (precision or "int8")
        else:
            model, precision = model or "YOLOv8s", precision or "int8"
            latency_ms = latency_ms if latency_ms is not None else 33.0
            mfu = utilization if utilization is not None else s.utilization
        self.catalog = catalog if catalog is not None else load_catalog()
        if edge:
            power, budget = s.power_envelope_w or 0.0, s.budget_usd or 0.0
        else:
            power = power_w if power_w is not None else 30.0
            budget = budget_usd if budget_usd is not None else 5000.0
        self.controls = {
            "streams": C.integer(_("streams"), s.streams, _("cameras"), width="200px"),
            "frames_per_s": C.number(_("frame rate"), s.frames_per_s, "fps", width="180px"),
            "model": C.model_picker(model, include_custom=False, kinds=["cnn", "vit"]),
            "precision": C.choice(_("precision"), ["int8", "fp16"], precision, width="170px",
                                  tooltip=_("int8: post-training quantisation (TensorRT, OpenVINO, HailoRT, Edge TPU)")),
            "use_npu": C.toggle(_("use DLA/NPU engines"), use_npu,
                                tooltip=_("count the Jetson DLA cores (int8) as well as the GPU")),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(mfu))),
            "latency_ms": C.number(_("latency target"), latency_ms, _("ms per frame"), width="270px"),
            "power_w": C.number(_("power envelope"), power, _("W per box, 0 = none"), width="280px"),
            "budget_usd": C.number(_("budget"), budget, _("USD, 0 = none"), width="240px"),
        }
        self.scope = W.HTML()
        self._bind_for_scenario()
        self.words = T.WordsBox(TERMS)
        self.start()

    def _serves_vision(self):
        """True when the scenario serves an image model (inference of a CNN or ViT): then this chapter is its."""
        from ..projection.for_scenario import is_vision_model

        return self.scenario.workload == "inference" and is_vision_model(self.scenario)

    def _bind_for_scenario(self):
        """Tie the controls that belong to the scenario to it, and say on the page which ones do.

        A scenario that serves an image model shares its cameras, model, precision and latency
        target with this chapter; an edge deployment shares its power envelope and budget too.
        Anything else stays in this chapter: a 15 W envelope typed here to explore edge boxes
        must not empty a cloud training decision (a power limit per box belongs to an edge site).
        """
        s = self.scenario
        self.vision_scenario = vision = self._serves_vision()
        edge = s.deployment == "edge"
        for name in ("streams", "frames_per_s", "model", "precision", "own_mfu", "utilization", "latency_ms",
                     "power_w", "budget_usd"):
            self.bindings.pop(name, None)
        if vision:
            self.bind_same("streams", "frames_per_s", "model", "precision")
            C.mfu_bindings(self)
            self.bind("latency_ms", "latency_target_ms")
        if edge:
            self.bind("power_w", "power_envelope_w", lambda v: v or None, lambda v: v or 0.0)
            self.bind("budget_usd", "budget_usd", lambda v: v or None, lambda v: v or 0.0)
        model = sizing.model_of(s)["name"]
        if vision and edge:
            note = _("This chapter sizes your scenario: its cameras, model, precision, latency target, power envelope "
                     "and budget are the ones every tab and the decision use, and a change here changes them there.")
        elif vision:
            note = _("This chapter sizes your scenario's {model} (cameras, model, precision and latency target are "
                     "shared with every tab). Your scenario deploys {deployment}, so the power envelope and budget "
                     "here are this chapter's own and leave the decision unchanged.").format(
                model=model, deployment=_(_DEPLOYMENT_WORDS.get(s.deployment, s.deployment)))
        else:
            note = _("Your scenario is {workload} of {model}, not an edge camera workload: this chapter sizes a "
                     "camera workload of its own (below), and nothing here changes your scenario or the "
                     "decision.").format(workload=_(_WORKLOAD_WORDS.get(s.workload, s.workload)), model=model)
        if vision and s.precision not in ("int8", "fp16"):
            note += " " + _("Your scenario's precision {precision} is not an edge inference format: this chapter "
                            "projects {used}, so its times are not the decision's.").format(
                precision=s.precision, used=self.controls["precision"].value)
        self.scope.value = f'<div class="ak-note" data-ak="edge-scope">{html.escape(note)}</div>'

    def pull_scenario(self):
        """Bring in the shared scenario; the scenario may have become (or stopped being) an edge vision one."""
        was = self.vision_scenario
        self._bind_for_scenario()
        if self.vision_scenario and not was:
            self._suspended = True
            try:
                s = self.scenario
                if s.precision in ("int8", "fp16"):
                    self.controls["precision"].value = s.precision
            finally:
                self._suspended = False
        super().pull_scenario()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group(_("Workload"), [c["streams"], c["frames_per_s"], c["model"], c["precision"], c["use_npu"],
                                    c["own_mfu"], c["utilization"]]),
            C.group(_("Targets"), [c["latency_ms"], c["power_w"], c["budget_usd"]]),
        )
        return W.VBox([W.HTML(CSS), self.scope, boxes, self.message, self.summary, f["fit"], f["units"], t["fit"],
                       W.HTML("<h4>" + html.escape(_("The source text's edge table")) + "</h4>"), t["claims"],
                       self.words.widget, self.save_box()])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        if not c["latency_ms"] > 0:
            raise ValueError(_("latency ms must be > 0; got {value}").format(value=c["latency_ms"]))
        if not c["power_w"] >= 0:
            raise ValueError(_("power w must be >= 0 (0 = none); got {value}").format(value=c["power_w"]))
        if not c["budget_usd"] >= 0:
            raise ValueError(_("budget usd must be >= 0 (0 = none); got {value}").format(value=c["budget_usd"]))
        power, budget = c["power_w"] or None, c["budget_usd"] or None
        # the controls: the scenario's values where they are bound to it (pull_scenario brings them in), this
        # chapter's own otherwise
        streams, fps = c["streams"], c["frames_per_s"]
        utilization = c["utilization"] if c["own_mfu"] else None
        batch = s.batch_size if self.vision_scenario else 1
        # the scenario's stack where it is the scenario's image model (the decision prices the same); else the default
        stack = scenario_stack(s, "vision") if self.vision_scenario else None
        table = sizing.edge_fit(self.catalog, streams, fps, c["model"], c["precision"], utilization,
                                c["latency_ms"], power, budget, c["use_npu"], batch_size=batch, stack=stack)
        per_frame, _preset = sizing.frame_flops(c["model"])
        need = streams * fps * per_frame
        if utilization is not None:
            speed = _("at your {share} of each device's {precision} peak").format(
                share=f"{utilization:.0%}", precision=c["precision"])
        else:
            speed = _("at each device's achievable {precision} rate (published efficiencies)").format(
                precision=c["precision"])
        rate = f"{need / units.TERA:.2f} T{'OP' if c['precision'] == 'int8' else 'FLOP'}/s"
        summary = [_("{streams} streams × {fps} fps of {model} ({gflop} GFLOP per frame) need {rate}.").format(
                       streams=streams, fps=f"{fps:g}", model=c["model"],
                       gflop=f"{per_frame / units.GIGA:.1f}", rate=rate)
                   + " " + (_("Time per frame: one pass of a batch of {batch} frame {speed}, plus the weights' memory "
                              "traffic and the small-batch floor of a pass (the decision's figure, "
                              "projection.vision).") if batch == 1 else
                            _("Time per frame: one pass of a batch of {batch} frames {speed}, plus the weights' memory "
                              "traffic and the small-batch floor of a pass (the decision's figure, "
                              "projection.vision).")).format(batch=batch, speed=speed)]
        ok = table[table["meets"]]
        if ok.empty:
            summary.append(_("No edge device meets every target. Relax one (see the reasons in the table)."))
        else:
            priced = ok.dropna(subset=["cost_usd"])
            best = (priced.sort_values("cost_usd") if not priced.empty else ok.sort_values("power_w")).iloc[0]
            if best["cost_usd"] == best["cost_usd"]:
                summary.append(_("{n} device(s) meet every target; the cheapest is {units} × {name} for {cost} "
                                 "({watts} W in all, {ms} ms per frame).").format(
                    n=len(ok), units=f"{best['units']:.0f}", name=best["name"], cost=money(best["cost_usd"]),
                    watts=f"{best['power_w']:,.0f}", ms=f"{best['frame_ms']:.1f}"))
            else:
                summary.append(_("{n} device(s) meet every target; the least power-hungry is {units} × {name} "
                                 "({watts} W in all).").format(n=len(ok), units=f"{best['units']:.0f}",
                                                               name=best["name"], watts=f"{best['power_w']:,.0f}"))
        derived = table[table["basis"].str.startswith(("half", "GPU only"))]["name"].tolist()
        # the engine's English words (kept in the data) in the language in use, for the table and the chart
        table = table.assign(
            basis=[_(b) if b else b for b in table["basis"]],
            reason=[_("cannot be projected: {why}").format(why=why_words(w)) if w else r
                    for r, w in zip(table["reason"], table["why"])])
        if derived:
            summary.append(_("Dense INT8 for {devices} is half of NVIDIA's 2:4-sparse figure (derived here, not "
                             "printed by the vendor).").format(devices=", ".join(derived)))
        if c["precision"] == "int8" and not c["use_npu"]:
            summary.append(_("GPU only: the DLA engines are left idle (the source text's factory enabled them with "
                             "TensorRT)."))
        claim_table, claim_verdict = claims.edge_table_claims(self.catalog)
        summary.append(claim_verdict)
        shown = table[["name", "ops_per_s", "basis", "units", "fps_per_unit", "frame_ms", "power_w", "cost_usd",
                       "reason"]].copy()
        # the nvpmodel mode each Jetson runs in: its highest within the envelope, else the catalogue's (top) mode
        shown.insert(1, "mode", table["run_mode"].where(table["run_mode"] != "", table["power_mode"]).fillna(""))
        shown["ops_per_s"] = shown["ops_per_s"] / units.TERA
        shown["reason"] = [r or (_("meets every target in its {mode} power mode").format(mode=m) if m else
                                 _("meets every target")) for r, m in zip(shown["reason"], table["run_mode"])]
        ops = f"{c['precision']} [T(FL)OP/s]"
        shown.columns = [_("device"), _("power mode"), ops, _("basis"), _("units"), _("fps per unit"), _("ms per frame"),
                         _("power [W]"), _("cost [USD]"), _("verdict")]
        # a device that can never keep up needs infinitely many units: 'does not fit', never 'inf'
        fmt = {ops: "{:,.1f}".format, _("units"): people_format(), _("fps per unit"): people_format(),
               _("ms per frame"): people_format(), _("power [W]"): people_format(), _("cost [USD]"): people_format()}
        claim_shown = claim_table[["device", "article_tops", "article_memory_gb", "article_w", "int8_tops",
                                   "fp16_tflops", "memory_gb", "tdp_w", "comment"]]
        claim_shown.columns = [_("device"), _("article TOPS"), _("article GB"), _("article W"), "INT8 TOP/s",
                               "FP16 TFLOP/s", _("memory [GB]"), _("TDP [W]"), _("comment")]
        return {
            "table": table, "claims": claim_table, "summary": summary,
            "figures": {
                "fit": plots.edge_fit_chart(table, c["latency_ms"], power),
                "units": plots.edge_units_chart(table),
            },
            "tables": {"fit": table_html(shown, fmt), "claims": table_html(claim_shown)},
        }

    def key_figures(self):
        if self.error:
            return f"ERROR: {self.error}"
        t = self.result["table"].set_index("name")
        lines = [f"devices meeting every target: {int(t['meets'].sum())}"]
        for name in ("Jetson Orin Nano Super 8GB", "Jetson AGX Orin 64GB", "Hailo-8"):
            if name in t.index:
                r = t.loc[name]
                figure = (f"{r['units']:.0f} unit(s), {r['frame_ms']:.2f} ms per frame" if r["frame_ms"] == r["frame_ms"]
                          else "not projected")
                mode = f" in its {r['run_mode']} power mode" if r["run_mode"] else ""
                lines.append(f"{name}: {figure} ({r['reason'] or 'meets every target' + mode})")
        return "\n".join(lines)
