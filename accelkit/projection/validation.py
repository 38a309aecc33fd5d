"""Validation in the open: the engine's projections against published measurements.

``data/validation/measured.csv`` lists measurements people published -- batch-1
decode speed, fixed-batch and maximum serving throughput, time to first token,
training throughput, and micro-benchmarks -- each with its conditions and
``source_url``. :func:`validate` projects every case with the engine and reports
``predicted / measured``; :func:`summary` gives the error per category and overall
as a *geometric-mean error* ``exp(mean |ln(predicted/measured)|) − 1`` (a case 2×
too fast and one 2× too slow both count as 100 %), on all cases and on each half
of the ``split`` column: the ``fit`` half is the only data :func:`fit` may use to set
the engine's fitted constants; the ``holdout`` half is reported, never fitted.

Custom architectures used by the cases (Megatron-LM's GPT configurations and the
like) live in ``data/validation/models.csv`` with their sources.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .. import units
from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, check_rows, problem, raise_problems, read_rows
from .constants import FITTED, constants, constants_table
from .load_tests import first_wave_floor_s, first_wave_problems

__all__ = ["load_measured", "load_validation_models", "validate", "summary", "summary_by_vendor", "device_vendors",
           "fit", "predict_case", "known_gap_cases", "predict_case_range", "geometric_mean_error", "interval_coverage",
           "first_wave_floor_s", "CATEGORIES", "METRICS", "CONVENTIONS"]


CATEGORIES = ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft", "training",
              "microbench_matmul", "microbench_memory", "microbench_allreduce", "serving_load_ttft",
              "serving_load_tpot", "serving_expert_parallel", "vision_single_stream", "vision_offline",
              "encoder_single_stream", "encoder_offline", "recommender_offline", "recommender_training", "gnn_offline")
#: image models and encoders (:func:`~accelkit.projection.vision.vision`)
VISION_CATEGORIES = ("vision_single_stream", "vision_offline", "encoder_single_stream", "encoder_offline")
#: recommenders (:func:`~accelkit.projection.recommender.recommender`)
RECOMMENDER_CATEGORIES = ("recommender_offline", "recommender_training")
#: the categories measured under load (``concurrency`` or ``request_rate`` given): the engine's
#: :func:`~accelkit.projection.inference.serve_load`
LOAD_CATEGORIES = ("serving_load_ttft", "serving_load_tpot")
#: metric -> unit it is given in
METRICS = {
    "tpot_s": "s", "ttft_s": "s", "request_latency_s": "s", "ttft_mean_s": "s", "ttft_p90_s": "s", "tpot_p90_s": "s",
    "output_tokens_per_s": "tokens/s", "output_tokens_per_s_per_device": "tokens/s",
    "total_tokens_per_s": "tokens/s", "total_tokens_per_s_per_device": "tokens/s",
    "tokens_per_s_per_device": "tokens/s", "tflops_per_device": "TFLOPS", "mfu": "1", "step_s": "s",
    "device_hours": "h", "latency_s": "s", "samples_per_s_per_device": "samples/s",
    "mlperf_dlrm_samples_per_s_per_device": "samples/s", "samples_per_s": "samples/s", "matmul_tflops": "TFLOPS", "memory_gbs": "GB/s", "allreduce_busbw_gbs": "GB/s",
}
#: how a source counts training FLOP (to turn its TFLOP/s or MFU into tokens/s)
CONVENTIONS = ("6N", "6N+attn", "palm", "megatron_full_recompute", "megatron_no_recompute")

_INT_COLS = ["n_devices", "tensor_parallel", "pipeline_parallel", "batch_size", "max_batch_size", "input_tokens",
             "output_tokens", "seq_len", "micro_batch", "virtual_stages", "context_parallel", "zero_stage", "concurrency",
             "expert_parallel", "requests_per_client", "synchronized", "token_budget"]
_FLOAT_COLS = ["value", "global_batch_tokens", "network_gbps", "tokens", "serving_reserve_fraction", "message_bytes",
               "table_share_on_device"]

#: training tokens assumed where a measured case gives none (a trillion; the step time does not depend on it)
_TOKENS_WHEN_UNSTATED = units.TERA


@lru_cache(maxsize=2)
def _read(path):
    return read_rows(path, Path(path).name, CatalogError)


def load_validation_models(path=None):
    """Architectures of the validation cases that are not presets: name -> dict."""
    path = data_path("validation/models.csv") if path is None else path
    frame = _read(path)
    out = {}
    for _, r in frame.iterrows():
        spec = {k: r[k] for k in frame.columns if r[k] != "" and k not in ("source_url", "notes")}
        for k in ("params", "n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "ffn_dim", "vocab"):
            if k in spec:
                spec[k] = float(spec[k])
        out[r["name"]] = spec
    return out


MEASURED_SCHEMA = Schema("the validation cases CSV", (
    Column("case_id", required=True, nonempty=True),
    Column("category", required=True, choices=CATEGORIES, nonempty=True),
    Column("metric", required=True, choices=tuple(METRICS), nonempty=True),
    Column("unit", required=True),
    Column("split", required=True, choices=("fit", "holdout"), nonempty=True),
    Column("source", required=True, nonempty=True),
    Column("source_url", required=True),
    *(Column(c, "number", expected="a number") for c in _INT_COLS + _FLOAT_COLS),
), unique="case_id", unique_message="duplicate case_id {value!r}")


def _mixed_within_a_source(frame, column, origin, complaint):
    """One problem per source whose cases give ``column`` more than one value (none if the column is absent)."""
    if column not in frame:
        return []
    values = frame.groupby("source")[column].nunique()
    return [problem(origin, frame.index[frame["source"] == source][0], column, f"source {source!r} {complaint}")
            for source in values.index[values > 1]]


def load_measured(path=None):
    """The validation cases, typed; raises :class:`CatalogError` naming line and column."""
    path = Path(data_path("validation/measured.csv") if path is None else path)
    frame, problems = check_rows(_read(path), MEASURED_SCHEMA, path.name, CatalogError)
    for i, r in frame.iterrows():
        def bad(column, message):
            problems.append(problem(path.name, i, column, message))
        if r["metric"] in METRICS and r["unit"] != METRICS[r["metric"]]:
            bad("unit", f"{r['metric']} is given in {METRICS[r['metric']]}, got {r['unit']!r}")
        if not str(r["source_url"]).startswith("http"):
            bad("source_url", "expected the URL of the published measurement")
        if not (r["value"] > 0):
            bad("value", "expected a measured value > 0")
    if not problems:
        # a whole source is fitted or held out, never split (the holdout measures transfer to unseen sources)
        problems += _mixed_within_a_source(frame, "split", path.name, "has cases in both fit and holdout; expected "
                                           "one split per source (tools/assign_split.py)")
        # a known gap is a whole source's: one reason for all its cases, or none
        problems += _mixed_within_a_source(frame, "known_gap", path.name, "gives different known_gap texts; expected "
                                           "one reason for the whole source, or none")
        # a mean TTFT that counts its first wave as 1/r of the requests cannot beat that wave's prefill at the peak
        problems += first_wave_problems(frame, path.name, load_validation_models(), LOAD_CATEGORIES)
    raise_problems(path.name, problems, CatalogError)
    return frame


def _model_for(name, extra):
    return extra.get(name, name)


def _opt(value, cast=int):
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else cast(value)


def _training_flops_per_token(convention, shape, seq_len):
    from .training import model_flops_per_token

    n_l, h, v = shape.n_layers, shape.d_model, (shape.vocab if np.isfinite(shape.vocab) else 0.0)
    if convention == "6N":
        return 6.0 * shape.active_params
    if convention == "6N+attn":
        # llm-foundry's MFU: 6 N (all parameters) + 12 n_layers d_model s (attention, no causal halving)
        return 6.0 * shape.active_params + 12.0 * n_l * h * seq_len
    if convention == "palm":
        return model_flops_per_token(shape, seq_len)
    # Narayanan et al. 2021, appendix: 96 B s l h² (1 + s/6h + V/16lh) per batch with full recompute
    # (4 passes); without recomputation 72 B s l h² (1 + s/6h + V/12lh) (3 passes)
    if convention == "megatron_full_recompute":
        return 96.0 * n_l * h * h * (1.0 + seq_len / (6.0 * h) + v / (16.0 * n_l * h))
    if convention == "megatron_no_recompute":
        return 72.0 * n_l * h * h * (1.0 + seq_len / (6.0 * h) + v / (12.0 * n_l * h))
    raise ValueError(f"flop_convention must be one of {', '.join(CONVENTIONS)}; got {convention!r}")


def predict_case(case, extra_models=None, **constant_overrides):
    """The engine's projection of one case's metric (same unit as the case's value)."""
    return predict_case_range(case, extra_models, **constant_overrides)[0]


#: batches an offline case that states none may run: MLPerf Offline submitters tune it (NVIDIA's v3.0
#: ResNet-50 Offline configs give 32 for an L4, 2048 for an H100 SXM; measured.csv cites them), so the
#: case is read at the one the engine projects fastest (a fixed 256 put the L4 and L40S past their L2)
OFFLINE_BATCHES = tuple(2 ** k for k in range(12))


def _predict_vision(case, **constant_overrides):
    from .vision import vision

    cat, metric = case["category"], case["metric"]
    seq = _opt(case["seq_len"])
    if cat.startswith("encoder") and seq is None:
        raise ValueError("an encoder case needs seq_len")
    stated = _opt(case["batch_size"])
    batches = [stated] if stated else ([1] if cat.endswith("single_stream") else OFFLINE_BATCHES)
    runs = [vision(case["device"], case["model"], precision=case["precision"] or "int8", batch_size=int(b), seq_len=seq,
                   stack=case.get("stack") or None, **constant_overrides) for b in batches]
    r = max(runs, key=lambda run: float(np.nan_to_num(run["frames_per_s"], nan=-1.0)))
    if metric == "latency_s":
        return r["latency_s"], r["latency_s_low"], r["latency_s_high"]
    if metric == "samples_per_s_per_device":
        return r["frames_per_s"], r["frames_per_s_low"], r["frames_per_s_high"]
    raise ValueError(f"metric {metric!r} is not a vision metric")


#: user-item pairs in one MLPerf Inference DLRM-v2 sample: the reference's aggregation trace draws
#: 100-700 per sample; its 100-sample verification trace holds 27,000 pairs (mlcommons/inference,
#: recommendation/dlrm_v2/pytorch/tools/dist_trace_verification.txt, commit fca76d7): a mean of 270
#: (the full quantile file is not published beside it; a 100-sample mean, about ±6 % at one sigma)
MLPERF_DLRM_PAIRS_PER_SAMPLE = 270.0


def _predict_recommender(case, **constant_overrides):
    from .recommender import RECOMMENDER_BATCH, recommender
    from .recommender_training import RECOMMENDER_TRAIN_BATCH, recommender_training

    if case["category"] == "recommender_training":
        if case["metric"] != "samples_per_s_per_device":
            raise ValueError(f"metric {case['metric']!r} is not a recommender training metric")
        r = recommender_training(case["device"], case["model"], precision=case["precision"] or "bf16",
                                 n_devices=_opt(case["n_devices"]) or 1,
                                 batch_size=_opt(case["batch_size"]) or RECOMMENDER_TRAIN_BATCH, **constant_overrides)
        return tuple(r[f"samples_per_s_per_device{level}"] for level in ("", "_low", "_high"))
    if case["metric"] != "mlperf_dlrm_samples_per_s_per_device":
        raise ValueError(f"metric {case['metric']!r} is not a recommender metric")
    share = case.get("table_share_on_device")
    r = recommender(case["device"], case["model"], precision=case["precision"] or "int8",
                    batch_size=_opt(case["batch_size"]) or RECOMMENDER_BATCH,
                    n_devices=_opt(case["n_devices"]) or 1, stack=case.get("stack") or None,
                    table_share_on_device=None if share is None or share != share else float(share),
                    **constant_overrides)
    return tuple(r[f"samples_per_s{level}"] / MLPERF_DLRM_PAIRS_PER_SAMPLE for level in ("", "_low", "_high"))


def predict_case_range(case, extra_models=None, **constant_overrides):
    """The engine's projection of one case's metric and its stated range: ``(mid, low, high)``
    in the case's unit (``low <= high``; ``low = high = mid`` where the engine states none)."""
    mid, *rng = _predict_case(case, extra_models, **constant_overrides)
    if not rng:
        return mid, mid, mid
    lo, hi = rng
    return mid, min(lo, hi), max(lo, hi)


def _predict_case(case, extra_models=None, **constant_overrides):
    from . import ceilings
    from .inference import inference
    from .shapes import resolve_model
    from .training import training

    extra = load_validation_models() if extra_models is None else extra_models
    metric, cat = case["metric"], case["category"]
    if cat == "microbench_matmul":
        return (units.flops_to_tflops(ceilings.matmul_flops(case["device"], case["precision"])),)
    if cat == "microbench_memory":
        return (units.bytes_per_s_to_gbs(ceilings.memory_bandwidth(case["device"])),)
    if cat == "microbench_allreduce":
        return (ceilings.allreduce_bus_bandwidth(case["device"], int(case["n_devices"]),
                                                float(case.get("message_bytes") or 1 << 30)) / units.GIGA,)
    if cat in VISION_CATEGORIES:
        return _predict_vision(case, **constant_overrides)
    if cat in RECOMMENDER_CATEGORIES:
        return _predict_recommender(case, **constant_overrides)
    if cat == "gnn_offline":
        from .gnn import predict_gnn_case
        return predict_gnn_case(case, **constant_overrides)
    model = _model_for(case["model"], extra)
    if cat == "training":
        seq = int(case["seq_len"])
        r = training(case["device"], model, tokens=float(case["tokens"]) if case["tokens"] == case["tokens"] else _TOKENS_WHEN_UNSTATED,
                     precision=case["precision"] or "bf16", n_devices=int(case["n_devices"]),
                     tensor_parallel=_opt(case["tensor_parallel"]) or 1,
                     pipeline_parallel=_opt(case["pipeline_parallel"]) or 1, seq_len=seq,
                     global_batch_tokens=_opt(case["global_batch_tokens"], float),
                     recompute=case["recompute"] or "selective", zero_stage=_opt(case["zero_stage"]),
                     micro_batch_size=_opt(case["micro_batch"]) or 1,
                     virtual_stages=_opt(case["virtual_stages"]) or 1,
                     context_parallel=_opt(case["context_parallel"]) or 1,
                     network_gbps=_opt(case["network_gbps"], float), check_memory=False, **constant_overrides)
        shape = resolve_model(model)
        per_dev = r["tokens_per_s_per_device"]
        # a rate derived from tokens/s carries its range as the same factors
        lo_f, hi_f = r["tokens_per_s_per_device_low"] / per_dev, r["tokens_per_s_per_device_high"] / per_dev
        if metric in ("tokens_per_s_per_device", "step_s", "device_hours"):
            return r[metric], r[f"{metric}_low"], r[f"{metric}_high"]
        flops = _training_flops_per_token(case["flop_convention"] or "palm", shape, seq) * per_dev
        if metric == "tflops_per_device":
            v = units.flops_to_tflops(flops)
            return v, v * lo_f, v * hi_f
        if metric == "mfu":
            peak = ceilings.device_ceilings().set_index("name").loc[case["device"], f"peak_{case['precision'] or 'bf16'}"]
            return flops / peak, flops / peak * lo_f, flops / peak * hi_f
        raise ValueError(f"metric {metric!r} is not a training metric")
    r = inference(case["device"], model, precision=case["precision"] or "bf16", n_devices=int(case["n_devices"]),
                  tensor_parallel=_opt(case["tensor_parallel"]), batch_size=_opt(case["batch_size"]),
                  input_tokens=int(case["input_tokens"]), output_tokens=int(case["output_tokens"]),
                  kv_precision=case["kv_precision"] or None, schedule=case["schedule"] or "continuous",
                  max_batch_size=_opt(case["max_batch_size"]), check_memory=False,
                  concurrency=_opt(case.get("concurrency")), expert_parallel=_opt(case.get("expert_parallel")),
                  requests_per_client=_opt(case.get("requests_per_client")), stack=case.get("stack") or None,
                  synchronized=bool(_opt(case.get("synchronized"))), token_budget=_opt(case.get("token_budget")),
                  **{**({"serving_reserve_fraction": float(case["serving_reserve_fraction"])}
                        if case.get("serving_reserve_fraction") == case.get("serving_reserve_fraction") else {}),
                     **constant_overrides})
    if metric in r:
        return r[metric], r.get(f"{metric}_low", r[metric]), r.get(f"{metric}_high", r[metric])
    if metric.startswith("total_tokens_per_s"):
        out = metric.replace("total_", "output_")
        scale = (case["input_tokens"] + case["output_tokens"]) / case["output_tokens"]
        return r[out] * scale, r[f"{out}_low"] * scale, r[f"{out}_high"] * scale
    raise ValueError(f"metric {metric!r} is not an inference metric")


def validate(path=None, **constant_overrides):
    """Every case with ``predicted`` (in the case's unit), its stated range ``predicted_low`` ..
    ``predicted_high`` and ``in_range`` (1 if the measurement falls inside, NaN where no range
    is stated), ``ratio`` = projected speed / measured speed (for a time, measured /
    projected: above 1 always means too optimistic) and ``error`` = ratio − 1.

    A case the engine cannot project (a device or figure missing) gets NaN and
    its reason in ``problem``.
    """
    cases = load_measured(path)
    extra = load_validation_models()
    predicted, problems = [], []
    for _, case in cases.iterrows():
        try:
            predicted.append(tuple(float(v) for v in predict_case_range(case, extra, **constant_overrides)))
            problems.append("")
        except (ValueError, KeyError) as exc:
            predicted.append((np.nan, np.nan, np.nan))
            problems.append(str(exc))
    out = cases.copy()
    out["predicted"], out["predicted_low"], out["predicted_high"] = (
        np.array(predicted, dtype=float).reshape(-1, 3).T if predicted else ([], [], []))
    # inside the stated range (the microbenchmarks state none)
    with np.errstate(invalid="ignore"):
        out["in_range"] = np.where(out["predicted_low"] < out["predicted_high"],
                                   (out["value"] >= out["predicted_low"]) & (out["value"] <= out["predicted_high"]),
                                   np.nan)
    # compare as speeds, so that a ratio above 1 always means "too optimistic"
    is_time = out["unit"].isin(["s", "h"])
    out["ratio"] = np.where(is_time, out["value"] / out["predicted"], out["predicted"] / out["value"])
    out["error"] = out["ratio"] - 1.0
    out["problem"] = problems
    return out


def geometric_mean_error(ratios):
    """``exp(mean |ln ratio|) − 1`` [fraction] over the finite positive ratios: the validation's
    error measure (a ratio of 2 and one of 1/2 are the same error); NaN for none."""
    r = np.asarray(ratios, dtype=float)
    r = r[np.isfinite(r) & (r > 0)]
    return float(np.exp(np.mean(np.abs(np.log(r)))) - 1.0) if r.size else np.nan


def interval_coverage(in_range):
    """Share of the cases whose measurement falls inside the stated range [fraction]; NaN for
    none with a range."""
    v = pd.Series(in_range, dtype=float).dropna()
    return float(v.mean()) if len(v) else np.nan


def known_gap_cases(results):
    """Boolean per case: its source is listed as a known gap (``measured.csv``'s ``known_gap``: a whole
    source off for a reason the engine does not model, named there). False where the column is absent."""
    if "known_gap" not in results:
        return pd.Series(False, index=results.index)
    return results["known_gap"].fillna("").astype(str).str.strip() != ""


def _summary_row(name, g):
    ok = g[np.isfinite(g["ratio"])]
    worst = ok.loc[np.abs(np.log(ok["ratio"])).idxmax()] if len(ok) else None
    fit_, hold = ok["split"] == "fit", ok["split"] == "holdout"
    gap = known_gap_cases(ok)
    return {
        "category": name, "cases": len(g), "projected": len(ok),
        "sources": g["source"].nunique() if "source" in g else np.nan,
        "gm_error": geometric_mean_error(ok["ratio"]),
        "gm_error_fit": geometric_mean_error(ok.loc[fit_, "ratio"]),
        "gm_error_holdout": geometric_mean_error(ok.loc[hold, "ratio"]),
        # the same figure without the sources listed as known gaps (their cases still count above)
        "known_gap_cases": int(gap.sum()),
        "gm_error_without_gaps": geometric_mean_error(ok.loc[~gap, "ratio"]),
        "coverage": interval_coverage(ok.get("in_range", pd.Series(dtype=float))),
        "coverage_holdout": interval_coverage(ok.loc[hold].get("in_range", pd.Series(dtype=float))),
        "median_ratio": float(ok["ratio"].median()) if len(ok) else np.nan,
        "worst_case": worst["case_id"] if worst is not None else "",
        "worst_ratio": float(worst["ratio"]) if worst is not None else np.nan,
    }


def summary(results):
    """Geometric-mean error per category, split and overall, with counts, the share of cases
    inside the stated range (``coverage``; nominal :data:`accelkit.projection.intervals.INTERVAL_LEVEL`) and the worst case.

    ``gm_error_holdout`` and ``coverage_holdout`` cover the held-out sources only: whole
    publications the fitted constants and the calibrated ranges never saw. ``gm_error_without_gaps``
    leaves out the ``known_gap_cases``: the cases of sources ``measured.csv`` lists as known gaps
    (``known_gap``: a whole source off for a reason the engine does not model, with that reason);
    every other figure counts them."""
    groups = [("all", results)] + [(c, results[results["category"] == c]) for c in CATEGORIES
                                    if (results["category"] == c).any()]
    return pd.DataFrame([_summary_row(name, g) for name, g in groups])


def summary_by_vendor(results, catalog=None):
    """:func:`summary`'s figures per device vendor (NVIDIA, AMD, Intel, Google, ...), from the
    catalogue's ``vendor`` column."""
    v = device_vendors(results, catalog)
    return pd.DataFrame([_summary_row(name, results[v == name]) for name in sorted(v.unique())]).rename(
        columns={"category": "vendor"})


def device_vendors(results, catalog=None):
    """Each result's device vendor (the catalogue's ``vendor`` column; "?" for a device it lacks)."""
    from ..catalog import load_catalog

    vendor = (catalog if catalog is not None else load_catalog()).set_index("name")["vendor"]
    return results["device"].map(vendor).fillna("?")


def fit(path=None, names=FITTED, passes=3, grid=None):
    """Set the fitted constants by minimising ``mean |ln(predicted/measured)|`` on the
    ``fit`` split only (coordinate search over a log-spaced grid per constant).

    Returns
    -------
    (dict, pandas.DataFrame)
        The fitted values, and the summary before and after.
    """
    cases = load_measured(path)
    fit_cases = cases[cases["split"] == "fit"]
    extra = load_validation_models()
    base = constants()
    current = {n: base[n] for n in names}
    grids = grid or {
        "decode_step_overhead_s": np.r_[0.0, np.geomspace(1e-5, 3e-3, 25)],
        "decode_layer_overhead_s": np.r_[0.0, np.geomspace(1e-7, 1e-4, 25)],
        "prefill_overhead_s": np.r_[0.0, np.geomspace(1e-4, 5e-2, 20)],
        "train_elementwise_bytes_per_token_layer": np.r_[0.0, np.geomspace(5.0, 400.0, 20)],
        "train_step_overhead_s": np.r_[0.0, np.geomspace(1e-3, 2.0, 20)],
        "dp_overlap": np.linspace(0.0, 1.0, 11), "roofline_overlap": np.linspace(0.0, 1.0, 11),
        "gemm_fraction": np.linspace(0.5, 1.0, 21), "attention_fraction": np.linspace(0.3, 1.0, 15),
        "serving_allreduce_latency_s": np.r_[0.0, np.geomspace(2e-6, 1e-4, 18)],
        "serving_allreduce_bw_fraction": np.linspace(0.3, 1.0, 15),
        "vision_kernel_s_eager": np.r_[0.0, np.geomspace(3e-6, 3e-4, 25)],
        "vision_gemm_fraction_fused": np.linspace(0.3, 1.0, 15),
        "vision_gemm_fraction_eager": np.linspace(0.1, 1.0, 19),
        "gnn_rows_per_fanout_bound": np.geomspace(1.0, 30.0, 121),
        "vision_kernel_cycles_fused": np.r_[0.0, np.geomspace(1e3, 1e5, 41)],
        "vision_l2_usable_fraction": np.linspace(0.0, 1.0, 21),
    }
    relevant = {
        "decode_step_overhead_s": ("decode_batch1", "fixed_batch_throughput", "max_throughput"),
        "decode_layer_overhead_s": ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft"),
        "prefill_overhead_s": ("ttft",),
        "train_elementwise_bytes_per_token_layer": ("training",),
        "train_step_overhead_s": ("training",), "dp_overlap": ("training",),
        "roofline_overlap": ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft"),
        "gemm_fraction": tuple(c for c in CATEGORIES if c not in LOAD_CATEGORIES),
        "attention_fraction": tuple(c for c in CATEGORIES if c not in LOAD_CATEGORIES),
        "serving_allreduce_latency_s": ("decode_batch1", "fixed_batch_throughput", "max_throughput"),
        "serving_allreduce_bw_fraction": ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft"),
        "vision_kernel_s_eager": VISION_CATEGORIES,
        "vision_gemm_fraction_fused": VISION_CATEGORIES,
        "vision_gemm_fraction_eager": VISION_CATEGORIES, "gnn_rows_per_fanout_bound": ("gnn_offline",),
        "vision_kernel_cycles_fused": VISION_CATEGORIES + ("recommender_offline", "recommender_training"),
        "vision_l2_usable_fraction": VISION_CATEGORIES + ("recommender_offline",),
    }

    def loss(values, cats):
        sel = fit_cases[fit_cases["category"].isin(cats)]
        errs = []
        for _, case in sel.iterrows():
            try:
                p = float(predict_case(case, extra, **values))
            except (ValueError, KeyError):
                continue
            if np.isfinite(p) and p > 0:
                errs.append(abs(np.log(p / case["value"])))
        return float(np.mean(errs)) if errs else np.inf

    before = summary(validate(path))
    for _ in range(passes):
        for name in names:
            cats = relevant[name]
            scores = [loss({**current, name: v}, cats) for v in grids[name]]
            current[name] = float(grids[name][int(np.argmin(scores))])
    after = summary(validate(path, **current))
    return current, pd.concat([before.assign(when="before"), after.assign(when="after")], ignore_index=True)


def write_constants(values, date, path=None):
    """Write fitted values into ``data/projection_constants.csv`` (how_set says when and on what)."""
    return _write_values(values, "{:.6g}", f"fitted by accelkit validate --fit on the fit split of measured.csv ({date})",
                         path)


def _write_values(values, fmt, how_set, path=None):
    path = data_path("projection_constants.csv") if path is None else path
    table = constants_table(path)
    table["value"] = table["value"].map(lambda v: f"{v:.6g}").astype(object)
    for name, value in values.items():
        i = table.index[table["name"] == name][0]
        table.at[i, "value"] = fmt.format(value)
        table.at[i, "how_set"] = how_set
    table.to_csv(path, index=False, lineterminator="\n")
    from .constants import _load

    _load.cache_clear()
    return path
