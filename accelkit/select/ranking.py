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
from ..catalog import load_catalog, memory_bytes
from .scoring import _UNKNOWN_WORDS, CRITERIA, _scale, _weights, weighted_score

__all__ = ["rank", "shortlist"]


def _figures(scenario, catalog, price_factor=1.0, price_device=None, measurements=None, speed_factor=1.0,
             speed_device=None):
    """Per-device figures the constraints and criteria use: the engine's projection
    (:func:`accelkit.sizing.per_device`) turned into time, latency and cost criteria."""
    from ..configsearch import best_configurations

    table = best_configurations(scenario, catalog, measurements=measurements)
    table.index = catalog.index
    training = scenario.workload in sizing.TRAINING_WORKLOADS
    peak = table["peak_flops"]
    days_horizon = scenario.horizon_months * units.DAYS_PER_YEAR / 12
    if speed_factor != 1.0:
        # the sensitivity's "what if this device ran at another efficiency": rates up, times down
        speed = pd.Series(np.where(catalog["name"] == speed_device, speed_factor, 1.0) if speed_device else speed_factor,
                          index=catalog.index)
        table = table.copy()
        for lv in ("", "_low", "_high"):
            table[f"work_per_device_hour{lv}"] = table[f"work_per_device_hour{lv}"] * speed
            table[f"latency_s{lv}"] = table[f"latency_s{lv}"] / speed
            if f"days_on_n{lv}" in table:
                table[f"days_on_n{lv}"] = table[f"days_on_n{lv}"] / speed
        if "device_hours" in table:
            table["device_hours"] = table["device_hours"] / speed
    work = {lv: table[f"work_per_device_hour{lv}"] for lv in ("", "_low", "_high")}
    if training:
        time_value = table["days_on_n"]  # lower is better
        latency_ms = pd.Series(np.nan, index=catalog.index)
    else:
        latency_ms = units.s_to_ms(table["latency_s"])
        time_value = 1.0 / work[""]  # device-hours per unit of work: lower is better
    factor = price_factor if price_device is None else np.where(catalog["name"] == price_device, price_factor, 1.0)
    cost = {}
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        # the cost range: the low price at the fast end of the projection, the high price at the slow end
        price = _column(catalog, f"price{level}_usd" if level else "price_usd", "price_usd") * factor
        hourly = _column(catalog, f"cloud_usd_per_hour{level}", "cloud_usd_per_hour") * factor
        if scenario.deployment == "cloud":
            cost[level] = hourly / work[src] * units.MEGA
        else:
            hours = scenario.hours_per_day * days_horizon
            energy_usd = catalog["tdp_w"] / units.WATTS_PER_KW * scenario.pue * scenario.electricity_usd_per_kwh * hours
            cost[level] = (price + energy_usd) / (work[src] * hours) * units.MEGA
    price = catalog["price_usd"] * factor
    usable = memory.usable_bytes(memory_bytes(catalog).fillna(1.0)).where(catalog["memory_gb"].notna())
    need = table["memory_per_device_gb"] * units.GIGA if training else _serving_need_bytes(scenario, table)
    return table.assign(
        time_value=time_value, latency_ms=latency_ms, tokens_per_device_hour=work[""],
        cost_per_million_tokens=cost[""], cost_per_million_tokens_low=cost["_low"],
        cost_per_million_tokens_high=cost["_high"], flops_per_w=peak / catalog["tdp_w"], headroom=usable / need - 1.0,
        purchase_usd=table["devices_needed"] * price,
    )


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


def rank(scenario, catalog=None, weights=None, price_factor=1.0, ecosystem=True, price_device=None,
         ecosystem_scores=None, speed_factor=1.0, speed_device=None):
    """Rank every catalogue device for a scenario.

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
        One row per device, shortlisted first (by score), then excluded:
        ``rank`` (1.. for shortlisted, NaN excluded), ``name, vendor, segment,
        status`` ("shortlisted" / "excluded"), ``excluded_because``, ``score``
        (0-100), ``score_<criterion>`` (0-1 each), the figures behind them, and
        ``reason`` (one line in words).
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

    why = pd.Series("", index=catalog.index, dtype=object)

    def exclude(mask, message):
        mask = mask & (why == "")
        why[mask] = message[mask] if isinstance(message, pd.Series) else message

    precision = scenario.precision
    exclude(f["peak_flops"].isna(), f"no published dense {precision} peak (not supported or not published)")
    slo = f["why"].astype(str).str.startswith("no batch meets the targets")
    exclude(~f["feasible"].astype(bool) & slo, f["why"].astype(str))
    exclude(~f["feasible"].astype(bool), "cannot be projected: " + f["why"].astype(str))
    if scenario.segments:
        exclude(~catalog["segment"].isin(scenario.segments), "segment " + catalog["segment"] + " not allowed")
    if scenario.deployment == "edge" and not scenario.segments:
        exclude(catalog["segment"] != "edge", "not an edge device (deployment: edge)")
    if scenario.deployment == "cloud":
        exclude(catalog["cloud_usd_per_hour"].isna(), "not rentable: no on-demand price in data/cloud_prices.csv")
    exclude(f["min_devices_memory"].isna(), "no published memory size")
    too_big = f["min_devices_memory"] > scenario.n_devices
    never = np.isinf(f["min_devices_memory"])
    searched = scenario.search_configurations
    exclude(never, "the replicated part of the model state alone does not fit one device's memory"
            + (" even with ZeRO-3" if training and searched else
               " (a higher ZeRO stage shards it)" if training and scenario.zero_stage < 3 else ""))
    exclude(too_big, "needs " + f["min_devices_memory"].map(lambda v: f"{v:.0f}") +
            f" devices to hold the model{' even with ZeRO-3 and one sequence per device' if training and searched else ''}"
            f"; the scenario allows {scenario.n_devices}")
    if ecosystem:
        exclude(f["ecosystem_fails"] > 0, "ecosystem: " + f["ecosystem_reason"].astype(str))
    if scenario.power_envelope_w:
        # a hard limit cannot be certified on an unpublished figure
        exclude(catalog["tdp_w"].isna(), f"no published maximum power: cannot check the {scenario.power_envelope_w:g} W "
                "power envelope")
        exclude(catalog["tdp_w"] > scenario.power_envelope_w,
                catalog["tdp_w"].map(lambda v: f"{v:g} W TDP") + f" > power envelope {scenario.power_envelope_w:g} W")
    if training:
        exclude(f["days_on_n"] > scenario.time_target_days,
                f["days_on_n"].map(lambda v: f"{v:,.1f} days") + f" on {scenario.n_devices} devices > target "
                f"{scenario.time_target_days:g} days")
    else:
        exclude(f["latency_ms"] > scenario.latency_target_ms,
                f["latency_ms"].map(lambda v: f"{v:,.1f} ms per token") +
                f" > target {scenario.latency_target_ms:g} ms")
    if scenario.budget_usd:
        factor = price_factor if price_device is None else np.where(catalog["name"] == price_device, price_factor, 1.0)
        if scenario.deployment != "cloud":
            spend = f["purchase_usd"]  # purchase of the devices needed (prices already scaled)
        elif training:
            spend = f["device_hours"] * f["cloud_usd_per_hour"] * factor  # rent for the whole run
        else:
            hours = scenario.hours_per_day * scenario.horizon_months * units.DAYS_PER_YEAR / 12
            spend = f["devices_needed"] * f["cloud_usd_per_hour"] * factor * hours  # rent over the horizon
        exclude(spend > scenario.budget_usd, spend.map(lambda v: f"${v:,.0f}") + f" > budget ${scenario.budget_usd:,.0f}")

    raw = {"time": f["time_value"], "cost": f["cost_per_million_tokens"], "efficiency": f["flops_per_w"],
           "ecosystem": f["ecosystem_score"], "headroom": f["headroom"]}
    unknown = pd.DataFrame({k: ~np.isfinite(v.to_numpy(dtype=float)) for k, v in raw.items()}, index=catalog.index)
    if scenario.exclude_unknown:
        weighted_unknown = unknown[[k for k in CRITERIA if w[k] > 0]]
        names = weighted_unknown.apply(lambda r: ", ".join(_UNKNOWN_WORDS[k] for k in r.index[r]), axis=1)
        exclude(weighted_unknown.any(axis=1), names + " unknown (the scenario excludes devices with unknown criteria)")
    short = why == ""
    crit = pd.DataFrame(np.nan, index=catalog.index, columns=list(CRITERIA))
    s = short.to_numpy()
    crit.loc[s, "time"] = _scale(f.loc[s, "time_value"], log=True, higher_is_better=False)
    crit.loc[s, "cost"] = _scale(f.loc[s, "cost_per_million_tokens"], log=True, higher_is_better=False)
    crit.loc[s, "efficiency"] = _scale(f.loc[s, "flops_per_w"], log=True)
    crit.loc[s, "ecosystem"] = f.loc[s, "ecosystem_score"].to_numpy(dtype=float) / 100.0
    crit.loc[s, "headroom"] = _scale(f.loc[s, "headroom"].clip(lower=0, upper=3))
    score, n_known = weighted_score({k: crit[k].to_numpy() for k in CRITERIA}, w)
    score = pd.Series(score, index=catalog.index)
    out = pd.DataFrame({
        "name": catalog["name"], "vendor": catalog["vendor"], "segment": catalog["segment"],
        "status": np.where(short, "shortlisted", "excluded"), "excluded_because": why,
        "score": score.where(short),
    })
    for k in CRITERIA:
        out[f"score_{k}"] = crit[k].where(short)
    out["criteria_known"] = np.where(short, n_known, np.nan)
    out["criteria_weighted"] = sum(1 for k in CRITERIA if w[k] > 0)
    out["unknown_criteria"] = [", ".join(_UNKNOWN_WORDS[k] for k in CRITERIA if w[k] > 0 and u[k])
                               for u in unknown.to_dict("records")]
    for col in ("peak_flops", "devices_needed", "days_on_n", "latency_ms", "cost_per_million_tokens", "cloud_usd",
                "purchase_usd", "flops_per_w", "ecosystem_score", "headroom", "memory_per_device_gb",
                "tokens_per_device_hour"):
        out[col] = f[col]
    # the projection's ranges and where its efficiencies come from
    out["days_on_n_low"] = f.get("days_on_n_low", np.nan)
    out["days_on_n_high"] = f.get("days_on_n_high", np.nan)
    out["latency_ms_low"] = units.s_to_ms(f["latency_s_low"])
    out["latency_ms_high"] = units.s_to_ms(f["latency_s_high"])
    out["cost_per_million_tokens_low"] = f["cost_per_million_tokens_low"]
    out["cost_per_million_tokens_high"] = f["cost_per_million_tokens_high"]
    out["efficiency_source"] = f["matmul_source"].astype(str) + " | memory: " + f["memory_source"].astype(str)
    for extra in ("mfu", "precision", "n_devices", "tensor_parallel", "pipeline_parallel", "zero_stage", "batch_size",
                  "configuration", "ttft_s", "ttft_s_low", "ttft_s_high"):
        if extra in f:
            out[extra] = f[extra]
    from ..device_facts import purchase_risks

    spans = (f["n_devices"].fillna(1) > 1) if "n_devices" in f else pd.Series(scenario.n_devices > 1, index=f.index)
    risk = purchase_risks(catalog["name"].tolist(), scenario.deployment, spans.tolist(), training)
    out["purchase_risks"] = risk["purchase_risks"].to_numpy()
    out["purchase_risk_sources"] = risk["purchase_risk_sources"].to_numpy()
    unit = sizing.compute_need(scenario).get("work_unit", "tokens")
    out["work_unit"] = unit
    out["reason"] = [_reason(r, w, training, scenario, unit) for r in out.to_dict("records")]
    out = out.sort_values(["status", "score"], ascending=[False, False], na_position="last")
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
    key = (repr(requirements), tuple(map(tuple, catalog[cols].astype(str).to_numpy())))
    if key not in _ECOSYSTEM_CACHE:
        if len(_ECOSYSTEM_CACHE) > 64:
            _ECOSYSTEM_CACHE.clear()
        _ECOSYSTEM_CACHE[key] = eco.device_scores(catalog, requirements)
    return _ECOSYSTEM_CACHE[key].copy()


def _reason(row, weights, training, scenario, unit="tokens"):
    if row["status"] == "excluded":
        return f"excluded: {row['excluded_because']}"
    parts = []
    if training and row["days_on_n"] == row["days_on_n"]:
        parts.append(f"{row['days_on_n']:,.1f} days on {scenario.n_devices} ({row['days_on_n_low']:,.1f}-"
                     f"{row['days_on_n_high']:,.1f})")
    if not training and row["latency_ms"] == row["latency_ms"]:
        one = {"tokens": "token", "frames": "frame", "requests": "request"}.get(unit, unit)
        parts.append(f"{row['latency_ms']:,.2g} ms per {one} ({row['latency_ms_low']:,.2g}-{row['latency_ms_high']:,.2g})")
    if row["cost_per_million_tokens"] == row["cost_per_million_tokens"]:
        parts.append(f"${row['cost_per_million_tokens']:,.3g} per M {unit} ({row['cost_per_million_tokens_low']:,.3g}-"
                     f"{row['cost_per_million_tokens_high']:,.3g})")
    if row["ecosystem_score"] == row["ecosystem_score"]:
        parts.append(f"ecosystem {row['ecosystem_score']:.0f}/100")
    if row.get("configuration"):
        parts.insert(0, f"runs as {row['configuration']}")
    scored = {k: row[f"score_{k}"] for k in CRITERIA if weights[k] > 0 and row[f"score_{k}"] == row[f"score_{k}"]}
    if row.get("unknown_criteria"):
        parts.append(f"{row['unknown_criteria']} unknown: scored on {len(scored)} of {len(scored) + len(row['unknown_criteria'].split(', '))} criteria")
    if row.get("purchase_risks"):
        parts.append(f"risks: {row['purchase_risks']}")
    if not scored:
        return ", ".join(parts)
    best = max(scored, key=scored.get)
    worst = min(scored, key=scored.get)
    if scored[best] == scored[worst]:
        return f"{', '.join(parts)}; level on every criterion"
    return f"{', '.join(parts)}; strongest on {best}, weakest on {worst}"


def shortlist(scenario, catalog=None, n=5, **kwargs):
    """The top ``n`` shortlisted rows of :func:`rank`."""
    ranked = rank(scenario, catalog, **kwargs)
    return ranked[ranked["status"] == "shortlisted"].head(n)
