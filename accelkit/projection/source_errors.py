"""The validation's error per source, and over sources weighted equally.

The geometric-mean error of :func:`accelkit.projection.validation.summary` weighs every case
alike, so a source of 216 cases counts 216 times and one of 3 cases 3 times. Whether the
engine transfers to sources it never saw is a question about sources: here each source's
own error (``exp(mean |ln ratio|) − 1`` over its cases) and their mean in log terms, each
source weighted once. Both figures are reported; neither replaces the other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["error_by_source", "source_weighted_error"]


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
