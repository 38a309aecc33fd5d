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
from .samples import MonitorError

__all__ = ["add_parser", "run", "render_text"]

PROG = "accelkit monitor"


def add_parser(sub):
    """Register the ``monitor`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("monitor", help="what your GPUs really do: utilisation, verdict, throttling, right-size",
                       description="Read live NVML samples, nvidia-smi CSV logs or DCGM-exporter metrics in "
                                   "Prometheus; print per-GPU figures, a verdict, throttling, topology warnings "
                                   "and what the observed work needs of other devices.",
                       epilog="examples: accelkit monitor --seconds 60 | accelkit monitor -- python train.py | "
                              "accelkit monitor --log gpu.csv | accelkit monitor --prometheus http://prom:9090 "
                              "--since 1h --match 'Hostname=\"node1\"'")
    src = p.add_argument_group("source (one of)")
    src.add_argument("--log", nargs="+", metavar="FILE",
                     help="nvidia-smi --query-gpu=... --format=csv -l 1 log(s); one file per host")
    src.add_argument("--prometheus", metavar="URL", help="Prometheus base URL holding DCGM-exporter metrics")
    src.add_argument("--seconds", type=float, help="sample this machine's GPUs through NVML for N seconds")
    src.add_argument("--example", action="store_true", help="the shipped synthetic 8 x A100 log at ~30 %%")
    p.add_argument("--since", default="1h", help="with --prometheus: the window, e.g. 1h, 30m (default 1h)")
    p.add_argument("--match", default=None, help="with --prometheus: label matchers, e.g. 'Hostname=\"node1\"'")
    p.add_argument("--interval", type=float, default=1.0, help="live sampling interval [s] (default 1)")
    p.add_argument("--topology", metavar="FILE|live", help="nvidia-smi topo -m output, or 'live' to run it")
    p.add_argument("--device", help="catalogue name of the monitored GPU (default: from the samples)")
    p.add_argument("--precision", default="bf16", help="workload precision for right-sizing (default bf16)")
    p.add_argument("--memory-layout", choices=("sharded", "replicated"), default="sharded",
                   help="how the job holds its memory: split across the GPUs (sharded, default) or a copy "
                        "on each (replicated, data parallel)")
    p.add_argument("--candidates", type=int, default=8, help="right-size rows to show (default 8)")
    p.add_argument("--json", metavar="FILE", help="write the summary to this JSON file")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- command to run and sample while it runs")
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
        raise MonitorError("give exactly one source: --log FILE, --prometheus URL, --seconds N, -- command ..., "
                           "or --example" + (f" (got {', '.join(chosen)})" if chosen else ""))
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

    lines = [f"source: {summary.source}",
             f"device: {summary.device or '(not in the catalogue)'}"
             + (f" (reported as {summary.detected_name})" if summary.detected_name else "")
             + f", {summary.n_gpus} GPU(s) on {summary.overall.get('n_hosts', 1)} host(s), "
               f"{_num(summary.overall.get('duration_s'), '{:.0f}')} s"]
    if summary.note:
        lines.append(f"note: {summary.note}")
    for q in missing:
        lines.append(f"note: no samples for {q}")
    d = summary.devices
    view = pd.DataFrame({
        "gpu": [f"{h}/{g}" if h else str(g) for h, g in zip(d["host"], d["gpu"])],
        "util mean": d["util_mean"].map(lambda v: _num(v, "{:.0%}")),
        "p50": d["util_p50"].map(lambda v: _num(v, "{:.0%}")),
        "p95": d["util_p95"].map(lambda v: _num(v, "{:.0%}")),
        "idle": d["idle_fraction"].map(lambda v: _num(v, "{:.0%}")),
        "SM": d["sm_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        "tensor": d["tensor_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        "DRAM": d["dram_active_mean"].map(lambda v: _num(v, "{:.0%}")),
        "mem used GiB": (units.bytes_to_gib(d["memory_used_max_bytes"])).map(lambda v: _num(v, "{:.1f}")),
        "power/limit": d["power_fraction"].map(lambda v: _num(v, "{:.0%}")),
        "clock/max": d["clock_fraction"].map(lambda v: _num(v, "{:.0%}")),
        "max °C": d["temperature_max_c"].map(lambda v: _num(v, "{:.0f}")),
        "verdict": d["verdict"],
    })
    lines += ["", view.to_string(index=False), ""]
    lines.append(f"effective_devices = {summary.effective_devices:.2f} (sum of the GPUs' mean utilisation); "
                 f"mean {summary.mean_utilization:.0%}, p50 {summary.util_p50:.0%}, p95 {summary.util_p95:.0%}, "
                 f"idle {summary.idle_fraction:.0%} of samples")
    lines.append(f"verdict: {summary.verdict} -- {summary.reason}")
    if summary.throttling:
        lines.append("throttling:")
        lines += [f"  - {x['text']}" for x in summary.throttling]
    else:
        lines.append("throttling: none seen (clocks at their maximum under load, no thermal or power cap)")
    if topology_warnings is not None:
        lines.append("topology:" if topology_warnings else "topology: no warnings")
        lines += [f"  - [{w['severity']}] {w['text']}" for w in topology_warnings]
    if table is not None:
        from .rightsize import sentence

        a = table.attrs
        unit = "TFLOP/s" if a["basis"] == "compute" else "GB/s"
        scale = units.TERA if a["basis"] == "compute" else units.GIGA
        rows = pd.DataFrame({
            "device": table["name"] + table["is_monitored"].map({True: " (monitored)", False: ""}),
            f"rate {unit}": (table["rate"] / scale).map(lambda v: f"{v:,.0f}"),
            "for the work": table["devices_for_work"].map(lambda v: f"{v:.2f}"),
            "for the memory": table["devices_for_memory"].map(lambda v: _num(v, "{:.2f}")),
            "devices": table["devices"].map(lambda v: f"{int(v)}"),
            "limited by": table["limited_by"],
            "TDP W": table["tdp_w_total"].map(lambda v: _num(v, "{:,.0f}")),
        })
        what = f"{a['precision']} dense matmul" if a["basis"] == "compute" else "memory bandwidth"
        lines += ["", f"right-size ({what}; achievable figures = datasheet × published efficiency; memory = sum of "
                      f"the GPUs' peak use, {_num(units.bytes_to_gb(a['memory_needed_bytes']), '{:.0f}')} GB):",
                  rows.to_string(index=False), "", sentence(table)]
    return "\n".join(lines)


def run(args):
    """Entry point of ``accelkit monitor`` (returns the exit status)."""
    target = Path(args.json) if args.json else None
    if target is not None:
        if target.suffix.lower() != ".json":
            return _fail(f"--json must name a .json file; got {args.json}")
        if target.exists() and not args.force:
            return _fail(f"{target} already exists; add --force to replace it")
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
        print(f"right-size: skipped ({right_note})")
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
                return _fail(f"{target} already exists; add --force to replace it")
            target.write_text(json.dumps(jsonable(data), indent=2, allow_nan=False, default=_json_default) + "\n",
                              encoding="utf-8")
        except (OSError, ValueError) as exc:
            return _fail(f"cannot write {target}: {exc}")
        print(f"summary written: {target}")
    if returncode not in (None, 0):
        print(f"{PROG}: the monitored command exited with status {returncode}", file=sys.stderr)
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
