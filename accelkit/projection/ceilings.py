"""Achievable ceilings: datasheet × published efficiency, per device.

The three rates every projection stands on -- matmul FLOP/s, memory bytes/s and
all-reduce bus bandwidth -- come from here and nowhere else:

* :func:`matmul_flops` [FLOP/s] = dense datasheet peak at the precision ×
  achievable matmul fraction (the MAMF practice: S. Bekman, *Machine Learning
  Engineering*, "Maximum Achievable Matmul FLOPS finder");
* :func:`memory_bandwidth` [bytes/s] = datasheet bandwidth × achieved fraction
  (STREAM-style; J. D. McCalpin, IEEE TCCA Newsletter 1995);
* :func:`allreduce_bus_bandwidth` [bytes/s] in the NCCL convention
  (nccl-tests ``doc/PERFORMANCE.md``: bus bandwidth = algorithm bandwidth ×
  2(n−1)/n), from the per-direction link bandwidth × achieved fraction and a
  latency term, ``t(S) = α + S · 2(n−1)/n / B`` (Hockney's α-β model; R. Hockney,
  Parallel Computing 20 (1994) 389-398).

Each figure has ``_low``/``_high`` from the efficiency's range and a ``_source``
sentence (see :mod:`accelkit.projection.efficiency`).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_integer, check_non_negative
from ..catalog import PRECISION_COLUMNS, find
from .efficiency import MATMUL_PRECISIONS, efficiency_table

__all__ = ["device_ceilings", "matmul_flops", "memory_bandwidth", "allreduce_bus_bandwidth",
           "allreduce_seconds", "select_devices", "ceilings_for", "COMPUTE_PRECISIONS"]

#: precisions with a matmul ceiling (``fp4`` where the catalogue has a ``fp4_tflops`` column)
COMPUTE_PRECISIONS = MATMUL_PRECISIONS + ("fp4",)

_CACHE: dict = {}


def catalog_or_default(catalog=None):
    """``catalog``, or the built-in catalogue shared read-only (the projection never
    writes to it; :func:`accelkit.load_catalog` hands out copies)."""
    if catalog is not None:
        return catalog
    from ..catalog import _default_catalog

    return _default_catalog(True)


def _catalog_key(catalog, measurements):
    from ..catalog import _default_catalog

    if measurements is None and catalog is _default_catalog(True):
        return "built-in"
    cols = [c for c in list(PRECISION_COLUMNS.values()) + ["memory_bw_gbs", "memory_gb", "interconnect_gbs",
                                                            "fp4_tflops"] if c in catalog.columns]
    digest = hashlib.blake2b(catalog[cols].to_numpy(dtype=float).tobytes(), digest_size=16)
    digest.update("|".join(catalog["name"].astype(str)).encode())
    # the frame returned keeps the catalogue's index: the same rows under another index are another entry
    digest.update("|".join(map(str, catalog.index)).encode())
    digest.update("|".join(catalog["interconnect"].astype(str) + catalog["host_interface"].astype(str)).encode())
    if measurements is not None:
        digest.update(str(measurements.attrs.get("source", id(measurements))).encode())
        digest.update(measurements[["probe", "dtype", "measured"]].to_numpy(dtype=str).tobytes())
    return digest.hexdigest()


def device_ceilings(catalog=None, measurements=None):
    """Every device's datasheet and achievable ceilings, in SI units (cached).

    Parameters
    ----------
    catalog : DataFrame, optional
    measurements : DataFrame, optional
        A person's probe results; they override the published efficiencies of the
        device they were measured on.

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``: ``name``; ``peak_<p>`` [FLOP/s, dense datasheet] and
        ``matmul_<p>`` [FLOP/s, achievable] with ``_low, _high, _source`` for each
        precision in :data:`COMPUTE_PRECISIONS`; ``memory_bw_peak``, ``memory_bw``
        (+ range, source) [bytes/s]; ``memory_bytes``; ``link_bw`` [bytes/s per
        direction, NVLink/ICI/Infinity Fabric or PCIe], ``link_kind``;
        ``allreduce_bw`` (+ range, source) [bytes/s, large-message bus bandwidth];
        ``allreduce_latency_s`` (+ range, source).
    """
    catalog = catalog_or_default(catalog)
    key = _catalog_key(catalog, measurements)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    from ..comm import link_bandwidth

    eff = efficiency_table(catalog, measurements)
    out = pd.DataFrame({"name": catalog["name"]}, index=catalog.index)
    from ..catalog import half_precision_from_int8, int8_dense_estimate

    int8_peak, int8_basis = int8_dense_estimate(catalog)
    half_peak, half_basis = half_precision_from_int8(catalog)
    for p in COMPUTE_PRECISIONS:
        col = PRECISION_COLUMNS.get(p, f"{p}_tflops")
        peak = units.tflops_to_flops(catalog[col].astype(float)) if col in catalog.columns \
            else pd.Series(np.nan, index=catalog.index)
        if p == "int8":
            # SoCs publish only the 2:4-sparse INT8 headline: half of it, said so in the source
            peak = int8_peak
        if p in ("fp16", "bf16"):
            # Jetson Orin Nano publishes its GPU's INT8 rate only: FP16 / BF16 at half of it, said so
            peak = peak.fillna(half_peak)
        e = f"matmul_{p}" if f"matmul_{p}" in eff.columns else "matmul_fp8"
        out[f"peak_{p}"] = peak
        for suffix in ("", "_low", "_high"):
            out[f"matmul_{p}{suffix}"] = peak * np.minimum(eff[f"{e}{suffix}"], 1.0)
        out[f"matmul_{p}_source"] = eff[f"{e}_source"].where(peak.notna(), "")
        if e != f"matmul_{p}":
            out[f"matmul_{p}_source"] = out[f"matmul_{p}_source"] + " (fp8 efficiency applied to fp4)"
        if p in ("fp16", "bf16"):
            halved = (half_basis != "").to_numpy()
            out.loc[halved, f"matmul_{p}_source"] = out.loc[halved, f"matmul_{p}_source"] + \
                "; peak = half the published dense INT8 figure"
        if p == "int8":
            derived = (int8_basis == "half the 2:4-sparse figure").to_numpy()
            out.loc[derived, "matmul_int8_source"] = out.loc[derived, "matmul_int8_source"] + \
                "; peak = half the published 2:4-sparse INT8 figure"
    bw = units.gbs_to_bytes_per_s(catalog["memory_bw_gbs"].astype(float))
    out["memory_bw_peak"] = bw
    for suffix in ("", "_low", "_high"):
        out[f"memory_bw{suffix}"] = bw * np.minimum(eff[f"memory{suffix}"], 1.0)
    out["memory_bw_source"] = eff["memory_source"].where(bw.notna(), "")
    out["memory_bytes"] = units.gb_to_bytes(catalog["memory_gb"].astype(float))
    rows = catalog.to_dict("records")
    node = np.array([link_bandwidth(r) for r in rows], dtype=float)
    pcie = np.array([link_bandwidth(r, scope="pcie") for r in rows], dtype=float)
    has_link = np.isfinite(catalog["interconnect_gbs"].astype(float).to_numpy())
    out["link_bw"] = np.where(np.isfinite(node), node, pcie)
    out["link_kind"] = np.where(has_link, catalog["interconnect"].astype(str), np.where(np.isfinite(pcie), "PCIe", ""))
    # a bridge joins two boards; more devices talk over PCIe
    bridge = catalog["interconnect"].astype(str).str.contains("bridge", case=False).to_numpy()
    out["link_max_devices"] = np.where(bridge, 2.0, np.inf)
    out["pcie_bw"] = pcie
    pcie_eff, pcie_lo, pcie_hi, pcie_src = _pcie_allreduce_efficiency(catalog)
    for suffix in ("", "_low", "_high"):
        out[f"allreduce_bw{suffix}"] = out["link_bw"] * eff[f"allreduce{suffix}"]
        out[f"allreduce_latency_s{suffix}"] = eff[f"allreduce_latency{suffix}"]
    for suffix, e in (("", pcie_eff), ("_low", pcie_lo), ("_high", pcie_hi)):
        own = np.where(has_link, np.nan, eff[f"allreduce{suffix}"].to_numpy())  # PCIe-only boards: their own figure
        out[f"allreduce_bw_pcie{suffix}"] = pcie * np.where(np.isfinite(own), own, e)
    out["allreduce_bw_source"] = eff["allreduce_source"].where(np.isfinite(out["link_bw"]), "")
    out["allreduce_bw_pcie_source"] = np.where(has_link, pcie_src, out["allreduce_bw_source"])
    out["allreduce_latency_s_source"] = eff["allreduce_latency_source"]
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = out
    return out


def _pcie_allreduce_efficiency(catalog):
    """All-reduce efficiency over plain PCIe: the median (and range) of the published
    figures of PCIe-only boards, for devices whose faster link does not reach."""
    from .efficiency import load_efficiency

    measured = load_efficiency()
    full = catalog_or_default(None)
    pcie_only = set(full.loc[full["interconnect_gbs"].isna(), "name"])
    rows = measured[(measured["ceiling"] == "allreduce") & measured["device"].isin(pcie_only)]
    if rows.empty:
        return np.nan, np.nan, np.nan, "no published all-reduce over plain PCIe"
    e = rows["efficiency"]
    names = ", ".join(sorted(set(rows["device"])))
    return (float(e.median()), float(e.min()), float(e.max()),
            f"over PCIe: median of {len(rows)} published all-reduce figures of PCIe-only boards ({names})")


def select_devices(device, catalog=None):
    """Resolve ``device`` (a name, a list of names, a catalogue row, or None = all)
    into (catalogue rows, single: bool). Unknown names raise a
    :class:`~accelkit.catalog.CatalogError` listing the closest devices."""
    catalog = catalog_or_default(catalog)
    if device is None:
        return catalog, False
    if isinstance(device, pd.Series):
        match = catalog.index[catalog["name"] == device.get("name")]
        if len(match):
            return catalog.loc[match[:1]], True
        return pd.DataFrame([device]).reset_index(drop=True), True
    if isinstance(device, str):
        row = find(device, catalog)
        return catalog.loc[[row.name]], True
    if isinstance(device, pd.DataFrame):
        return device, False
    idx = [find(n, catalog).name for n in list(device)]
    return catalog.loc[idx], False


def ceilings_for(device, catalog=None, measurements=None):
    """(ceiling rows, single) for ``device`` in any of the forms of :func:`select_devices`."""
    catalog = catalog_or_default(catalog)
    if device is None:
        return device_ceilings(catalog, measurements), False
    rows, single = select_devices(device, catalog)
    if rows.index.isin(catalog.index).all() and (catalog.loc[rows.index, "name"].to_numpy()
                                                 == rows["name"].to_numpy()).all():
        return device_ceilings(catalog, measurements).loc[rows.index], single
    return device_ceilings(rows, measurements), single


def one_or_frame(frame, single, what="why"):
    """A projection's answer: the frame for several devices; for one device its row as a dict of
    plain values, or a ValueError naming the device and ``frame[what]`` when it is not feasible."""
    if not single:
        return frame
    r = frame.iloc[0]
    if not r["feasible"]:
        raise ValueError(f"{r['name']}: {r[what]}")
    return {c: (v.item() if hasattr(v, "item") else v) for c, v in r.items()}


def _pick(frame, single, columns):
    frame = frame[columns].reset_index(drop=True)
    if single:
        r = frame.iloc[0]
        return {c: (r[c] if isinstance(r[c], str) else float(r[c])) for c in columns}
    return frame


def matmul_flops(device, precision="bf16", catalog=None, measurements=None, with_range=False):
    """Achievable dense matmul rate of a device at ``precision`` [FLOP/s].

    ``device`` is a name (a float is returned, or a dict with ``_low``/``_high``
    and ``source`` when ``with_range``), a list of names or None (a DataFrame, one
    row per device). NaN where the catalogue has no dense peak at that precision.
    """
    from .._validate import check_choice

    precision = check_choice("precision", precision, COMPUTE_PRECISIONS)
    ceil, single = ceilings_for(device, catalog, measurements)
    k = f"matmul_{precision}"
    if single and not with_range:
        return float(ceil[k].iloc[0])
    return _pick(ceil.rename(columns={k: "matmul_flops", f"{k}_low": "matmul_flops_low",
                                      f"{k}_high": "matmul_flops_high", f"{k}_source": "source"}), single,
                 ["name", "matmul_flops", "matmul_flops_low", "matmul_flops_high", "source"])


def memory_bandwidth(device, catalog=None, measurements=None, with_range=False):
    """Achievable device-memory bandwidth [bytes/s] (see :func:`matmul_flops` for the forms)."""
    ceil, single = ceilings_for(device, catalog, measurements)
    if single and not with_range:
        return float(ceil["memory_bw"].iloc[0])
    return _pick(ceil.rename(columns={"memory_bw": "memory_bandwidth", "memory_bw_low": "memory_bandwidth_low",
                                      "memory_bw_high": "memory_bandwidth_high", "memory_bw_source": "source"}),
                 single, ["name", "memory_bandwidth", "memory_bandwidth_low", "memory_bandwidth_high", "source"])


def _busbw(bw, latency_s, n, message_bytes):
    """NCCL bus bandwidth of an all-reduce of ``message_bytes`` (α-β model)."""
    n = np.asarray(n, dtype=float)
    moved = message_bytes * 2.0 * (n - 1.0) / np.maximum(n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = latency_s + moved / bw
        return np.where(n > 1, moved / t, bw)


def allreduce_seconds(message_bytes, n_devices, bus_bw, latency_s):
    """Ring all-reduce time ``α + S · 2(n−1)/n / B`` [s]; 0 for one device.

    Parameters
    ----------
    message_bytes : numeric
        Buffer reduced on every device [bytes].
    n_devices : numeric
        Devices taking part.
    bus_bw : numeric
        Large-message bus bandwidth [bytes/s] (NCCL convention).
    latency_s : numeric
        Small-message latency α [s].
    """
    n = np.asarray(n_devices, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = latency_s + message_bytes * 2.0 * (n - 1.0) / np.maximum(n, 1.0) / bus_bw
    return np.where(n > 1, t, 0.0)


def allreduce_bus_bandwidth(device, n_devices, message_bytes, catalog=None, measurements=None, with_range=False):
    """Achievable all-reduce bus bandwidth over ``n_devices`` for one message [bytes/s].

    Within one node (the device's NVLink / Infinity Fabric / ICI, or PCIe for
    boards without a bridge): the large-message bus bandwidth ``B`` = per-direction
    link bandwidth × published efficiency, lowered for small messages by the
    published latency α: ``busbw(S) = S' / (α + S'/B)`` with ``S' = S · 2(n−1)/n``.

    Parameters
    ----------
    device : str, list of str or None
    n_devices : int
        Devices in the all-reduce (≥ 1).
    message_bytes : numeric
        Size of the buffer reduced [bytes].

    Returns
    -------
    float, dict or DataFrame (as :func:`matmul_flops`)
    """
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    check_non_negative("message_bytes", message_bytes, "a message size in bytes")
    ceil, single = ceilings_for(device, catalog, measurements)
    out = pd.DataFrame({"name": ceil["name"]})
    for suffix, lat in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"allreduce_bus_bandwidth{suffix}"] = _busbw(ceil[f"allreduce_bw{suffix}"].to_numpy(),
                                                         ceil[f"allreduce_latency_s{lat}"].to_numpy(),
                                                         n_devices, message_bytes)
    out["source"] = ceil["allreduce_bw_source"] + "; latency: " + ceil["allreduce_latency_s_source"]
    if single and not with_range:
        return float(out["allreduce_bus_bandwidth"].iloc[0])
    return _pick(out, single, list(out.columns))
