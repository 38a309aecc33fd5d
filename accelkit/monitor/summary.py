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
        return "idle", (f"mean GPU utilisation {_pct(util)} is below {_pct(t['idle'])}: the GPUs are held but "
                        "almost nothing runs on them")
    ref, ref_name, factor = (tensor, "tensor-pipe active", t["memory_ratio"]) if tensor == tensor else \
        (sm, "SM active", 1.0)
    if dram == dram and ref == ref and dram >= t["memory_dram"] and dram >= factor * ref:
        return "memory-bound", (f"DRAM active {_pct(dram)} against {ref_name} {_pct(ref)} (memory-bound at DRAM "
                                f"≥ {_pct(t['memory_dram'])} and ≥ {factor:g} × {ref_name}): the kernels wait on "
                                "device memory; more memory bandwidth helps, more FLOP/s does not")
    if util >= t["compute_bound"]:
        extra = ""
        if sm == sm and sm < 0.5:
            extra = (f"; but SM active is only {_pct(sm)}: kernels run most of the time yet fill few of the SMs "
                     "(small kernels or batches)")
        elif tensor == tensor:
            extra = f"; tensor pipes active {_pct(tensor)}"
        return "compute-bound", (f"mean GPU utilisation {_pct(util)} ≥ the source text's {_pct(t['compute_bound'])} "
                                 f"threshold: the GPUs are kept busy{extra}")
    if idle_fraction == idle_fraction and idle_fraction >= t["input_idle_fraction"]:
        return "input-bound", (f"mean GPU utilisation {_pct(util)} < {_pct(t['compute_bound'])}, and the GPUs were "
                               f"idle (< {_pct(t['idle'])}) in {_pct(idle_fraction)} of the samples while the job "
                               f"ran (input-bound at ≥ {_pct(t['input_idle_fraction'])}): they wait for input -- "
                               "data loading, host code or communication")
    idle_words = f"idle in only {_pct(idle_fraction)} of the samples" if idle_fraction == idle_fraction else "steadily"
    return "under-used", (f"mean GPU utilisation {_pct(util)} < the source text's {_pct(t['compute_bound'])} "
                          f"threshold, {idle_words}, with no sign of a memory limit: the work is too small to fill "
                          "these GPUs (batch, model size, or more devices than the job needs)")


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
        note = f"several GPU models in the samples ({', '.join(names.unique())}); sized as {detected}"
    query = device or detected
    if not query:
        return None, detected, "the samples do not name the GPU model; pass --device NAME to right-size"
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
            "power_limit_source": "recorded limit" if limit_rec == limit_rec else
            ("catalogue TDP" if tdp == tdp else ""),
            "temperature_mean_c": _f(g["temperature_c"].mean()), "temperature_max_c": _f(g["temperature_c"].max()),
            "sm_clock_loaded_mean_hz": _f(clock_loaded.mean()) if len(clock_loaded) else float("nan"),
            "sm_clock_max_hz": _f(clock_max),
            "sm_clock_max_source": "recorded maximum" if clock_max_rec == clock_max_rec else
            ("highest clock seen" if clock_max == clock_max else ""),
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
    for _, r in stats.iterrows():
        who = f"{r['host']}/GPU{r['gpu']}" if r["host"] else f"GPU{r['gpu']}"
        reasons = r["throttle_reasons"]
        if r["clock_held_fraction"] == r["clock_held_fraction"] and r["clock_held_fraction"] >= t["throttle_share"]:
            out.append({"gpu": who, "cause": "clocks", "text":
                        f"{who}: SM clock under load averaged {r['sm_clock_loaded_mean_hz'] / units.GIGA:.2f} GHz, "
                        f"{_pct(r['clock_fraction'])} of its {r['sm_clock_max_hz'] / units.GIGA:.2f} GHz "
                        f"{r['sm_clock_max_source']}; below {_pct(t['throttle_clock'])} in "
                        f"{_pct(r['clock_held_fraction'])} of the loaded samples"
                        + (f" (driver's reasons: {reasons})" if reasons else "")})
        thermal = "thermal" in reasons
        if (r["temperature_max_c"] == r["temperature_max_c"] and r["temperature_max_c"] >= t["hot_c"]) or thermal:
            out.append({"gpu": who, "cause": "temperature", "text":
                        f"{who}: reached {r['temperature_max_c']:.0f} °C (≥ {t['hot_c']:.0f} °C in "
                        f"{_pct(r['hot_fraction'])} of the samples)"
                        + (", thermal slowdown reported" if thermal else "")
                        + ": check the cooling and airflow -- the source text's cooling mistake (no room left for "
                          "cooling) made devices slow down"})
        if ("power" in reasons) or (r["power_capped_fraction"] == r["power_capped_fraction"]
                                     and r["power_capped_fraction"] >= t["throttle_share"]):
            out.append({"gpu": who, "cause": "power cap", "text":
                        f"{who}: at its power limit ({r['power_limit_w']:.0f} W, {r['power_limit_source']}) in "
                        f"{_pct(r['power_capped_fraction'])} of the loaded samples"
                        + (", power cap reported by the driver" if "power" in reasons else "")})
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
        reason += (f". The load is uneven: GPU{busiest['gpu']} averages {_pct(busiest['util_mean'])}, the least busy "
                   f"{_pct(per_gpu_mean.min())}")
    src = source or given or ", ".join(sorted(samples["source"].unique()))
    return Summary(devices=stats, effective_devices=float(per_gpu_mean.sum()), mean_utilization=mean_util,
                   util_p50=float(pooled.quantile(0.5)), util_p95=float(pooled.quantile(0.95)), idle_fraction=idle,
                   verdict=v, reason=reason, throttling=_throttling(stats, t), source=str(src),
                   device=str(row["name"]) if row is not None else "", detected_name=detected, note=note,
                   overall=overall, thresholds=t)
