"""The words of the decision page for amounts, ranges, dates and counts, in the reader's language.

Split out of :mod:`accelkit.select.summary` (one job per module); the summary, the decision tab,
chapter 05 and the report's index write money, ranges and dates through these.
"""

from __future__ import annotations

import math

from ..i18n import DEFAULT_LANGUAGE, _, language

__all__ = ["usd_words", "money_range", "date_words", "range_words", "count_words"]


def _english():
    return language() == DEFAULT_LANGUAGE


def _dollars(usd):
    """Dollars alone, as people read them ("$1,234", "$1.23 M"): the ends of a range in Chinese."""
    from ..numbers import people

    return "$" + (people(usd) if abs(usd) >= 1 else f"{usd:.2f}")


def usd_words(usd):
    """A USD amount on the decision page: ``$1,234`` in English (whole dollars, as ever); in
    Chinese :func:`accelkit.currency.money` (with the yuan beside it once a rate is published)."""
    if _english():
        return f"${usd:,.0f}"
    from ..currency import money

    return money(usd)


def money_range(usd, low, high, missing, collapse=True):
    """A USD amount with its range, ``$1,234 ($1,000-$1,500)``; in Chinese the central figure
    through :func:`accelkit.currency.money` and the ends in dollars."""
    if _english():
        return range_words(usd, low, high, "${:,.0f}", missing, collapse)
    return range_words(usd, low, high, _dollars, missing, collapse, central=usd_words)


def date_words(text):
    """A price date for a reader: ISO as stored in English ("2025-01-15", "2020-05"); in another
    language as its locale writes the day or the month (:func:`accelkit.i18n.format_date`)."""
    text = str(text)
    if _english():
        return text
    import datetime

    from ..i18n import _babel_locale, format_date

    try:
        if len(text) == 10:
            return format_date(text)
        if len(text) == 7:
            from babel.dates import format_skeleton

            return format_skeleton("yMMM", datetime.date.fromisoformat(text + "-01"), locale=_babel_locale())
    except (ValueError, TypeError):
        pass
    return text


def _finite(x):
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def range_words(value, low, high, fmt, missing="—", collapse=True, central=None):
    """``value (low-high)``, or ``missing`` where the value is unknown or infinite.

    ``fmt`` is a format string (``"{:,.0f}"``) or a function of one number; ``central``, a
    function, writes the central figure differently from the ends (default: as ``fmt``).
    When ``fmt`` would print a real range as one number, the figures are shown to three
    significant digits instead, so a range never reads as certainty; a range that is one
    figure is shown as that figure (``collapse``).
    """
    write = fmt if callable(fmt) else fmt.format
    if not _finite(value):
        return missing
    if not (_finite(low) and _finite(high)):
        return central(value) if central else write(value)
    low, high = min(low, high), max(low, high)
    texts = [write(v) for v in (value, low, high)]
    if len(set(texts)) == 1 and low < high:
        texts = [f"{v:,.3g}" for v in (value, low, high)]
    first = central(value) if central else texts[0]
    if collapse and texts[1] == texts[2]:
        return first
    return _("{value} ({low}-{high})").format(value=first, low=texts[1], high=texts[2])


def count_words(x):
    """A count for people: 20 billion, 1.5 million, 12,000 (in Chinese: 200亿, 150万, 12,000)."""
    if _english():
        scales = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
        for size, word in scales:
            if abs(x) >= size:
                return f"{x / size:,.3g} {word}"
    else:
        # Chinese counts in 万 (10^4), 亿 (10^8) and 万亿 (10^12)
        for size, word in ((1e12, "万亿"), (1e8, "亿"), (1e4, "万")):
            if abs(x) >= size:
                return f"{x / size:,.3g}{word}"
    return f"{x:,.0f}"
