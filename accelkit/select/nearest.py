"""The smallest single change to a scenario that admits a device it now excludes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import sizing
from ..catalog import load_catalog
from .ranking import rank

__all__ = ["nearest_feasible"]


def _candidate_changes(scenario):
    """(field, new value, words, size) of the changes :func:`nearest_feasible` tries,
    smallest first within each field; ``size`` is |log2| of the factor for numbers,
    1 for a choice, 2 for dropping a limit."""
    from ..scenario import DEPLOYMENTS, PRECISIONS

    s = scenario
    training = s.workload in sizing.TRAINING_WORKLOADS
    out = []
    if not s.allow_lower_precision:
        out.append(("allow_lower_precision", True, "allow lower precisions (fp8, int8, int4 weights)", 1.0))
    for p in PRECISIONS:
        if p != s.precision and not (training and p in ("int8", "int4")):
            out.append(("precision", p, f"precision {p} instead of {s.precision}", 1.0))
    for f in (2, 4, 8, 16):
        out.append(("n_devices", int(s.n_devices * f), f"allow {int(s.n_devices * f)} devices instead of {s.n_devices}",
                    np.log2(f)))
    if training:
        for f in (1.5, 2, 4):
            out.append(("time_target_days", s.time_target_days * f,
                        f"finish within {s.time_target_days * f:g} days instead of {s.time_target_days:g}", np.log2(f)))
    else:
        for f in (1.5, 2, 4):
            out.append(("latency_target_ms", s.latency_target_ms * f,
                        f"{s.latency_target_ms * f:g} ms per token instead of {s.latency_target_ms:g}", np.log2(f)))
        if s.ttft_target_ms:
            for f in (2, 4):
                out.append(("ttft_target_ms", s.ttft_target_ms * f,
                            f"{s.ttft_target_ms * f:g} ms to the first token instead of {s.ttft_target_ms:g}",
                            np.log2(f)))
    if s.power_envelope_w:
        for f in (1.5, 2, 4):
            out.append(("power_envelope_w", s.power_envelope_w * f,
                        f"power envelope {s.power_envelope_w * f:g} W instead of {s.power_envelope_w:g}", np.log2(f)))
        out.append(("power_envelope_w", None, "no power envelope", 2.0))
    if s.budget_usd:
        for f in (1.5, 2, 4):
            out.append(("budget_usd", s.budget_usd * f, f"budget ${s.budget_usd * f:,.0f} instead of "
                        f"${s.budget_usd:,.0f}", np.log2(f)))
        out.append(("budget_usd", None, "no budget limit", 2.0))
    for d in DEPLOYMENTS:
        if d != s.deployment:
            out.append(("deployment", d, f"deploy {d} instead of {s.deployment}", 1.0))
    if s.segments:
        out.append(("segments", [], "allow every segment", 1.0))
    if s.exclude_unknown:
        out.append(("exclude_unknown", False, "score devices with an unknown price on the known criteria", 1.0))
    return out


def nearest_feasible(scenario, catalog=None, weights=None, max_changes=8):
    """The smallest single changes to a scenario that admit devices it now excludes.

    For each field a person controls (precision, devices allowed, time or latency
    targets, power envelope, budget, deployment, segments) the changes are tried from
    the smallest up; the first value of each field that shortlists a device the
    scenario does not is kept.

    Returns
    -------
    pandas.DataFrame
        One row per change, smallest first: ``field``, ``value`` (to set on the
        scenario), ``change`` (in words), ``size``, ``n_shortlisted`` (after the
        change), ``admits`` (the newly shortlisted devices, best first, as a list) and
        ``best`` (the new winner). Empty when no single change admits a device.
    """
    catalog = load_catalog() if catalog is None else catalog
    base = rank(scenario, catalog, weights)
    before = set(base.loc[base["status"] == "shortlisted", "name"])
    rows, done = [], set()
    for field, value, words, size in _candidate_changes(scenario):
        if field in done:
            continue
        trial = scenario.copy()
        try:
            setattr(trial, field, value)
        except ValueError:
            continue
        ranked = rank(trial, catalog, weights)
        short = ranked[ranked["status"] == "shortlisted"]
        new = [n for n in short["name"] if n not in before]
        if not new:
            continue
        done.add(field)
        rows.append({"field": field, "value": value, "change": words, "size": float(size),
                     "n_shortlisted": len(short), "admits": new, "best": short["name"].iloc[0]})
        if len(rows) >= max_changes:
            break
    out = pd.DataFrame(rows, columns=["field", "value", "change", "size", "n_shortlisted", "admits", "best"])
    return out.sort_values(["size", "n_shortlisted"], ascending=[True, False], kind="stable").reset_index(drop=True)
