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
from . import controls as C
from .. import userfiles as U
from ._base import CSS, Panel, error_html, table_html
from .files import DownloadBox, FilePicker

__all__ = ["ProbePanel"]

_INSTALL_HTML = (
    '<div class="ak-error"><b>PyTorch is not installed here</b>, so this machine cannot be measured: '
    + html.escape(probes.INSTALL_HINT)
    + ". Saved results can still be shown below.</div>"
)


_OFF_TEXT = ("probing is off in this app: here 'this machine' is the server, not yours. Run `accelkit probe --json "
             "my_probe_results.json` on your own machine and upload the file below")
_OFF_HTML = ('<div class="ak-note"><b>This machine is the server here.</b> The probes are off in this app (its '
             "operator can allow them with <code>accelkit app --allow-probes</code>). To measure your own machine, "
             "run <code>accelkit probe --json my_probe_results.json</code> there and upload the file below.</div>")


def _fmt_ratio(r):
    return f"{r:.0%} of datasheet" if r == r and np.isfinite(r) else "no datasheet figure"


class ProbePanel(Panel):
    """Run the local probes, or show saved results, next to the catalogue's datasheet figures."""

    title = "Local probes"

    def __init__(self, run_now=False, quick=True, device="", results_path="", scenario=None):
        super().__init__(scenario)
        self.torch_ok = probes.torch_available()
        self.inventory = probes.inventory() if self.torch_ok else None
        options = ["auto"] + (self.inventory["device"].tolist() if self.inventory is not None else [])
        start_message = ""
        if device and device not in options:
            start_message = (f"device={device!r} is not on this machine (available: {', '.join(options)}); "
                             "using auto")
            device = ""
        self.controls = {
            "device": C.choice("device", options, device or "auto", width="200px",
                               tooltip="the torch device to measure; auto = the first GPU, else the CPU"),
            "quick": C.toggle("quick (small sizes, seconds)", bool(quick),
                              tooltip="quick: under 30 s on a 2-core CPU; off: larger shapes and buffers"),
        }
        # served to visitors, "this machine" is the server: probes only if its operator allows them
        self.allowed = U.probes_allowed()
        self.served = U.served()
        self.controls["device"].disabled = not (self.torch_ok and self.allowed)
        if self.served:  # bounded in time: the quick mode only (under 30 s on a 2-core CPU)
            self.controls["quick"].value = True
            self.controls["quick"].disabled = True
        label = "Run probes" + (" (measures the server)" if self.served else "")
        self.run_button = W.Button(description=label, icon="play", button_style="primary",
                                   disabled=not (self.torch_ok and self.allowed),
                                   layout=W.Layout(width="290px" if self.served else "150px"))
        self.run_button.on_click(lambda _b: self.run())
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="260px"))
        self.progress_label = W.HTML('<span class="ak-note">not running</span>')
        self.install = W.HTML(_OFF_HTML if not self.allowed else "" if self.torch_ok else _INSTALL_HTML)
        self.results_picker = FilePicker("results", builtin=[("shipped example", "example")], accept=".json",
                                         suffixes=(".json",), given=results_path or None, width="330px")
        self.results_picker.choice.observe(lambda _c: self.load_picked(), names="value")
        self.results_picker.upload.observe(lambda _c: self.load_picked(), names="value")
        self.download = DownloadBox("Save results", self._results_file, icon="save", width="140px")
        self.save_button, self.save_status = self.download.button, self.download.status
        self.results = None
        if run_now and self.allowed:
            self.run()
        else:
            self.load(results_path or None)
            if run_now:
                start_message = start_message or _OFF_TEXT
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
            raise ValueError("nothing to save yet: run the probes or load results first")
        return "my_probe_results.json", probes.results_json(self.results), "application/json"

    def _on_progress(self, done, total, label):
        self.progress.max = total
        self.progress.value = done
        self.progress_label.value = f'<span class="ak-note">{done}/{total}: {html.escape(label)}</span>'

    def run(self, device=None, quick=None):
        """Measure this machine now (blocking; the progress bar follows each step)."""
        if not self.allowed:
            self.error = _OFF_TEXT
            self.message.value = error_html(_OFF_TEXT)
            return None
        device = self.controls["device"].value if device is None else device
        quick = self.controls["quick"].value if quick is None else quick
        if self.served:
            quick = True
        self.run_button.disabled = True
        self.progress.value = 0
        self.progress_label.value = '<span class="ak-note">starting: inventory and warm-up…</span>'
        try:
            frame = probes.run_all(device=None if device in ("", "auto") else device, quick=bool(quick),
                                   callback=self._on_progress)
        except (probes.ProbeUnavailable, ValueError) as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            self.progress_label.value = '<span class="ak-note">not run</span>'
            return None
        finally:
            self.run_button.disabled = not (self.torch_ok and self.allowed)
        elapsed = frame.attrs.get("header", {}).get("elapsed_s")
        self.progress_label.value = f'<span class="ak-note">done in {elapsed:.1f} s</span>' if elapsed else ""
        self.results = frame
        self.refresh()
        return frame

    def save(self, path):
        """Save the shown results to JSON (an existing file is never replaced). For the notebook's
        own code; the page's "Save results" hands the person a download instead."""
        if self.results is None:
            self.save_status.value = error_html("nothing to save yet: run the probes first")
            return None
        try:
            written = probes.save_results(self.results, path)
        except (OSError, ValueError) as exc:
            self.save_status.value = error_html(exc)
            return None
        self.save_status.value = f'<span class="ak-note">saved {html.escape(str(written))}</span>'
        return written

    # --- computing ------------------------------------------------------------------
    def _summary(self, r, header, table):
        machine = header.get("machine", {}) or {}
        source = r.attrs.get("source", "")
        where = f"file {Path(source).name}" if source and source.endswith(".json") else source
        mode = "quick" if header.get("quick", True) else "full"
        label = f" -- {header['label']}" if header.get("label") else ""
        lines = [f"Showing {where}{label}: {header.get('device_name', '?')} ({header.get('device', '?')}), "
                 f"torch {header.get('torch_version', '?')}, {mode} mode, measured {str(header.get('date', ''))[:10]}."]
        if header.get("note"):
            lines.append(header["note"][0].upper() + header["note"][1:] + ".")
        if r["datasheet"].isna().all():
            lines.append(f"No datasheet figures to compare with: {machine.get('catalogue_match', 'not in the catalogue')}.")
        calib = probes.calibration(r)
        mm = calib[calib["quantity"].str.startswith("matmul")]
        if not mm.empty:
            parts = [f"{row.precision} {probes.format_value(row.measured, row.unit)} ({_fmt_ratio(row.ratio)})"
                     for row in mm.itertuples()]
            lines.append("Best matmul (maximum achievable, best shape): " + "; ".join(parts) + ".")
        bw = calib[calib["quantity"].str.startswith("memory")]
        if not bw.empty:
            parts = [f"{row.quantity.split('(')[1].rstrip(')')} {probes.format_value(row.measured, row.unit)} "
                     f"({_fmt_ratio(row.ratio)})" for row in bw.itertuples()]
            lines.append("Memory bandwidth: " + "; ".join(parts) + ".")
        low = table[(table["dtype"] != "fp32") & table["rel_l2_error"].notna()]
        if not low.empty:
            parts = [f"{row.model} {row.dtype}: relative error {row.rel_l2_error:.1e}, {row.speedup_vs_fp32:.2f}x fp32 speed"
                     for row in low.itertuples()]
            lines.append("Lower precision against fp32 -- " + "; ".join(parts) + ".")
        util = r[r["probe"] == "gpu_utilization"]
        if not util.empty:
            u = util.iloc[0]
            if np.isfinite(u["measured"]):
                verdict = "fed (compute-bound)" if u["measured"] > 70 else "often idle: starved or too small a workload"
                lines.append(f"GPU busy {u['measured']:.0f} % of the time during the matmul probe (NVML): {verdict}.")
            else:
                lines.append(f"GPU utilisation: {u['note']}.")
        return lines

    def compute(self):
        r = self.results
        if r is None:
            message = "No results to show: press Run probes" if self.torch_ok else "No results to show"
            return {
                "summary": [message + "."],
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
        shown.columns = ["model", "format", "time per batch", "speed-up vs fp32 [x]", "max abs error",
                         "relative L2 error", "cosine", "method"]
        sci = "{:.2e}".format
        precision_html = table_html(shown, {"speed-up vs fp32 [x]": "{:.2f}".format, "max abs error": sci,
                                            "relative L2 error": sci, "cosine": "{:.6f}".format})
        calib_shown = pd.DataFrame({
            "quantity": calib["quantity"],
            "measured": [probes.format_value(v, u) for v, u in zip(calib["measured"], calib["unit"])],
            "datasheet": [probes.format_value(v, u) for v, u in zip(calib["datasheet"], calib["unit"])],
            "measured / datasheet": [f"{x:.0%}" if np.isfinite(x) else "—" for x in calib["ratio"].astype(float)],
            "source": [Path(s).name if str(s).endswith(".json") else s for s in calib["source"]],
        })
        if not inv.empty:
            keep = [c for c in ("device", "kind", "name", "catalogue_match", "memory_bytes", "compute_capability",
                                "multiprocessors", "cpu_cores", "torch_threads", "cuda_version", "hip_version",
                                "driver_version", "power_limit_w", "sm_clock_max_hz", "temperature_c",
                                "pcie_gen", "pcie_width", "nvml_note") if c in inv.columns]
            inv = inv[keep].copy()
            if "memory_bytes" in inv:
                inv["memory_bytes"] = [f"{v / units.GIGA:,.1f} GB" if v == v and v is not None else "—"
                                       for v in inv["memory_bytes"]]
            inv = inv.set_index("device").T.reset_index().rename(columns={"index": "field"})
        return {
            "summary": self._summary(r, header, table),
            "figures": figures,
            "tables": {
                "precision": precision_html,
                "calibration": table_html(calib_shown),
                "inventory": table_html(inv.astype(str)) if not inv.empty else "",
                "results": table_html(probes.display_table(r), max_rows=80),
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
        parts += [W.HTML("<h4>Use my measurements: measured / datasheet</h4>"), t["calibration"],
                  W.HTML("<h4>Precision: speed and error against fp32</h4>"), f["precision"], t["precision"],
                  W.HTML("<h4>The machine</h4>"), t["inventory"],
                  W.HTML("<h4>Every result</h4>"), t["results"],
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
