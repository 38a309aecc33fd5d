"""The decision in one sentence: the robust winner, or "too close to call" naming both."""

from __future__ import annotations

from ..i18n import _
from ..names import display_name

__all__ = ["headline", "ROBUST_SHARE"]

#: the ranked winner is called the winner only when it comes first in at least this share of
#: the draws over the projection's and the prices' ranges (a majority)
ROBUST_SHARE = 0.5


def headline(ranked, stability=None):
    """What to tell a buyer first.

    Parameters
    ----------
    ranked : DataFrame
        :func:`accelkit.select.rank`.
    stability : DataFrame, optional
        :func:`accelkit.select.rank_stability` for the same scenario.

    Returns
    -------
    dict
        ``verdict`` ("recommend", "too close to call" or "none"), ``devices`` (the
        winner, or the two contenders), ``first_share`` (the winner's share of draws,
        NaN without ``stability``) and ``text`` (one sentence).

    Notes
    -----
    The ranked winner is recommended when it comes first in at least
    :data:`ROBUST_SHARE` of the draws (Lahdelma & Salminen 2001's rank
    acceptability); otherwise the decision is too close to call between it and the
    device that comes first most often (or the runner-up).
    """
    short = ranked[ranked["status"] == "shortlisted"]
    unverified = int((ranked["status"] == "cannot verify").sum())
    if short.empty:
        text = (_("No device passes every hard limit; {n} cannot be verified (a figure they need is unknown).")
                .format(n=unverified) if unverified else _("No device passes every hard limit."))
        return {"verdict": "none", "devices": [], "first_share": float("nan"), "text": text}
    top = short.iloc[0]["name"]
    share = float("nan")
    if stability is not None and len(stability):
        shares = dict(zip(stability["name"], stability["first_share"]))
        share = float(shares.get(top, 0.0))
        if share < ROBUST_SHARE and len(short) > 1:
            rival = max((n for n in shares if n != top), key=shares.get, default=short.iloc[1]["name"])
            return {"verdict": "too close to call", "devices": [top, rival], "first_share": share,
                    "text": _("Too close to call between {top} (ranked first, first in {share} of draws) and "
                              "{rival} (first in {rival_share}): the projection's and the prices' ranges overlap; "
                              "a quote or a probe on both settles it.").format(
                                  top=display_name(top), share=f"{share:.0%}", rival=display_name(rival),
                                  rival_share=f"{shares.get(rival, 0.0):.0%}")}
    text = (_("Recommended: {device}, first in {share} of draws over the ranges.").format(device=display_name(top),
                                                                                         share=f"{share:.0%}")
            if share == share else _("Recommended: {device}.").format(device=display_name(top)))
    return {"verdict": "recommend", "devices": [top], "first_share": share, "text": text}
