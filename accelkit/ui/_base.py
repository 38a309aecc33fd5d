"""The pieces every panel shares: live figure outputs, error messages, the Panel class."""

from __future__ import annotations

import contextlib
import html
import json
import logging
import time

import ipywidgets as W
from IPython.display import HTML, display

from ..i18n import _
from ._html import error_html  # noqa: F401 (panels import it from here)

log = logging.getLogger("accelkit.ui")

CSS = """
<style>
.ak-error {background:#fdecea;border-left:4px solid #d93025;padding:6px 10px;margin:4px 0;color:#5f2120}
.ak-summary {background:#eef6ee;border-left:4px solid #3c8d40;padding:6px 10px;margin:4px 0;font-size:14px}
.ak-note {color:#555;font-size:12px}
.ak-table {overflow-x:auto;max-width:100%}
.ak-table table {border-collapse:collapse;font-size:12px}
.ak-table th, .ak-table td {border-bottom:1px solid #ddd;padding:3px 8px;text-align:right}
.ak-table th:first-child, .ak-table td:first-child {text-align:left}
.ak-figures {font-size:13px}
.ak-copy-link .ak-link-url {width:100%;max-width:60em;font-size:12px;margin:4px 0}
.ak-chapter-menu {display:none !important}
@media (max-width: 700px) {
  .ak-chapter-menu {display:flex !important}
  .ak-app > .ak-chapter-menu {order:1}
  .ak-app > .ak-tabs {order:2}
  .ak-tabs > .widget-tab-bar, .ak-tabs > .lm-TabBar {display:none !important}
  .ak-app, .ak-app .jupyter-widgets, .ak-app .widget-inline-hbox, .ak-app .widget-box {max-width:100%;min-width:0}
  .ak-app .widget-dropdown > select, .ak-app .widget-text input {min-width:0}
  .ak-app .widget-html-content {white-space:normal;line-height:1.4;overflow-x:auto}
  .ak-app h2, .ak-app h3, .ak-app h4, .ak-app .widget-label, .ak-app .ak-summary {overflow-wrap:anywhere}
  .ak-app #decision-summary dl {grid-template-columns:minmax(0, 1fr)}
  .ak-app #decision-summary .ak-ds-sign {flex-wrap:wrap}
}
</style>
"""


PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"


def figure_bundle(fig):
    """The plotly mime bundle of a figure (what JupyterLab and Voilà render).

    Built from ``fig.to_json()`` rather than ``plotly.io.renderers``: the renderers
    module imports nbformat -> jsonschema, whose optional rfc3987 grammar takes ~3 s
    to import, on every kernel start.
    """
    spec = json.loads(fig.to_json())
    spec["config"] = {"displaylogo": False, "responsive": True}
    return {PLOTLY_MIMETYPE: spec, "text/plain": f"<plotly figure: {fig.layout.title.text or ''}>"}


_PLOTLYJS_SENT = False


def static_figure(fig):
    """A figure for static HTML (reports) as a mime bundle: plotly JSON for Jupyter,
    plus HTML with a ``<div>`` and a ``Plotly.newPlot`` call for nbconvert.

    The HTML loads plotly.js once per page from ``plotly.min.js`` next to the page
    (the report builder copies it there; ``ACCELKIT_PLOTLYJS`` may say ``True`` to
    embed it instead, ~4.8 MB per page). Works offline either way.
    """
    import os

    global _PLOTLYJS_SENT
    mode = os.environ.get("ACCELKIT_PLOTLYJS", "directory")
    include = {"true": True, "false": False}.get(mode.lower(), mode)
    if _PLOTLYJS_SENT:
        include = False
    html_text = fig.to_html(full_html=False, include_plotlyjs=include, config={"displaylogo": False, "responsive": True})
    _PLOTLYJS_SENT = True
    bundle = figure_bundle(fig)
    bundle["text/html"] = html_text
    return bundle


class FigureOutput(W.Output):
    """An Output widget whose content is *assigned*, never captured.

    Assigning ``outputs`` is reliable in JupyterLab, Voilà and nbclient runs;
    ``with out:`` capture intermittently hangs Voilà pages (nbclient issue #312).
    """

    def show(self, fig):
        if fig is getattr(self, "figure", None):
            return  # the same figure object (a part the change did not touch): nothing to send
        self.figure = fig
        self.outputs = ({"output_type": "display_data", "metadata": {}, "data": figure_bundle(fig)},)


class HTMLOutput(W.HTML):
    """An HTML widget for tables and sentences."""


def safe_link(url, text=None):
    """An ``<a href>`` for an http(s) URL (escaped); any other value (``javascript:``, ``data:``, a
    relative path) is shown as plain, escaped text and never becomes a link."""
    if url is None or url != url or not str(url).strip():
        return ""
    url = str(url).strip()
    if not url.lower().startswith(("http://", "https://")):
        return html.escape(url[:80])
    host = text if text is not None else url.split("/")[2]
    return f'<a href="{html.escape(url)}" target="_blank" rel="noopener noreferrer">{html.escape(host)}</a>'


def summary_html(sentences):
    if isinstance(sentences, str):
        sentences = [sentences]
    body = "<br>".join(html.escape(s) for s in sentences if s)
    return f'<div class="ak-summary">{body}</div>' if body else ""


def range_text(value, low, high, fmt, missing="—"):
    """``value (low-high)`` in one cell, an em dash where unknown.

    When ``fmt`` would print a real range as one number ("0.1 (0.1-0.1)"), the three figures are
    shown to three significant digits instead, so a range never reads as certainty.
    """
    if not (value == value) or value in (float("inf"), float("-inf")):
        return missing
    low, high = min(low, high), max(low, high)
    if not (low == low and high == high):
        return fmt.format(value)
    texts = [fmt.format(v) for v in (value, low, high)]
    if len(set(texts)) == 1 and low < high:
        texts = [f"{v:,.3g}" for v in (value, low, high)]
    return f"{texts[0]} ({texts[1]}-{texts[2]})"


def table_html(frame, formats=None, max_rows=60, escape=True):
    """A compact HTML table of a DataFrame (numbers formatted per column)."""
    formats = formats or {}
    shown = frame.head(max_rows)
    body = shown.to_html(index=False, escape=escape, formatters=formats, na_rep="—", border=0)
    more = ('<div class="ak-note">{text}</div>'.format(text=html.escape(_("… {n} more rows").format(n=len(frame) - max_rows)))
            if len(frame) > max_rows else "")
    return f'<div class="ak-table">{body}{more}</div>'


class Panel:
    """A chapter's live panel: controls in, figures, tables and a summary out.

    Subclasses define ``controls`` (a dict of widgets, built in ``__init__``),
    ``compute()`` (pure: reads control values, returns a dict with at least
    ``summary`` -- a list of sentences -- and any ``figures`` / ``tables``) and may
    override ``layout()``. Every control change calls :meth:`refresh`; a
    ``ValueError`` from the formulas becomes an in-page message and the last good
    figures stay on screen.
    """

    title = ""

    def __init__(self, scenario=None):
        from ..scenario import Scenario

        self.scenario = scenario if scenario is not None else Scenario()
        self.bindings = {}
        self.controls = {}
        self.message = W.HTML(layout=W.Layout(width="100%"))
        self.summary = W.HTML(layout=W.Layout(width="100%"))
        self.figure_outputs = {}
        self.table_outputs = {}
        self.result = None
        self.error = None
        self.last_refresh_s = None
        self._widget = None
        self._suspended = False
        self._reused = {}

    # --- wiring -------------------------------------------------------------------
    def watch(self):
        for control in self.controls.values():
            control.observe(self._on_change, names="value")

    def bind(self, control, field, to_field=None, from_field=None):
        """Tie a control to a scenario field (with unit conversions both ways)."""
        self.bindings[control] = (field, to_field or (lambda v: v), from_field or (lambda v: v))

    def bind_list(self, *names):
        """Tie each named multi-choice control to the list field of the same name."""
        for name in names:
            self.bind(name, name, list, tuple)

    def start(self):
        """Watch the controls and draw the first result (the end of every panel's ``__init__``)."""
        self.watch()
        self.refresh()

    def bind_same(self, *names):
        """Tie each named control to the scenario field of the same name (no conversion)."""
        for name in names:
            self.bind(name, name)

    def _push(self, name):
        """Copy a bound control's value into the scenario; False if the value is refused."""
        if name not in self.bindings:
            return True
        field, to_field, _ = self.bindings[name]
        try:
            setattr(self.scenario, field, to_field(self.controls[name].value))
        except ValueError as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            return False
        return True

    def _on_change(self, change):
        if self._suspended:
            return
        name = next((k for k, c in self.controls.items() if c is change["owner"]), None)
        if name is not None and not self._push(name):
            return
        self.refresh()

    def pull_scenario(self):
        """Set the bound controls from the scenario (after another chapter changed it)."""
        self._suspended = True
        try:
            for name, (field, _, from_field) in self.bindings.items():
                value = from_field(getattr(self.scenario, field))
                control = self.controls[name]
                options = getattr(control, "options", None)
                if options is not None:
                    # options may be (label, value) pairs: a translated label over an English value
                    options = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]
                if options is not None and not isinstance(value, (list, tuple)) and value not in options:
                    continue
                if options is not None and isinstance(value, (list, tuple)):
                    value = tuple(v for v in value if v in options)
                control.value = value
        finally:
            self._suspended = False
        self.refresh()

    def set(self, **values):
        """Set several controls at once, then recompute once (used by check cells and tests)."""
        self._suspended = True
        try:
            for key, value in values.items():
                self.controls[key].value = value
        finally:
            self._suspended = False
        for key in values:
            if not self._push(key):
                return
        self.refresh()

    @contextlib.contextmanager
    def trying(self, **values):
        """Set controls for the duration of a ``with`` block, then put them back.

        Check cells use it to show that a control changes the figures without
        leaving the panel (or the scenario) in another state.
        """
        before = {key: self.controls[key].value for key in values}
        self.set(**values)
        try:
            yield self
        finally:
            self.set(**before)

    def save_scenario(self, path):
        """Save the scenario for the next chapter (a user's own file is never replaced)."""
        if not path:
            return _("scenario not saved (no save_scenario_to given)")
        written = self.scenario.save(path)
        return _("scenario saved to {name}").format(name=written.name)

    def scenario_text(self, fmt="json"):
        """The scenario as a file's text (``fmt`` json or yaml), with the marker :meth:`Scenario.save` writes."""
        from ..scenario import _MARKER

        data = {_MARKER: 1, **self.scenario.to_dict()}
        if fmt == "yaml":
            import yaml

            return yaml.safe_dump(data, sort_keys=False)
        return json.dumps(data, indent=2) + "\n"

    def save_box(self):
        """A format choice and a button that hand the person the scenario as a download.

        Nothing is written on the server: in the served app every visitor keeps their own
        scenario (their browser's download), and no visitor names a server path.
        """
        from .files import DownloadBox

        fmt = W.Dropdown(options=[("JSON", "json"), ("YAML", "yaml")], value="json", description=_("scenario as"),
                         layout=W.Layout(width="190px"))

        def make():
            kind = fmt.value
            name = f"scenario.{kind}"
            return name, self.scenario_text(kind), "application/json" if kind == "json" else "application/yaml"

        box = DownloadBox(_("Save scenario"), make, icon="save", width="150px")
        self.save_controls = {"format": fmt, "button": box.button, "status": box.status}
        return W.HBox([fmt, box.widget], layout=W.Layout(align_items="center"))

    def figure(self, name):
        return self.figure_outputs[name]

    def reuse(self, name, key, build):
        """``build()``, or its last value under ``name`` while ``key`` is unchanged.

        For the parts of a chapter that depend on a few controls only (the roofline
        chapter's BERT claim does not depend on the batch size): they are rebuilt when
        their own inputs change, and a figure reused this way is not sent to the page
        again (:meth:`FigureOutput.show`). One entry per name, so memory stays flat.
        """
        cached = self._reused.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        value = build()
        self._reused[name] = (key, value)
        return value

    def refresh(self):
        """Recompute and redraw; an input error shows as a message in the page."""
        start = time.perf_counter()
        try:
            result = self.compute()
        except ValueError as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            return None
        except Exception as exc:  # never a traceback in the page
            log.exception("panel %s failed", type(self).__name__)
            self.error = f"{type(exc).__name__}: {exc}"
            self.message.value = error_html(_("something went wrong ({error})").format(
                error=f"{type(exc).__name__}: {exc}"))
            return None
        self.error = None
        self.message.value = ""
        self.result = result
        self.summary.value = summary_html(result.get("summary", []))
        # a widget per output, made once: a widget made and dropped on every redraw stays
        # registered with the kernel's comm manager, so memory would grow with every change
        for name, fig in result.get("figures", {}).items():
            if name not in self.figure_outputs:
                self.figure_outputs[name] = FigureOutput()
            self.figure_outputs[name].show(fig)
        for name, table in result.get("tables", {}).items():
            if name not in self.table_outputs:
                self.table_outputs[name] = HTMLOutput()
            self.table_outputs[name].value = table
        self.render(result)
        self.last_refresh_s = time.perf_counter() - start
        return result

    def render(self, result):
        """Write the panel's own widgets from ``result`` (beyond summary, figures and tables).

        :meth:`compute` stays pure -- inputs in, a result dict out -- and this is the one
        place a panel writes what it computed into the page.
        """

    def compute(self):  # pragma: no cover - abstract
        raise NotImplementedError

    # --- display ------------------------------------------------------------------
    def control_box(self):
        return W.HBox(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap", gap="4px 16px"))

    def layout(self):
        parts = [W.HTML(CSS), self.control_box(), self.message, self.summary]
        parts += list(self.figure_outputs.values())
        parts += list(self.table_outputs.values())
        return W.VBox(parts)

    @property
    def widget(self):
        if self._widget is None:
            self._widget = self.layout()
        return self._widget

    def show(self, static=False):
        """Display the live panel, or (``static=True``) plain figures and tables for a report."""
        if static:
            if self.error:
                # a report must not pass off an input error as a chapter: fail, naming it
                raise ValueError(f"{self.title or type(self).__name__}: {self.error}")
            display(HTML(CSS))
            if self.result:
                display(HTML(summary_html(self.result.get("summary", []))))
                for fig in self.result.get("figures", {}).values():
                    display(static_figure(fig), raw=True)
                for table in self.result.get("tables", {}).values():
                    display(HTML(table))
            return None
        display(self.widget)
        return None

    def summary_text(self):
        """The summary sentences as plain text (for check cells)."""
        if self.error:
            return f"ERROR: {self.error}"
        return "\n".join(self.result.get("summary", [])) if self.result else ""


def show_all(*panels, static=False):
    """Display several panels as one widget (one output, rendered together), or their
    static figures one after the other."""
    if static:
        for panel in panels:
            panel.show(static=True)
        return None
    display(W.VBox([W.HTML(CSS)] + [p.widget for p in panels]))
    return None
