"""Purchasable units: what a buyer actually orders, and how many accelerators it holds.

``data/systems.csv`` has one row per orderable unit -- an 8-GPU server (DGX / HGX),
a rack (GB200 NVL72), accelerators on their baseboard (Intel's Gaudi kits), a PCIe
card in a host server, a Jetson developer kit or module on a carrier, or a TPU that
can only be rented (``cloud_only``) -- with the unit's price, the price's kind and
date, the whole unit's power where a spec sheet states it, and the source of every
figure. See ``data/README.md`` for the columns. A figure nobody could source stays
empty, with a note saying why.

:func:`load_systems` is pure data access: it reads and checks the table through the
one table reader (:mod:`accelkit.tables`) and returns it. It checks every ``device``
against the catalogue (exact catalogue names; a near miss or an alias is named in
the error with the catalogue name to use), the price's range, kind and date, and
that a ``cloud_only`` unit carries no purchase price. Every problem is reported at
once as a :class:`~accelkit.catalog.CatalogError` naming the file, line and column.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .tables import Column, Schema, check_rows, problem, raise_problems, read_rows

__all__ = ["SYSTEMS_SCHEMA", "UNIT_KINDS", "SYSTEM_PRICE_KINDS", "SYSTEM_COLUMNS", "load_systems"]

#: what a unit is: ``baseboard`` = accelerators on their baseboard, the host server bought apart
UNIT_KINDS = ("server", "rack", "card_in_host", "baseboard", "module_with_carrier", "devkit", "cloud_only")
#: where a unit's price comes from: a vendor list price, one reseller's listing, an analyst's
#: estimate, or a press report
SYSTEM_PRICE_KINDS = ("list", "reseller", "analyst", "press")

SYSTEM_COLUMNS = ["system", "device", "devices_per_unit", "unit_kind", "price_usd", "price_low_usd",
                  "price_high_usd", "price_kind", "price_date", "unit_power_w", "host_power_w", "source_url",
                  "source_url_2", "retrieved", "notes"]

SYSTEMS_SCHEMA = Schema("a systems CSV", (
    Column("system", required=True, nonempty=True, empty_message="every unit needs its name"),
    Column("device", required=True, nonempty=True,
           empty_message="every unit needs the catalogue name of its accelerator"),
    Column("devices_per_unit", "integer", expected="a whole number of accelerators per unit >= 1",
           low=1, low_inclusive=True, required=True, nonempty=True),
    Column("unit_kind", choices=UNIT_KINDS, lower=True, required=True, nonempty=True),
    Column("price_usd", "number", expected="a unit price in USD > 0", unit="USD", low=0, required=True),
    Column("price_low_usd", "number", expected="a unit price in USD > 0", unit="USD", low=0),
    Column("price_high_usd", "number", expected="a unit price in USD > 0", unit="USD", low=0),
    Column("price_kind", choices=SYSTEM_PRICE_KINDS, lower=True),
    Column("unit_power_w", "number", expected="the whole unit's maximum power in W > 0", unit="W", low=0),
    Column("host_power_w", "number", expected="the host's (non-accelerator) power in W > 0", unit="W", low=0),
    Column("source_url", required=True, nonempty=True, empty_message="every unit needs a source"),
), label="system", unique="system", unique_message="system {value!r} appears twice")

_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")


def _device_problems(frame, origin, catalog):
    """An unknown device name, with the catalogue name to use when it is a near miss or an alias."""
    from ._validate import suggest

    names = catalog["name"].astype(str).tolist()
    known = set(names)
    by_alias = {}
    if "aliases" in catalog.columns:
        for name, aliases in zip(names, catalog["aliases"].fillna("").astype(str)):
            for alias in filter(None, (a.strip() for a in aliases.split("|"))):
                by_alias.setdefault(alias.lower(), name)
    out = []
    for i in frame.index[~frame["device"].isin(known) & (frame["device"] != "")]:
        device = frame.at[i, "device"]
        hints = [by_alias[device.lower()]] if device.lower() in by_alias else suggest(device, names)
        hint = f" (did you mean {', '.join(map(repr, hints))}?)" if hints else ""
        out.append(problem(origin, i, "device", f"unknown device {device!r}; expected a name exactly as in "
                                                f"accelerators.csv{hint}", frame.at[i, "system"]))
    return out


def _row_problems(frame, origin):
    """Checks that span columns: price range and provenance, dates, cloud-only units, power split."""
    out = []
    label = frame["system"]
    priced = frame["price_usd"].notna()
    for col in ("price_low_usd", "price_high_usd"):
        for i in frame.index[frame[col].notna() & ~priced]:
            out.append(problem(origin, i, col, "a price range needs its central price_usd", label[i]))
    low_bad = priced & frame["price_low_usd"].notna() & (frame["price_low_usd"] > frame["price_usd"])
    high_bad = priced & frame["price_high_usd"].notna() & (frame["price_high_usd"] < frame["price_usd"])
    out += [problem(origin, i, "price_low_usd", f"expected price_low_usd <= price_usd "
                                                f"({frame.at[i, 'price_usd']:g}), got {frame.at[i, 'price_low_usd']:g}",
                    label[i]) for i in frame.index[low_bad]]
    out += [problem(origin, i, "price_high_usd", f"expected price_high_usd >= price_usd "
                                                 f"({frame.at[i, 'price_usd']:g}), got {frame.at[i, 'price_high_usd']:g}",
                    label[i]) for i in frame.index[high_bad]]
    out += [problem(origin, i, "price_kind", "a priced unit needs its price_kind (one of "
                                             f"{', '.join(SYSTEM_PRICE_KINDS)})", label[i])
            for i in frame.index[priced & (frame["price_kind"] == "")]]
    for col in ("price_date", "retrieved"):
        bad = (frame[col] != "") & ~frame[col].str.match(_DATE)
        out += [problem(origin, i, col, f"expected a date as YYYY-MM or YYYY-MM-DD, got {frame.at[i, col]!r}",
                        label[i]) for i in frame.index[bad]]
    undated = frame["notes"].str.lower().str.contains("undated", regex=False)
    no_date = priced & (frame["price_date"] == "") & ~(undated & (frame["retrieved"] != ""))
    out += [problem(origin, i, "price_date", "a priced unit needs the date its price held (or, when the source "
                                             "is undated, 'undated' in notes and a retrieved date)", label[i])
            for i in frame.index[no_date]]
    cloud = frame["unit_kind"] == "cloud_only"
    for col in ("price_usd", "price_low_usd", "price_high_usd"):
        out += [problem(origin, i, col, "a cloud_only unit cannot be bought: leave the purchase price empty "
                                        "(its rent belongs in cloud_prices.csv)", label[i])
                for i in frame.index[cloud & frame[col].notna()]]
    split = frame["unit_power_w"].notna() & frame["host_power_w"].notna() & (
        frame["host_power_w"] > frame["unit_power_w"])
    out += [problem(origin, i, "host_power_w", f"expected host_power_w <= unit_power_w "
                                               f"({frame.at[i, 'unit_power_w']:g}), got {frame.at[i, 'host_power_w']:g}",
                    label[i]) for i in frame.index[split]]
    url_bad = ~frame["source_url"].str.startswith("http") & (frame["source_url"] != "")
    out += [problem(origin, i, "source_url", f"expected the URL the figures were read from, got "
                                             f"{frame.at[i, 'source_url']!r}", label[i]) for i in frame.index[url_bad]]
    return out


def _read(path, origin, catalog):
    from .catalog import CatalogError

    frame, problems = check_rows(read_rows(path, origin, CatalogError, SYSTEMS_SCHEMA.suffixes, "units"),
                                 SYSTEMS_SCHEMA, origin, CatalogError)
    for col in SYSTEM_COLUMNS:
        if col not in frame.columns:
            frame[col] = ""
    problems += _row_problems(frame, origin)
    problems += _device_problems(frame, origin, catalog)
    raise_problems(origin, problems, CatalogError)
    frame["devices_per_unit"] = frame["devices_per_unit"].astype(int)
    extra = [c for c in frame.columns if c not in SYSTEM_COLUMNS]
    return frame[SYSTEM_COLUMNS + extra].reset_index(drop=True)


@lru_cache(maxsize=1)
def _builtin():
    from .catalog import data_path, load_catalog

    return _read(data_path("systems.csv"), "systems", load_catalog())


def load_systems(path=None, catalog=None):
    """The purchasable units: one row per unit a buyer orders, checked against the catalogue.

    Parameters
    ----------
    path : str or Path, optional
        A CSV with the columns of ``data/systems.csv`` (system, device,
        devices_per_unit, unit_kind, price_usd, price_low_usd, price_high_usd,
        price_kind, price_date, unit_power_w, host_power_w, source_url, notes; optional
        source_url_2, retrieved). Default: the built-in table. A user's file is read,
        never written.
    catalog : pandas.DataFrame, optional
        The catalogue whose ``name`` column the ``device`` cells must match
        (default: :func:`accelkit.load_catalog`).

    Returns
    -------
    pandas.DataFrame
        One row per unit; prices in USD and powers in W as floats (NaN where no
        source gives the figure), ``devices_per_unit`` as int, ``unit_kind`` and
        ``price_kind`` in lower case.

    Raises
    ------
    accelkit.catalog.CatalogError
        Listing every problem: file, CSV line, system, column and what was expected
        (an unknown device names the closest catalogue names).
    """
    if path is None and catalog is None:
        return _builtin().copy()
    from .catalog import data_path, load_catalog

    catalog = load_catalog() if catalog is None else catalog
    origin = "systems" if path is None else f"systems file {path}"
    path = data_path("systems.csv") if path is None else Path(path)
    return _read(path, origin, catalog)
