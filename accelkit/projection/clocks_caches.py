"""GPU clocks and on-chip L2 caches as data (``data/clocks_caches.csv``).

Two figures a datasheet's peak rates hide, and a small layer's time depends on:

* the **boost clock** [MHz]: a compiled kernel's fixed cost -- its launch, the ramp of its
  first wave and the tail that does not fill the device -- is a number of GPU cycles, so a
  2,040 MHz L4 pays it in 69 % of the time a 1,410 MHz A100 does. A Jetson's clock is its
  power mode's (``data/edge_power_modes.csv``, ``gpu_max_mhz``), so it is not repeated here.
* the **L2 cache** [bytes]: when a layer's input and output feature maps for the whole batch
  fit in the L2, the next layer reads them from the cache, not from DRAM: an L4 (48 MiB) keeps
  ResNet-50's maps at batch 32, a T4 (4 MiB) spills nearly all of them
  (:func:`~accelkit.projection.vision.layer_seconds`).

Each row gives the clock and the L2 size with the address and words of its source: where
NVIDIA's own tables were not found under an address, the figures come from what CUDA
reports on the real card (``deviceQuery``'s "GPU Max Clock rate" and "L2 Cache Size", or
OpenXLA's device spec files, captured from real devices); the notes say which. A figure no
source gives stays empty: an unknown L2 holds nothing (the maps go to DRAM, as before),
and an unknown clock takes the median of the listed clocks, said in ``clock_source``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .. import units
from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["load_clocks_caches", "gpu_clocks", "gpu_clock_sources", "median_clock_hz", "l2_cache_bytes",
           "l2_cache_sources"]

CLOCKS_SCHEMA = Schema("the GPU clocks and caches CSV", (
    Column("device", required=True, nonempty=True),
    Column("boost_clock_mhz", "number", required=True, expected="MHz (empty: not published)"),
    Column("clock_source_url", required=True), Column("clock_quote", required=True),
    Column("l2_cache_bytes", "number", required=True, expected="bytes (empty: not published)"),
    Column("l2_source_url", required=True), Column("l2_quote", required=True),
    Column("notes", required=True),
), label="device", unique="device")


@lru_cache(maxsize=2)
def _load(path):
    table = read_table(path, CLOCKS_SCHEMA, Path(path).name, CatalogError)
    for figure, url in (("boost_clock_mhz", "clock_source_url"), ("l2_cache_bytes", "l2_source_url")):
        unsourced = table[table[figure].notna() & (table[url].fillna("") == "")]
        if len(unsourced):
            raise CatalogError(f"{Path(path).name}: {unsourced['device'].iloc[0]} gives {figure} without {url}")
    return table


def load_clocks_caches(path=None):
    """The clocks and caches table (a copy)."""
    return _load(data_path("clocks_caches.csv") if path is None else path).copy()


def median_clock_hz(path=None):
    """The median of the listed boost clocks [Hz]: the clock of a device that publishes none."""
    table = _load(data_path("clocks_caches.csv") if path is None else path)
    return float(np.median(table["boost_clock_mhz"].dropna().to_numpy(dtype=float))) * units.MEGA


def gpu_clocks(names, power_modes=None, path=None):
    """Per device: the GPU clock [Hz] and the words naming its source.

    ``power_modes``: per device, a Jetson ``nvpmodel`` mode name or "" (the device's top
    mode); a Jetson's clock is its mode's ``gpu_max_mhz`` (:mod:`accelkit.projection.power_modes`).
    A device with no published clock takes the median of the listed clocks, and says so.
    """
    hz, words, _urls = _clocks_for(names, power_modes, path)
    return hz, words


def gpu_clock_sources(names, power_modes=None, path=None):
    """Per device: the address its clock comes from ("" where none is published: the listed median)."""
    return _clocks_for(names, power_modes, path)[2]


def _clocks_for(names, power_modes, path):
    names = tuple(names)
    modes = ("",) * len(names) if power_modes is None else tuple(power_modes)
    return tuple(a.copy() for a in _clocks(names, modes, data_path("clocks_caches.csv") if path is None else path))


@lru_cache(maxsize=64)
def _clocks(names, modes, path):
    from .power_modes import load_power_modes

    names, modes = pd.Index(names, dtype=object), pd.Index(modes, dtype=object)
    table = _load(path)
    listed = table.set_index("device")
    median_mhz = median_clock_hz(path) / units.MEGA
    mhz = listed["boost_clock_mhz"].reindex(names).to_numpy(dtype=float)
    urls = listed["clock_source_url"].reindex(names).fillna("").to_numpy(dtype=object)
    words = np.array([f"boost clock {m:g} MHz ({u})" for m, u in zip(mhz, urls)], dtype=object)
    jetson = load_power_modes()
    top = jetson.drop_duplicates("device").set_index("device")  # the first row of a device is its top mode
    mode = np.where(modes == "", top["power_mode"].reindex(names).fillna("").to_numpy(dtype=object), modes)
    rows = jetson.set_index(["device", "power_mode"]).reindex(pd.MultiIndex.from_arrays([names, mode]))
    in_mode = rows["gpu_max_mhz"].to_numpy(dtype=float)
    is_jetson = np.isfinite(in_mode)
    mhz = np.where(is_jetson, in_mode, mhz)
    mode_urls = rows["source_url"].fillna("").to_numpy(dtype=object)
    urls = np.where(is_jetson, mode_urls, urls)
    words = np.where(is_jetson, [f"{m} mode's GPU clock ({u})" for m, u in zip(mode, mode_urls)], words)
    unknown = ~np.isfinite(mhz)
    words = np.where(unknown, f"no published clock: the median of the listed GPUs' ({median_mhz:g} MHz)", words)
    return np.where(unknown, median_mhz, mhz) * units.MEGA, words, np.where(unknown, "", urls)


@lru_cache(maxsize=2)
def _by_device(path):
    """The table indexed by device, built once (every image-model projection asks for its L2)."""
    return _load(path).set_index("device")


def l2_cache_bytes(names, path=None):
    """Per device: the L2 cache [bytes]; NaN where no source gives it."""
    table = _by_device(data_path("clocks_caches.csv") if path is None else path)
    return table["l2_cache_bytes"].reindex(list(names)).to_numpy(dtype=float)


def l2_cache_sources(names, path=None):
    """Per device: the address the L2 size comes from ("" where none is published)."""
    table = _by_device(data_path("clocks_caches.csv") if path is None else path)
    return table["l2_source_url"].reindex(list(names)).fillna("").to_numpy(dtype=object)
