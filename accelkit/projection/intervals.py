"""The stated intervals: each kind's model term (``model_error_*`` of
``data/projection_constants.csv``), calibrated on the fit sources so that a projected
range (``_low`` .. ``_high``) holds :data:`INTERVAL_LEVEL` of a new source's
measurements (:func:`calibrate_errors`, stored by :func:`write_errors`; ``accelkit
validate --write-errors``). Split out of :mod:`accelkit.projection.validation` (one job
per module); it imports that module, which projects the cases, never the reverse.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .validation import RECOMMENDER_CATEGORIES, VISION_CATEGORIES, _write_values, validate

__all__ = ["INTERVAL_LEVEL", "PRIOR_SOURCES", "ERROR_CONSTANTS", "source_offsets", "calibrate_errors",
           "leave_one_source_out", "write_errors"]

#: the nominal level of every projected range (``_low`` .. ``_high``): 80 % of published
#: measurements of a kind are meant to fall inside it (calibrated on the fit sources by
#: :func:`calibrate_errors`, checked on the held-out sources by :func:`summary`)
INTERVAL_LEVEL = 0.8

#: how many sources the offsets pooled over every kind count as beside a kind's own fit sources when
#: a new source's offset is drawn (:func:`calibrate_errors`): one, the weakest prior that still keeps
#: a kind with a single fit source from setting its term from that source alone
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


def _needed_shift(raw):
    """ln of the factor that takes each case's own source offset out of its measured value: the
    median ``ln(projected / measured speed)`` of its (source, kind), which divides a measured speed
    and multiplies a measured time."""
    offset = np.log(raw["ratio"]).groupby([raw["source"], raw["category"]]).transform("median")
    return np.where(raw["unit"].isin(["s", "h"]), offset, -offset)


def source_offsets(results):
    """How far each fit source's own level sits from the engine's: the median
    ``ln(projected / measured speed)`` of each (source, kind) pair of the fit sources, a Series
    indexed by (source, category). Its software version, its harness, its reading of the
    hardware: what a source the engine never saw brings on top of the within-source spread."""
    fit = results[np.isfinite(results["ratio"]) & (results["split"] == "fit")]
    return np.log(fit["ratio"]).groupby([fit["source"], fit["category"]]).median()


def calibrate_errors(path=None, level=INTERVAL_LEVEL):
    """Each kind's model term, so that its ranges hold ``level`` of a **new** source's measurements
    (the held-out sources then check the coverage): a random-effects interval (Borenstein et
    al., *Introduction to Meta-Analysis* (2009), ch. 12), a case's error for a new source being
    the spread within a source plus the offset a new source brings.

    * **Within a source**: each fit case with its own source's offset taken out
      (:func:`_needed_shift`; left in, the offsets were counted twice) and the range it had with
      every model term at 0, ``low0 .. high0``.
    * **Between sources**: a new source's offset ``d`` (``ln(projected / measured speed)``) is
      drawn from the kind's fit sources' offsets (:func:`source_offsets`), each source once,
      mixed with the offsets of every kind (each kind weighted once) as if the pool were
      ``PRIOR_SOURCES`` more sources of the kind -- the empirical analogue of a variance shrunk
      towards a pooled one (the conjugate update, Gelman et al., *Bayesian Data Analysis*, 3rd ed.
      (2013), §2.6), without assuming the offsets normal.
    * **The term** ``e``: the least widening ``low0/(1+e) .. high0·(1+e)`` whose mean coverage over
      the kind's fit cases and the offsets' mixture is ``level`` -- the coverage of the sum of the
      two errors (their convolution), as split conformal prediction sets a level on calibration
      cases (Vovk et al., *Algorithmic Learning in a Random World* (2005)). Adding the within- and
      between-source widenings in quadrature instead overstated both: the within term is the
      widening *beyond* a range that already has width, and a few far sources made the offsets'
      root mean square exceed their 80 % quantile (ranges held 87.6 % of the fit cases and
      89.3 % of the held-out sources' measurements for a nominal 80 %, 2026-12-07).

    A kind with no fit case takes the largest ``e`` of the others (no source to calibrate on).
    """
    return _terms(_fit_cases_without_terms(path), level)


def _fit_cases_without_terms(path=None):
    """The fit sources' projected cases with every model term at 0 (the ranges the terms widen)."""
    raw = validate(path, **{name: 0.0 for name in ERROR_CONSTANTS})
    kinds = [c for cats in ERROR_CONSTANTS.values() for c in cats]
    return raw[np.isfinite(raw["predicted"]) & (raw["split"] == "fit") & raw["category"].isin(kinds)]


def _offset_mixture(offsets, categories, prior_sources=PRIOR_SOURCES):
    """A new source's offset as a weighted sample: the kind's own fit-source offsets, one weight
    each, and every kind's offsets (each kind weighted once) sharing ``prior_sources`` weights.
    Returns ``(offsets, weights)`` with the weights summing to 1."""
    kind = offsets.index.get_level_values(1)
    per_kind = 1.0 / offsets.groupby(level=1).transform("size").to_numpy(dtype=float)
    own = np.isin(kind, list(categories))
    d = np.concatenate([offsets.to_numpy()[own], offsets.to_numpy()])
    w = np.concatenate([np.ones(int(own.sum())), prior_sources * per_kind / per_kind.sum()])
    return d, w / w.sum()


def _mean_coverage(lower, upper, d, w, log_widening):
    """Mean over cases of the weight of offsets ``d`` with ``lower - E <= d <= upper + E``."""
    inside = (lower[:, None] - log_widening <= d[None, :]) & (d[None, :] <= upper[:, None] + log_widening)
    return float((inside @ w).mean())


def _terms(raw, level):
    """:func:`calibrate_errors` on the cases ``raw`` (fit cases, model terms at 0)."""
    centred = raw["value"] * np.exp(-_needed_shift(raw))
    # the offsets d (ln projected / measured speed) that keep a case inside its range: a new source's
    # offset divides a measured speed by exp(d) and multiplies a measured time by it
    lo, hi = np.log(raw["predicted_low"] / centred), np.log(raw["predicted_high"] / centred)
    is_time = raw["unit"].isin(["s", "h"]).to_numpy()
    lower, upper = np.where(is_time, lo, -hi), np.where(is_time, hi, -lo)
    offsets = source_offsets(raw)
    out = {}
    for name, cats in ERROR_CONSTANTS.items():
        sel = raw["category"].isin(cats).to_numpy() & np.isfinite(lower) & np.isfinite(upper)
        if not sel.any() or not len(offsets):
            out[name] = np.nan
            continue
        d, w = _offset_mixture(offsets, cats)
        a, b = lower[sel], upper[sel]
        # ln(1 + e): the coverage rises with it, so bisect; at ``high`` every offset is inside every range
        low, high = 0.0, float(np.abs(np.r_[a, b]).max() + np.abs(d).max())
        if _mean_coverage(a, b, d, w, low) >= level:
            out[name] = 0.0
            continue
        for _ in range(50):
            mid = 0.5 * (low + high)
            low, high = (low, mid) if _mean_coverage(a, b, d, w, mid) >= level else (mid, high)
        out[name] = float(np.expm1(high))
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
        low, high = own["predicted_low"] / (1.0 + e), own["predicted_high"] * (1.0 + e)
        parts.append((own["value"] >= low) & (own["value"] <= high))
    out = raw[["case_id", "source", "category"]].copy()
    out["inside"] = pd.concat(parts).reindex(out.index) if parts else pd.Series(dtype=bool)
    return out


def write_errors(results, date, path=None, measured=None):
    """Store the calibrated model terms (:func:`calibrate_errors`) in ``data/projection_constants.csv``.
    ``results`` is unused (kept for the command's call); the calibration reruns the fit cases."""
    note = (f"accelkit validate --write-errors: the model term that makes this kind's range hold "
            f"{INTERVAL_LEVEL:.0%} of a new source's measurements (fit sources' spread and their offsets, {date})")
    return _write_values(calibrate_errors(measured), "{:.4g}", note, path)
