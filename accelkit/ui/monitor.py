"""Chapter 11: what your hardware really does -- a log, a Prometheus, or this machine now.

The panel shows the shipped synthetic 8 × A100 log by default (it runs nothing),
so the notebook executes in seconds. "Load" reads the chosen source through
:mod:`accelkit.monitor`; changing the device, precision or number of candidates
only recomputes the summary and the right-size table.
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as W
import pandas as pd

from .. import monitor as M
from .. import plots, units
from ..i18n import N_, _
from ..monitor.rightsize import right_size, sentence
from ..monitor.summary import summarize
from . import controls as C
from .. import userfiles as U
from ._base import CSS, Panel, error_html, table_html
from .files import FilePicker

__all__ = ["MonitorPanel", "SOURCES"]

SOURCES = ("example log", "nvidia-smi log", "Prometheus", "sample this machine")
#: how the sources, verdicts and finding severities read on screen (English: as the values)
_LABELS = (N_("example log"), N_("nvidia-smi log"), N_("sample this machine"), N_("idle"), N_("under-used"),
           N_("input-bound"), N_("memory-bound"), N_("compute-bound"), N_("warning"), N_("note"), N_("work"), N_("memory"))
#: column headers of the tables (built with these English names, shown through _())
_HEADERS = (N_("GPU"), N_("util mean"), N_("p50"), N_("p95"), N_("idle"), N_("SM active"), N_("tensor active"),
            N_("DRAM active"), N_("memory used [GiB]"), N_("power / limit"), N_("clock / max"), N_("max °C"),
            N_("verdict"), N_("device"), N_("rate [{unit}]"), N_("rate"), N_("for the work"), N_("for the memory"),
            N_("devices"), N_("limited by"), N_("total TDP [W]"))


def _logs_from_texts(files):
    """One sample table from ``[(name, text), ...]`` nvidia-smi logs (one per host, named by file stem)."""
    from ..monitor.nvsmi import parse_log_text
    from ..monitor.samples import tidy

    frames = []
    for name, text in files:
        frame = parse_log_text(text, U.quote(name))
        if len(files) > 1:
            frame.loc[frame["host"] == "", "host"] = name.rsplit(".", 1)[0]
        frames.append(frame)
    out = tidy(pd.concat(frames, ignore_index=True))
    out.attrs["path"] = ", ".join(name for name, _text in files)
    return out


def _pct(v):
    return f"{v:.0%}" if v == v else "—"


class MonitorPanel(Panel):
    """Load monitor samples, then show the timeline, the distribution, the verdict and the right-size."""

    title = N_("What your hardware really does")

    def __init__(self, source="example log", log_path="", prometheus_url="", since="1h", match="", seconds=10.0,
                 topology_path="example", device="", precision="bf16", candidates=8, memory_layout="sharded",
                 scenario=None, prometheus_allowed=None):
        super().__init__(scenario)
        # None: any URL (a notebook on one's own machine); a tuple: only these (the shared app)
        self.prometheus_allowed = None if prometheus_allowed is None else tuple(prometheus_allowed)
        if self.prometheus_allowed and not prometheus_url:
            prometheus_url = self.prometheus_allowed[0]
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}; got {str(source)[:40]!r}")
        # served to visitors, "this machine" is the server: live sampling only if its operator allows it
        self.probes_allowed = U.probes_allowed()
        self.max_seconds = U.max_probe_seconds()
        sources = [(_(s), s) for s in SOURCES if s != "sample this machine" or self.probes_allowed]
        if self.probes_allowed and U.served():
            sources[-1] = (_("sample the server (measures the server, not your machine)"), "sample this machine")
        if source not in [value for _label, value in sources]:
            raise ValueError(_("source {source} is off in this app: it would measure the server; its operator can "
                               "allow it with `accelkit app --allow-probes`").format(source=repr(source)))
        logs = [p.strip() for p in log_path.split(",") if p.strip()] if isinstance(log_path, str) else list(log_path)
        self.log_picker = FilePicker(_("log file"), accept=".csv,.txt,.log", suffixes=(".csv", ".txt", ".log"),
                                     given=logs, multiple=True, width="300px")
        topo_builtin = [(_("example"), "example"), (_("none"), "")]
        if self.probes_allowed:
            live = _("live: {command} on the server") if U.served() else _("live: {command}")
            topo_builtin.append((live.format(command="nvidia-smi topo -m"), "live"))
        topo = str(topology_path).strip()
        if topo == "live" and not self.probes_allowed:
            raise ValueError(_("topology 'live' is off in this app: it would run nvidia-smi on the server"))
        given_topo = topo if topo not in ("example", "live", "") else None
        self.topology_picker = FilePicker(_("topology"), builtin=topo_builtin, accept=".txt", suffixes=(".txt",),
                                          given=given_topo, value=None if given_topo else topo, width="300px")
        self.source_controls = {
            "source": C.choice(_("source"), sources, source, width="260px",
                               tooltip=_("where the samples come from")),
            "log_path": self.log_picker.choice,
            "log_upload": self.log_picker.upload,
            "prometheus_url": W.Text(value=prometheus_url, description="Prometheus",
                                     placeholder="http://prometheus:9090", layout=W.Layout(width="320px")),
            "since": W.Text(value=since, description=_("window"), layout=W.Layout(width="160px")),
            "match": W.Text(value=match, description=_("match"), placeholder='Hostname="node1"',
                            layout=W.Layout(width="260px")),
            "seconds": C.number(_("sample for"), seconds, "s", width="200px"),
            "topology_path": self.topology_picker.choice,
            "topology_upload": self.topology_picker.upload,
        }
        self.source_controls["seconds"].disabled = not self.probes_allowed
        self.controls = {
            "device": W.Text(value=device, description=_("device"), placeholder=_("(detected)"),
                             layout=W.Layout(width="260px")),
            "precision": C.precision_picker(precision, options=["bf16", "fp16", "fp8", "tf32", "fp32", "int8"],
                                            description=_("precision")),
            "candidates": C.integer(_("candidates"), int(candidates), width="200px"),
            "memory_layout": W.Dropdown(options=[(_("split across the GPUs"), "sharded"),
                                                 (_("a copy on each GPU (data parallel)"), "replicated")],
                                        value=memory_layout, description=_("memory"),
                                        layout=W.Layout(width="330px")),
        }
        self.load_button = W.Button(description=_("Load"), icon="download", button_style="primary",
                                    layout=W.Layout(width="120px"))
        self.load_button.on_click(lambda _b: self.load())
        self.samples = None
        self.topology = None
        self.summary_result = None
        self.table = None
        self.watch()
        self.load()

    # --- actions ----------------------------------------------------------------------
    def load(self):
        """Read the chosen source (and topology), then recompute."""
        v = {k: c.value for k, c in self.source_controls.items()}
        try:
            if v["source"] == "example log":
                samples = M.example_log()
            elif v["source"] == "nvidia-smi log":
                picked = self.log_picker.read()
                samples = M.read_logs(picked) if isinstance(picked[0], Path) else _logs_from_texts(picked)
            elif v["source"] == "Prometheus":
                self._check_prometheus(v["prometheus_url"].strip())
                samples = M.query_prometheus(v["prometheus_url"].strip(), since=v["since"].strip() or "1h",
                                             match=v["match"].strip() or None)
            else:
                if not self.probes_allowed:
                    raise M.MonitorError(_("sampling is off in this app: it would measure the server; log your "
                                           "GPUs with {command} on your machine and upload the log").format(
                        command="nvidia-smi --query-gpu=... --format=csv -l 1"))
                seconds = float(v["seconds"])
                if not 0 < seconds <= self.max_seconds:
                    raise M.MonitorError(_("sample for: expected a number of seconds in (0, {limit}]; got {seconds}")
                                         .format(limit=f"{self.max_seconds:g}", seconds=f"{seconds:g}"))
                samples, _sampler = M.sample(seconds=seconds)
            topology = None
            picked = self.topology_picker.read()
            if picked == "example":
                topology = M.example_topology()
            elif picked == "live":
                if not self.probes_allowed:
                    raise M.MonitorError(_("topology 'live' is off in this app: it would run nvidia-smi on the "
                                           "server"))
                topology = M.read_topology("live")
            elif picked and isinstance(picked[0], Path):
                topology = M.read_topology(picked[0])
            elif picked:
                from ..monitor.topology import parse_topology_text

                topology = parse_topology_text(picked[0][1], U.quote(picked[0][0]))
        except (M.MonitorError, ValueError, OSError) as exc:
            self.error = str(exc)
            self.message.value = error_html(exc)
            return None
        self.samples, self.topology = samples, topology
        return self.refresh()

    def _check_prometheus(self, url):
        allowed = self.prometheus_allowed
        if allowed is None or url.rstrip("/") in allowed:
            return
        if not allowed:
            raise M.MonitorError(_("this app queries no Prometheus: its operator can allow one with "
                                   "`accelkit app --prometheus URL`"))
        raise M.MonitorError(_("this app queries only the Prometheus its operator allowed: {urls}").format(
            urls=", ".join(allowed)))

    # --- computing --------------------------------------------------------------------
    def compute(self):
        if self.samples is None:
            raise ValueError(self.error or _("nothing loaded yet: choose a source and press Load"))
        device = self.controls["device"].value.strip() or None
        s = summarize(self.samples, device=device)
        table = None
        if s.device:
            table = right_size(s, precision=self.controls["precision"].value,
                               n=max(1, int(self.controls["candidates"].value)),
                               memory_layout=self.controls["memory_layout"].value)
        device_words = s.device or _("not in the catalogue")
        if s.detected_name:
            device_words = _("{device} (reported as {name})").format(device=device_words, name=s.detected_name)
        lines = [_("Source: {source}. Device: {device}; {n} GPU(s), {seconds} s of samples.").format(
                     source=s.source, device=device_words, n=s.n_gpus,
                     seconds=f"{s.overall.get('duration_s', float('nan')):.0f}"),
                 _("Effective devices: {effective} (the sum of the GPUs' mean utilisation); mean {mean}, p50 {p50}, "
                   "p95 {p95}.").format(effective=f"{s.effective_devices:.2f}", mean=f"{s.mean_utilization:.0%}",
                                        p50=f"{s.util_p50:.0%}", p95=f"{s.util_p95:.0%}"),
                 _("Verdict: {verdict} -- {reason}.").format(verdict=_(s.verdict), reason=s.reason)]
        if table is not None:
            text = sentence(table)
            lines.append(_("{sentence}.").format(sentence=text[0].upper() + text[1:]))
        elif s.note:
            lines.append(_("Right-size skipped: {note}.").format(note=s.note))
        d = s.devices
        per_gpu = pd.DataFrame({
            "GPU": [f"{h}/{g}" if h else str(g) for h, g in zip(d["host"], d["gpu"])],
            "util mean": d["util_mean"].map(_pct), "p50": d["util_p50"].map(_pct), "p95": d["util_p95"].map(_pct),
            "idle": d["idle_fraction"].map(_pct), "SM active": d["sm_active_mean"].map(_pct),
            "tensor active": d["tensor_active_mean"].map(_pct), "DRAM active": d["dram_active_mean"].map(_pct),
            "memory used [GiB]": (d["memory_used_max_bytes"] / units.GIB).map(lambda x: f"{x:.1f}" if x == x else "—"),
            "power / limit": d["power_fraction"].map(_pct), "clock / max": d["clock_fraction"].map(_pct),
            "max °C": d["temperature_max_c"].map(lambda x: f"{x:.0f}" if x == x else "—"),
            "verdict": d["verdict"].map(_),
        })
        per_gpu = per_gpu.rename(columns={c: _(c) for c in per_gpu.columns})
        findings = [x["text"] for x in s.throttling] or [_("No throttling seen: clocks at their maximum under load, "
                                                           "no thermal or power cap.")]
        topo = self.topology.warnings() if self.topology is not None else []
        tables = {
            "per_gpu": table_html(per_gpu),
            "findings": "<h4>" + _("Throttling") + "</h4><ul>"
                        + "".join(f"<li>{html.escape(t)}</li>" for t in findings) + "</ul>"
                        + ("<h4>" + _("Topology") + "</h4><ul>"
                           + "".join("<li><b>" + _(w["severity"]) + f"</b>: {html.escape(w['text'])}</li>"
                                     for w in topo)
                           + "</ul>" if self.topology is not None else ""),
            "right_size": "",
        }
        if table is not None:
            scale, unit = (units.TERA, "TFLOP/s") if table.attrs["basis"] == "compute" else (units.GIGA, "GB/s")
            shown = pd.DataFrame({
                "device": table["name"] + table["is_monitored"].map({True: _(" (monitored)"), False: ""}),
                _("rate [{unit}]").format(unit=unit): (table["rate"] / scale).map(lambda x: f"{x:,.0f}"),
                "rate": table["rate_basis"].map(_),
                "for the work": table["devices_for_work"].map(lambda x: f"{x:.2f}"),
                "for the memory": table["devices_for_memory"].map(lambda x: f"{x:.2f}" if x == x else "—"),
                "devices": table["devices"].astype(int), "limited by": table["limited_by"].map(_),
                "total TDP [W]": table["tdp_w_total"].map(lambda x: f"{x:,.0f}" if x == x else "—"),
            })
            shown = shown.rename(columns={c: _(c) for c in shown.columns})
            tables["right_size"] = table_html(shown)
        t = s.thresholds
        return {
            "summary": lines, "monitor_summary": s, "right_size_table": table,
            "figures": {
                "timeline": plots.utilization_timeline(self.samples, t["compute_bound"]),
                "histogram": plots.utilization_histogram(self.samples, t["compute_bound"], t["idle"]),
                "right_size": plots.rightsize_chart(table),
            },
            "tables": tables,
        }

    # --- display ----------------------------------------------------------------------
    def render(self, result):
        self.summary_result, self.table = result["monitor_summary"], result["right_size_table"]

    def layout(self):
        f, t = self.figure_outputs, self.table_outputs
        sc = self.source_controls
        row = dict(layout=W.Layout(flex_flow="row wrap", gap="4px 16px", align_items="center"))
        parts = [W.HTML(CSS),
                 W.HBox([sc["source"], self.log_picker.widget, self.topology_picker.widget, self.load_button], **row),
                 W.HBox([sc["prometheus_url"], sc["since"], sc["match"], sc["seconds"]], **row),
                 W.HBox(list(self.controls.values()), **row),
                 self.message, self.summary, f["timeline"], f["histogram"],
                 W.HTML("<h4>" + _("Per GPU") + "</h4>"), t["per_gpu"], t["findings"],
                 W.HTML("<h4>" + _("Right-size: what the observed work needs") + "</h4>"), f["right_size"],
                 t["right_size"]]
        return W.VBox(parts)

    def key_figures(self):
        """Plain-text figures for check cells."""
        s = self.summary_result
        if s is None:
            return f"ERROR: {self.error}" if self.error else "nothing loaded"
        lines = [f"source: {s.source}", f"device: {s.device}", f"GPUs: {s.n_gpus}",
                 f"effective devices: {s.effective_devices:.2f}", f"mean utilisation: {s.mean_utilization:.0%}",
                 f"verdict: {s.verdict}", f"compute-bound threshold: {s.thresholds['compute_bound']:.0%}",
                 f"throttled GPUs: {', '.join(sorted({x['gpu'] for x in s.throttling})) or 'none'}"]
        if self.topology is not None:
            w = self.topology.warnings()
            lines.append(f"topology warnings: {sum(x['severity'] == 'warning' for x in w)}, "
                         f"notes: {sum(x['severity'] == 'note' for x in w)}")
        if self.table is not None:
            lines.append(f"memory layout: {self.table.attrs['memory_layout']}")
            for r in self.table.itertuples():
                lines.append(f"right-size {r.name}: {r.devices_for_work:.2f} for the work, "
                             f"{r.devices_for_memory:.2f} for the memory -> {int(r.devices)}")
            lines.append(sentence(self.table))
        return "\n".join(lines)
