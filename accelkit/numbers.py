"""Numbers for people: SI prefixes, thousands separators, words instead of ``inf`` and ``NaN``.

    >>> people(8.09e20, "FLOP")
    '809 EFLOP'
    >>> people(1234567)
    '1.23 M'
    >>> people(12345.6, "tokens")
    '12,346 tokens'
    >>> people(float("inf"))
    'does not fit'

One home for the prefix table: :func:`accelkit.probes.results.format_value` uses
:data:`SI_PREFIXES` too.
"""

from __future__ import annotations

import math

from .i18n import N_, _, language
from .units import EXA, GIGA, KILO, MEGA, PETA, TERA

__all__ = ["SI_PREFIXES", "DOES_NOT_FIT", "UNKNOWN", "people", "people_format", "significant", "joined"]

#: (scale, prefix), largest first; a value is shown with the largest prefix it reaches
SI_PREFIXES = ((EXA, "E"), (PETA, "P"), (TERA, "T"), (GIGA, "G"), (MEGA, "M"), (KILO, "k"), (1.0, ""))

#: what an infinite figure means on screen (a model that never fits, a target no count of devices meets)
DOES_NOT_FIT = N_("does not fit")
#: what a missing figure (NaN, None) means on screen
UNKNOWN = N_("unknown")

#: units a prefix is written onto ("809 EFLOP", "1.5 TB/s"); any other unit gets a space ("1.23 M tokens")
_SYMBOL_UNITS = ("FLOP", "FLOP/s", "OP/s", "B", "B/s", "W", "Wh", "J", "Hz", "bit/s", "b/s", "g")

#: from here up a number is written with an SI prefix; below, with thousands separators
PREFIX_FROM = 1e6
#: below this (and above 0) a number is written as a power of ten instead of a run of zeros
SMALLEST_PLAIN = 1e-6

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def significant(value, digits=3):
    """``value`` to ``digits`` significant digits, with thousands separators, never in e-notation.

    ``significant(999.6) -> '1,000'``, ``significant(0.000123) -> '0.000123'``, ``significant(2.50) -> '2.5'``.
    """
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - exponent)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _with_unit(number, prefix, unit):
    if not unit:
        return f"{number} {prefix}" if prefix else number
    if unit in _SYMBOL_UNITS or unit.startswith(tuple(u + " " for u in _SYMBOL_UNITS)):
        return f"{number} {prefix}{unit}"
    return f"{number} {prefix} {unit}" if prefix else f"{number} {unit}"


def people(value, unit="", digits=3, infinite=None, missing=None):
    """``value`` (with its ``unit``) as a person reads it.

    - ``NaN`` / ``None`` / not a number -> ``missing`` (default: "unknown", in the language in use);
      ``±inf`` -> ``infinite`` (default: "does not fit");
    - from a million up: an SI prefix (k, M, G, T, P, E) and ``digits`` significant digits
      (``8.09e20 -> '809 E'``, ``1234567 -> '1.23 M'``); beyond E, thousands separators on the E figure;
    - from 1,000 to a million: a whole number with thousands separators (``12,346``);
    - below 1,000: ``digits`` significant digits (``0.000123``, ``3.14``); below 1e-6 a power of ten
      (``1.5 × 10⁻⁹``).
    """
    missing = _(UNKNOWN) if missing is None else missing
    infinite = _(DOES_NOT_FIT) if infinite is None else infinite
    try:
        value = float(value)
    except (TypeError, ValueError):
        return missing
    if math.isnan(value):
        return missing
    if math.isinf(value):
        return infinite
    sign = "-" if value < 0 else ""
    size = abs(value)
    if size >= PREFIX_FROM:
        scale, prefix = next((s, p) for s, p in SI_PREFIXES if size >= s)
        shown = size / scale
        number = significant(shown, digits) if shown < 1000 else f"{shown:,.0f}"
        if number == "1,000" and scale < EXA:  # 999.6 M rounds to 1,000 M: say 1 G
            scale, prefix = next((s, p) for s, p in reversed(SI_PREFIXES) if s > scale)
            number = significant(size / scale, digits)
        return _with_unit(sign + number, prefix, unit)
    if size >= 1000:
        return _with_unit(f"{sign}{size:,.0f}", "", unit)
    if 0 < size < SMALLEST_PLAIN:
        exponent = math.floor(math.log10(size))
        mantissa = significant(size / 10 ** exponent, digits)
        if mantissa == "10":
            mantissa, exponent = "1", exponent + 1
        return _with_unit(f"{sign}{mantissa} × 10{str(exponent).translate(_SUPERSCRIPT)}", "", unit)
    return _with_unit(sign + significant(size, digits), "", unit)


def people_format(unit="", digits=3, **words):
    """A one-argument formatter for table columns (``table_html(frame, {"FLOP": people_format()})``)."""
    return lambda value: people(value, unit, digits, **words)


def joined(parts, major=False):
    """Clauses of one sentence joined as the language in use writes a list: ", " in English,
    "，" in Chinese, or "；" between ``major`` clauses that have commas of their own
    (``joined(["bf16", "8 devices"]) -> 'bf16, 8 devices'``)."""
    if language() == "en":
        return ", ".join(parts)
    return ("；" if major else "，").join(parts)
