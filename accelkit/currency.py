"""Money for people in their currency: USD, and CNY beside it for a Chinese reader.

Every price in the workbook is stored and computed in USD (the catalogue's unit). A reader in
Simplified Chinese sees the yuan figure beside the dollars, at an exchange rate that is data:
``data/exchange_rates.csv`` (``date, usd_to_cny, source, note, source_url``), each row a published
rate of one day (``YYYY-MM-DD``) or a published monthly average (``YYYY-MM``). The newest row is used, and the page that shows yuan states that rate, its
date and its source (:func:`rate_note`). With no row, only dollars are shown: a rate is never
guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .errors import CatalogError
from .i18n import _, language
from .numbers import people
from .paths import data_path
from .tables import Column, Schema, read_table

__all__ = ["ExchangeRate", "EXCHANGE_RATES_SCHEMA", "load_exchange_rates", "usd_to_cny_rate", "money", "rate_note"]

EXCHANGE_RATES_SCHEMA = Schema("an exchange rates CSV", (
    Column("date", required=True, nonempty=True, expected="the day (YYYY-MM-DD) or month (YYYY-MM, a monthly average) of the rate"),
    Column("usd_to_cny", "number", expected="yuan per US dollar > 0", low=0, required=True),
    Column("source", required=True, nonempty=True, expected="who published the rate, short (shown on the page)"),
    Column("note", expected="which release, which day or month, how the figure is made"),
    Column("source_url", required=True, nonempty=True, empty_message="every rate needs a source"),
))


@dataclass(frozen=True)
class ExchangeRate:
    """One published rate: ``usd_to_cny`` yuan per dollar on ``date``, by ``source`` (``source_url``)."""

    date: str
    usd_to_cny: float
    source: str
    source_url: str


def load_exchange_rates(path=None):
    """The exchange-rate table, oldest first (an empty frame where the file is absent)."""
    import pandas as pd

    path = data_path("exchange_rates.csv") if path is None else path
    if not path.exists():
        return pd.DataFrame(columns=["date", "usd_to_cny", "source", "source_url"])
    frame = read_table(path, EXCHANGE_RATES_SCHEMA, "exchange rates", CatalogError)
    return frame.dropna(subset=["usd_to_cny"]).sort_values("date").reset_index(drop=True)


@lru_cache(maxsize=1)
def usd_to_cny_rate():
    """The newest published rate (:class:`ExchangeRate`), or None when the table has none."""
    frame = load_exchange_rates()
    if frame.empty:
        return None
    row = frame.iloc[-1]
    return ExchangeRate(str(row["date"]), float(row["usd_to_cny"]), str(row["source"]), str(row["source_url"]))


def money(usd, digits=3):
    """``usd`` as a person reads it: ``$1,234``; in Chinese also the yuan, ``$1,234（¥8,765）``.

    Missing or infinite amounts read as :func:`accelkit.numbers.people` writes them.
    """
    try:
        value = float(usd)
    except (TypeError, ValueError):
        return people(usd)
    if not math.isfinite(value):
        return people(value)
    text = _amount("$", value, digits)
    rate = usd_to_cny_rate() if language() == "zh_CN" else None
    if rate is None:
        return text
    return f"{text}（{_amount('¥', value * rate.usd_to_cny, digits)}）"


def _amount(symbol, value, digits):
    # "$1,234", "$1.5 M", "-$20": the symbol before the figure, as prices are written
    sign = "-" if value < 0 else ""
    figure = people(abs(value), digits=digits) if abs(value) >= 1 else f"{abs(value):.2f}"
    return f"{sign}{symbol}{figure}"


def rate_note():
    """One sentence naming the rate behind the yuan figures (empty in English or without a rate)."""
    rate = usd_to_cny_rate()
    if rate is None or language() != "zh_CN":
        return ""
    return _("Yuan at {rate} per US dollar, {source}, {date}.").format(
        rate=f"{rate.usd_to_cny:.4f}", source=rate.source, date=rate.date)
