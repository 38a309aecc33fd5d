"""What a buyer orders to get ``n`` devices: units that exist, how many, the price and the power.

Nobody buys one SXM module or one GB200 superchip: they order an 8-GPU server or a
rack, and a PCIe card goes into a host. :func:`purchase_plan` turns a device count
into units from ``data/systems.csv`` (:func:`accelkit.systems.load_systems`): for each
device, among the units that carry it (servers, racks, cards in a host, modules with
a carrier, developer kits), the plan that costs least for the count, as whole units.
A device with no sourced unit is priced as bare devices and says so ("device price
only; host not priced"); a cloud-only part (TPUs) has no purchase at all.

Power: the whole unit's published maximum (``unit_power_w``) where a spec sheet gives
it, else the devices' TDP plus the host's published share (``host_power_w``), else the
devices' TDP alone (said in the words).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .i18n import _

__all__ = ["purchase_plan"]

_UNIT_COLUMNS = ("system", "device", "devices_per_unit", "unit_kind", "price_usd", "price_low_usd", "price_high_usd",
                 "unit_power_w", "host_power_w", "source_url")


def _systems():
    try:
        from .systems import load_systems
    except ImportError:  # pragma: no cover - the table ships with the package
        return pd.DataFrame(columns=list(_UNIT_COLUMNS))
    frame = load_systems()
    for column in _UNIT_COLUMNS:
        if column not in frame:
            frame[column] = np.nan
    return frame


def _pairs(names, units):
    """(catalogue position, systems row) pairs: the units that carry each catalogue device;
    cached per catalogue, since a redraw prices the same catalogue many times."""
    key = (tuple(names), id(units))
    if _PAIRS.get("key") != key:
        lower = pd.Series(names).str.lower()
        merged = pd.DataFrame({"pos": np.arange(len(lower)), "device": lower.to_numpy()}).merge(
            units.assign(device=units["device"].str.lower(), row=np.arange(len(units))), on="device")
        _PAIRS.update(key=key, pairs=(merged["pos"].to_numpy(), merged["row"].to_numpy()), units=units)
    return _PAIRS["pairs"]


_PAIRS = {}


def purchase_plan(catalog, n_devices, deployment="on-prem", systems=None):
    """Units to buy for ``n_devices`` of each catalogue device.

    Parameters
    ----------
    catalog : DataFrame
        Catalogue rows (``name``, ``price_usd`` and its ``price_low_usd`` /
        ``price_high_usd`` range, ``tdp_w``).
    n_devices : array-like
        Devices needed, per catalogue row [count]; NaN where unknown.
    deployment : str
        ``on-prem`` / ``edge`` (bought) or ``cloud`` (nothing bought: the words say so).
    systems : DataFrame, optional
        :func:`accelkit.systems.load_systems` (default: the built-in table).

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``: ``purchase_unit`` (words, e.g. "2 × NVIDIA DGX H100 (16
        devices)"), ``units_to_buy`` [count], ``devices_bought`` [count],
        ``purchase_usd`` with ``purchase_low_usd`` / ``purchase_high_usd`` [USD],
        ``power_w`` (the bought units' maximum power [W]), ``host_included`` (False
        where the price is the bare devices' or a baseboard's) and ``purchase_source``.
    """
    n = np.asarray(n_devices, dtype=float).reshape(-1)
    names = catalog["name"].to_numpy()
    col = (lambda c: catalog[c].to_numpy(dtype=float) if c in catalog else np.full(len(catalog), np.nan))
    price = col("price_usd")
    low, high = np.where(np.isnan(col("price_low_usd")), price, col("price_low_usd")), \
        np.where(np.isnan(col("price_high_usd")), price, col("price_high_usd"))
    tdp = col("tdp_w")
    # bare devices: the fallback plan
    units_out, bought = n.copy(), n.copy()
    cost, cost_low, cost_high, power = n * price, n * low, n * high, n * tdp
    host = np.zeros(len(n), dtype=bool)
    quoted_rows = catalog["price_quoted"].to_numpy(dtype=bool) if "price_quoted" in catalog else np.zeros(len(n), bool)
    quoted_words = _("{n} × {name} at your quoted price")
    bare_words = _("{n} × {name} (device price only; host not priced)")
    words = np.array([(quoted_words if q else bare_words).format(n=f"{v:.0f}", name=name) if v == v else ""
                      for v, name, q in zip(n, names, quoted_rows)], dtype=object)
    source = np.full(len(n), "", dtype=object)
    table = _systems() if systems is None else systems
    if len(table):
        pos, row = _pairs(names, table)
        per = table["devices_per_unit"].to_numpy(dtype=float)[row]
        kind = table["unit_kind"].to_numpy()[row]
        unit_price = table["price_usd"].to_numpy(dtype=float)[row]
        cloud_only = kind == "cloud_only"
        # a part only rented (TPUs): nothing to buy
        only = np.setdiff1d(pos[cloud_only], pos[~cloud_only])
        cost[only] = cost_low[only] = cost_high[only] = units_out[only] = np.nan
        words[only] = _("not sold: rented in the cloud only")
        k = np.ceil(n[pos] / per)
        total = np.where(cloud_only | np.isnan(unit_price), np.inf, k * unit_price)
        order = np.lexsort((total, pos))
        first = order[np.unique(pos[order], return_index=True)[1]]
        first = first[np.isfinite(total[first])]
        quoted = catalog["price_quoted"].to_numpy(dtype=bool) if "price_quoted" in catalog else np.zeros(len(n), bool)
        for j in first:  # one priced unit per device at most: a few dozen rows
            i, r = pos[j], row[j]
            if quoted[i]:  # the person's quote for the device stands
                continue
            unit = table.iloc[r]
            kj = k[j]
            ulow = unit["price_low_usd"] if unit["price_low_usd"] == unit["price_low_usd"] else unit_price[j]
            uhigh = unit["price_high_usd"] if unit["price_high_usd"] == unit["price_high_usd"] else unit_price[j]
            units_out[i], bought[i] = kj, kj * per[j]
            cost[i], cost_low[i], cost_high[i] = kj * unit_price[j], kj * ulow, kj * uhigh
            if unit["unit_power_w"] == unit["unit_power_w"]:
                power[i] = kj * unit["unit_power_w"]
            elif unit["host_power_w"] == unit["host_power_w"]:
                power[i] = bought[i] * tdp[i] + kj * unit["host_power_w"]
            else:
                power[i] = bought[i] * tdp[i]
            host[i] = unit["unit_kind"] not in ("baseboard",)
            devices = (_("{n} device") if bought[i] == 1 else _("{n} devices")).format(n=f"{bought[i]:.0f}")
            if bought[i] > n[i]:
                devices = _("{devices}, {spare} spare").format(devices=devices, spare=f"{bought[i] - n[i]:.0f}")
            if unit["unit_kind"] == "baseboard":
                devices = _("{devices}; host server not included").format(devices=devices)
            # "× SYSTEM (" stays as written: the decision summary finds the system's price date by it
            words[i] = _("{n} × {system} ({devices})").format(n=f"{kj:.0f}", system=unit["system"], devices=devices)
            source[i] = str(unit["source_url"])
    if deployment == "cloud":
        rent = _("rent {order}")
        words = np.array([rent.format(order=_("{n} × {name}").format(n=f"{v:.0f}", name=name)) if v == v else ""
                          for v, name in zip(n, names)], dtype=object)
    return pd.DataFrame({
        "purchase_unit": words, "units_to_buy": units_out, "devices_bought": bought, "purchase_usd": cost,
        "purchase_low_usd": cost_low, "purchase_high_usd": cost_high, "power_w": power, "host_included": host,
        "purchase_source": source,
    }, index=catalog.index)
