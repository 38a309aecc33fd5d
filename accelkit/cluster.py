"""A data-parallel training cluster of one device type, as the engine projects it.

:func:`cluster_step` -- one optimizer step on ``n`` devices; :func:`cluster_scaling` --
the scaling curve over cluster sizes; :func:`accumulation_sweep` -- the micro-batch /
accumulation splits of one global batch. The cluster chapter (06) calls these; all
three go through :func:`accelkit.projection.training` /
:func:`~accelkit.projection.training_sweeps.training_sweep`. Split out of
:mod:`accelkit.sizing` (one job per module).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import memory, units
from .catalog import peak_flops
from .sizing import model_of

__all__ = ["cluster_step", "cluster_scaling", "accumulation_sweep", "cluster_footprint"]


def cluster_step(scenario, device, n_devices, micro_batch, accumulation_steps=1, devices_per_node=8,
                 network_gbps=None, overlap=None, intra_gbs=None, measurements=None):
    """One data-parallel training step on a cluster of one device type, as the engine projects it.

    Parameters
    ----------
    scenario : Scenario
        Model, sequence length, precision, tokens, ZeRO stage (and ``utilization``
        when the person gives their own MFU).
    device : pandas.Series
        A catalogue row.
    n_devices : int
        Devices in the cluster (data parallel).
    micro_batch : int
        Sequences per device per forward/backward pass.
    accumulation_steps : int
        Micro-batches accumulated per optimizer step (one gradient all-reduce each).
    devices_per_node : int
        Devices per server.
    network_gbps : float, optional
        Network bandwidth per device between servers [Gbit/s]; default: the device's
        reference system (the source text's training cluster uses 200 Gb/s RDMA).
    overlap : float in [0, 1], optional
        Share of the all-reduce hidden behind the backward pass (default: the
        engine's fitted ``dp_overlap``).
    intra_gbs : float, optional
        Per-direction bandwidth inside a server [GB/s]; default: the catalogue's link.

    Returns
    -------
    dict
        ``compute_s`` (compute and non-matmul time per optimizer step), ``comm_s``
        (exposed gradient all-reduce), ``comm_total_s`` (before overlap with the backward pass), ``step_s`` (+ ``_low``/``_high``),
        ``efficiency`` (share of the step not spent waiting on communication),
        ``global_batch``, ``tokens_per_s``, ``days`` (+ range), ``mfu``,
        ``activations_gb`` (per device), ``intra_bw``, ``inter_bw`` [bytes/s],
        ``n_nodes``, ``peak_flops``, ``matmul_source``, ``network_source``.
    """
    from . import projection
    from ._validate import check_integer, check_number

    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    check_integer("micro_batch", micro_batch, low=1, what="a micro-batch size")
    check_integer("accumulation_steps", accumulation_steps, low=1, what="a number of micro-batches")
    check_integer("devices_per_node", devices_per_node, low=1, what="a number of devices per node")
    if network_gbps is not None:
        check_number("network_gbps", network_gbps, low=0, low_inclusive=False, expected="a bandwidth in Gbit/s > 0")
    m = model_of(scenario)
    catalog, ceil, peak = _cluster_device(scenario, device, n_devices, intra_gbs, measurements)
    overrides = {} if overlap is None else {"dp_overlap": float(overlap)}
    r = projection.training(catalog["name"].iloc[0], m["preset"]["name"] if m["preset"] is not None else
                            {"name": "custom", "params": m["params"]}, tokens=scenario.tokens,
                            precision=scenario.precision, n_devices=n_devices, seq_len=scenario.seq_len,
                            global_batch_tokens=micro_batch * accumulation_steps * n_devices * scenario.seq_len,
                            micro_batch_size=micro_batch, zero_stage=scenario.zero_stage,
                            devices_per_node=devices_per_node, network_gbps=network_gbps, catalog=catalog,
                            measurements=measurements, check_memory=False, utilization=scenario.utilization,
                            **overrides)
    net_bw, _ = projection.systems.network_bandwidth(ceil, catalog, network_gbps)
    act = 0.0
    preset = m["preset"]
    if preset is not None and pd.notna(preset.get("d_model")) and pd.notna(preset.get("n_layers")):
        act = memory.activation_bytes_per_layer(scenario.seq_len, micro_batch, preset["d_model"], preset["n_heads"],
                                                recompute="selective") * preset["n_layers"]
    per_node = min(devices_per_node, n_devices)
    compute = r["compute_s"] + r["elementwise_s"] + r["optimizer_s"]
    return {
        "compute_s": compute, "comm_s": r["dp_comm_s"], "comm_total_s": r["dp_comm_total_s"], "step_s": r["step_s"], "step_s_low": r["step_s_low"],
        "step_s_high": r["step_s_high"], "efficiency": 1.0 - r["dp_comm_s"] / r["step_s"],
        "global_batch": micro_batch * accumulation_steps * n_devices, "tokens_per_s": r["tokens_per_s"],
        "days": r["days"], "days_low": r["days_low"], "days_high": r["days_high"], "mfu": r["mfu"],
        "activations_gb": act / units.GIGA, "intra_bw": float(ceil["allreduce_bw"].iloc[0]),
        "inter_bw": float(net_bw[0]), "n_nodes": int(np.ceil(n_devices / per_node)), "peak_flops": peak,
        "matmul_source": r["matmul_source"], "network_source": r["network_source"],
    }


def _cluster_device(scenario, device, n_devices, intra_gbs, measurements):
    """The one-row catalogue of a cluster's device (with the person's link figure), its
    ceilings and its dense peak; a clear error where the catalogue lacks a figure."""
    from . import projection

    peak = float(peak_flops(device.to_frame().T, scenario.precision).iloc[0])
    if np.isnan(peak):
        raise ValueError(f"device {device['name']!r} publishes no dense {scenario.precision} peak; pick another "
                         "device or precision")
    row = device.copy()
    if intra_gbs is not None:
        row["interconnect_gbs"] = 2.0 * float(intra_gbs)  # the catalogue stores both directions
    catalog = pd.DataFrame([row]).reset_index(drop=True)
    ceil = projection.device_ceilings(catalog, measurements)
    if not np.isfinite(ceil["link_bw"].iloc[0]) and n_devices > 1:
        raise ValueError(f"device {device['name']!r}: no interconnect or PCIe figure; enter the bandwidth inside a server")
    return catalog, ceil, peak


def _sweep(scenario, device, n_devices, micro_batch, accumulation_steps, devices_per_node, network_gbps, overlap,
           intra_gbs, measurements):
    from . import projection
    from ._validate import check_integer, check_number

    for name, values, what in (("n_devices", n_devices, "a number of devices"),
                               ("micro_batch", micro_batch, "a micro-batch size"),
                               ("accumulation_steps", accumulation_steps, "a number of micro-batches")):
        for v in np.atleast_1d(values):
            check_integer(name, int(v) if float(v) == int(v) else v, low=1, what=what)
    check_integer("devices_per_node", devices_per_node, low=1, what="a number of devices per node")
    if network_gbps is not None:
        check_number("network_gbps", network_gbps, low=0, low_inclusive=False, expected="a bandwidth in Gbit/s > 0")
    m = model_of(scenario)
    catalog, _, _ = _cluster_device(scenario, device, int(np.max(n_devices)), intra_gbs, measurements)
    overrides = {} if overlap is None else {"dp_overlap": float(overlap)}
    return projection.training_sweep(
        catalog, m["preset"]["name"] if m["preset"] is not None else {"name": "custom", "params": m["params"]},
        n_devices, micro_batch, accumulation_steps, tokens=scenario.tokens, precision=scenario.precision,
        seq_len=scenario.seq_len, zero_stage=scenario.zero_stage, devices_per_node=devices_per_node,
        network_gbps=network_gbps, measurements=measurements, utilization=scenario.utilization, **overrides)


def cluster_scaling(scenario, device, counts, micro_batch, accumulation_steps=1, devices_per_node=8,
                    network_gbps=None, overlap=None, intra_gbs=None, measurements=None):
    """:func:`cluster_step` over several device counts, projected for all of them at once
    (:func:`accelkit.projection.training_sweeps.training_sweep`).

    Returns
    -------
    pandas.DataFrame
        One row per count: ``n_devices, step_s, compute_s, comm_s, comm_total_s,
        efficiency, tokens_per_s, days, n_nodes``.
    """
    out = _sweep(scenario, device, [int(n) for n in counts], micro_batch, accumulation_steps, devices_per_node,
                 network_gbps, overlap, intra_gbs, measurements)
    return out.drop(columns=["micro_batch_size", "accumulation_steps"])


def accumulation_sweep(scenario, device, n_devices, global_batch, steps=(1, 2, 4, 8, 16, 32), devices_per_node=8,
                       network_gbps=None, overlap=None, intra_gbs=None, measurements=None):
    """One global batch split into ``k`` accumulated micro-batches per device, for each
    ``k`` of ``steps`` that divides it evenly (the source text's advice for memory).

    Returns
    -------
    pandas.DataFrame
        ``accumulation_steps, micro_batch`` [sequences per device per pass],
        ``activations_gb`` [GB per device, selective recomputation], ``efficiency``,
        ``step_s`` -- as :func:`cluster_step` projects each split.
    """
    per = {k: global_batch / (n_devices * k) for k in steps}
    ks = [k for k, b in per.items() if b >= 1 and b == int(b)]
    columns = ["accumulation_steps", "micro_batch", "activations_gb", "efficiency", "step_s"]
    if not ks:
        return pd.DataFrame(columns=columns)
    micro = np.array([int(per[k]) for k in ks])
    out = _sweep(scenario, device, n_devices, micro, np.array(ks), devices_per_node, network_gbps, overlap, intra_gbs,
                 measurements)
    preset = model_of(scenario)["preset"]
    act = np.zeros(len(ks))
    if preset is not None and pd.notna(preset.get("d_model")) and pd.notna(preset.get("n_layers")):
        act = memory.activation_bytes_per_layer(scenario.seq_len, micro, preset["d_model"], preset["n_heads"],
                                                recompute="selective") * preset["n_layers"]
    out = out.rename(columns={"micro_batch_size": "micro_batch"})
    out["activations_gb"] = act / units.GIGA
    return out[columns]


def cluster_footprint(scenario, device, step, node_overhead_w):
    """Memory per device and the energy of a training run on a cluster (from :func:`cluster_step`).

    Parameters
    ----------
    scenario : Scenario
        Precision, ZeRO stage, ``n_devices``, ``pue`` and ``electricity_usd_per_kwh`` are used.
    device : pandas.Series
        A catalogue row (``memory_gb``, ``tdp_w``).
    step : dict
        :func:`cluster_step` of the same run (``activations_gb``, ``n_nodes``, ``days``).
    node_overhead_w : float
        Power of one server beyond its accelerators (CPUs, NICs, fans) [W].

    Returns
    -------
    dict
        ``state_gb`` (model state per device: weights, gradients and Adam moments under the
        scenario's ZeRO stage, :func:`accelkit.memory.training_bytes`), ``per_device_gb``
        (state + activations), ``usable_gb`` (:func:`accelkit.memory.usable_bytes`), ``fits``,
        ``it_w`` (devices at TDP + servers' overhead), ``facility_w`` (× PUE), ``job_hours``,
        ``kwh`` and ``electricity_usd``. Reference: The Green Grid, PUE (WP#49, 2012).
    """
    s = scenario
    m = model_of(s)
    state = units.bytes_to_gb(memory.training_bytes(
        m["params"], "mixed" if s.precision in ("bf16", "fp16", "fp8") else s.precision, "adam", s.zero_stage,
        s.n_devices))
    per_device = state + step["activations_gb"]
    mem = device["memory_gb"]
    usable = units.bytes_to_gb(memory.usable_bytes(units.gb_to_bytes(mem))) if mem == mem else np.nan
    it_w = s.n_devices * device["tdp_w"] + step["n_nodes"] * node_overhead_w
    facility_w = it_w * s.pue
    job_hours = step["days"] * units.HOURS_PER_DAY
    kwh = units.watts_to_kw(facility_w) * job_hours
    return {"state_gb": state, "per_device_gb": per_device, "usable_gb": usable, "fits": bool(per_device <= usable),
            "it_w": it_w, "facility_w": facility_w, "job_hours": job_hours, "kwh": kwh,
            "electricity_usd": kwh * s.electricity_usd_per_kwh}
