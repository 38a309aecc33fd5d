"""Published efficiencies: how much of a datasheet peak real code reaches.

``data/efficiency.csv`` holds measurements people published -- the maximum
achievable matmul FLOP/s (MAMF-finder sweeps, vendor and cloud benchmark posts),
achieved memory bandwidth (STREAM / BabelStream / nvbandwidth-type tests) and NCCL /
RCCL all-reduce bus bandwidth and small-message latency -- each with its
``source_url``. The *efficiency* of a row is its measured value divided by the
catalogue's datasheet figure for that device (dense peak at the precision, memory
bandwidth, or the per-direction link bandwidth), computed here so no ratio is
typed by hand.

:func:`efficiency_table` resolves, for every catalogue device, one efficiency per
ceiling with a low-high range and the words saying where it came from:

1. the person's own probe results (``accelkit probe --json``), when given;
2. the device's own published measurements (median; range = their spread, or, for
   a single figure, the typical spread between two published figures of one device);
3. its architecture (same vendor): median of the measured devices, range min-max;
4. its vendor: the same over the vendor's measured devices;
5. every measured accelerator.

At each level a matmul precision without a measurement takes the bf16 figure of
that level (said so in the source text).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .. import units
from ..catalog import CatalogError, PRECISION_COLUMNS, data_path, load_catalog
from ..tables import Column, Schema, line_of, raise_problems, read_table

__all__ = ["load_efficiency", "efficiency_table", "CEILINGS", "MATMUL_PRECISIONS", "EfficiencyError"]

CEILINGS = ("matmul", "memory", "allreduce", "allreduce_latency")
#: precisions the matmul ceiling is resolved for
MATMUL_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")

_COLUMNS = ["device", "ceiling", "precision", "n_devices", "message_bytes", "measured_value", "measured_unit",
            "method", "source_url", "source_title", "date_published", "retrieved", "notes"]
_UNITS = {"matmul": "TFLOPS", "memory": "GB/s", "allreduce": "GB/s", "allreduce_latency": "us"}
#: a measured/datasheet ratio above this means a unit or sparse-figure mistake
#: (NVLink SHARP all-reduce can exceed the per-direction link rate, hence 1.5; GeForce cards
#: run above the boost clock their datasheet figures assume, hence 1.2 for matmul)
_MAX_RATIO = {"matmul": 1.2, "memory": 1.05, "allreduce": 1.5}


class EfficiencyError(CatalogError):
    """A row of data/efficiency.csv is not what accelkit expects."""


def _link_gbs(row):
    from ..comm import link_bandwidth

    return units.bytes_per_s_to_gbs(link_bandwidth(row))


def _datasheet(catalog_row, ceiling, precision):
    if ceiling == "matmul":
        return float(catalog_row[PRECISION_COLUMNS[precision]])
    if ceiling == "memory":
        return float(catalog_row["memory_bw_gbs"])
    if ceiling == "allreduce":
        return _link_gbs(catalog_row)
    return float("nan")


#: the row-by-row checks that need the catalogue (device, datasheet ratio) stay in load_efficiency
EFFICIENCY_SCHEMA = Schema("the efficiency CSV", (
    *(Column(c, required=True) for c in _COLUMNS if c not in ("ceiling", "measured_value", "source_url")),
    Column("ceiling", required=True, choices=CEILINGS, nonempty=True),
    Column("measured_value", "number", required=True, nonempty=True),
    Column("source_url", required=True, nonempty=True, empty_message="expected the URL the figure was read from"),
))


@lru_cache(maxsize=4)
def _read(path):
    return read_table(path, EFFICIENCY_SCHEMA, Path(path).name, EfficiencyError)


def load_efficiency(path=None, catalog=None):
    """The efficiency measurements with their ratio to the catalogue's datasheet figure.

    Returns
    -------
    pandas.DataFrame
        The file's columns plus ``value`` (measured, float), ``datasheet`` (the
        catalogue figure in the same unit), ``efficiency`` (value / datasheet; NaN
        for latency rows), ``vendor`` and ``architecture`` of the device.

    Raises
    ------
    EfficiencyError
        Naming the line and column of every problem: unknown device (with close
        matches), unknown ceiling or precision, a value that is not a number, a
        unit that is not the ceiling's, a missing source, or a ratio above the
        datasheet (a sparse or mis-typed figure).
    """
    from ..catalog import find

    path = Path(data_path("efficiency.csv") if path is None else path)
    key = (str(path), id(catalog))
    if catalog is None and key in _LOADED:
        return _LOADED[key]
    catalog = load_catalog() if catalog is None else catalog
    raw = _read(path).copy()
    problems, rows = [], []
    for idx, r in raw.iterrows():
        where = f"{path.name}, line {line_of(idx)}"
        ceiling = r["ceiling"]
        precision = r["precision"].strip().lower()
        if ceiling == "matmul" and precision not in MATMUL_PRECISIONS:
            problems.append(f"{where}, column precision: expected one of {', '.join(MATMUL_PRECISIONS)}, "
                            f"got {precision!r}")
            continue
        if r["measured_unit"].strip() != _UNITS[ceiling]:
            problems.append(f"{where}, column measured_unit: expected {_UNITS[ceiling]} for {ceiling}, "
                            f"got {r['measured_unit']!r}")
            continue
        value = float(r["measured_value"])
        if not r["source_url"].startswith("http"):
            problems.append(f"{where}, column source_url: expected the URL the figure was read from")
            continue
        try:
            device = find(r["device"], catalog)
        except CatalogError as exc:
            problems.append(f"{where}, column device: {exc}")
            continue
        datasheet = _datasheet(device, ceiling, precision) if ceiling != "allreduce_latency" else float("nan")
        ratio = value / datasheet if np.isfinite(datasheet) and datasheet > 0 else float("nan")
        if ceiling in _MAX_RATIO and not np.isfinite(ratio):
            problems.append(f"{where}: {device['name']} has no datasheet {ceiling} figure"
                            f"{' at ' + precision if precision else ''} in the catalogue to compare with")
            continue
        if ceiling in _MAX_RATIO and ratio > _MAX_RATIO[ceiling]:
            problems.append(f"{where}, column measured_value: {value:g} {_UNITS[ceiling]} is {ratio:.0%} of the "
                            f"datasheet {datasheet:g}; expected at most {_MAX_RATIO[ceiling]:.0%} (a sparse or "
                            "mis-typed figure?)")
            continue
        n_dev = pd.to_numeric(r["n_devices"], errors="coerce") if r["n_devices"] else np.nan
        msg = pd.to_numeric(r["message_bytes"], errors="coerce") if r["message_bytes"] else np.nan
        rows.append({**r.to_dict(), "device": device["name"], "ceiling": ceiling, "precision": precision,
                     "value": value, "datasheet": datasheet, "efficiency": ratio, "n_devices": n_dev,
                     "message_bytes": msg, "vendor": device["vendor"],
                     "architecture": device.get("architecture", "")})
    raise_problems(path.name, problems, EfficiencyError)
    frame = pd.DataFrame(rows)
    if key[1] == id(None):
        _LOADED[key] = frame
    return frame


_LOADED: dict = {}


# --- resolution per device -------------------------------------------------------

def _summaries(values):
    """Per-device median/min/max/count of one ceiling's efficiencies (or latencies)."""
    g = values.groupby("device")["x"]
    return pd.DataFrame({"median": g.median(), "low": g.min(), "high": g.max(), "n": g.size()})


def _level_stats(per_device, key):
    """Median over devices (of their medians) and min/max, grouped by ``key``."""
    g = per_device.groupby(key)["median"]
    return pd.DataFrame({"median": g.median(), "low": g.min(), "high": g.max(), "n": g.size()})


def _resolve(catalog, measurements, ceiling, precision=None):
    """Arrays (value, low, high, source text) for one ceiling over the catalogue."""
    rows = measurements[measurements["ceiling"] == ceiling]
    col = "value" if ceiling == "allreduce_latency" else "efficiency"
    n = len(catalog)
    value, low, high = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    source = np.full(n, "", dtype=object)
    wanted = [precision] if precision in (None, "bf16") else [precision, "bf16"]
    names = catalog["name"].to_numpy()
    arch = (catalog["vendor"].astype(str) + " " + catalog.get("architecture", pd.Series("", index=catalog.index))
            .astype(str)).to_numpy()
    vendor = catalog["vendor"].astype(str).to_numpy()
    if rows.empty:
        return value, low, high, source
    levels = []  # (name, per-key frame, key array of the catalogue, words)
    for p in wanted:
        sel = rows if precision is None else rows[rows["precision"] == p]
        if sel.empty:
            continue
        sel = sel.assign(x=sel[col])
        dev = _summaries(sel)
        dev["arch"] = sel.groupby("device")["vendor"].first() + " " + sel.groupby("device")["architecture"].first()
        dev["vendor"] = sel.groupby("device")["vendor"].first()
        dev["sources"] = sel.groupby("device")["source_title"].agg(lambda s: "; ".join(dict.fromkeys(s)))
        tag = "" if p == precision or precision is None else f" (its {p} figure: no {precision} measurement)"
        levels.append(("device", p, dev, names, tag))
        levels.append(("arch", p, _level_stats(dev.reset_index(), "arch"), arch, tag))
        levels.append(("vendor", p, _level_stats(dev.reset_index(), "vendor"), vendor, tag))
        everything = dev.assign(all="all")
        levels.append(("all", p, _level_stats(everything.reset_index(), "all"), np.full(n, "all"), tag))
    order = {"device": 0, "arch": 1, "vendor": 2, "all": 3}
    levels.sort(key=lambda t: (order[t[0]], wanted.index(t[1])))
    # relative spread of a level, for a device known from a single measurement
    for kind, p, frame, keys, tag in levels:
        hit = pd.Index(frame.index).get_indexer(keys)
        take = (hit >= 0) & np.isnan(value)
        if not take.any():
            continue
        picked = frame.iloc[hit[take]]
        value[take] = picked["median"].to_numpy()
        low[take] = picked["low"].to_numpy()
        high[take] = picked["high"].to_numpy()
        what = {"matmul": f"{precision} matmul", "memory": "memory bandwidth", "allreduce": "all-reduce bus bandwidth",
                "allreduce_latency": "all-reduce latency"}[ceiling]
        if kind == "device":
            # the figure measured is the level's own precision (bf16 where the tag says it stands in)
            measured = f"{p} matmul" if ceiling == "matmul" and p else what
            texts = [f"measured {measured} of this device ({int(k)} published figure{'s' if k > 1 else ''}: {s}){tag}"
                     for k, s in zip(picked["n"], picked["sources"])]
        elif kind == "arch":
            texts = [f"no published {what} for this device: median of {int(k)} measured {a} device"
                     f"{'s' if k > 1 else ''}{tag}" for k, a in zip(picked["n"], keys[take])]
        elif kind == "vendor":
            texts = [f"no published {what} for this device or its architecture: median of {int(k)} measured {v} "
                     f"device{'s' if k > 1 else ''}{tag}" for k, v in zip(picked["n"], keys[take])]
        else:
            texts = [f"no published {what} for this device or its vendor: median of all {int(k)} measured "
                     f"accelerators{tag}" for k in picked["n"]]
        source[take] = texts
    return value, low, high, source


def _typical_spread(measured, ceiling):
    """Median relative spread (low/median, high/median) between published figures
    for the same device, over the devices measured more than once."""
    col = "value" if ceiling == "allreduce_latency" else "efficiency"
    rows = measured[measured["ceiling"] == ceiling]
    if rows.empty:
        return 1.0, 1.0
    g = rows.groupby(["device", "precision"])[col]
    stats = pd.DataFrame({"median": g.median(), "low": g.min(), "high": g.max(), "n": g.size()})
    multi = stats[stats["n"] > 1]
    if multi.empty:
        return 1.0, 1.0
    return float((multi["low"] / multi["median"]).median()), float((multi["high"] / multi["median"]).median())


def _widen_single(value, low, high, spread):
    """Give a point estimate (one published figure) the typical spread between two
    published figures of one device (``spread`` = (low/median, high/median))."""
    single = np.isfinite(value) & (low == high)
    low = np.where(single, value * min(spread[0], 1.0), low)
    high = np.where(single, value * max(spread[1], 1.0), high)
    return low, high


def _probe_overrides(catalog, measurements_frame):
    """Efficiencies from a person's probe results: {ceiling or 'matmul <p>': (device index, ratio, text)}."""
    from .calibration import calibration

    calib = calibration(measurements_frame)
    if calib.empty:
        return {}
    device_name = str(calib["device_name"].iloc[0])
    try:
        from ..catalog import find

        idx = catalog.index.get_loc(find(device_name, catalog).name)
    except (CatalogError, KeyError):
        return {}
    out = {}
    for _, r in calib.iterrows():
        if not np.isfinite(r["ratio"]):
            continue
        key = f"matmul {r['precision']}" if r["quantity"].startswith("matmul") else "memory"
        if key == "memory" and "copy" in r["quantity"] and "memory" in out:
            continue
        out[key] = (idx, float(r["ratio"]), f"your probe: {r['quantity']} on {r['device_name']} ({r['source']})")
    return out


def efficiency_table(catalog=None, measurements=None, path=None):
    """One row per catalogue device: each ceiling's efficiency, range and source.

    Parameters
    ----------
    catalog : DataFrame, optional
    measurements : DataFrame, optional
        A person's probe results (:func:`accelkit.probes.load_results`); their
        ratios replace the published ones for the device they were measured on.
    path : path, optional
        Another efficiency file (default ``data/efficiency.csv``).

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``; for each ``key`` in ``matmul_<precision>`` (for
        :data:`MATMUL_PRECISIONS`), ``memory``, ``allreduce`` (fractions of the
        datasheet figure) and ``allreduce_latency`` [s]: columns ``<key>``,
        ``<key>_low``, ``<key>_high``, ``<key>_source``.
    """
    catalog = load_catalog() if catalog is None else catalog
    measured = load_efficiency(path, catalog=_full_catalog(catalog))
    out = {}
    keys = [(f"matmul_{p}", "matmul", p) for p in MATMUL_PRECISIONS] + [
        ("memory", "memory", None), ("allreduce", "allreduce", None), ("allreduce_latency", "allreduce_latency", None)]
    for key, ceiling, precision in keys:
        v, lo, hi, src = _resolve(catalog, measured, ceiling, precision)
        if ceiling == "allreduce_latency":
            v, lo, hi = v * units.MICRO, lo * units.MICRO, hi * units.MICRO  # measured in microseconds
        out[key], out[f"{key}_low"], out[f"{key}_high"], out[f"{key}_source"] = v, lo, hi, src
    frame = pd.DataFrame(out, index=catalog.index)
    for key, ceiling, _ in keys:
        lo, hi = _widen_single(frame[key].to_numpy(), frame[f"{key}_low"].to_numpy(), frame[f"{key}_high"].to_numpy(),
                               _typical_spread(measured, ceiling))
        frame[f"{key}_low"], frame[f"{key}_high"] = lo, hi
    if measurements is not None:
        for key, (idx, ratio, text) in _probe_overrides(catalog, measurements).items():
            col = key.replace(" ", "_")
            if col in frame.columns:
                frame.iloc[idx, frame.columns.get_loc(col)] = ratio
                frame.iloc[idx, frame.columns.get_loc(f"{col}_low")] = ratio
                frame.iloc[idx, frame.columns.get_loc(f"{col}_high")] = ratio
                frame.iloc[idx, frame.columns.get_loc(f"{col}_source")] = text
    return frame


def _full_catalog(catalog):
    """The built-in catalogue plus any user rows, so measurements of built-in devices
    resolve even when ``catalog`` is a subset (``None`` when that is the built-in one)."""
    from ..catalog import _default_catalog

    base = _default_catalog(True)
    extra = catalog[~catalog["name"].isin(base["name"])]
    return pd.concat([base, extra], ignore_index=True) if len(extra) else None
