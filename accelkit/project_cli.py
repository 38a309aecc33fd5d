"""``accelkit project``: one projection from the terminal, with its range and where its
efficiencies come from -- the same engine the chapters, the decision and the report call.

``accelkit project llm``  serving a decoder (:func:`accelkit.projection.inference`): one
request at a time, a fixed batch, ``--concurrency`` closed-loop clients (with
``--requests-per-client`` for a load test's start burst) or a ``--request-rate``.
``accelkit project vision``  an image model or encoder (:func:`accelkit.projection.vision`),
on a software ``--stack`` and, for a Jetson, a ``--power-mode``.
``accelkit project recommender``  a DLRM-class recommender
(:func:`accelkit.projection.recommender.recommender`): user-item pairs scored per second
and the time of one pass, with where its embedding tables live.
``accelkit project gnn``  a graph network (:func:`accelkit.projection.gnn.gnn`): seeds
classified per second over a node's devices, and which link carries the feature gathers.

Every figure is printed with its stated 80 % range; ``--json`` prints the projection's
fields instead. Bad input exits 2 with one line naming the option.
"""

from __future__ import annotations

import json
import math
import sys

from . import units
from .i18n import N_, _

__all__ = ["add_parser"]

PROG = "accelkit project"


def add_parser(sub):
    """Register the ``project`` subcommand (``llm``, ``vision``) on an argparse subparsers object."""
    p = sub.add_parser("project", help=_("project one device's speed for a model, with its range and sources"),
                       description=_("Project serving a decoder (llm) or an image model / encoder (vision) on one "
                                     "device type with the engine every chapter uses; each figure with its stated "
                                     "80 % range and the source of its efficiencies."),
                       epilog=_("examples: accelkit project llm --device 'H100 SXM' --model 'Llama-3.1 70B' "
                                "--precision fp8 --devices 2 --concurrency 100 | accelkit project vision --device "
                                "'Jetson AGX Orin 64GB' --model ResNet-50 --power-mode 30W"))
    kinds = p.add_subparsers(dest="kind", required=True)

    llm = kinds.add_parser("llm", help=_("serve a decoder: TTFT, time per output token, throughput"))
    llm.add_argument("--device", required=True, help=_("a catalogue name or alias"))
    llm.add_argument("--model", default="Llama-3.1 8B", help=_("a model preset (default Llama-3.1 8B)"))
    llm.add_argument("--precision", default="bf16", help=_("weights and matmuls: bf16, fp8, int8, w4a16-g128, ... "
                                                           "(default bf16)"))
    llm.add_argument("--kv-precision", default=None, help=_("KV cache: bf16 or fp8 (default: the engine's for the "
                                                            "precision)"))
    llm.add_argument("--devices", type=int, default=1, metavar="N", help=_("devices serving the model (default 1)"))
    llm.add_argument("--tensor-parallel", type=int, default=None, metavar="N",
                     help=_("tensor-parallel size (default: the layout with the most tokens per device)"))
    llm.add_argument("--input-tokens", type=int, default=1024, metavar="TOKENS", help=_("prompt tokens (default 1024)"))
    llm.add_argument("--output-tokens", type=int, default=256, metavar="TOKENS",
                     help=_("generated tokens (default 256)"))
    load = llm.add_mutually_exclusive_group()
    load.add_argument("--batch-size", type=int, default=None, metavar="N", help=_("a fixed batch of N sequences"))
    load.add_argument("--concurrency", type=int, default=None, metavar="N",
                      help=_("N closed-loop clients, each sending its next request when the last one ends"))
    load.add_argument("--request-rate", type=float, default=None, metavar="PER_S",
                      help=_("Poisson arrivals at this many requests per second"))
    llm.add_argument("--requests-per-client", type=int, default=None, metavar="R",
                     help=_("with --concurrency: requests each client sends in the measured run (a load test of "
                            "--request-count R x N); default: the steady state of a long-running service"))
    llm.add_argument("--synchronized", action="store_true",
                     help=_("with --concurrency: the clients stay in step, as in a load test of fixed lengths "
                            "(every wave queues as the first)"))
    llm.add_argument("--stack", default=None, help=_("serving engine of data/stacks.csv: tensorrt-llm, vllm, sglang, "
                                                     "vendor-serving (default: the vendor's)"))
    llm.add_argument("--json", action="store_true", help=_("print the projection's fields as JSON"))
    llm.set_defaults(func=run_llm, prog=f"{PROG} llm")

    vis = kinds.add_parser("vision", help=_("run an image model or encoder: time per pass, frames per second"))
    vis.add_argument("--device", required=True, help=_("a catalogue name or alias"))
    vis.add_argument("--model", default="ResNet-50", help=_("a vision or encoder preset (default ResNet-50)"))
    vis.add_argument("--precision", default="int8", help=_("int8, fp16, bf16, fp8 or tf32 (default int8)"))
    vis.add_argument("--batch-size", type=int, default=1, metavar="N", help=_("samples per pass (default 1)"))
    vis.add_argument("--seq-len", type=int, default=None, metavar="TOKENS",
                     help=_("an encoder's tokens per request (default the preset's longest: 512 for BERT)"))
    vis.add_argument("--stack", default=None, help=_("software stack of data/stacks.csv (default: the vendor's)"))
    vis.add_argument("--power-mode", default=None, metavar="MODE",
                     help=_("a Jetson nvpmodel mode of data/edge_power_modes.csv, e.g. 30W (default: the top mode)"))
    vis.add_argument("--json", action="store_true", help=_("print the projection's fields as JSON"))
    vis.set_defaults(func=run_vision, prog=f"{PROG} vision")

    rec = kinds.add_parser("recommender", help=_("score user-item pairs with a recommender (DLRM-v2): pairs per "
                                                 "second, time per pass"))
    rec.add_argument("--device", required=True, help=_("a catalogue name or alias"))
    rec.add_argument("--model", default="DLRM-v2", help=_("a recommender preset (default DLRM-v2)"))
    rec.add_argument("--precision", default="int8", help=_("the MLPs' precision: int8, fp16, bf16, fp8 (default int8)"))
    rec.add_argument("--embedding-precision", default=None,
                     help=_("the tables' storage: int8, fp16, bf16, fp32 (default: the MLPs' bytes)"))
    rec.add_argument("--batch-size", type=int, default=None, metavar="PAIRS",
                     help=_("user-item pairs per pass (default 51,200, NVIDIA's MLPerf Server batch per GPU)"))
    rec.add_argument("--devices", type=int, default=1, metavar="N",
                     help=_("devices: the tables are replicated when they fit one, else sharded over N (default 1)"))
    rec.add_argument("--json", action="store_true", help=_("print the projection's fields as JSON"))
    rec.set_defaults(func=run_recommender, prog=f"{PROG} recommender")

    gnn = kinds.add_parser("gnn", help=_("classify seed nodes with a graph network (R-GAT): seeds per second"))
    gnn.add_argument("--device", required=True, help=_("a catalogue name or alias"))
    gnn.add_argument("--model", default="R-GAT (IGBH-full)", help=_("a preset of data/gnn_models.csv (default "
                                                                    "R-GAT (IGBH-full))"))
    gnn.add_argument("--precision", default="bf16", help=_("the GAT layers' precision: bf16, fp16, fp8 (default bf16)"))
    gnn.add_argument("--feature-precision", default="fp8",
                     help=_("the node features' storage: fp8, fp16, bf16, fp32 (default fp8, as NVIDIA's harness)"))
    gnn.add_argument("--devices", type=int, default=8, metavar="N",
                     help=_("devices of one node sharing the feature table (default 8)"))
    gnn.add_argument("--json", action="store_true", help=_("print the projection's fields as JSON"))
    gnn.set_defaults(func=run_gnn, prog=f"{PROG} gnn")
    return p


def _ms(value):
    """A time [s] in ms below a second, in s above."""
    if not _finite(value):
        return _("unknown")
    return f"{value:,.3g} s" if value >= 1.0 else f"{units.s_to_ms(value):,.3g} ms"


def _finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def _line(label, r, key, fmt):
    """One figure with its range: ``label  value  (low - high)``."""
    value, low, high = r.get(key), r.get(f"{key}_low"), r.get(f"{key}_high")
    if not _finite(value):
        return f"  {label:<50} {_('unknown')}"
    span = f"  ({fmt(low)} – {fmt(high)})" if _finite(low) and _finite(high) else ""
    return f"  {label:<50} {fmt(value)}{span}"


def _rate(value):
    return f"{value:,.4g}" if _finite(value) else _("unknown")


def _print_json(r):
    clean = {k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in r.items()}
    print(json.dumps(clean, ensure_ascii=False, indent=1, default=str))


def _project(args, project, *positional, **keywords):
    """``(figures, None)`` to print, or ``(None, exit status)``: bad input named on stderr (2),
    ``--json`` printed (0)."""
    try:
        r = project(*positional, **keywords)
    except (ValueError, KeyError) as exc:
        print(f"{args.prog}: {exc}", file=sys.stderr)
        return None, 2
    if args.json:
        _print_json(r)
        return r, 0
    return r, None


def _sources(r, kind):
    from .projection.track_record import device_track_record
    from .select.reasons import source_words  # the decision's words for the same sources

    return [_("efficiencies: matmul: {matmul}").format(matmul=source_words(r.get("matmul_source", ""))),
            _("               memory: {memory}").format(memory=source_words(r.get("memory_source", ""))),
            _("ranges: 80 % intervals for a source the engine has not seen (accelkit validate reports their "
              "coverage)"),
            _("engine: {record}").format(record=device_track_record(kind, r.get("name", "")))]


def run_llm(args):
    from .projection import inference

    if args.requests_per_client is not None and args.concurrency is None:
        print(f"{args.prog}: " + _("--requests-per-client needs --concurrency (it counts a closed-loop load test's "
                                   "requests per client)"), file=sys.stderr)
        return 2
    if args.synchronized and args.concurrency is None:
        print(f"{args.prog}: " + _("--synchronized needs --concurrency (it keeps a closed-loop load test's clients "
                                   "in step)"), file=sys.stderr)
        return 2
    r, done = _project(args, inference, args.device, args.model, precision=args.precision, n_devices=args.devices,
                       tensor_parallel=args.tensor_parallel, batch_size=args.batch_size,
                       input_tokens=args.input_tokens, output_tokens=args.output_tokens,
                       kv_precision=args.kv_precision, concurrency=args.concurrency, request_rate=args.request_rate,
                       requests_per_client=args.requests_per_client, synchronized=args.synchronized,
                       stack=args.stack)
    if done is not None:
        return done
    if args.concurrency is not None:
        load = _("{n} closed-loop clients").format(n=args.concurrency) + (
            _(", in step (fixed lengths: every wave queues as the first)") if args.synchronized else
            _(", {r} requests each (the start burst counted)").format(r=args.requests_per_client)
            if args.requests_per_client else _(" (steady state)"))
    elif args.request_rate is not None:
        load = _("{rate} requests/s (Poisson)").format(rate=f"{args.request_rate:g}")
    elif args.batch_size is not None:
        load = _("a fixed batch of {n}").format(n=args.batch_size)
    else:
        load = _("as many sequences as memory holds (maximum throughput)")
    print(_("{device} × {n}, {model}, {precision} (KV {kv}), tensor parallel {tp}, {inp} → {out} tokens, {load}").format(
        device=r["name"], n=args.devices, model=r["model"], precision=r["precision"], kv=r["kv_precision"],
        tp=int(r["tensor_parallel"]), inp=args.input_tokens, out=args.output_tokens, load=load))
    print("  " + _("serving engine: {stack}").format(stack=r["stack"]))
    under_load = args.concurrency is not None or args.request_rate is not None
    lines = [_line(_("time to first token (median)") if under_load else _("time to first token"), r, "ttft_s", _ms)]
    if under_load:
        lines += [_line(_("time to first token (90th percentile)"), r, "ttft_p90_s", _ms),
                  _line(_("time to first token (mean)"), r, "ttft_mean_s", _ms)]
        if args.concurrency is not None:
            lines.append(_line(_("first token when all {n} arrive at once (mean)").format(n=args.concurrency), r,
                               "ttft_first_wave_s", _ms))
    lines += [_line(_("time per output token"), r, "tpot_s", _ms)]
    if under_load:
        lines.append(_line(_("time per output token (90th percentile)"), r, "tpot_p90_s", _ms))
    lines += [_line(_("output tokens/s, all devices"), r, "output_tokens_per_s", _rate),
              _line(_("output tokens/s per device"), r, "output_tokens_per_s_per_device", _rate)]
    print("\n".join(lines))
    if _finite(r.get("batch_size")):
        print("  " + _("sequences in flight: {b:.0f} (memory holds {most:.0f})").format(
            b=r["batch_size"], most=r.get("most_sequences", r.get("max_batch_size", math.nan))))
        if args.batch_size is None:
            print("  " + _kv_policy_words(r, args.input_tokens, args.output_tokens))
    print("\n".join(_sources(r, "llm")))
    return 0


def _kv_policy_words(r, input_tokens, output_tokens):
    """How the serving engine sets KV cache aside for a request (``data/stacks.csv``), in words."""
    import numpy as np

    from .projection.constants import constants
    from .projection.stacks import kv_cache_policy, serving_engine_labels

    whole, after_weights = (bool(a[0]) for a in kv_cache_policy(np.array([r["stack"]], dtype=object)))
    share = 1.0 - constants()["serving_reserve_fraction"]
    engine = serving_engine_labels().get(r["stack"], r["stack"])
    where = (_("{share:.0%} of the memory the weights leave") if after_weights else
             _("{share:.0%} of the device's memory, weights included")).format(share=share)
    if whole:
        return _("KV cache: {engine} reserves each request's prompt and whole output ({n:,} tokens) in {where}").format(
            engine=engine, n=input_tokens + output_tokens, where=where)
    return _("KV cache: {engine} holds the tokens each sequence has (on average {n:,}: the prompt and half the output) "
             "in {where}").format(engine=engine, n=int(input_tokens + output_tokens / 2), where=where)


def _vision_kind(model):
    """``encoder`` for a BERT-class model, else ``vision``: the workload kind whose record the engine has."""
    from .models import find_model

    return "encoder" if find_model(model)["kind"] == "encoder" else "vision"


def run_vision(args):
    from .projection import vision

    r, done = _project(args, vision, args.device, args.model, precision=args.precision, batch_size=args.batch_size,
                       stack=args.stack, power_mode=args.power_mode, seq_len=args.seq_len)
    if done is not None:
        return done
    mode = _(", power mode {mode} ({watts:g} W)").format(mode=r["power_mode"], watts=r["power_w"]) \
        if r.get("power_mode") else ""
    tokens = _(", {n:,} tokens each").format(n=args.seq_len) if args.seq_len else ""
    print(_("{device}, {model}, {precision}, batch {batch}, stack {stack}{mode}").format(
        device=r["name"], model=args.model, precision=args.precision, batch=f"{args.batch_size}{tokens}",
        stack=r["stack"], mode=mode))
    print(_line(_("time per pass"), r, "frame_ms", lambda v: f"{v:,.3g} ms"))
    print(_line(_("samples per second per device"), r, "frames_per_s", _rate))
    print("\n".join(_kernel_words(r) + _sources(r, _vision_kind(args.model))))
    return 0


def _kernel_words(r):
    """What a pass's kernels cost and what the L2 keeps, with their sources (none for a chip priced
    from its vendor's published rate)."""
    from .projection.constants import constants
    from .projection.stacks import stack_row

    if r["matmul_source"].startswith("published:") or not r["kernels"] == r["kernels"]:
        return []
    per_kernel_s = r["floor_s"] / r["kernels"]
    if stack_row(r["stack"])["execution"] == "eager":
        return [_("kernels: {n:.0f} per pass, {us:.1f} µs each (the framework's dispatch on the host)").format(
            n=r["kernels"], us=units.seconds_to_us(per_kernel_s))]
    clock = _("{mhz:,.0f} MHz ({source})").format(mhz=r["clock_mhz"], source=r["clock_source_url"]) \
        if r["clock_source_url"] else \
        _("{mhz:,.0f} MHz, the median of the listed GPUs' clocks (none is published for this device)").format(
            mhz=r["clock_mhz"])
    lines = [_("kernels: {n:.0f} per pass, {cycles:,.0f} cycles each at {clock}").format(
        n=r["kernels"], cycles=per_kernel_s * units.mhz_to_hz(r["clock_mhz"]), clock=clock)]
    if r["l2_cache_bytes"] == r["l2_cache_bytes"]:
        lines.append(_("L2 cache: {mib:g} MiB, {share:.0%} of it holds a layer's feature maps ({source})").format(
            mib=units.bytes_to_mib(r["l2_cache_bytes"]), share=constants()["vision_l2_usable_fraction"],
            source=r["l2_source"]))
    else:
        lines.append(_("L2 cache: not published for this device (every feature map goes to DRAM)"))
    return lines


#: where the tables live, in words
_LAYOUT_WORDS = {"replicated": N_("every device holds all tables"),
                 "sharded": N_("the tables are split over the devices; pooled vectors cross the link"),
                 "host": N_("the rows that do not fit stay in host memory and cross PCIe")}


def run_recommender(args):
    from .projection.recommender import RECOMMENDER_BATCH, recommender

    batch = RECOMMENDER_BATCH if args.batch_size is None else args.batch_size
    r, done = _project(args, recommender, args.device, args.model, precision=args.precision, batch_size=batch,
                       n_devices=args.devices, embedding_precision=args.embedding_precision)
    if done is not None:
        return done
    print(_("{device} × {n}, {model}, {precision} (tables {emb}), {batch} user-item pairs per pass").format(
        device=r["name"], n=args.devices, model=r["model"], precision=r["precision"], emb=r["embedding_precision"],
        batch=f"{batch:,}"))
    print(_line(_("time per pass"), r, "batch_ms", lambda v: f"{v:,.3g} ms"))
    print(_line(_("user-item pairs per second per device"), r, "samples_per_s", _rate))
    print("  " + _("embedding tables: {gb} GB; {layout} ({share:.0%} of the rows on the device)").format(
        gb=f"{r['table_bytes'] / units.GIGA:,.1f}", layout=_(_LAYOUT_WORDS[r["layout"]]),
        share=r["table_share_on_device"]))
    print("\n".join(_sources(r, "recommender")))
    return 0


#: where a graph network's feature table lives, in words
_LAYOUT_GNN = {"one device": N_("on one device"), "sharded": N_("sharded over the devices' memory"),
               "host": N_("partly in host memory (it does not fit the devices)")}

#: what bounds a graph network's seed, in words
_BOUND_WORDS = {"link": N_("the feature rows held by the other devices, over the link"),
                "host": N_("the feature rows left in host memory, over PCIe"),
                "memory": N_("the feature rows read from this device's memory"),
                "compute": N_("the GAT layers' matmuls")}


def run_gnn(args):
    from .projection.gnn import gnn

    r, done = _project(args, gnn, args.device, args.model, precision=args.precision,
                       feature_precision=args.feature_precision, n_devices=args.devices)
    if done is not None:
        return done
    print(_("{device} × {n}, {model}, {precision} (features {feat})").format(
        device=r["name"], n=args.devices, model=r["model"], precision=r["precision"], feat=r["feature_precision"]))
    print(_line(_("seeds per second, all devices"), r, "samples_per_s", _rate))
    print(_line(_("seeds per second per device"), r, "samples_per_s_per_device", _rate))
    print("  " + _("{rows:,.0f} feature rows ({mb:.1f} MB) gathered per seed; {gb:,.0f} GB of features and graph, "
                   "{layout}").format(rows=r["rows_per_seed"], mb=r["feature_bytes_per_seed"] / units.MEGA,
                                      gb=r["store_bytes"] / units.GIGA, layout=_(_LAYOUT_GNN[r["layout"]])))
    if r["link"]:
        link = _("{link} between pairs, PCIe beyond").format(link=r["link"]) if r["link_pairs_only"] else r["link"]
        print("  " + _("remote rows over: {link}").format(link=link))
    print("  " + _("bound by: {what}").format(what=_(_BOUND_WORDS[r["bound"]])))
    print("\n".join(_sources(r, "gnn")))
    return 0
