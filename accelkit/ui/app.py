"""The Voilà front door: every chapter as a tab over one shared scenario.

A buyer or team lead picks a workload and constraints (or starts from an example),
walks the chapters as tabs, ends at the decision, and downloads a report of the
current scenario. Tabs are built when first opened, so the page is usable in a few
seconds; switching tabs brings the shared scenario into the chapter. URL query
parameters (``?model=Llama-2+70B&workload=inference&tab=decision``) preset the
scenario, so a link reproduces a view; the "Copy link" button hands the person such a
link with every scenario field (kept current through :meth:`Scenario.observe`, whichever
tab changed the scenario). ``lang=zh_CN`` (or the browser's ``Accept-Language``) picks
the language before any widget is built. On a narrow screen (a phone) a chapter menu
replaces the tab bar.
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
from urllib.parse import parse_qs, urlencode

import ipywidgets as W
from IPython.display import display

from .. import units
from ..appserver import PROMETHEUS_ENV
from ..i18n import N_, _, from_accept_language, language, set_language
from ..scenario import Scenario, ScenarioError, resolve
from . import controls as C
from ._base import CSS, error_html
from ._html import copy_link_html, differs_html, languages_html

__all__ = ["App", "TABS", "warm", "wait_for_visitor", "allowed_prometheus", "PROMETHEUS_ENV"]

def allowed_prometheus():
    """The Prometheus base URLs a visitor of the app may query (none unless the operator set them).

    The app runs on its operator's machine: a free URL field would let any visitor make
    that machine send requests to any address it can reach.
    """
    return tuple(u.strip().rstrip("/") for u in os.environ.get(PROMETHEUS_ENV, "").split(",") if u.strip())


def _panel(module, name):
    """The panel class ``name`` of ``accelkit.ui.<module>``, imported when its tab first opens: a chapter
    whose module cannot load then says so in its own tab, and the front door and other chapters keep working."""
    from importlib import import_module

    return getattr(import_module(f".{module}", __package__), name)


_CHAPTER_MODULES = ("catalogue", "demand", "roofline", "precision", "ecosystem", "energy_tco", "cluster", "edge",
                    "probe", "decision", "validation", "monitor")


def _tabs():
    return [
        ("start", N_("Start"), None),
        ("catalogue", N_("Catalogue"), lambda s: [_panel("catalogue", "CataloguePanel")()]),
        ("demand", N_("1 Demand"), lambda s: [_panel("demand", "DemandPanel")(s)]),
        ("roofline", N_("2 Bandwidth"), lambda s: [_panel("roofline", "RooflinePanel")(s)]),
        ("precision", N_("3 Precision"), lambda s: [_panel("precision", "PrecisionPanel")(s)]),
        ("ecosystem", N_("4 Ecosystem"), lambda s: [_panel("ecosystem", "EcosystemPanel")(s)]),
        ("energy", N_("5 Energy & TCO"), lambda s: [_panel("energy_tco", "EnergyPanel")(s),
                                                    _panel("energy_tco", "TCOPanel")(s)]),
        ("cluster", N_("6 Cluster"), lambda s: [_panel("cluster", "ClusterPanel")(s)]),
        ("edge", N_("7 Edge"), lambda s: [_panel("edge", "EdgePanel")(s)]),
        ("probe", N_("8 This machine"), lambda s: [_panel("probe", "ProbePanel")(scenario=s)]),
        ("decision", N_("9 Decision"), lambda s: [_panel("decision", "DecisionPanel")(s, run_sensitivity=False)]),
        ("trust", N_("10 How far to trust"), lambda s: [_panel("validation", "ValidationPanel")(s)]),
        ("monitor", N_("11 Your GPUs"), lambda s: [_panel("monitor", "MonitorPanel")(
            scenario=s, prometheus_allowed=allowed_prometheus())]),
    ]


TABS = ["start", "catalogue", "demand", "roofline", "precision", "ecosystem", "energy", "cluster", "edge", "probe",
        "decision", "trust", "monitor"]

_HEADING = N_("accelkit · choose an AI accelerator, with the numbers")
_INTRO = N_("Describe the job on this page, then walk the chapters left to right: how much compute it needs, "
            "whether memory bandwidth or compute limits it, what lower precision buys, whether your software runs "
            "there, what it costs to run for years, and finally a ranked shortlist with reasons. Every device figure "
            "comes from a datasheet or vendor page (hover a point to see which); a figure nobody publishes is shown "
            "as missing. Changing a value anywhere changes the scenario everywhere.")
#: the built-in examples (examples/*.yaml) by file name; the English label is the file name itself
_EXAMPLES = {
    "bert-inference-small-team": N_("bert-inference-small-team"),
    "finetune-7b-in-a-day": N_("finetune-7b-in-a-day"),
    "recsys-8xa100-overbought": N_("recsys-8xa100-overbought"),
    "serve-70b-at-latency-target": N_("serve-70b-at-latency-target"),
    "smart-factory-edge-vision": N_("smart-factory-edge-vision"),
}
_OWN = ""  # the example picker's value for "(your own)"
#: (label, value) of the start page's choices; the labels are translated where shown
_WORKLOADS = ((N_("training"), "training"), (N_("fine-tuning"), "fine-tuning"), (N_("inference"), "inference"))
_DEPLOYMENTS = ((N_("cloud"), "cloud"), (N_("on-prem"), "on-prem"), (N_("edge"), "edge"))
#: the latency target's unit per kind of served model (accelkit.projection.for_scenario.workload_kind)
_LATENCY_UNITS = {"llm": N_("ms per token"), "vision": N_("ms per frame"), "encoder": N_("ms per request"),
                  "recommender": N_("ms per pass")}


def _label(text, unit):
    return f"{text} [{unit}]"


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
    from importlib import import_module

    from ..catalog import load_catalog

    load_catalog()
    for module in _CHAPTER_MODULES:  # each tab imports its chapter when first opened: pay for that here
        try:
            import_module(f".{module}", __package__)
        except Exception:  # noqa: S112 - that tab will say why when opened
            continue
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
        self.keys = [k for k, _t, _f in self.specs]
        if tab not in self.keys:
            tab = "start"
        self.panels = {}
        self.message = W.HTML()
        self._syncing = False
        # every widget made here is sent to the page and built there, so the closed tabs share one
        # placeholder text and one layout (157 widgets at start before, 87 now; issue 26)
        opening, layout = W.HTML("<i>{text}</i>".format(text=html.escape(_("opening…")))), W.Layout()
        titles = [_(title) for _k, title, _f in self.specs]
        self.tab = W.Tab(children=[self._start_page()] + [W.VBox([opening], layout=layout) for _ in self.specs[1:]],
                         titles=titles)
        self.tab.add_class("ak-tabs")
        # on a narrow screen (a phone) the tab bar squashes its titles: this menu replaces it there (CSS in _base)
        self.menu = W.Dropdown(options=[(t, i) for i, t in enumerate(titles)], value=self.keys.index(tab),
                               description=_("chapter"), style=C.STYLE, layout=W.Layout(width="100%"))
        self.menu.add_class("ak-chapter-menu")
        self.menu.observe(self._on_menu, names="value")
        self.tab.observe(self._on_tab, names="selected_index")
        self.report_status = W.HTML()
        self.tab.selected_index = self.keys.index(tab)
        if tab != "start":
            self._open(self.keys.index(tab))
        self.scenario.observe(self._on_scenario)
        self._update_link()

    @classmethod
    def from_environment(cls, scenario_path="", tab=""):
        """Build from a scenario file and the URL query (``QUERY_STRING``, set by Voilà).

        ``tab`` in the query picks the opening tab and ``lang`` the language (``en``,
        ``zh_CN``); without ``lang``, the browser's ``Accept-Language`` header (Voilà
        passes it as ``HTTP_ACCEPT_LANGUAGE``) picks it. Every other key is a scenario field.
        A bad value opens the app with the defaults and a message naming the field.
        """
        query = os.environ.get("QUERY_STRING", "")
        params = parse_qs(query, keep_blank_values=True)
        tab = params.pop("tab", [tab])[-1] or "start"
        wanted = params.pop("lang", [""])[-1]
        problems = []
        default = from_accept_language(os.environ.get("HTTP_ACCEPT_LANGUAGE"), default=language())
        try:
            set_language(wanted or default)
        except ValueError as exc:
            set_language(default)
            problems.append(str(exc))
        rest = urlencode([(k, v[-1]) for k, v in params.items()])
        try:
            scenario = resolve(scenario_path, query_string=rest)
        except (ScenarioError, ValueError) as exc:
            scenario = Scenario()
            problems.append(str(exc))
        app = cls(scenario, tab=tab)
        if problems:
            app.message.value = error_html(_("the link's settings were not applied: {problem}").format(
                problem="; ".join(problems)))
        return app

    # --- the start page -----------------------------------------------------------
    def _start_page(self):
        s = self.scenario
        self.start_controls = {
            "workload": C.choice(_("workload"), [(_(t), v) for t, v in _WORKLOADS], s.workload, width="230px"),
            "model": C.model_picker(s.model if s.model != "custom" else "Llama-2 7B", description=_("model"),
                                    include_custom=False),
            "deployment": C.choice(_("deployment"), [(_(t), v) for t, v in _DEPLOYMENTS], s.deployment,
                                   width="210px"),
            "precision": C.precision_picker(s.precision, ["fp32", "bf16", "fp16", "fp8", "int8"],
                                            description=_("precision")),
            "tokens_b": C.number(_("training tokens"), s.tokens / units.GIGA, _("billion"), width="250px"),
            "time_target_days": C.number(_("finish within"), s.time_target_days, _("days"), width="220px"),
            "latency_target_ms": C.number(_("latency target"), s.latency_target_ms, _("ms per token"),
                                          width="270px"),
            "n_devices": C.integer(_("devices allowed"), s.n_devices, _("count"), width="230px"),
        }
        self._start_fields = {"tokens_b": ("tokens", lambda v: v * units.GIGA, lambda v: v / units.GIGA)}
        for name, control in self.start_controls.items():
            control.observe(self._on_start_change, names="value")
        examples = [(_("(your own)"), _OWN)]
        folder = _examples_dir()
        if folder:
            examples += [(_(_EXAMPLES.get(p.stem, p.stem)), p.stem) for p in sorted(folder.glob("*.yaml"))]
        self.example = C.choice(_("start from an example"), examples, _OWN, width="420px")
        self.example.observe(self._on_example, names="value")
        self.link = W.HTML()
        self.header_link = W.HTML()
        self.languages = W.HTML()
        self.report_button = W.Button(description=_("Download report"), icon="download",
                                      layout=W.Layout(width="180px"),
                                      tooltip=_("render every chapter for this scenario (takes about a minute)"))
        self.report_button.on_click(lambda _b: self.download_report())
        self.start_message = W.HTML()
        self._follow_workload()
        grid = W.HBox([C.group(_("The job"), [self.start_controls[k] for k in ("workload", "model", "precision",
                                                                                "tokens_b")]),
                       C.group(_("Constraints"), [self.start_controls[k] for k in ("deployment", "time_target_days",
                                                                                    "latency_target_ms",
                                                                                    "n_devices")])],
                      layout=W.Layout(flex_flow="row wrap"))
        intro = W.HTML('<h2 style="margin:4px 0">{heading}</h2>\n<p style="max-width:62em">{intro}</p>'.format(
            heading=html.escape(_(_HEADING)), intro=html.escape(_(_INTRO))))
        then = _("Then open the tabs in order. <b>9 Decision</b> ranks the devices for this scenario; "
                 "<b>Download report</b> writes every chapter to HTML for sharing.")
        page = W.VBox([self.languages, intro, self.example, grid, self.start_message, self.link,
                       W.HTML(f"<p>{then}</p>")])
        page.add_class("ak-start")
        return page

    def _on_start_change(self, change):
        if self._syncing:
            return
        name = next(k for k, c in self.start_controls.items() if c is change["owner"])
        field, convert, _back = self._start_fields.get(name, (name, lambda v: v, None))
        try:
            setattr(self.scenario, field, convert(change["new"]))
        except ValueError as exc:
            self.start_message.value = error_html(exc)
            return
        self.start_message.value = ""

    def _on_example(self, change):
        if change["new"] == _OWN:
            return
        try:
            loaded = Scenario.load(_examples_dir() / f"{change['new']}.yaml")
        except (OSError, ValueError) as exc:
            self.start_message.value = error_html(exc)
            return
        self.scenario.update(**loaded.to_dict())  # the controls and the link follow (_on_scenario)
        self.start_message.value = '<div class="ak-note">{text}</div>'.format(
            text=html.escape(_("loaded example {name}").format(name=_(_EXAMPLES.get(change["new"], change["new"])))))

    def _pull_start_controls(self):
        """Set the start page's controls from the scenario (another tab or an example changed it)."""
        self._syncing = True
        try:
            for name, control in self.start_controls.items():
                field, _to, back = self._start_fields.get(name, (name, None, None))
                value = getattr(self.scenario, field)
                value = back(value) if back else value
                options = getattr(control, "options", None)
                if options is None or value in [o[1] if isinstance(o, tuple) else o for o in options]:
                    control.value = value
        finally:
            self._syncing = False
        self._follow_workload()

    def _follow_workload(self):
        """Labels and units that follow the workload; controls that do not apply are hidden (values kept).

        Training and fine-tuning: the data to process (tokens, or images for a vision model) and the
        time to finish; inference: the latency target per output token (LLMs), per frame (vision
        models) or per request (encoders such as BERT).
        """
        from ..projection.for_scenario import workload_kind

        c = self.start_controls
        try:
            kind = workload_kind(self.scenario)
        except ValueError:
            kind = "llm"
        training = kind == "training"
        vision = self.scenario.model.lower() != "custom" and _is_vision(self.scenario.model)
        c["tokens_b"].description = _label(_("training samples") if vision else _("training tokens"), _("billion"))
        if kind in _LATENCY_UNITS:
            c["latency_target_ms"].description = _label(_("latency target"), _(_LATENCY_UNITS[kind]))
        for name, shown in (("tokens_b", training), ("time_target_days", training),
                            ("latency_target_ms", not training)):
            c[name].layout.display = None if shown else "none"
        for control in c.values():
            control.tooltip = control.description

    def _on_scenario(self, scenario, names):
        """The shared scenario changed (on this page or in a chapter): follow it here and in the link."""
        fields = {self._start_fields.get(k, (k,))[0] for k in self.start_controls}
        if fields & set(names):
            self._pull_start_controls()
        elif {"workload", "model"} & set(names):
            self._follow_workload()
        self._update_link()

    def link_query(self, tab=None, lang=None):
        """The query of a link to this view: every scenario field, the open tab and the language."""
        tab = tab or self.keys[self.tab.selected_index or 0]
        return "{fields}&{extra}".format(fields=self.scenario.to_query_string(keys="all"),
                                         extra=urlencode({"tab": tab, "lang": lang or language()}))

    def _update_link(self):
        if not hasattr(self, "tab"):
            return
        query = self.link_query()
        self.link.value = copy_link_html(query) + differs_html(self.scenario)
        self.header_link.value = copy_link_html(query)
        self.languages.value = languages_html(lambda lang: self.link_query(lang=lang), language())

    # --- tabs ---------------------------------------------------------------------
    def _on_tab(self, change):
        if change["new"] is None:
            return
        self.menu.value = change["new"]
        self._open(change["new"])
        self._update_link()

    def _on_menu(self, change):
        if change["new"] is not None and self.tab.selected_index != change["new"]:
            self.tab.selected_index = change["new"]

    def _open(self, index):
        key, _t, factory = self.specs[index]
        if factory is None:
            return
        if key not in self.panels:
            try:
                self.panels[key] = factory(self.scenario)
            except Exception as exc:  # a chapter that cannot open says why, the others keep working
                self.tab.children = tuple(
                    W.VBox([W.HTML(error_html(_("this chapter could not open: {error}").format(error=exc)))])
                    if i == index else child
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
        self.report_status.value = '<div class="ak-note">{text}</div>'.format(
            text=html.escape(_("rendering the chapters… (about a minute)")))
        self.report_button.disabled = True
        try:
            # the chapter kernels count against the app's kernel cap (accelkit.kernelcap): as many
            # run at once as there are free places, none while the app is full
            with report_slots(3, on_wait=self._report_waits) as workers:
                # the report speaks the page's language
                extra = {} if language() == "en" else {"lang": language()}
                index = build_report(self.scenario.copy(), out_dir=out, progress=False, workers=workers, **extra)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(index.parent.rglob("*")):
                    if path.is_file() and not path.is_symlink() and "executed" not in path.parts:
                        zf.write(path, Path(index.parent.name) / path.relative_to(index.parent))
        except NoRoom as exc:
            self.report_status.value = error_html(_("no report now: {reason}").format(reason=exc))
            return None
        except (ReportError, OSError, ValueError) as exc:
            self.report_status.value = error_html(_("the report failed: {reason}").format(reason=exc))
            return None
        finally:
            self.report_button.disabled = False
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
        data = self.report_zip = buffer.getvalue()
        size = f"{len(data) / units.MEGA:.1f}"
        self.report_status.value = (
            f'<a download="{html.escape(out.name)}.zip" href="data:application/zip;base64,'
            f'{base64.b64encode(data).decode("ascii")}" '
            'class="ak-report-link">{text}</a>'.format(text=html.escape(_("Save the report ({size} MB zip)").format(
                size=size)))
        )
        return index

    def _report_waits(self):
        self.report_status.value = '<div class="ak-note">{text}</div>'.format(
            text=html.escape(_("the app is full: waiting for a free place to render the report…")))

    # --- display ------------------------------------------------------------------
    @property
    def widget(self):
        header = W.HBox([self.report_button, self.header_link, self.report_status],
                        layout=W.Layout(align_items="center", flex_flow="row wrap"))
        # the menu comes after the tabs in the page (a desktop page's first choice stays the start page's own);
        # on a narrow screen the CSS shows it above them (flex order, _base.CSS)
        box = W.VBox([W.HTML(CSS), self.message, header, self.tab, self.menu])
        box.add_class("ak-app")
        return box

    def show(self):
        display(self.widget)


def _slug(text):
    import re

    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "scenario"


def _is_vision(model):
    """True for a model trained per sample (image models, recommenders), not per token."""
    from ..models import find_model

    try:
        return find_model(model)["kind"] in ("cnn", "vit", "recommender")
    except ValueError:
        return False
