"""The ``accelkit`` command: ``app``, ``report``, ``probe``, ``devices``, ``project``, ``validate``, ``monitor``.

Run ``accelkit --help`` for the list, ``accelkit COMMAND --help`` for options.
Errors print one clear line to stderr and exit with status 2 (bad input) or 1
(a failed step).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import i18n
from .i18n import N_, _
from .paths import notebooks_dir

DEFAULT_PORT = 8866


def cmd_app(args):
    from .appserver import PROMETHEUS_ENV, AppSettings, voila_command, voila_environment

    notebook = notebooks_dir() / "app.ipynb"
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            "accelkit: " + _("serving on {host}: anyone who can reach this address can use the app "
                             "(widgets only; no code cells are shown or executable, but each visit starts a Python "
                             "kernel on this machine). Prefer 127.0.0.1 and an SSH tunnel.").format(host=args.host),
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
            print("accelkit app: " + _("--data-dir {path} is not a folder").format(path=repr(str(args.data_dir)[:80])),
                  file=sys.stderr)
            return 2
        env[DATA_DIR_ENV] = str(data_dir.resolve())
    cap = _("; at most {n} kernels").format(n=settings.max_kernels) if settings.max_kernels else ""
    print(f"accelkit app: http://{args.host}:{args.port}/  ("
          + _("{n} warm kernel(s); idle kernels reclaimed after {seconds} s").format(
              n=settings.pool_size, seconds=f"{settings.cull_idle_s:g}")
          + cap + _("; Ctrl-C to stop") + ")", flush=True)
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
            measured_demand=args.measured_demand, title=args.title, pdf=args.pdf, lang=args.report_lang,
        )
    except ReportError as exc:
        print(f"accelkit report: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, ReportInterrupted) else 2
        print("accelkit report: " + _("{reason}; nothing written").format(reason=exc or _("interrupted")),
              file=sys.stderr)
        return 128 + signum
    print(_("report written: {path}").format(path=index))
    if args.pdf:
        print(_("decision page: {path}").format(path=index.parent / "decision-summary.pdf"))
    return 0


def cmd_probe(args):
    from .probes import ProbeUnavailable, run_all, save_results

    if args.json:
        target = Path(args.json)
        if target.suffix.lower() != ".json":
            print("accelkit probe: " + _("--json must name a .json file; got {path}").format(path=args.json),
                  file=sys.stderr)
            return 2
        if target.exists() and not args.force:
            print("accelkit probe: " + _("{path} already exists; add --force to replace it").format(path=target),
                  file=sys.stderr)
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
        print(_("results written: {path}").format(path=path))
    from .probes import display_table

    print(display_table(frame, max_note=70).to_string(index=False))
    mode = _("quick mode") if args.quick else _("full mode")
    print(_("device: {device} ({name}), torch {torch}, {mode}, {seconds} s").format(
        device=header.get("device", ""), name=header.get("device_name", ""), torch=header.get("torch_version", ""),
        mode=mode, seconds=f"{header.get('elapsed_s', float('nan')):.1f}"))
    return 0


def _probe_model(args, measure, fmt, method, hidden, summary):
    """``accelkit probe --llm`` / ``--train``: ``measure(device, catalogue name)`` -> frame, shown,
    saved with the machine's description (never over an existing file without --force)."""
    from .local.devices import import_torch, resolve_device
    from .probes import ProbeUnavailable
    from .probes.inventory import _inventory_row, _machine, inventory
    from .probes.llm import save_llm_results

    if args.json and Path(args.json).exists() and not args.force:
        print("accelkit probe: " + _("{path} already exists; add --force to replace it").format(path=args.json),
              file=sys.stderr)
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
        print(_("results written: {path}").format(path=path))
    print(frame.drop(columns=list(hidden)).to_string(index=False, float_format="%.4g"))
    if device_name:
        print(summary(frame))
    else:
        match = inv_row.get("catalogue_match", _("device not in the catalogue"))
        print("accelkit probe: " + _("{match}: no projection to compare").format(match=match))
    return 0


def _probe_llm(args):
    """``accelkit probe --llm MODEL``: a decoder's decode step and prefill timed here, next to the engine."""
    from .probes.llm import LLM_FORMAT, geometric_mean_error, llm_probe

    def measure(device, name):
        return llm_probe(args.llm, device=device, batch_sizes=args.llm_batch, input_tokens=args.llm_input,
                         output_tokens=args.llm_output, precision=args.llm_precision, catalog_device=name)

    def summary(frame):
        return _("engine against this device: {error} geometric-mean error ({kernels} without the serving engine's "
                 "fixed overhead)").format(error=f"{geometric_mean_error(frame['ratio']):.1%}",
                                          kernels=f"{geometric_mean_error(frame['ratio_kernels']):.1%}")

    return _probe_model(args, measure, LLM_FORMAT, "accelkit.probes.llm", ("input_tokens", "output_tokens"), summary)


def _probe_train(args):
    """``accelkit probe --train MODEL``: a training step timed here, next to the engine."""
    from .probes.training_step import TRAIN_FORMAT, training_probe

    def measure(device, name):
        return training_probe(args.train, device=device, micro_batch_sizes=args.train_micro_batch,
                              seq_len=args.seq_len, accumulation_steps=args.accumulation,
                              precision=args.llm_precision, catalog_device=name)

    def summary(frame):
        return _("MFU of this stack: {mfu} (micro-batch {sizes}); give it to a scenario as utilization").format(
            mfu=", ".join(f"{m:.1%}" for m in frame["mfu"]), sizes=", ".join(str(b) for b in frame["micro_batch_size"]))

    return _probe_model(args, measure, TRAIN_FORMAT, "accelkit.probes.training_step",
                        ("params_built", "model_flops_per_token"), summary)


def cmd_validate(args):
    import pandas as pd

    from .projection import validation as V
    from .projection.intervals import INTERVAL_LEVEL

    try:
        if args.fit:
            values, table = V.fit(passes=args.passes)
            print(_("fitted on the fit split only:"))
            for name, value in values.items():
                print(f"  {name} = {value:.6g}")
            print(table.to_string(index=False))
            if args.write:
                import datetime

                path = V.write_constants(values, datetime.date.today().isoformat())
                print(_("constants written: {path}").format(path=path))
            results = V.validate(**values)
        else:
            results = V.validate()
    except (ValueError, OSError) as exc:
        print(f"accelkit validate: {exc}", file=sys.stderr)
        return 2
    if args.write_errors:
        import datetime

        from .projection.intervals import write_errors

        path = write_errors(results, datetime.date.today().isoformat())
        print(_("model errors written: {path}").format(path=path))
    for target in (args.chart, args.csv):
        if target and Path(target).exists() and not args.force:
            print("accelkit validate: " + _("{path} already exists; add --force to replace it").format(path=target),
                  file=sys.stderr)
            return 2
    shown = results if not args.category else results[results["category"].isin(args.category)]
    cols = ["case_id", "category", "split", "device", "model", "metric", "value", "predicted", "ratio"]
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 48):
        print(shown[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    summary = V.summary(results)
    print()
    print(_("geometric-mean error = exp(mean |ln(projected speed / measured speed)|) - 1"))
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print()
    print(_("per vendor (coverage: share of measurements inside the stated {level:.0%} range):").format(
        level=INTERVAL_LEVEL))
    print(V.summary_by_vendor(results).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    from .projection.validation_lines import source_lines

    # the stored constants only: a refit's would calibrate other ranges than these
    for line in source_lines(results, summary, left_out=not args.fit):
        print(line)
    try:
        if args.csv:
            target = args.csv
            results.to_csv(args.csv, index=False)
            print(_("cases written: {path}").format(path=args.csv))
        if args.chart:
            import plotly.io as pio

            from .plots import validation_chart

            target = args.chart
            pio.write_html(validation_chart(results), args.chart, include_plotlyjs=True, full_html=True)
            print(_("chart written: {path}").format(path=args.chart))
    except OSError as exc:
        print("accelkit validate: " + _("cannot write {path}: {error}").format(path=target, error=exc.strerror or exc),
              file=sys.stderr)
        return 2
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with the command's error convention: one line naming the option, exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} " + _("(see {command} --help)").format(command=self.prog) + "\n")


def _port(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("expected a port number 1-65535, got {value}").format(value=repr(text[:40]))) \
            from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(_("expected a port number 1-65535, got {value}").format(value=value))
    return value


def _whole_seconds(text):
    """Whole seconds >= 0 (Jupyter Server counts kernel culling in whole seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("expected whole seconds >= 0, got {value}").format(value=repr(text[:40]))) \
            from None
    if not 0 <= value <= 10**9 or value != int(value):  # also NaN and infinity
        raise argparse.ArgumentTypeError(_("expected whole seconds >= 0 (e.g. 30), got {value}").format(value=text[:40]))
    return int(value)


#: argparse's own words (the usage line, headings, its error messages): argparse looks them up
#: through its module's ``_``, which :func:`main` points at accelkit's catalogue
ARGPARSE_MESSAGES = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"), N_("expected one argument"), N_("expected at least one argument"),
    N_("expected at most one argument"), N_("not allowed with argument %s"), N_("one of the arguments %s is required"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
)


def _lang(text):
    """``--lang``: a language the workbook speaks (``en``, ``zh_CN``; ``zh-CN``, ``zh`` accepted)."""
    try:
        return i18n.normalize_language(text, field="--lang")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[1]) from None


def command_language(argv, environ=None):
    """The language of the command: the last ``--lang X`` / ``--lang=X`` of ``argv`` (before a
    ``--``), else ``ACCELKIT_LANG``, else English. Read before the parser is built, so that its
    help texts are in that language. Raises ``ValueError`` naming ``--lang`` or ``ACCELKIT_LANG``."""
    environ = os.environ if environ is None else environ
    chosen, field = None, "--lang"
    argv = list(argv)
    for position, token in enumerate(argv):
        if token == "--":
            break
        if token == "--lang" and position + 1 < len(argv):
            chosen = argv[position + 1]
        elif token.startswith("--lang="):
            chosen = token.split("=", 1)[1]
    if chosen is None:
        chosen, field = environ.get(i18n.LANG_ENV) or i18n.DEFAULT_LANGUAGE, i18n.LANG_ENV
    return i18n.normalize_language(chosen, field=field)


def build_parser():
    """The command's parser, its help texts in the language now in use (:func:`accelkit.i18n.language`)."""
    parser = _Parser(prog="accelkit", description=_("Choose AI accelerators and prove the choice with numbers."))
    parser.add_argument("--lang", type=_lang, default=None, metavar="LANG",
                        help=_("language of the messages, help and reports: en or zh_CN (default: the "
                               "ACCELKIT_LANG environment variable, else en)"))
    sub = parser.add_subparsers(dest="command", required=True)

    app = sub.add_parser("app", help=_("serve the Voila app (default http://127.0.0.1:8866)"))
    app.add_argument("--host", default="127.0.0.1", help=_("address to listen on (default 127.0.0.1: this machine only)"))
    app.add_argument("--port", type=_port, default=DEFAULT_PORT, help=_("port, 1-65535 (default {port})").format(port=DEFAULT_PORT))
    app.add_argument("--pool-size", type=int, default=2, metavar="N",
                     help=_("kernels kept warm for the next visitors (default 2; 0: start one per visit)"))
    app.add_argument("--cull-idle", type=_whole_seconds, default=600, metavar="SECONDS",
                     help=_("shut down a kernel whose page is closed after this many idle seconds (default 600; 0: never)"))
    app.add_argument("--cull-interval", type=_whole_seconds, default=60, metavar="SECONDS",
                     help=_("how often to look for such kernels (default 60)"))
    app.add_argument("--prometheus", action="append", default=[], metavar="URL",
                     help=_("a Prometheus (with DCGM-exporter metrics) that visitors may query in the '11 Your GPUs' "
                          "tab; repeat for more (default: none, so the app sends no request a visitor chose)"))
    app.add_argument("--refill-delay", type=float, default=60, metavar="SECONDS",
                     help=_("wait this long before replacing a warm kernel a visitor took (default 60): starting "
                          "kernels competes with the pages still loading"))
    app.add_argument("--max-kernels", type=int, default=0, metavar="N",
                     help=_("most kernels at once, warm pool and report kernels included; a visitor beyond it gets a "
                          "page saying the app is full (default 0: no cap; about 170 MB of memory each)"))
    app.add_argument("--cell-timeout", type=float, default=300, metavar="SECONDS",
                     help=_("longest a notebook cell may run while a page is built (default 300); a warm kernel's "
                          "wait for its visitor is exempt"))
    app.add_argument("--data-dir", default=None, metavar="DIR",
                     help=_("a folder whose files (logs, monitor summaries, probe results, topologies) visitors may "
                          "pick by name; they never name another server path (default: none, uploads only)"))
    app.add_argument("--allow-probes", action="store_true",
                     help=_("let visitors start the probes, the ecosystem audit and live GPU sampling, which measure "
                          "THIS server (bounded to 60 s; default: off, visitors upload `accelkit probe --json` files)"))
    app.set_defaults(func=cmd_app)

    dev = sub.add_parser("devices", help=_("list the catalogue, or show one device"))
    dev.add_argument("name", nargs="?", help=_("a device name or alias"))
    dev.add_argument("--catalog", help=_("your own CSV of extra devices (read only)"))
    dev.set_defaults(func=cmd_devices)

    rep = sub.add_parser("report", help=_("render the chapters for a scenario into HTML (papermill + nbconvert)"))
    rep.add_argument("--scenario", required=True, help=_("scenario file (.yaml or .json)"))
    rep.add_argument("--out", default=None, help=_("output folder (default reports/<scenario name>)"))
    rep.add_argument("--chapters", nargs="*", default=None, help=_("chapter names or numbers (default: all)"))
    rep.add_argument("--force", action="store_true", help=_("replace an existing report folder"))
    rep.add_argument("--quiet", action="store_true", help=_("no progress bar"))
    rep.add_argument("--measured-demand", metavar="FILE", default=None,
                     help=_("size for the pace your GPUs keep now: a JSON from `accelkit monitor --json`, "
                          "an nvidia-smi CSV log, or 'example'"))
    rep.add_argument("--title", default=None, help=_("the report's title (default: the scenario's name, or its file's "
                                                   "name when the scenario keeps the default name)"))
    rep.add_argument("--pdf", action="store_true", help=_("also write decision-summary.pdf, the decision page on one A4 "
                                                        "page (needs Debian's chromium; nothing is downloaded)"))
    rep.add_argument("--lang", dest="report_lang", type=_lang, default=None, metavar="LANG",
                     help=_("the report's language: en or zh_CN (default: the command's language, from accelkit "
                            "--lang or ACCELKIT_LANG, else en)"))
    rep.set_defaults(func=cmd_report)

    probe = sub.add_parser("probe", help=_("measure this machine: matmul FLOP/s, memory bandwidth, precision"))
    probe.add_argument("--quick", action="store_true", help=_("small sizes, under 30 s on a laptop CPU"))
    probe.add_argument("--device", default=None, help=_("torch device, e.g. cuda:0 or cpu (default: best available)"))
    probe.add_argument("--json", default=None, help=_("write the results to this JSON file"))
    probe.add_argument("--force", action="store_true", help=_("replace an existing JSON file"))
    probe.add_argument("--label", default=None, help=_("describe the machine in the JSON header (e.g. '2-core VM, CPU only')"))
    probe.add_argument("--quiet", action="store_true", help=_("no progress bar"))
    probe.add_argument("--llm", metavar="MODEL", default=None,
                       help=_("time a decoder's decode step and prefill (random weights in the preset's shape, CUDA "
                            "graphs on a GPU) next to the engine's projection, e.g. --llm 'Llama-2 7B'"))
    probe.add_argument("--llm-batch", type=int, nargs="+", default=[1, 8, 32], metavar="N",
                       help=_("with --llm: decode batch sizes (default 1 8 32)"))
    probe.add_argument("--llm-input", type=int, default=1024, metavar="TOKENS", help=_("with --llm: prompt tokens (default 1024)"))
    probe.add_argument("--llm-output", type=int, default=256, metavar="TOKENS", help=_("with --llm: generated tokens (default 256)"))
    probe.add_argument("--llm-precision", default="bf16", help=_("with --llm or --train: bf16, fp16 or fp32 (default bf16)"))
    probe.add_argument("--train", metavar="MODEL", default=None,
                       help=_("time a training step of a decoder preset (eager PyTorch, mixed precision, fused AdamW) "
                            "next to the engine's projection; prints your stack's MFU, e.g. --train 'GPT-2 XL'"))
    probe.add_argument("--train-micro-batch", type=int, nargs="+", default=[1, 4], metavar="N",
                       help=_("with --train: micro-batch sizes (default 1 4)"))
    probe.add_argument("--seq-len", type=int, default=1024, metavar="TOKENS",
                       help=_("with --train: tokens per sequence (default 1024)"))
    probe.add_argument("--accumulation", type=int, default=16, metavar="N",
                       help=_("with --train: micro-batches per optimizer step (default 16)"))
    probe.set_defaults(func=cmd_probe)

    val = sub.add_parser("validate", help=_("projections against published measurements (data/validation/measured.csv)"))
    val.add_argument("--category", nargs="*", help=_("show only these categories (the summary covers all)"))
    val.add_argument("--chart", help=_("write the log-log chart, projected against measured, to this HTML file"))
    val.add_argument("--csv", help=_("write every case with its projection to this CSV file"))
    val.add_argument("--force", action="store_true", help=_("replace existing --chart / --csv files"))
    val.add_argument("--fit", action="store_true", help=_("refit the fitted constants on the fit split, then report"))
    val.add_argument("--passes", type=int, default=3, help=_("coordinate-search passes of --fit (default 3)"))
    val.add_argument("--write", action="store_true", help=_("with --fit: write the constants to data/projection_constants.csv"))
    val.add_argument("--write-errors", action="store_true",
                     help=_("store each category's geometric-mean error (the ranges' model term) in data/projection_constants.csv"))
    val.set_defaults(func=cmd_validate)

    from .monitor.cli import add_parser as add_monitor
    from .project_cli import add_parser as add_project

    add_monitor(sub)
    add_project(sub)
    return parser


def main(argv=None):
    """Run the command; the language (``--lang``, else ``ACCELKIT_LANG``) is set for its duration."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        lang = command_language(argv)
    except ValueError as exc:
        print(f"accelkit: {exc}", file=sys.stderr)
        return 2
    saved = argparse._
    argparse._ = _  # argparse's own words through accelkit's catalogue (identical in English)
    try:
        with i18n.using(lang):
            args = build_parser().parse_args(argv)
            return args.func(args)
    finally:
        argparse._ = saved


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
