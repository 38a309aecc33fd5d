"""Reference systems: how a device is usually built into servers, for scale-out.

``data/reference_systems.csv`` records, for devices whose vendor publishes a
reference server (DGX / HGX, the MI300X platform, Gaudi's HLS boards, TPU slices),
the devices per node and the scale-out network bandwidth per device, each with its
``source_url``. Training across nodes uses it when the person gives no
``network_gbps``. TPUs scale out over their ICI links, so their "network" is the
catalogue's interconnect.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import units
from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, check_rows, problem, raise_problems, read_rows

__all__ = ["load_reference_systems", "network_bandwidth"]


SYSTEMS_SCHEMA = Schema("the reference systems CSV", (
    Column("device", required=True, nonempty=True), Column("system", required=True),
    Column("devices_per_node", "integer", low=0, required=True, nonempty=True),
    Column("network_gbps_per_device", "number", unit="Gbit/s", low=0, required=True, nonempty=True),
    Column("source_url", required=True),
), label="device")


@lru_cache(maxsize=2)
def _read(path):
    origin = Path(path).name
    frame, problems = check_rows(read_rows(path, origin, CatalogError), SYSTEMS_SCHEMA, origin, CatalogError)
    problems += [problem(origin, i, "source_url", "expected the URL the figure was read from", frame.at[i, "device"])
                 for i in frame.index[~frame["source_url"].str.startswith("http")]]
    raise_problems(origin, problems, CatalogError)
    return frame


def load_reference_systems(path=None):
    """The reference systems table (a copy)."""
    path = data_path("reference_systems.csv") if path is None else path
    return _read(path).copy()


@lru_cache(maxsize=2)
def _network_by_device(path):
    """Per device of the reference systems table (its first system): the network
    bandwidth [Gbit/s], the sentence naming it, and the table's median [Gbit/s]."""
    table = _read(path)
    first = table.groupby("device").first()
    gbps = first["network_gbps_per_device"].astype(float).to_dict()
    words = {d: f"{first.at[d, 'system']}: {g:g} Gb/s per device" for d, g in gbps.items()}
    return gbps, words, float(np.median(table["network_gbps_per_device"]))


def network_bandwidth(ceil, catalog=None, network_gbps=None):
    """Scale-out bandwidth per device [bytes/s] and where it came from.

    Parameters
    ----------
    ceil : DataFrame
        Rows of :func:`~accelkit.projection.ceilings.device_ceilings`.
    network_gbps : float, optional
        The person's figure [Gbit/s per device]; wins over the table.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray of str)
    """
    n = len(ceil)
    if network_gbps is not None:
        from .._validate import check_positive

        check_positive("network_gbps", network_gbps, "a network bandwidth in Gbit/s")
        return np.full(n, units.gbps_to_bytes_per_s(network_gbps)), np.full(n, f"{network_gbps:g} Gb/s per device (given)")
    by_device, words, median = _network_by_device(data_path("reference_systems.csv"))
    names = ceil["name"].to_numpy()
    gbps = np.array([by_device.get(d, np.nan) for d in names], dtype=float)
    source = np.array([words.get(d, "") for d in names], dtype=object)
    bw = units.gbps_to_bytes_per_s(gbps)
    ici = ceil["link_kind"].astype(str).str.startswith("ICI").to_numpy()
    bw = np.where(ici, ceil["link_bw"].to_numpy(dtype=float), bw)
    source = np.where(ici, "scale-out over ICI (the catalogue's interconnect)", source)
    missing = ~np.isfinite(bw)
    if missing.any():
        bw = np.where(missing, units.gbps_to_bytes_per_s(median), bw)
        source = np.where(missing, f"no reference system for this device: median of the reference systems, "
                                   f"{median:g} Gb/s per device", source)
    return bw, source
