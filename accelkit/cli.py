"""The ``accelkit`` command: ``app``, ``report``, ``probe``, ``devices``, ``validate``, ``monitor``.

Run ``accelkit --help`` for the list, ``accelkit COMMAND --help`` for options.
Errors print one clear line to stderr and exit with status 2 (bad input) or 1
(a failed step).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .paths import notebooks_dir

DEFAULT_PORT = 8866


def cmd_app(args):
    from .appserver import PROMETHEUS_ENV, AppSettings, voila_command, voila_environment

    notebook = notebooks_dir() / "app.ipynb"
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"accelkit: serving on {args.host}: anyone who can reach this address can use the app "
            "(widgets only; no code cells are shown or executable, but each visit starts a Python kernel "
            "on this machine). Prefer 127.0.0.1 and an SSH tunnel.",
            file=sys.stderr,
        )
    try:
        settings = AppSettings(pool_size=args.pool_size, cull_idle_s=args.cull_idle, cull_interval_s=args.cull_interval,
                               max_kernels=args.max_kernels, refill_delay_s=args.refill_delay,
                               cell_timeout_s=args.cell_timeout)
    except ValueError as exc:
        print(f"accelkit app: {exc}", file=sys.stderr)
        return 2
    cmd = voila_command(notebook, args.host, args.port, settings)
    env = voila_environment()
    env[PROMETHEUS_ENV] = ",".join(args.prometheus)
    from .userfiles import ALLOW_PROBES_ENV, DATA_DIR_ENV, SERVED_ENV

    env[SERVED_ENV] = "1"  # the chapters know "this machine" is the server, and visitors name no server path
    env[ALLOW_PROBES_ENV] = "1" if args.allow_probes else ""
    env[DATA_DIR_ENV] = ""
    if args.data_dir:
        data_dir = Path(args.data_dir).expanduser()
        if not data_dir.is_dir():
            print(f"accelkit app: --data-dir {str(args.data_dir)[:80]!r} is not a folder", file=sys.stderr)
            return 2
        env[DATA_DIR_ENV] = str(data_dir.resolve())
    print(f"accelkit app: http://{args.host}:{args.port}/  ({settings.pool_size} warm kernel(s); idle kernels "
          f"reclaimed after {settings.cull_idle_s:g} s"
          + (f"; at most {settings.max_kernels} kernels" if settings.max_kernels else "") + "; Ctrl-C to stop)", flush=True)
    # exec: the server takes this process's place, so SIGTERM or Ctrl-C reach Voila itself,
    # which shuts down every kernel it started before it exits
    os.execve(cmd[0], cmd, env)


def cmd_devices(args):
    from .catalog import CatalogError, find, load_catalog

    try:
        catalog = load_catalog(args.catalog)
        if args.name:
            row = find(args.name, catalog)
            for key, value in row.items():
                if value == value and value != "":
                    print(f"{key:>20}: {value}")
            return 0
    except (CatalogError, ValueError) as exc:
        print(f"accelkit: {exc}", file=sys.stderr)
        return 2
    cols = ["name", "vendor", "segment", "memory_gb", "memory_bw_gbs", "bf16_tflops", "int8_tops", "tdp_w"]
    print(catalog[cols].to_string(index=False))
    return 0


def cmd_report(args):
    from .report import ReportError, ReportInterrupted, build_report

    try:
        index = build_report(
            args.scenario, out_dir=args.out, chapters=args.chapters, force=args.force, progress=not args.quiet,
            measured_demand=args.measured_demand, title=args.title, pdf=args.pdf,
        )
    except ReportError as exc:
        print(f"accelkit report: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, ReportInterrupted) else 2
        print(f"accelkit report: {exc or 'interrupted'}; nothing written", file=sys.stderr)
        return 128 + signum
    print(f"report written: {index}")
    if args.pdf:
        print(f"decision page: {index.parent / 'decision-summary.pdf'}")
    return 0


def cmd_probe(args):
    from .probes import ProbeUnavailable, run_all, save_results

    if args.json:
        target = Path(args.json)
        if target.suffix.lower() != ".json":
            print(f"accelkit probe: --json must name a .json file; got {args.json}", file=sys.stderr)
            return 2
        if target.exists() and not args.force:
            print(f"accelkit probe: {target} already exists; add --force to replace it", file=sys.stderr)
            return 2
    if args.llm:
        return _probe_llm(args)
    if args.train:
        return _probe_train(args)
    try:
        frame = run_all(device=args.device, quick=args.quick, progress=not args.quiet)
    except (ProbeUnavailable, ValueError) as exc:
        print(f"accelkit probe: {exc}", file=sys.stderr)
        return 2
    header = frame.attrs.get("header", {})
    if header.get("note"):
        print(f"accelkit probe: {header['note']}", file=sys.stderr)
    if args.json:
        try:
            path = save_results(frame, args.json, overwrite=args.force, label=args.label)
        except (FileExistsError, ValueError, OSError) as exc:
            print(f"accelkit probe: {exc}", file=sys.stderr)
            return 2
        print(f"results written: {path}")
    from .probes import display_table

    print(display_table(frame, max_note=70).to_string(index=False))
    print(f"device: {header.get('device', '')} ({header.get('device_name', '')}), torch {header.get('torch_version', '')}, "
          f"{'quick' if args.quick else 'full'} mode, {header.get('elapsed_s', float('nan')):.1f} s")
    return 0


def _probe_model(args, measure, fmt, method, hidden, summary):
    """``accelkit probe --llm`` / ``--train``: ``measure(device, catalogue name)`` -> frame, shown,
    saved with the machine's description (never over an existing file without --force)."""
    from .local.devices import import_torch, resolve_device
    from .probes import ProbeUnavailable
    from .probes.inventory import _inventory_row, _machine, inventory
    from .probes.llm import save_llm_results

    if args.json and Path(args.json).exists() and not args.force:
        print(f"accelkit probe: {args.json} already exists; add --force to replace it", file=sys.stderr)
        return 2
    try:
        device, inv = resolve_device(args.device), inventory()
        inv_row = _inventory_row(device, inv)
        device_name = inv_row.get("catalogue_name") or None
        frame = measure(device, device_name)
    except (ProbeUnavailable, ValueError) as exc:
        print(f"accelkit probe: {exc}", file=sys.stderr)
        return 2
    frame.insert(0, "device_name", inv_row.get("name", ""))
    frame.insert(1, "catalogue_device", device_name or "")
    if args.json:
        try:
            path = save_llm_results(frame, args.json, _machine(device, inv, inv_row, import_torch()),
                                    overwrite=args.force, label=args.label, fmt=fmt, method=method)
        except (FileExistsError, ValueError, OSError) as exc:
            print(f"accelkit probe: {exc}", file=sys.stderr)
            return 2
        print(f"results written: {path}")
    print(frame.drop(columns=list(hidden)).to_string(index=False, float_format="%.4g"))
    if device_name:
        print(summary(frame))
    else:
        print(f"accelkit probe: {inv_row.get('catalogue_match', 'device not in the catalogue')}: no projection to compare")
    return 0


def _probe_llm(args):
    """``accelkit probe --llm MODEL``: a decoder's decode step and prefill timed here, next to the engine."""
    from .probes.llm import LLM_FORMAT, geometric_mean_error, llm_probe

    def measure(device, name):
        return llm_probe(args.llm, device=device, batch_sizes=args.llm_batch, input_tokens=args.llm_input,
                         output_tokens=args.llm_output, precision=args.llm_precision, catalog_device=name)

    def summary(frame):
        return (f"engine against this device: {geometric_mean_error(frame['ratio']):.1%} geometric-mean error "
                f"({geometric_mean_error(frame['ratio_kernels']):.1%} without the serving engine's fixed overhead)")

    return _probe_model(args, measure, LLM_FORMAT, "accelkit.probes.llm", ("input_tokens", "output_tokens"), summary)


def _probe_train(args):
    """``accelkit probe --train MODEL``: a training step timed here, next to the engine."""
    from .probes.training_step import TRAIN_FORMAT, training_probe

    def measure(device, name):
        return training_probe(args.train, device=device, micro_batch_sizes=args.train_micro_batch,
                              seq_len=args.seq_len, accumulation_steps=args.accumulation,
                              precision=args.llm_precision, catalog_device=name)

    def summary(frame):
        return (f"MFU of this stack: {', '.join(f'{m:.1%}' for m in frame['mfu'])} (micro-batch "
                f"{', '.join(str(b) for b in frame['micro_batch_size'])}); give it to a scenario as utilization")

    return _probe_model(args, measure, TRAIN_FORMAT, "accelkit.probes.training_step",
                        ("params_built", "model_flops_per_token"), summary)


def cmd_validate(args):
    import pandas as pd

    from .projection import validation as V

    try:
        if args.fit:
            values, table = V.fit(passes=args.passes)
            print("fitted on the fit split only:")
            for name, value in values.items():
                print(f"  {name} = {value:.6g}")
            print(table.to_string(index=False))
            if args.write:
                import datetime

                path = V.write_constants(values, datetime.date.today().isoformat())
                print(f"constants written: {path}")
            results = V.validate(**values)
        else:
            results = V.validate()
    except (ValueError, OSError) as exc:
        print(f"accelkit validate: {exc}", file=sys.stderr)
        return 2
    if args.write_errors:
        import datetime

        path = V.write_errors(results, datetime.date.today().isoformat())
        print(f"model errors written: {path}")
    for target in (args.chart, args.csv):
        if target and Path(target).exists() and not args.force:
            print(f"accelkit validate: {target} already exists; add --force to replace it", file=sys.stderr)
            return 2
    shown = results if not args.category else results[results["category"].isin(args.category)]
    cols = ["case_id", "category", "split", "device", "model", "metric", "value", "predicted", "ratio"]
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 48):
        print(shown[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    summary = V.summary(results)
    print()
    print("geometric-mean error = exp(mean |ln(projected speed / measured speed)|) - 1")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    try:
        if args.csv:
            target = args.csv
            results.to_csv(args.csv, index=False)
            print(f"cases written: {args.csv}")
        if args.chart:
            import plotly.io as pio

            from .plots import validation_chart

            target = args.chart
            pio.write_html(validation_chart(results), args.chart, include_plotlyjs=True, full_html=True)
            print(f"chart written: {args.chart}")
    except OSError as exc:
        print(f"accelkit validate: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with the command's error convention: one line naming the option, exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _port(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number 1-65535, got {text[:40]!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 1-65535, got {value}")
    return value


def _whole_seconds(text):
    """Whole seconds >= 0 (Jupyter Server counts kernel culling in whole seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole seconds >= 0, got {text[:40]!r}") from None
    if not 0 <= value <= 10**9 or value != int(value):  # also NaN and infinity
        raise argparse.ArgumentTypeError(f"expected whole seconds >= 0 (e.g. 30), got {text[:40]}")
    return int(value)


def build_parser():
    parser = _Parser(prog="accelkit", description="Choose AI accelerators and prove the choice with numbers.")
    sub = parser.add_subparsers(dest="command", required=True)

    app = sub.add_parser("app", help="serve the Voila app (default http://127.0.0.1:8866)")
    app.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    app.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port, 1-65535 (default {DEFAULT_PORT})")
    app.add_argument("--pool-size", type=int, default=2, metavar="N",
                     help="kernels kept warm for the next visitors (default 2; 0: start one per visit)")
    app.add_argument("--cull-idle", type=_whole_seconds, default=600, metavar="SECONDS",
                     help="shut down a kernel whose page is closed after this many idle seconds (default 600; 0: never)")
    app.add_argument("--cull-interval", type=_whole_seconds, default=60, metavar="SECONDS",
                     help="how often to look for such kernels (default 60)")
    app.add_argument("--prometheus", action="append", default=[], metavar="URL",
                     help="a Prometheus (with DCGM-exporter metrics) that visitors may query in the '11 Your GPUs' "
                          "tab; repeat for more (default: none, so the app sends no request a visitor chose)")
    app.add_argument("--refill-delay", type=float, default=60, metavar="SECONDS",
                     help="wait this long before replacing a warm kernel a visitor took (default 60): starting "
                          "kernels competes with the pages still loading")
    app.add_argument("--max-kernels", type=int, default=0, metavar="N",
                     help="most kernels at once, warm pool and report kernels included; a visitor beyond it gets a "
                          "page saying the app is full (default 0: no cap; about 170 MB of memory each)")
    app.add_argument("--cell-timeout", type=float, default=300, metavar="SECONDS",
                     help="longest a notebook cell may run while a page is built (default 300); a warm kernel's "
                          "wait for its visitor is exempt")
    app.add_argument("--data-dir", default=None, metavar="DIR",
                     help="a folder whose files (logs, monitor summaries, probe results, topologies) visitors may "
                          "pick by name; they never name another server path (default: none, uploads only)")
    app.add_argument("--allow-probes", action="store_true",
                     help="let visitors start the probes, the ecosystem audit and live GPU sampling, which measure "
                          "THIS server (bounded to 60 s; default: off, visitors upload `accelkit probe --json` files)")
    app.set_defaults(func=cmd_app)

    dev = sub.add_parser("devices", help="list the catalogue, or show one device")
    dev.add_argument("name", nargs="?", help="a device name or alias")
    dev.add_argument("--catalog", help="your own CSV of extra devices (read only)")
    dev.set_defaults(func=cmd_devices)

    rep = sub.add_parser("report", help="render the chapters for a scenario into HTML (papermill + nbconvert)")
    rep.add_argument("--scenario", required=True, help="scenario file (.yaml or .json)")
    rep.add_argument("--out", default=None, help="output folder (default reports/<scenario name>)")
    rep.add_argument("--chapters", nargs="*", default=None, help="chapter names or numbers (default: all)")
    rep.add_argument("--force", action="store_true", help="replace an existing report folder")
    rep.add_argument("--quiet", action="store_true", help="no progress bar")
    rep.add_argument("--measured-demand", metavar="FILE", default=None,
                     help="size for the pace your GPUs keep now: a JSON from `accelkit monitor --json`, "
                          "an nvidia-smi CSV log, or 'example'")
    rep.add_argument("--title", default=None, help="the report's title (default: the scenario's name, or its file's "
                                                   "name when the scenario keeps the default name)")
    rep.add_argument("--pdf", action="store_true", help="also write decision-summary.pdf, the decision page on one A4 "
                                                        "page (needs Debian's chromium; nothing is downloaded)")
    rep.set_defaults(func=cmd_report)

    probe = sub.add_parser("probe", help="measure this machine: matmul FLOP/s, memory bandwidth, precision")
    probe.add_argument("--quick", action="store_true", help="small sizes, under 30 s on a laptop CPU")
    probe.add_argument("--device", default=None, help="torch device, e.g. cuda:0 or cpu (default: best available)")
    probe.add_argument("--json", default=None, help="write the results to this JSON file")
    probe.add_argument("--force", action="store_true", help="replace an existing JSON file")
    probe.add_argument("--label", default=None, help="describe the machine in the JSON header (e.g. '2-core VM, CPU only')")
    probe.add_argument("--quiet", action="store_true", help="no progress bar")
    probe.add_argument("--llm", metavar="MODEL", default=None,
                       help="time a decoder's decode step and prefill (random weights in the preset's shape, CUDA "
                            "graphs on a GPU) next to the engine's projection, e.g. --llm 'Llama-2 7B'")
    probe.add_argument("--llm-batch", type=int, nargs="+", default=[1, 8, 32], metavar="N",
                       help="with --llm: decode batch sizes (default 1 8 32)")
    probe.add_argument("--llm-input", type=int, default=1024, metavar="TOKENS", help="with --llm: prompt tokens (default 1024)")
    probe.add_argument("--llm-output", type=int, default=256, metavar="TOKENS", help="with --llm: generated tokens (default 256)")
    probe.add_argument("--llm-precision", default="bf16", help="with --llm or --train: bf16, fp16 or fp32 (default bf16)")
    probe.add_argument("--train", metavar="MODEL", default=None,
                       help="time a training step of a decoder preset (eager PyTorch, mixed precision, fused AdamW) "
                            "next to the engine's projection; prints your stack's MFU, e.g. --train 'GPT-2 XL'")
    probe.add_argument("--train-micro-batch", type=int, nargs="+", default=[1, 4], metavar="N",
                       help="with --train: micro-batch sizes (default 1 4)")
    probe.add_argument("--seq-len", type=int, default=1024, metavar="TOKENS",
                       help="with --train: tokens per sequence (default 1024)")
    probe.add_argument("--accumulation", type=int, default=16, metavar="N",
                       help="with --train: micro-batches per optimizer step (default 16)")
    probe.set_defaults(func=cmd_probe)

    val = sub.add_parser("validate", help="projections against published measurements (data/validation/measured.csv)")
    val.add_argument("--category", nargs="*", help="show only these categories (the summary covers all)")
    val.add_argument("--chart", help="write the log-log chart, projected against measured, to this HTML file")
    val.add_argument("--csv", help="write every case with its projection to this CSV file")
    val.add_argument("--force", action="store_true", help="replace existing --chart / --csv files")
    val.add_argument("--fit", action="store_true", help="refit the fitted constants on the fit split, then report")
    val.add_argument("--passes", type=int, default=3, help="coordinate-search passes of --fit (default 3)")
    val.add_argument("--write", action="store_true", help="with --fit: write the constants to data/projection_constants.csv")
    val.add_argument("--write-errors", action="store_true",
                     help="store each category's geometric-mean error (the ranges' model term) in data/projection_constants.csv")
    val.set_defaults(func=cmd_validate)

    from .monitor.cli import add_parser as add_monitor

    add_monitor(sub)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
