"""The measured demand as a scenario: "do what my cluster does now, on other hardware".

``accelkit monitor`` measures how much work a person's GPUs really do:
``effective_devices`` (Σ mean utilisation; 8 A100s at 30 % → 2.4) of the monitored
device. Chapter 01 and the decision size hardware from a *scenario* (model, tokens
and time target, or request rate). This module joins the two: it turns the measured
work into the scenario's own demand, so every chapter sizes candidates for the pace
the cluster keeps today.

The pace is ``effective_devices`` × the projection engine's per-device rate of the
monitored device for the scenario's model (:func:`accelkit.sizing.per_device`,
``work_per_device_hour``):

* training / fine-tuning: the time target becomes the days the scenario's tokens take
  at that pace (tokens kept);
* LLM serving: requests per second = pace [tokens/s] ÷ output tokens per request;
* vision serving: frames per second per stream = pace [frames/s] ÷ streams;
* other serving: requests per second = pace.

Assumption, said in the sentence this returns: the monitored job is the scenario's
workload (same model, precision and batch), and its busy time would run at the
projected rate. An input-bound job (the verdict says so) keeps its bottleneck on any
chip; fix the input pipeline first (the source text's lesson).

Reference: the source texts' "measure before buying" rule (8 × A100 under 30 %
utilisation, found with ``nvidia-smi``); the projection engine's rates
(:mod:`accelkit.projection`, chapter 10 for how well they match measurements).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .. import units
from .samples import MonitorError

__all__ = ["load_measured_demand", "measured_demand_from_text", "scenario_for_measured"]

_FORMAT = "accelkit-monitor-summary"


def _from_summary(summary, precision):
    from .rightsize import measured_demand

    return measured_demand(summary, precision=precision)


def load_measured_demand(source, precision="bf16"):
    """The measured demand dict (see :func:`accelkit.monitor.rightsize.measured_demand`).

    Parameters
    ----------
    source : str or path
        ``"example"`` (the shipped synthetic 8 × A100 log at ~30 %), a JSON file written
        by ``accelkit monitor --json`` (its ``demand`` entry), or an nvidia-smi CSV log.
    precision : str
        Workload precision used when the demand is computed from samples.

    Raises
    ------
    MonitorError
        Naming the file and what was expected.
    """
    from . import example_log
    from .summary import summarize

    if str(source).strip().lower() == "example":
        return _from_summary(summarize(example_log()), precision)
    path = Path(str(source)).expanduser()
    if not path.is_file():
        raise MonitorError(f"measured demand: {path} is not a file; expected 'example', a JSON file written by "
                           "`accelkit monitor --json`, or an nvidia-smi CSV log")
    if path.suffix.lower() != ".json":
        from .nvsmi import read_log

        return _from_summary(summarize(read_log(path)), precision)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MonitorError(f"measured demand: {path} is not readable JSON ({exc})") from None
    return _demand_from_data(data, str(path))


def measured_demand_from_text(name, text, precision="bf16"):
    """:func:`load_measured_demand` for a file's text already in memory (an upload).

    ``name`` is the file's name as the person gave it (shown in messages, never opened):
    a ``.json`` name or text starting with ``{`` is read as an ``accelkit monitor --json``
    summary, anything else as an nvidia-smi CSV log.
    """
    from .nvsmi import parse_log_text
    from .summary import summarize

    shown = repr(str(name)[:40])
    if str(name).lower().endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MonitorError(f"measured demand: {shown} is not readable JSON (line {exc.lineno}, "
                               f"column {exc.colno}: {exc.msg})") from None
        return _demand_from_data(data, shown)
    return _from_summary(summarize(parse_log_text(text, shown)), precision)


def _demand_from_data(data, path):
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise MonitorError(f"measured demand: {path} is not a summary written by `accelkit monitor --json` "
                           f"(field 'format' should be {_FORMAT!r})")
    demand = data.get("demand")
    if not isinstance(demand, dict):
        raise MonitorError(f"measured demand: {path} has no field 'demand'; it is written when the monitored "
                           "device is in the catalogue (pass `accelkit monitor --device NAME`)")
    for key in ("device", "effective_devices"):
        if key not in demand:
            raise MonitorError(f"measured demand: {path}, field 'demand.{key}' is missing")
    eff = demand["effective_devices"]
    if isinstance(eff, bool) or not isinstance(eff, (int, float)) or not math.isfinite(eff) or eff <= 0:
        raise MonitorError(f"measured demand: {path}, field 'demand.effective_devices': expected a number > 0, "
                           f"got {str(eff)[:40]!r}")
    return demand


def scenario_for_measured(scenario, demand, catalog=None):
    """The scenario with its demand set to the measured pace, and a sentence saying so.

    Parameters
    ----------
    scenario : Scenario
        The workload the monitored job runs (model, precision, batch); not modified.
    demand : dict
        From :func:`load_measured_demand` (needs ``device`` and ``effective_devices``).

    Returns
    -------
    (Scenario, str)
        A copy with ``time_target_days`` (training), ``requests_per_s`` (serving) or
        ``frames_per_s`` (vision) changed, and the sentence.
    """
    from ..catalog import find, load_catalog
    from ..sizing import TRAINING_WORKLOADS, per_device

    cat = catalog if catalog is not None else load_catalog()
    try:
        device = find(str(demand["device"]), cat)["name"]
    except ValueError as exc:
        raise MonitorError(f"measured demand, field 'device': {exc}") from None
    eff = float(demand["effective_devices"])
    row = per_device(scenario, cat, [device]).iloc[0]
    per_device_s = float(row["work_per_device_hour"]) / units.SECONDS_PER_HOUR
    if not per_device_s > 0:
        raise MonitorError(f"measured demand: the projection engine has no rate for {device} running "
                           f"{scenario.model} in {scenario.precision} ({row.get('why', '')}); "
                           "choose the model and precision the monitored job runs")
    pace = eff * per_device_s
    unit = row["work_unit"] if "work_unit" in row.index else "tokens"
    what = f"your {device} GPUs did the work of {eff:.2f} (measured), {pace:,.0f} {unit}/s at the projected rate"
    out = scenario.copy()
    if scenario.workload in TRAINING_WORKLOADS:
        days = scenario.tokens / pace / units.SECONDS_PER_DAY
        out.update(time_target_days=days)
        return out, (f"Demand from your cluster: {what}; {scenario.tokens:.3g} tokens at that pace take "
                     f"{days:.3g} days, now the time target.")
    if row.get("kind") == "llm":
        rps = pace / scenario.output_tokens
        out.update(requests_per_s=rps)
        return out, (f"Demand from your cluster: {what}; at {scenario.output_tokens} output tokens per request "
                     f"that is {rps:.3g} requests/s, now the serving target.")
    if unit == "frames":
        fps = pace / max(1, scenario.streams)
        out.update(frames_per_s=fps)
        return out, f"Demand from your cluster: {what}; {fps:.3g} frames/s per stream, now the target."
    out.update(requests_per_s=pace)
    return out, f"Demand from your cluster: {what}; {pace:.3g} requests/s, now the serving target."
