"""What one scenario asks of every device in the catalogue.

Glue between a :class:`~accelkit.scenario.Scenario`, the model presets and the
formulas: compute needed, memory needed, and one row per device with devices
needed, days, device-hours, rental cost and memory fit. Used by the demand,
roofline and cluster chapters and by :mod:`accelkit.select`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import demand, llm, memory, units
from .catalog import memory_bytes, peak_flops
from .i18n import _
from .models import find_model, kv_elements_per_token
from .vocabulary import TRAINING_WORKLOADS

__all__ = ["edge_fit", "frame_flops", "model_of", "compute_need", "memory_need", "memory_split", "min_devices_for_memory", "per_device", "TRAINING_WORKLOADS"]

# the columns a per-device training layout may carry (accelkit.configsearch)
_LAYOUT_COLUMNS = ("zero_stage", "batch_size", "tensor_parallel", "pipeline_parallel", "micro_batch_size", "recompute")


def model_of(scenario):
    """The scenario's model as a dict: ``name, params, active_params, preset`` (row or None).

    A preset name gives its row; ``"custom"`` uses ``scenario.params``.
    """
    if scenario.model.lower() == "custom":
        if not scenario.params:
            raise ValueError("params must be given (a number of parameters > 0) when model is 'custom'")
        from .projection.shapes import custom_shape

        shaped = custom_shape(scenario)  # serving: the KV cache needs layers and heads (inferred or given)
        preset = None if shaped is None else pd.Series({**shaped[0], "active_params": float(scenario.params)})
        return {"name": "custom", "params": float(scenario.params), "active_params": float(scenario.params),
                "preset": preset}
    row = find_model(scenario.model)
    return {"name": row["name"], "params": float(row["params"]), "active_params": float(row["active_params"]), "preset": row}


def _training_need(scenario, flops_per_unit, work_unit, rule):
    """:func:`compute_need`'s answer for a training run of ``scenario.tokens`` units of work."""
    total = flops_per_unit * scenario.tokens
    deadline = scenario.time_target_days * units.SECONDS_PER_DAY
    return {"total_flops": total, "required_flops_per_s": demand.flops_per_second_for_deadline(total, deadline),
            "flops_per_token": flops_per_unit, "deadline_s": deadline, "work_unit": work_unit, "rule": rule}


def compute_need(scenario):
    """Compute the scenario needs.

    Returns
    -------
    dict
        ``total_flops`` [FLOP] (training: 6·N·D, an image model 3 × forward FLOPs × samples;
        inference: per second of serving),
        ``required_flops_per_s`` [FLOP/s] (training: to meet the time target;
        inference: requests/s × 2·N × tokens per request), ``flops_per_token``,
        ``deadline_s`` and ``rule`` (a sentence naming the formula used).
    """
    m = model_of(scenario)
    n_active = m["active_params"]
    preset = m["preset"]
    if scenario.workload in TRAINING_WORKLOADS and preset is not None and preset["kind"] in ("cnn", "vit",
                                                                                              "recommender"):
        # an image model or a recommender: forward FLOPs per sample × 3 (backward ≈ 2 × forward, Kaplan et al. 2020 §2.1)
        from .projection.vision import frame_flops as _frame_flops

        per_sample = 3.0 * _frame_flops(preset)[0]
        return _training_need(scenario, per_sample, "samples",
                              _("3 × {gflop} GFLOP forward per sample × {samples} samples (forward + backward ≈ 3 "
                                "forward passes, Kaplan et al. 2020 §2.1)").format(
                                  gflop=f"{per_sample / 3.0 / units.GIGA:.3g}", samples=f"{scenario.tokens:.3g}"))
    if scenario.workload in TRAINING_WORKLOADS:
        from .projection.finetune import flops_per_token, scenario_finetune

        ft = scenario_finetune(scenario)  # LoRA / QLoRA: forward and activation gradients, no frozen weight gradients
        per_token = flops_per_token(n_active, ft)
        words = {"params": f"{n_active:.3g}", "tokens": f"{scenario.tokens:.3g}", "method": ft["method"]}
        rule = (_("6 × {params} parameters × {tokens} tokens (Kaplan et al. 2020)").format(**words)
                if ft["method"] == "full" else
                _("4 × {params} parameters × {tokens} tokens + 6 × adapters ({method}: frozen weights get no weight "
                  "gradient, Hu et al. 2021 §4.2)").format(**words))
        return _training_need(scenario, per_token, "tokens", rule)
    kind = preset["kind"] if preset is not None else "decoder"
    if kind in ("cnn", "vit"):
        per_request = float(preset["forward_flop_per_sample"]) if pd.notna(preset.get("forward_flop_per_sample")) \
            else 2.0 * n_active
        rate = scenario.streams * scenario.frames_per_s
        return {
            "total_flops": per_request, "required_flops_per_s": per_request * rate, "flops_per_token": per_request,
            "deadline_s": np.nan, "work_unit": "frames", "requests_per_s": rate,
            "rule": _("{gflop} GFLOP per frame × {streams} streams × {fps} frames/s").format(
                gflop=f"{per_request / units.GIGA:.3g}", streams=scenario.streams, fps=f"{scenario.frames_per_s:g}"),
        }
    if kind == "recommender":
        # a recommender scores user-item pairs: the MLPs' and cross layers' FLOP per pair (its preset's
        # forward_flop_per_sample); the embedding gathers are memory traffic, not FLOP
        per_request = float(preset["forward_flop_per_sample"])
        rate = scenario.requests_per_s
        return {
            "total_flops": per_request, "required_flops_per_s": per_request * rate, "flops_per_token": per_request,
            "deadline_s": np.nan, "work_unit": "pairs", "requests_per_s": rate,
            "rule": _("{mflop} MFLOP per user-item pair × {rate} pairs/s (the MLPs and cross layers; the embedding "
                      "lookups are memory traffic)").format(mflop=f"{per_request / units.MEGA:.3g}", rate=f"{rate:g}"),
        }
    tokens_per_request = scenario.seq_len + (scenario.output_tokens if kind in ("decoder", "moe-decoder") else 0)
    per_request = demand.inference_flops(n_active, tokens_per_request)
    rate = per_request * scenario.requests_per_s
    return {
        "total_flops": per_request,
        "required_flops_per_s": rate,
        "flops_per_token": demand.inference_flops(n_active, 1.0),
        "deadline_s": np.nan,
        "work_unit": "tokens" if kind in ("decoder", "moe-decoder") else "requests",
        "requests_per_s": scenario.requests_per_s,
        "rule": _("2 × {params} parameters × {tokens} tokens per request × {rps} requests/s").format(
            params=f"{n_active:.3g}", tokens=tokens_per_request, rps=f"{scenario.requests_per_s:g}"),
    }


def memory_need(scenario, n_devices=None, tensor_parallel=1):
    """Bytes per device the scenario needs (training: model states + activations;
    inference: weights + KV cache).

    Returns
    -------
    dict of bytes per device: ``weights, gradients, optimizer, activations, kv_cache,
    total``, plus ``activations_known`` (False for custom models without a shape) and
    ``paged_optimizer`` (QLoRA's adapter optimizer state, which its paged optimizer may keep
    in host memory: not in ``optimizer`` or ``total``). Fine-tuning with LoRA / QLoRA
    (``scenario.finetune_method``) holds frozen weights and trains adapters only
    (:func:`accelkit.memory.finetune_bytes_breakdown`).
    """
    m = model_of(scenario)
    n = scenario.n_devices if n_devices is None else n_devices
    preset = m["preset"]
    out = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0, "activations": 0.0, "kv_cache": 0.0,
           "activations_known": True, "paged_optimizer": 0.0}
    if scenario.workload in TRAINING_WORKLOADS and preset is not None and preset["kind"] == "recommender":
        # fp32 tables and their Adagrad state split over the devices, the MLPs replicated
        # (accelkit.projection.recommender_training); activations not counted
        from .projection.recommender_layers import dense_params, recommender_structure, table_elements
        from .projection.recommender_training import DENSE_STATE_BYTES, table_state_bytes

        st = recommender_structure(preset["name"])
        tables = table_elements(st) * 4.0
        out["weights"] = tables / n + dense_params(st) * 4.0
        out["optimizer"] = (table_state_bytes(st, 4.0) - tables) / n + dense_params(st) * (DENSE_STATE_BYTES - 4.0)
        out["activations_known"] = False
    elif scenario.workload in TRAINING_WORKLOADS:
        from .projection.finetune import scenario_finetune

        ft = scenario_finetune(scenario)
        mode = "mixed" if scenario.precision in ("bf16", "fp16", "fp8") else scenario.precision
        parts = memory.finetune_bytes_breakdown(m["params"], ft["method"], ft["adapters"], ft["quantized"] or None,
                                                mode, "adam", zero_stage=scenario.zero_stage, n_devices=n)
        parts["optimizer"] = parts["optimizer"] - parts["paged"]
        out["paged_optimizer"] = parts["paged"]
        out.update({k: parts[k] for k in ("weights", "gradients", "optimizer")})
        shaped = preset is not None and pd.notna(preset.get("d_model")) and pd.notna(preset.get("n_layers"))
        if shaped and preset["kind"] in ("decoder", "moe-decoder", "encoder", "vit"):
            per_layer = memory.activation_bytes_per_layer(
                scenario.seq_len, scenario.batch_size, preset["d_model"], preset["n_heads"],
                tensor_parallel=tensor_parallel, recompute="selective",
            )
            # data parallel: each device holds its share of the batch
            out["activations"] = per_layer * preset["n_layers"] / max(n // tensor_parallel, 1)
        else:
            out["activations_known"] = False
    else:
        out["weights"] = memory.weight_bytes(m["params"], scenario.precision) / n
        if preset is not None and not np.isnan(kv_elements_per_token(preset)):
            kv_precision = "bf16" if scenario.precision in ("fp32", "tf32") else scenario.precision
            if kv_precision == "int4":
                kv_precision = "int8"
            out["kv_cache"] = llm.model_kv_bytes(
                preset, scenario.seq_len + scenario.output_tokens, scenario.batch_size, kv_precision
            ) / n
    out["total"] = out["weights"] + out["gradients"] + out["optimizer"] + out["activations"] + out["kv_cache"]
    return out


def memory_split(scenario):
    """Per-device memory as ``fixed + sharded / n``: (fixed, sharded) bytes.

    Every term of :func:`memory_need` is either replicated on each device or
    divided by the device count, so two evaluations recover both parts.
    """
    one = memory_need(scenario, n_devices=1)["total"]
    two = memory_need(scenario, n_devices=2)["total"]
    sharded = 2.0 * (one - two)
    return one - sharded, sharded


def min_devices_for_memory(scenario, usable_bytes):
    """Fewest devices on which the scenario's per-device memory fits ``usable_bytes``.

    Solves ``fixed + sharded / n <= usable`` for the smallest whole n (ZeRO stages
    replicate part of the state, so more devices do not always help: ``inf`` where
    the replicated part alone does not fit).
    """
    fixed, sharded = memory_split(scenario)
    usable = np.asarray(usable_bytes, dtype=float)
    room = usable - fixed
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(room > 0, np.ceil(np.round(sharded / room, 9)), np.inf)
    n = np.where(np.isnan(usable), np.nan, np.maximum(n, 1))
    if isinstance(usable_bytes, pd.Series):
        return pd.Series(n, index=usable_bytes.index)
    return n


def per_device(scenario, catalog, devices=None, reserve_fraction=memory.DEFAULT_RESERVE_FRACTION, measurements=None,
               search=False, layout=None):
    """One row per catalogue device: what the scenario needs of it, as the engine projects it.

    Parameters
    ----------
    scenario : Scenario
    catalog : DataFrame
    devices : list of str, optional
        Restrict to these names (default: every device).
    measurements : DataFrame, optional
        The person's probe results (they replace the published efficiencies of
        their device).
    search : bool
        LLM serving: pick each device's batch and tensor-parallel size under the
        scenario's latency targets instead of using its ``batch_size`` (see
        :mod:`accelkit.configsearch`, which also searches precision and ZeRO stage).
    layout : DataFrame, optional
        Training: ``zero_stage`` and ``batch_size`` per device (index as ``catalog``)
        in place of the scenario's, and optionally ``tensor_parallel``,
        ``pipeline_parallel``, ``micro_batch_size`` and ``recompute`` -- each device
        projected in its own configuration, in one pass (the configuration search's
        choice); with these, the memory per device is the engine's for that layout.

    Returns
    -------
    pandas.DataFrame
        ``name, vendor, segment, peak_flops`` [dense datasheet FLOP/s at the
        scenario's precision], the projection's figures (see
        :func:`accelkit.projection.for_scenario.project_scenario`: ``days_on_n``,
        ``latency_s``, ``work_per_device_hour`` … each with ``_low``/``_high``, and
        the efficiency sources), ``devices_for_target`` (whole devices to meet the
        time target or the serving rate at the projected per-device speed),
        ``device_hours``, ``cloud_usd`` (device-hours × cheapest on-demand price,
        NaN where no price), ``memory_per_device_gb``, ``memory_gb``, ``fits`` (on
        ``n_devices``), ``min_devices_memory`` and ``devices_needed`` (the larger of the
        compute and memory counts).
    """
    from .projection.for_scenario import project_scenario

    if devices:
        catalog = catalog[catalog["name"].isin(devices)]
    if layout is not None:
        layout = layout.loc[catalog.index, [c for c in _LAYOUT_COLUMNS if c in layout]]
    need = compute_need(scenario)
    if scenario.precision == "int8":
        from .catalog import int8_dense_estimate

        peak, basis = int8_dense_estimate(catalog)
    else:
        peak = peak_flops(catalog, scenario.precision)
        basis = pd.Series("published dense", index=catalog.index).where(peak.notna(), "")
    out = catalog[["name", "vendor", "segment", "memory_gb", "tdp_w", "cloud_usd_per_hour"]].copy()
    out["peak_flops"] = peak
    out["peak_basis"] = basis
    proj = project_scenario(scenario, catalog, measurements, search=search, layout=layout)
    proj = proj.drop(columns=[c for c in ("name",) if c in proj])
    out = pd.concat([out, proj], axis=1)
    training = scenario.workload in TRAINING_WORKLOADS
    if not training:
        required = need.get("requests_per_s", scenario.requests_per_s) * (
            scenario.output_tokens if len(out) and out["kind"].iloc[0] == "llm" else 1.0)
    # columns gathered as arrays and added at once (column-by-column insertion dominated the run time)
    extra = {}
    # a fast projection (the "_high" rate) needs the fewest devices: the count's low end
    with np.errstate(divide="ignore", invalid="ignore"):
        for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
            # work per second per device
            rate = out[f"work_per_device_hour{src}"].to_numpy(dtype=float) / units.SECONDS_PER_HOUR
            if training:
                target_s = scenario.time_target_days * units.SECONDS_PER_DAY
                extra[f"devices_for_target{level}"] = np.maximum(
                    np.ceil(np.round(scenario.tokens / (rate * target_s), 9)), 1.0)
                extra[f"device_hours{level}"] = scenario.tokens / rate / units.SECONDS_PER_HOUR
            else:
                extra[f"devices_for_target{level}"] = np.maximum(np.ceil(np.round(required / rate, 9)), 1.0)
                # serving runs around the clock: an hour of serving costs one device-hour per device
                extra[f"device_hours{level}"] = extra[f"devices_for_target{level}"]
    if not training:
        extra["days_on_n"] = np.full(len(out), np.nan)
    extra["cloud_usd"] = extra["device_hours"] * out["cloud_usd_per_hour"].to_numpy(dtype=float)
    device_mem = memory_bytes(catalog)
    usable = memory.usable_bytes(device_mem.fillna(1.0), reserve_fraction).where(device_mem.notna()).to_numpy()
    if layout is None:
        need_bytes = np.full(len(out), memory_need(scenario)["total"])
        min_devices = np.asarray(min_devices_for_memory(scenario, usable), dtype=float)
    elif "micro_batch_size" in layout:
        # the engine's memory of each device's own layout (tensor, pipeline, ZeRO, recomputation)
        need_bytes = out["memory_per_device_bytes"].to_numpy(dtype=float)
        n = scenario.n_devices
        with np.errstate(invalid="ignore"):
            fits_n = need_bytes <= usable
        # where no layout fits: fully sharded state and one sequence per device, on more devices
        sparse = scenario.copy().update(zero_stage=3, batch_size=n)
        estimate = np.asarray(min_devices_for_memory(sparse, usable), dtype=float)
        min_devices = np.where(fits_n, np.fmin(estimate, n), np.fmax(estimate, n + 1))
        min_devices = np.where(np.isnan(usable), np.nan, min_devices)
    else:
        need_bytes, min_devices = np.empty(len(out)), np.empty(len(out))
        z, b = layout["zero_stage"].to_numpy(dtype=int), layout["batch_size"].to_numpy(dtype=int)
        for zi, bi in set(zip(z.tolist(), b.tolist())):
            rows = (z == zi) & (b == bi)
            trial = scenario.copy().update(zero_stage=zi, batch_size=bi)
            need_bytes[rows] = memory_need(trial)["total"]
            min_devices[rows] = min_devices_for_memory(trial, usable[rows])
    extra["memory_per_device_gb"] = need_bytes / units.GIGA
    with np.errstate(invalid="ignore"):
        extra["fits"] = need_bytes <= usable
    extra["min_devices_memory"] = min_devices
    extra["devices_needed"] = np.fmax(extra["devices_for_target"], extra["min_devices_memory"])
    order = list(out.columns) + [c for c in extra if c not in out.columns]
    out = out.drop(columns=[c for c in extra if c in out]).reset_index(drop=True)
    return pd.concat([out, pd.DataFrame(extra)], axis=1)[order]


def frame_flops(model_name):
    """FLOP of one forward pass of a vision preset (its published figure, or 2·N)."""
    from .projection.vision import frame_flops as _frame_flops

    return _frame_flops(model_name)


def _edge_peaks(rows, precision, use_npu=True):
    """The dense peak [OP/s] chapter 07 gives each device's convolutions, and its basis in words:
    INT8 from :func:`accelkit.catalog.int8_dense_estimate` (GPU only when ``use_npu`` is off and
    the device has a DLA/NPU figure), else the published dense fp16 (or bf16)."""
    from .catalog import int8_dense_estimate

    if precision == "int8":
        ops, basis = int8_dense_estimate(rows)
        if not use_npu:
            gpu_only = (rows["int8_tops_sparse"] - rows["npu_int8_tops_sparse"]) / 2.0 * units.TERA
            has_npu = rows["npu_int8_tops_sparse"].notna()
            ops = ops.where(~has_npu, gpu_only)
            basis = basis.where(~has_npu, "GPU only: half the (total − DLA) sparse figure")
        return ops, basis
    ops = rows["fp16_tflops"].fillna(rows["bf16_tflops"]) * units.TERA
    return ops, pd.Series("published dense fp16", index=rows.index).where(ops.notna(), "")


def edge_fit(catalog, streams, fps, model="YOLOv8s", precision="int8", utilization=None, latency_ms=None,
             power_w=None, budget_usd=None, use_npu=True, devices=None, batch_size=1, stack=None):
    """Which edge devices can run ``streams × fps`` frames of a vision model.

    Parameters
    ----------
    catalog : DataFrame
    streams, fps : numeric
        Camera streams and frames per second per stream.
    model : str
        A vision preset (``forward_flop_per_sample`` at its input size).
    precision : {"int8", "fp16"}
        INT8 (TensorRT-style post-training quantisation) or FP16.
    utilization : float, optional
        The person's share of the dense peak the convolutions reach; ``None``: the
        achievable matmul rate from published efficiencies.
    latency_ms, power_w, budget_usd : float, optional
        Targets: compute time per frame, power per box, total purchase budget.
    use_npu : bool
        Count the DLA/NPU engines (INT8 only); otherwise GPU only.
    devices : list of str, optional
        Restrict to these names (default: the edge segment).
    batch_size : int
        Frames per pass (the scenario's batch).

    The frame time is :func:`accelkit.projection.vision.vision`'s, the function the
    decision and the claims call: compute, weight traffic and the small-batch floor.

    Returns
    -------
    pandas.DataFrame
        One row per device: ``name, ops_per_s`` [OP/s], ``basis``, ``units``,
        ``fps_per_unit``, ``frame_ms`` (time of one pass of ``batch_size`` frames: what a
        frame waits for its result),
        ``run_mode`` (the ``nvpmodel`` mode a Jetson over ``power_w`` runs in: its highest within
        it; "" for the catalogue's top mode), ``unit_w`` (one unit's power in that mode, else its
        TDP), ``power_w`` (all units), ``cost_usd`` (NaN without a list price),
        ``weights_fit``, ``meets`` (all targets), ``reason`` (the first target
        missed, in words) and ``why`` (the projection's reason when a frame time cannot be
        projected, in English as the projection writes it; translate with
        :func:`accelkit.select.reasons.why_words`).
    """
    from ._validate import check_choice, check_positive

    check_positive("streams", streams, "a number of streams")
    check_positive("fps", fps, "a frame rate")
    precision = check_choice("precision", precision, ["int8", "fp16"])
    per_frame, preset = frame_flops(model)
    rows = catalog[catalog["segment"] == "edge"] if not devices else catalog[catalog["name"].isin(devices)]
    ops, basis = _edge_peaks(rows, precision, use_npu)
    out = rows[["name", "vendor", "tdp_w", "power_mode", "price_usd", "memory_gb"]].copy()
    out["ops_per_s"] = ops
    out["basis"] = basis
    from .projection.vision import vision

    # over a power budget, a Jetson runs in its highest nvpmodel mode within it (vision() picks it)
    projected = vision(None, preset, precision, batch_size, catalog=rows, utilization=utilization,
                       peak=ops.to_numpy(dtype=float), power_envelope_w=power_w, stack=stack)
    out["fps_per_unit"] = projected["frames_per_s"].to_numpy()
    out["units"] = np.ceil(np.round(streams * fps / out["fps_per_unit"], 9)).clip(lower=1)
    out["frame_ms"] = projected["frame_ms"].to_numpy()
    out["run_mode"] = projected["power_mode"].to_numpy()
    out["unit_w"] = np.where(out["run_mode"] != "", projected["power_w"].to_numpy(), out["tdp_w"].to_numpy())
    out["power_w"] = out["units"] * out["unit_w"]
    out["cost_usd"] = out["units"] * out["price_usd"]
    weights = float(preset["params"]) * memory.bytes_per_param(precision)
    out["weights_fit"] = (out["memory_gb"] * units.GIGA > weights) | out["memory_gb"].isna()
    reasons = pd.Series("", index=out.index)
    reasons[out["ops_per_s"].isna()] = _("no published {precision} figure").format(precision=precision)
    unprojected = (reasons == "") & out["frame_ms"].isna()
    reasons[unprojected] = [_("cannot be projected: {why}").format(why=w)
                            for w in projected["why"].to_numpy()[unprojected.to_numpy()]]
    out["why"] = np.where(unprojected.to_numpy(), projected["why"].astype(str).to_numpy(), "")
    if latency_ms is not None:
        slow = (reasons == "") & (out["frame_ms"] > latency_ms)
        reasons[slow] = [_("{ms} ms per frame > {target} ms").format(ms=f"{v:.1f}", target=f"{latency_ms:g}")
                         for v in out.loc[slow, "frame_ms"]]
    if power_w is not None:
        hot = (reasons == "") & (out["unit_w"] > power_w)
        reasons[hot] = [_("{watts} W per box > {envelope} W").format(watts=f"{v:g}", envelope=f"{power_w:g}")
                        for v in out.loc[hot, "unit_w"]]
    if budget_usd is not None:
        dear = (reasons == "") & (out["cost_usd"] > budget_usd)
        reasons[dear] = [_("{cost} > budget {budget}").format(cost=f"${v:,.0f}", budget=f"${budget_usd:,.0f}")
                         for v in out.loc[dear, "cost_usd"]]
        unpriced = (reasons == "") & out["cost_usd"].isna()
        reasons[unpriced] = _("no list price in the catalogue")
    reasons[(reasons == "") & ~out["weights_fit"]] = _("weights do not fit in memory")
    out["reason"] = reasons
    out["meets"] = reasons == ""
    return out.reset_index(drop=True)
