"""Scoring a shortlist: the five criteria, their weights, min-max scaling, weighted sum.

Each criterion is scaled to [0, 1] across the shortlist (logarithmically for time
and cost, which span orders of magnitude; best = 1); the score is the weighted
mean × 100 of the criteria that are known. Reference: multi-criteria decision
analysis with weighted sums (Triantaphyllou, *Multi-Criteria Decision Making
Methods*, Springer 2000, ch. 2).
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_

# one home, below the scenario (which checks weight names against them)
from ..vocabulary import DECISION_CRITERIA as CRITERIA
from ..vocabulary import DECISION_WEIGHTS as DEFAULT_WEIGHTS

__all__ = ["CRITERIA", "DEFAULT_WEIGHTS", "speed_score", "weighted_score"]


def _scale(values, log=False, higher_is_better=True, mask=None):
    """Min-max scale to [0, 1] along the last axis, best = 1; masked out -> 0; a
    single candidate -> 1; NaN (unknown) stays NaN. ``mask`` marks the candidates
    that take part."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return v
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.log10(np.where(v > 0, v, np.nan))
    ok = np.isfinite(v) if mask is None else (np.isfinite(v) & np.asarray(mask, dtype=bool))
    vv = np.where(ok, v, np.nan)
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", RuntimeWarning)
        lo = np.nanmin(vv, axis=-1, keepdims=True)
        hi = np.nanmax(vv, axis=-1, keepdims=True)
        span = hi - lo
        scaled = np.where(span > 0, (vv - lo) / np.where(span > 0, span, 1.0), 1.0)
    if not higher_is_better:
        scaled = np.where(span > 0, 1.0 - scaled, 1.0)
    unknown = ~np.isfinite(v)
    return np.where(ok, scaled, np.where(unknown, np.nan, 0.0))


def speed_score(margin, headroom):
    """The time criterion: the margin over the target (target ÷ projected time, ≥ 1 for a
    device that meets it), capped at ``1 + headroom`` and scaled to [0, 1] across the
    candidates along the last axis. Speed past the cap earns nothing: the default
    objective is the cheapest way to meet the demand with stated headroom, not the
    fastest part. NaN stays NaN; equal (capped) margins all score 1.
    """
    m = np.asarray(margin, dtype=float)
    return _scale(np.where(np.isfinite(m), np.minimum(m, 1.0 + float(headroom)), np.nan))


#: a criterion that is unknown, in words (English in the ``unknown_criteria`` column, translated where shown)
_UNKNOWN_WORDS = {"time": N_("speed"), "cost": N_("price"), "efficiency": N_("power"), "ecosystem": N_("ecosystem fit"),
                  "headroom": N_("memory")}


def weighted_score(criteria, weights):
    """Weighted mean × 100 of the criteria that are known.

    ``criteria`` maps each criterion to an array of 0-1 scores (NaN = unknown); an
    unknown criterion drops out and the other weights are renormalised, so a device
    without a price is scored on the rest instead of getting the worst cost
    (a missing value is not evidence of a bad one; the reason says so).

    Returns ``(score, n_known)``: NaN where nothing is known.
    """
    num = den = 0.0
    n_known = 0
    for k, v in criteria.items():
        wk = weights.get(k, 0.0)
        if wk <= 0:
            continue
        known = np.isfinite(v)
        num = num + np.where(known, v, 0.0) * wk
        den = den + np.where(known, wk, 0.0)
        n_known = n_known + known.astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(np.asarray(den) > 0, num / np.where(np.asarray(den) > 0, den, 1.0) * 100.0, np.nan)
    return score, n_known


def _weights(scenario, weights):
    merged = dict(DEFAULT_WEIGHTS)
    # keys like "ecosystem.frameworks" weight the checklist's groups, not these criteria
    merged.update({k: float(v) for k, v in (scenario.weights or {}).items() if not k.startswith("ecosystem.")})
    merged.update({k: float(v) for k, v in (weights or {}).items()})
    unknown = sorted(set(merged) - set(CRITERIA))
    if unknown:
        raise ValueError(f"weights: unknown criterion {unknown[0]!r}; criteria are {', '.join(CRITERIA)}")
    bad = [k for k, v in merged.items() if not (v >= 0 and np.isfinite(v))]
    if bad:
        raise ValueError(f"weights: {bad[0]} must be a weight >= 0; got {merged[bad[0]]}")
    if sum(merged.values()) <= 0:
        raise ValueError("weights: at least one criterion needs a weight above 0")
    return merged
