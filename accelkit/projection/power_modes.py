"""Jetson power modes as data: what each ``nvpmodel`` mode leaves of the GPU and the memory.

A Jetson runs in one of several power modes (AGX Orin: MAXN, 50 W, 30 W, 15 W); each
caps the GPU clock, power-gates some of the GPU's TPCs (texture processing clusters,
two SMs each) and may cap the memory (EMC) clock. ``data/edge_power_modes.csv`` lists
them from NVIDIA's own ``nvpmodel`` configuration files (``GPU MAX_FREQ``, ``TPC_PG_MASK``,
``EMC MAX_FREQ``), each row with its source. :func:`mode_scale` turns a mode into the
share of the device's catalogue figures (taken at its top mode) it keeps:

* GPU rate ∝ TPCs on × GPU clock (a TPC's tensor cores do a fixed number of operations
  per clock: NVIDIA Ampere GA102 whitepaper, "Third-generation Tensor Cores"); the TPCs on
  are the zero bits of ``TPC_PG_MASK`` among the GPU's ``cuda_cores / 256`` TPCs (Ampere:
  128 CUDA cores per SM, 2 SMs per TPC);
* memory bandwidth ∝ the EMC clock;
* the DLAs' rate ∝ their clock (``DLA0_CORE`` / ``DLA1_CORE MAX_FREQ``; a DLA runs its convolutions
  on a fixed array per clock): :func:`dla_share`. NVIDIA's README gives the AGX Orin's two DLAs
  105, 92, 90 and 40 sparse INT8 TOPS in MAXN, 50 W, 30 W and 15 W; the clock rule gives 105,
  90, 90 and 40.

Checked against the one published per-mode table (NVIDIA Deep-Learning-Accelerator-SW
README, AGX Orin 64GB GPU sparse INT8: MAXN 170, 50 W 109, 30 W 41, 15 W 14 TOPS): the
rule gives 107 and 40 for 50 W and 30 W, and 20 for 15 W, where the table's 14 fits one
TPC fewer than the configuration file gates (``tests/test_power_modes.py``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import units
from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["load_power_modes", "power_modes_of", "mode_scale", "mode_within", "dla_share", "device_mode_shares",
           "engine_share"]

MODES_SCHEMA = Schema("the edge power modes CSV", (
    Column("device", required=True, nonempty=True), Column("power_mode", required=True, nonempty=True),
    Column("power_w", "number", required=True, expected="watts"),
    Column("gpu_max_mhz", "number", required=True, nonempty=True, expected="MHz"),
    Column("tpc_pg_mask", "number", required=True, nonempty=True, expected="an integer bit mask"),
    Column("gpu_cuda_cores", "number", required=True, nonempty=True, expected="a number of CUDA cores"),
    Column("emc_max_mhz", "number", required=True, nonempty=True, expected="MHz"),
    Column("dla_max_mhz", "number", required=True, expected="MHz (empty: the module has no DLA)"),
    Column("gpu_int8_tops_sparse", "number", required=True, expected="TOPS"),
    Column("dla_int8_tops_sparse", "number", required=True, expected="TOPS"),
    Column("source_url", required=True, nonempty=True), Column("source_url_2", required=True),
    Column("quote", required=True, nonempty=True), Column("notes", required=True),
))

#: CUDA cores per TPC on Ampere (GA10B): 128 per SM, 2 SMs per TPC
CORES_PER_TPC = 256


@lru_cache(maxsize=2)
def _load(path):
    return read_table(path, MODES_SCHEMA, Path(path).name, CatalogError)


def load_power_modes(path=None):
    """The power modes table (a copy); the first row of a device is its top mode."""
    return _load(data_path("edge_power_modes.csv") if path is None else path).copy()


def power_modes_of(device, path=None):
    """The mode names of ``device`` (top mode first); empty when none is listed."""
    table = _load(data_path("edge_power_modes.csv") if path is None else path)
    return table.loc[table["device"] == device, "power_mode"].tolist()


def _tpcs_on(mask, cores):
    total = int(cores) // CORES_PER_TPC
    return sum(1 for bit in range(total) if not (int(mask) >> bit) & 1), total


def mode_scale(device, power_mode, path=None):
    """``(gpu_share, memory_share, row)``: the share of ``device``'s catalogue GPU rate and
    memory bandwidth (both at its top mode) that ``power_mode`` keeps, and the mode's row.

    Raises naming the device's modes when it has none of that name.
    """
    from .._validate import check_choice

    table = _load(data_path("edge_power_modes.csv") if path is None else path)
    rows = table[table["device"] == device]
    if rows.empty:
        raise ValueError(f"power_mode: {device} has no power modes listed (data/edge_power_modes.csv lists "
                         f"{', '.join(sorted(set(table['device'])))})")
    name = check_choice("power_mode", power_mode, rows["power_mode"].tolist())
    top, row = rows.iloc[0], rows[rows["power_mode"] == name].iloc[0]
    on, _total = _tpcs_on(row["tpc_pg_mask"], row["gpu_cuda_cores"])
    on_top, _ = _tpcs_on(top["tpc_pg_mask"], top["gpu_cuda_cores"])
    gpu = on * float(row["gpu_max_mhz"]) / (on_top * float(top["gpu_max_mhz"]))
    memory = float(row["emc_max_mhz"]) / float(top["emc_max_mhz"])
    return gpu, memory, row.to_dict()


def mode_within(device, envelope_w, path=None):
    """The highest listed ``nvpmodel`` mode of ``device`` that draws at most ``envelope_w``: its
    name and watts, or ``None`` (no modes listed, or none that fits). The top mode counts only where
    its power is published; the modes are taken in the file's order (top first, then lower)."""
    table = _load(data_path("edge_power_modes.csv") if path is None else path)
    rows = table[(table["device"] == device) & (table["power_w"] <= float(envelope_w))]
    if rows.empty:
        return None
    row = rows.iloc[0]
    return {"power_mode": row["power_mode"], "power_w": float(row["power_w"])}


def dla_share(device, power_mode, path=None):
    """The share of ``device``'s DLA rate (its catalogue figure, at the top mode) that ``power_mode``
    keeps: the mode's DLA clock over the top mode's. 1 where the device lists no DLA clock."""
    table = _load(data_path("edge_power_modes.csv") if path is None else path)
    rows = table[table["device"] == device]
    clocks = rows.set_index("power_mode")["dla_max_mhz"]
    if rows.empty or not clocks.notna().all():
        return 1.0
    return float(clocks[power_mode]) / float(clocks.iloc[0])


def device_mode_shares(ceil, single, catalog, power_mode, power_envelope_w):
    """Per device: the GPU-rate, memory-bandwidth and DLA-rate shares its power mode keeps, the mode's
    name ("" for the catalogue's top mode) and its watts (NaN: the datasheet's maximum power)."""
    from ..catalog import load_catalog

    n = len(ceil)
    gpu, memory, dla = np.ones(n), np.ones(n), np.ones(n)
    names, watts = np.full(n, "", dtype=object), np.full(n, np.nan)
    modes = {}
    if power_mode is not None:
        if not single:
            raise ValueError("power_mode applies to one device; give device as one name")
        modes[0] = power_mode
    elif power_envelope_w is not None:
        tdp = (load_catalog() if catalog is None else catalog).set_index("name")["tdp_w"]
        listed = set(load_power_modes()["device"])
        for i, name in enumerate(ceil["name"]):
            over = name in listed and tdp.get(name, np.nan) > power_envelope_w
            mode = mode_within(name, power_envelope_w) if over else None
            if mode is not None:
                modes[i] = mode["power_mode"]
    for i, mode in modes.items():
        name = ceil["name"].iloc[i]
        gpu[i], memory[i], row = mode_scale(name, mode)
        dla[i] = dla_share(name, row["power_mode"])
        names[i], watts[i] = row["power_mode"], float(row["power_w"])
    return gpu, memory, dla, names, watts


def engine_share(ceil, catalog, mm_precision, peak_ops, own_peak, gpu, dla):
    """The share of a device's rate its mode keeps: the GPU's and the DLAs' parts of the dense peak, each
    by its own clock share. Only an INT8 peak counts the DLAs, and only where the peak given includes
    them (chapter 07's GPU-only figure does not)."""
    if mm_precision != "int8" or np.all(dla == gpu):
        return gpu
    from ..catalog import load_catalog

    npu = ((load_catalog() if catalog is None else catalog).set_index("name")["npu_int8_tops_sparse"]
           .reindex(ceil["name"]).to_numpy(dtype=float) / 2.0 * units.TERA)  # dense: half the 2:4-sparse figure
    with np.errstate(invalid="ignore", divide="ignore"):
        dla_part = np.clip(1.0 - (own_peak - np.nan_to_num(npu)) / peak_ops, 0.0, 1.0)
    dla_part = np.nan_to_num(dla_part)
    return (1.0 - dla_part) * gpu + dla_part * dla
