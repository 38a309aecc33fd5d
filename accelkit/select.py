"""From requirements to a ranked shortlist with reasons.

:func:`rank` applies hard constraints first -- precision supported, model fits on
the allowed devices, ecosystem must-haves, power envelope, budget, segment and
deployment, time or latency target -- and records for each excluded device the
constraint it failed. The remaining devices get a weighted score over five
criteria (time to result, cost per unit of work, compute per watt, ecosystem
fit, memory headroom) and a one-line reason. Everything is vectorised over the
catalogue.

:func:`sensitivity` asks which assumption would change the winner, and at what
value.

Scoring: each criterion is scaled to [0, 1] across the shortlist (logarithmically
for time and cost, which span orders of magnitude; best = 1); the score is the
weighted mean × 100. A missing figure scores 0 on that criterion and the reason
says so. References: multi-criteria decision analysis with weighted sums
(Triantaphyllou, *Multi-Criteria Decision Making Methods*, Springer 2000, ch. 2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import memory, sizing, units
from .catalog import load_catalog, memory_bytes, peak_flops

__all__ = ["CRITERIA", "DEFAULT_WEIGHTS", "nearest_feasible", "rank", "rank_grid", "rank_stability", "sensitivity",
           "shortlist", "weighted_score"]

#: criterion -> (what it measures, better when)
CRITERIA = {
    "time": ("time to result: training days on the cluster, or decode throughput per device", "faster"),
    "cost": ("USD per million tokens: cloud rent, or purchase + energy over the horizon when owned", "cheaper"),
    "efficiency": ("peak at the scenario's precision per watt of TDP", "higher"),
    "ecosystem": ("software-stack fit for the scenario's frameworks and skills (0-100)", "higher"),
    "headroom": ("usable memory over what the model needs on the allowed devices", "more"),
}
DEFAULT_WEIGHTS = {"time": 1.0, "cost": 1.0, "efficiency": 0.5, "ecosystem": 1.0, "headroom": 0.5}


def _scale(values, log=False, higher_is_better=True, mask=None):
    """Min-max scale to [0, 1] along the last axis, best = 1; masked out -> 0; a
    single candidate -> 1; NaN (unknown) stays NaN. ``mask`` marks the candidates
    that take part."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return v
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.log10(np.where(v > 0, v, np.nan))
    ok = np.isfinite(v) if mask is None else (np.isfinite(v) & np.asarray(mask, dtype=bool))
    vv = np.where(ok, v, np.nan)
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", RuntimeWarning)
        lo = np.nanmin(vv, axis=-1, keepdims=True)
        hi = np.nanmax(vv, axis=-1, keepdims=True)
        span = hi - lo
        scaled = np.where(span > 0, (vv - lo) / np.where(span > 0, span, 1.0), 1.0)
    if not higher_is_better:
        scaled = np.where(span > 0, 1.0 - scaled, 1.0)
    unknown = ~np.isfinite(v)
    return np.where(ok, scaled, np.where(unknown, np.nan, 0.0))


_UNKNOWN_WORDS = {"time": "speed", "cost": "price", "efficiency": "power", "ecosystem": "ecosystem fit",
                  "headroom": "memory"}


def weighted_score(criteria, weights):
    """Weighted mean × 100 of the criteria that are known.

    ``criteria`` maps each criterion to an array of 0-1 scores (NaN = unknown); an
    unknown criterion drops out and the other weights are renormalised, so a device
    without a price is scored on the rest instead of getting the worst cost
    (a missing value is not evidence of a bad one; the reason says so).

    Returns ``(score, n_known)``: NaN where nothing is known.
    """
    num = den = 0.0
    n_known = 0
    for k, v in criteria.items():
        wk = weights.get(k, 0.0)
        if wk <= 0:
            continue
        known = np.isfinite(v)
        num = num + np.where(known, v, 0.0) * wk
        den = den + np.where(known, wk, 0.0)
        n_known = n_known + known.astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(np.asarray(den) > 0, num / np.where(np.asarray(den) > 0, den, 1.0) * 100.0, np.nan)
    return score, n_known


def _weights(scenario, weights):
    merged = dict(DEFAULT_WEIGHTS)
    # keys like "ecosystem.frameworks" weight the checklist's groups, not these criteria
    merged.update({k: float(v) for k, v in (scenario.weights or {}).items() if not k.startswith("ecosystem.")})
    merged.update({k: float(v) for k, v in (weights or {}).items()})
    unknown = sorted(set(merged) - set(CRITERIA))
    if unknown:
        raise ValueError(f"weights: unknown criterion {unknown[0]!r}; criteria are {', '.join(CRITERIA)}")
    bad = [k for k, v in merged.items() if not (v >= 0 and np.isfinite(v))]
    if bad:
        raise ValueError(f"weights: {bad[0]} must be a weight >= 0; got {merged[bad[0]]}")
    if sum(merged.values()) <= 0:
        raise ValueError("weights: at least one criterion needs a weight above 0")
    return merged


def _figures(scenario, catalog, price_factor=1.0, price_device=None, measurements=None, speed_factor=1.0,
             speed_device=None):
    """Per-device figures the constraints and criteria use: the engine's projection
    (:func:`accelkit.sizing.per_device`) turned into time, latency and cost criteria."""
    from .configsearch import best_configurations

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
        latency_ms = table["latency_s"] * 1e3
        time_value = 1.0 / work[""]  # device-hours per unit of work: lower is better
    factor = price_factor if price_device is None else np.where(catalog["name"] == price_device, price_factor, 1.0)
    cost = {}
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        # the cost range: the low price at the fast end of the projection, the high price at the slow end
        price = _column(catalog, f"price{level}_usd" if level else "price_usd", "price_usd") * factor
        hourly = _column(catalog, f"cloud_usd_per_hour{level}", "cloud_usd_per_hour") * factor
        if scenario.deployment == "cloud":
            cost[level] = hourly / work[src] * 1e6
        else:
            hours = scenario.hours_per_day * days_horizon
            energy_usd = catalog["tdp_w"] / 1000.0 * scenario.pue * scenario.electricity_usd_per_kwh * hours
            cost[level] = (price + energy_usd) / (work[src] * hours) * 1e6
    price = catalog["price_usd"] * factor
    usable = memory.usable_bytes(memory_bytes(catalog).fillna(1.0)).where(catalog["memory_gb"].notna())
    need = sizing.memory_need(scenario)["total"]
    return table.assign(
        time_value=time_value, latency_ms=latency_ms, tokens_per_device_hour=work[""],
        cost_per_million_tokens=cost[""], cost_per_million_tokens_low=cost["_low"],
        cost_per_million_tokens_high=cost["_high"], flops_per_w=peak / catalog["tdp_w"], headroom=usable / need - 1.0,
        purchase_usd=table["devices_needed"] * price,
    )


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
    out["latency_ms_low"] = f["latency_s_low"] * 1e3
    out["latency_ms_high"] = f["latency_s_high"] * 1e3
    out["cost_per_million_tokens_low"] = f["cost_per_million_tokens_low"]
    out["cost_per_million_tokens_high"] = f["cost_per_million_tokens_high"]
    out["efficiency_source"] = f["matmul_source"].astype(str) + " | memory: " + f["memory_source"].astype(str)
    for extra in ("mfu", "precision", "n_devices", "tensor_parallel", "pipeline_parallel", "zero_stage", "batch_size",
                  "configuration", "ttft_s", "ttft_s_low", "ttft_s_high"):
        if extra in f:
            out[extra] = f[extra]
    from .device_facts import purchase_risks

    spans = (f["n_devices"].fillna(1) > 1) if "n_devices" in f else pd.Series(scenario.n_devices > 1, index=f.index)
    risk = purchase_risks(catalog["name"].tolist(), scenario.deployment, spans.tolist(), training)
    out["purchase_risks"] = risk["purchase_risks"].to_numpy()
    out["purchase_risk_sources"] = risk["purchase_risk_sources"].to_numpy()
    unit = sizing.compute_need(scenario).get("work_unit", "tokens")
    out["work_unit"] = unit
    out["reason"] = [_reason(r, w, training, scenario, unit) for _, r in out.iterrows()]
    out = out.sort_values(["status", "score"], ascending=[False, False], na_position="last")
    out.insert(0, "rank", np.nan)
    n_short = int(short.sum())
    out.iloc[:n_short, 0] = np.arange(1, n_short + 1)
    return out.reset_index(drop=True)


_ECOSYSTEM_CACHE = {}


def _ecosystem_scores(scenario, catalog):
    """The ecosystem checklist per device; cached, since a control change that does not
    touch the requirements (most of them) gives the same scores."""
    from . import ecosystem as eco

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


def _candidate_changes(scenario):
    """(field, new value, words, size) of the changes :func:`nearest_feasible` tries,
    smallest first within each field; ``size`` is |log2| of the factor for numbers,
    1 for a choice, 2 for dropping a limit."""
    from .scenario import DEPLOYMENTS, PRECISIONS

    s = scenario
    training = s.workload in sizing.TRAINING_WORKLOADS
    out = []
    if not s.allow_lower_precision:
        out.append(("allow_lower_precision", True, "allow lower precisions (fp8, int8, int4 weights)", 1.0))
    for p in PRECISIONS:
        if p != s.precision and not (training and p in ("int8", "int4")):
            out.append(("precision", p, f"precision {p} instead of {s.precision}", 1.0))
    for f in (2, 4, 8, 16):
        out.append(("n_devices", int(s.n_devices * f), f"allow {int(s.n_devices * f)} devices instead of {s.n_devices}",
                    np.log2(f)))
    if training:
        for f in (1.5, 2, 4):
            out.append(("time_target_days", s.time_target_days * f,
                        f"finish within {s.time_target_days * f:g} days instead of {s.time_target_days:g}", np.log2(f)))
    else:
        for f in (1.5, 2, 4):
            out.append(("latency_target_ms", s.latency_target_ms * f,
                        f"{s.latency_target_ms * f:g} ms per token instead of {s.latency_target_ms:g}", np.log2(f)))
        if s.ttft_target_ms:
            for f in (2, 4):
                out.append(("ttft_target_ms", s.ttft_target_ms * f,
                            f"{s.ttft_target_ms * f:g} ms to the first token instead of {s.ttft_target_ms:g}",
                            np.log2(f)))
    if s.power_envelope_w:
        for f in (1.5, 2, 4):
            out.append(("power_envelope_w", s.power_envelope_w * f,
                        f"power envelope {s.power_envelope_w * f:g} W instead of {s.power_envelope_w:g}", np.log2(f)))
        out.append(("power_envelope_w", None, "no power envelope", 2.0))
    if s.budget_usd:
        for f in (1.5, 2, 4):
            out.append(("budget_usd", s.budget_usd * f, f"budget ${s.budget_usd * f:,.0f} instead of "
                        f"${s.budget_usd:,.0f}", np.log2(f)))
        out.append(("budget_usd", None, "no budget limit", 2.0))
    for d in DEPLOYMENTS:
        if d != s.deployment:
            out.append(("deployment", d, f"deploy {d} instead of {s.deployment}", 1.0))
    if s.segments:
        out.append(("segments", [], "allow every segment", 1.0))
    if s.exclude_unknown:
        out.append(("exclude_unknown", False, "score devices with an unknown price on the known criteria", 1.0))
    return out


def nearest_feasible(scenario, catalog=None, weights=None, max_changes=8):
    """The smallest single changes to a scenario that admit devices it now excludes.

    For each field a person controls (precision, devices allowed, time or latency
    targets, power envelope, budget, deployment, segments) the changes are tried from
    the smallest up; the first value of each field that shortlists a device the
    scenario does not is kept.

    Returns
    -------
    pandas.DataFrame
        One row per change, smallest first: ``field``, ``value`` (to set on the
        scenario), ``change`` (in words), ``size``, ``n_shortlisted`` (after the
        change), ``admits`` (the newly shortlisted devices, best first, as a list) and
        ``best`` (the new winner). Empty when no single change admits a device.
    """
    catalog = load_catalog() if catalog is None else catalog
    base = rank(scenario, catalog, weights)
    before = set(base.loc[base["status"] == "shortlisted", "name"])
    rows, done = [], set()
    for field, value, words, size in _candidate_changes(scenario):
        if field in done:
            continue
        trial = scenario.copy()
        try:
            setattr(trial, field, value)
        except ValueError:
            continue
        ranked = rank(trial, catalog, weights)
        short = ranked[ranked["status"] == "shortlisted"]
        new = [n for n in short["name"] if n not in before]
        if not new:
            continue
        done.add(field)
        rows.append({"field": field, "value": value, "change": words, "size": float(size),
                     "n_shortlisted": len(short), "admits": new, "best": short["name"].iloc[0]})
        if len(rows) >= max_changes:
            break
    out = pd.DataFrame(rows, columns=["field", "value", "change", "size", "n_shortlisted", "admits", "best"])
    return out.sort_values(["size", "n_shortlisted"], ascending=[True, False], kind="stable").reset_index(drop=True)


#: assumption -> values scanned by :func:`sensitivity`
SENSITIVITY_RANGES = {
    "winner_efficiency": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5],
    "utilization": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    "winner_price": [0.5, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0],
    "hours_per_day": [2.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0],
    "horizon_months": [6, 12, 24, 36, 48, 60],
    "electricity_usd_per_kwh": [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6],
}


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
            "new_winner": (switching[0][2] or "no device passes") if switching else "",
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
    training = scenario.workload in sizing.TRAINING_WORKLOADS

    def draw(mid, low, high):
        lo = np.log(np.where(np.isfinite(low) & (low > 0), low, mid))
        hi = np.log(np.where(np.isfinite(high) & (high > 0), high, mid))
        u = rng.random((draws, len(mid)))
        return np.exp(lo + u * (hi - lo))

    if training:
        time_mid, time_lo, time_hi = (short[c].to_numpy(dtype=float) for c in ("days_on_n", "days_on_n_low",
                                                                                "days_on_n_high"))
    else:
        rate = short["tokens_per_device_hour"].to_numpy(dtype=float)
        lat = short["latency_ms"].to_numpy(dtype=float)
        lat_lo, lat_hi = short["latency_ms_low"].to_numpy(dtype=float), short["latency_ms_high"].to_numpy(dtype=float)
        # the rate's spread follows the latency's (same efficiencies)
        time_mid, time_lo, time_hi = 1.0 / rate, (1.0 / rate) * lat_lo / lat, (1.0 / rate) * lat_hi / lat
    times = draw(time_mid, time_lo, time_hi)
    costs = draw(*(short[c].to_numpy(dtype=float) for c in ("cost_per_million_tokens", "cost_per_million_tokens_low",
                                                              "cost_per_million_tokens_high")))
    fixed = {k: np.broadcast_to(short[f"score_{k}"].to_numpy(dtype=float), times.shape)
             for k in ("efficiency", "ecosystem", "headroom")}
    crit = {"time": _scale(times, log=True, higher_is_better=False),
            "cost": _scale(costs, log=True, higher_is_better=False), **fixed}
    score, _ = weighted_score(crit, w)
    order = np.argsort(-np.nan_to_num(score, nan=-1.0), axis=1)
    ranks = np.empty_like(order)
    ranks[np.arange(draws)[:, None], order] = np.arange(1, len(short) + 1)[None, :]
    out = pd.DataFrame({"name": short["name"], "first_share": (ranks == 1).mean(axis=0),
                        "median_rank": np.median(ranks, axis=0)})
    return out.sort_values(["first_share", "median_rank"], ascending=[False, True]).head(top).reset_index(drop=True)


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
    from ._validate import check_positive

    if scenario.workload not in sizing.TRAINING_WORKLOADS:
        raise ValueError("rank_grid: workload must be training or fine-tuning (the grid spans model size × tokens)")
    catalog = load_catalog() if catalog is None else catalog
    w = _weights(scenario, weights)
    n_arr = np.asarray(params, dtype=float)[:, None, None]
    d_arr = np.asarray(tokens, dtype=float)[None, :, None]
    check_positive("params", n_arr, "a number of parameters")
    check_positive("tokens", d_arr, "a number of tokens")
    from .projection.training import TRAIN_PRECISIONS, tokens_per_second_grid

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
    tokens_per_hour = per_device * units.SECONDS_PER_HOUR
    if scenario.deployment == "cloud":
        cost = catalog["cloud_usd_per_hour"].to_numpy()[None, None, :] / tokens_per_hour * 1e6
    else:
        hours = scenario.hours_per_day * scenario.horizon_months * units.DAYS_PER_YEAR / 12
        energy = catalog["tdp_w"].to_numpy() / 1000.0 * scenario.pue * scenario.electricity_usd_per_kwh * hours
        cost = (catalog["price_usd"].to_numpy() + energy)[None, None, :] / (tokens_per_hour * hours) * 1e6
    scores = _ecosystem_scores(scenario, catalog)
    ok_device = np.isfinite(peak[0, 0]) & np.isfinite(usable) & (scores["ecosystem_fails"].to_numpy() == 0)
    if scenario.segments:
        ok_device &= catalog["segment"].isin(scenario.segments).to_numpy()
    if scenario.deployment == "edge" and not scenario.segments:
        ok_device &= (catalog["segment"] == "edge").to_numpy()
    if scenario.deployment == "cloud":
        ok_device &= catalog["cloud_usd_per_hour"].notna().to_numpy()
    if scenario.power_envelope_w:
        ok_device &= catalog["tdp_w"].to_numpy() <= scenario.power_envelope_w
    ok = ok_device[None, None, :] & (state <= usable[None, None, :]) & (days <= scenario.time_target_days)
    crit = {
        "time": _scale(days, log=True, higher_is_better=False, mask=ok),
        "cost": _scale(cost, log=True, higher_is_better=False, mask=ok),
        "efficiency": _scale(np.broadcast_to(peak / catalog["tdp_w"].to_numpy(), ok.shape), log=True, mask=ok),
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
