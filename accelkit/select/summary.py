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
from ..i18n import N_, _
from .words import _finite, count_words, date_words, money_range, range_words, usd_words  # noqa: F401

__all__ = ["decision_summary", "plan_words", "range_words", "money_range", "usd_words", "date_words"]

#: what each score criterion means when a runner-up loses on it
_LOSES_ON = {
    "time": N_("slower against the target"),
    "cost": N_("costs more over the horizon"),
    "efficiency": N_("less work per joule"),
    "ecosystem": N_("a weaker software ecosystem"),
    "headroom": N_("less memory headroom"),
}

#: what a device is counted in, per work unit (``select.rank``'s ``work_unit``)
_UNIT_WORDS = {"tokens": N_("token"), "frames": N_("frame"), "requests": N_("request"), "pairs": N_("user-item pair")}

#: the kind of a catalogue price (``price_kind``), in the phrase "undated (... figure)"
_PRICE_KINDS = {"analyst": N_("analyst"), "reseller": N_("reseller"), "street": N_("street"), "list": N_("list"),
                "system_share": N_("system share")}

#: the risk kinds of :func:`_risks` (keys of the dict; shown translated)
RISK_KINDS = (N_("purchase"), N_("ecosystem fails"), N_("ecosystem risk"))

#: the labels of :func:`_assumptions` (English in the dict, translated where shown)
ASSUMPTION_LABELS = (N_("precision"), N_("utilisation"), N_("work"), N_("horizon"), N_("load"),
                     N_("devices allowed"), N_("cloud price"), N_("power"), N_("speed headroom"), N_("budget"),
                     N_("power envelope"), N_("market"), N_("must run"))

_CLOUD_POLICIES = {"on-demand": N_("median on-demand rate across providers"),
                   "committed-1y": N_("median 1-year commitment across providers"),
                   "committed-3y": N_("median 3-year commitment across providers"),
                   "lowest": N_("the single cheapest listing")}
_MARKETS = {"global": N_("global"), "china": N_("china")}
#: the scenario's choices in words (the values stay English; these are their labels)
WORKLOAD_NAMES = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference")}
DEPLOYMENT_NAMES = {"cloud": N_("cloud"), "on-prem": N_("on-prem"), "edge": N_("edge")}
#: the decision's score criteria (``select.CRITERIA``) by name
CRITERION_NAMES = {"time": N_("time"), "cost": N_("cost"), "efficiency": N_("efficiency"),
                   "ecosystem": N_("ecosystem"), "headroom": N_("headroom")}
_JOBS = {"training": N_("Training"), "fine-tuning": N_("Fine-tuning"), "inference": N_("Serving")}
_WHERE = {"cloud": N_("rented in the cloud"), "on-prem": N_("on your own servers"), "edge": N_("at the edge")}


def _horizon(scenario):
    if scenario.workload in sizing.TRAINING_WORKLOADS:
        return _("the run")
    return _("{months} months").format(months=scenario.horizon_months)


def _total_text(row, scenario):
    return money_range(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"],
                       _("price unknown"))


def _over(total, scenario):
    """``total`` over the scenario's horizon ("$1,234 over 36 months")."""
    return _("{total} over {horizon}").format(total=total, horizon=_horizon(scenario))


def _unrented(unit):
    """``select.rank``'s ``purchase_unit`` without its leading verb ("rent 2 × B200" -> "2 × B200"),
    in the language in use (:func:`accelkit.select.reasons.order_words`)."""
    from .reasons import order_words

    return order_words(unit)


def plan_words(row, scenario):
    """What to order (or rent) and what it costs over the horizon, in one sentence, from
    :func:`accelkit.select.rank`'s plan columns (``purchase_unit``, ``total_cost_usd`` and
    its range)."""
    total = money_range(row["total_cost_usd"], row["total_cost_usd_low"], row["total_cost_usd_high"],
                        _("price unknown"), collapse=False)
    if scenario.deployment == "cloud":
        what = _("{unit} ({basis})").format(unit=row["purchase_unit"],
                                            basis=row.get("cloud_price_basis") or _("no listing"))
    else:
        what = _("buy {unit}").format(unit=row["purchase_unit"])
    return _("{what}: {total} over {horizon}.").format(what=what, total=total, horizon=_horizon(scenario))


def _unit_word(row):
    return _(_UNIT_WORDS.get(row.get("work_unit"), N_("unit")))


def _performance(row, scenario):
    """The projected time (training) or latency (serving) against the target, in words."""
    if scenario.workload in sizing.TRAINING_WORKLOADS:
        target = float(scenario.time_target_days)
        allowed = row.get("n_devices")
        needed = row.get("devices_needed")
        value = row["days_on_n"]
        on_all = range_words(row["days_on_n"], row.get("days_on_n_low"), row.get("days_on_n_high"), "{:,.2f}",
                             _("cannot be projected"))
        text = (_("finishes in {days} days on {n} devices").format(days=on_all, n=f"{allowed:.0f}")
                if _finite(allowed) else _("finishes in {days} days").format(days=on_all))
        sized = row.get("days_right_sized")
        if _finite(sized) and _finite(needed) and _finite(allowed) and needed < allowed:
            # the order is right-sized: say how long the devices actually ordered take
            value = sized
            text = _("about {days} days on the {needed} devices ordered ({days_all} days on {allowed})").format(
                days=f"{sized:,.2f}", needed=f"{needed:.0f}", days_all=on_all, allowed=f"{allowed:.0f}")
        text = _("{time}, against a target of {target} days").format(time=text, target=f"{target:g}")
        kind = "time"
    else:
        unit = _unit_word(row)
        projected = range_words(row["latency_ms"], row.get("latency_ms_low"), row.get("latency_ms_high"), "{:,.3g}",
                                _("cannot be projected"))
        target = float(scenario.latency_target_ms)
        value = row["latency_ms"]
        text = _("{projected} ms per {unit}, against a target of {target} ms").format(
            projected=projected, unit=unit, target=f"{target:g}")
        ttft = row.get("ttft_s")
        if scenario.ttft_target_ms and _finite(ttft):
            first = range_words(units.s_to_ms(ttft), units.s_to_ms(row.get("ttft_s_low", math.nan)),
                                units.s_to_ms(row.get("ttft_s_high", math.nan)), "{:,.0f}")
            text = _("{latency}; first token in {first} ms against {target} ms").format(
                latency=text, first=first, target=f"{scenario.ttft_target_ms:g}")
        kind = "latency"
    meets = bool(_finite(value) and value <= target)
    return {"projected": value, "target": target, "meets": meets, "text": text, "kind": kind}


def _why_lost(winner, other, weights):
    """The criterion on which ``other`` gives up the most weighted points to ``winner``."""
    gap = float(winner["score"] - other["score"]) if _finite(winner["score"]) and _finite(other["score"]) else math.nan
    losses = {}
    for k, w in weights.items():
        a, b = winner.get(f"score_{k}"), other.get(f"score_{k}")
        if _finite(a) and _finite(b) and w > 0:
            losses[k] = w * (a - b)
    points = _("{gap} points behind").format(gap=f"{gap:.1f}") if _finite(gap) else _("ranked lower")
    if not losses or max(losses.values()) <= 0:
        return gap, _("{points} on the weighted criteria").format(points=points)
    worst = max(losses, key=losses.get)
    criterion = _(_LOSES_ON[worst]) if worst in _LOSES_ON else worst
    detail = ""
    if worst == "cost" and _finite(other["total_cost_usd"]) and _finite(winner["total_cost_usd"]):
        detail = _("{other} against {winner}").format(other=usd_words(other["total_cost_usd"]),
                                                      winner=usd_words(winner["total_cost_usd"]))
    elif worst == "ecosystem" and _finite(other.get("ecosystem_score")) and _finite(winner.get("ecosystem_score")):
        detail = _("{other} against {winner} out of 100").format(other=f"{other['ecosystem_score']:.0f}",
                                                                 winner=f"{winner['ecosystem_score']:.0f}")
    elif worst == "time" and _finite(other.get("target_margin")) and _finite(winner.get("target_margin")):
        detail = _("{other}× the target's pace against {winner}×").format(other=f"{other['target_margin']:.2f}",
                                                                         winner=f"{winner['target_margin']:.2f}")
    if detail:
        return gap, _("{points}: mostly {criterion} ({detail})").format(points=points, criterion=criterion,
                                                                       detail=detail)
    return gap, _("{points}: mostly {criterion}").format(points=points, criterion=criterion)


def _system_dates():
    from ..systems import load_systems

    table = load_systems()
    return {str(r["system"]): (date_words(r["price_date"]) if str(r["price_date"]) else
                               (_("undated, retrieved {date}").format(date=date_words(r["retrieved"]))
                                if r["retrieved"] else ""))
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
        if "at your quoted price" in unit or _("at your quoted price") in unit:
            return _("your quote")
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
        if scenario.deployment != "cloud" and kind and kind != "nan":
            return _("undated ({kind} figure)").format(kind=_(_PRICE_KINDS[kind]) if kind in _PRICE_KINDS else kind)
        return _("undated")
    if dates[0] == dates[-1]:
        return date_words(dates[0])
    return _("{first} to {last}").format(first=date_words(dates[0]), last=date_words(dates[-1]))


def _model_kind(scenario):
    preset = sizing.model_of(scenario)["preset"]
    return str(preset["kind"]) if preset is not None else "decoder"


def _assumptions(scenario, row=None):
    """What was assumed, as (label, value) pairs a buyer reads: only what bears on the figures.

    The labels stay English (keys of :data:`ASSUMPTION_LABELS`, translated where the page shows
    them); the values are written in the language in use."""
    s = scenario
    training = s.workload in sizing.TRAINING_WORKLOADS
    precision = (_("{precision} (lower precisions allowed)").format(precision=s.precision)
                 if s.allow_lower_precision else s.precision)
    out = [("precision", precision)]
    if s.utilization:
        out.append(("utilisation", _("{share} of the dense peak (your figure)").format(share=f"{s.utilization:.0%}")))
    else:
        out.append(("utilisation", _("projected by the engine from measured matmul and memory bandwidth")))
    kind = _model_kind(s)
    if training:
        work = (_("{n} samples").format(n=count_words(s.tokens)) if kind in ("cnn", "vit", "recommender")
                else _("{n} tokens, sequences of {seq_len}").format(n=count_words(s.tokens), seq_len=f"{s.seq_len:,}"))
        out.append(("work", work))
        out.append(("horizon", _("the training run (time target {days} days)").format(days=f"{s.time_target_days:g}")))
    else:
        if kind in ("cnn", "vit"):
            load = _("{streams} camera streams at {fps} frames per second").format(streams=s.streams,
                                                                                   fps=f"{s.frames_per_s:g}")
        elif kind == "recommender":
            load = _("{rate} user-item pairs scored per second").format(rate=f"{s.requests_per_s:g}")
        elif kind in ("decoder", "moe-decoder"):
            load = _("{rate} requests per second, {output} tokens out, {context}-token context").format(
                rate=f"{s.requests_per_s:g}", output=f"{s.output_tokens:,}", context=f"{s.seq_len:,}")
        else:
            load = _("{rate} requests per second of {n} tokens").format(rate=f"{s.requests_per_s:g}",
                                                                        n=f"{s.seq_len:,}")
        out.append(("load", load))
        out.append(("horizon", _("{months} months, {hours} hours a day").format(months=s.horizon_months,
                                                                                 hours=f"{s.hours_per_day:g}")))
    out.append(("devices allowed", _("at most {n}").format(n=s.n_devices)))
    if s.deployment == "cloud":
        policy = _(_CLOUD_POLICIES[s.cloud_pricing])
        if s.providers:
            policy = _("{policy} (providers: {providers})").format(policy=policy, providers=", ".join(s.providers))
        out.append(("cloud price", policy))
    else:
        out.append(("power", _("PUE {pue}, electricity {price} per kWh").format(
            pue=f"{s.pue:g}", price=f"${s.electricity_usd_per_kwh:g}")))
    out.append(("speed headroom", _("speed beyond the target counts up to {share}").format(
        share=f"{s.target_headroom:.0%}")))
    if s.budget_usd:
        out.append(("budget", _("{amount} over the horizon").format(amount=usd_words(s.budget_usd))))
    if s.power_envelope_w:
        out.append(("power envelope", _("{watts} W per device").format(watts=f"{s.power_envelope_w:g}")))
    if s.market != "global":
        market = _(_MARKETS[s.market]) if s.market in _MARKETS else s.market
        out.append(("market", _("{market} (US export controls applied)").format(market=market)))
    if s.frameworks:
        out.append(("must run", ", ".join(s.frameworks)))
    return out


def _job_words(scenario):
    s = scenario
    model = sizing.model_of(s)["name"]
    what = _(_JOBS[s.workload]) if s.workload in _JOBS else s.workload
    if s.workload == "fine-tuning" and s.finetune_method != "full":
        method = s.finetune_method.replace('qlora', 'QLoRA').replace('lora', 'LoRA')
        what = _("{job} ({method})").format(job=what, method=method)
    return _("{job} {model}, {where}").format(job=what, model=model, where=_(_WHERE[s.deployment]))


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
        (``projected``, ``target``, ``meets``, ``text``), ``checked`` (how the engine did on published
        measurements of this workload on the device or its vendor's parts), ``runners_up`` (list of
        ``name, order, total_text, score, gap, why``), ``risks`` (``device, kind, text,
        source``), ``cannot_verify`` (``device, missing, settle``), ``assumptions``
        ((label, value) pairs), ``prices_dated`` (text), ``price_dates`` ({device:
        text}), ``counts`` and ``next_step`` (when nothing passes: the most common
        reason).
    """
    from ..catalog import load_catalog
    from ..names import display_name
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
        "next_step": "", "checked": "",
    }
    if short.empty:
        if len(excluded):
            counts = excluded["excluded_because"].str.split(":").str[0].str.replace(r"\b\d[\d,.]*", "N", regex=True)
            out["next_step"] = _("The most common reason a device fails: {reason}. Relax that limit.").format(
                reason=counts.value_counts().index[0])
        return out
    name = verdict["devices"][0]
    rows = short.to_dict("records")
    top = next(r for r in rows if r["name"] == name)
    others = [r for r in rows if r["name"] != name][:2]
    cloud = s.deployment == "cloud"
    order = _unrented(top["purchase_unit"])
    if cloud and top.get("cloud_price_basis"):
        order = _("{order}, at the {basis}").format(order=order, basis=top["cloud_price_basis"])
    out.update(
        device=name, order=order, configuration=str(top.get("configuration") or ""), reason=str(top["reason"]),
        units=float(top["devices_rented"] if cloud else top["units_to_buy"]), devices=float(top["devices_needed"]),
        total={"usd": float(top["total_cost_usd"]), "low": float(top["total_cost_usd_low"]),
               "high": float(top["total_cost_usd_high"]), "horizon": _horizon(s),
               "text": _over(_total_text(top, s), s)},
        performance=_performance(top, s), checked=str(top.get("engine_track_record") or ""),
    )
    for other in others:
        gap, why = _why_lost(top, other, merged)
        out["runners_up"].append({
            "name": other["name"], "order": _unrented(other["purchase_unit"]),
            "total_text": _over(_total_text(other, s), s), "score": float(other["score"]),
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
        out["prices_dated"] = _("; ").join(_("{device}: {date}").format(device=display_name(n), date=d)
                                           for n, d in dates.items() if d)
    return out
