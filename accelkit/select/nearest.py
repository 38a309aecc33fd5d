"""The smallest single change to a scenario that admits a device it now excludes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import sizing
from ..catalog import load_catalog
from ..i18n import N_, _
from .ranking import rank

__all__ = ["nearest_feasible"]


#: deployments in words ("deploy cloud instead of on-prem")
_DEPLOYMENT_WORDS = {"cloud": N_("cloud"), "on-prem": N_("on-prem"), "edge": N_("edge")}


def _candidate_changes(scenario):
    """(field, new value, words, size) of the changes :func:`nearest_feasible` tries,
    smallest first within each field; ``size`` is |log2| of the factor for numbers,
    1 for a choice, 2 for dropping a limit."""
    from ..scenario import DEPLOYMENTS, PRECISIONS

    s = scenario
    training = s.workload in sizing.TRAINING_WORKLOADS
    out = []
    if not s.allow_lower_precision:
        out.append(("allow_lower_precision", True, _("allow lower precisions (fp8, int8, int4 weights)"), 1.0))
    for p in PRECISIONS:
        if p != s.precision and not (training and p in ("int8", "int4")):
            out.append(("precision", p, _("precision {new} instead of {old}").format(new=p, old=s.precision), 1.0))
    for f in (2, 4, 8, 16):
        out.append(("n_devices", int(s.n_devices * f), _("allow {new} devices instead of {old}").format(
            new=int(s.n_devices * f), old=s.n_devices), np.log2(f)))
    if training:
        for f in (1.5, 2, 4):
            out.append(("time_target_days", s.time_target_days * f,
                        _("finish within {new} days instead of {old}").format(
                            new=f"{s.time_target_days * f:g}", old=f"{s.time_target_days:g}"), np.log2(f)))
    else:
        for f in (1.5, 2, 4):
            out.append(("latency_target_ms", s.latency_target_ms * f,
                        _("{new} ms per token instead of {old}").format(
                            new=f"{s.latency_target_ms * f:g}", old=f"{s.latency_target_ms:g}"), np.log2(f)))
        if s.ttft_target_ms:
            for f in (2, 4):
                out.append(("ttft_target_ms", s.ttft_target_ms * f,
                            _("{new} ms to the first token instead of {old}").format(
                                new=f"{s.ttft_target_ms * f:g}", old=f"{s.ttft_target_ms:g}"), np.log2(f)))
    if s.power_envelope_w:
        for f in (1.5, 2, 4):
            out.append(("power_envelope_w", s.power_envelope_w * f,
                        _("power envelope {new} W instead of {old}").format(
                            new=f"{s.power_envelope_w * f:g}", old=f"{s.power_envelope_w:g}"), np.log2(f)))
        out.append(("power_envelope_w", None, _("no power envelope"), 2.0))
    if s.budget_usd:
        for f in (1.5, 2, 4):
            out.append(("budget_usd", s.budget_usd * f, _("budget {new} instead of {old}").format(
                new=f"${s.budget_usd * f:,.0f}", old=f"${s.budget_usd:,.0f}"), np.log2(f)))
        out.append(("budget_usd", None, _("no budget limit"), 2.0))
    for d in DEPLOYMENTS:
        if d != s.deployment:
            out.append(("deployment", d, _("deploy {new} instead of {old}").format(new=_(_DEPLOYMENT_WORDS.get(d, d)),
                                                                                  old=_(_DEPLOYMENT_WORDS.get(
                                                                                      s.deployment, s.deployment))),
                        1.0))
    if s.stack and not training:
        # a named stack excludes the parts it does not run on (TensorRT on an AMD part)
        out.append(("stack", None, _("each device's default software stack instead of {old}").format(old=s.stack),
                    1.0))
    if s.segments:
        out.append(("segments", [], _("allow every segment"), 1.0))
    if s.exclude_unknown:
        out.append(("exclude_unknown", False, _("score devices with an unknown price on the known criteria"), 1.0))
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
