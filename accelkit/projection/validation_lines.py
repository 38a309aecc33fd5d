"""The closing lines of ``accelkit validate``: how the engine does on sources it never saw.

After the per-kind and per-vendor tables, three questions about sources rather than cases:
the held-out error with each source weighted once (:func:`~accelkit.projection.source_errors.source_weighted_error`),
how much of it is each source's own level (:func:`~accelkit.projection.source_errors.error_within_sources`),
and whether a range calibrated without a source holds the stated share of it, overall and per
kind (:func:`~accelkit.projection.intervals.leave_one_source_out`). Computed by those functions;
this module only words them, in the reader's language.
"""

from __future__ import annotations

from ..i18n import _
from .intervals import INTERVAL_LEVEL, leave_one_source_out
from .source_errors import error_by_source, error_within_sources, source_weighted_error

__all__ = ["source_lines"]


def source_lines(results, summary, left_out=True):
    """The lines (a list of str, blank separators included) for ``results``
    (:func:`~accelkit.projection.validation.validate`) and its ``summary``; ``left_out=False``
    skips leave-one-source-out (a refit's constants would calibrate other ranges than the stored)."""
    lines = []
    held = error_by_source(results, "holdout")
    if len(held):
        within, between = error_within_sources(results, "holdout")
        lines += ["", _("held out, each source weighted once: {error:.1%} over {sources} sources (each case weighted "
                        "once: {per_case:.1%}; the largest source holds {largest} of {cases} cases)").format(
            error=source_weighted_error(results, "holdout"), sources=len(held), largest=int(held["cases"].iloc[0]),
            per_case=float(summary.loc[summary["category"] == "all", "gm_error_holdout"].iloc[0]),
            cases=int(held["cases"].sum())),
            _("held out, each source's own level per kind taken out: {within:.1%} (the spread within sources); "
              "the levels alone: {between:.1%}").format(within=within, between=between)]
    if left_out:
        loso = leave_one_source_out()
        # per kind too: the overall share can sit at the level while a kind's ranges are too narrow or too wide
        by_kind = loso.groupby("category")["inside"].agg(["mean", "size"])
        lines += ["", _("leave one source out: a {level:.0%} range calibrated without a fit source holds {share:.1%} "
                        "of its measurements ({cases} cases, {sources} fit sources)").format(
            level=INTERVAL_LEVEL, share=loso["inside"].mean(), cases=len(loso), sources=loso["source"].nunique()),
            _("  by kind (fit cases): {kinds}").format(
                kinds=", ".join(f"{kind} {row['mean']:.0%} ({int(row['size'])})" for kind, row in by_kind.iterrows()))]
    return lines
