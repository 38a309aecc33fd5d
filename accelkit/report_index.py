"""The index page of a report: its title, the decision page, the chapters and the scenario in words.

Split out of :mod:`accelkit.report` (one job per module). Everything here is written in the
language now in use (:mod:`accelkit.i18n`); :func:`accelkit.report.build_report` renders it
under the report's language.
"""

from __future__ import annotations

import html

from . import i18n
from .i18n import N_, _

__all__ = []

_LABELS = {"workload": N_("Workload"), "model": N_("Model"), "deployment": N_("Deployment"), "market": N_("Market"),
           "cloud_pricing": N_("Cloud price policy"), "weights": N_("Ranking weights"), "precision": N_("Precision"),
           "utilization": N_("Your own utilisation (MFU)"), "target_headroom": N_("Speed beyond the target that counts"),
           "latency_target_ms": N_("Latency target (per output token or frame)"),
           # the other fields by the first words of their description (scenario.FIELD_HELP)
           "params": N_("Parameters of a custom model"), "n_layers": N_("Layers of a custom decoder"),
           "d_model": N_("Hidden width of a custom decoder"), "tokens": N_("Training tokens"),
           "batch_size": N_("Sequences held in memory at once across the cluster"),
           "seq_len": N_("Tokens per sequence"), "output_tokens": N_("Tokens generated per request"),
           "time_target_days": N_("Finish training within"), "ttft_target_ms": N_("Time to first token target"),
           "requests_per_s": N_("Inference requests per second to serve"),
           "budget_usd": N_("Total budget over the horizon"), "power_envelope_w": N_("Power available per device"),
           "segments": N_("Allowed segments"), "frameworks": N_("Frameworks that must work"),
           "custom_cuda_kernels": N_("The team owns custom CUDA kernels"),
           "search_configurations": N_("Search each device's best configuration"),
           "allow_lower_precision": N_("Let the search try precisions below the scenario's"),
           "exclude_unknown": N_("Exclude devices with an unknown criterion"),
           "devices": N_("Devices shortlisted so far"), "vendors": N_("Only these vendors"),
           "exclude_vendors": N_("Never these vendors"), "providers": N_("Cloud providers to price from"),
           "n_devices": N_("Devices in the cluster"), "zero_stage": N_("ZeRO stage for training memory"),
           "finetune_method": N_("Fine-tuning method"), "lora_rank": N_("Rank r of the LoRA / QLoRA adapters"),
           "horizon_months": N_("TCO horizon"), "hours_per_day": N_("Hours per day in use"),
           "electricity_usd_per_kwh": N_("Electricity tariff"), "pue": N_("Power usage effectiveness of the hall"),
           "streams": N_("Video streams"), "frames_per_s": N_("Frames per second per stream")}
#: the words of the scenario's choices (the values themselves stay English in scenario.json)
_CHOICE_WORDS = {"training": N_("training"), "fine-tuning": N_("fine-tuning"), "inference": N_("inference"),
                 "cloud": N_("cloud"), "on-prem": N_("on-prem"), "edge": N_("edge"),
                 "global": N_("global"), "china": N_("china"), "on-demand": N_("on-demand"),
                 "committed-1y": N_("committed-1y"), "committed-3y": N_("committed-3y"), "lowest": N_("lowest"),
                 "full": N_("full"), "lora": N_("lora"), "qlora": N_("qlora")}
#: the units of the scenario's fields, as words
_UNIT_WORDS = {"1/s": N_("per second"), "h": N_("hours"), "months": N_("months"), "days": N_("days"),
               "tokens": N_("tokens")}
_ONLY = {  # fields that bear on some scenarios only
    "tokens": lambda s, v: s.workload != "inference", "time_target_days": lambda s, v: s.workload != "inference",
    "zero_stage": lambda s, v: s.workload != "inference" and not s.search_configurations,
    "finetune_method": lambda s, v: s.workload == "fine-tuning",
    "lora_rank": lambda s, v: s.workload == "fine-tuning" and s.finetune_method != "full",
    "latency_target_ms": lambda s, v: s.workload == "inference", "ttft_target_ms": lambda s, v: s.workload == "inference",
    "requests_per_s": lambda s, v: s.workload == "inference" and not v["vision"],
    "output_tokens": lambda s, v: s.workload == "inference" and not v["vision"],
    "seq_len": lambda s, v: not v["vision"],
    "streams": lambda s, v: s.workload == "inference" and v["vision"],
    "frames_per_s": lambda s, v: s.workload == "inference" and v["vision"],
    "cloud_pricing": lambda s, v: s.deployment == "cloud", "providers": lambda s, v: s.deployment == "cloud",
    "pue": lambda s, v: s.deployment != "cloud", "electricity_usd_per_kwh": lambda s, v: s.deployment != "cloud",
    "horizon_months": lambda s, v: s.workload == "inference" or s.deployment != "cloud",
    "custom_cuda_kernels": lambda s, v: bool(s.custom_cuda_kernels),
}


def _value_words(value, unit):
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k} {v:g}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in value.items())
    if unit in ("0-1", "fraction") and isinstance(value, (int, float)):
        return f"{value:.0%}"
    if isinstance(value, float):
        from .select.summary import count_words

        text = f"{value:,.6g}" if abs(value) < 1e6 else count_words(value)
    elif isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, str) and value in _CHOICE_WORDS:
        text = _(_CHOICE_WORDS[value])
    else:
        text = str(value)
    unit = "" if unit in ("count", "") else _(_UNIT_WORDS[unit]) if unit in _UNIT_WORDS else unit
    return f"{text} {unit}".strip()


def _scenario_words(scenario):
    """The scenario as a reader reads it: each field that is set and bears on this workload, by
    its description, in words (an unset value or an empty list is left out)."""
    from .scenario import FIELD_HELP

    try:
        from .sizing import model_of

        preset = model_of(scenario)["preset"]
        vision = preset is not None and preset["kind"] in ("cnn", "vit")
    except Exception:  # a custom model: not a vision one
        vision = False
    rows = []
    for key, value in scenario.to_dict().items():
        if key == "name" or value is None or value == [] or value == {} or value == "":
            continue
        if key in _ONLY and not _ONLY[key](scenario, {"vision": vision}):
            continue
        label, unit = FIELD_HELP.get(key, (key, ""))
        label = _(_LABELS[key]) if key in _LABELS else _((label or key).split(" (")[0].split(";")[0].split(":")[0])
        rows.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(_value_words(value, unit))}</td></tr>")
    return "\n".join(rows)


def _index(scenario, done, when, recommendation, title=None, summary_block="", pdf_name=""):
    title = title or scenario.name
    rows = "\n".join(
        f'<li><a href="{html.escape(stem)}.html">{html.escape(cid)} · {html.escape(_(ctitle))}</a></li>'
        for cid, stem, ctitle in done
    )
    rec = f'<p class="rec">{html.escape(recommendation)}</p>' if recommendation else ""
    link = f'<a href="{html.escape(pdf_name)}">{html.escape(pdf_name)}</a>'
    pdf_line = _("The decision page as one A4 page: {link}").format(link=link)
    pdf = f'<p class="no-print">{pdf_line}</p>' if pdf_name else ""
    chapters_heading, scenario_heading = _("Chapters"), _("The scenario")
    page_title = _("{title}: accelkit report").format(title=title)
    prepared = _("Prepared {when} with accelkit. Each chapter below was run on this scenario; charts are interactive\n"
                 "and work offline.").format(when=html.escape(when))
    command = "<code>accelkit report --scenario scenario.json</code>"
    reproduces = _("{file} reproduces this report: {command}").format(
        file='<a href="scenario.json">scenario.json</a>', command=command)
    return f"""<!DOCTYPE html>
<html lang="{i18n.html_lang()}"><head><meta charset="utf-8"><title>{html.escape(page_title)}</title>
<style>
body {{font-family: Arial, sans-serif; max-width: 60em; margin: 2em auto; color: #222}}
td {{padding: 2px 10px; border-bottom: 1px solid #eee; font-size: 13px; vertical-align: top}}
.rec {{background: #eef6ee; border-left: 4px solid #3c8d40; padding: 8px 12px}}
</style></head><body>
<h1>{html.escape(title)}</h1>
{summary_block}
{pdf}
<p>{prepared}</p>
{rec}
<h2>{chapters_heading}</h2>
<ol>
{rows}
</ol>
<h2>{scenario_heading}</h2>
<table>{_scenario_words(scenario)}</table>
<p>{reproduces}</p>
</body></html>
"""


def _decision_page(scenario, heading):
    """The decision page's dict (:func:`accelkit.select.decision_summary`) and its HTML block,
    titled with the report's title; ``(None, note)`` when the decision cannot be made."""
    from .decision_page import summary_html
    from .select import decision_summary

    try:
        summary = decision_summary(scenario)
    except ValueError as exc:
        reason = _("The decision page could not be made: {reason}").format(reason=html.escape(str(exc)))
        return None, f'<p class="rec">{reason}</p>'
    summary = {**summary, "title": heading or summary["title"]}
    return summary, summary_html(summary)


def _recommendation(scenario):
    """One sentence naming the top of the shortlist (empty if nothing passes)."""
    try:
        from .select import shortlist

        top = shortlist(scenario, n=3)
    except Exception:  # the index must not fail because of the summary line
        return ""
    if top.empty:
        return _("No device passes every hard constraint; see chapter 09 for the reasons.")
    from .names import display_name

    names = ", ".join(display_name(name) for name in top["name"])
    return _("Shortlist for this scenario: {names} (chapter 09 explains the ranking and what would change it).").format(
        names=names)
