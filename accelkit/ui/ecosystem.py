"""Chapter 04: the software-ecosystem checklist -- support matrix, scores, local audit, export."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import ipywidgets as W
import pandas as pd
import traitlets

from .. import plots
from .._validate import check_choice
from ..catalog import SOFTWARE_STACKS, load_catalog
from ..ecosystem import (
    CRITERION_LABELS, DEPLOYMENTS, FRAMEWORK_LABELS, FRAMEWORKS, RUNTIME_LABELS, SERVING_RUNTIMES, STACK_LABELS,
    WEIGHT_KEYS, Requirements, audit_local, audit_table, checklist, export, free_paths, load_ecosystem,
    stack_scores, to_markdown,
)
from ..ecosystem.vocabulary import LEVEL_WORDS, STATUS_WORDS
from ..i18n import N_, _, language
from .. import userfiles as U
from . import controls as C
from ._base import CSS, Panel, error_html, safe_link, table_html

__all__ = ["EcosystemPanel", "CheckboxGroup"]

_SYMBOL = {"pass": '<span style="color:#1a9850">✓</span>', "risk": '<span style="color:#e08214">⚠</span>',
           "fail": '<span style="color:#d73027">✗</span>'}
_AUDIT_SYMBOL = {"ready": ("✓", N_("ready")), "partly": ("⚠", N_("partly")), "not here": ("—", N_("not here"))}
#: the deployments as people read them (the values stay English)
_DEPLOYMENT_WORDS = {"cloud": N_("cloud"), "on-prem": N_("on-prem"), "edge": N_("edge")}


def _status_word(status):
    return _(STATUS_WORDS[status]) if status in STATUS_WORDS else status


def _level_word(level):
    return _(LEVEL_WORDS[level]) if level in LEVEL_WORDS else level


def _audit_status(status):
    if status not in _AUDIT_SYMBOL:
        return status
    symbol, word = _AUDIT_SYMBOL[status]
    return f"{symbol} {_(word)}"


def _labelled(values, labels):
    """Dropdown options: the values in English (as before), (label, value) pairs in another language
    (plain values keep :meth:`Panel.pull_scenario`, which compares a value with the options, working)."""
    if language() == "en":
        return list(values)
    return [(_(labels[v]) if v in labels else v, v) for v in values]


class CheckboxGroup(W.VBox):
    """One checkbox per option; ``value`` is the tuple of ticked options (in option order).

    Behaves like a multi-select for :class:`~accelkit.ui._base.Panel` (``value``,
    ``options``, ``observe(names="value")``), but shows plain checkboxes.
    """

    value = traitlets.Tuple()

    def __init__(self, options, value=(), description="", labels=None, width="110px"):
        self.options = tuple(options)
        labels = labels or {}
        self.boxes = {
            o: W.Checkbox(value=o in value, description=labels.get(o, o), indent=False,
                          layout=W.Layout(width=width))
            for o in self.options
        }
        self._syncing = False
        super().__init__([
            W.HTML(f"<b>{html.escape(description)}</b>"),
            W.HBox(list(self.boxes.values()), layout=W.Layout(flex_flow="row wrap", width="480px")),
        ])
        self.value = tuple(value)
        for box in self.boxes.values():
            box.observe(self._from_boxes, names="value")
        self.observe(self._to_boxes, names="value")

    @traitlets.validate("value")
    def _valid(self, proposal):
        picked = {check_choice("frameworks", v, self.options) for v in proposal["value"]}
        return tuple(o for o in self.options if o in picked)

    def _from_boxes(self, _change):
        if not self._syncing:
            self.value = tuple(o for o, b in self.boxes.items() if b.value)

    def _to_boxes(self, change):
        self._syncing = True
        try:
            for option, box in self.boxes.items():
                box.value = option in change["new"]
        finally:
            self._syncing = False


def _first_sentence(text):
    """The first sentence of a reason (an English one ends with ". ", a Chinese one with "。")."""
    first = str(text).split(". ")[0]
    return first.split("。")[0] if "。" in first else first


def _left(table):
    """Left-align a text table (the shared style right-aligns numbers)."""
    return table.replace("<td>", '<td style="text-align:left">').replace("<th>", '<th style="text-align:left">')


def _link(url):
    return safe_link(url)


def _download_link(path, text, mime):
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return (f'<a download="{html.escape(path.name)}" href="data:{mime};base64,{data}">'
            + html.escape(_("download {file}").format(file=path.name)) + "</a>")


class EcosystemPanel(Panel):
    """Requirements in; per-stack pass/risk/fail, scores, the support heat-map and a local audit out.

    Parameters
    ----------
    scenario : Scenario, optional
        ``frameworks``, ``custom_cuda_kernels`` and ``deployment`` are bound to it
        (and saved with it); ``precision`` fp8/int8/int4 ticks "needs quantisation".
    serving_runtime, team_skills, special_operators, needs_quantization, weights
        Starting values of the controls that have no scenario field (``None``:
        the defaults of :class:`accelkit.ecosystem.Requirements`).
    detail_stack : str, optional
        Stack whose checklist is shown in detail (default ``rocm``, the article's
        AMD story).
    audit : bool or dict
        ``True`` runs :func:`accelkit.ecosystem.audit_local` once; a dict uses that
        audit; ``False`` shows none.
    export_dir : str or Path, optional
        Where the export button writes (default: the working directory, i.e. next
        to the notebook). Files are never overwritten: a numeric suffix is added.
    """

    title = N_("Software ecosystem")

    def __init__(self, scenario=None, serving_runtime=None, team_skills=None, special_operators=None,
                 needs_quantization=None, weights=None, detail_stack=None, audit=True, export_dir=None,
                 ecosystem=None, catalog=None):
        super().__init__(scenario)
        self.ecosystem = load_ecosystem() if ecosystem is None else ecosystem
        self.catalog = load_catalog() if catalog is None else catalog
        self.export_dir = Path(export_dir) if export_dir is not None else None
        base = Requirements.from_scenario(self.scenario, serving_runtime=serving_runtime, team_skills=team_skills,
                                          special_operators=special_operators,
                                          needs_quantization=needs_quantization, weights=weights)
        self.stacks = list(dict.fromkeys(self.ecosystem["stack"]))
        if detail_stack is None:
            detail_stack = "rocm" if "rocm" in self.stacks else self.stacks[0]
        detail_stack = check_choice("detail_stack", detail_stack, self.stacks)
        stack_options = [(STACK_LABELS.get(s, s), s) for s in SOFTWARE_STACKS]
        self.controls = {
            "frameworks": CheckboxGroup(FRAMEWORKS, base.frameworks, _("frameworks that must work"),
                                        labels=FRAMEWORK_LABELS),
            "custom_cuda_kernels": C.toggle(_("we own custom CUDA kernels"), base.custom_cuda_kernels,
                                            tooltip=_("kernels written in CUDA C++ that must keep working")),
            "special_operators": W.Text(", ".join(base.special_operators), description=_("special operators"),
                                        placeholder=_("e.g. deformable conv, NMS"), style=C.STYLE,
                                        continuous_update=False, layout=W.Layout(width="360px")),
            "needs_quantization": C.toggle(_("needs quantised models (int8 / int4 / fp8)"), base.needs_quantization),
            "serving_runtime": C.choice(_("serving runtime"), [(_(RUNTIME_LABELS[r]), r) for r in SERVING_RUNTIMES],
                                        base.serving_runtime, width="220px"),
            "deployment": C.choice(_("deployment"), _labelled(DEPLOYMENTS, _DEPLOYMENT_WORDS), base.deployment,
                                   width="200px"),
            "team_skills": C.multi_choice(_("team has shipped on"), stack_options, base.team_skills, rows=7,
                                          width="300px",
                                          tooltip=_("stacks your team has used in production (Ctrl/Cmd-click)")),
        }
        for key in WEIGHT_KEYS:
            self.controls[f"w_{key}"] = W.IntSlider(
                value=int(round(base.weights[key])), min=0, max=100, step=5,
                description=_(CRITERION_LABELS.get(key, key)), style={"description_width": "120px"},
                continuous_update=False, layout=W.Layout(width="290px"),
            )
        self.controls["detail_stack"] = C.choice(_("checklist of"), [(STACK_LABELS.get(s, s), s) for s in self.stacks],
                                                 detail_stack, width="300px")
        self.bind_list("frameworks")
        self.bind("custom_cuda_kernels", "custom_cuda_kernels")
        self.bind("deployment", "deployment")
        # served to visitors, "this machine" is the server: its audit only if the operator allows it
        self.served, self.audit_allowed = U.served(), U.probes_allowed()
        if audit is True and not self.audit_allowed:
            self.audit = None
        elif audit is True:
            self.audit = audit_local()
        elif isinstance(audit, dict):
            self.audit = audit
        else:
            self.audit = None
        self.export_status = W.HTML()
        self.export_button = W.Button(description=_("Export checklist (Markdown + CSV)"), icon="download",
                                      layout=W.Layout(width="290px"))
        self.export_button.on_click(self._on_export)
        self.start()

    # --- computing ----------------------------------------------------------------
    def requirements(self):
        """The :class:`~accelkit.ecosystem.Requirements` the controls describe."""
        c = {k: w.value for k, w in self.controls.items()}
        return Requirements(
            frameworks=list(c["frameworks"]), special_operators=c["special_operators"],
            custom_cuda_kernels=bool(c["custom_cuda_kernels"]), serving_runtime=c["serving_runtime"],
            team_skills=list(c["team_skills"]), deployment=c["deployment"],
            needs_quantization=bool(c["needs_quantization"]),
            weights={k: c[f"w_{k}"] for k in WEIGHT_KEYS},
        )

    @staticmethod
    def _depends_on(req):
        out = {"driver_toolkit"}
        out.update(f for f in req.frameworks if f in ("pytorch", "tensorflow", "jax", "onnxruntime"))
        if req.special_operators:
            out.add("operator_coverage")
        if req.custom_cuda_kernels:
            out.add("custom_ops")
        if req.serving_runtime != "any" or {"vllm", "triton"} & set(req.frameworks):
            out.add("serving")
        if req.needs_quantization:
            out.add("quantization")
        return out

    def compute(self):
        req = self.requirements()
        frame = checklist(req, ecosystem=self.ecosystem, catalog=self.catalog)
        scores = stack_scores(checklist_frame=frame)
        detail_stack = self.controls["detail_stack"].value
        return {
            "requirements": req,
            "checklist": frame,
            "scores": scores,
            "summary": self._summary(req, frame, scores),
            "figures": {
                "scores": plots.ecosystem_score_chart(scores, _("Ecosystem score per stack (0-100; colour: worst "
                                                                "item)")),
                "heatmap": plots.ecosystem_heatmap(self.ecosystem, list(scores.index), self._depends_on(req),
                                                   _("Support level per stack and criterion (hover: detail and "
                                                     "source)")),
            },
            "tables": {
                "matrix": self._matrix_html(frame, scores),
                "detail": self._detail_html(frame, detail_stack),
                **({"audit": self._audit_html()} if self.audit is not None else {}),
            },
        }

    def _summary(self, req, frame, scores):
        top = scores.iloc[0]
        lines = [_("Requirements: {requirements}.").format(requirements=req.describe())]
        runners = ", ".join(f"{r['label']} {r['score']:.0f}" for _i, r in scores.iloc[1:3].iterrows())
        lines.append(_("Best fit: {stack} at {score}/100 ({fails} fail, {risks} risk); next: {runners}.").format(
            stack=top["label"], score=f"{top['score']:.0f}", fails=top["n_fail"], risks=top["n_risk"],
            runners=runners))
        failing = scores[scores["n_fail"] > 0]
        if len(failing):
            lines.append(_("{count} of {total} stacks fail a stated requirement: {stacks}.").format(
                count=len(failing), total=len(scores), stacks=", ".join(failing["label"])))
        kernels = frame[(frame["group"] == "custom_ops") & frame["stack"].isin(["rocm", "cann"])]
        if req.custom_cuda_kernels and len(kernels):
            lines.append(_("Your CUDA kernels: {verdicts}.").format(verdicts="; ".join(
                f"{r['label']} {_status_word(r['status'])} ({_first_sentence(r['reason'])})"
                for _i, r in kernels.iterrows())))
        for stack in req.team_skills:
            if stack in scores.index and scores.at[stack, "n_fail"] > 0:
                worst = _first_sentence(scores.at[stack, "worst_reason"])
                lines.append(_("The source article's trap: your team knows {stack}, but it fails here -- "
                               "{reason}.").format(stack=STACK_LABELS.get(stack, stack), reason=worst))
        return lines

    def _matrix_html(self, frame, scores):
        items = list(dict.fromkeys(frame["item"]))
        wide = frame.pivot(index="stack", columns="item", values="status").reindex(index=scores.index,
                                                                                   columns=items)
        wide = wide.apply(lambda col: col.map(lambda s: _SYMBOL.get(s, "")))
        wide.insert(0, _("score"), scores["score"].map("{:.0f}".format))
        wide.insert(0, _("stack"), scores["label"])
        wide = wide.reset_index(drop=True)
        wide.columns = [html.escape(str(c)) for c in wide.columns]  # items include a person's own operator names
        legend = " · ".join(f"{_SYMBOL[s]} {_status_word(s)}" for s in ("pass", "risk", "fail"))
        note = _("{legend}; pick a stack below the table for its reasons.").format(legend=legend)
        return f'<div class="ak-note">{note}</div>' + table_html(wide, max_rows=40, escape=False)

    def _detail_html(self, frame, stack):
        rows = frame[frame["stack"] == stack]
        shown = pd.DataFrame({
            _("item"): rows["item"].astype(str).map(html.escape),
            _("status"): rows["status"].map(lambda s: f"{_SYMBOL.get(s, '')} {_status_word(s)}"),
            _("level"): rows["level"].map(_level_word).replace("", "—"),
            _("reason"): rows["reason"].map(html.escape),
            _("source"): rows["source_url"].map(_link),
        })
        label = STACK_LABELS.get(stack, stack)
        head = ("<b>" + _("Checklist of {stack}: {score}/100").format(
            stack=html.escape(label), score=f"{rows['score'].iloc[0]:.0f}") + "</b>") if len(rows) else ""
        return head + _left(table_html(shown, escape=False, max_rows=40))

    def _audit_html(self):
        facts, stacks = audit_table(self.audit)
        stacks = stacks.assign(status=stacks["status"].map(_audit_status))
        stacks = stacks[["label", "status", "reason"]].rename(
            columns={"label": _("stack"), "status": _("here"), "reason": _("reason")})
        packages = facts[facts["section"] == "package"]
        installed = packages[packages["value"] != "not installed"]
        missing = packages[packages["value"] == "not installed"]["item"]
        rest = facts[facts["section"] != "package"]
        rest = rest[rest["value"] != "—"]
        shown = pd.concat([installed, rest], ignore_index=True)
        if len(missing):
            shown.loc[len(shown)] = ["package", _("not installed"), ", ".join(missing)]
        shown = shown.rename(columns={"section": _("section"), "item": _("item"), "value": _("value")})
        where = (_("<b>This machine: the server</b> (what is installed on the server running this app, not on your "
                   "machine)") if self.served else
                 _("<b>This machine</b> (what is installed here; differs from machine to machine)"))
        return (where
                + _left(table_html(stacks, max_rows=30)) + _left(table_html(shown, max_rows=60)))

    # --- export ---------------------------------------------------------------------
    def export(self, folder=None, stem="ecosystem_checklist"):
        """Write the current checklist as Markdown and CSV into ``folder`` (default: next
        to the notebook); never over an existing file (``stem-2``, ``stem-3`` … instead).
        Returns the two paths."""
        if self.result is None:
            raise ValueError(_("nothing to export: the checklist has an input error; fix it first"))
        folder = Path(folder) if folder is not None else (self.export_dir or Path.cwd())
        for _attempt in range(100):  # another writer may take a name between the check and the write
            md, csv = free_paths(folder, stem, (".md", ".csv"))
            try:
                export(self.result["checklist"], md, requirements=self.result["requirements"])
            except FileExistsError:
                continue
            try:
                export(self.result["checklist"], csv)
            except FileExistsError:
                continue
            return md, csv
        raise FileExistsError(f"could not find a free file name for {stem} in {folder}")

    def _on_export(self, _button=None):
        """The page's export: the checklist as two downloads (nothing is written on the server)."""
        if self.result is None:
            self.export_status.value = error_html(_("nothing to export: the checklist has an input error; fix it "
                                                    "first"))
            return
        frame = self.result["checklist"]
        md, csv = Path("ecosystem_checklist.md"), Path("ecosystem_checklist.csv")
        self.export_status.value = (
            '<span class="ak-note">'
            + _download_link(md, to_markdown(frame, requirements=self.result["requirements"]), "text/markdown")
            + " · " + _download_link(csv, frame.to_csv(index=False), "text/csv") + "</span>"
        )

    # --- display ----------------------------------------------------------------------
    def layout(self):
        c = self.controls
        need = C.group(_("What you need"), [c["frameworks"], c["special_operators"], c["custom_cuda_kernels"],
                                            c["needs_quantization"], W.HBox([c["serving_runtime"], c["deployment"]])])
        team = C.group(_("Your team"), [c["team_skills"]])
        sliders = [c[f"w_{k}"] for k in WEIGHT_KEYS]
        weights = C.group(_("Weights (0-100; only ratios matter)"), [
            W.GridBox(sliders, layout=W.Layout(grid_template_columns="repeat(2, 300px)"))])
        f, t = self.figure_outputs, self.table_outputs
        parts = [W.HTML(CSS), W.HBox([need, team, weights], layout=W.Layout(flex_flow="row wrap")),
                 self.message, self.summary, f["scores"], f["heatmap"],
                 W.HTML("<h4>" + _("Checklist") + "</h4>"), t["matrix"], c["detail_stack"], t["detail"],
                 W.HBox([self.export_button, self.export_status])]
        if "audit" in t:
            parts.append(t["audit"])
        elif self.served and not self.audit_allowed:
            parts.append(W.HTML('<div class="ak-note">' + _(
                "<b>This machine is the server here</b>: its software audit is off in this app (its operator can "
                "allow it with <code>accelkit app --allow-probes</code>). Open chapter 04 in JupyterLab on your own "
                "machine to audit it.") + "</div>"))
        parts.append(self.save_box())
        return W.VBox(parts)

    def key_figures(self):
        """Stable plain-text figures for check cells (no machine-specific audit)."""
        if self.error:
            return f"ERROR: {self.error}"
        req, frame, scores = self.result["requirements"], self.result["checklist"], self.result["scores"]
        lines = [
            f"requirements: {req.describe()}",
            "top 3 stacks: " + ", ".join(f"{s} {v:.1f}" for s, v in scores["score"].head(3).items()),
        ]
        for stack in ("cuda", "rocm", "cann"):
            if stack in scores.index:
                lines.append(f"score {stack}: {scores.at[stack, 'score']:.1f}")
        lines.append(f"stacks with a fail: {int((scores['n_fail'] > 0).sum())} of {len(scores)}")
        for stack in ("cuda", "rocm", "cann"):
            if stack in scores.index:
                row = scores.loc[stack]
                lines.append(f"{stack}: {row['worst_status']} ({row['n_fail']} fail, {row['n_risk']} risk)")
        kernels = frame[frame["group"] == "custom_ops"].set_index("stack")
        for stack in ("rocm", "cann"):
            if stack in kernels.index:
                lines.append(f"{stack} custom kernels: {kernels.at[stack, 'status']}")
        return "\n".join(lines)
