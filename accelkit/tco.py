"""Total cost of ownership: edge devices, cloud instances and on-prem clusters.

Each option is a small frozen dataclass built with :func:`edge`, :func:`cloud` or
:func:`on_prem` (which check every field). :func:`cost_stream` turns one option
into a monthly cash-flow table; :func:`compare` returns one row per option, and
:func:`monthly_cumulative` the long table behind a cumulative-cost chart.

Model (all figures in USD; a month is a twelfth of a mean Gregorian year,
``units.DAYS_PER_MONTH`` days):

* owned (edge / on-prem): purchase at month 0 (``units × unit_price + install``),
  re-purchase when the lifetime ends inside the horizon, monthly energy
  ``units × W × hours/day × days × tariff × PUE / 1000``, maintenance
  ``fraction × purchase / 12`` per month, fixed monthly costs (space, staff,
  network), and a straight-line residual value credited at the end of the horizon;
* cloud: ``price/hour × instances × hours/day × days × (1 − discount)`` plus egress
  ``GB × USD/GB`` and fixed monthly costs.

An optional yearly discount rate gives net present values
(``cost / (1 + r)^(month/12)``).

References
----------
.. [1] Gartner, "Total Cost of Ownership" (IT glossary): acquisition plus
   operating costs over the life of an asset.
.. [2] R. Brealey, S. Myers, F. Allen, *Principles of Corporate Finance*, ch. 2
   and 6 (discounting cash flows, equivalent annual cost).
.. [3] AWS EC2 on-demand pricing and data-transfer pricing pages (egress is billed
   per GB out to the internet).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import units
from ._validate import check_non_negative, check_number, check_positive

__all__ = [
    "DAYS_PER_MONTH",
    "OwnedOption",
    "CloudOption",
    "edge",
    "on_prem",
    "cloud",
    "cost_stream",
    "monthly_cumulative",
    "compare",
    "break_even_month",
]

DAYS_PER_MONTH = units.DAYS_PER_MONTH


@dataclass(frozen=True)
class OwnedOption:
    """Devices bought and run by the owner (edge boxes or an on-prem cluster)."""

    name: str
    kind: str  # "edge" or "on-prem"
    units: float  # devices (or servers) bought [count]
    unit_price_usd: float  # purchase price of one unit [USD]
    power_w: float  # power drawn by one unit while in use [W]
    hours_per_day: float = 24.0  # [h]
    electricity_usd_per_kwh: float = 0.15  # tariff [USD/kWh]
    pue: float = 1.0  # power usage effectiveness (facility / IT power) [-]
    maintenance_fraction_per_year: float = 0.05  # of the purchase price, per year [-]
    lifetime_years: float = 3.0  # replaced when it ends inside the horizon [years]
    residual_fraction: float = 0.0  # value left at the end of the lifetime [-]
    install_usd: float = 0.0  # one-off, at month 0 [USD]
    fixed_usd_per_month: float = 0.0  # space, staff, network [USD/month]


@dataclass(frozen=True)
class CloudOption:
    """Instances rented by the hour."""

    name: str
    usd_per_hour: float  # on-demand price of one instance [USD/h]
    instances: float = 1.0  # [count]
    hours_per_day: float = 24.0  # rented [h]
    discount_fraction: float = 0.0  # reserved or committed-use discount [-]
    egress_gb_per_month: float = 0.0  # data leaving the cloud [GB/month]
    egress_usd_per_gb: float = 0.09  # [USD/GB]
    fixed_usd_per_month: float = 0.0  # network, storage, support [USD/month]
    kind: str = "cloud"


def _check_owned(o):
    check_positive("units", o.units, "a number of devices")
    check_non_negative("unit_price_usd", o.unit_price_usd, "a price in USD")
    check_non_negative("power_w", o.power_w, "a power in watts")
    check_number("hours_per_day", o.hours_per_day, low=0, high=24, expected="hours per day in [0, 24]")
    check_non_negative("electricity_usd_per_kwh", o.electricity_usd_per_kwh, "a tariff in USD/kWh")
    check_number("pue", o.pue, low=1.0, high=5.0, expected="a PUE between 1 and 5")
    check_number("maintenance_fraction_per_year", o.maintenance_fraction_per_year, low=0, high=1,
                 expected="a yearly fraction of the purchase price in [0, 1]")
    check_positive("lifetime_years", o.lifetime_years, "a lifetime in years")
    check_number("residual_fraction", o.residual_fraction, low=0, high=1, expected="a fraction in [0, 1]")
    check_non_negative("install_usd", o.install_usd, "a cost in USD")
    check_non_negative("fixed_usd_per_month", o.fixed_usd_per_month, "a cost in USD per month")


def _check_cloud(o):
    check_non_negative("usd_per_hour", o.usd_per_hour, "an hourly price in USD")
    check_positive("instances", o.instances, "a number of instances")
    check_number("hours_per_day", o.hours_per_day, low=0, high=24, expected="hours per day in [0, 24]")
    check_number("discount_fraction", o.discount_fraction, low=0, high=1, high_inclusive=False,
                  expected="a discount fraction in [0, 1)")
    check_non_negative("egress_gb_per_month", o.egress_gb_per_month, "a volume in GB per month")
    check_non_negative("egress_usd_per_gb", o.egress_usd_per_gb, "a price in USD per GB")
    check_non_negative("fixed_usd_per_month", o.fixed_usd_per_month, "a cost in USD per month")


def edge(name, units, unit_price_usd, power_w, **kwargs):
    """An edge deployment: ``units`` devices on site (PUE 1 by default: no data hall)."""
    option = OwnedOption(name=name, kind="edge", units=units, unit_price_usd=unit_price_usd, power_w=power_w, **kwargs)
    _check_owned(option)
    return option


def on_prem(name, units, unit_price_usd, power_w, pue=1.5, **kwargs):
    """An on-prem cluster: ``units`` servers (or devices) in a data hall, PUE 1.5 by default."""
    option = OwnedOption(
        name=name, kind="on-prem", units=units, unit_price_usd=unit_price_usd, power_w=power_w, pue=pue, **kwargs
    )
    _check_owned(option)
    return option


def cloud(name, usd_per_hour, instances=1, **kwargs):
    """Rented instances; ``discount_fraction`` models reserved or spot prices."""
    option = CloudOption(name=name, usd_per_hour=usd_per_hour, instances=instances, **kwargs)
    _check_cloud(option)
    return option


def _check_horizon(horizon_months, discount_rate_per_year):
    check_number("horizon_months", horizon_months, low=1, high=600, expected="a horizon of 1 to 600 months")
    if int(horizon_months) != horizon_months:
        raise ValueError(f"horizon_months must be a whole number of months; got {horizon_months}")
    check_number("discount_rate_per_year", discount_rate_per_year, low=0, high=1,
                 expected="a yearly discount rate in [0, 1], e.g. 0.08")


def cost_stream(option, horizon_months=36, discount_rate_per_year=0.0):
    """Monthly cash flows of one option.

    Returns
    -------
    pandas.DataFrame
        One row per month 0..H (month 0 holds the purchase), columns
        ``purchase, energy, maintenance, rent, egress, fixed, residual, total``
        [USD], ``discounted`` (total at present value) and ``cumulative``
        (running sum of ``discounted``).
    """
    _check_horizon(horizon_months, discount_rate_per_year)
    h = int(horizon_months)
    month = np.arange(h + 1)
    running = (month >= 1).astype(float)
    z = np.zeros(h + 1)
    cols = {k: z.copy() for k in ("purchase", "energy", "maintenance", "rent", "egress", "fixed", "residual")}
    if isinstance(option, OwnedOption):
        _check_owned(option)
        capex = option.units * option.unit_price_usd
        life_m = option.lifetime_years * 12.0
        # buy at month 0 and again each time a lifetime ends before the horizon does
        buys = np.arange(0, h, life_m)
        for b in buys:
            cols["purchase"][int(np.floor(b))] += capex
        cols["purchase"][0] += option.install_usd
        kwh_month = option.units * option.power_w * option.hours_per_day * DAYS_PER_MONTH / units.WATTS_PER_KW
        cols["energy"] = running * kwh_month * option.electricity_usd_per_kwh * option.pue
        cols["maintenance"] = running * option.maintenance_fraction_per_year * capex / 12.0
        cols["fixed"] = running * option.fixed_usd_per_month
        # straight-line depreciation of the fleet bought last, down to its residual
        age_m = h - buys[-1]
        value = capex * (1.0 - (1.0 - option.residual_fraction) * min(age_m / life_m, 1.0))
        cols["residual"][h] = -value if option.residual_fraction > 0 or age_m < life_m else 0.0
    elif isinstance(option, CloudOption):
        _check_cloud(option)
        hours = option.hours_per_day * DAYS_PER_MONTH
        cols["rent"] = running * option.usd_per_hour * option.instances * hours * (1.0 - option.discount_fraction)
        cols["egress"] = running * option.egress_gb_per_month * option.egress_usd_per_gb
        cols["fixed"] = running * option.fixed_usd_per_month
    else:
        raise ValueError(
            f"option must be built with accelkit.tco.edge(), on_prem() or cloud(); got {type(option).__name__}"
        )
    frame = pd.DataFrame(cols, index=pd.Index(month, name="month"))
    frame["total"] = frame.sum(axis=1)
    factor = (1.0 + discount_rate_per_year) ** (-month / 12.0)
    frame["discounted"] = frame["total"] * factor
    frame["cumulative"] = frame["discounted"].cumsum()
    return frame


def _names_unique(options):
    names = [o.name for o in options]
    if len(set(names)) != len(names):
        raise ValueError(f"options must have distinct names; got {names}")
    if not options:
        raise ValueError("options must hold at least one option")


def monthly_cumulative(options, horizon_months=36, discount_rate_per_year=0.0):
    """Long table for a cumulative-cost chart: ``option, kind, month, cumulative_usd``."""
    options = list(options)
    _names_unique(options)
    parts = []
    for option in options:
        stream = cost_stream(option, horizon_months, discount_rate_per_year)
        parts.append(
            pd.DataFrame(
                {
                    "option": option.name,
                    "kind": option.kind,
                    "month": stream.index,
                    "cost_usd": stream["discounted"].to_numpy(),
                    "cumulative_usd": stream["cumulative"].to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def break_even_month(cumulative_a, cumulative_b):
    """First month from which option A has cost no more than option B, for good.

    Parameters
    ----------
    cumulative_a, cumulative_b : array-like
        Cumulative costs by month (same length), e.g. ``cost_stream(...)["cumulative"]``.

    Returns
    -------
    float
        The month index, 0 if A is never more expensive, NaN if A never catches up
        by the end of the horizon.
    """
    a = np.asarray(cumulative_a, dtype=float)
    b = np.asarray(cumulative_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"cumulative_a and cumulative_b must have the same length; got {a.size} and {b.size}")
    ahead = a <= b + 1e-9
    if ahead.all():
        return 0.0
    if not ahead[-1]:
        return float("nan")
    last_behind = int(np.flatnonzero(~ahead)[-1])
    return float(last_behind + 1)


def compare(options, horizon_months=36, discount_rate_per_year=0.0, work_units=None):
    """Compare edge / cloud / on-prem options over a horizon.

    Parameters
    ----------
    options : sequence of OwnedOption / CloudOption
        Built with :func:`edge`, :func:`cloud`, :func:`on_prem`.
    horizon_months : int, default 36
    discount_rate_per_year : float, default 0
        Yearly rate for present values; 0 gives plain sums.
    work_units : float, optional
        Units of work done over the horizon by every option (inferences, frames,
        training runs) for a cost-per-unit column.

    Returns
    -------
    pandas.DataFrame
        One row per option: ``option, kind, upfront_usd, running_usd_per_month``
        (average after month 0), ``total_usd`` (at present value when discounting),
        ``energy_usd``, ``vs_cheapest`` (ratio to the cheapest total),
        ``saving_vs_most_expensive`` (fraction), ``break_even_month_vs_cloud``
        (for owned options: the month from which they beat the cheapest cloud
        option; NaN if never or if there is no cloud option), and ``usd_per_unit``
        when ``work_units`` is given.
    """
    options = list(options)
    _names_unique(options)
    if work_units is not None:
        check_positive("work_units", work_units, "an amount of work")
    streams = {o.name: cost_stream(o, horizon_months, discount_rate_per_year) for o in options}
    rows = []
    for o in options:
        s = streams[o.name]
        rows.append(
            {
                "option": o.name,
                "kind": o.kind,
                "upfront_usd": float(s.loc[0, "total"]),
                "running_usd_per_month": float(s.loc[1:, "total"].mean()) if len(s) > 1 else 0.0,
                "energy_usd": float(s["energy"].sum()),
                "total_usd": float(s["cumulative"].iloc[-1]),
            }
        )
    table = pd.DataFrame(rows)
    cheapest = table["total_usd"].min()
    table["vs_cheapest"] = table["total_usd"] / cheapest if cheapest > 0 else np.nan
    most = table["total_usd"].max()
    table["saving_vs_most_expensive"] = 1.0 - table["total_usd"] / most if most > 0 else 0.0
    clouds = [o for o in options if isinstance(o, CloudOption)]
    if clouds:
        ref = min(clouds, key=lambda o: streams[o.name]["cumulative"].iloc[-1])
        table["break_even_month_vs_cloud"] = [
            break_even_month(streams[o.name]["cumulative"], streams[ref.name]["cumulative"])
            if isinstance(o, OwnedOption)
            else np.nan
            for o in options
        ]
    else:
        table["break_even_month_vs_cloud"] = np.nan
    if work_units is not None:
        table["usd_per_unit"] = table["total_usd"] / work_units
    return table
