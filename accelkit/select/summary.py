"""The decision page a buyer signs: one dict per scenario, the one home of its content.

:func:`decision_summary` gathers, from :func:`accelkit.select.rank` and
:func:`accelkit.select.headline`, what a buyer needs on one page: what to buy or rent
(the purchasable unit and how many), the total over the horizon with its range, the
projected time or latency against the target, the two runners-up and why they lost,
the risks (purchase and market facts, ecosystem gaps), the devices that cannot be
verified with the figure that is missing, what was assumed, and the date of the prices
used. The app's decision tab and the report's index render this dict; they compute
nothing of their own, so both name the same device with the same figures.
"""

from __future__ import annotations

import math

from .. import sizing, units

__all__ = ["decision_summary", "plan_words", "range_words"]

#: what each score criterion means when a runner-up loses on it
_LOSES_ON = {
    "time": "slower against the target",
    "cost": "costs more over the horizon",
    "efficiency": "less compute per watt",
    "ecosystem": "a weaker software ecosystem",
    "headroom": "less memory headroom",
}


def _finite(x):
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def range_words(value, low, high, fmt, missing="—", collapse=True):
    """``value (low-high)``, or ``missing`` where the value is unknown or infinite.

    When ``fmt`` would print a real range as one number, the figures are shown to three
    significant digits instead, so a range never reads as certainty; a range that is one
    figure is shown as that figure (``collapse``).
    """
    if not _finite(value):
        return missing
    if not (_finite(low) and _finite(high)):
        return fmt.format(value)
    low, high = min(low, high), max(low, high)
    texts = [fmt.format(v) for v in (value, low, high)]
    if len(set(texts)) == 1 and low < high:
        texts = [f"{v:,.3g}" for v in (value, low, high)]
    if collapse and texts[1] == texts[2]:
        return texts[0]
    return f"{texts[0]} ({texts[1]}-{texts[2]})"


def _horizon(scenario):
    return "the run" if scenario.workload in sizing.TRAINING_WORKLOADS else f"{scenario.horizon_months} months"


def _total_text(row, scenario):
    return range_words(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"], "${:,.0f}",
                       "price unknown")


def plan_words(row, scenario):
    """What to order (or rent) and what it costs over the horizon, in one sentence, from
    :func:`accelkit.select.rank`'s plan columns (``purchase_unit``, ``total_cost_usd`` and
    its range)."""
    total = range_words(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"], "${:,.0f}",
                        "price unknown", collapse=False)
    if scenario.deployment == "cloud":
        what = f"{row['purchase_unit']} ({row.get('cloud_price_basis') or 'no listing'})"
    else:
        what = f"buy {row['purchase_unit']}"
    return f"{what}: {total} over {_horizon(scenario)}."


def _unit_word(row):
    return {"tokens": "token", "frames": "frame", "requests": "request"}.get(row.get("work_unit"), "unit")


def _performance(row, scenario):
    """The projected time (training) or latency (serving) against the target, in words."""
    if scenario.workload in sizing.TRAINING_WORKLOADS:
        target = float(scenario.time_target_days)
        allowed = row.get("n_devices")
        needed = row.get("devices_needed")
        value = row["days_on_n"]
        on_all = range_words(row["days_on_n"], row.get("days_on_n_low"), row.get("days_on_n_high"), "{:,.2f}",
                             "cannot be projected")
        text = f"finishes in {on_all} days on {allowed:.0f} devices" if _finite(allowed) else f"finishes in {on_all} days"
        sized = row.get("days_right_sized")
        if _finite(sized) and _finite(needed) and _finite(allowed) and needed < allowed:
            # the order is right-sized: say how long the devices actually ordered take
            value = sized
            text = f"about {sized:,.2f} days on the {needed:.0f} devices ordered ({on_all} days on {allowed:.0f})"
        text += f", against a target of {target:g} days"
    else:
        unit = _unit_word(row)
        projected = range_words(row["latency_ms"], row.get("latency_ms_low"), row.get("latency_ms_high"), "{:,.3g}",
                                "cannot be projected")
        target = float(scenario.latency_target_ms)
        value = row["latency_ms"]
        text = f"{projected} ms per {unit}, against a target of {target:g} ms"
        ttft = row.get("ttft_s")
        if scenario.ttft_target_ms and _finite(ttft):
            first = range_words(units.s_to_ms(ttft), units.s_to_ms(row.get("ttft_s_low", math.nan)),
                                units.s_to_ms(row.get("ttft_s_high", math.nan)), "{:,.0f}")
            text += f"; first token in {first} ms against {scenario.ttft_target_ms:g} ms"
    meets = bool(_finite(value) and value <= target)
    return {"projected": value, "target": target, "meets": meets, "text": text}


def _why_lost(winner, other, weights):
    """The criterion on which ``other`` gives up the most weighted points to ``winner``."""
    gap = float(winner["score"] - other["score"]) if _finite(winner["score"]) and _finite(other["score"]) else math.nan
    losses = {}
    for k, w in weights.items():
        a, b = winner.get(f"score_{k}"), other.get(f"score_{k}")
        if _finite(a) and _finite(b) and w > 0:
            losses[k] = w * (a - b)
    points = f"{gap:.1f} points behind" if _finite(gap) else "ranked lower"
    if not losses or max(losses.values()) <= 0:
        return gap, f"{points} on the weighted criteria"
    worst = max(losses, key=losses.get)
    detail = ""
    if worst == "cost" and _finite(other["total_cost_usd"]) and _finite(winner["total_cost_usd"]):
        detail = f" (${other['total_cost_usd']:,.0f} against ${winner['total_cost_usd']:,.0f})"
    elif worst == "ecosystem" and _finite(other.get("ecosystem_score")) and _finite(winner.get("ecosystem_score")):
        detail = f" ({other['ecosystem_score']:.0f} against {winner['ecosystem_score']:.0f} out of 100)"
    elif worst == "time" and _finite(other.get("target_margin")) and _finite(winner.get("target_margin")):
        detail = f" ({other['target_margin']:.2f}× the target's pace against {winner['target_margin']:.2f}×)"
    return gap, f"{points}: mostly {_LOSES_ON.get(worst, worst)}{detail}"


def _system_dates():
    from ..systems import load_systems

    table = load_systems()
    return {str(r["system"]): (str(r["price_date"]) or (f"undated, retrieved {r['retrieved']}" if r["retrieved"] else ""))
            for r in table.to_dict("records")}


def _price_date(row, scenario, catalog):
    """When the price behind ``row``'s total held: the dates of the listings or unit used."""
    name = row["name"]
    if scenario.deployment == "cloud":
        from ..catalog import _builtin_prices
        from ..cloud_pricing import POLICIES

        listings = _builtin_prices()
        rows = listings[(listings["accelerator"].str.lower() == name.lower())
                        & listings["pricing"].str.lower().isin(POLICIES[scenario.cloud_pricing])]
        if scenario.providers:
            rows = rows[rows["provider"].isin(scenario.providers)]
        dates = sorted(d for d in rows.get("price_date", []).astype(str) if d and d != "nan")
    else:
        unit = str(row.get("purchase_unit") or "")
        if "at your quoted price" in unit:
            return "your quote"
        for system, date in _system_dates().items():
            if f"× {system} (" in unit:
                return date
        dates, kind = [], ""
        match = catalog[catalog["name"] == name] if catalog is not None else None
        if match is not None and len(match):
            date = str(match.iloc[0].get("price_date") or "")
            kind = str(match.iloc[0].get("price_kind") or "")
            if date and date != "nan":
                dates = [date]
        if not dates:
            from ..prices import _builtin_purchase_prices

            prices = _builtin_purchase_prices()
            rows = prices[prices["device"].str.lower() == name.lower()]
            dates = sorted(d for d in rows.get("price_date", []).astype(str) if d and d != "nan")
    if not dates:
        return "undated" + (f" ({kind} figure)" if scenario.deployment != "cloud" and kind and kind != "nan" else "")
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"


def count_words(x):
    """A count for people: 20 billion, 1.5 million, 12,000."""
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(x) >= size:
            return f"{x / size:,.3g} {word}"
    return f"{x:,.0f}"


def _model_kind(scenario):
    preset = sizing.model_of(scenario)["preset"]
    return str(preset["kind"]) if preset is not None else "decoder"


def _assumptions(scenario, row=None):
    """What was assumed, as (label, value) pairs a buyer reads: only what bears on the figures."""
    s = scenario
    training = s.workload in sizing.TRAINING_WORKLOADS
    out = [("precision", s.precision + (" (lower precisions allowed)" if s.allow_lower_precision else ""))]
    if s.utilization:
        out.append(("utilisation", f"{s.utilization:.0%} of the dense peak (your figure)"))
    else:
        out.append(("utilisation", "projected by the engine from measured matmul and memory bandwidth"))
    kind = _model_kind(s)
    if training:
        work = (f"{count_words(s.tokens)} samples" if kind in ("cnn", "vit")
                else f"{count_words(s.tokens)} tokens, sequences of {s.seq_len:,}")
        out.append(("work", work))
        out.append(("horizon", "the training run (time target "
                               f"{s.time_target_days:g} days)"))
    else:
        if kind in ("cnn", "vit"):
            load = f"{s.streams} camera streams at {s.frames_per_s:g} frames per second"
        elif kind in ("decoder", "moe-decoder"):
            load = (f"{s.requests_per_s:g} requests per second, {s.output_tokens:,} tokens out, "
                    f"{s.seq_len:,}-token context")
        else:
            load = f"{s.requests_per_s:g} requests per second of {s.seq_len:,} tokens"
        out.append(("load", load))
        out.append(("horizon", f"{s.horizon_months} months, {s.hours_per_day:g} hours a day"))
    out.append(("devices allowed", f"at most {s.n_devices}"))
    if s.deployment == "cloud":
        out.append(("cloud price", {"on-demand": "median on-demand rate across providers",
                                    "committed-1y": "median 1-year commitment across providers",
                                    "committed-3y": "median 3-year commitment across providers",
                                    "lowest": "the single cheapest listing"}[s.cloud_pricing]
                    + (f" (providers: {', '.join(s.providers)})" if s.providers else "")))
    else:
        out.append(("power", f"PUE {s.pue:g}, electricity ${s.electricity_usd_per_kwh:g} per kWh"))
    out.append(("speed headroom", f"speed beyond the target counts up to {s.target_headroom:.0%}"))
    if s.budget_usd:
        out.append(("budget", f"${s.budget_usd:,.0f} over the horizon"))
    if s.power_envelope_w:
        out.append(("power envelope", f"{s.power_envelope_w:g} W per device"))
    if s.market != "global":
        out.append(("market", f"{s.market} (US export controls applied)"))
    if s.frameworks:
        out.append(("must run", ", ".join(s.frameworks)))
    return out


def _job_words(scenario):
    s = scenario
    model = sizing.model_of(s)["name"]
    what = {"training": "Training", "fine-tuning": "Fine-tuning", "inference": "Serving"}.get(s.workload, s.workload)
    if s.workload == "fine-tuning" and s.finetune_method != "full":
        what += f" ({s.finetune_method.replace('qlora', 'QLoRA').replace('lora', 'LoRA')})"
    where = {"cloud": "rented in the cloud", "on-prem": "on your own servers", "edge": "at the edge"}[s.deployment]
    return f"{what} {model}, {where}"


def _risks(rows, ecosystem):
    """Purchase and market facts, then ecosystem gaps, per named device."""
    out = []
    for row in rows:
        texts = [t.strip() for t in str(row.get("purchase_risks") or "").split("; ") if t.strip()]
        sources = str(row.get("purchase_risk_sources") or "").split()
        for i, text in enumerate(texts):
            out.append({"device": row["name"], "kind": "purchase", "text": text,
                        "source": sources[i] if i < len(sources) else ""})
        if ecosystem is not None:
            eco = ecosystem[ecosystem["name"] == row["name"]]
            if len(eco) and str(eco.iloc[0]["ecosystem_reason"] or ""):
                e = eco.iloc[0]
                label = "fails" if e["ecosystem_fails"] else "risk"
                out.append({"device": row["name"], "kind": f"ecosystem {label}", "text": str(e["ecosystem_reason"]),
                            "source": ""})
    return out


def decision_summary(scenario, ranked=None, stability=None, catalog=None, weights=None, quoted_prices=None):
    """The decision page's content for one scenario, as a plain dict.

    Parameters
    ----------
    scenario : Scenario
    ranked : DataFrame, optional
        :func:`accelkit.select.rank` for ``scenario`` (computed when omitted).
    stability : DataFrame, optional
        :func:`accelkit.select.rank_stability` (computed when omitted and more than one
        device is shortlisted), so the page names the device :func:`accelkit.select.headline`
        names.
    catalog : DataFrame, optional
        The catalogue ranked (with any quoted prices); default the built-in one.
    weights : dict, optional
        Criterion weights used for the ranking.
    quoted_prices : dict, optional
        {device: USD} the person typed in, named on the page.

    Returns
    -------
    dict
        ``title``, ``job``, ``verdict`` and ``headline`` (:func:`headline`), ``device``
        (None when nothing passes), ``action`` ("buy" or "rent"), ``order`` (the unit
        and count in words), ``units`` [count], ``devices`` [count], ``configuration``,
        ``total`` (``usd``, ``low``, ``high``, ``horizon``, ``text``), ``performance``
        (``projected``, ``target``, ``meets``, ``text``), ``runners_up`` (list of
        ``name, order, total_text, score, gap, why``), ``risks`` (``device, kind, text,
        source``), ``cannot_verify`` (``device, missing, settle``), ``assumptions``
        ((label, value) pairs), ``prices_dated`` (text), ``price_dates`` ({device:
        text}), ``counts`` and ``next_step`` (when nothing passes: the most common
        reason).
    """
    from ..catalog import load_catalog
    from .headline import headline
    from .ranking import _ecosystem_scores, rank
    from .robustness import rank_stability
    from .scoring import _weights

    s = scenario
    if catalog is None:
        catalog = load_catalog()
    merged = _weights(s, weights)
    if ranked is None:
        ranked = rank(s, catalog, weights)
    short = ranked[ranked["status"] == "shortlisted"]
    unverified = ranked[ranked["status"] == "cannot verify"]
    excluded = ranked[ranked["status"] == "excluded"]
    if stability is None and len(short) > 1:
        stability = rank_stability(s, catalog, weights, ranked=ranked)
    verdict = headline(ranked, stability)
    out = {
        "title": s.name, "job": _job_words(s), "verdict": verdict["verdict"], "headline": verdict["text"],
        "contenders": list(verdict["devices"]), "device": None, "action": "rent" if s.deployment == "cloud" else "buy",
        "order": "", "units": math.nan, "devices": math.nan, "configuration": "", "reason": "",
        "total": {"usd": math.nan, "low": math.nan, "high": math.nan, "horizon": _horizon(s), "text": ""},
        "performance": None, "runners_up": [], "risks": [],
        "cannot_verify": [{"device": r["name"], "missing": str(r["unknown_figure"]), "settle": str(r["would_settle"])}
                          for r in unverified.to_dict("records")],
        "assumptions": _assumptions(s), "price_dates": {}, "prices_dated": "",
        "quoted_prices": dict(quoted_prices or {}),
        "counts": {"shortlisted": len(short), "cannot verify": len(unverified), "excluded": len(excluded)},
        "next_step": "",
    }
    if short.empty:
        if len(excluded):
            counts = excluded["excluded_because"].str.split(":").str[0].str.replace(r"\b\d[\d,.]*", "N", regex=True)
            out["next_step"] = (f"The most common reason a device fails: {counts.value_counts().index[0]}. "
                                "Relax that limit.")
        return out
    name = verdict["devices"][0]
    rows = short.to_dict("records")
    top = next(r for r in rows if r["name"] == name)
    others = [r for r in rows if r["name"] != name][:2]
    cloud = s.deployment == "cloud"
    order = str(top["purchase_unit"]).removeprefix("rent ")
    if cloud and top.get("cloud_price_basis"):
        order += f", at the {top['cloud_price_basis']}"
    out.update(
        device=name, order=order, configuration=str(top.get("configuration") or ""), reason=str(top["reason"]),
        units=float(top["devices_rented"] if cloud else top["units_to_buy"]), devices=float(top["devices_needed"]),
        total={"usd": float(top["total_cost_usd"]), "low": float(top["total_cost_usd_low"]),
               "high": float(top["total_cost_usd_high"]), "horizon": _horizon(s),
               "text": f"{_total_text(top, s)} over {_horizon(s)}"},
        performance=_performance(top, s),
    )
    for other in others:
        gap, why = _why_lost(top, other, merged)
        out["runners_up"].append({
            "name": other["name"], "order": str(other["purchase_unit"]).removeprefix("rent "),
            "total_text": f"{_total_text(other, s)} over {_horizon(s)}", "score": float(other["score"]),
            "gap": gap, "why": why,
        })
    eco = None
    try:
        eco = _ecosystem_scores(s, catalog)
    except Exception:  # the page must not fail on the ecosystem table; the risks from the ranking stand
        eco = None
    out["risks"] = _risks([top, *others], eco)
    dates = {r["name"]: _price_date(r, s, catalog) for r in [top, *others]}
    out["price_dates"] = dates
    known = sorted({d for d in dates.values() if d})
    if known:
        out["prices_dated"] = "; ".join(f"{n}: {d}" for n, d in dates.items() if d)
    return out
