"""The hardware catalogue: load, validate, and find accelerators.

``data/accelerators.csv`` holds one row per accelerator, every figure sourced
(``source_url`` on every row) and dense; see ``data/README.md`` for the columns.
A user's own CSV of extra devices merges in with ``load_catalog(path)``; it is
read, never written. Problems are reported as :class:`CatalogError` naming the
file, the CSV line, the column and what was expected.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from . import units
from ._validate import check_choice, suggest
from .errors import CatalogError
from .paths import data_path
from .prices import (  # noqa: F401 (public here too: catalog.load_cloud_prices, ...)
    CLOUD_PRICES_SCHEMA, PRICE_KINDS, PURCHASE_PRICES_SCHEMA, _builtin_prices, _builtin_purchase_prices,
    _with_cloud_prices, _with_purchase_prices, load_cloud_prices, load_purchase_prices)
from .tables import Column, Schema, TableError, check_rows, problem, raise_problems, read_rows, read_table

__all__ = [
    "CatalogError",
    "load_catalog",
    "load_cloud_prices",
    "load_purchase_prices",
    "find",
    "names",
    "data_path",
    "peak_flops",
    "datasheet_memory_bandwidth",
    "memory_bytes",
    "int8_dense_estimate",
    "PRECISION_COLUMNS",
    "NUMERIC_COLUMNS",
]


# --- schema -------------------------------------------------------------------------

#: numeric column -> (what is expected, lowest allowed, highest allowed)
NUMERIC_COLUMNS = {
    "year": ("a year such as 2023", 1990, 2035),
    "memory_gb": ("memory in GB, > 0", 0, 1e5),
    "memory_bw_gbs": ("memory bandwidth in GB/s, > 0", 0, 1e6),
    "fp64_tflops": ("dense FP64 TFLOP/s, > 0", 0, 1e5),
    "fp32_tflops": ("dense FP32 TFLOP/s, > 0", 0, 1e5),
    "tf32_tflops": ("dense TF32 TFLOP/s, > 0", 0, 1e5),
    "bf16_tflops": ("dense BF16 TFLOP/s, > 0", 0, 1e5),
    "fp16_tflops": ("dense FP16 TFLOP/s, > 0", 0, 1e5),
    "fp8_tflops": ("dense FP8 TFLOP/s, > 0", 0, 1e5),
    "int8_tops": ("dense INT8 TOP/s, > 0", 0, 1e5),
    "int4_tops": ("dense INT4 TOP/s, > 0", 0, 1e5),
    "fp4_tflops": ("dense FP4 (NVFP4/MXFP4) TFLOP/s, > 0", 0, 1e6),
    "int8_tops_sparse": ("2:4-sparse INT8 TOP/s, > 0", 0, 1e5),
    "npu_int8_tops_sparse": ("2:4-sparse INT8 TOP/s of the DLA/NPU engines, > 0", 0, 1e5),
    "tdp_w": ("maximum board/module power in watts, > 0", 0, 1e5),
    "tdp_typical_w": ("typical power in watts (where a vendor gives no maximum), > 0", 0, 1e5),
    "interconnect_gbs": ("interconnect bandwidth in GB/s, > 0", 0, 1e6),
    "price_usd": ("a price in USD, > 0", 0, 1e8),
    "cloud_usd_per_hour": ("an hourly price in USD, > 0", 0, 1e5),
}

TEXT_COLUMNS = [
    "name", "aliases", "vendor", "kind", "segment", "architecture", "memory_type", "power_mode",
    "interconnect", "host_interface", "price_date", "software_stack", "source_url",
    "source_url_2", "retrieved", "notes",
]

#: columns a file must have (a user's file may leave most figures empty)
REQUIRED_COLUMNS = ["name", "vendor", "kind", "segment", "source_url"]

KINDS = ["gpu", "tpu", "npu", "asic", "fpga", "soc", "cpu"]
SEGMENTS = ["datacenter", "workstation", "edge", "consumer"]
SOFTWARE_STACKS = [
    "cuda", "rocm", "xla", "gaudi", "cann", "openvino", "oneapi", "mps", "coreml",
    "jetpack", "poplar", "cambricon", "hailo", "edgetpu", "neuron",
]

#: precision name -> catalogue column holding its dense peak
PRECISION_COLUMNS = {
    "fp64": "fp64_tflops",
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
    "int4": "int4_tops",
}

# Pairs (higher, lower, max ratio): a dense figure more than ~2x its neighbour in the
# same matrix unit almost always means a sparse figure was copied into a dense column
# (tensor units double throughput per halving of bits: tf32 -> bf16 -> fp8 -> fp4).
_DENSE_RATIO_RULES = [
    ("bf16_tflops", "tf32_tflops", 2.2),
    ("fp16_tflops", "tf32_tflops", 2.2),
    ("fp8_tflops", "bf16_tflops", 2.2),
    ("fp8_tflops", "fp16_tflops", 2.2),
    ("int4_tops", "int8_tops", 2.2),
]
# int8 against bf16/fp16 only where one engine provides both (SoCs add DLA/NPU TOPS).
_SAME_ENGINE_KINDS = {"gpu", "tpu"}


# --- files --------------------------------------------------------------------------

def _read_rows(path, origin):
    return read_rows(path, origin, CatalogError, what="devices")


def _catalogue_schema():
    numbers = [Column(col, "number", expected=expected, low=low, high=high, low_inclusive=(col == "year"))
               for col, (expected, low, high) in NUMERIC_COLUMNS.items()]
    texts = [Column(col, required=col in REQUIRED_COLUMNS,
                    choices=tuple({"kind": KINDS, "segment": SEGMENTS}.get(col, ())), lower=col in ("kind", "segment"),
                    nonempty=col in ("kind", "segment"))
             for col in TEXT_COLUMNS]
    return Schema("a catalogue CSV", tuple(texts + numbers), label="name", unique=None,
                  hint=" (see data/README.md)")


CATALOGUE_SCHEMA = _catalogue_schema()


def _validate_and_type(raw, origin, require_http):
    """Turn a frame of strings into typed columns; collect every problem."""
    frame, problems = check_rows(raw, CATALOGUE_SCHEMA, origin, CatalogError)
    for idx in frame.index[frame["name"] == ""]:
        problems.append(problem(origin, idx, None, "column name is empty; every device needs a name"))
    dupes = frame["name"].str.lower().duplicated(keep="first") & (frame["name"] != "")
    for idx in frame.index[dupes]:
        problems.append(problem(origin, idx, None, f"device {frame.at[idx, 'name']!r} appears twice"))
    for idx, stacks in frame["software_stack"].items():
        for stack in filter(None, (s.strip().lower() for s in stacks.split("|"))):
            if stack not in SOFTWARE_STACKS:
                hint = suggest(stack, SOFTWARE_STACKS)
                problems.append(problem(
                    origin, idx, "software_stack", f"unknown stack {stack!r}; expected one of "
                    f"{', '.join(SOFTWARE_STACKS)}" + (f" (did you mean {hint[0]!r}?)" if hint else ""),
                    frame.at[idx, "name"]))
    no_source = frame["source_url"] == ""
    for idx in frame.index[no_source]:
        problems.append(problem(origin, idx, "source_url", "every device needs a source (a datasheet URL or a "
                                "note of where the figures come from)", frame.at[idx, "name"]))
    if require_http:
        not_url = ~no_source & ~frame["source_url"].str.match(r"https?://")
        for idx in frame.index[not_url]:
            problems.append(problem(origin, idx, "source_url", "expected a URL starting with http(s)://, got "
                                    f"{frame.at[idx, 'source_url']!r}", frame.at[idx, "name"]))
    problems.extend(_sparse_in_dense_problems(frame, origin))
    raise_problems(origin, problems, CatalogError)
    return frame


def _sparse_in_dense_problems(frame, origin):
    problems = []

    def bad(idx, column, message):
        problems.append(problem(origin, idx, column, message, frame.at[idx, "name"]))

    for hi, lo, limit in _DENSE_RATIO_RULES:
        ratio = frame[hi] / frame[lo]
        for idx in frame.index[ratio > limit]:
            bad(idx, hi, f"{frame.at[idx, hi]:g} is {ratio[idx]:.1f}x {lo} ({frame.at[idx, lo]:g}); "
                         "expected at most ~2x for dense figures -- is it a 2:4-sparse figure?")
    same_engine = frame["kind"].isin(_SAME_ENGINE_KINDS)
    # GeForce-class cards run fp16/bf16 with fp32 accumulation at half rate, so their
    # dense int8 is 4x the fp16 column (e.g. RTX 4090: 660.6 vs 165.2 in NVIDIA's
    # Ada whitepaper); datacenter parts keep the 2x step.
    limit = np.where(frame["segment"].isin(["consumer", "workstation"]), 4.4, 2.2)
    for lo in ("fp8_tflops", "bf16_tflops", "fp16_tflops"):
        ratio = frame["int8_tops"] / frame[lo]
        lim = 2.2 if lo == "fp8_tflops" else limit
        for idx in frame.index[same_engine & (ratio > lim)]:
            bad(idx, "int8_tops", f"{frame.at[idx, 'int8_tops']:g} is {ratio[idx]:.1f}x {lo}; expected at most "
                f"~{2 if lo == 'fp8_tflops' or frame.at[idx, 'segment'] == 'datacenter' else 4}x "
                "for dense figures -- is it a 2:4-sparse figure?")
    part = frame["npu_int8_tops_sparse"].notna() & ~(frame["npu_int8_tops_sparse"] < frame["int8_tops_sparse"])
    for idx in frame.index[part]:
        bad(idx, "npu_int8_tops_sparse", "the DLA/NPU share must be below the device's total int8_tops_sparse "
                                         f"({frame.at[idx, 'int8_tops_sparse']:g})")
    copied = frame["int8_tops_sparse"].notna() & (frame["int8_tops"] >= frame["int8_tops_sparse"])
    for idx in frame.index[copied]:
        bad(idx, "int8_tops", f"dense {frame.at[idx, 'int8_tops']:g} is not below the sparse figure "
                              f"{frame.at[idx, 'int8_tops_sparse']:g}; a sparse figure was copied into a dense column")
    return problems


@lru_cache(maxsize=1)
def _builtin_catalog():
    path = data_path("accelerators.csv")
    frame = _validate_and_type(_read_rows(path, "built-in catalogue"), "built-in catalogue", True)
    frame["origin"] = "built-in"
    return frame


def load_catalog(path=None, *, include_builtin=True, prices=True):
    """Load the accelerator catalogue as a typed DataFrame, one row per device.

    Parameters
    ----------
    path : str or Path, optional
        A user's CSV of extra devices (same columns as ``data/accelerators.csv``;
        at least ``name, vendor, kind, segment, source_url``). Its rows are added to
        the built-in ones; a row whose name matches a built-in device replaces it.
        The file is only read.
    include_builtin : bool
        ``False`` loads only the user's file.
    prices : bool
        Fill ``cloud_usd_per_hour`` from ``data/cloud_prices.csv`` (cheapest
        on-demand price per device-hour) where a row has none.

    Returns
    -------
    pandas.DataFrame
        Numeric figures as float (NaN = not published), plus ``origin`` (where the
        row came from), ``cloud_usd_per_hour``, ``cloud_instance`` and
        ``cloud_price_source``.

    Raises
    ------
    CatalogError
        Naming the file, line, column and what was expected.
    """
    if path is None and include_builtin:
        return _default_catalog(prices).copy()
    frames = []
    if include_builtin:
        frames.append(_builtin_catalog().copy())
    if path is not None:
        origin = f"user catalogue {Path(path).name}"
        user = _validate_and_type(_read_rows(path, origin), origin, False)
        user["origin"] = f"user file {Path(path).name}"
        if frames:
            replaced = frames[0]["name"].str.lower().isin(user["name"].str.lower())
            frames[0] = frames[0][~replaced]
        frames.append(user)
    if not frames:
        raise CatalogError("load_catalog: nothing to load (include_builtin=False and no path given)")
    frame = pd.concat(frames, ignore_index=True)
    extra = [c for c in frame.columns if c not in _ordered_columns()]
    frame = frame[[c for c in _ordered_columns() if c in frame.columns] + extra]
    if prices:
        frame = _with_cloud_prices(frame, _builtin_prices())
    return frame


@lru_cache(maxsize=2)
def _default_catalog(prices):
    frame = _builtin_catalog().copy()
    frame = frame[[c for c in _ordered_columns() if c in frame.columns]
                  + [c for c in frame.columns if c not in _ordered_columns()]]
    return _with_cloud_prices(frame, _builtin_prices()) if prices else frame


def _ordered_columns():
    return [
        "name", "aliases", "vendor", "kind", "segment", "architecture", "year", "memory_gb", "memory_type",
        "memory_bw_gbs", "fp64_tflops", "fp32_tflops", "tf32_tflops", "bf16_tflops",
        "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops", "fp4_tflops", "int8_tops_sparse", "npu_int8_tops_sparse",
        "tdp_w", "tdp_typical_w", "power_mode", "interconnect", "interconnect_gbs", "host_interface", "price_usd",
        "price_date", "cloud_usd_per_hour", "software_stack", "source_url", "source_url_2",
        "retrieved", "notes", "origin",
    ]


# --- lookup -------------------------------------------------------------------------

def _key(text):
    return re.sub(r"[^0-9a-z]+", "", str(text).lower())


_VENDOR_WORDS = re.compile(r"^(nvidia|amd|intel|google|huawei|tesla|geforce|radeon|instinct|habana|cloud)+")


def _keys_for(row):
    keys = {_key(row["name"])}
    keys.update(_key(a) for a in str(row.get("aliases", "")).split("|") if a.strip())
    keys.update({_VENDOR_WORDS.sub("", k) for k in keys})
    keys.discard("")
    return keys


@lru_cache(maxsize=32)
def _key_table(names, aliases):
    # the lookup keys of every row; cached because every projection call resolves a name
    return [_keys_for({"name": n, "aliases": a}) for n, a in zip(names, aliases)]


def names(catalog=None):
    """All device names in the catalogue, in catalogue order."""
    catalog = load_catalog() if catalog is None else catalog
    return catalog["name"].tolist()


def find(name, catalog=None):
    """Find one device by name or alias (case-, space- and dash-insensitive).

    ``find("h100 sxm")``, ``find("NVIDIA H100 80GB HBM3")`` (the name torch
    reports) and ``find("Tesla T4")`` all work. A name that matches several
    devices, or none, raises :class:`CatalogError` listing the candidates or the
    closest names.

    Returns
    -------
    pandas.Series
        The device's row.
    """
    if not isinstance(name, str) or not name.strip():
        raise CatalogError(f"device name must be a non-empty text, got {name!r}")
    catalog = load_catalog() if catalog is None else catalog
    query = _key(name)
    stripped = _VENDOR_WORDS.sub("", query)
    key_table = list(zip(catalog.index, _key_table(tuple(catalog["name"].astype(str)),
                                                    tuple(catalog["aliases"].astype(str)))))
    exact = [idx for idx, keys in key_table if query in keys or stripped in keys]
    if len(exact) == 1:
        return catalog.loc[exact[0]]
    if len(exact) > 1:
        options = ", ".join(catalog.loc[exact, "name"])
        raise CatalogError(f"device name {name!r} matches several devices: {options}; use the full name")
    partial = [idx for idx, keys in key_table if any(stripped and stripped in k for k in keys)]
    if len(partial) == 1:
        return catalog.loc[partial[0]]
    if len(partial) > 1:
        options = ", ".join(catalog.loc[partial, "name"])
        raise CatalogError(f"device name {name!r} matches several devices: {options}; use the full name")
    all_names = catalog["name"].tolist()
    aliases = {}
    for n, a in zip(catalog["name"], catalog["aliases"]):
        for alias in str(a).split("|"):
            if alias.strip():
                aliases[alias.strip()] = n
    close = suggest(name, all_names + list(aliases), n=5)
    close = list(dict.fromkeys(aliases.get(c, c) for c in close))[:3]
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise CatalogError(f"unknown device {name!r}: not in the catalogue{hint}")


# --- figures in SI units -------------------------------------------------------------

def peak_flops(catalog, precision):
    """Dense peak of each device at ``precision``, in FLOP/s (OP/s for integers).

    NaN where the catalogue has no figure (not published, or not supported).
    """
    precision = check_choice("precision", precision, PRECISION_COLUMNS)
    return units.tflops_to_flops(catalog[PRECISION_COLUMNS[precision]].astype(float))


def datasheet_memory_bandwidth(catalog):
    """Datasheet (peak) device-memory bandwidth of each device [bytes/s]; what a kernel reaches is
    :func:`accelkit.projection.memory_bandwidth` (achievable)."""
    return units.gbs_to_bytes_per_s(catalog["memory_bw_gbs"].astype(float))


def memory_bytes(catalog):
    """Device memory of each device, in bytes."""
    return units.gb_to_bytes(catalog["memory_gb"].astype(float))


def half_precision_from_int8(catalog):
    """Dense FP16 / BF16 FLOP/s for Jetson Orin GPUs that publish only an INT8 figure.

    NVIDIA states Orin's GPU tensor rate in INT8; its FP16 tensor math runs at half that
    rate (the AGX Orin data sheet: 170 sparse INT8 TOPS and 85 sparse FP16 TFLOPS for the
    same GPU; Ampere's tensor cores halve the rate from INT8 to FP16 and BF16). Applied only
    where the INT8 figure is the GPU's alone: an NVIDIA Ampere edge part with no deep-learning
    accelerator in its headline (``npu_int8_tops_sparse`` empty: the Orin Nano modules) and no
    published FP16 or BF16 figure; elsewhere NaN.

    Returns
    -------
    (pandas.Series, pandas.Series)
        FLOP/s, and the basis (``"half the dense INT8 figure"`` or ``""``).
    """
    int8, basis = int8_dense_estimate(catalog)
    own = ((catalog["vendor"] == "NVIDIA") & (catalog["architecture"].astype(str) == "Ampere")
           & (catalog["segment"].astype(str) == "edge") & catalog["npu_int8_tops_sparse"].isna()
           & catalog["fp16_tflops"].isna() & catalog["bf16_tflops"].isna() & (basis != ""))
    value = (int8 / 2.0).where(own)
    return value, pd.Series(np.where(own, "half the dense INT8 figure", ""), index=catalog.index)


def int8_dense_estimate(catalog):
    """Dense INT8 OP/s per device, and where the figure comes from.

    The published dense figure where there is one; otherwise half of the published
    2:4-sparse headline (NVIDIA states its Jetson Orin TOPS with sparsity, and 2:4
    sparsity doubles the dense rate), labelled as derived so nobody mistakes it
    for a datasheet figure.

    Returns
    -------
    (pandas.Series, pandas.Series)
        OP/s, and the basis: ``"published dense"``, ``"half the 2:4-sparse figure"``
        or ``""`` (unknown).
    """
    dense = catalog["int8_tops"].astype(float)
    derived = catalog["int8_tops_sparse"].astype(float) / 2.0
    value = dense.fillna(derived) * units.TERA
    basis = pd.Series("", index=catalog.index)
    basis[dense.notna()] = "published dense"
    basis[dense.isna() & derived.notna()] = "half the 2:4-sparse figure"
    return value, basis
