"""Right-sizing: what the observed work needs of each candidate device.

The observed work is the busy time of the monitored GPUs expressed in devices --
``effective_devices`` = Σ mean utilisation -- times the monitored device's rate.
For a candidate::

    devices for the work   = effective_devices × rate(monitored) / rate(candidate)

and, by how the job holds its memory (``memory_layout``):

* ``"sharded"`` (default; tensor/pipeline parallel, FSDP/ZeRO-3 -- the memory is split)::

      devices for the memory = Σ_GPUs peak memory used / memory(candidate)
      devices                = ceil(max of the two), at least 1

* ``"replicated"`` (data parallel: every GPU holds a copy of the model and its state)::

      devices per replica    = ceil(largest GPU's peak memory used / memory(candidate))
      devices                = ceil(devices for the work / devices per replica) × devices per replica

The rate is the projection engine's *achievable* ceiling (datasheet × published
efficiency, :func:`accelkit.projection.device_ceilings`): dense matmul FLOP/s at the
workload's precision (default bf16) or, when the verdict is memory-bound, device
memory bandwidth. Where a device has no efficiency-based figure the datasheet peak
is used, and the ``rate_basis`` column says so.

Assumptions, stated where the figures are shown: the busy time would run at the
candidate's rate in proportion (a job that is input-bound stays input-bound on a
faster chip -- fix the input first); the sharded memory figure adds up every GPU's peak
use, which over-counts when each GPU holds a copy of the model (data parallelism) --
say ``memory_layout="replicated"`` then; the memory of the model itself (chapter 01)
is the sharper figure.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..i18n import N_, _

from .samples import MonitorError

__all__ = ["right_size", "measured_demand", "sentence", "RIGHT_SIZE_COLUMNS", "MEMORY_LAYOUTS"]

#: How a job holds its memory across its GPUs (see the module docstring).
MEMORY_LAYOUTS = ("sharded", "replicated")

RIGHT_SIZE_COLUMNS = ["name", "vendor", "segment", "rate", "rate_unit", "rate_basis", "rate_source",
                      "devices_for_work", "devices_for_memory", "devices", "limited_by", "memory_bytes",
                      "tdp_w_total", "is_monitored"]


def _basis(summary, basis):
    if basis is None:
        return "memory" if summary.verdict == "memory-bound" else "compute"
    if basis not in ("compute", "memory"):
        raise MonitorError(f"basis must be 'compute' or 'memory'; got {basis!r}")
    return basis


def _rates(ceil, basis, precision):
    if basis == "compute":
        achievable, peak = ceil[f"matmul_{precision}"], ceil[f"peak_{precision}"]
        source = ceil[f"matmul_{precision}_source"]
        unit = "FLOP/s"
    else:
        achievable, peak, source, unit = ceil["memory_bw"], ceil["memory_bw_peak"], ceil["memory_bw_source"], "bytes/s"
    use_peak = achievable.isna() & peak.notna()
    rate = achievable.where(~use_peak, peak)
    kind = pd.Series(np.where(use_peak, N_("datasheet peak (no published efficiency)"),
                              N_("achievable (datasheet × published efficiency)")), index=ceil.index)
    return rate.astype(float), kind, source.where(~use_peak, "datasheet"), unit


def right_size(summary, candidates=None, precision="bf16", basis=None, catalog=None, n=8, segments=("datacenter",),
               memory_layout="sharded"):
    """The right-size table: one row per candidate device, fewest devices first.

    Parameters
    ----------
    summary : Summary
        From :func:`accelkit.monitor.summarize`; its ``device`` must be a catalogue name.
    candidates : list of str, optional
        Device names; default the catalogue's devices in ``segments`` with a figure.
    precision : str
        Matmul precision of the workload (``bf16`` default; any of
        :data:`accelkit.projection.COMPUTE_PRECISIONS`).
    basis : {"compute", "memory"}, optional
        Default: memory when the verdict is memory-bound, else compute.
    n : int
        Rows to keep (the monitored device is always kept).
    memory_layout : {"sharded", "replicated"}
        ``sharded`` adds up every GPU's peak memory (the model is split across them);
        ``replicated`` takes the largest GPU's peak as one copy that each replica holds.

    Returns
    -------
    DataFrame with :data:`RIGHT_SIZE_COLUMNS`; ``attrs`` hold ``effective_devices``,
    ``basis``, ``precision``, ``memory_needed_bytes`` and ``monitored``.
    """
    from ..catalog import find
    from ..projection import COMPUTE_PRECISIONS, device_ceilings
    from ..projection.ceilings import catalog_or_default

    if not summary.device:
        raise MonitorError("right-sizing needs to know which catalogue device was monitored; "
                           + (summary.note or "pass --device NAME"))
    if precision not in COMPUTE_PRECISIONS:
        raise MonitorError(f"precision must be one of {', '.join(COMPUTE_PRECISIONS)}; got {precision!r}")
    if memory_layout not in MEMORY_LAYOUTS:
        raise MonitorError(f"memory_layout must be one of {', '.join(MEMORY_LAYOUTS)}; got {memory_layout!r}")
    basis = _basis(summary, basis)
    cat = catalog_or_default(catalog)
    ceil = device_ceilings(cat)
    rate, kind, source, unit = _rates(ceil, basis, precision)
    monitored = find(summary.device, cat)
    src_rate = float(rate.loc[monitored.name])
    if not src_rate > 0:
        raise MonitorError(f"{summary.device} has no {precision} dense figure in the catalogue; "
                           "choose another precision (--precision)")
    if candidates:
        idx = [find(c, cat).name for c in candidates]
    else:
        mask = cat["segment"].isin(segments) & rate.gt(0) & ceil["memory_bytes"].gt(0)
        idx = list(cat.index[mask])
    if monitored.name not in idx:
        idx.append(monitored.name)
    idx = list(dict.fromkeys(idx))
    work = summary.effective_devices * src_rate
    key = "memory_used_total_bytes" if memory_layout == "sharded" else "memory_used_max_bytes"
    memory_needed = summary.overall.get(key, float("nan"))
    table = pd.DataFrame({
        "name": cat.loc[idx, "name"], "vendor": cat.loc[idx, "vendor"], "segment": cat.loc[idx, "segment"],
        "rate": rate.loc[idx], "rate_unit": unit, "rate_basis": kind.loc[idx], "rate_source": source.loc[idx],
        "memory_bytes": ceil.loc[idx, "memory_bytes"].astype(float),
        "tdp_w": cat.loc[idx, "tdp_w"].astype(float),
    })
    work_devices = (work / table["rate"]).to_numpy(float)
    memory_devices = (memory_needed / table["memory_bytes"]).to_numpy(float)
    table["devices_for_work"] = work_devices
    table["devices_for_memory"] = memory_devices
    # 1e-9 keeps an exact fit (2.0000000001 from float noise) at 2 devices.
    whole_work = np.ceil(work_devices - 1e-9).clip(min=1)
    if memory_layout == "sharded":
        need = np.fmax(whole_work, np.ceil(np.nan_to_num(memory_devices) - 1e-9))
    else:
        per_replica = np.ceil(np.nan_to_num(memory_devices) - 1e-9).clip(min=1)
        need = np.ceil(work_devices / per_replica - 1e-9).clip(min=1) * per_replica
    table["devices"] = np.where(np.isfinite(need), need, np.nan)
    table["limited_by"] = np.where(table["devices"].to_numpy(float) > whole_work, "memory", "work")
    table["tdp_w_total"] = table["devices"] * table["tdp_w"]
    table["is_monitored"] = table.index == monitored.name
    table = table[table["devices"].notna()].sort_values(["devices", "tdp_w_total", "name"], na_position="last")
    keep = table.head(n)
    if not keep["is_monitored"].any():
        keep = pd.concat([keep, table[table["is_monitored"]]])
    out = keep[RIGHT_SIZE_COLUMNS].reset_index(drop=True)
    out.attrs.update({"effective_devices": summary.effective_devices, "basis": basis, "precision": precision,
                      "memory_needed_bytes": memory_needed, "memory_layout": memory_layout, "monitored": summary.device, "n_gpus": summary.n_gpus,
                      "mean_utilization": summary.mean_utilization, "work": work, "work_unit": unit})
    return out


def sentence(table):
    """'your 8 A100 80GB SXM did the work of 2.4; 3 A100 80GB SXM would do it, or 1 H200' (from :func:`right_size`)."""
    a = table.attrs
    same = table[table["is_monitored"]]
    best = table[~table["is_monitored"]].head(1)
    what = basis_words(a)
    text = _("your {n} {device} did the work of {effective} (mean utilisation {utilisation})").format(
        n=a["n_gpus"], device=a["monitored"], effective=f"{a['effective_devices']:.1f}",
        utilisation=f"{a['mean_utilization']:.0%}")
    parts = []
    if len(same):
        parts.append(_("{n} {device} would do it").format(n=int(same["devices"].iloc[0]), device=a["monitored"]))
    if len(best) and best["devices"].iloc[0] <= (same["devices"].iloc[0] if len(same) else np.inf):
        parts.append(_("{n} {device} would do it").format(n=int(best["devices"].iloc[0]), device=best["name"].iloc[0]))
    if parts:
        text += "; " + _(", or ").join(parts)
    return text + _(" (by {what})").format(what=what)


def basis_words(attrs):
    """What a right-size table counts by, in words: "bf16 dense matmul, achievable figures"."""
    if attrs.get("basis") == "compute":
        return _("{precision} dense matmul, achievable figures").format(precision=attrs.get("precision", "bf16"))
    return _("memory bandwidth, achievable figures")


def measured_demand(summary, precision="bf16", catalog=None, memory_layout="sharded"):
    """The measured demand, for chapter 01 and the decision.

    Returns a dict: ``required_flops_per_s`` (or ``required_bytes_per_s`` when memory-bound)
    = effective_devices × the monitored device's achievable rate; ``memory_bytes`` (Σ
    peak memory used, or the largest GPU's peak when ``memory_layout="replicated"``);
    ``memory_layout``, ``basis``, ``precision``, ``device``, ``effective_devices``,
    ``mean_utilization`` and ``note``. It is the busy time at the achievable rate, so an
    upper bound of the work done; a person with a model and token count can use
    :mod:`accelkit.demand` for the exact figure.
    """
    table = right_size(summary, precision=precision, catalog=catalog, candidates=[summary.device],
                       memory_layout=memory_layout)
    a = table.attrs
    key = "required_flops_per_s" if a["basis"] == "compute" else "required_bytes_per_s"
    return {key: a["work"], "memory_bytes": a["memory_needed_bytes"], "memory_layout": memory_layout, "basis": a["basis"], "precision": precision,
            "device": summary.device, "effective_devices": summary.effective_devices,
            "mean_utilization": summary.mean_utilization,
            "note": "busy time at the monitored device's achievable rate: an upper bound of the work done"}
