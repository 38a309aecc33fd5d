"""The Voilà front door: every chapter as a tab over one shared scenario.

A buyer or team lead picks a workload and constraints (or starts from an example),
walks the chapters as tabs, ends at the decision, and downloads a report of the
current scenario. Tabs are built when first opened, so the page is usable in a few
seconds; switching tabs brings the shared scenario into the chapter. URL query
parameters (``?model=Llama-2+70B&workload=inference&tab=decision``) preset the
scenario, so a link reproduces a view.
"""

from __future__ import annotations

import base64
import html
import io
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, quote

import ipywidgets as W
from IPython.display import display

from .. import units
from ..appserver import PROMETHEUS_ENV
from ..scenario import Scenario, ScenarioError, resolve
from . import controls as C
from ._base import CSS, error_html

__all__ = ["App", "TABS", "warm", "wait_for_visitor", "allowed_prometheus", "PROMETHEUS_ENV"]

def allowed_prometheus():
    """The Prometheus base URLs a visitor of the app may query (none unless the operator set them).

    The app runs on its operator's machine: a free URL field would let any visitor make
    that machine send requests to any address it can reach.
    """
    return tuple(u.strip().rstrip("/") for u in os.environ.get(PROMETHEUS_ENV, "").split(",") if u.strip())


def _tabs():
    from .catalogue import CataloguePanel
    from .cluster import ClusterPanel
    from .decision import DecisionPanel
    from .demand import DemandPanel
    from .ecosystem import EcosystemPanel
    from .edge import EdgePanel
    from .energy_tco import EnergyPanel, TCOPanel
    from .monitor import MonitorPanel
    from .precision import PrecisionPanel
    from .probe import ProbePanel
    from .roofline import RooflinePanel
    from .validation import ValidationPanel

    return [
        ("start", "Start", None),
        ("catalogue", "Catalogue", lambda s: [CataloguePanel()]),
        ("demand", "1 Demand", lambda s: [DemandPanel(s)]),
        ("roofline", "2 Bandwidth", lambda s: [RooflinePanel(s)]),
        ("precision", "3 Precision", lambda s: [PrecisionPanel(s)]),
        ("ecosystem", "4 Ecosystem", lambda s: [EcosystemPanel(s)]),
        ("energy", "5 Energy & TCO", lambda s: [EnergyPanel(s), TCOPanel(s)]),
        ("cluster", "6 Cluster", lambda s: [ClusterPanel(s)]),
        ("edge", "7 Edge", lambda s: [EdgePanel(s)]),
        ("probe", "8 This machine", lambda s: [ProbePanel(scenario=s)]),
        ("decision", "9 Decision", lambda s: [DecisionPanel(s, run_sensitivity=False)]),
        ("trust", "10 How far to trust", lambda s: [ValidationPanel(s)]),
        ("monitor", "11 Your GPUs", lambda s: [MonitorPanel(scenario=s, prometheus_allowed=allowed_prometheus())]),
    ]


TABS = ["start", "catalogue", "demand", "roofline", "precision", "ecosystem", "energy", "cluster", "edge", "probe",
        "decision", "trust", "monitor"]

_INTRO = """
<h2 style="margin:4px 0">accelkit · choose an AI accelerator, with the numbers</h2>
<p style="max-width:62em">Describe the job on this page, then walk the chapters left to right: how much compute
it needs, whether memory bandwidth or compute limits it, what lower precision buys, whether your software runs
there, what it costs to run for years, and finally a ranked shortlist with reasons. Every device figure comes from
a datasheet or vendor page (hover a point to see which); a figure nobody publishes is shown as missing.
Changing a value anywhere changes the scenario everywhere.</p>
"""


def _preheated():
    # Voila sets this in the kernels of its preheated pool only
    return os.environ.get("VOILA_PREHEAT", "False") != "False"


def warm():
    """Pay for imports, tables and first figures before a visitor arrives.

    A preheated Voilà kernel (``accelkit app`` keeps a pool of them) runs this while
    it waits; the visitor's own page is then built from warm caches (about 0.7 s
    instead of 2 s for the decision tab on a 2-core machine). The throwaway widgets
    are closed, so nothing of this reaches a page. Elsewhere (a kernel started for
    one visit, JupyterLab, papermill) it does nothing: there the cost would only be
    added to the visitor's wait.
    """
    if not _preheated():
        return
    from ..catalog import load_catalog

    load_catalog()
    App(Scenario(), tab="decision")
    W.Widget.close_all()


def wait_for_visitor():
    """Block until Voilà hands this kernel a visitor's request; return at once elsewhere.

    In a preheated kernel the notebook runs ahead of any visitor; Voilà's
    ``wait_for_request`` returns when a page takes the kernel and sets the request's
    environment (``QUERY_STRING``), so a link's settings still apply. The wait may
    last hours: ``app.ipynb`` calls this alone in a cell tagged
    ``accelkit-wait-for-visitor``, which the app runs without the cell time limit
    (:mod:`accelkit.kernelcap`). Outside Voilà's
    preheat mode (JupyterLab, papermill, a kernel started for one visit) it does
    nothing.
    """
    if not _preheated():
        return
    from voila.utils import wait_for_request

    wait_for_request()


def _examples_dir():
    here = Path(__file__).resolve().parents[2] / "examples"
    return here if here.exists() else None


class App:
    """The front door. ``App(scenario).show()``; :meth:`from_environment` reads the URL query."""

    def __init__(self, scenario=None, tab="start"):
        self.scenario = scenario if scenario is not None else Scenario()
        self.specs = _tabs()
        self.keys = [k for k, _, _ in self.specs]
        if tab not in self.keys:
            tab = "start"
        self.panels = {}
        self.message = W.HTML()
        # every widget made here is sent to the page and built there, so the closed tabs share one
        # placeholder text and one layout (157 widgets at start before, 87 now; issue 26)
        opening, layout = W.HTML("<i>opening…</i>"), W.Layout()
        self.tab = W.Tab(children=[self._start_page()] + [W.VBox([opening], layout=layout) for _ in self.specs[1:]],
                         titles=[title for _, title, _ in self.specs])
        self.tab.observe(self._on_tab, names="selected_index")
        self.report_status = W.HTML()
        self.tab.selected_index = self.keys.index(tab)
        if tab != "start":
            self._open(self.keys.index(tab))

    @classmethod
    def from_environment(cls, scenario_path="", tab=""):
        """Build from a scenario file and the URL query (``QUERY_STRING``, set by Voilà).

        ``tab`` in the query picks the opening tab; every other key is a scenario field.
        A bad value opens the app with the defaults and a message naming the field.
        """
        query = os.environ.get("QUERY_STRING", "")
        params = parse_qs(query)
        tab = params.pop("tab", [tab])[-1] or "start"
        rest = "&".join(f"{k}={quote(v[-1])}" for k, v in params.items())
        problem = None
        try:
            scenario = resolve(scenario_path, query_string=rest)
        except (ScenarioError, ValueError) as exc:
            scenario, problem = Scenario(), str(exc)
        app = cls(scenario, tab=tab)
        if problem:
            app.message.value = error_html(f"the link's settings were not applied: {problem}")
        return app

    # --- the start page -----------------------------------------------------------
    def _start_page(self):
        s = self.scenario
        self.start_controls = {
            "workload": C.choice("workload", ["training", "fine-tuning", "inference"], s.workload, width="230px"),
            "model": C.model_picker(s.model if s.model != "custom" else "Llama-2 7B", include_custom=False),
            "deployment": C.choice("deployment", ["cloud", "on-prem", "edge"], s.deployment, width="210px"),
            "precision": C.precision_picker(s.precision, ["fp32", "bf16", "fp16", "fp8", "int8"]),
            "tokens_b": C.number("training tokens", s.tokens / units.GIGA, "billion", width="250px"),
            "time_target_days": C.number("finish within", s.time_target_days, "days", width="220px"),
            "latency_target_ms": C.number("latency target", s.latency_target_ms, "ms per token", width="270px"),
            "n_devices": C.integer("devices allowed", s.n_devices, "count", width="230px"),
        }
        self._start_fields = {"tokens_b": ("tokens", lambda v: v * units.GIGA)}
        for name, control in self.start_controls.items():
            control.observe(self._on_start_change, names="value")
        examples = ["(your own)"]
        folder = _examples_dir()
        if folder:
            examples += [p.stem for p in sorted(folder.glob("*.yaml"))]
        self.example = C.choice("start from an example", examples, "(your own)", width="420px")
        self.example.observe(self._on_example, names="value")
        self.link = W.HTML()
        self.report_button = W.Button(description="Download report", icon="download", layout=W.Layout(width="180px"),
                                      tooltip="render every chapter for this scenario (takes about a minute)")
        self.report_button.on_click(lambda _: self.download_report())
        self.start_message = W.HTML()
        self._update_link()
        grid = W.HBox([C.group("The job", [self.start_controls[k] for k in ("workload", "model", "precision",
                                                                             "tokens_b")]),
                       C.group("Constraints", [self.start_controls[k] for k in ("deployment", "time_target_days",
                                                                                 "latency_target_ms", "n_devices")])],
                      layout=W.Layout(flex_flow="row wrap"))
        return W.VBox([W.HTML(_INTRO), self.example, grid, self.start_message, self.link,
                       W.HTML("<p>Then open the tabs in order. <b>9 Decision</b> ranks the devices for this scenario; "
                              "<b>Download report</b> writes every chapter to HTML for sharing.</p>")])

    def _on_start_change(self, change):
        name = next(k for k, c in self.start_controls.items() if c is change["owner"])
        field, convert = self._start_fields.get(name, (name, lambda v: v))
        try:
            setattr(self.scenario, field, convert(change["new"]))
        except ValueError as exc:
            self.start_message.value = error_html(exc)
            return
        self.start_message.value = ""
        self._update_link()

    def _on_example(self, change):
        if change["new"] == "(your own)":
            return
        try:
            loaded = Scenario.load(_examples_dir() / f"{change['new']}.yaml")
        except (OSError, ValueError) as exc:
            self.start_message.value = error_html(exc)
            return
        self.scenario.update(**loaded.to_dict())
        for name, control in self.start_controls.items():
            field, _ = self._start_fields.get(name, (name, None))
            value = getattr(self.scenario, field)
            value = value / units.GIGA if name == "tokens_b" else value
            options = getattr(control, "options", None)
            if options is None or value in [o[1] if isinstance(o, tuple) else o for o in options]:
                control.value = value
        self.start_message.value = f'<div class="ak-note">loaded example {html.escape(change["new"])}</div>'
        self._update_link()

    def _update_link(self):
        fields = ["workload", "model", "deployment", "precision", "tokens", "time_target_days", "latency_target_ms",
                  "n_devices"]
        query = self.scenario.to_query_string(keys=fields)
        self.link.value = (f'<div class="ak-note">Link to this view: add <code>?{html.escape(query)}</code> to the '
                           "app's address (and <code>&amp;tab=decision</code> to open a chapter).</div>")

    # --- tabs ---------------------------------------------------------------------
    def _on_tab(self, change):
        self._open(change["new"])

    def _open(self, index):
        key, _, factory = self.specs[index]
        if factory is None:
            return
        if key not in self.panels:
            try:
                self.panels[key] = factory(self.scenario)
            except Exception as exc:  # a chapter that cannot open says why, the others keep working
                self.tab.children = tuple(
                    W.VBox([W.HTML(error_html(f"this chapter could not open: {exc}"))]) if i == index else child
                    for i, child in enumerate(self.tab.children)
                )
                return
            box = W.VBox([p.widget for p in self.panels[key]])
            self.tab.children = tuple(box if i == index else child for i, child in enumerate(self.tab.children))
        else:
            for panel in self.panels[key]:
                panel.pull_scenario()

    def panel(self, key):
        """The (first) panel of a tab, opening it if needed."""
        self._open(self.keys.index(key))
        return self.panels[key][0]

    # --- report -------------------------------------------------------------------
    def download_report(self, out_dir=None):
        """Render every chapter for the current scenario and offer the zip as a download link.

        The chapters render into a temporary folder of this visit, which is removed once the
        zip is in memory: nothing stays on the server, and no visitor sees another's report.
        ``out_dir`` (Python callers only) keeps the rendered folder there instead.
        Returns the index page's path (gone with its temporary folder unless ``out_dir`` was
        given; None when the report failed); the zip's bytes are kept as ``report_zip``.
        """
        from ..kernelcap import NoRoom, report_slots
        from ..report import ReportError, build_report

        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = f"{_slug(self.scenario.name)}-{stamp}"
        temp = None if out_dir else tempfile.mkdtemp(prefix="accelkit-report-")
        out = Path(out_dir) if out_dir else Path(temp) / name
        self.report_status.value = '<div class="ak-note">rendering the chapters… (about a minute)</div>'
        self.report_button.disabled = True
        try:
            # the chapter kernels count against the app's kernel cap (accelkit.kernelcap): as many
            # run at once as there are free places, none while the app is full
            with report_slots(3, on_wait=self._report_waits) as workers:
                index = build_report(self.scenario.copy(), out_dir=out, progress=False, workers=workers)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(index.parent.rglob("*")):
                    if path.is_file() and not path.is_symlink() and "executed" not in path.parts:
                        zf.write(path, Path(index.parent.name) / path.relative_to(index.parent))
        except NoRoom as exc:
            self.report_status.value = error_html(f"no report now: {exc}")
            return None
        except (ReportError, OSError, ValueError) as exc:
            self.report_status.value = error_html(f"the report failed: {exc}")
            return None
        finally:
            self.report_button.disabled = False
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
        data = self.report_zip = buffer.getvalue()
        self.report_status.value = (
            f'<a download="{html.escape(out.name)}.zip" href="data:application/zip;base64,'
            f'{base64.b64encode(data).decode("ascii")}" '
            f'class="ak-report-link">Save the report ({len(data) / units.MEGA:.1f} MB zip)</a>'
        )
        return index

    def _report_waits(self):
        self.report_status.value = ('<div class="ak-note">the app is full: waiting for a free place to '
                                    "render the report…</div>")

    # --- display ------------------------------------------------------------------
    @property
    def widget(self):
        header = W.HBox([self.report_button, self.report_status], layout=W.Layout(align_items="center"))
        return W.VBox([W.HTML(CSS), self.message, header, self.tab])

    def show(self):
        display(self.widget)


def _slug(text):
    import re

    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "scenario"
