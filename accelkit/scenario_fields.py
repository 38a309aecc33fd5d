"""The checks each scenario field runs on a value (numbers in range, choices, device,
model and vendor names with close matches, criterion weights); each raises
:class:`~accelkit.errors.ScenarioError` naming the field. Split out of
:mod:`accelkit.scenario` (one job per module).
"""

from __future__ import annotations

import math

from ._validate import suggest
from .errors import ScenarioError
from .errors import short_repr as _short

__all__ = []


def _num(low=None, high=None, integer=False, allow_none=False, low_open=False):
    def check(name, value):
        if value is None and allow_none:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, int):
            try:
                value = float(value)
            except (TypeError, ValueError, OverflowError):
                raise ScenarioError(name, f"expected a number, got {_short(value)}") from None
        if math.isnan(value) or math.isinf(value):
            raise ScenarioError(name, f"expected a finite number, got {_short(value)}")
        if low is not None and (value < low or (low_open and value == low)):
            raise ScenarioError(name, f"expected a number {'>' if low_open else '>='} {low:g}, got {value:g}")
        if high is not None and value > high:
            raise ScenarioError(name, f"expected a number <= {high:g}, got {value:g}")
        if integer:
            if value != int(value):
                raise ScenarioError(name, f"expected a whole number, got {value:g}")
            return int(value)
        return float(value)

    return check


def _choice(options):
    def check(name, value):
        if not isinstance(value, str) or value.strip().lower() not in options:
            hint = suggest(str(value)[:100], options)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ScenarioError(name, f"expected one of {', '.join(options)}, got {_short(value)}{extra}")
        return value.strip().lower()

    return check


def _model_name(name, value):
    value = _text(name, value)
    if value.lower() == "custom" or not value:
        return value or "custom"
    from .models import find_model

    try:
        return find_model(value)["name"]
    except ValueError as exc:
        raise ScenarioError(name, str(exc)) from None


def _device_names(name, value):
    names = _text_list()(name, value)
    if not names:
        return names
    from .catalog import find

    out = []
    for item in names:
        try:
            out.append(find(item)["name"])
        except ValueError as exc:
            raise ScenarioError(name, str(exc)) from None
    return out


def _vendor_names(name, value):
    names = _text_list()(name, value)
    if not names:
        return names
    from .catalog import load_catalog

    known = sorted(load_catalog()["vendor"].dropna().unique())
    lower = {v.lower(): v for v in known}
    out = []
    for item in names:
        if item.lower() not in lower:
            hint = suggest(item, known)
            raise ScenarioError(name, f"unknown vendor {item[:40]!r}; vendors are {', '.join(known)}"
                                + (f" (did you mean {hint[0]!r}?)" if hint else ""))
        out.append(lower[item.lower()])
    return out


def _stack_name(name, value):
    """A software stack of ``data/stacks.csv`` (lower case), or None: each device's vendor default."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "default", "none")):
        return None
    if not isinstance(value, str):
        raise ScenarioError(name, f"expected a stack name, got {_short(value)}")
    from .projection.stacks import load_stacks

    options = load_stacks()["stack"].tolist()
    value = value.strip().lower()
    if value not in options:
        hint = suggest(value[:100], options)
        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise ScenarioError(name, f"expected one of {', '.join(options)} or empty (each device's default), "
                                  f"got {_short(value)}{extra}")
    return value


def _text(name, value):
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ScenarioError(name, f"expected a text, got {_short(value)}")
    return value.strip()


def _text_list(options=None):
    def check(name, value):
        if value is None or value == "":
            return []
        if isinstance(value, str):
            value = [v for v in (p.strip() for p in value.replace(";", ",").split(",")) if v]
        if not isinstance(value, (list, tuple)):
            raise ScenarioError(name, f"expected a list of names, got {_short(value)}")
        out = []
        for item in value:
            if not isinstance(item, str):
                raise ScenarioError(name, f"expected names (text), got {_short(item)}")
            item = item.strip()
            if options is not None:
                item = _choice(options)(name, item)
            out.append(item)
        return out

    return check


def _weights(name, value):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(name, f"expected a mapping of criterion to weight, got {_short(value)}")
    if not value:
        return {}
    from .vocabulary import DECISION_CRITERIA as CRITERIA
    from .vocabulary import DECISION_WEIGHTS as DEFAULT_WEIGHTS
    from .vocabulary import ECOSYSTEM_WEIGHTS as GROUP_WEIGHTS

    known = list(CRITERIA) + [f"ecosystem.{k}" for k in GROUP_WEIGHTS]
    out = {}
    for key, weight in value.items():
        if str(key) not in known:
            hint = suggest(str(key)[:100], known)
            raise ScenarioError(name, f"unknown criterion {_short(key)}; criteria are {', '.join(CRITERIA)} (and "
                                f"ecosystem.<group> for the software-fit groups)"
                                + (f" (did you mean {hint[0]!r}?)" if hint else ""))
        out[str(key)] = _num(low=0, high=100)(f"{name}.{key}", weight)
    criteria = {**DEFAULT_WEIGHTS, **{k: v for k, v in out.items() if k in CRITERIA}}
    groups = {**GROUP_WEIGHTS, **{k.split(".", 1)[1]: v for k, v in out.items() if k.startswith("ecosystem.")}}
    if sum(criteria.values()) <= 0:
        raise ScenarioError(name, f"at least one of {', '.join(CRITERIA)} needs a weight above 0")
    if sum(groups.values()) <= 0:
        raise ScenarioError(name, "at least one ecosystem.<group> needs a weight above 0")
    return out
