"""The validation's error per source, and over sources weighted equally.

The geometric-mean error of :func:`accelkit.projection.validation.summary` weighs every case
alike, so a source of 216 cases counts 216 times and one of 3 cases 3 times. Whether the
engine transfers to sources it never saw is a question about sources: here each source's
own error (``exp(mean |ln ratio|) − 1`` over its cases) and their mean in log terms, each
source weighted once. Both figures are reported; neither replaces the other.

:func:`error_within_sources` splits the same error in two: each (source, kind)'s own level (its
median ratio: the software version, harness and settings a publication brings) and what is left
within it (how the engine follows the source's own sweep). Told each source's level, the engine
as it is would have the second error and no less: the median is the shift that minimises a sum of
absolute deviations, so no per-(source, kind) correction does better without changing the engine's
shape.
"""

from __future__ import annotations

import numpy as np

__all__ = ["error_by_source", "source_weighted_error", "error_within_sources"]


def error_by_source(results, split=None):
    """Per source of ``results`` (:func:`accelkit.projection.validation.validate`): its cases
    and geometric-mean error [fraction], largest first; ``split`` (``"fit"`` or ``"holdout"``)
    keeps that split's cases only. Cases without a finite positive ratio are left out."""
    r = results if split is None else results[results["split"] == split]
    r = r[np.isfinite(r["ratio"]) & (r["ratio"] > 0)]
    log_error = np.abs(np.log(r["ratio"].astype(float)))
    out = log_error.groupby(r["source"]).agg(["size", "mean"]).rename(columns={"size": "cases"})
    out["gm_error"] = np.expm1(out.pop("mean"))
    return out.sort_values("cases", ascending=False).rename_axis("source").reset_index()


def source_weighted_error(results, split=None):
    """``exp(mean over sources of mean |ln ratio|) − 1`` [fraction]: the geometric-mean error
    with each source weighted once, whatever its number of cases; NaN for none."""
    per = error_by_source(results, split)
    return float(np.expm1(np.log1p(per["gm_error"]).mean())) if len(per) else np.nan


def error_within_sources(results, split=None):
    """``(within, between)`` [fraction]: the geometric-mean error of ``results``' cases with each
    (source, category)'s median ``ln ratio`` taken out (the spread within a source), and that of the
    medians alone, one per case (the sources' levels). Each case weighted once, as the summary's
    error; cases without a finite positive ratio are left out; NaN for none. The two do not add: an
    error is ``exp(mean |ln ratio|) − 1`` and the absolute values of the parts do not sum to the
    whole's."""
    r = results if split is None else results[results["split"] == split]
    r = r[np.isfinite(r["ratio"]) & (r["ratio"] > 0)]
    if not len(r):
        return np.nan, np.nan
    log_ratio = np.log(r["ratio"].astype(float))
    level = log_ratio.groupby([r["source"], r["category"]]).transform("median")
    return float(np.expm1(np.abs(log_ratio - level).mean())), float(np.expm1(np.abs(level).mean()))
