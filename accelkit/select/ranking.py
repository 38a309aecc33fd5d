"""Hard constraints, then the weighted score and a reason per device: :func:`rank`.

The constraints (precision supported, model fits on the allowed devices, ecosystem
must-haves, power envelope, budget, segment and deployment, time or latency
target) are applied first and each excluded device records the one it failed; the
criteria come from the projection engine through
:func:`accelkit.configsearch.best_configurations`. Everything is vectorised over
the catalogue.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import memory, sizing, units
from ..energy import work_per_joule
from ..catalog import load_catalog, memory_bytes
from ..i18n import _, language
from .reasons import _efficiency_words, _per, _past, _reason, _segment, _unknown_words, _why_words
from .scoring import _UNKNOWN_WORDS, CRITERIA, _scale, _weights, speed_score, weighted_score

__all__ = ["rank", "shortlist", "STATUSES"]


def _figures(scenario, catalog, price_factor=1.0, price_device=None, measurements=None, speed_factor=1.0,
             speed_device=None):
    """Per-device figures the limits and criteria use: the engine's projection
    (:func:`accelkit.configsearch.best_configurations`) turned into a right-sized plan.

    Right-sizing: each device is counted at the fewest devices that meet the demand
    (``devices_needed``: the time target or the serving rate, and the memory), bought
    or rented as such; owned hardware pays its purchase and the energy of the hours it
    is used, rented hardware the hours it is rented. ``total_cost_usd`` (with
    ``_low`` / ``_high``: the low price at the fast end of the projection, the high price
    at the slow end) is what meeting the demand costs over the horizon (training: the
    run), and ``cost_per_million_tokens`` that total over the work it buys.
    """
    from ..configsearch import best_configurations
    from ..cloud_pricing import cloud_rates
    from ..purchase import purchase_plan

    table = best_configurations(scenario, catalog, measurements=measurements)
    table.index = catalog.index
    training = scenario.workload in sizing.TRAINING_WORKLOADS
    peak = table["peak_flops"]
    days_horizon = scenario.horizon_months * units.DAYS_PER_YEAR / 12
    hours_horizon = scenario.hours_per_day * days_horizon
    if speed_factor != 1.0:
        # the sensitivity's "what if this device ran at another efficiency": rates up, times and counts down
        speed = pd.Series(np.where(catalog["name"] == speed_device, speed_factor, 1.0) if speed_device else speed_factor,
                          index=catalog.index)
        table = table.copy()
        for lv in ("", "_low", "_high"):
            table[f"work_per_device_hour{lv}"] = table[f"work_per_device_hour{lv}"] * speed
            table[f"latency_s{lv}"] = table[f"latency_s{lv}"] / speed
            if f"days_on_n{lv}" in table:
                table[f"days_on_n{lv}"] = table[f"days_on_n{lv}"] / speed
            if f"device_hours{lv}" in table:
                table[f"device_hours{lv}"] = table[f"device_hours{lv}"] / speed
            table[f"devices_for_target{lv}"] = np.maximum(np.ceil(np.round(table[f"devices_for_target{lv}"] / speed, 9)), 1)
    work = {lv: table[f"work_per_device_hour{lv}"] for lv in ("", "_low", "_high")}
    if training:
        latency_ms = pd.Series(np.nan, index=catalog.index)
        margin = {lv: scenario.time_target_days / table[f"days_on_n{lv}"] for lv in ("", "_low", "_high")}
    else:
        latency_ms = units.s_to_ms(table["latency_s"])
        margin = {lv: scenario.latency_target_ms / units.s_to_ms(table[f"latency_s{lv}"]) for lv in ("", "_low", "_high")}
    # the fewest devices that meet the demand and hold the model, at each end of the projection
    needed = {lv: np.fmax(table[f"devices_for_target{lv}"], table["min_devices_memory"]) for lv in ("", "_low", "_high")}
    factor = pd.Series(price_factor if price_device is None else
                       np.where(catalog["name"] == price_device, price_factor, 1.0), index=catalog.index)
    cloud = scenario.deployment == "cloud"
    if cloud:
        rates = cloud_rates(catalog, scenario.cloud_pricing, scenario.providers)
    else:
        rates = pd.DataFrame({c: catalog.get(c, pd.Series(np.nan, index=catalog.index)) for c in
                              ("cloud_usd_per_hour", "cloud_usd_per_hour_low", "cloud_usd_per_hour_high")})
        rates["cloud_providers"], rates["cloud_price_basis"] = 0, ""
        rates["cloud_largest_instance"] = rates["cloud_smallest_instance"] = np.nan
    plan = purchase_plan(catalog, needed[""], deployment=scenario.deployment)
    # the power a device runs at: a Jetson configured into a lower nvpmodel mode draws that mode's
    # watts (vision under a power envelope), every other device its datasheet maximum
    moded = table["power_mode"].fillna("").astype(str).ne("") if "power_mode" in table else \
        pd.Series(False, index=catalog.index)
    run_w = table["power_w"].where(moded, catalog["tdp_w"]) if "power_w" in table else catalog["tdp_w"]
    if training:
        demand_work = float(scenario.tokens)
    else:
        kind = table["kind"].iloc[0] if len(table) else "llm"
        need = sizing.compute_need(scenario)
        per_s = need.get("requests_per_s", scenario.requests_per_s) * (scenario.output_tokens if kind == "llm" else 1.0)
        demand_work = per_s * units.SECONDS_PER_HOUR * hours_horizon
    total, purchase, energy, rent, rented = {}, {}, {}, {}, {}
    instance = rates["cloud_smallest_instance"].fillna(1.0).clip(lower=1.0)
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        # the cost range: the low price at the fast end of the projection, the high price at the slow end
        count = needed[level]
        # rented as whole instances: a device sold only in 8-GPU instances is rented 8 at a time
        rented[level] = np.ceil(count / instance) * instance if cloud else count
        if training:
            # device-hours of the run, on every device held while it runs
            hours_used = table[f"device_hours{level}"] * rented[level] / count
        else:
            hours_used = rented[level] * hours_horizon  # device-hours of serving over the horizon
        if cloud:
            hourly = rates[f"cloud_usd_per_hour{level}"] * factor
            rent[level] = hourly * hours_used
            total[level] = rent[level]
        else:
            unit_plan = plan if level == "" else purchase_plan(catalog, count, deployment=scenario.deployment)
            price_col = "purchase_usd" if level == "" else f"purchase{level}_usd"
            purchase[level] = unit_plan[price_col] * factor
            per_device_w = (unit_plan["power_w"] / count.where(count > 0)).where(~moded, run_w)
            energy[level] = per_device_w * hours_used / units.WATTS_PER_KW * scenario.pue * scenario.electricity_usd_per_kwh
            total[level] = purchase[level] + energy[level]
    per_million = {lv: total[lv] / demand_work * units.MEGA for lv in total}
    usable = memory.usable_bytes(memory_bytes(catalog).fillna(1.0)).where(catalog["memory_gb"].notna())
    need_bytes = table["memory_per_device_gb"] * units.GIGA if training else _serving_need_bytes(scenario, table)
    with np.errstate(divide="ignore", invalid="ignore"):
        days_right_sized = table["device_hours"] / needed[""] / units.HOURS_PER_DAY if training else np.nan
    return table.assign(
        latency_ms=latency_ms, tokens_per_device_hour=work[""],
        target_margin=margin[""], target_margin_low=margin["_high"], target_margin_high=margin["_low"],
        devices_needed=needed[""], devices_needed_low=needed["_low"], devices_needed_high=needed["_high"],
        days_right_sized=days_right_sized,
        cloud_usd_per_hour=rates["cloud_usd_per_hour"] * factor, cloud_price_basis=rates["cloud_price_basis"],
        cloud_providers=rates["cloud_providers"], cloud_largest_instance=rates["cloud_largest_instance"],
        purchase_unit=plan["purchase_unit"] if not cloud else _rent_words(rented[""], instance, catalog["name"]),
        units_to_buy=plan["units_to_buy"], devices_rented=rented[""] if cloud else np.nan,
        purchase_usd=purchase.get("", pd.Series(np.nan, index=catalog.index)),
        energy_usd=energy.get("", pd.Series(np.nan, index=catalog.index)),
        rent_usd=rent.get("", pd.Series(np.nan, index=catalog.index)),
        total_cost_usd=total[""], total_cost_usd_low=total["_low"], total_cost_usd_high=total["_high"],
        cost_per_million_tokens=per_million[""], cost_per_million_tokens_low=per_million["_low"],
        cost_per_million_tokens_high=per_million["_high"], flops_per_w=peak / catalog["tdp_w"],
        # the efficiency criterion: the scenario's own work per joule at the power the device runs at (its
        # maximum, or a Jetson's mode), not peak per watt (a memory-bound decode gains nothing from peak FLOP/s)
        work_per_joule=work_per_joule(work[""], run_w.where(run_w > 0)), run_power_w=run_w,
        headroom=usable / need_bytes - 1.0,
    )


def _rent_words(rented, instance, names):
    """"rent 8 × Instinct MI325X (1 instance of 8)" per device."""
    out = []
    for n, k, name in zip(rented, instance, names):
        if not n == n:
            out.append("")
            continue
        if k > 1:
            # one form per count, not ngettext: each is a message of its own in the catalogue
            order = (_("{n} × {name} ({instances} instance of {size})") if n / k == 1 else
                     _("{n} × {name} ({instances} instances of {size})")).format(
                n=f"{n:.0f}", name=name, instances=f"{n / k:.0f}", size=f"{k:.0f}")
        else:
            order = _("{n} × {name}").format(n=f"{n:.0f}", name=name)
        out.append(_("rent {order}").format(order=order))
    return pd.Series(out, index=names.index)


def _serving_need_bytes(scenario, table):
    """Bytes per device that the scenario's batch needs in each device's chosen configuration:
    the weights and KV cache at its precision, split over its tensor-parallel group (the layout
    the searched batch is served in; the scenario's own when the search is off)."""
    precision = table["precision"] if "precision" in table else pd.Series(scenario.precision, index=table.index)
    tp = table["tensor_parallel"].fillna(1.0) if "tensor_parallel" in table else 1.0
    whole = precision.map({p: sizing.memory_need(scenario.copy().update(precision=p), n_devices=1)["total"]
                           for p in precision.dropna().unique()})
    if not scenario.search_configurations:
        return whole / scenario.n_devices
    return whole / tp


def _column(catalog, name, fallback):
    """A catalogue column, or ``fallback`` where it is missing or empty (a user's catalogue)."""
    if name in catalog:
        return catalog[name].fillna(catalog[fallback])
    return catalog[fallback]


class _Verdicts:
    """Three-valued hard limits: each device passes, fails (the first failure is kept, in
    words) or cannot be verified (a figure the limit needs is unknown: which figure, and
    what would settle it). A failure outranks an unknown."""

    def __init__(self, index):
        self.failed = pd.Series("", index=index, dtype=object)
        self.unknown = pd.Series("", index=index, dtype=object)
        self.settle = pd.Series("", index=index, dtype=object)

    def fail(self, mask, message):
        mask = pd.Series(np.asarray(mask, dtype=bool), index=self.failed.index) & (self.failed == "")
        self.failed[mask] = message[mask] if isinstance(message, pd.Series) else message

    def cannot_verify(self, mask, figure, settle):
        mask = pd.Series(np.asarray(mask, dtype=bool), index=self.failed.index) & (self.unknown == "")
        self.unknown[mask] = figure[mask] if isinstance(figure, pd.Series) else figure
        self.settle[mask] = settle

    def check(self, value, limit_fails, figure, settle, message):
        """``value`` against a limit: NaN cannot be verified; ``limit_fails`` (a boolean
        Series, False for NaN) fails with ``message``."""
        value = pd.Series(value, index=self.failed.index)
        self.fail(limit_fails, message)
        self.cannot_verify(value.isna(), figure, settle)

    @property
    def status(self):
        return pd.Series(np.where(self.failed != "", "excluded", np.where(self.unknown != "", "cannot verify",
                                                                           "shortlisted")), index=self.failed.index)


#: statuses in the order they are listed
STATUSES = ("shortlisted", "cannot verify", "excluded")


def _device_filters(scenario, catalog, verdicts):
    """The person's own filters: devices, vendors, and the market's export controls."""
    if scenario.devices:
        chosen = set(scenario.devices)
        verdicts.fail(~catalog["name"].isin(chosen), _("not among the devices you chose ({devices})").format(
            devices=", ".join(scenario.devices[:4]) + (" …" if len(scenario.devices) > 4 else "")))
    if scenario.vendors:
        among = ", ".join(scenario.vendors)
        verdicts.fail(~catalog["vendor"].isin(scenario.vendors), catalog["vendor"].astype(str).map(
            lambda x: _("vendor {vendor} not among {vendors}").format(vendor=x, vendors=among)))
    if scenario.exclude_vendors:
        verdicts.fail(catalog["vendor"].isin(scenario.exclude_vendors), catalog["vendor"].astype(str).map(
            lambda x: _("vendor {vendor} excluded").format(vendor=x)))
    if scenario.market != "global":
        from ..device_facts import market_restrictions

        restricted = market_restrictions(catalog["name"].tolist(), scenario.market)
        restricted.index = catalog.index
        verdicts.fail(restricted["restricted"], restricted["restriction"])
        return restricted["restriction"].where(~restricted["restricted"], "")
    return pd.Series("", index=catalog.index)


def rank(scenario, catalog=None, weights=None, price_factor=1.0, ecosystem=True, price_device=None,
         ecosystem_scores=None, speed_factor=1.0, speed_device=None):
    """Rank every catalogue device for a scenario: limits first, then right-sized scores.

    Hard limits are three-valued. A device **fails** a limit it is known to miss
    (excluded, with the first reason), **cannot be verified** where a figure a limit
    needs is unknown (no price under a budget, no projection under a latency or time
    target, no published power under an envelope or memory size; shown apart, never
    shortlisted, with what would settle it), or **passes** every limit (shortlisted).
    The limits: the person's device, vendor and market filters; the precision; the
    targets the configuration search must meet; segment and deployment; memory; the
    device count (``n_devices`` caps every workload); ecosystem must-haves; power
    envelope; time or latency target; budget.

    The shortlist is scored on five criteria (:data:`CRITERIA`). **Right-sizing** is the
    default objective: cost is the total of meeting the demand with the fewest devices
    that do (bought as units that exist, :func:`accelkit.purchase.purchase_plan`, with
    energy for the hours used; or rented by ``scenario.cloud_pricing``), and speed
    counts only as the margin over the target, capped at ``1 + target_headroom``: a
    device ten times faster than needed scores as one 25 % faster.

    Parameters
    ----------
    scenario : Scenario
    catalog : DataFrame, optional
        Default: the built-in catalogue.
    weights : dict, optional
        Criterion -> weight (``time, cost, efficiency, ecosystem, headroom``); on
        top of ``scenario.weights`` and :data:`DEFAULT_WEIGHTS`.
    price_factor : float
        Multiplies prices (for sensitivity analysis): every device's, or only
        ``price_device``'s when that is given.
    ecosystem : bool
        Apply the ecosystem must-haves and criterion (see :mod:`accelkit.ecosystem`).
    ecosystem_scores : DataFrame, optional
        Precomputed :func:`accelkit.ecosystem.device_scores` for this catalogue and
        scenario (saves time when ranking many variants of one scenario).
    speed_factor, speed_device : float, str
        Multiply the projected speed of ``speed_device`` (every device when None) by
        ``speed_factor`` (for sensitivity analysis).

    Returns
    -------
    pandas.DataFrame
        One row per device, shortlisted first (by score), then those that cannot be
        verified, then excluded: ``rank`` (1.. for shortlisted, NaN otherwise),
        ``name, vendor, segment, status`` ("shortlisted" / "cannot verify" /
        "excluded"), ``cannot_verify`` (bool), ``unknown_figure`` and ``would_settle``
        (for those that cannot be verified), ``excluded_because``, ``score`` (0-100),
        ``score_<criterion>`` (0-1 each), the plan (``devices_needed``,
        ``purchase_unit``, ``units_to_buy``, ``total_cost_usd`` with its range,
        ``purchase_usd``, ``energy_usd``, ``rent_usd``, ``cloud_price_basis``), the
        figures behind the criteria, and ``reason`` (one line in words).
    """
    catalog = load_catalog() if catalog is None else catalog
    w = _weights(scenario, weights)
    f = _figures(scenario, catalog, price_factor, price_device, speed_factor=speed_factor, speed_device=speed_device)
    training = scenario.workload in sizing.TRAINING_WORKLOADS
    if ecosystem:
        scores = ecosystem_scores if ecosystem_scores is not None else _ecosystem_scores(scenario, catalog)
        f["ecosystem_score"] = scores["ecosystem_score"].to_numpy()
        f["ecosystem_fails"] = scores["ecosystem_fails"].to_numpy()
        f["ecosystem_reason"] = scores["ecosystem_reason"].to_numpy()
    else:
        f["ecosystem_score"], f["ecosystem_fails"], f["ecosystem_reason"] = np.nan, 0, ""
    unit = sizing.compute_need(scenario).get("work_unit", "tokens")
    per = _per(unit)
    v = _Verdicts(catalog.index)
    market_notes = _device_filters(scenario, catalog, v)
    precision = scenario.precision
    v.fail(f["peak_flops"].isna(),
           _("no published dense {precision} peak (not supported or not published)").format(precision=precision))
    slo = f["why"].astype(str).str.startswith("no batch meets the targets")
    why = f["why"].astype(str).map(_why_words)
    v.fail(~f["feasible"].astype(bool) & slo, why)
    # infeasible for want of a figure (unknown) or because it does not fit (a failure)
    missing = f["why"].astype(str).str.contains("no published|not published|unknown", regex=True)
    projectable = f["feasible"].astype(bool) | slo
    v.fail(~projectable & ~missing, why)
    v.cannot_verify(~projectable & missing, why.map(lambda x: _("cannot be projected: {why}").format(why=x)),
                    _("the missing datasheet figure, or `accelkit probe` run on the device"))
    if scenario.segments:
        v.fail(~catalog["segment"].isin(scenario.segments), catalog["segment"].map(
            lambda x: _("segment {segment} not allowed").format(segment=_segment(x))))
    if scenario.deployment == "edge" and not scenario.segments:
        v.fail(catalog["segment"] != "edge", _("not an edge device (deployment: edge)"))
    if scenario.deployment == "cloud":
        if scenario.providers:
            rentable = _("not rentable: no {pricing} listing in data/cloud_prices.csv from {providers}").format(
                pricing=scenario.cloud_pricing, providers=", ".join(scenario.providers))
        else:
            rentable = _("not rentable: no {pricing} listing in data/cloud_prices.csv").format(
                pricing=scenario.cloud_pricing)
        v.fail(f["cloud_usd_per_hour"].isna(), rentable)
    v.cannot_verify(catalog["memory_gb"].isna(), _("memory size not published"), _("the datasheet's memory size"))
    never = np.isinf(f["min_devices_memory"])
    searched = scenario.search_configurations
    if training and searched:
        replicated = _("the replicated part of the model state alone does not fit one device's memory even with ZeRO-3")
    elif training and scenario.zero_stage < 3:
        replicated = _("the replicated part of the model state alone does not fit one device's memory (a higher ZeRO "
                       "stage shards it)")
    else:
        replicated = _("the replicated part of the model state alone does not fit one device's memory")
    v.fail(never, replicated)
    if training and searched:
        hold = _("needs {n} devices to hold the model even with ZeRO-3 and one sequence per device; the scenario "
                 "allows {allowed}")
    else:
        hold = _("needs {n} devices to hold the model; the scenario allows {allowed}")
    v.fail(f["min_devices_memory"] > scenario.n_devices,
           f["min_devices_memory"].map(lambda x: hold.format(n=f"{x:.0f}", allowed=scenario.n_devices)))
    if not training:  # training runs on the scenario's devices: its time target says whether they suffice
        serve = _("needs {n} devices to serve the demand; the scenario allows {allowed}")
        v.fail(f["devices_needed"] > scenario.n_devices,
               f["devices_needed"].map(lambda x: serve.format(n=f"{x:.0f}", allowed=scenario.n_devices)))
    if ecosystem:
        v.fail(f["ecosystem_fails"] > 0,
               f["ecosystem_reason"].astype(str).map(lambda x: _("ecosystem: {reason}").format(reason=x)))
    if scenario.power_envelope_w:
        envelope = scenario.power_envelope_w
        # a Jetson serving images runs in its highest nvpmodel mode within the envelope (its run power); the
        # limit applies to the power each device runs at
        over = f["run_power_w"].map(lambda x: _("{tdp} W TDP > power envelope {envelope} W").format(
            tdp=f"{x:g}", envelope=f"{envelope:g}"))
        v.check(f["run_power_w"], f["run_power_w"] > envelope,
                _("maximum power not published (envelope {envelope} W)").format(envelope=f"{envelope:g}"),
                _("the datasheet's maximum power, or a measured draw under load"), over)
    if training:
        v.check(f["days_on_n"].where(projectable, 0.0), f["days_on_n"] > scenario.time_target_days,
                _("training time not projected"), _("`accelkit probe --train` on the device"),
                f["days_on_n"].map(lambda x: _("{days} days on {n} devices > target {target} days").format(
                    days=_past(x, scenario.time_target_days), n=scenario.n_devices,
                    target=f"{scenario.time_target_days:g}")))
    else:
        v.check(f["latency_ms"].where(projectable, 0.0), f["latency_ms"] > scenario.latency_target_ms,
                _("time {per} not projected").format(per=per), _("`accelkit probe --llm` on the device"),
                f["latency_ms"].map(lambda x: _("{value} ms {per} > target {target} ms").format(
                    value=_past(x, scenario.latency_target_ms), per=per, target=f"{scenario.latency_target_ms:g}")))
    if scenario.budget_usd:
        spend = f["total_cost_usd"]
        budget = f"${scenario.budget_usd:,.0f}"
        if scenario.deployment == "cloud":
            unknown, settle = _("rent unknown (budget {budget})"), _("a provider's quote")
        else:
            unknown = _("price unknown (budget {budget})")
            settle = _("a quoted price (the decision chapter takes quotes)")
        v.check(spend.where(projectable & f["devices_needed"].notna(), 0.0), spend > scenario.budget_usd,
                unknown.format(budget=budget), settle,
                spend.map(lambda x: _("{spend} > budget {budget}").format(spend=f"${x:,.0f}", budget=budget)))

    if w["cost"] > 0:
        # right-sizing is the objective: a device whose cost of meeting the demand is unknown
        # cannot be placed against the others (scoring it on the rest would let it top the list)
        placed = (_("rent unknown: the cheapest way to meet the demand cannot be placed")
                  if scenario.deployment == "cloud" else
                  _("price unknown: the cheapest way to meet the demand cannot be placed"))
        v.cannot_verify(projectable & f["devices_needed"].notna() & f["total_cost_usd"].isna(), placed,
                        _("a quoted price (the decision chapter takes quotes), or the cost weight set to 0"))
    raw = {"time": f["target_margin"], "cost": f["cost_per_million_tokens"], "efficiency": f["work_per_joule"],
           "ecosystem": f["ecosystem_score"], "headroom": f["headroom"]}
    unknown = pd.DataFrame({k: ~np.isfinite(x.to_numpy(dtype=float)) for k, x in raw.items()}, index=catalog.index)
    if scenario.exclude_unknown:
        weighted_unknown = unknown[[k for k in CRITERIA if w[k] > 0]]
        names = weighted_unknown.apply(lambda r: ", ".join(_UNKNOWN_WORDS[k] for k in r.index[r]), axis=1)
        v.fail(weighted_unknown.any(axis=1), names.map(
            lambda x: _("{names} unknown (the scenario excludes devices with unknown criteria)").format(
                names=_unknown_words(x))))
    status = v.status
    short = status == "shortlisted"
    crit = pd.DataFrame(np.nan, index=catalog.index, columns=list(CRITERIA))
    s = short.to_numpy()
    crit.loc[s, "time"] = speed_score(f.loc[s, "target_margin"], scenario.target_headroom)
    crit.loc[s, "cost"] = _scale(f.loc[s, "cost_per_million_tokens"], log=True, higher_is_better=False)
    crit.loc[s, "efficiency"] = _scale(f.loc[s, "work_per_joule"], log=True)
    crit.loc[s, "ecosystem"] = f.loc[s, "ecosystem_score"].to_numpy(dtype=float) / 100.0
    crit.loc[s, "headroom"] = _scale(f.loc[s, "headroom"].clip(lower=0, upper=3))
    score, n_known = weighted_score({k: crit[k].to_numpy() for k in CRITERIA}, w)
    score = pd.Series(score, index=catalog.index)
    out = pd.DataFrame({
        "name": catalog["name"], "vendor": catalog["vendor"], "segment": catalog["segment"],
        "status": status, "cannot_verify": status == "cannot verify",
        "unknown_figure": v.unknown.where(status == "cannot verify", ""),
        "would_settle": v.settle.where(status == "cannot verify", ""),
        "excluded_because": v.failed, "score": score.where(short),
    })
    for k in CRITERIA:
        out[f"score_{k}"] = crit[k].where(short)
    out["criteria_known"] = np.where(short, n_known, np.nan)
    out["criteria_weighted"] = sum(1 for k in CRITERIA if w[k] > 0)
    out["unknown_criteria"] = [", ".join(_UNKNOWN_WORDS[k] for k in CRITERIA if w[k] > 0 and u[k])
                               for u in unknown.to_dict("records")]
    for col in ("peak_flops", "devices_needed", "devices_needed_low", "devices_needed_high", "days_on_n",
                "days_right_sized", "latency_ms", "target_margin", "target_margin_low", "target_margin_high",
                "purchase_unit", "units_to_buy", "devices_rented", "total_cost_usd", "total_cost_usd_low", "total_cost_usd_high",
                "purchase_usd", "energy_usd", "rent_usd", "cloud_usd_per_hour", "cloud_price_basis",
                "cloud_providers", "cloud_largest_instance", "cost_per_million_tokens", "flops_per_w", "work_per_joule",
                "ecosystem_score", "headroom", "memory_per_device_gb", "tokens_per_device_hour"):
        out[col] = f[col]
    out["cloud_usd"] = f["rent_usd"]
    # the projection's ranges and where its efficiencies come from
    out["days_on_n_low"] = f.get("days_on_n_low", np.nan)
    out["days_on_n_high"] = f.get("days_on_n_high", np.nan)
    out["latency_ms_low"] = units.s_to_ms(f["latency_s_low"])
    out["latency_ms_high"] = units.s_to_ms(f["latency_s_high"])
    out["cost_per_million_tokens_low"] = f["cost_per_million_tokens_low"]
    out["cost_per_million_tokens_high"] = f["cost_per_million_tokens_high"]
    out["efficiency_source"] = [_efficiency_words(mm, mem) for mm, mem in
                                zip(f["matmul_source"].astype(str), f["memory_source"].astype(str))]
    from ..projection.track_record import scenario_track_record

    out["engine_track_record"] = scenario_track_record(scenario, out["vendor"], out["name"])
    out["run_power_w"] = f["run_power_w"]
    for extra in ("mfu", "precision", "n_devices", "tensor_parallel", "pipeline_parallel", "expert_parallel",
                  "zero_stage", "batch_size", "power_mode",
                  "configuration", "ttft_s", "ttft_s_low", "ttft_s_high"):
        if extra in f:
            out[extra] = f[extra]
    from ..device_facts import purchase_risks

    spans = (f["n_devices"].fillna(1) > 1) if "n_devices" in f else pd.Series(scenario.n_devices > 1, index=f.index)
    risk = purchase_risks(catalog["name"].tolist(), scenario.deployment, spans.tolist(), training)
    out["purchase_risks"] = [("; ".join(x for x in (r, m) if x)) for r, m in
                             zip(risk["purchase_risks"], market_notes.to_numpy())]
    out["purchase_risk_sources"] = risk["purchase_risk_sources"].to_numpy()
    out["work_unit"] = unit
    out["reason"] = [_reason(r, w, training, scenario, unit) for r in out.to_dict("records")]
    out["_order"] = out["status"].map({k: i for i, k in enumerate(STATUSES)})
    out = out.sort_values(["_order", "score", "name"], ascending=[True, False, True], na_position="last") \
        .drop(columns="_order")
    out.insert(0, "rank", np.nan)
    n_short = int(short.sum())
    out.iloc[:n_short, 0] = np.arange(1, n_short + 1)
    return out.reset_index(drop=True)


_ECOSYSTEM_CACHE = {}


def _ecosystem_scores(scenario, catalog):
    """The ecosystem checklist per device; cached, since a control change that does not
    touch the requirements (most of them) gives the same scores."""
    from .. import ecosystem as eco

    requirements = eco.Requirements.from_scenario(scenario)
    cols = [c for c in ("name", "vendor", "kind", "segment", "software_stack") if c in catalog]
    # the language is part of the key: the checklist's reasons are words
    key = (repr(requirements), tuple(map(tuple, catalog[cols].astype(str).to_numpy())), language())
    if key not in _ECOSYSTEM_CACHE:
        if len(_ECOSYSTEM_CACHE) > 64:
            _ECOSYSTEM_CACHE.clear()
        _ECOSYSTEM_CACHE[key] = eco.device_scores(catalog, requirements)
    return _ECOSYSTEM_CACHE[key].copy()


def shortlist(scenario, catalog=None, n=5, **kwargs):
    """The top ``n`` shortlisted rows of :func:`rank`."""
    ranked = rank(scenario, catalog, **kwargs)
    return ranked[ranked["status"] == "shortlisted"].head(n)
