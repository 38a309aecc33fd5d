"""Chapter 07: pick an edge device for a latency, power and cost target."""

from __future__ import annotations

import ipywidgets as W

from .. import claims, plots, sizing, units
from ..catalog import load_catalog
from ..numbers import people_format
from . import controls as C
from . import terms as T
from ._base import CSS, Panel, table_html

__all__ = ["EdgePanel"]

#: the words of this chapter explained on tap (each a term or alias in data/glossary.csv)
TERMS = ("fps", "int8", "fp16", "dense", "2:4 sparsity", "sparse", "DLA", "NPU",
         "latency target", "power envelope", "TDP", "TOPS", "T(FL)OP/s", "MFU", "quantisation", "batch",
         "memory bandwidth")


class EdgePanel(Panel):
    """Streams × frame rate × model FLOPs against every edge device."""

    title = "Edge inference"

    def __init__(self, scenario=None, catalog=None, model=None, precision=None, utilization=None,
                 latency_ms=None, power_w=None, budget_usd=None, use_npu=True):
        super().__init__(scenario)
        s = self.scenario
        from ..projection.for_scenario import is_vision_model

        # the scenario's own image model, precision, utilisation and latency target, so this chapter and the
        # decision project one figure (projection.vision) for one scenario
        vision = is_vision_model(s)
        model = model or (s.model if vision else "YOLOv8s")
        precision = precision or (s.precision if vision and s.precision in ("int8", "fp16") else "int8")
        if utilization is not None:
            s.utilization = utilization
        latency_ms = latency_ms if latency_ms is not None else (s.latency_target_ms if vision else 33.0)
        self.vision_scenario = vision  # frames per pass: the scenario's batch for an image model, else one frame
        self.catalog = catalog if catalog is not None else load_catalog()
        power = power_w if power_w is not None else (s.power_envelope_w or 30.0)
        budget = budget_usd if budget_usd is not None else (s.budget_usd or 5000.0)
        self.controls = {
            "streams": C.integer("streams", s.streams, "cameras", width="200px"),
            "frames_per_s": C.number("frame rate", s.frames_per_s, "fps", width="180px"),
            "model": C.model_picker(model, include_custom=False, kinds=["cnn", "vit"]),
            "precision": C.choice("precision", ["int8", "fp16"], precision, width="170px",
                                  tooltip="int8: post-training quantisation (TensorRT, OpenVINO, HailoRT, Edge TPU)"),
            "use_npu": C.toggle("use DLA/NPU engines", use_npu,
                                tooltip="count the Jetson DLA cores (int8) as well as the GPU"),
            **dict(zip(("own_mfu", "utilization"), C.own_mfu(s.utilization))),
            "latency_ms": C.number("latency target", latency_ms, "ms per frame", width="270px"),
            "power_w": C.number("power envelope", power, "W per box", width="250px"),
            "budget_usd": C.number("budget", budget, "USD", width="200px"),
        }
        self.bind_same("streams", "frames_per_s")
        C.mfu_bindings(self)
        self.bind("power_w", "power_envelope_w")
        self.bind("budget_usd", "budget_usd")
        self.words = T.WordsBox(TERMS)
        self.start()

    def render(self, result):
        self.summary.value = T.summary_html(result["summary"], TERMS)

    def layout(self):
        c, f, t = self.controls, self.figure_outputs, self.table_outputs
        boxes = C.groups(
            C.group("Workload", [c["streams"], c["frames_per_s"], c["model"], c["precision"], c["use_npu"],
                                 c["own_mfu"], c["utilization"]]),
            C.group("Targets", [c["latency_ms"], c["power_w"], c["budget_usd"]]),
        )
        return W.VBox([W.HTML(CSS), boxes, self.message, self.summary, f["fit"], f["units"], t["fit"],
                       W.HTML("<h4>The source text's edge table</h4>"), t["claims"], self.words.widget, self.save_box()])

    def compute(self):
        s = self.scenario
        c = {k: w.value for k, w in self.controls.items()}
        for name in ("latency_ms", "power_w", "budget_usd"):
            if not c[name] > 0:
                raise ValueError(f"{name.replace('_', ' ')} must be > 0; got {c[name]}")
        batch = s.batch_size if self.vision_scenario else 1
        table = sizing.edge_fit(self.catalog, s.streams, s.frames_per_s, c["model"], c["precision"], s.utilization,
                                c["latency_ms"], c["power_w"], c["budget_usd"], c["use_npu"], batch_size=batch)
        per_frame, _ = sizing.frame_flops(c["model"])
        need = s.streams * s.frames_per_s * per_frame
        speed = (f"at your {s.utilization:.0%} of each device's {c['precision']} peak" if s.utilization is not None else
                 f"at each device's achievable {c['precision']} rate (published efficiencies)")
        summary = [f"{s.streams} streams × {s.frames_per_s:g} fps of {c['model']} ({per_frame / units.GIGA:.1f} GFLOP per frame) "
                   f"need {need / units.TERA:.2f} T{'OP' if c['precision'] == 'int8' else 'FLOP'}/s. Time per frame: one pass "
                   f"of a batch of {batch} frame{'s' if batch != 1 else ''} {speed}, plus the weights' memory "
                   "traffic and the small-batch floor of a pass (the decision's figure, projection.vision)."]
        ok = table[table["meets"]]
        if ok.empty:
            summary.append("No edge device meets every target. Relax one (see the reasons in the table).")
        else:
            priced = ok.dropna(subset=["cost_usd"])
            best = (priced.sort_values("cost_usd") if not priced.empty else ok.sort_values("power_w")).iloc[0]
            summary.append(
                f"{len(ok)} device(s) meet every target; "
                + (f"the cheapest is {best['units']:.0f} × {best['name']} for ${best['cost_usd']:,.0f} "
                   f"({best['power_w']:,.0f} W in all, {best['frame_ms']:.1f} ms per frame)."
                   if best["cost_usd"] == best["cost_usd"] else
                   f"the least power-hungry is {best['units']:.0f} × {best['name']} ({best['power_w']:,.0f} W).")
            )
        derived = table[table["basis"].str.startswith(("half", "GPU only"))]["name"].tolist()
        if derived:
            summary.append("Dense INT8 for " + ", ".join(derived) + " is half of NVIDIA's 2:4-sparse figure "
                           "(derived here, not printed by the vendor).")
        if c["precision"] == "int8" and not c["use_npu"]:
            summary.append("GPU only: the DLA engines are left idle (the source text's factory enabled them with TensorRT).")
        claim_table, claim_verdict = claims.edge_table_claims(self.catalog)
        summary.append(claim_verdict)
        shown = table[["name", "ops_per_s", "basis", "units", "fps_per_unit", "frame_ms", "power_w", "cost_usd",
                       "reason"]].copy()
        shown["ops_per_s"] = shown["ops_per_s"] / units.TERA
        shown["reason"] = shown["reason"].replace("", "meets every target")
        shown.columns = ["device", f"{c['precision']} [T(FL)OP/s]", "basis", "units", "fps per unit", "ms per frame",
                         "power [W]", "cost [USD]", "verdict"]
        # a device that can never keep up needs infinitely many units: 'does not fit', never 'inf'
        fmt = {f"{c['precision']} [T(FL)OP/s]": "{:,.1f}".format, "units": people_format(),
               "fps per unit": people_format(), "ms per frame": people_format(), "power [W]": people_format(),
               "cost [USD]": people_format()}
        claim_shown = claim_table[["device", "article_tops", "article_memory_gb", "article_w", "int8_tops",
                                   "fp16_tflops", "memory_gb", "tdp_w", "comment"]]
        claim_shown.columns = ["device", "article TOPS", "article GB", "article W", "INT8 TOP/s", "FP16 TFLOP/s",
                               "memory [GB]", "TDP [W]", "comment"]
        return {
            "table": table, "claims": claim_table, "summary": summary,
            "figures": {
                "fit": plots.edge_fit_chart(table, c["latency_ms"], c["power_w"]),
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
                lines.append(f"{name}: {figure} ({r['reason'] or 'meets every target'})")
        return "\n".join(lines)
