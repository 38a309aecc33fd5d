"""``accelkit monitor``: read what the GPUs do, say what it means, right-size.

Sources (one of): ``--log FILE [FILE ...]`` (nvidia-smi CSV logs), ``--prometheus URL
--since 1h [--match 'Hostname="node1"']`` (DCGM-exporter through Prometheus),
``--seconds N`` or ``-- command ...`` (live NVML), ``--example`` (the shipped
synthetic 8 × A100 log). ``--topology FILE|live`` adds the topology warnings.
Bad input exits 2 with one line naming the file, line, column and what was expected.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from .. import units
from ..i18n import _
from .samples import MonitorError

__all__ = ["add_parser", "run", "render_text"]

PROG = "accelkit monitor"


def add_parser(sub):
    """Register the ``monitor`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("monitor", help=_("what your GPUs really do: utilisation, verdict, throttling, right-size"),
                       description=_("Read live NVML samples, nvidia-smi CSV logs or DCGM-exporter metrics in "
                                   "Prometheus; print per-GPU figures, a verdict, throttling, topology warnings "
                                   "and what the observed work needs of other devices."),
                       epilog=_("examples: accelkit monitor --seconds 60 | accelkit monitor -- python train.py | "
                              "accelkit monitor --log gpu.csv | accelkit monitor --prometheus http://prom:9090 "
                              "--since 1h --match 'Hostname=\"node1\"'"))
    src = p.add_argument_group(_("source (one of)"))
    src.add_argument("--log", nargs="+", metavar="FILE",
                     help=_("nvidia-smi --query-gpu=... --format=csv -l 1 log(s); one file per host"))
    src.add_argument("--prometheus", metavar="URL", help=_("Prometheus base URL holding DCGM-exporter metrics"))
    src.add_argument("--seconds", type=float, help=_("sample this machine's GPUs through NVML for N seconds"))
    src.add_argument("--example", action="store_true", help=_("the shipped synthetic 8 x A100 log at ~30 %%"))
    p.add_argument("--since", default="1h", help=_("with --prometheus: the window, e.g. 1h, 30m (default 1h)"))
    p.add_argument("--match", default=None, help=_("with --prometheus: label matchers, e.g. 'Hostname=\"node1\"'"))
    p.add_argument("--interval", type=float, default=1.0, help=_("live sampling interval [s] (default 1)"))
    p.add_argument("--topology", metavar="FILE|live", help=_("nvidia-smi topo -m output, or 'live' to run it"))
    p.add_argument("--device", help=_("catalogue name of the monitored GPU (default: from the samples)"))
    p.add_argument("--precision", default="bf16", help=_("workload precision for right-sizing (default bf16)"))
    p.add_argument("--memory-layout", choices=("sharded", "replicated"), default="sharded",
                   help=_("how the job holds its memory: split across the GPUs (sharded, default) or a copy "
                        "on each (replicated, data parallel)"))
    p.add_argument("--candidates", type=int, default=8, help=_("right-size rows to show (default 8)"))
    p.add_argument("--json", metavar="FILE", help=_("write the summary to this JSON file"))
    p.add_argument("--force", action="store_true", help=_("replace an existing --json file"))
    p.add_argument("command", nargs=argparse.REMAINDER, help=_("-- command to run and sample while it runs"))
    p.set_defaults(func=run)
    return p


def _fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def _load(args):
    """(samples, command return code or None)."""
    from . import example_log, live, nvsmi, prometheus

    command = list(args.command or [])
    if command and command[0] == "--":
        command = command[1:]
    chosen = [name for name, on in (("--log", args.log), ("--prometheus", args.prometheus),
                                    ("--seconds/-- command", args.seconds is not None or command),
                                    ("--example", args.example)) if on]
    if len(chosen) != 1:
        message = _("give exactly one source: --log FILE, --prometheus URL, --seconds N, -- command ..., or --example")
        if chosen:
            message += " " + _("(got {options})").format(options=", ".join(chosen))
        raise MonitorError(message)
    if args.log:
        return nvsmi.read_logs(args.log), None
    if args.prometheus:
        return prometheus.query_prometheus(args.prometheus, since=args.since, match=args.match), None
    if args.example:
        return example_log(), None
    return live.sample(seconds=args.seconds, command=command or None, interval_s=args.interval)


def _num(x, fmt):
    return fmt.format(x) if x == x and x is not None else "n/a"


def render_text(summary, table=None, topology_warnings=None, missing=()):
    """The report printed by the command (plain text)."""
    import pandas as pd

    device = summary.device or _("(not in the catalogue)")
    if summary.detected_name:
        device = _("{device} (reported as {name})").format(device=device, name=summary.detected_name)
    lines = [_("source: {source}").format(source=summary.source),
             _("device: {device}, {gpus} GPU(s) on {hosts} host(s), {seconds} s").format(
                 device=device, gpus=summary.n_gpus, hosts=summary.overall.get("n_hosts", 1),
                 seconds=_num(summary.overall.get("duration_s"), "{:.0f}"))]
    if summary.note:
        lines.append(_("note: {note}").format(note=summary.note))
    for q in missing:
        lines.append(_("note: no samples for {query}").format(query=q))
    d = summary.devices
    view = pd.DataFrame({
        _("gpu"): [f"{h}/{g}" if h else str(g) for h, g in zip(d["host"], d["gpu"])],
        _("util mean"): d["util_mean"].map(lambda v: _num(v, "{:.0%}")),
        "p50": d["util_p50"].map(lambda v: _num(v, "{:.0%}")),
        "p95": d["util_p95"].map(lambda v: _num(v, "{:.0%}")),
        _("idle"): d["idle_fraction"].map(lambda v: _num(v, "{:.0%}")),
        "SM": d["sm_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        _("tensor"): d["tensor_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        "DRAM": d["dram_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        _("mem used GiB"): (units.bytes_to_gib(d["memory_used_max_bytes"])).map(lambda v: _num(v, "{:.1f}")),
        _("power/limit"): d["power_fraction"].map(lambda v: _num(v, "{:.0%}")),
        _("clock/max"): d["clock_fraction"].map(lambda v: _num(v, "{:.0%}")),
        _("max °C"): d["temperature_max_c"].map(lambda v: _num(v, "{:.0f}")),
        _("verdict"): d["verdict"],
    })
    with pd.option_context("display.unicode.east_asian_width", True):  # Chinese headers keep the columns aligned
        lines += ["", view.to_string(index=False), ""]
    lines.append(_("effective_devices = {effective} (sum of the GPUs' mean utilisation); mean {mean}, p50 {p50}, "
                   "p95 {p95}, idle {idle} of samples").format(
        effective=f"{summary.effective_devices:.2f}", mean=f"{summary.mean_utilization:.0%}",
        p50=f"{summary.util_p50:.0%}", p95=f"{summary.util_p95:.0%}", idle=f"{summary.idle_fraction:.0%}"))
    lines.append(_("verdict: {verdict} -- {reason}").format(verdict=summary.verdict, reason=summary.reason))
    if summary.throttling:
        lines.append(_("throttling:"))
        lines += [f"  - {x['text']}" for x in summary.throttling]
    else:
        lines.append(_("throttling: none seen (clocks at their maximum under load, no thermal or power cap)"))
    if topology_warnings is not None:
        lines.append(_("topology:") if topology_warnings else _("topology: no warnings"))
        lines += [f"  - [{w['severity']}] {w['text']}" for w in topology_warnings]
    if table is not None:
        from .rightsize import sentence

        a = table.attrs
        unit = "TFLOP/s" if a["basis"] == "compute" else "GB/s"
        scale = units.TERA if a["basis"] == "compute" else units.GIGA
        rows = pd.DataFrame({
            _("device"): table["name"] + table["is_monitored"].map({True: " " + _("(monitored)"), False: ""}),
            _("rate {unit}").format(unit=unit): (table["rate"] / scale).map(lambda v: f"{v:,.0f}"),
            _("for the work"): table["devices_for_work"].map(lambda v: f"{v:.2f}"),
            _("for the memory"): table["devices_for_memory"].map(lambda v: _num(v, "{:.2f}")),
            _("devices"): table["devices"].map(lambda v: f"{int(v)}"),
            _("limited by"): table["limited_by"],
            "TDP W": table["tdp_w_total"].map(lambda v: _num(v, "{:,.0f}")),
        })
        what = (_("{precision} dense matmul").format(precision=a["precision"]) if a["basis"] == "compute"
                else _("memory bandwidth"))
        lines += ["", _("right-size ({basis}; achievable figures = datasheet × published efficiency; memory = sum of "
                        "the GPUs' peak use, {memory} GB):").format(
                          basis=what, memory=_num(units.bytes_to_gb(a["memory_needed_bytes"]), "{:.0f}")),
                  _table_text(rows), "", sentence(table)]
    return "\n".join(lines)


def _table_text(frame):
    import pandas as pd

    with pd.option_context("display.unicode.east_asian_width", True):
        return frame.to_string(index=False)


def run(args):
    """Entry point of ``accelkit monitor`` (returns the exit status)."""
    target = Path(args.json) if args.json else None
    if target is not None:
        if target.suffix.lower() != ".json":
            return _fail(_("--json must name a .json file; got {path}").format(path=args.json))
        if target.exists() and not args.force:
            return _fail(_("{path} already exists; add --force to replace it").format(path=target))
    try:
        samples, returncode = _load(args)
        from .summary import summarize

        summary = summarize(samples, device=args.device)
        topo_warnings = None
        if args.topology:
            from .topology import read_topology

            topo_warnings = read_topology(args.topology).warnings()
        table, right_note = None, ""
        if summary.device:
            from .rightsize import right_size

            table = right_size(summary, precision=args.precision, n=max(1, args.candidates),
                               memory_layout=args.memory_layout)
        else:
            right_note = summary.note
    except MonitorError as exc:
        return _fail(str(exc))
    print(render_text(summary, table, topo_warnings, samples.attrs.get("missing", ())))
    if right_note:
        print(_("right-size: skipped ({reason})").format(reason=right_note))
    if target is not None:
        from .rightsize import measured_demand, sentence

        data = {"format": "accelkit-monitor-summary", "version": 1, **summary.to_dict()}
        if table is not None:
            data["right_size"] = json.loads(table.to_json(orient="records"))
            data["right_size_sentence"] = sentence(table)
            data["demand"] = measured_demand(summary, precision=args.precision, memory_layout=args.memory_layout)
        if topo_warnings is not None:
            data["topology_warnings"] = topo_warnings
        try:
            if target.exists() and not args.force:  # appeared while sampling
                return _fail(_("{path} already exists; add --force to replace it").format(path=target))
            target.write_text(json.dumps(jsonable(data), indent=2, allow_nan=False, default=_json_default) + "\n",
                              encoding="utf-8")
        except (OSError, ValueError) as exc:
            return _fail(_("cannot write {path}: {error}").format(path=target, error=exc))
        print(_("summary written: {path}").format(path=target))
    if returncode not in (None, 0):
        print(f"{PROG}: " + _("the monitored command exited with status {status}").format(status=returncode),
              file=sys.stderr)
        return 1
    return 0


def jsonable(value):
    """``value`` with every missing number (NaN, also infinities) as ``None``: JSON ``null``.

    Dicts, lists and tuples are walked; numpy scalars become Python numbers. An exporter
    without some fields (profiling metrics off, no power reading) leaves NaN in the
    summary, and JSON has no NaN.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    try:
        import numpy as np

        if isinstance(value, np.generic):
            value = value.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_default(value):
    try:
        import numpy as np

        if isinstance(value, np.generic):
            value = value.item()
    except ImportError:
        pass
    if isinstance(value, float) and value != value:
        return None
    return str(value)
