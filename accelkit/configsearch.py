"""The best configuration of every device for a scenario, as an engineer would pick it.

A serving or training engineer does not run a device in the configuration a form
defaulted to: they try the precisions they accept, the ZeRO stages, the
tensor-parallel sizes and the batch sizes, and keep the best one that meets the
targets. :func:`best_configurations` does that search for every device at once,
through the projection engine (:mod:`accelkit.projection`), and says what it chose
in words.

* **Training** (``training`` / ``fine-tuning``): on the scenario's ``n_devices``,
  every layout of :func:`accelkit.projection.training_layouts` -- tensor parallel
  within a node, pipeline stages, ZeRO 0-3 (3 = FSDP full sharding; with pipeline
  stages ZeRO-1), micro-batches from one sequence per rank up to the scenario's,
  selective or full recomputation -- projected for every device at once
  (:func:`accelkit.projection.training_search`), keeping the fastest whose memory
  fits (Narayanan et al. 2021 §3, Rajbhandari et al. 2020 §5); precision among those
  allowed, fastest first.
* **LLM serving**: per precision and tensor-parallel size 1/2/4/8 within a node, the
  largest batch whose median time per output token and time to first token meet
  ``latency_target_ms`` and ``ttft_target_ms``, keeping the configuration with the
  most output tokens per second per device -- the search NVIDIA's aiconfigurator runs
  for its own GPUs (github.com/ai-dynamo/aiconfigurator), here for every vendor.
* **Encoders and vision**: the precision; under a power envelope, a Jetson's highest ``nvpmodel``
  mode within it (:func:`accelkit.projection.vision.vision`'s ``power_envelope_w``).

With ``scenario.search_configurations`` off, the scenario's configuration is
projected as given (what :func:`accelkit.sizing.per_device` does).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import memory, sizing
from .catalog import memory_bytes

__all__ = ["best_configurations", "candidate_precisions", "CONFIG_COLUMNS"]

#: the columns that name a configuration
CONFIG_COLUMNS = ("precision", "n_devices", "tensor_parallel", "pipeline_parallel", "expert_parallel", "zero_stage",
                  "batch_size")

# scenario precisions from the most to the least precise; bf16 and fp16 stand level
_LADDER = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
_TRAINING_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")


#: bf16 and fp16 stand in for each other where a device has one and not the other
STAND_IN = {"bf16": "fp16", "fp16": "bf16"}
#: a lower precision is chosen over a higher one only when it is at least this much better
#: (a stated margin: a few per cent of speed is not worth a quality risk to check)
PRECISION_MARGIN = 0.10


def _level(precision):
    return _LADDER.index({"fp16": "bf16"}.get(precision, precision))


def candidate_precisions(scenario):
    """The scenario's precision, its stand-in (fp16 for bf16 and back: same quality level,
    used only where the device lacks the scenario's), then -- when
    ``allow_lower_precision`` -- the lower ones the workload can use (training stops at
    fp8; serving goes to int8 and int4 weights), from the highest quality down."""
    p = scenario.precision
    out = [p] + ([STAND_IN[p]] if p in STAND_IN else [])
    if not scenario.allow_lower_precision:
        return out
    allowed = _TRAINING_PRECISIONS if scenario.workload in sizing.TRAINING_WORKLOADS else _LADDER
    below = [q for q in allowed if _level(q) > _level(p)]
    return out + [q for q in below if q not in out]


def best_configurations(scenario, catalog, measurements=None):
    """One row per device: the projected figures of its best configuration.

    Parameters
    ----------
    scenario : Scenario
    catalog : DataFrame
    measurements : DataFrame, optional
        The person's probe results (they replace the published efficiencies).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`accelkit.sizing.per_device` for the chosen
        configuration, plus :data:`CONFIG_COLUMNS` and ``configuration`` (the choice
        in words, e.g. "bf16, 8 devices, ZeRO-3"). Index as ``catalog``.
    """
    training = scenario.workload in sizing.TRAINING_WORKLOADS
    project = _training if training else _serving
    precisions, frames = [], []
    for p in candidate_precisions(scenario):
        if p == STAND_IN.get(scenario.precision):
            # the stand-in only where the scenario's own precision has no published peak:
            # projected for those devices alone (the search is the decision's main cost)
            lacking = _lacking(catalog, scenario.precision, p)
            if not lacking.any():
                continue
            frames.append(_expand(project(scenario.copy().update(precision=p), catalog[lacking], measurements),
                                  lacking, frames[0]))
        else:
            frames.append(project(scenario.copy().update(precision=p), catalog, measurements))
        precisions.append(p)
    if training:
        better = _pick(frames, "days_on_n", lower_is_better=True, precisions=precisions)
    else:
        better = _pick(frames, "work_per_device_hour", lower_is_better=False, precisions=precisions)
    out = better.copy()
    out.index = catalog.index
    columns = [c for c in ("precision", "n_devices", "zero_stage", "batch_size", "tensor_parallel", "pipeline_parallel",
                           "expert_parallel", "micro_batch_size", "recompute", "power_mode", "power_w", "stack")
               if c in out]
    out["configuration"] = [_words(r, scenario) for r in out[columns].to_dict("records")]
    from .projection.shapes import custom_shape

    shaped = custom_shape(scenario)  # a custom model's layers and heads: given, or whose they are
    if shaped is not None:
        from .i18n import _

        out["configuration"] = out["configuration"].map(
            lambda x: _("{configuration}; {shape}").format(configuration=x, shape=shaped[1]))
    return out


def _lacking(catalog, precision, stand_in):
    """Devices with no published peak at ``precision`` but one at ``stand_in`` (bool array)."""
    from .catalog import peak_flops

    return (peak_flops(catalog, precision).isna() & peak_flops(catalog, stand_in).notna()).to_numpy()


def _expand(frame, rows, like):
    """``frame`` (projected for ``rows`` of the catalogue) as a frame shaped like ``like``:
    the other rows cannot run (``feasible`` False, no peak), so the pick never takes them.
    Column types are kept (an object column would slow every later step)."""
    frame = frame.reset_index(drop=True)
    positions = np.flatnonzero(rows)
    n = len(like)
    columns = {}
    for column in like.columns:
        kind = like[column].dtype.kind
        source = frame[column].to_numpy() if column in frame else None
        if kind in "fiu":
            values = np.full(n, np.nan)
            if source is not None:
                values[positions] = pd.to_numeric(pd.Series(source), errors="coerce").to_numpy(dtype=float)
        elif kind == "b":
            values = np.zeros(n, dtype=bool)
            if source is not None:
                values[positions] = source.astype(bool)
        else:
            values = np.full(n, None, dtype=object)
            if source is not None:
                values[positions] = source
        columns[column] = values
    out = pd.DataFrame(columns)
    out["feasible"] = np.isin(np.arange(n), positions) & out["feasible"].astype(bool)
    return out


def _usable(catalog):
    device_mem = memory_bytes(catalog)
    return memory.usable_bytes(device_mem.fillna(1.0)).where(device_mem.notna())


def _training(scenario, catalog, measurements):
    n = scenario.n_devices
    cat = catalog.reset_index(drop=True)
    from .projection.for_scenario import is_recommender_model, is_vision_model

    # image models: data parallel only; recommenders: their own hybrid layout (tables split, MLPs replicated)
    if scenario.search_configurations and not is_vision_model(scenario) and not is_recommender_model(scenario):
        from .projection import training_search
        from .projection.shapes import scenario_model as _model
        from .projection.training import finetune_settings

        method, rank = finetune_settings(scenario)

        # sequences per rank: up to the scenario's micro-batch (its batch over the devices)
        best = training_search(cat, _model(scenario), tokens=scenario.tokens, precision=scenario.precision,
                               n_devices=n, seq_len=scenario.seq_len, max_micro_batch=max(scenario.batch_size // n, 1),
                               measurements=measurements, utilization=scenario.utilization,
                               finetune_method=method, lora_rank=rank)
        layout = best[["zero_stage", "tensor_parallel", "pipeline_parallel", "micro_batch_size", "recompute"]].copy()
        layout["batch_size"] = layout["micro_batch_size"] * best["data_parallel"]
    else:
        layout = pd.DataFrame({"zero_stage": scenario.zero_stage, "batch_size": scenario.batch_size}, index=cat.index)
    # every device in its own configuration, projected in one pass
    out = sizing.per_device(scenario, cat, measurements=measurements, layout=layout)
    # a recommender trains hybrid parallel (tables split, MLPs replicated): no ZeRO stage applies
    out["zero_stage"] = np.nan if is_recommender_model(scenario) else layout["zero_stage"].to_numpy()
    out["batch_size"] = layout["batch_size"].to_numpy()
    out["precision"] = scenario.precision
    out["n_devices"] = n
    for column in ("tensor_parallel", "pipeline_parallel"):
        out[column] = layout[column].to_numpy() if column in layout else 1
    if "micro_batch_size" in layout:
        out["micro_batch_size"] = layout["micro_batch_size"].to_numpy()
        out["recompute"] = layout["recompute"].to_numpy()
    return out


def _serving(scenario, catalog, measurements):
    out = sizing.per_device(scenario, catalog, measurements=measurements, search=scenario.search_configurations)
    out["precision"] = scenario.precision
    llm = out["kind"].eq("llm") if len(out) else pd.Series(dtype=bool)
    # whole tensor-parallel groups: the devices a deployment needs, rounded up to a multiple of its TP size
    if "tensor_parallel" in out:
        tp = out["tensor_parallel"].fillna(1.0).where(llm, 1.0)
    else:
        tp = pd.Series(1.0, index=out.index)
    out["tensor_parallel"] = tp
    pp = out["pipeline_parallel"].fillna(1.0).where(llm, 1.0) if "pipeline_parallel" in out else 1.0
    ep = out["expert_parallel"].fillna(1.0).where(llm, 1.0) if "expert_parallel" in out else 1.0
    # one serving replica: tensor parallel within a node × pipeline stages across nodes, or an
    # expert-parallel group (attention data parallel, the experts spread over the group)
    group = tp * pp * ep
    for level in ("", "_low", "_high"):
        col = f"devices_for_target{level}"
        out[col] = np.ceil(out[col] / group) * group
    if scenario.search_configurations and llm.any():
        # the searched batch fills what memory is left: the weights and one sequence must fit
        one = sizing.min_devices_for_memory(scenario.copy().update(batch_size=1), _usable(catalog))
        out["min_devices_memory"] = np.where(llm, one.to_numpy(), out["min_devices_memory"])
    # whole replicas: the memory count rounds up to the chosen layout's group too
    out["devices_needed"] = np.ceil(np.fmax(out["devices_for_target"], out["min_devices_memory"]) / group) * group
    out["n_devices"] = out["devices_needed"]
    out["pipeline_parallel"] = pp
    out["expert_parallel"] = ep
    out["zero_stage"] = np.nan
    if "batch_size" not in out:
        out["batch_size"] = scenario.batch_size
    out["batch_size"] = out["batch_size"].fillna(scenario.batch_size) if not scenario.search_configurations \
        else out["batch_size"]
    return out


def _pick(frames, column, lower_is_better, precisions=None):
    """Row by row, the frame to use among the rows that can run: frames come from the
    highest quality down; one at the same quality level replaces the pick when it is
    better at all (the stand-in where the scenario's precision is missing), a lower
    level only when it is better by :data:`PRECISION_MARGIN`."""
    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    frames = [f.reset_index(drop=True) for f in frames]
    precisions = precisions or [None] * len(frames)
    values = np.column_stack([
        np.where(f["feasible"].astype(bool) & f["peak_flops"].notna(), f[column].to_numpy(dtype=float), np.nan)
        for f in frames])
    # "goodness": higher is better whichever way the column runs
    good = np.where(np.isfinite(values), -values if lower_is_better else values, -np.inf)
    best = np.zeros(len(values), dtype=int)
    for i in range(1, len(frames)):
        current = good[np.arange(len(good)), best]
        same_level = precisions[i] is None or precisions[0] is None or _level(precisions[i]) == _level(precisions[0])
        if precisions[i] is not None and precisions[i] == STAND_IN.get(precisions[0]):
            # the stand-in only where the scenario's own precision cannot run
            better = np.isfinite(good[:, i]) & ~np.isfinite(current)
        elif same_level:
            better = good[:, i] > current
        else:
            # a lower precision: at least PRECISION_MARGIN faster (or cheaper in time)
            ratio = np.abs(values[:, i] / values[np.arange(len(values)), best])
            gain = (1.0 / ratio - 1.0) if lower_is_better else (ratio - 1.0)
            better = np.isfinite(good[:, i]) & (~np.isfinite(current) | (gain >= PRECISION_MARGIN))
        best = np.where(better, i, best)
    first = frames[0]
    if not (best > 0).any():
        return first.copy()
    # column by column, keeping each column's type (a 2-D object copy made every later step slow); numpy's
    # where for columns of one type in both frames (pandas' where aligned and checked each: a quarter of a
    # rank), pandas' where the types differ, and the frame built once
    columns = {}
    for column in first.columns:
        values = first[column]
        for i, f in enumerate(frames[1:], start=1):
            rows = best == i
            if column not in f or not rows.any():
                continue
            other = f[column]
            if values.dtype == other.dtype and isinstance(values.dtype, np.dtype) and values.dtype.kind in "biuf":
                values = pd.Series(np.where(rows, other.to_numpy(), values.to_numpy()), index=first.index,
                                   name=column)
            elif values.dtype == other.dtype:  # strings, objects: chosen as objects, given back their type
                values = pd.Series(np.where(rows, other.to_numpy(dtype=object), values.to_numpy(dtype=object)),
                                   index=first.index, name=column, dtype=values.dtype)
            else:
                values = values.where(~pd.Series(rows, index=first.index), other)
        columns[column] = values
    return pd.DataFrame(columns, index=first.index)


def _serving_engine(stack):
    """The label of a decoder's named serving engine (``data/stacks.csv``, workload ``llm``: TensorRT-LLM,
    vLLM, SGLang); "" for the vendor's own (no engine-specific term is priced), an image model's or
    encoder's stack, or none."""
    from .projection.stacks import serving_engine_labels

    return "" if stack == "vendor-serving" else serving_engine_labels().get(stack, "")


def _stack_words(stack):
    """The stack an image model's, encoder's or recommender's figures assume, in words ("compiled by
    TensorRT"): its execution class of ``data/stacks.csv``."""
    from .i18n import _
    from .projection.stacks import stack_row

    if stack == "vendor-compiler":
        return _("compiled by the vendor's graph compiler")
    row = stack_row(stack)
    if row["execution"] == "fused":
        return _("compiled by {stack}").format(stack=row["label"])
    return _("run op by op by {stack}").format(stack=row["label"])


def _words(row, scenario):
    """The chosen configuration in words, in the language in use ("bf16, 8 devices, ZeRO-3")."""
    from .i18n import _
    from .numbers import joined

    p = row.get("precision", scenario.precision)
    n = row.get("n_devices", np.nan)
    parts = [str(p)]
    if n == n and n:
        parts.append((_("{n} device") if n == 1 else _("{n} devices")).format(n=f"{n:.0f}"))
    if scenario.workload in sizing.TRAINING_WORKLOADS:
        from .projection.training import finetune_settings

        method, rank = finetune_settings(scenario)
        if method != "full":
            parts.append((_("QLoRA (NF4 weights) rank {rank}") if method == "qlora" else _("LoRA rank {rank}"))
                         .format(rank=rank))
        tp, pp = row.get("tensor_parallel", 1), row.get("pipeline_parallel", 1)
        if tp == tp and tp > 1:
            parts.append(_("tensor parallel {tp}").format(tp=f"{tp:.0f}"))
        if pp == pp and pp > 1:
            parts.append(_("{pp} pipeline stages").format(pp=f"{pp:.0f}"))
        z = row.get("zero_stage", np.nan)
        if z == z:
            parts.append(_("ZeRO-3 (FSDP full sharding)") if z == 3 else f"ZeRO-{z:.0f}")
        mb, b = row.get("micro_batch_size", np.nan), row.get("batch_size", np.nan)
        if mb == mb:
            parts.append(_("micro-batch {n}").format(n=f"{mb:.0f}"))
        elif b == b and n == n and n:
            parts.append(_("micro-batch {n}").format(n=f"{max(b // n, 1):.0f}"))
        if row.get("recompute") == "full":
            parts.append(_("full recomputation"))
    else:
        tp, b = row.get("tensor_parallel", np.nan), row.get("batch_size", np.nan)
        pp = row.get("pipeline_parallel", 1)
        if tp == tp and tp > 1:
            parts.append(_("tensor parallel {tp}").format(tp=f"{tp:.0f}"))
        if pp == pp and pp > 1:
            parts.append(_("{pp} pipeline stages across nodes").format(pp=f"{pp:.0f}"))
        ep = row.get("expert_parallel", 1)
        if ep == ep and ep > 1:
            parts.append(_("experts spread over {ep} devices (expert parallel, attention data parallel)")
                         .format(ep=f"{ep:.0f}"))
        if b == b:
            batch = _("batch {n} per device") if ep == ep and ep > 1 else _("batch {n}")
            parts.append(batch.format(n=f"{b:.0f}"))
        from .projection.for_scenario import workload_kind

        llm = workload_kind(scenario) == "llm"
        engine = _serving_engine(row.get("stack")) if llm else ""
        if engine:
            parts.append(_("served by {engine}").format(engine=engine))
        elif not llm and isinstance(row.get("stack"), str) and row["stack"]:
            # an image model's, encoder's or recommender's figures assume a stack: TensorRT's fused
            # layers run 2-5x faster than an eager framework's (data/stacks.csv), so the page says which
            parts.append(_stack_words(row["stack"]))
        mode = row.get("power_mode")
        if isinstance(mode, str) and mode:
            # a Jetson under the scenario's power envelope, in its highest nvpmodel mode within it
            parts.append(_("its {mode} power mode ({watts} W)").format(mode=mode, watts=f"{row['power_w']:g}"))
    if STAND_IN.get(scenario.precision) == p:
        parts.append(_("(in place of {precision}, which the device lacks: fp16's narrower range needs loss scaling in "
                       "training and an overflow check in serving)").format(precision=scenario.precision))
    elif p != scenario.precision:
        parts.append(_("(lower precision than the scenario's {precision}: check quality)")
                     .format(precision=scenario.precision))
    return joined(parts)
