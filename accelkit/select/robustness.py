"""How robust the winner is: one assumption scanned at a time (:func:`sensitivity`) and
all ranges drawn at once (:func:`rank_stability`, Monte-Carlo rank acceptability)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import sizing
from ..catalog import load_catalog
from ..i18n import N_, _
from .ranking import _ecosystem_scores, rank
from .scoring import _scale, _weights, speed_score, weighted_score

__all__ = ["SENSITIVITY_LABELS", "SENSITIVITY_RANGES", "assumption_label", "rank_stability", "sensitivity"]


#: assumption -> values scanned by :func:`sensitivity`
SENSITIVITY_RANGES = {
    "winner_efficiency": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5],
    "utilization": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    "winner_price": [0.5, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0],
    "hours_per_day": [2.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0],
    "horizon_months": [6, 12, 24, 36, 48, 60],
    "electricity_usd_per_kwh": [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6],
}

#: assumption -> what a person reads (the tornado chart, the sensitivity table); the keys stay
#: the identifiers of :func:`sensitivity`'s ``assumption`` column
SENSITIVITY_LABELS = {
    "winner_efficiency": N_("winner's speed (× projected)"),
    "utilization": N_("utilisation (MFU)"),
    "winner_price": N_("winner's price (× base)"),
    "hours_per_day": N_("hours of use per day"),
    "horizon_months": N_("horizon (months)"),
    "electricity_usd_per_kwh": N_("electricity (USD per kWh)"),
}


def assumption_label(assumption):
    """An assumption of :func:`sensitivity` as a person reads it, in the language in use
    (an unknown one as it is)."""
    label = SENSITIVITY_LABELS.get(assumption)
    return _(label) if label else str(assumption)


def sensitivity(scenario, catalog=None, ranges=None, weights=None):
    """Which assumption would change the order of the winner and the runner-up, and at what value.

    Each assumption is scanned over a range while the others keep the scenario's
    values: ``winner_efficiency`` multiplies the winner's projected speed (its
    achieved efficiency against the published one); ``utilization`` (a person's own
    MFU in place of the projected one; training only); ``winner_price`` multiplies the
    winning device's price (purchase or hourly) alone; ``hours_per_day``,
    ``horizon_months`` and ``electricity_usd_per_kwh`` are scenario fields (they move
    owned hardware's cost; a cloud rent does not depend on them).

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        ``summary``: one row per assumption -- ``assumption, base, winner_at_base,
        runner_up, switches_at`` (the value nearest the base at which another device
        wins; NaN if none in the range), ``new_winner``, ``margin_at_base`` (winner's
        score minus the runner-up's), ``margin_min, margin_max`` over the range
        (what the chart shows when nothing switches), ``score_low, score_high`` (the
        base winner's score at the ends of the range); and ``scan``: every
        (assumption, value, winner, margin, base_winner_score).
    """
    catalog = load_catalog() if catalog is None else catalog
    ranges = ranges or SENSITIVITY_RANGES
    unknown = sorted(set(ranges) - set(SENSITIVITY_RANGES))
    if unknown:
        raise ValueError(f"ranges: unknown assumption {unknown[0]!r}; choose from {', '.join(SENSITIVITY_RANGES)}")
    eco_scores = _ecosystem_scores(scenario, catalog)
    base_rank = rank(scenario, catalog, weights, ecosystem_scores=eco_scores)
    base_short = base_rank[base_rank["status"] == "shortlisted"]
    if base_short.empty:
        raise ValueError("sensitivity: no device passes the hard constraints; relax a constraint first")
    base_winner = base_short.iloc[0]["name"]
    runner_up = base_short.iloc[1]["name"] if len(base_short) > 1 else ""
    rows, scan = [], []
    for assumption, values in ranges.items():
        if assumption in ("winner_price", "winner_efficiency"):
            base = 1.0
        elif assumption == "utilization":
            if scenario.workload not in sizing.TRAINING_WORKLOADS:
                continue  # serving: the projection has no single utilisation to vary
            mfu = base_short.iloc[0].get("mfu", np.nan)
            base = float(scenario.utilization if scenario.utilization is not None else mfu)
            if not (base == base):
                continue
        else:
            base = float(getattr(scenario, assumption))
        results = []
        for value in values:
            trial = scenario.copy()
            if assumption == "winner_price":
                ranked = rank(trial, catalog, weights, price_factor=value, price_device=base_winner,
                              ecosystem_scores=eco_scores)
            elif assumption == "winner_efficiency":
                ranked = rank(trial, catalog, weights, speed_factor=value, speed_device=base_winner,
                              ecosystem_scores=eco_scores)
            else:
                setattr(trial, assumption, value)
                ranked = rank(trial, catalog, weights, ecosystem_scores=eco_scores)
            short = ranked[ranked["status"] == "shortlisted"]
            winner = short.iloc[0]["name"] if not short.empty else ""
            scores = short.set_index("name")["score"]
            base_score = float(scores.get(base_winner, np.nan))
            # the winner's lead over the base runner-up (or, alone, over nobody: its own score)
            margin = base_score - float(scores.get(runner_up, 0.0 if not runner_up else np.nan))
            results.append((float(value), winner, margin, base_score))
            scan.append({"assumption": assumption, "value": float(value), "winner": winner, "margin": margin,
                         "base_winner_score": base_score})
        switching = sorted((abs(v - base), v, win) for v, win, _, _ in results if win != base_winner)
        margins = np.array([m for _, _, m, _ in results], dtype=float)
        at_base = [m for v, _, m, _ in results if np.isclose(v, base)]
        rows.append({
            "assumption": assumption, "base": base, "winner_at_base": base_winner, "runner_up": runner_up,
            "switches_at": switching[0][1] if switching else np.nan,
            "new_winner": (switching[0][2] or _("no device passes")) if switching else "",
            "margin_at_base": at_base[0] if at_base else float(base_short.iloc[0]["score"] - (
                base_short.iloc[1]["score"] if len(base_short) > 1 else 0.0)),
            "margin_min": np.nanmin(margins) if np.isfinite(margins).any() else np.nan,
            "margin_max": np.nanmax(margins) if np.isfinite(margins).any() else np.nan,
            "score_low": results[0][3], "score_high": results[-1][3],
        })
    return pd.DataFrame(rows), pd.DataFrame(scan)


def rank_stability(scenario, catalog=None, weights=None, draws=500, seed=0, top=5, ranked=None):
    """How often each device comes first when the projection and prices are drawn over their ranges.

    Each draw takes, per device, a speed and a cost log-uniformly between the
    projection's ``_low`` and ``_high`` (time range: the engine's efficiency spread
    widened by its validation error; cost: the price range and the speed range), and
    re-scores the shortlist with the same weights (Monte-Carlo rank acceptability,
    Lahdelma & Salminen, Operations Research 49(3), 2001).

    Returns
    -------
    pandas.DataFrame
        ``name, first_share`` (fraction of draws in which it ranks first),
        ``median_rank``, sorted by ``first_share``; at most ``top`` rows. Empty when
        nothing is shortlisted. ``ranked`` may pass :func:`rank`'s result for the same
        scenario, catalogue and weights to save ranking again.
    """
    catalog = load_catalog() if catalog is None else catalog
    ranked = rank(scenario, catalog, weights) if ranked is None else ranked
    short = ranked[ranked["status"] == "shortlisted"].reset_index(drop=True)
    if short.empty:
        return pd.DataFrame(columns=["name", "first_share", "median_rank"])
    w = _weights(scenario, weights)
    rng = np.random.default_rng(seed)

    def draw(mid, low, high):
        lo = np.log(np.where(np.isfinite(low) & (low > 0), low, mid))
        hi = np.log(np.where(np.isfinite(high) & (high > 0), high, mid))
        u = rng.random((draws, len(mid)))
        return np.exp(lo + u * (hi - lo))

    # the time criterion as rank() scores it: the margin over the target, capped at the headroom
    time_mid, time_lo, time_hi = (short[c].to_numpy(dtype=float) for c in ("target_margin", "target_margin_low",
                                                                            "target_margin_high"))
    margins = draw(time_mid, time_lo, time_hi)
    costs = draw(*(short[c].to_numpy(dtype=float) for c in ("cost_per_million_tokens", "cost_per_million_tokens_low",
                                                              "cost_per_million_tokens_high")))
    fixed = {k: np.broadcast_to(short[f"score_{k}"].to_numpy(dtype=float), margins.shape)
             for k in ("ecosystem", "headroom")}
    # work per joule moves with the drawn speed (the margin's ratio to its middle)
    per_joule = short["work_per_joule"].to_numpy(dtype=float)[None, :] * margins / time_mid[None, :]
    crit = {"time": speed_score(margins, scenario.target_headroom),
            "cost": _scale(costs, log=True, higher_is_better=False),
            "efficiency": _scale(per_joule, log=True), **fixed}
    score, _ = weighted_score(crit, w)
    order = np.argsort(-np.nan_to_num(score, nan=-1.0), axis=1)
    ranks = np.empty_like(order)
    ranks[np.arange(draws)[:, None], order] = np.arange(1, len(short) + 1)[None, :]
    out = pd.DataFrame({"name": short["name"], "first_share": (ranks == 1).mean(axis=0),
                        "median_rank": np.median(ranks, axis=0)})
    return out.sort_values(["first_share", "median_rank"], ascending=[False, True]).head(top).reset_index(drop=True)
