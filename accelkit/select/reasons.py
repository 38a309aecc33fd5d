"""The words of a ranked row: each device's reason, with figures to two significant
figures, "past the target by" and money. Split out of :mod:`accelkit.select.ranking`
(one job per module).
"""

from __future__ import annotations

import numpy as np

from .scoring import CRITERIA

__all__ = []


_ONE = {"tokens": "token", "frames": "frame", "requests": "request", "samples": "sample", "sequences": "sequence"}


def _sig(value, digits=2):
    """A number to ``digits`` significant figures, with thousands separators ("1.0", "12", "1,300")."""
    if not value == value:
        return "unknown"
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    magnitude = int(np.floor(np.log10(abs(value))))
    decimals = max(digits - 1 - magnitude, 0)
    rounded = round(value, digits - 1 - magnitude)
    return f"{rounded:,.{decimals}f}"


def _past(value, target):
    """``value`` to two significant figures, or more where two would print the target
    itself ("1.04 days > target 1 days", never "1.0 > 1")."""
    for digits in (2, 3, 4, 6):
        text = _sig(value, digits)
        if digits > 2 and "." in text:
            text = text.rstrip("0").rstrip(".")
        if not value == value or float(text.replace(",", "")) != float(target):
            return text
    return text


def _money(value):
    return f"${value:,.0f}" if value == value else "unknown"


def _reason(row, weights, training, scenario, unit="tokens"):
    if row["status"] == "excluded":
        return f"excluded: {row['excluded_because']}"
    if row["status"] == "cannot verify":
        return f"cannot verify: {row['unknown_figure']}; would settle it: {row['would_settle']}"
    one = _ONE.get(unit, unit)
    parts = []
    if row.get("configuration"):
        parts.append(f"runs as {row['configuration']}")
    if training and row["days_on_n"] == row["days_on_n"]:
        parts.append(f"{_sig(row['days_on_n'])} days on {scenario.n_devices} ({_sig(row['days_on_n_low'])}-"
                     f"{_sig(row['days_on_n_high'])}) against {scenario.time_target_days:g}")
        k = row.get("devices_needed", np.nan)
        if k == k and k < scenario.n_devices:
            parts.append(f"right-sized to {k:.0f} device{'s' if k != 1 else ''}: about "
                         f"{_sig(row['days_right_sized'])} days")
    if not training and row["latency_ms"] == row["latency_ms"]:
        parts.append(f"{_sig(row['latency_ms'])} ms per {one} ({_sig(row['latency_ms_low'])}-"
                     f"{_sig(row['latency_ms_high'])}) against {scenario.latency_target_ms:g}")
    horizon = "the run" if training else f"{scenario.horizon_months} months"
    if row["total_cost_usd"] == row["total_cost_usd"]:
        verb = "rent" if scenario.deployment == "cloud" else "buy"
        what = row["purchase_unit"].removeprefix("rent ")
        parts.append(f"{verb} {what}: {_money(row['total_cost_usd'])} over {horizon} "
                     f"({_money(row['total_cost_usd_low'])}-{_money(row['total_cost_usd_high'])}), "
                     f"${row['cost_per_million_tokens']:,.3g} per M {unit}")
        largest = row.get("cloud_largest_instance", np.nan)
        if verb == "rent" and largest == largest and row.get("devices_rented", 0) > largest:
            parts.append(f"{row['devices_rented']:.0f} devices is more than the largest listed instance "
                         f"({largest:.0f}): the listed rate assumes the provider has the capacity, ask for a quote")
    elif row.get("purchase_unit") and scenario.deployment != "cloud":
        parts.append(f"buy {row['purchase_unit']}")
    if row["ecosystem_score"] == row["ecosystem_score"]:
        parts.append(f"ecosystem {row['ecosystem_score']:.0f}/100")
    scored = {k: row[f"score_{k}"] for k in CRITERIA if weights[k] > 0 and row[f"score_{k}"] == row[f"score_{k}"]}
    if row.get("unknown_criteria"):
        parts.append(f"{row['unknown_criteria']} unknown: scored on {len(scored)} of "
                     f"{len(scored) + len(row['unknown_criteria'].split(', '))} criteria")
    if row.get("purchase_risks"):
        parts.append(f"risks: {row['purchase_risks']}")
    if len(scored) < 2:
        return ", ".join(parts)
    best = max(scored, key=scored.get)
    worst = min(scored, key=scored.get)
    if scored[best] == scored[worst]:
        return f"{', '.join(parts)}; level on all {len(scored)} weighted criteria"
    return f"{', '.join(parts)}; strongest on {best}, weakest on {worst}"
