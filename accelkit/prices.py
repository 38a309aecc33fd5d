"""The price tables: cloud listings (``data/cloud_prices.csv``) and purchase prices
(``data/purchase_prices.csv``), read, checked and joined onto the catalogue.

Below :mod:`accelkit.catalog` (which re-exports :func:`load_cloud_prices` and
:func:`load_purchase_prices`); split out of it (one job per module).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import CatalogError
from .paths import data_path
from .tables import Column, Schema, read_table

__all__ = ["load_cloud_prices", "load_purchase_prices", "PRICE_KINDS"]


@lru_cache(maxsize=1)
def _builtin_prices():
    path = data_path("cloud_prices.csv")
    if not path.exists():
        return pd.DataFrame(columns=["provider", "instance", "accelerator", "count", "usd_per_hour"])
    return load_cloud_prices(path)


CLOUD_PRICES_SCHEMA = Schema("a cloud prices CSV", (
    Column("provider", required=True), Column("instance", required=True), Column("accelerator", required=True),
    Column("count", "number", expected="a whole number of accelerators >= 1", low=0, required=True),
    Column("usd_per_hour", "number", expected="an hourly price in USD > 0", unit="USD/h", low=0, required=True),
    Column("source_url", required=True, nonempty=True, empty_message="every price needs a source"),
))


def load_cloud_prices(path=None):
    """Cloud instance prices (one row per instance) with ``usd_per_device_hour``.

    Parameters
    ----------
    path : str or Path, optional
        A CSV with columns provider, instance, accelerator, count, usd_per_hour,
        pricing, region, price_date, source_url. Default: the built-in table.
    """
    origin = "cloud prices" if path is None else f"cloud prices file {path}"
    path = data_path("cloud_prices.csv") if path is None else Path(path)
    frame = read_table(path, CLOUD_PRICES_SCHEMA, origin, CatalogError)
    if "pricing" not in frame.columns:
        frame["pricing"] = "on-demand"
    frame["pricing"] = frame["pricing"].replace("", "on-demand")
    frame = frame[frame["usd_per_hour"].notna()].copy()
    frame["usd_per_device_hour"] = frame["usd_per_hour"] / frame["count"]
    return frame.reset_index(drop=True)


# most to least authoritative for one device's price: a system's price per device comes
# last because it also pays for CPUs, switches and the chassis
PRICE_KINDS = ("list", "street", "reseller", "analyst", "system_share")


@lru_cache(maxsize=1)
def _builtin_purchase_prices():
    path = data_path("purchase_prices.csv")
    if not path.exists():
        return pd.DataFrame(columns=["device", "price_usd", "price_low_usd", "price_high_usd", "price_kind",
                                     "price_date", "source_url", "notes"])
    return load_purchase_prices(path)


PURCHASE_PRICES_SCHEMA = Schema("a purchase prices CSV", (
    Column("device", required=True),
    Column("price_usd", "number", expected="a price in USD > 0", unit="USD", low=0, required=True, nonempty=True,
           empty_message="every row needs a price"),
    Column("price_low_usd", "number", expected="a price in USD > 0", unit="USD", low=0),
    Column("price_high_usd", "number", expected="a price in USD > 0", unit="USD", low=0),
    Column("price_kind", choices=PRICE_KINDS, lower=True, required=True, nonempty=True),
    Column("source_url", required=True, nonempty=True, empty_message="every price needs a source"),
))


def load_purchase_prices(path=None):
    """Purchase prices per device with their kind, range, date and source.

    Parameters
    ----------
    path : str or Path, optional
        A CSV with columns device, price_usd, price_low_usd, price_high_usd,
        price_kind (list, street, reseller, analyst, or system_share -- a system's
        price over its devices), price_date, source_url, notes. Default: the
        built-in ``data/purchase_prices.csv``.
    """
    origin = "purchase prices" if path is None else f"purchase prices file {path}"
    path = data_path("purchase_prices.csv") if path is None else Path(path)
    frame = read_table(path, PURCHASE_PRICES_SCHEMA, origin, CatalogError)
    return frame.reset_index(drop=True)


def _with_purchase_prices(frame, prices):
    """Fill ``price_usd`` where the catalogue has no list price, and give every price
    its ``price_low_usd`` / ``price_high_usd``, ``price_kind`` and ``price_source``.

    The central figure is the median of the most authoritative kind published for a
    device (list, then street, reseller, analyst estimate, and last a system's price
    per device, which also pays for the rest of the system); the range spans every
    figure found, ranges included.
    """
    frame["price_kind"] = np.where(frame["price_usd"].notna(), "list", "")
    frame["price_source"] = np.where(frame["price_usd"].notna(), frame["source_url"], "")
    frame["price_low_usd"] = frame["price_usd"]
    frame["price_high_usd"] = frame["price_usd"]
    if prices.empty:
        return frame
    p = prices.assign(key=prices["device"].str.lower(),
                      order=prices["price_kind"].map({k: i for i, k in enumerate(PRICE_KINDS)}))
    lows = p[["price_usd", "price_low_usd", "price_high_usd"]].min(axis=1)
    highs = p[["price_usd", "price_low_usd", "price_high_usd"]].max(axis=1)
    spread = pd.DataFrame({"key": p["key"], "low": lows, "high": highs}).groupby("key").agg(low=("low", "min"),
                                                                                            high=("high", "max"))
    best = p[p["order"] == p.groupby("key")["order"].transform("min")]
    central = best.groupby("key").agg(price=("price_usd", "median"), kind=("price_kind", "first"),
                                      source=("source_url", "first"))
    key = frame["name"].str.lower()
    fill = frame["price_usd"].isna() & key.isin(central.index)
    frame.loc[fill, "price_usd"] = key[fill].map(central["price"])
    frame.loc[fill, "price_kind"] = key[fill].map(central["kind"])
    frame.loc[fill, "price_source"] = key[fill].map(central["source"])
    has = key.isin(spread.index)
    frame.loc[has, "price_low_usd"] = np.fmin(frame.loc[has, "price_usd"], key[has].map(spread["low"]))
    frame.loc[has, "price_high_usd"] = np.fmax(frame.loc[has, "price_usd"], key[has].map(spread["high"]))
    return frame


def _with_cloud_prices(frame, prices):
    frame = _with_purchase_prices(frame, _builtin_purchase_prices())
    frame["cloud_usd_per_hour_low"] = frame["cloud_usd_per_hour"]
    frame["cloud_usd_per_hour_high"] = frame["cloud_usd_per_hour"]
    on_demand = prices[prices["pricing"].str.lower() == "on-demand"]
    if on_demand.empty:
        frame["cloud_instance"] = ""
        frame["cloud_price_source"] = ""
        return frame
    keys = on_demand["accelerator"].str.lower()
    cheapest = on_demand.loc[on_demand.groupby(keys)["usd_per_device_hour"].idxmin()]
    cheapest = cheapest.set_index(cheapest["accelerator"].str.lower())
    key = frame["name"].str.lower()
    derived = key.map(cheapest["usd_per_device_hour"])
    frame["cloud_usd_per_hour"] = frame["cloud_usd_per_hour"].fillna(derived)
    label = cheapest["provider"] + " " + cheapest["instance"] + " (" + cheapest["count"].astype(int).astype(str) + "x)"
    frame["cloud_instance"] = key.map(label).fillna("")
    frame["cloud_price_source"] = key.map(cheapest["source_url"]).fillna("")
    # the range: the cheapest committed (1- or 3-year) or on-demand rate to the dearest on-demand one
    usable = prices[prices["pricing"].str.lower().isin(["on-demand", "1yr", "3yr"])]
    low = usable.groupby(usable["accelerator"].str.lower())["usd_per_device_hour"].min()
    high = on_demand.groupby(keys)["usd_per_device_hour"].max()
    derived_rows = frame["cloud_usd_per_hour"].notna()
    frame["cloud_usd_per_hour_low"] = np.fmin(frame["cloud_usd_per_hour"], key.map(low)).where(derived_rows)
    frame["cloud_usd_per_hour_high"] = np.fmax(frame["cloud_usd_per_hour"], key.map(high)).where(derived_rows)
    return frame
