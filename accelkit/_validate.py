"""Input checks shared by every formula module.

Each check returns its input unchanged (a pandas Series stays a Series) or raises
a ``ValueError`` that names the argument, shows the value and says what was
expected. Policy on missing values: a scalar NaN is always a mistake and raises;
inside an array or Series a NaN means "this figure is not published" (e.g. a
device without an FP8 figure) and is passed through, so that one vectorised call
can cover the whole catalogue and report the gaps as gaps.
"""

from __future__ import annotations

import difflib
import numpy as np

__all__ = [
    "check_number",
    "check_positive",
    "check_non_negative",
    "check_fraction",
    "check_choice",
    "check_integer",
    "suggest",
]


def _describe(value):
    if isinstance(value, (list, tuple)) or hasattr(value, "shape"):
        return "an array"
    return repr(value)


def _as_float_array(name, value, expected):
    if isinstance(value, str):
        raise ValueError(f"{name} must be {expected}; got the text {value!r}")
    if value is None:
        raise ValueError(f"{name} must be {expected}; got None")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {expected}; got {_describe(value)} that is not numeric") from None
    return arr


def check_number(
    name,
    value,
    *,
    low=None,
    high=None,
    low_inclusive=True,
    high_inclusive=True,
    expected="a finite number",
    allow_missing_in_arrays=True,
):
    """Check that ``value`` (scalar or array-like) is numeric and inside a range.

    Parameters
    ----------
    name : str
        Argument name, used in the error message.
    value : numeric, array-like or pandas Series
    low, high : float, optional
        Bounds; ``None`` for open.
    expected : str
        Words for the message, e.g. ``"a number of parameters > 0"``.

    Returns
    -------
    The unchanged ``value``.
    """
    arr = _as_float_array(name, value, expected)
    scalar = arr.ndim == 0
    nan = np.isnan(arr)
    if scalar and nan:
        raise ValueError(f"{name} must be {expected}; got NaN (a missing value)")
    if not scalar and nan.all() and arr.size:
        raise ValueError(f"{name} must be {expected}; every value is NaN (missing)")
    if not scalar and nan.any() and not allow_missing_in_arrays:
        idx = int(np.flatnonzero(nan.ravel())[0])
        raise ValueError(f"{name} must be {expected}; got NaN (a missing value) at position {idx}")
    bad = np.isinf(arr)
    with np.errstate(invalid="ignore"):
        if low is not None:
            bad |= (arr < low) if low_inclusive else (arr <= low)
        if high is not None:
            bad |= (arr > high) if high_inclusive else (arr >= high)
    bad &= ~nan
    if bad.any():
        if scalar:
            raise ValueError(f"{name} must be {expected}; got {float(arr):g}")
        idx = int(np.flatnonzero(bad.ravel())[0])
        label = idx
        if hasattr(value, "index"):
            label = value.index[idx]
        raise ValueError(
            f"{name} must be {expected}; got {arr.ravel()[idx]:g} at {label!r}"
            f" ({int(bad.sum())} bad value{'s' if bad.sum() > 1 else ''} in all)"
        )
    return value


def check_positive(name, value, what="a number"):
    """Require ``value > 0`` (and finite)."""
    return check_number(name, value, low=0, low_inclusive=False, expected=f"{what} > 0")


def check_non_negative(name, value, what="a number"):
    """Require ``value >= 0`` (and finite)."""
    return check_number(name, value, low=0, expected=f"{what} >= 0")


def check_fraction(name, value, what="a fraction"):
    """Require ``0 < value <= 1`` -- utilisation, efficiency, MFU."""
    return check_number(
        name, value, low=0, high=1, low_inclusive=False, expected=f"{what} in (0, 1], e.g. 0.4 for 40 %"
    )


def check_integer(name, value, low=1, what="a whole number"):
    """Require a whole number ``>= low`` (scalar or array)."""
    check_number(name, value, low=low, expected=f"{what} >= {low}")
    arr = np.asarray(value, dtype=float)
    finite = arr[~np.isnan(arr)] if arr.ndim else arr
    if np.any(np.asarray(finite) != np.floor(finite)):
        raise ValueError(f"{name} must be {what} >= {low}; got {_describe(value) if arr.ndim else value}")
    return value


def suggest(word, options, n=3):
    """Closest matches of ``word`` among ``options`` (case-insensitive)."""
    lowered = {str(o).lower(): o for o in options}
    close = difflib.get_close_matches(str(word).lower(), list(lowered), n=n, cutoff=0.5)
    return [lowered[c] for c in close]


def check_choice(name, value, options):
    """Require ``value`` (a string, case-insensitive) to be one of ``options``.

    Returns the canonical (lower-case) option.
    """
    options = list(options)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be one of {', '.join(map(str, options))}; got {value!r}")
    key = value.strip().lower()
    for option in options:
        if key == str(option).lower():
            return option
    hint = suggest(key, options)
    did_you_mean = f" Did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
    raise ValueError(f"{name} must be one of {', '.join(map(str, options))}; got {value!r}.{did_you_mean}")
