"""The stated intervals: each kind's model term (``model_error_*`` of
``data/projection_constants.csv``), calibrated on the fit sources so that a projected
range (``_low`` .. ``_high``) holds :data:`INTERVAL_LEVEL` of a new source's
measurements (:func:`calibrate_errors`, stored by :func:`write_errors`; ``accelkit
validate --write-errors``). Split out of :mod:`accelkit.projection.validation` (one job
per module); it imports that module, which projects the cases, never the reverse.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from .validation import RECOMMENDER_CATEGORIES, VISION_CATEGORIES, _write_values, validate

__all__ = ["INTERVAL_LEVEL", "PRIOR_SOURCES", "ERROR_CONSTANTS", "source_offsets", "source_spread", "calibrate_errors",
           "leave_one_source_out", "write_errors"]

#: the nominal level of every projected range (``_low`` .. ``_high``): 80 % of published
#: measurements of a kind are meant to fall inside it (calibrated on the fit sources by
#: :func:`calibrate_errors`, checked on the held-out sources by :func:`summary`)
INTERVAL_LEVEL = 0.8

#: how many sources the spread pooled over every kind counts as when a kind's own between-source
#: term is estimated (:func:`source_spread`): one, the weakest prior that still keeps a kind with a
#: single fit source from setting its term from that source alone
PRIOR_SOURCES = 1.0


#: constant -> the validation categories whose ranges it widens (the model term)
ERROR_CONSTANTS = {
    "model_error_training": ("training",),
    "model_error_decode": ("decode_batch1", "fixed_batch_throughput"),
    "model_error_throughput": ("max_throughput",),
    "model_error_ttft": ("ttft",),
    "model_error_load_ttft": ("serving_load_ttft",),
    "model_error_load_tpot": ("serving_load_tpot",),
    "model_error_expert_parallel": ("serving_expert_parallel",),
    # image models and encoders are separate kinds: their published sources scatter differently
    "model_error_vision": tuple(c for c in VISION_CATEGORIES if c.startswith("vision_")),
    "model_error_encoder": tuple(c for c in VISION_CATEGORIES if c.startswith("encoder_")),
    "model_error_recommender": RECOMMENDER_CATEGORIES,
    "model_error_gnn": ("gnn_offline",),
}


def _needed_widening(results, centre=False):
    """Per case, the model term ``e`` its range needs to hold the measurement: the range without
    a model term, ``low0 .. high0``, widened to ``low0/(1+e) .. high0·(1+e)``, holds it from
    ``e = max(low0/value, value/high0) − 1`` (0 when already inside).

    ``centre=True`` first takes out the offset of the case's own source (:func:`source_offsets`):
    what is left is the spread *within* a source, the term a random-effects interval combines with
    the spread *between* sources (:func:`source_spread`)."""
    lo, hi, v = results["predicted_low"], results["predicted_high"], results["value"]
    if centre:
        offset = np.log(results["ratio"]).groupby([results["source"], results["category"]]).transform("median")
        # ratio is projected over measured *speed*: a time is divided by it, a rate multiplied
        v = v * np.exp(np.where(results["unit"].isin(["s", "h"]), -offset, offset))
    return np.maximum(np.maximum(lo / v, v / hi) - 1.0, 0.0)


def source_offsets(results):
    """How far each fit source's own level sits from the engine's: the median
    ``ln(projected / measured speed)`` of each (source, kind) pair of the fit sources, a Series
    indexed by (source, category). Its software version, its harness, its reading of the
    hardware: what a source the engine never saw brings on top of the within-source spread."""
    fit = results[np.isfinite(results["ratio"]) & (results["split"] == "fit")]
    return np.log(fit["ratio"]).groupby([fit["source"], fit["category"]]).median()


def source_spread(results, level=INTERVAL_LEVEL, categories=None, prior_sources=PRIOR_SOURCES):
    """The between-source term ``b``: the half-width, in log terms, that holds ``level`` of a new
    source's offset (:func:`source_offsets`), ``b = z · tau`` with ``z`` the normal quantile of
    ``(1 + level) / 2``.

    ``tau^2`` is the method-of-moments estimate of the between-study variance (DerSimonian &
    Laird, *Controlled Clinical Trials* 7 (1986) 177; Borenstein et al., *Introduction to
    Meta-Analysis* (2009), ch. 12): the mean square of the offsets, taken about 0 because the
    engine is meant to be unbiased, so a kind whose sources all sit on one side counts that as
    spread.

    * ``categories=None``: the pooled ``tau^2`` over every kind, each kind's sources weighted by
      one over their count so that every kind counts once (eleven MLPerf submitters running
      one vendor's code are not eleven independent methods).
    * ``categories`` given: that kind's own ``tau^2``, shrunk towards the pooled one as if the
      pool were ``prior_sources`` more sources of the kind, ``(sum offsets^2 + n0 · pooled) /
      (n + n0)`` (the conjugate update of a variance; Gelman et al., *Bayesian Data Analysis*,
      3rd ed. (2013), §2.6): a kind with many agreeing sources gets a narrow term, a kind with
      one source does not set its term from that one alone.
    """
    offsets = source_offsets(results)
    if not len(offsets):
        return 0.0
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    square = offsets.to_numpy() ** 2
    kind = offsets.index.get_level_values(1)
    weight = 1.0 / offsets.groupby(level=1).transform("size").to_numpy(dtype=float)
    pooled = float(np.sum(weight * square) / np.sum(weight))
    if categories is None:
        return z * float(np.sqrt(pooled))
    own = square[np.isin(kind, list(categories))]
    return z * float(np.sqrt((own.sum() + prior_sources * pooled) / (len(own) + prior_sources)))


def calibrate_errors(path=None, level=INTERVAL_LEVEL):
    """Each kind's model term, so that its ranges hold ``level`` of a **new** source's measurements
    (the held-out sources then check the coverage): a random-effects interval (Borenstein et
    al. 2009, ch. 12), the spread within a source and the spread between sources added in
    quadrature, ``ln(1 + e) = sqrt(ln(1 + w)^2 + b^2)``.

    * ``w``, within a source: the engine's range spans the efficiencies' published spread and
      the model term widens it by ``(1 + e)`` each way. With every model term at 0 and each
      fit case's own source offset taken out, each fit case needs some ``e``
      (:func:`_needed_widening` with ``centre=True``); ``w`` is the ``level`` quantile of those
      (Hyndman & Fan type 1), as split conformal prediction sets it (Vovk et al., *Algorithmic
      Learning in a Random World* (2005)). The offsets are taken out because ``b`` counts
      them: left in, the fit sources' offsets were counted twice and every range held
      more than it said (94 % of the held-out sources' measurements for a nominal 80 %).
    * ``b``, between sources: :func:`source_spread` of the kind's fit sources, shrunk towards
      the spread pooled over every kind.

    A kind with no fit case takes the largest ``e`` of the others (no source to calibrate on).
    """
    return _terms(_fit_cases_without_terms(path), level)


def _fit_cases_without_terms(path=None):
    """The fit sources' projected cases with every model term at 0 (the ranges the terms widen)."""
    raw = validate(path, **{name: 0.0 for name in ERROR_CONSTANTS})
    kinds = [c for cats in ERROR_CONSTANTS.values() for c in cats]
    return raw[np.isfinite(raw["predicted"]) & (raw["split"] == "fit") & raw["category"].isin(kinds)]


def _terms(raw, level):
    """:func:`calibrate_errors` on the cases ``raw`` (fit cases, model terms at 0)."""
    need = _needed_widening(raw, centre=True)
    out = {}
    for name, cats in ERROR_CONSTANTS.items():
        sel = need[raw["category"].isin(cats)].dropna()
        w = float(np.quantile(sel, level, method="inverted_cdf")) if len(sel) else np.nan
        between = source_spread(raw, level, categories=cats)
        out[name] = float(np.expm1(np.hypot(np.log1p(w), between))) if np.isfinite(w) else np.nan
    known = [v for v in out.values() if np.isfinite(v)]
    return {name: (v if np.isfinite(v) else max(known)) for name, v in out.items()}


def leave_one_source_out(path=None, level=INTERVAL_LEVEL):
    """Whether each fit case lies inside a range calibrated **without its own source**: the model
    terms refitted (:func:`calibrate_errors`) on the other fit sources, then the case's range
    (model term 0) widened by its kind's term. A DataFrame of the fit cases with ``inside``.

    Leave-one-out cross-validation by source (Stone, *J. R. Stat. Soc. B* 36 (1974) 111, taken
    over whole sources as the held-out split is): every fit source plays a source the intervals
    never saw, so the coverage is measured over all of them, not only over the held-out few.
    """
    raw = _fit_cases_without_terms(path)
    category_term = {c: name for name, cats in ERROR_CONSTANTS.items() for c in cats}
    parts = []
    for source, own in raw.groupby("source", sort=False):
        terms = _terms(raw[raw["source"] != source], level)
        e = own["category"].map(category_term).map(terms).astype(float)
        parts.append((own["value"] >= own["predicted_low"] / (1.0 + e)) & (own["value"] <= own["predicted_high"] * (1.0 + e)))
    out = raw[["case_id", "source", "category"]].copy()
    out["inside"] = pd.concat(parts).reindex(out.index) if parts else pd.Series(dtype=bool)
    return out


def write_errors(results, date, path=None, measured=None):
    """Store the calibrated model terms (:func:`calibrate_errors`) in ``data/projection_constants.csv``.
    ``results`` is unused (kept for the command's call); the calibration reruns the fit cases."""
    return _write_values(calibrate_errors(measured), "{:.4g}",
                         f"accelkit validate --write-errors: the model term that makes this kind's range hold "
                         f"{INTERVAL_LEVEL:.0%} of a new source's measurements (fit sources' spread and their offsets, {date})", path)
