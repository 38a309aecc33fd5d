"""The stated intervals: each kind's model term (``model_error_*`` of
``data/projection_constants.csv``), calibrated on the fit sources so that a projected
range (``_low`` .. ``_high``) holds :data:`INTERVAL_LEVEL` of a new source's
measurements (:func:`calibrate_errors`, stored by :func:`write_errors`; ``accelkit
validate --write-errors``). Split out of :mod:`accelkit.projection.validation` (one job
per module); it imports that module, which projects the cases, never the reverse.
"""

from __future__ import annotations

import numpy as np

from .validation import RECOMMENDER_CATEGORIES, VISION_CATEGORIES, _write_values, validate

__all__ = ["INTERVAL_LEVEL", "ERROR_CONSTANTS", "source_spread", "calibrate_errors", "write_errors"]

#: the nominal level of every projected range (``_low`` .. ``_high``): 80 % of published
#: measurements of a kind are meant to fall inside it (calibrated on the fit sources by
#: :func:`calibrate_errors`, checked on the held-out sources by :func:`summary`)
INTERVAL_LEVEL = 0.8


#: constant -> the validation categories whose ranges it widens (the model term)
ERROR_CONSTANTS = {
    "model_error_training": ("training",),
    "model_error_decode": ("decode_batch1", "fixed_batch_throughput"),
    "model_error_throughput": ("max_throughput",),
    "model_error_ttft": ("ttft",),
    "model_error_load_ttft": ("serving_load_ttft",),
    "model_error_load_tpot": ("serving_load_tpot",),
    "model_error_expert_parallel": ("serving_expert_parallel",),
    "model_error_vision": VISION_CATEGORIES,
    "model_error_recommender": RECOMMENDER_CATEGORIES,
}


def _needed_widening(results):
    """Per case, the model term ``e`` its range needs to hold the measurement: the range without
    a model term, ``low0 .. high0``, widened to ``low0/(1+e) .. high0·(1+e)``, holds it from
    ``e = max(low0/value, value/high0) − 1`` (0 when already inside)."""
    lo, hi, v = results["predicted_low"], results["predicted_high"], results["value"]
    return np.maximum(np.maximum(lo / v, v / hi) - 1.0, 0.0)


def source_spread(results, level=INTERVAL_LEVEL):
    """How far a source's own level sits from the engine's: the ``level`` quantile, over the fit
    sources, of ``|median ln(projected / measured speed)|`` of each (source, kind) pair.

    A held-out source brings its own offset (its software version, its harness, its reading of
    the hardware), which the cases of the sources the engine was fitted on only sample
    ``n_sources`` times; this is that offset's spread (each kind's sources weighted by one over
    their count, so that every kind counts once; a weighted ``level`` quantile, the smallest
    offset whose cumulative weight reaches it), the between-source term of a random-effects interval (Borenstein et al., *Introduction to Meta-Analysis* (2009), ch. 12).
    """
    fit = results[np.isfinite(results["ratio"]) & (results["split"] == "fit")]
    bias = np.log(fit["ratio"]).groupby([fit["source"], fit["category"]]).median().abs()
    if not len(bias):
        return 0.0
    # every kind weighs the same: eleven MLPerf submitters running one vendor's code are not eleven
    # independent methods, and a kind with many such sources would otherwise set everyone's interval
    weight = 1.0 / bias.groupby(level=1).transform("size").to_numpy(dtype=float)
    order = np.argsort(bias.to_numpy(), kind="stable")
    cumulative = np.cumsum(weight[order]) / weight.sum()
    return float(bias.to_numpy()[order][np.searchsorted(cumulative, level - 1e-12)])


def calibrate_errors(path=None, level=INTERVAL_LEVEL):
    """Each kind's model term, so that its ranges hold ``level`` of a **new** source's measurements
    (the held-out sources then check the coverage).

    The engine's range spans the efficiencies' published spread; the model term widens it
    by ``(1 + e)`` each way. With every model term at 0, each fit case needs some ``e``
    (:func:`_needed_widening`); ``w``, the ``level`` quantile of those (Hyndman & Fan type 1),
    holds ``level`` of the fit sources' own cases -- split conformal prediction (Vovk et al.,
    *Algorithmic Learning in a Random World* (2005)). A source the engine never saw also
    brings its own offset, and a kind's fit cases come from a handful of sources (one for
    some kinds), so the between-source spread ``b`` (:func:`source_spread`, over every kind's
    fit sources) is added in quadrature, as a random-effects interval adds the between-study
    variance to the within-study one (Borenstein et al. 2009, ch. 12):
    ``ln(1 + e) = sqrt(ln(1 + w)^2 + b^2)``. A kind with no fit case takes the largest ``e``
    of the others (no source to calibrate on).
    """
    raw = validate(path, **{name: 0.0 for name in ERROR_CONSTANTS})
    raw = raw[np.isfinite(raw["predicted"]) & (raw["split"] == "fit")]
    need = _needed_widening(raw)
    between = source_spread(raw, level)
    out = {}
    for name, cats in ERROR_CONSTANTS.items():
        sel = need[raw["category"].isin(cats)].dropna()
        w = float(np.quantile(sel, level, method="inverted_cdf")) if len(sel) else np.nan
        out[name] = float(np.expm1(np.hypot(np.log1p(w), between))) if np.isfinite(w) else np.nan
    known = [v for v in out.values() if np.isfinite(v)]
    return {name: (v if np.isfinite(v) else max(known)) for name, v in out.items()}


def write_errors(results, date, path=None, measured=None):
    """Store the calibrated model terms (:func:`calibrate_errors`) in ``data/projection_constants.csv``.
    ``results`` is unused (kept for the command's call); the calibration reruns the fit cases."""
    return _write_values(calibrate_errors(measured), "{:.4g}",
                         f"accelkit validate --write-errors: the model term that makes this kind's range hold "
                         f"{INTERVAL_LEVEL:.0%} of a new source's measurements (fit sources' spread and their offsets, {date})", path)
