"""The source articles' claims, checked with the formulas under explicit assumptions.

Each function restates one claim, recomputes it from catalogue figures and the
formulas, and returns a small table plus a verdict sentence computed from the
numbers. Every assumption is an argument, so a person can change it and see
whether the verdict moves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import units
from .catalog import find, load_catalog
from .i18n import _

__all__ = ["bert_t4_vs_v100", "edge_table_claims", "efficiency_claims", "edge_vs_cloud", "latency_edge_vs_cloud",
           "SEED_EDGE_TABLE"]


#: two projected latencies of one model closer than this share are called level, not a win [accelkit judgment]:
#: the engine's figures carry 20-30 % error on encoders (``accelkit validate``), and though two cards under one
#: model share most of it, a 1 % lead is no lead
TIE = 0.05


def _from_batch_up(holds):
    """The smallest batch from which ``holds`` (a boolean Series indexed by batch) is true at every larger
    batch too; None when it does not hold at the largest."""
    tail = holds.sort_index()[::-1].cummin()[::-1]
    return int(tail.index[tail.to_numpy()].min()) if tail.any() else None


def bert_t4_vs_v100(catalog=None, batches=(1, 2, 4, 8, 16, 32, 64, 128, 256), seq_len=128,
                    v100="V100 PCIe 32GB", t4="T4", precision="fp16", t4_int8=True, model="BERT-base"):
    """Source text 003 §2.2: "T4 beats V100 at small batch for BERT inference,
    because of memory bandwidth (T4: 320 GB/s vs V100: 900 GB/s)".

    Model: the projection engine's forward pass of an encoder over a batch,
    :func:`accelkit.projection.vision` layer by layer (each GEMM and attention product its
    own roofline at the achievable matmul rate and bandwidth, plus its kernels' fixed
    cost), the model the decision prices an encoder with and ``accelkit validate``
    checks on the TensorRT BERT demo and DeepLearningExamples.

    Parameters
    ----------
    batches : sequence of int
        Batch sizes to compare.
    seq_len : int
        Tokens per sequence (BERT inference is often 128).
    precision : str
        Format on both cards (fp16: both have tensor cores for it).
    t4_int8 : bool
        Also run the T4 in int8 (its tensor cores support it; V100's do not).

    Returns
    -------
    (pandas.DataFrame, str)
        Per batch and configuration: ``device, precision, batch, latency_ms`` (+
        ``_low``/``_high``), ``sequences_per_s``, ``sequences_per_s_per_w``,
        ``source``; and the verdict.
    """
    from . import projection

    catalog = load_catalog() if catalog is None else catalog
    configs = [(find(v100, catalog), precision), (find(t4, catalog), precision)]
    if t4_int8:
        configs.append((find(t4, catalog), "int8"))
    rows = []
    for device, p in configs:
        for b in batches:
            try:
                r = projection.vision(device["name"], model, precision=p, batch_size=b, seq_len=seq_len,
                                      catalog=catalog)
            except ValueError:
                break  # no published peak at this precision
            rows.append({
                "device": device["name"], "precision": p, "batch": b, "latency_ms": r["frame_ms"],
                "latency_ms_low": r["frame_ms_low"], "latency_ms_high": r["frame_ms_high"],
                "sequences_per_s": r["frames_per_s"],
                "sequences_per_s_per_w": r["frames_per_s"] / float(device["tdp_w"]),
                "source": f"matmul: {r['matmul_source']} | memory: {r['memory_source']}",
            })
    table = pd.DataFrame(rows)
    same = table[table["precision"] == precision].pivot(index="batch", columns="device", values="latency_ms")
    v_name, t_name = configs[0][0]["name"], configs[1][0]["name"]
    t4_faster = (same[t_name] < same[v_name]).any()
    eff = table[table["precision"] == precision].pivot(index="batch", columns="device", values="sequences_per_s_per_w")
    t4_greener = (eff[t_name] > eff[v_name]).all()
    ratio = (same[t_name] / same[v_name]).iloc[0]
    int8_lead = int8_level = None
    spread = np.nan
    if t4_int8 and "int8" in set(table["precision"]):
        t4_int8_ms = table[(table["precision"] == "int8")].set_index("batch")["latency_ms"]
        ratio_int8 = (t4_int8_ms / same[v_name]).dropna()
        # "from batch b up": every batch from b on, not the first one that happens to be ahead; within
        # TIE of each other the two cards are level, not one ahead
        int8_lead = _from_batch_up(ratio_int8 < 1.0 - TIE)
        int8_level = _from_batch_up(ratio_int8 <= 1.0 + TIE)
        if int8_level is not None:
            spread = float((ratio_int8[ratio_int8.index >= int8_level] - 1.0).abs().max())
    table.attrs["holds_on_speed"] = bool(t4_faster)
    table.attrs["t4_int8_faster_from_batch"] = int8_lead
    table.attrs["t4_int8_level_from_batch"] = int8_level
    table.attrs["t4_wins_per_watt"] = bool(t4_greener)
    speed = (_("On speed the claim holds at some batch sizes: at batch {batch} the {v100} finishes a {precision} "
               "forward pass in {v100_ms} ms and the {t4} in {t4_ms} ms ({ratio}× slower; projected).")
             if t4_faster else
             _("On speed the claim does not hold at any batch size: at batch {batch} the {v100} finishes a "
               "{precision} forward pass in {v100_ms} ms and the {t4} in {t4_ms} ms ({ratio}× slower; projected)."))
    verdict = (
        speed.format(batch=same.index[0], v100=v_name, t4=t_name, precision=precision,
                     v100_ms=f"{same[v_name].iloc[0]:.2f}", t4_ms=f"{same[t_name].iloc[0]:.2f}", ratio=f"{ratio:.1f}")
        + " " + _("Bandwidth favours the V100 ({v100_bw} vs {t4_bw} GB/s), so small, memory-bound batches are exactly "
                  "where it leads.").format(v100_bw=f"{configs[0][0]['memory_bw_gbs']:.0f}",
                                            t4_bw=f"{configs[1][0]['memory_bw_gbs']:.0f}") + " "
        + (_("The {t4} does win per watt at every batch ({t4_eff} vs {v100_eff} sequences/s per W at batch "
             "{batch}), and on rental price, which is the better reading of the anecdote.").format(
            t4=t_name, t4_eff=f"{eff[t_name].iloc[0]:.2f}", v100_eff=f"{eff[v_name].iloc[0]:.2f}", batch=eff.index[0])
           if t4_greener else "")
        + (" " + _("Only in int8 -- which the T4's tensor cores run and the V100's do not -- does the {t4} "
                   "overtake the {v100}, from batch {batch} up: at larger batches, not smaller ones.").format(
            t4=t_name, v100=v_name, batch=int8_lead) if int8_lead else
           " " + _("Only in int8 -- which the T4's tensor cores run and the V100's do not -- does the {t4} draw "
                   "level with the {v100}: from batch {batch} up the two are within {spread} of each other "
                   "(projected), at larger batches, not smaller ones.").format(
            t4=t_name, v100=v_name, batch=int8_level, spread=f"{spread:.0%}" if spread >= 0.01 else "1%")
           if int8_level else "")
    )
    return table, verdict


def efficiency_claims(catalog=None):
    """Source text 003 §2.5: "A100: 312 TFLOPS / 400 W = 0.78 TFLOPS/W; Jetson Orin:
    40 TFLOPS / 50 W = 0.8 TFLOPS/W", against the catalogue's datasheet figures.

    Returns
    -------
    (pandas.DataFrame, str)
        ``device, article_tflops, article_w, article_per_w, catalogue_figure,
        catalogue_w, catalogue_per_w, basis`` and a verdict.
    """
    from .catalog import int8_dense_estimate

    catalog = load_catalog() if catalog is None else catalog
    a100 = find("A100 80GB SXM", catalog)
    rows = [{
        "device": a100["name"], "article_tflops": 312.0, "article_w": 400.0,
        "catalogue_figure": a100["bf16_tflops"], "catalogue_w": a100["tdp_w"], "basis": _("dense bf16/fp16 tensor"),
    }]
    int8, basis = int8_dense_estimate(catalog)
    for name in ("Jetson AGX Orin 64GB", "Jetson Orin NX 16GB", "Jetson Orin Nano Super 8GB", "Jetson Orin Nano 8GB"):
        try:
            row = find(name, catalog)
        except ValueError:
            continue
        rows.append({"device": row["name"], "article_tflops": 40.0, "article_w": 50.0,
                     "catalogue_figure": units.flops_to_tflops(int8[row.name]), "catalogue_w": row["tdp_w"],
                     "basis": _("int8 TOP/s, {basis} ({mode})").format(basis=_(basis[row.name]),
                                                                          mode=row["power_mode"])})
    table = pd.DataFrame(rows)
    table["article_per_w"] = table["article_tflops"] / table["article_w"]
    table["catalogue_per_w"] = table["catalogue_figure"] / table["catalogue_w"]
    orin = table.iloc[1:]
    verdict = _(
        "A100: {tflops} / {watts} W = {per_w} TFLOP/s per W, as the article says. Jetson Orin: no module matches "
        "\"40 TFLOPS at 50 W\". 40 is the Orin Nano 8GB's 2:4-sparse INT8 figure (TOP/s, not TFLOP/s, at 15 W); at "
        "the AGX Orin's MAXN mode the datasheet gives 275 sparse INT8 TOP/s. Dense INT8 per watt of the Orin modules "
        "ranges {low}-{high} TOP/s per W -- but INT8 TOP/s and BF16 TFLOP/s are different units, so the article's "
        "side-by-side comparison is not like for like."
    ).format(tflops=f"{a100['bf16_tflops']:g}", watts=f"{a100['tdp_w']:g}",
             per_w=f"{table.loc[0, 'catalogue_per_w']:.2f}", low=f"{orin['catalogue_per_w'].min():.2f}",
             high=f"{orin['catalogue_per_w'].max():.2f}")
    return table, verdict


def edge_vs_cloud(catalog=None, streams=10, fps=30.0, model="YOLOv8s", edge_device="Jetson Orin Nano Super 8GB",
                  edge_unit_price_usd=None, cloud_device="T4", cloud_usd_per_hour=None, utilization=0.3,
                  horizon_months=36, electricity_usd_per_kwh=0.15, edge_maintenance_per_year=0.10,
                  install_usd_per_unit=0.0, cloud_network_usd_per_month=0.0, discount_rate_per_year=0.0,
                  claimed_saving=0.62):
    """Source text 003 §2.5: an edge deployment on Jetson devices cost 62 % less over
    three years than cloud inference.

    Model: the vision workload needs ``streams × fps × FLOP per frame`` operations per
    second; edge devices and cloud GPUs each deliver their dense INT8 rate × the
    utilisation; whole devices / instances are bought or rented to cover it. Edge:
    purchase (+ installation) at month 0, energy at the device's TDP around the clock,
    a yearly maintenance fraction. Cloud: the instance's on-demand price around the
    clock, plus any network cost. See :mod:`accelkit.tco`.

    Returns
    -------
    dict
        ``compare`` (tco.compare table), ``cumulative`` (long table for the chart),
        ``edge_units``, ``cloud_instances``, ``required_ops``, ``saving`` (fraction),
        ``edge_price_for_claim`` (the edge unit price at which the saving equals the
        claim), ``assumptions`` and ``verdict``.
    """
    from . import tco
    from .catalog import int8_dense_estimate
    from .demand import devices_needed

    catalog = load_catalog() if catalog is None else catalog
    from .projection.vision import frame_flops

    per_frame, preset = frame_flops(model)
    required = streams * fps * per_frame
    int8, basis = int8_dense_estimate(catalog)
    edge = find(edge_device, catalog)
    cloud_row = find(cloud_device, catalog)
    edge_ops, cloud_ops = int8[edge.name], int8[cloud_row.name]
    if np.isnan(edge_ops):
        raise ValueError(f"edge_device {edge['name']!r} publishes no INT8 figure; pick another edge device")
    if np.isnan(cloud_ops):
        raise ValueError(f"cloud_device {cloud_row['name']!r} publishes no INT8 figure; pick another cloud device")
    price = edge["price_usd"] if edge_unit_price_usd is None else edge_unit_price_usd
    if price is None or np.isnan(price):
        raise ValueError(f"edge_unit_price_usd: the catalogue has no list price for {edge['name']}; enter one")
    hourly = cloud_row["cloud_usd_per_hour"] if cloud_usd_per_hour is None else cloud_usd_per_hour
    if hourly is None or np.isnan(hourly):
        raise ValueError(f"cloud_usd_per_hour: no cloud price for {cloud_row['name']} in the catalogue; enter one")
    n_edge = int(devices_needed(required, edge_ops, utilization))
    instances = int(devices_needed(required, cloud_ops, utilization))

    def options(unit_price):
        return [
            tco.edge(f"edge: {n_edge} × {edge['name']}", n_edge, unit_price, edge["tdp_w"],
                     electricity_usd_per_kwh=electricity_usd_per_kwh, maintenance_fraction_per_year=edge_maintenance_per_year,
                     install_usd=install_usd_per_unit * n_edge, lifetime_years=max(horizon_months / 12.0, 1.0)),
            tco.cloud(f"cloud: {instances} × {cloud_row['name']}", hourly, instances,
                      fixed_usd_per_month=cloud_network_usd_per_month),
        ]

    table = tco.compare(options(price), horizon_months, discount_rate_per_year)
    edge_total, cloud_total = table.loc[0, "total_usd"], table.loc[1, "total_usd"]
    saving = 1.0 - edge_total / cloud_total
    # the edge total is linear in the unit price: solve for the price giving the claimed saving
    t0 = tco.compare(options(0.0), horizon_months, discount_rate_per_year).loc[0, "total_usd"]
    t1 = tco.compare(options(1000.0), horizon_months, discount_rate_per_year).loc[0, "total_usd"]
    slope = (t1 - t0) / 1000.0
    price_for_claim = ((1.0 - claimed_saving) * cloud_total - t0) / slope if slope > 0 else np.nan
    verdict = _(
        "{streams} streams × {fps} fps of {model} ({gflop} GFLOP per frame) need {tops} TOP/s: {n_edge} × "
        "{edge} ({edge_tops} INT8 TOP/s, {basis}) or {instances} × {cloud} in the cloud at {utilization} "
        "utilisation. Over {months} months the edge costs {edge_total} and the cloud {cloud_total}: the edge saves "
        "{saving} (the article: {claimed})."
    ).format(streams=streams, fps=f"{fps:g}", model=preset["name"], gflop=f"{per_frame / units.GIGA:.1f}",
             tops=f"{units.flops_to_tflops(required):.2f}", n_edge=n_edge, edge=edge["name"],
             edge_tops=f"{units.flops_to_tflops(edge_ops):.1f}", basis=_(basis[edge.name]), instances=instances,
             cloud=cloud_row["name"], utilization=f"{utilization:.0%}", months=horizon_months,
             edge_total=f"${edge_total:,.0f}", cloud_total=f"${cloud_total:,.0f}", saving=f"{saving:.0%}",
             claimed=f"{claimed_saving:.0%}") + " " + (
        _("The saving would fall to {claimed} at an edge price of {price_for_claim} per unit (instead of "
          "{price}).").format(claimed=f"{claimed_saving:.0%}", price_for_claim=f"${price_for_claim:,.0f}",
                              price=f"${price:,.0f}")
        if price_for_claim == price_for_claim and price_for_claim > 0 else
        _("No edge price brings the saving down to {claimed}: running costs alone exceed it.").format(
            claimed=f"{claimed_saving:.0%}"))
    return {
        "compare": table, "cumulative": tco.monthly_cumulative(options(price), horizon_months, discount_rate_per_year),
        "edge_units": n_edge, "cloud_instances": instances, "required_ops": required, "saving": saving,
        "edge_price_for_claim": price_for_claim, "edge_unit_price_usd": price, "cloud_usd_per_hour": hourly,
        "verdict": verdict,
    }


def latency_edge_vs_cloud(catalog=None, model="YOLOv8s", edge_device="Jetson Orin Nano Super 8GB", cloud_device="T4",
                          utilization=0.3, rtt_ms=40.0, uplink_mbps=20.0, frame_kb=150.0, server_overhead_ms=20.0,
                          edge_overhead_ms=10.0, claimed_cloud_ms=380.0, claimed_edge_ms=28.0):
    """Source text 003 §3.2: cloud inference averaged 380 ms; an AGX Orin at the edge
    (TensorRT, INT8, DLA) brought it to 28 ms.

    Model: cloud = network round trip + frame upload (``frame_kb × 8 / uplink_mbps``)
    + server overhead (decode, queueing, pre/post-processing) + inference; edge =
    inference + local overhead. Inference time: one INT8 frame through
    :func:`accelkit.projection.vision.vision` at ``utilization`` of the dense peak
    (compute, weight traffic, small-batch floor) -- the edge chapter's and the
    decision's figure.

    Returns
    -------
    (pandas.DataFrame, str)
        One row per component and path (``path, component, ms``), and a verdict.
    """

    catalog = load_catalog() if catalog is None else catalog
    for name, value in (("rtt_ms", rtt_ms), ("server_overhead_ms", server_overhead_ms),
                        ("edge_overhead_ms", edge_overhead_ms)):
        if not value >= 0:
            raise ValueError(f"{name} must be a time in ms >= 0; got {value}")
    for name, value in (("uplink_mbps", uplink_mbps), ("frame_kb", frame_kb), ("utilization", utilization)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0; got {value}")
    from .projection.vision import vision

    edge, cloud = find(edge_device, catalog), find(cloud_device, catalog)
    # one frame (batch 1) through the one vision model the edge chapter and the decision use
    infer_cloud, infer_edge = (vision(d["name"], model, "int8", 1, catalog=catalog, utilization=utilization)["frame_ms"]
                               for d in (cloud, edge))
    upload = frame_kb * units.BITS_PER_BYTE / uplink_mbps  # kbit / (Mbit/s) = ms
    rows = [
        ("cloud", "network round trip", rtt_ms), ("cloud", "frame upload", upload),
        ("cloud", "server overhead", server_overhead_ms), ("cloud", f"inference on {cloud['name']}", infer_cloud),
        ("edge", f"inference on {edge['name']}", infer_edge), ("edge", "local overhead", edge_overhead_ms),
    ]
    table = pd.DataFrame(rows, columns=["path", "component", "ms"])
    totals = table.groupby("path")["ms"].sum()
    network = rtt_ms + upload
    verdict = _(
        "With these assumptions the cloud path takes {cloud_ms} ms and the edge path {edge_ms} ms (the article: "
        "{claimed_cloud} → {claimed_edge} ms). The network -- round trip and upload -- is {share} of the cloud time; "
        "inference itself is {infer_cloud} ms on the {cloud} and {infer_edge} ms on the {edge}. Most of the gain "
        "comes from not crossing the network, not from a faster chip."
    ).format(cloud_ms=f"{totals['cloud']:.0f}", edge_ms=f"{totals['edge']:.0f}", claimed_cloud=f"{claimed_cloud_ms:.0f}",
             claimed_edge=f"{claimed_edge_ms:.0f}", share=f"{network / totals['cloud']:.0%}",
             infer_cloud=f"{infer_cloud:.1f}", cloud=cloud["name"], infer_edge=f"{infer_edge:.1f}", edge=edge["name"])
    return table, verdict


#: the source article's edge table (seed 003 §3.2), as printed
SEED_EDGE_TABLE = pd.DataFrame(
    [
        ("Jetson Nano 4GB", 0.5, 4.0, 5.0, "light detection"),
        ("Jetson Xavier NX 8GB", 21.0, 8.0, 15.0, "multi-stream video analytics"),
        ("Ascend 310", 8.0, 8.0, 8.0, "Huawei ecosystem products"),
    ],
    columns=["device", "article_tops", "article_memory_gb", "article_w", "article_use"],
)


def edge_table_claims(catalog=None):
    """The article's edge table next to the catalogue's datasheet figures.

    Returns
    -------
    (pandas.DataFrame, str)
        Article columns plus ``int8_tops, fp16_tflops, memory_gb, tdp_w, power_mode``
        and ``comment``; a verdict.
    """
    catalog = load_catalog() if catalog is None else catalog
    rows = []
    for _i, claim in SEED_EDGE_TABLE.iterrows():
        d = find(claim["device"], catalog)
        comment = []
        if np.isnan(d["int8_tops"]) and not np.isnan(d["fp16_tflops"]):
            comment.append(_("the {article} is an FP16 figure ({fp16} TFLOP/s), not INT8 TOP/s").format(
                article=f"{claim['article_tops']:g}", fp16=f"{d['fp16_tflops']:g}"))
        elif d["int8_tops"] == claim["article_tops"]:
            comment.append(_("INT8 figure matches"))
        elif not np.isnan(d["int8_tops"]):
            comment.append(_("datasheet INT8: {int8} TOP/s").format(int8=f"{d['int8_tops']:g}")
                           + (_("; ") + _("{article} matches its FP16 TFLOP/s").format(article=f"{claim['article_tops']:g}")
                              if d["fp16_tflops"] == claim["article_tops"] else ""))
        if d["tdp_w"] != claim["article_w"]:
            comment.append(_("power: {watts} W in the catalogue ({mode})").format(watts=f"{d['tdp_w']:g}",
                                                                                mode=d["power_mode"]))
        if np.isnan(d["memory_gb"]):
            comment.append(_("no vendor figure for memory"))
        rows.append({**claim.to_dict(), "int8_tops": d["int8_tops"], "fp16_tflops": d["fp16_tflops"],
                     "memory_gb": d["memory_gb"], "tdp_w": d["tdp_w"], "power_mode": d["power_mode"],
                     "comment": _("; ").join(comment)})
    table = pd.DataFrame(rows)
    verdict = _("Of the article's three edge rows only the Xavier NX matches its datasheet (21 INT8 TOP/s at 15 W). "
                "The Jetson Nano's 0.5 is FP16 TFLOP/s (472 GFLOP/s), not TOP/s; the Ascend 310's 8 is its FP16 "
                "figure -- Huawei quotes 16 INT8 TOP/s at 8 W -- and no Huawei page gives 8 GB.")
    return table, verdict
