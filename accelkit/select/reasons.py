"""The words of a ranked row: each device's reason, with figures to two significant
figures, "past the target by" and money. Split out of :mod:`accelkit.select.ranking`
(one job per module).
"""

from __future__ import annotations

import re

import numpy as np

from ..i18n import N_, _, language
from ..numbers import joined
from .scoring import CRITERIA, _UNKNOWN_WORDS

#: for the chapters that show the projection's English columns (``why``, ``matmul_source``,
#: ``memory_source``) or a rent plan: their words in the language in use
__all__ = ["order_words", "source_words", "why_words"]


#: "per one" of each work unit, in words (whole phrases: Chinese counts each with its own measure word)
_PER = {"tokens": N_("per token"), "frames": N_("per frame"), "requests": N_("per request"),
        "samples": N_("per sample"), "sequences": N_("per sequence"),
        "pairs": N_("per pass")}  # a recommender's latency is one pass over a batch of user-item pairs
#: "per million" of each work unit, in words
_PER_MILLION = {"tokens": N_("per M tokens"), "frames": N_("per M frames"), "requests": N_("per M requests"),
                "samples": N_("per M samples"), "sequences": N_("per M sequences"),
                "pairs": N_("per M user-item pairs")}
#: the criteria in words ("strongest on time, weakest on headroom")
_CRITERION_WORDS = {"time": N_("time"), "cost": N_("cost"), "efficiency": N_("efficiency"),
                    "ecosystem": N_("ecosystem"), "headroom": N_("headroom")}
#: segments of the catalogue, in words
_SEGMENT_WORDS = {"datacenter": N_("datacenter"), "edge": N_("edge"), "consumer": N_("consumer"),
                  "workstation": N_("workstation")}


def _per(unit):
    """"per token", "per frame" in the language in use."""
    return _(_PER[unit]) if unit in _PER else _("per {unit}").format(unit=unit)


def _per_million(unit):
    """"per M tokens", "per M frames" in the language in use."""
    return _(_PER_MILLION[unit]) if unit in _PER_MILLION else _("per M {unit}").format(unit=unit)


def _criterion(key):
    return _(_CRITERION_WORDS.get(key, key))


def _segment(name):
    return _(_SEGMENT_WORDS.get(name, name))


def _unknown_words(keys_text):
    """``unknown_criteria`` (English words joined by ", ", a data column) in the language in use."""
    english = {v: k for k, v in _UNKNOWN_WORDS.items()}
    words = [w for w in str(keys_text).split(", ") if w]
    return joined(_(_UNKNOWN_WORDS[english[w]]) if w in english else w for w in words)


def _sig(value, digits=2):
    """A number to ``digits`` significant figures, with thousands separators ("1.0", "12", "1,300")."""
    if not value == value:
        return _("unknown")
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    magnitude = int(np.floor(np.log10(abs(value))))
    decimals = max(digits - 1 - magnitude, 0)
    rounded = round(value, digits - 1 - magnitude)
    return f"{rounded:,.{decimals}f}"


def _past(value, target):
    """``value`` to two significant figures, or more where two would print the target
    itself ("1.04 days > target 1 days", never "1.0 > 1")."""
    for digits in (2, 3, 4, 6):
        text = _sig(value, digits)
        if digits > 2 and "." in text:
            text = text.rstrip("0").rstrip(".")
        if not value == value or float(text.replace(",", "")) != float(target):
            return text
    return text


def _money(value):
    return f"${value:,.0f}" if value == value else _("unknown")


def _order_words(purchase_unit):
    """A cloud plan's ``purchase_unit`` ("rent 8 × B200", in the language in use) without the verb:
    what is rented ("8 × B200")."""
    text = str(purchase_unit)
    prefix = _("rent {order}").split("{order}")[0]
    return text.removeprefix(prefix) if prefix else text.removeprefix("rent ")


# --- the projection's "why" (English, a data column the code tests) in words ------------------------

#: the sentences the projection engine explains an infeasible device with
#: (:mod:`accelkit.projection.inference`, ``training``, ``vision``, ``for_scenario``); kept in
#: English in its ``why`` column, which code compares against, and put in words when shown
_WHY = (
    N_("no published dense {precision} peak"),
    N_("no published dense {precision} peak, memory bandwidth or link figure"),
    N_("no published dense {precision} matmul efficiency"),
    N_("no published memory bandwidth"),
    N_("no published memory size or bandwidth"),
    N_("no published memory size"),
    N_("no published link bandwidth for tensor parallelism"),
    N_("no published link or bandwidth figure for this parallel layout"),
    N_("no batch meets the targets: at batch 1 and its best tensor parallel {misses}"),
    N_("the weights and one sequence's KV cache do not fit on {n} device ({tried})"),
    N_("the weights and one sequence's KV cache do not fit on {n} devices ({tried})"),
    N_("batch_size={batch} does not fit: at most {fit} sequences fit"),
    N_("the request rate is beyond what the devices sustain (the queue grows without end)"),
    N_("needs {need} GB per device, {usable} GB usable"),
    N_("training in {precision} is not modelled (train in bf16, fp16 or fp8)"),
    N_("no published rate of {model} at {precision} for this chip (its memory is on the chip: only the vendor's own "
       "figures project it)"),
    N_("the {stack} stack runs each layer as its own kernel, and {model} has no layer table to count them (a fused "
       "stack such as tensorrt, or a model with a layer table: ResNet-50, ViT, BERT)"),
)
#: the parts of the sentences above that are lists of their own
_MISSES = (N_("{value} ms per output token > target {target} ms"),
           N_("{value} ms to the first token > target {target} ms"))
_TRIED = (N_("tensor parallel up to {tp}"), N_("{pp} pipeline stages"), N_("expert parallel up to {ep}"))


def _pattern(template):
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
    return re.compile(f"^{regex}$", re.S)


_PATTERNS = {}


def _translate_like(text, templates, nested=None):
    """``text`` (made by ``template.format(...)`` from one of ``templates``, in English) in
    the language in use, its fields put in words by ``nested`` (field -> function); itself
    where no template matches."""
    for template in templates:
        if template not in _PATTERNS:
            _PATTERNS[template] = _pattern(template)
        found = _PATTERNS[template].match(text)
        if found:
            fields = found.groupdict()
            for key, words in (nested or {}).items():
                if key in fields:
                    fields[key] = words(fields[key])
            return _(template).format(**fields)
    return text


def _misses(text):
    return _(" and ").join(_translate_like(t, _MISSES) for t in text.split(" and "))


def _tried(text):
    return joined(_translate_like(t, _TRIED) for t in text.split(", "))


def _why_words(why):
    """The projection's ``why`` (English) in the language in use."""
    why = str(why)
    if language() == "en" or not why:
        return why
    return _translate_like(why, _WHY, {"misses": _misses, "tried": _tried})


# --- where the projection's efficiencies come from (English, cached with the ceilings) in words -----

#: :func:`accelkit.projection.efficiency` explains each achievable efficiency with one of these
_SOURCES = (
    N_("measured {what} of this device ({n} published figure: {sources})"),
    N_("measured {what} of this device ({n} published figures: {sources})"),
    N_("no published {what} for this device: median of {n} measured {group} device"),
    N_("no published {what} for this device: median of {n} measured {group} devices"),
    N_("no published {what} for this device or its architecture: median of {n} measured {group} device"),
    N_("no published {what} for this device or its architecture: median of {n} measured {group} devices"),
    N_("no published {what} for this device or its vendor: median of all {n} measured accelerators"),
    N_("your MFU {mfu} of the dense {precision} peak"),
    N_("your utilisation {share} of the dense {precision} peak"),
    N_("published: {fps} frames/s at batch {batch} ({source})"),
    N_("on-chip memory (the vendor's published rate covers it)"),
)
_SOURCE_WHAT = (N_("{precision} matmul"), N_("memory bandwidth"), N_("all-reduce bus bandwidth"),
                N_("all-reduce latency"))
_SOURCE_TAGS = (N_("its {figure} figure: no {precision} measurement"), N_("fp8 efficiency applied to fp4"))
_SPARSE = "; peak = half the published 2:4-sparse INT8 figure"
_SPARSE_WORDS = N_("peak = half the published 2:4-sparse INT8 figure")
_HALF = "; peak = half the published dense INT8 figure"
_HALF_WORDS = N_("peak = half the published dense INT8 figure")
_TAG = re.compile(r"^(.*) \((its \S+ figure: no \S+ measurement|fp8 efficiency applied to fp4)\)$", re.S)


def _source_words(source):
    """One efficiency source (English, as the projection writes it) in the language in use."""
    text = str(source)
    if language() == "en" or not text:
        return text
    tags, sparse, half = [], text.endswith(_SPARSE), text.endswith(_HALF)
    text = text.removesuffix(_SPARSE).removesuffix(_HALF)
    while (found := _TAG.match(text)):
        text = found.group(1)
        tags.insert(0, _translate_like(found.group(2), _SOURCE_TAGS))
    words = _translate_like(text, _SOURCES, {"what": lambda w: _translate_like(w, _SOURCE_WHAT)})
    words = "".join([words] + [_("({note})").format(note=t) for t in tags])
    if sparse or half:
        return _("{source}; {note}").format(source=words, note=_(_SPARSE_WORDS if sparse else _HALF_WORDS))
    return words


def _efficiency_words(matmul, memory):
    """The ``efficiency_source`` of a ranked row: where its matmul and memory efficiencies come from."""
    return _("{matmul} | memory: {memory}").format(matmul=_source_words(matmul), memory=_source_words(memory))


def _reason(row, weights, training, scenario, unit="tokens"):
    if row["status"] == "excluded":
        return _("excluded: {why}").format(why=row["excluded_because"])
    if row["status"] == "cannot verify":
        return _("cannot verify: {figure}; would settle it: {settle}").format(figure=row["unknown_figure"],
                                                                              settle=row["would_settle"])
    parts = []
    if row.get("configuration"):
        parts.append(_("runs as {configuration}").format(configuration=row["configuration"]))
    if training and row["days_on_n"] == row["days_on_n"]:
        parts.append(_("{days} days on {n} ({low}-{high}) against {target}").format(
            days=_sig(row["days_on_n"]), n=scenario.n_devices, low=_sig(row["days_on_n_low"]),
            high=_sig(row["days_on_n_high"]), target=f"{scenario.time_target_days:g}"))
        k = row.get("devices_needed", np.nan)
        if k == k and k < scenario.n_devices:
            parts.append((_("right-sized to {count} device: about {days} days") if k == 1 else
                          _("right-sized to {count} devices: about {days} days")).format(
                count=f"{k:.0f}", days=_sig(row["days_right_sized"])))
    if not training and row["latency_ms"] == row["latency_ms"]:
        parts.append(_("{latency} ms {per} ({low}-{high}) against {target}").format(
            latency=_sig(row["latency_ms"]), per=_per(unit), low=_sig(row["latency_ms_low"]),
            high=_sig(row["latency_ms_high"]), target=f"{scenario.latency_target_ms:g}"))
    over = _("over the run") if training else _("over {months} months").format(months=scenario.horizon_months)
    if row["total_cost_usd"] == row["total_cost_usd"]:
        rent = scenario.deployment == "cloud"
        figures = dict(what=_order_words(row["purchase_unit"]) if rent else row["purchase_unit"],
                       total=_money(row["total_cost_usd"]), over=over, low=_money(row["total_cost_usd_low"]),
                       high=_money(row["total_cost_usd_high"]), price=f"${row['cost_per_million_tokens']:,.3g}",
                       per_million=_per_million(unit))
        if rent:
            parts.append(_("rent {what}: {total} {over} ({low}-{high}), {price} {per_million}").format(**figures))
        else:
            parts.append(_("buy {what}: {total} {over} ({low}-{high}), {price} {per_million}").format(**figures))
        largest = row.get("cloud_largest_instance", np.nan)
        if rent and largest == largest and row.get("devices_rented", 0) > largest:
            parts.append(_("{n} devices is more than the largest listed instance ({largest}): the listed rate "
                           "assumes the provider has the capacity, ask for a quote").format(
                n=f"{row['devices_rented']:.0f}", largest=f"{largest:.0f}"))
    elif row.get("purchase_unit") and scenario.deployment != "cloud":
        parts.append(_("buy {what}").format(what=row["purchase_unit"]))
    if row["ecosystem_score"] == row["ecosystem_score"]:
        parts.append(_("ecosystem {score}/100").format(score=f"{row['ecosystem_score']:.0f}"))
    scored = {k: row[f"score_{k}"] for k in CRITERIA if weights[k] > 0 and row[f"score_{k}"] == row[f"score_{k}"]}
    if row.get("unknown_criteria"):
        parts.append(_("{names} unknown: scored on {known} of {total} criteria").format(
            names=_unknown_words(row["unknown_criteria"]), known=len(scored),
            total=len(scored) + len(row["unknown_criteria"].split(", "))))
    if row.get("purchase_risks"):
        parts.append(_("risks: {risks}").format(risks=row["purchase_risks"]))
    text = joined(parts, major=True)
    if len(scored) < 2:
        return text
    best = max(scored, key=scored.get)
    worst = min(scored, key=scored.get)
    if scored[best] == scored[worst]:
        return _("{parts}; level on all {n} weighted criteria").format(parts=text, n=len(scored))
    return _("{parts}; strongest on {best}, weakest on {worst}").format(parts=text, best=_criterion(best),
                                                                        worst=_criterion(worst))


#: public names (the chapters that show the projection's columns themselves)
why_words = _why_words
source_words = _source_words
order_words = _order_words
