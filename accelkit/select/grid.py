"""The winning device over a grid of model sizes × training tokens, in one numpy pass."""

from __future__ import annotations

import numpy as np

from .. import memory, sizing, units
from ..energy import work_per_joule
from ..catalog import load_catalog, memory_bytes, peak_flops
from .ranking import _ecosystem_scores
from .scoring import _scale, _weights, speed_score, weighted_score

__all__ = ["rank_grid"]


def rank_grid(scenario, params, tokens, catalog=None, weights=None):
    """The winning device for every (model size, training tokens) pair, vectorised.

    A fast companion of :func:`rank` for maps of the decision space: the same
    constraints and criteria, for a custom-size model whose memory is its model
    state (weights, gradients, optimizer under the scenario's ZeRO stage; no
    activations, which need a model shape), evaluated on a grid in one numpy pass.

    Parameters
    ----------
    scenario : Scenario
        Training scenario supplying precision, utilisation, cluster size, target,
        deployment, prices, weights.
    params, tokens : array-like
        Model sizes [parameters] and training tokens [tokens] (the grid's axes).

    Returns
    -------
    dict
        ``winner`` (array of device names, shape (len(params), len(tokens)); "" where
        no device passes), ``score`` (the winner's score), ``n_passing`` and the axes.
    """
    from .._validate import check_positive

    if scenario.workload not in sizing.TRAINING_WORKLOADS:
        raise ValueError("rank_grid: workload must be training or fine-tuning (the grid spans model size × tokens)")
    catalog = load_catalog() if catalog is None else catalog
    w = _weights(scenario, weights)
    n_arr = np.asarray(params, dtype=float)[:, None, None]
    d_arr = np.asarray(tokens, dtype=float)[None, :, None]
    check_positive("params", n_arr, "a number of parameters")
    check_positive("tokens", d_arr, "a number of tokens")
    from ..projection.training import TRAIN_PRECISIONS
    from ..projection.training_sweeps import tokens_per_second_grid

    if scenario.precision not in TRAIN_PRECISIONS:
        raise ValueError(f"rank_grid: precision must be one of {', '.join(TRAIN_PRECISIONS)} for training; "
                         f"got {scenario.precision!r}")
    peak = peak_flops(catalog, scenario.precision).to_numpy()[None, None, :]
    usable = memory.usable_bytes(memory_bytes(catalog).fillna(1.0)).where(catalog["memory_gb"].notna()).to_numpy()
    n = scenario.n_devices
    # ZeRO stages tried: the scenario's, or (searching) the lowest of 1-3 that fits, as rank() does
    stages = [scenario.zero_stage] if not scenario.search_configurations else ([0] if n == 1 else [1, 2, 3])

    def speed(z):
        return tokens_per_second_grid(np.asarray(params, dtype=float), scenario.precision, n, scenario.seq_len,
                                      max(scenario.batch_size, n) * scenario.seq_len, z, catalog,
                                      utilization=scenario.utilization)[:, None, :]

    # model state per device from the formula module, over every size at once
    state = per_device = None
    speeds = {}
    for z in stages:
        state_z = memory.training_bytes(n_arr, "mixed", "adam", zero_stage=z, n_devices=n)
        fits = state_z <= usable[None, None, :]
        # ZeRO 1 and 2 move the same bytes per step (Rajbhandari et al. 2020, §7): one projection serves both
        key = 3 if z >= 3 else 1 if z >= 1 else 0
        if key not in speeds:
            speeds[key] = speed(z)
        if state is None:
            state, per_device = np.broadcast_to(state_z, fits.shape).copy(), np.broadcast_to(speeds[key], fits.shape).copy()
            taken = fits
        else:
            new = fits & ~taken
            state = np.where(new, state_z, state)
            per_device = np.where(new, speeds[key], per_device)
            taken = taken | fits
    days = d_arr / (per_device * n) / units.SECONDS_PER_DAY
    # right-sized cost, as rank() counts it: the device-hours of the run rented by the scenario's
    # price policy, or the fewest devices that meet the target bought with the energy of the run
    device_hours = d_arr / per_device / units.SECONDS_PER_HOUR
    if scenario.deployment == "cloud":
        from ..cloud_pricing import cloud_rates

        hourly = cloud_rates(catalog, scenario.cloud_pricing, scenario.providers)["cloud_usd_per_hour"].to_numpy()
        total = hourly[None, None, :] * device_hours
        rentable = np.isfinite(hourly)
    else:
        from ..purchase import purchase_plan

        needed = np.maximum(np.ceil(np.round(d_arr / (per_device * scenario.time_target_days * units.SECONDS_PER_DAY),
                                              9)), 1.0)
        # whole purchasable units per count: priced once per distinct count (a few dozen at most)
        price_per_count = {}
        for count in np.unique(needed[np.isfinite(needed)]):
            plan = purchase_plan(catalog, np.full(len(catalog), count), deployment=scenario.deployment)
            price_per_count[count] = (plan["purchase_usd"].to_numpy(), (plan["power_w"] / count).to_numpy())
        purchase = np.full(needed.shape, np.nan)
        power = np.full(needed.shape, np.nan)
        for count, (price, watts) in price_per_count.items():
            at = needed == count
            purchase = np.where(at, np.broadcast_to(price, needed.shape), purchase)
            power = np.where(at, np.broadcast_to(watts, needed.shape), power)
        energy = power / units.WATTS_PER_KW * device_hours * scenario.pue * scenario.electricity_usd_per_kwh
        total = purchase + energy
        rentable = np.ones(len(catalog), dtype=bool)
    cost = total / d_arr * units.MEGA
    tdp = catalog["tdp_w"].where(catalog["tdp_w"] > 0).to_numpy(dtype=float)
    scores = _ecosystem_scores(scenario, catalog)
    ok_device = np.isfinite(peak[0, 0]) & np.isfinite(usable) & (scores["ecosystem_fails"].to_numpy() == 0)
    if scenario.segments:
        ok_device &= catalog["segment"].isin(scenario.segments).to_numpy()
    if scenario.deployment == "edge" and not scenario.segments:
        ok_device &= (catalog["segment"] == "edge").to_numpy()
    if scenario.deployment == "cloud":
        ok_device &= rentable
    if scenario.power_envelope_w:
        ok_device &= catalog["tdp_w"].to_numpy() <= scenario.power_envelope_w
    ok = ok_device[None, None, :] & (state <= usable[None, None, :]) & (days <= scenario.time_target_days)
    crit = {
        "time": np.where(ok, speed_score(np.where(ok, scenario.time_target_days / days, np.nan),
                                         scenario.target_headroom), 0.0),
        "cost": _scale(cost, log=True, higher_is_better=False, mask=ok),
        # tokens trained per joule at the maximum power, as rank() scores efficiency
        "efficiency": _scale(work_per_joule(per_device * units.SECONDS_PER_HOUR, tdp[None, None, :]),
                             log=True, mask=ok),
        "ecosystem": np.where(ok, scores["ecosystem_score"].to_numpy() / 100.0, 0.0),
        "headroom": _scale(np.clip(usable / state - 1.0, 0, 3), mask=ok),
    }
    score, _ = weighted_score(crit, w)
    score = np.where(ok & np.isfinite(score), score, -1.0)
    best = np.argmax(score, axis=-1)
    best_score = np.take_along_axis(score, best[..., None], axis=-1)[..., 0]
    names = catalog["name"].to_numpy()
    winner = np.where(best_score >= 0, names[best], "")
    return {"winner": winner, "score": np.where(best_score >= 0, best_score, np.nan),
            "n_passing": ok.sum(axis=-1), "params": np.asarray(params), "tokens": np.asarray(tokens)}
