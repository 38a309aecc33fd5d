"""The hourly cloud price a decision uses, by a stated policy (not the cheapest listing).

``data/cloud_prices.csv`` holds listings: one provider's instance, its accelerator count,
its hourly price and the pricing term (on-demand, 1-year or 3-year commitment, spot).
A buyer renting at scale does not get the single cheapest marketplace listing for every
device they need, so the default policy is the **median across providers**: each
provider's cheapest rate per device-hour for the term, then the median of those, with
the lowest and highest provider as the range.

Policies (``Scenario.cloud_pricing``):

* ``on-demand`` (default): median across providers of on-demand rates; range min-max.
* ``committed-1y`` / ``committed-3y``: the same over 1- or 3-year commitments (AWS
  reserved, GCP committed use); a device with no such listing has no price.
* ``lowest``: the single cheapest on-demand listing (the range reaches down to any
  commitment); what a bargain hunter finds, stated as such.

``providers`` restricts the listings to the named providers. A catalogue row that
carries its own ``cloud_usd_per_hour`` with no listing (a user's catalogue) keeps it.

Reference: the listings' own sources (``source_url`` on each row of
``data/cloud_prices.csv``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._validate import suggest
from .i18n import N_, _

__all__ = ["POLICIES", "cloud_rates"]

#: policy -> the ``pricing`` terms of data/cloud_prices.csv it reads
POLICIES = {"on-demand": ("on-demand",), "committed-1y": ("1yr",), "committed-3y": ("3yr",), "lowest": ("on-demand",)}

#: policy -> the price basis in words (``cloud_price_basis``), translated when the rates are made
_BASIS = {"on-demand": N_("median on-demand rate of {n} provider(s)"),
          "committed-1y": N_("median 1-year commitment of {n} provider(s)"),
          "committed-3y": N_("median 3-year commitment of {n} provider(s)"),
          "lowest": N_("cheapest listing among {n} provider(s)")}


def _check_providers(providers, listings):
    known = sorted(listings["provider"].dropna().unique())
    lower = {p.lower(): p for p in known}
    out = []
    for name in providers:
        if str(name).lower() not in lower:
            hint = suggest(str(name), known)
            raise ValueError(f"providers: unknown provider {str(name)[:40]!r}; providers listed are {', '.join(known)}"
                             + (f" (did you mean {hint[0]!r}?)" if hint else ""))
        out.append(lower[str(name).lower()])
    return out


def cloud_rates(catalog, policy="on-demand", providers=None, listings=None):
    """Per catalogue device, the hourly rent under ``policy`` with its range.

    Parameters
    ----------
    catalog : DataFrame
        Catalogue rows (``name``, and ``cloud_usd_per_hour`` for a user's own rate).
    policy : str
        One of :data:`POLICIES`.
    providers : list of str, optional
        Only these providers' listings (names as in ``data/cloud_prices.csv``).
    listings : DataFrame, optional
        :func:`accelkit.catalog.load_cloud_prices` (default: the built-in table).

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``: ``cloud_usd_per_hour``, ``cloud_usd_per_hour_low``,
        ``cloud_usd_per_hour_high`` [USD per device-hour], ``cloud_providers`` (how
        many providers set the price), ``cloud_largest_instance`` (most devices in one
        listed instance), ``cloud_smallest_instance`` (fewest devices one listing rents),
        ``cloud_price_basis`` (the policy in words, in the language in use) and
        ``cloud_price_source`` (the URLs of the listings used).
    """
    if policy not in POLICIES:
        hint = suggest(str(policy), list(POLICIES))
        raise ValueError(f"cloud_pricing: expected one of {', '.join(POLICIES)}, got {policy!r}"
                         + (f" (did you mean {hint[0]!r}?)" if hint else ""))
    if listings is None:
        from .catalog import _builtin_prices

        listings = _builtin_prices()
    rows = listings[listings["pricing"].str.lower().isin(POLICIES[policy])]
    if providers:
        rows = rows[rows["provider"].isin(_check_providers(providers, listings))]
    key = catalog["name"].str.lower()
    out = pd.DataFrame(index=catalog.index)
    if rows.empty:
        per_provider = pd.DataFrame(columns=["accelerator", "provider", "usd_per_device_hour", "count", "source_url"])
    else:
        # each provider's cheapest rate for the device under this term
        idx = rows.groupby([rows["accelerator"].str.lower(), rows["provider"]])["usd_per_device_hour"].idxmin()
        per_provider = rows.loc[idx.to_numpy()]
    grouped = per_provider.groupby(per_provider["accelerator"].str.lower())
    rate = grouped["usd_per_device_hour"]
    central = rate.min() if policy == "lowest" else rate.median()
    low, high = rate.min(), rate.max()
    if policy == "lowest":
        # the range reaches down to any commitment the listings hold
        committed = listings[listings["pricing"].str.lower().isin(("on-demand", "1yr", "3yr"))]
        if providers:
            committed = committed[committed["provider"].isin(_check_providers(providers, listings))]
        low = committed.groupby(committed["accelerator"].str.lower())["usd_per_device_hour"].min()
        high = central
    out["cloud_usd_per_hour"] = key.map(central).astype(float)
    out["cloud_usd_per_hour_low"] = np.fmin(out["cloud_usd_per_hour"], key.map(low).astype(float))
    out["cloud_usd_per_hour_high"] = np.fmax(out["cloud_usd_per_hour"], key.map(high).astype(float))
    out["cloud_providers"] = key.map(rate.count()).fillna(0).astype(int)
    out["cloud_largest_instance"] = key.map(grouped["count"].max()).astype(float)
    # the fewest devices one can rent: the smallest instance among the listings that set the price
    out["cloud_smallest_instance"] = key.map(grouped["count"].min()).astype(float)
    out["cloud_price_source"] = key.map(grouped["source_url"].agg(lambda s: " ".join(dict.fromkeys(s)))).fillna("")
    words = _(_BASIS[policy])
    out["cloud_price_basis"] = [words.format(n=n) if n else "" for n in out["cloud_providers"]]
    # a user's catalogue row with its own rate and no listing keeps it
    own = out["cloud_usd_per_hour"].isna() & catalog.get("cloud_usd_per_hour", pd.Series(np.nan, index=catalog.index)).notna() \
        & (out["cloud_providers"] == 0) & ~key.isin(listings["accelerator"].str.lower())
    if own.any():
        for col in ("cloud_usd_per_hour", "cloud_usd_per_hour_low", "cloud_usd_per_hour_high"):
            out.loc[own, col] = catalog.loc[own, "cloud_usd_per_hour"].astype(float)
        out.loc[own, "cloud_price_basis"] = _("your catalogue's rate")
    return out
