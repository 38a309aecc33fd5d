"""Statistics of a sample table: per GPU and overall, the verdict, throttling.

Definitions (all fractions in [0, 1]):

* ``util`` -- NVML/DCGM GPU utilisation, the fraction of time a kernel ran (busy
  time, not the share of peak FLOP/s; see :mod:`accelkit.local.nvml`);
* ``effective_devices`` = Σ over GPUs of their mean utilisation: 8 GPUs at 30 % did
  the busy time of 2.4 fully busy GPUs;
* ``idle_fraction`` -- share of samples with utilisation below :data:`THRESHOLDS` ``idle``;
* clocks "under load" -- samples with utilisation ≥ ``load``; a GPU is throttled
  when its SM clock under load stays below ``throttle_clock`` × its maximum.

Verdict rules, in order (thresholds in :data:`THRESHOLDS`, shown in every reason):

1. **idle** -- mean utilisation < 5 %;
2. **memory-bound** -- DCGM profiling metrics present, DRAM active ≥ 40 % and
   ≥ 1.5 × tensor-pipe active (or ≥ SM active where the tensor metric is absent):
   the kernels wait on device memory;
3. **compute-bound** -- mean utilisation ≥ 70 %, the source text's threshold for
   "compute-bound, not IO-bound";
4. **input-bound** -- below 70 % and idle in ≥ 20 % of the samples while the job ran:
   the GPUs wait for data, host code or communication;
5. **under-used** -- below 70 % and steadily so, with no other sign: the work is too
   small for these devices.

References
----------
- NVIDIA, *NVML API Reference Guide*, ``nvmlUtilization_t``; clock-event reasons.
- NVIDIA, *DCGM User Guide*, "Feature Overview: Profiling Metrics" (SM activity,
  tensor-pipe activity, DRAM activity; why utilisation alone overstates how full a GPU is).
- Source text 003 (selection guide), §2.1: the 70 % rule and the 8 × A100 used below 30 %;
  §4.1: a cooling mistake that made the devices throttle.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .. import units
from ..i18n import N_, _
from .samples import LIMITING_BITS, MonitorError, throttle_words, tidy

__all__ = ["THRESHOLDS", "Summary", "summarize", "device_stats", "verdict", "identify_device", "VERDICTS"]

THRESHOLDS = {
    "compute_bound": 0.70,     # source text 003 §2.1: GPU utilisation > 70 % = compute-bound
    "idle": 0.05,              # mean (and per-sample) utilisation below this = idle
    "input_idle_fraction": 0.20,
    "memory_dram": 0.40,
    "memory_ratio": 1.5,
    "load": 0.20,              # a sample is "under load" at or above this utilisation
    "throttle_clock": 0.90,    # SM clock under load below this share of the maximum = held down
    "throttle_share": 0.20,    # ... in at least this share of loaded samples
    "hot_c": 85.0,             # GPU temperature at which most boards start to slow down
    "power_cap": 0.95,         # power at or above this share of the limit = at the cap
}
VERDICTS = ("idle", "under-used", "input-bound", "memory-bound", "compute-bound")


def _f(x):
    return float(x) if x is not None and np.isfinite(x) else float("nan")


def _pct(x):
    return f"{x:.0%}" if x == x else "n/a"


def verdict(util, idle_fraction=float("nan"), dram=float("nan"), tensor=float("nan"), sm=float("nan"),
            thresholds=None):
    """(verdict, reason in words) from mean utilisation and, where known, the profiling activities."""
    t = dict(THRESHOLDS, **(thresholds or {}))
    if not util == util:
        raise MonitorError("no utilisation samples: the source has no utilization.gpu / DCGM_FI_DEV_GPU_UTIL values")
    if util < t["idle"]:
        return "idle", _("mean GPU utilisation {util} is below {idle}: the GPUs are held but almost nothing runs on "
                         "them").format(util=_pct(util), idle=_pct(t["idle"]))
    ref, ref_name, factor = (tensor, _("tensor-pipe active"), t["memory_ratio"]) if tensor == tensor else \
        (sm, _("SM active"), 1.0)
    if dram == dram and ref == ref and dram >= t["memory_dram"] and dram >= factor * ref:
        return "memory-bound", _("DRAM active {dram} against {ref_name} {ref} (memory-bound at DRAM ≥ {limit} and "
                                 "≥ {factor} × {ref_name}): the kernels wait on device memory; more memory bandwidth "
                                 "helps, more FLOP/s does not").format(
            dram=_pct(dram), ref_name=ref_name, ref=_pct(ref), limit=_pct(t["memory_dram"]), factor=f"{factor:g}")
    if util >= t["compute_bound"]:
        extra = ""
        if sm == sm and sm < 0.5:
            extra = _("; but SM active is only {sm}: kernels run most of the time yet fill few of the SMs (small "
                      "kernels or batches)").format(sm=_pct(sm))
        elif tensor == tensor:
            extra = _("; tensor pipes active {tensor}").format(tensor=_pct(tensor))
        return "compute-bound", _("mean GPU utilisation {util} ≥ the source text's {limit} threshold: the GPUs are "
                                  "kept busy{extra}").format(util=_pct(util), limit=_pct(t["compute_bound"]),
                                                             extra=extra)
    if idle_fraction == idle_fraction and idle_fraction >= t["input_idle_fraction"]:
        return "input-bound", _("mean GPU utilisation {util} < {limit}, and the GPUs were idle (< {idle}) in "
                                "{idle_share} of the samples while the job ran (input-bound at ≥ {input_limit}): they "
                                "wait for input -- data loading, host code or communication").format(
            util=_pct(util), limit=_pct(t["compute_bound"]), idle=_pct(t["idle"]), idle_share=_pct(idle_fraction),
            input_limit=_pct(t["input_idle_fraction"]))
    idle_words = _("idle in only {share} of the samples").format(share=_pct(idle_fraction)) \
        if idle_fraction == idle_fraction else _("steadily")
    return "under-used", _("mean GPU utilisation {util} < the source text's {limit} threshold, {idle_words}, with no "
                           "sign of a memory limit: the work is too small to fill these GPUs (batch, model size, or "
                           "more devices than the job needs)").format(
        util=_pct(util), limit=_pct(t["compute_bound"]), idle_words=idle_words)


def identify_device(samples, device=None, catalog=None):
    """(catalogue row or None, detected name, note). ``device`` overrides the detected name.

    The name comes from the nvidia-smi ``name`` column, the DCGM ``modelName`` label
    or NVML. An unknown name raises :class:`MonitorError` with the catalogue's
    closest matches.
    """
    from ..catalog import CatalogError, find

    names = samples["name"][samples["name"] != ""]
    detected = names.value_counts().index[0] if len(names) else ""
    note = ""
    if len(names) and names.nunique() > 1:
        note = _("several GPU models in the samples ({names}); sized as {detected}").format(
            names=", ".join(names.unique()), detected=detected)
    query = device or detected
    if not query:
        return None, detected, _("the samples do not name the GPU model; pass --device NAME to right-size")
    try:
        return find(query, catalog), detected, note
    except CatalogError as exc:
        hint = "" if device else "; pass --device NAME to say which catalogue device this is"
        raise MonitorError(f"{'--device' if device else 'the monitored GPU'} {query!r}: {exc}{hint}") from None


def device_stats(samples, catalog_row=None, thresholds=None):
    """One row per (host, GPU) with the statistics of the module notes (SI units in the names)."""
    t = dict(THRESHOLDS, **(thresholds or {}))
    rows = []
    tdp = _f(catalog_row.get("tdp_w")) if catalog_row is not None else float("nan")
    mem_cat = units.gb_to_bytes(_f(catalog_row.get("memory_gb"))) if catalog_row is not None else float("nan")
    for (host, gpu), g in samples.groupby(["host", "gpu"], sort=True):
        u = g["util_fraction"].dropna()
        if u.empty:
            continue
        ts = g["timestamp_s"].dropna().sort_values()
        step = float(ts.diff().median()) if len(ts) > 1 else float("nan")
        duration = float(ts.iloc[-1] - ts.iloc[0] + (step if step == step else 0.0)) if len(ts) else float("nan")
        loaded = g[g["util_fraction"] >= t["load"]]
        clock_max_rec = g["sm_clock_max_hz"].max()
        clock_max = clock_max_rec if clock_max_rec == clock_max_rec else g["sm_clock_hz"].max()
        clock_loaded = loaded["sm_clock_hz"].dropna()
        limit_rec = g["power_limit_w"].max()
        limit = limit_rec if limit_rec == limit_rec else tdp
        total_rec = g["memory_total_bytes"].max()
        power = g["power_w"].dropna()
        masks = g["throttle_reasons"][g["throttle_reasons"] >= 0]
        limiting = masks[(masks & LIMITING_BITS) > 0]
        reasons = sorted({w for m in limiting for w in throttle_words(m)})
        row = {
            "host": host, "gpu": int(gpu), "uuid": g["uuid"].iloc[0], "name": g["name"].iloc[0],
            "n_samples": int(len(u)), "interval_s": step, "duration_s": duration,
            "util_mean": float(u.mean()), "util_p50": float(u.quantile(0.5)), "util_p95": float(u.quantile(0.95)),
            "util_max": float(u.max()), "idle_fraction": float((u < t["idle"]).mean()),
            "sm_active_mean": _f(g["sm_active_fraction"].mean()),
            "tensor_active_mean": _f(g["tensor_active_fraction"].mean()),
            "dram_active_mean": _f(g["dram_active_fraction"].mean()),
            "memory_util_mean": _f(g["memory_util_fraction"].mean()),
            "memory_used_max_bytes": _f(g["memory_used_bytes"].max()),
            "memory_used_mean_bytes": _f(g["memory_used_bytes"].mean()),
            "memory_total_bytes": _f(total_rec if total_rec == total_rec else mem_cat),
            "power_mean_w": _f(power.mean()) if len(power) else float("nan"),
            "power_max_w": _f(power.max()) if len(power) else float("nan"),
            "power_limit_w": _f(limit),
            "power_limit_source": N_("recorded limit") if limit_rec == limit_rec else
            (N_("catalogue TDP") if tdp == tdp else ""),
            "temperature_mean_c": _f(g["temperature_c"].mean()), "temperature_max_c": _f(g["temperature_c"].max()),
            "sm_clock_loaded_mean_hz": _f(clock_loaded.mean()) if len(clock_loaded) else float("nan"),
            "sm_clock_max_hz": _f(clock_max),
            "sm_clock_max_source": N_("recorded maximum") if clock_max_rec == clock_max_rec else
            (N_("highest clock seen") if clock_max == clock_max else ""),
            "throttle_reasons": ", ".join(reasons),
            "throttle_reason_fraction": float(len(limiting) / len(masks)) if len(masks) else float("nan"),
        }
        row["memory_used_fraction"] = row["memory_used_max_bytes"] / row["memory_total_bytes"] \
            if row["memory_total_bytes"] == row["memory_total_bytes"] else float("nan")
        row["power_fraction"] = row["power_mean_w"] / row["power_limit_w"] if row["power_limit_w"] > 0 \
            else float("nan")
        row["clock_fraction"] = row["sm_clock_loaded_mean_hz"] / row["sm_clock_max_hz"] \
            if row["sm_clock_max_hz"] > 0 else float("nan")
        held = (clock_loaded < t["throttle_clock"] * clock_max).mean() if len(clock_loaded) and clock_max > 0 \
            else float("nan")
        row["clock_held_fraction"] = _f(held)
        capped = loaded["power_w"].dropna()
        row["power_capped_fraction"] = float((capped >= t["power_cap"] * limit).mean()) \
            if len(capped) and limit == limit else float("nan")
        row["hot_fraction"] = float((g["temperature_c"].dropna() >= t["hot_c"]).mean()) \
            if g["temperature_c"].notna().any() else float("nan")
        row["verdict"], row["reason"] = verdict(row["util_mean"], row["idle_fraction"], row["dram_active_mean"],
                                                row["tensor_active_mean"], row["sm_active_mean"], t)
        rows.append(row)
    return pd.DataFrame(rows)


def _throttling(stats, t):
    """Findings in words: clocks held down under load, heat, power cap (one dict per GPU and cause)."""
    out = []
    for _index, r in stats.iterrows():
        who = f"{r['host']}/GPU{r['gpu']}" if r["host"] else f"GPU{r['gpu']}"
        reasons = r["throttle_reasons"]
        if r["clock_held_fraction"] == r["clock_held_fraction"] and r["clock_held_fraction"] >= t["throttle_share"]:
            out.append({"gpu": who, "cause": "clocks", "text":
                        _("{gpu}: SM clock under load averaged {clock} GHz, {share} of its {max_clock} GHz "
                          "{max_source}; below {limit} in {held} of the loaded samples").format(
                            gpu=who, clock=f"{r['sm_clock_loaded_mean_hz'] / units.GIGA:.2f}",
                            share=_pct(r["clock_fraction"]), max_clock=f"{r['sm_clock_max_hz'] / units.GIGA:.2f}",
                            max_source=_(r["sm_clock_max_source"]) if r["sm_clock_max_source"] else "",
                            limit=_pct(t["throttle_clock"]), held=_pct(r["clock_held_fraction"]))
                        + (_(" (driver's reasons: {reasons})").format(reasons=", ".join(_(w) for w in reasons.split(", ")))
                           if reasons else "")})
        thermal = "thermal" in reasons
        if (r["temperature_max_c"] == r["temperature_max_c"] and r["temperature_max_c"] >= t["hot_c"]) or thermal:
            out.append({"gpu": who, "cause": "temperature", "text":
                        _("{gpu}: reached {max_c} °C (≥ {hot_c} °C in {share} of the samples)").format(
                            gpu=who, max_c=f"{r['temperature_max_c']:.0f}", hot_c=f"{t['hot_c']:.0f}",
                            share=_pct(r["hot_fraction"]))
                        + (_(", thermal slowdown reported") if thermal else "")
                        + _(": check the cooling and airflow -- the source text's cooling mistake (no room left for "
                            "cooling) made devices slow down")})
        if ("power" in reasons) or (r["power_capped_fraction"] == r["power_capped_fraction"]
                                     and r["power_capped_fraction"] >= t["throttle_share"]):
            out.append({"gpu": who, "cause": "power cap", "text":
                        _("{gpu}: at its power limit ({limit} W, {limit_source}) in {share} of the loaded "
                          "samples").format(gpu=who, limit=f"{r['power_limit_w']:.0f}",
                                            limit_source=_(r["power_limit_source"]) if r["power_limit_source"] else "",
                                            share=_pct(r["power_capped_fraction"]))
                        + (_(", power cap reported by the driver") if "power" in reasons else "")})
    return out


@dataclasses.dataclass
class Summary:
    """What the samples say: ``devices`` (one row per GPU), the overall figures and the verdict."""

    devices: pd.DataFrame
    effective_devices: float
    mean_utilization: float
    util_p50: float
    util_p95: float
    idle_fraction: float
    verdict: str
    reason: str
    throttling: list
    source: str
    device: str = ""            # catalogue name of the monitored GPU ("" when unknown)
    detected_name: str = ""     # the name as the source printed it
    note: str = ""
    overall: dict = dataclasses.field(default_factory=dict)
    thresholds: dict = dataclasses.field(default_factory=lambda: dict(THRESHOLDS))

    @property
    def n_gpus(self):
        return int(len(self.devices))

    def to_dict(self):
        """JSON-ready dict (NaN -> None)."""
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return None if not math.isfinite(v) else float(v)
            if isinstance(v, (np.integer,)):
                return int(v)
            return v

        devices = [{k: clean(v) for k, v in row.items()} for row in self.devices.to_dict("records")]
        return {
            "source": self.source, "device": self.device, "detected_name": self.detected_name,
            "n_gpus": self.n_gpus, "effective_devices": clean(self.effective_devices),
            "mean_utilization": clean(self.mean_utilization), "util_p50": clean(self.util_p50),
            "util_p95": clean(self.util_p95), "idle_fraction": clean(self.idle_fraction),
            "verdict": self.verdict, "verdict_reason": self.reason,
            "compute_bound_threshold": self.thresholds["compute_bound"],
            "thresholds": dict(self.thresholds), "overall": {k: clean(v) for k, v in self.overall.items()},
            "throttling": list(self.throttling), "note": self.note, "devices": devices,
        }


def summarize(samples, device=None, catalog=None, thresholds=None, source=None):
    """Summarise a sample table: per-GPU statistics, overall figures, verdict, throttling.

    Parameters
    ----------
    samples : DataFrame
        The sample table (:mod:`accelkit.monitor.samples`).
    device : str, optional
        Catalogue name of the monitored GPU; default: detected from the samples.
    thresholds : dict, optional
        Overrides of :data:`THRESHOLDS`.
    source : str, optional
        What the samples came from (default: the table's ``attrs["path"]`` or its ``source`` column).

    Returns
    -------
    Summary
    """
    given = samples.attrs.get("path") if hasattr(samples, "attrs") else None
    samples = tidy(samples)
    if samples.empty or samples["util_fraction"].dropna().empty:
        raise MonitorError("no utilisation samples to summarise")
    t = dict(THRESHOLDS, **(thresholds or {}))
    row, detected, note = identify_device(samples, device, catalog)
    stats = device_stats(samples, row, t)
    pooled = samples["util_fraction"].dropna()
    per_gpu_mean = stats["util_mean"]
    overall = {
        "sm_active_mean": _f(samples["sm_active_fraction"].mean()),
        "tensor_active_mean": _f(samples["tensor_active_fraction"].mean()),
        "dram_active_mean": _f(samples["dram_active_fraction"].mean()),
        "memory_used_total_bytes": _f(stats["memory_used_max_bytes"].sum(min_count=1)),
        "memory_used_max_bytes": _f(stats["memory_used_max_bytes"].max()),
        "power_total_mean_w": _f(stats["power_mean_w"].sum(min_count=1)),
        "power_limit_total_w": _f(stats["power_limit_w"].sum(min_count=1)),
        "duration_s": _f(stats["duration_s"].max()),
        "n_hosts": int(stats["host"].nunique()),
        "util_spread": _f(per_gpu_mean.max() - per_gpu_mean.min()),
    }
    idle = float((pooled < t["idle"]).mean())
    mean_util = float(per_gpu_mean.mean())
    v, reason = verdict(mean_util, idle, overall["dram_active_mean"], overall["tensor_active_mean"],
                        overall["sm_active_mean"], t)
    if overall["util_spread"] >= 0.3 and len(stats) > 1:
        busiest = stats.loc[per_gpu_mean.idxmax()]
        reason += _(". The load is uneven: GPU{gpu} averages {busiest}, the least busy {least}").format(
            gpu=busiest["gpu"], busiest=_pct(busiest["util_mean"]), least=_pct(per_gpu_mean.min()))
    src = source or given or ", ".join(sorted(samples["source"].unique()))
    return Summary(devices=stats, effective_devices=float(per_gpu_mean.sum()), mean_utilization=mean_util,
                   util_p50=float(pooled.quantile(0.5)), util_p95=float(pooled.quantile(0.95)), idle_fraction=idle,
                   verdict=v, reason=reason, throttling=_throttling(stats, t), source=str(src),
                   device=str(row["name"]) if row is not None else "", detected_name=detected, note=note,
                   overall=overall, thresholds=t)
