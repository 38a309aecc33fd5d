"""Chapter 08: probe the local machine -- measured against datasheet, precision speed and error.

The panel shows saved results (the shipped example, or a file) without running
anything, so the notebook executes in seconds; the "Run probes" button measures
this machine with :func:`accelkit.probes.run_all`, with a progress bar updated by
callback (no ``with out:`` capture).
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import plots, probes, units
from ..probes.results import note_text as _probe_note
from ..i18n import N_, _
from . import controls as C
from .. import userfiles as U
from ._base import CSS, Panel, error_html, table_html
from .files import DownloadBox, FilePicker

__all__ = ["ProbePanel"]

def _install_html():
    return ('<div class="ak-error">'
            + _("<b>PyTorch is not installed here</b>, so this machine cannot be measured: {hint}. Saved results "
                "can still be shown below.").format(hint=html.escape(probes.INSTALL_HINT))
            + "</div>")


def _off_text():
    return _("probing is off in this app: here 'this machine' is the server, not yours. Run `accelkit probe --json "
             "my_probe_results.json` on your own machine and upload the file below")


def _off_html():
    return ('<div class="ak-note">'
            + _("<b>This machine is the server here.</b> The probes are off in this app (its operator can allow "
                "them with <code>{allow}</code>). To measure your own machine, run <code>{command}</code> there and "
                "upload the file below.").format(allow="accelkit app --allow-probes",
                                                 command="accelkit probe --json my_probe_results.json")
            + "</div>")


def _note_html(text):
    return f'<span class="ak-note">{text}</span>'


def _heading(text):
    return W.HTML("<h4>" + text + "</h4>")


def _fmt_ratio(r):
    if r == r and np.isfinite(r):
        return _("{ratio} of datasheet").format(ratio=f"{r:.0%}")
    return _("no datasheet figure")


#: words of the saved results shown as they are (model names of the precision probe, bandwidth kinds)
_WORDS = (N_("mlp"), N_("transformer"), N_("copy"), N_("read"))


def _calibration_quantity(quantity):
    """``matmul bf16`` / ``memory bandwidth (copy)`` in the language in use."""
    if quantity.startswith("matmul "):
        return _("matmul {dtype}").format(dtype=quantity.split(" ", 1)[1])
    if quantity.startswith("memory bandwidth (") and quantity.endswith(")"):
        return _("memory bandwidth ({kind})").format(kind=_(quantity[len("memory bandwidth ("):-1]))
    return quantity


def _step_label(label):
    """A step of :func:`accelkit.probes.run_all` ("matmul bf16", "memory copy", "mlp fp16") in words."""
    first, _sep, rest = str(label).partition(" ")
    if first == "matmul" and rest:
        return _("matmul {dtype}").format(dtype=rest)
    if first in ("mlp", "transformer") and rest:
        return f"{_(first)} {rest}"
    return _(label)


def _results_table(results):
    """:func:`accelkit.probes.display_table` with translated headers and notes."""
    table = probes.display_table(results, max_note=10_000)
    table["shape"] = table["shape"].map(_probe_note)
    notes = [_probe_note(n) for n in table["note"]]
    table["note"] = [n if len(n) <= 90 else n[:89] + "…" for n in notes]
    return table.rename(columns={c: _(c) for c in table.columns})


_HEADERS = (N_("probe"), N_("dtype"), N_("shape"), N_("ratio"), N_("note"))


class ProbePanel(Panel):
    """Run the local probes, or show saved results, next to the catalogue's datasheet figures."""

    title = N_("Local probes")

    def __init__(self, run_now=False, quick=True, device="", results_path="", scenario=None):
        super().__init__(scenario)
        self.torch_ok = probes.torch_available()
        self.inventory = probes.inventory() if self.torch_ok else None
        options = ["auto"] + (self.inventory["device"].tolist() if self.inventory is not None else [])
        start_message = ""
        if device and device not in options:
            start_message = _("device={device} is not on this machine (available: {available}); using auto").format(
                device=repr(device), available=", ".join(options))
            device = ""
        self.controls = {
            "device": C.choice(_("device"), [(_("auto") if o == "auto" else o, o) for o in options],
                               device or "auto", width="200px",
                               tooltip=_("the torch device to measure; auto = the first GPU, else the CPU")),
            "quick": C.toggle(_("quick (small sizes, seconds)"), bool(quick),
                              tooltip=_("quick: under 30 s on a 2-core CPU; off: larger shapes and buffers")),
        }
        # served to visitors, "this machine" is the server: probes only if its operator allows them
        self.allowed = U.probes_allowed()
        self.served = U.served()
        self.controls["device"].disabled = not (self.torch_ok and self.allowed)
        if self.served:  # bounded in time: the quick mode only (under 30 s on a 2-core CPU)
            self.controls["quick"].value = True
            self.controls["quick"].disabled = True
        label = _("Run probes (measures the server)") if self.served else _("Run probes")
        self.run_button = W.Button(description=label, icon="play", button_style="primary",
                                   disabled=not (self.torch_ok and self.allowed),
                                   layout=W.Layout(width="290px" if self.served else "150px"))
        self.run_button.on_click(lambda _b: self.run())
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="260px"))
        self.progress_label = W.HTML(_note_html(_("not running")))
        self.install = W.HTML(_off_html() if not self.allowed else "" if self.torch_ok else _install_html())
        self.results_picker = FilePicker(_("results"), builtin=[(_("shipped example"), "example")], accept=".json",
                                         suffixes=(".json",), given=results_path or None, width="330px")
        self.results_picker.choice.observe(lambda _c: self.load_picked(), names="value")
        self.results_picker.upload.observe(lambda _c: self.load_picked(), names="value")
        self.download = DownloadBox(_("Save results"), self._results_file, icon="save", width="140px")
        self.save_button, self.save_status = self.download.button, self.download.status
        self.results = None
        if run_now and self.allowed:
            self.run()
        else:
            self.load(results_path or None)
            if run_now:
                start_message = start_message or _off_text()
        if start_message:
            self.message.value = error_html(start_message)

    # --- actions --------------------------------------------------------------------
    def load(self, path=None):
        """Show results from ``path`` (default: the shipped example results); runs nothing."""
        try:
            self.results = probes.load_results(path) if path else probes.load_example_results()
        except (OSError, ValueError) as exc:
            self.results = None
            self.refresh()
            self.error = str(exc)
            self.message.value = error_html(exc)
            return None
        self.refresh()
        return self.results

    def load_picked(self):
        """Show the results the picker names: the example, an upload, or a data-folder file."""
        try:
            picked = self.results_picker.read()
            if isinstance(picked, str):
                return self.load(None)
            if isinstance(picked[0], Path):
                return self.load(picked[0])
            frame = probes.results_from_text(picked[0][1], picked[0][0])
        except (OSError, ValueError) as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            return None
        self.results = frame
        self.refresh()
        return frame

    def _results_file(self):
        if self.results is None:
            raise ValueError(_("nothing to save yet: run the probes or load results first"))
        return "my_probe_results.json", probes.results_json(self.results), "application/json"

    def _on_progress(self, done, total, label):
        self.progress.max = total
        self.progress.value = done
        self.progress_label.value = f'<span class="ak-note">{done}/{total}: {html.escape(_step_label(label))}</span>'

    def run(self, device=None, quick=None):
        """Measure this machine now (blocking; the progress bar follows each step)."""
        if not self.allowed:
            self.error = _off_text()
            self.message.value = error_html(self.error)
            return None
        device = self.controls["device"].value if device is None else device
        quick = self.controls["quick"].value if quick is None else quick
        if self.served:
            quick = True
        self.run_button.disabled = True
        self.progress.value = 0
        self.progress_label.value = _note_html(_("starting: inventory and warm-up…"))
        try:
            frame = probes.run_all(device=None if device in ("", "auto") else device, quick=bool(quick),
                                   callback=self._on_progress)
        except (probes.ProbeUnavailable, ValueError) as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            self.progress_label.value = _note_html(_("not run"))
            return None
        finally:
            self.run_button.disabled = not (self.torch_ok and self.allowed)
        elapsed = frame.attrs.get("header", {}).get("elapsed_s")
        self.progress_label.value = _note_html(_("done in {seconds} s").format(seconds=f"{elapsed:.1f}")) \
            if elapsed else ""
        self.results = frame
        self.refresh()
        return frame

    def save(self, path):
        """Save the shown results to JSON (an existing file is never replaced). For the notebook's
        own code; the page's "Save results" hands the person a download instead."""
        if self.results is None:
            self.save_status.value = error_html(_("nothing to save yet: run the probes first"))
            return None
        try:
            written = probes.save_results(self.results, path)
        except (OSError, ValueError) as exc:
            self.save_status.value = error_html(exc)
            return None
        self.save_status.value = _note_html(_("saved {path}").format(path=html.escape(str(written))))
        return written

    # --- computing ------------------------------------------------------------------
    def _summary(self, r, header, table):
        machine = header.get("machine", {}) or {}
        source = r.attrs.get("source", "")
        where = _("file {name}").format(name=Path(source).name) if source and source.endswith(".json") else source
        label = f" -- {header['label']}" if header.get("label") else ""
        mode = _("quick") if header.get("quick", True) else _("full")
        lines = [_("Showing {where}{label}: {device_name} ({device}), torch {torch}, {mode} mode, measured {date}.")
                 .format(where=where, label=label, device_name=header.get("device_name", "?"),
                         device=header.get("device", "?"), torch=header.get("torch_version", "?"), mode=mode,
                         date=str(header.get("date", ""))[:10])]
        if header.get("note"):
            note = _probe_note(header["note"])
            lines.append(_("{sentence}.").format(sentence=note[0].upper() + note[1:]))
        if r["datasheet"].isna().all():
            lines.append(_("No datasheet figures to compare with: {why}.").format(
                why=_probe_note(machine.get("catalogue_match", "not in the catalogue"))))
        calib = probes.calibration(r)
        mm = calib[calib["quantity"].str.startswith("matmul")]
        if not mm.empty:
            parts = [f"{row.precision} {probes.format_value(row.measured, row.unit)} ({_fmt_ratio(row.ratio)})"
                     for row in mm.itertuples()]
            lines.append(_("Best matmul (maximum achievable, best shape): {figures}.").format(figures="; ".join(parts)))
        bw = calib[calib["quantity"].str.startswith("memory")]
        if not bw.empty:
            parts = [f"{_(row.quantity.split('(')[1].rstrip(')'))} {probes.format_value(row.measured, row.unit)} "
                     f"({_fmt_ratio(row.ratio)})" for row in bw.itertuples()]
            lines.append(_("Memory bandwidth: {figures}.").format(figures="; ".join(parts)))
        low = table[(table["dtype"] != "fp32") & table["rel_l2_error"].notna()]
        if not low.empty:
            parts = [_("{model} {dtype}: relative error {error}, {speedup}x fp32 speed").format(
                         model=_(row.model), dtype=row.dtype, error=f"{row.rel_l2_error:.1e}",
                         speedup=f"{row.speedup_vs_fp32:.2f}") for row in low.itertuples()]
            lines.append(_("Lower precision against fp32 -- {figures}.").format(figures="; ".join(parts)))
        util = r[r["probe"] == "gpu_utilization"]
        if not util.empty:
            u = util.iloc[0]
            if np.isfinite(u["measured"]):
                verdict = _("fed (compute-bound)") if u["measured"] > 70 else \
                    _("often idle: starved or too small a workload")
                lines.append(_("GPU busy {percent} % of the time during the matmul probe (NVML): {verdict}.").format(
                    percent=f"{u['measured']:.0f}", verdict=verdict))
            else:
                lines.append(_("GPU utilisation: {note}.").format(note=_probe_note(u["note"])))
        return lines

    def compute(self):
        r = self.results
        if r is None:
            message = _("No results to show: press Run probes") if self.torch_ok else _("No results to show")
            sentence = _("No results to show: press Run probes.") if self.torch_ok else _("No results to show.")
            return {
                "summary": [sentence],
                "figures": {name: plots.empty_figure(message) for name in ("vs_datasheet", "shapes", "precision")},
                "tables": {"precision": "", "calibration": "", "inventory": "", "results": ""},
            }
        header = r.attrs.get("header", {}) or {}
        table = probes.precision_table(r)
        calib = probes.calibration(r)
        inv = pd.DataFrame(r.attrs.get("inventory", []) or [])
        figures = {
            "vs_datasheet": plots.probe_vs_datasheet_bar(r),
            "shapes": plots.matmul_shapes_chart(r),
            "precision": plots.precision_chart(table),
        }
        samples = r.attrs.get("utilization_samples", [])
        if samples:
            figures["utilization"] = plots.utilization_chart(samples)
        shown = table.assign(
            time=[probes.format_value(v, "s") for v in table["seconds_per_batch"]],
        )[["model", "dtype", "time", "speedup_vs_fp32", "max_abs_error", "rel_l2_error", "cosine", "note"]]
        shown["model"] = shown["model"].map(_)
        shown["note"] = shown["note"].map(_probe_note)
        shown.columns = [_("model"), _("format"), _("time per batch"), _("speed-up vs fp32 [x]"), _("max abs error"),
                         _("relative L2 error"), _("cosine"), _("method")]
        sci = "{:.2e}".format
        precision_html = table_html(shown, {_("speed-up vs fp32 [x]"): "{:.2f}".format, _("max abs error"): sci,
                                            _("relative L2 error"): sci, _("cosine"): "{:.6f}".format})
        calib_shown = pd.DataFrame({
            _("quantity"): [_calibration_quantity(q) for q in calib["quantity"]],
            _("measured"): [probes.format_value(v, u) for v, u in zip(calib["measured"], calib["unit"])],
            _("datasheet"): [probes.format_value(v, u) for v, u in zip(calib["datasheet"], calib["unit"])],
            _("measured / datasheet"): [f"{x:.0%}" if np.isfinite(x) else "—" for x in calib["ratio"].astype(float)],
            _("source"): [Path(s).name if str(s).endswith(".json") else s for s in calib["source"]],
        })
        if not inv.empty:
            keep = [c for c in ("device", "kind", "name", "catalogue_match", "memory_bytes", "compute_capability",
                                "multiprocessors", "cpu_cores", "torch_threads", "cuda_version", "hip_version",
                                "driver_version", "power_limit_w", "sm_clock_max_hz", "temperature_c",
                                "pcie_gen", "pcie_width", "nvml_note") if c in inv.columns]
            inv = inv[keep].copy()
            for column in ("catalogue_match", "nvml_note"):
                if column in inv:
                    inv[column] = [_probe_note(v) if isinstance(v, str) else v for v in inv[column]]
            if "memory_bytes" in inv:
                inv["memory_bytes"] = [f"{v / units.GIGA:,.1f} GB" if v == v and v is not None else "—"
                                       for v in inv["memory_bytes"]]
            inv = inv.set_index("device").T.reset_index().rename(columns={"index": _("field")})
        return {
            "summary": self._summary(r, header, table),
            "figures": figures,
            "tables": {
                "precision": precision_html,
                "calibration": table_html(calib_shown),
                "inventory": table_html(inv.astype(str)) if not inv.empty else "",
                "results": table_html(_results_table(r), max_rows=80),
            },
            "precision_table": table,
            "calibration": calib,
        }

    # --- display --------------------------------------------------------------------
    def layout(self):
        f, t = self.figure_outputs, self.table_outputs
        controls = W.HBox([self.controls["device"], self.controls["quick"], self.run_button, self.progress,
                           self.progress_label], layout=W.Layout(flex_flow="row wrap", gap="4px 16px",
                                                                 align_items="center"))
        parts = [W.HTML(CSS), self.install, controls, self.results_picker.widget, self.message, self.summary, f["vs_datasheet"], f["shapes"]]
        if "utilization" in f:
            parts.append(f["utilization"])
        parts += [_heading(_("Use my measurements: measured / datasheet")), t["calibration"],
                  _heading(_("Precision: speed and error against fp32")), f["precision"], t["precision"],
                  _heading(_("The machine")), t["inventory"],
                  _heading(_("Every result")), t["results"],
                  self.download.widget]
        return W.VBox(parts)

    def key_figures(self):
        """Plain-text figures for check cells (counts and names, not timings)."""
        if self.results is None:
            return f"ERROR: {self.error}" if self.error else "no results"
        r = self.results
        source = r.attrs.get("source", "")
        mm = r[(r["probe"] == "matmul") & r["measured"].notna()]
        prec = r[(r["probe"] == "precision_time") & r["measured"].notna()]
        lines = [
            f"results source: {Path(source).name if source.endswith('.json') else source}",
            f"device: {r['device'].iloc[0] if len(r) else ''}",
            f"result rows: {len(r)}",
            f"probes: {', '.join(dict.fromkeys(r['probe']))}",
            f"dtypes with a matmul figure: {', '.join(d for d in probes.MATMUL_DTYPES if d in set(mm['dtype']))}",
            f"precision modes measured: {', '.join(d for d in probes.PRECISION_MODES if d in set(prec['dtype']))}",
            f"rows with a datasheet figure: {int(r['datasheet'].notna().sum())}",
        ]
        return "\n".join(lines)
