"""A :class:`~accelkit.scenario.Scenario` through the engine: one row per device.

The bridge every chapter, the decision and the reports use, so that a device shows
the same figure wherever it appears. The scenario's workload picks the model:

* ``training`` / ``fine-tuning`` of an image model (CNN, ViT) ->
  :func:`~accelkit.projection.vision.vision_training` (3 × forward FLOPs per sample,
  ``tokens`` counting samples);
* ``training`` / ``fine-tuning`` -> :func:`~accelkit.projection.training` on
  ``n_devices`` (data parallel; ZeRO stage, sequence length and batch from the
  scenario; ``utilization``, when set, is the person's own MFU);
* ``inference`` of a decoder LLM -> :func:`~accelkit.projection.inference` at the
  scenario's batch, prompt and output lengths on up to ``n_devices`` (the engine picks
  the tensor-parallel size);
* ``inference`` of an image model or an encoder (BERT) -> :func:`~accelkit.projection.vision`, layer by
  layer at the scenario's batch (an encoder's tokens per request: ``seq_len``), the model
  ``accelkit validate`` checks on MLPerf, the TensorRT BERT demo and DeepLearningExamples;
* ``inference`` of a recommender (DLRM-v2) -> :func:`~accelkit.projection.recommender.recommender`,
  user-item pairs scored per second, in passes of
  :data:`~accelkit.projection.recommender.RECOMMENDER_BATCH`.

Every figure comes with ``_low``/``_high`` and the sources of its efficiencies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from ..vocabulary import TRAINING_WORKLOADS as _TRAINING
from .ceilings import catalog_or_default, ceilings_for
from .inference import inference
from .layouts import step_sequences
from .shapes import custom_shape  # noqa: F401 (one home in shapes; named here too)
from .shapes import scenario_model as _model
from .training import TRAIN_PRECISIONS, finetune_settings, training
from .vision import vision

__all__ = ["project_scenario", "workload_kind", "training_layout", "is_vision_model", "is_recommender_model",
           "custom_shape", "scenario_stack", "WORK_UNITS"]

#: what one unit of work is, per workload kind
WORK_UNITS = {"training": "tokens", "llm": "tokens", "encoder": "requests", "vision": "frames",
              "recommender": "pairs"}


def workload_kind(scenario):
    """``training``, ``llm`` (decoder serving), ``encoder``, ``vision`` or ``recommender``."""
    if scenario.workload in _TRAINING:
        return "training"
    if scenario.model.lower() == "custom":
        return "llm"
    from ..models import model_kind

    kind = model_kind(scenario.model)
    if kind in ("cnn", "vit"):
        return "vision"
    if kind == "encoder":
        return "encoder"
    if kind == "recommender":
        return "recommender"
    return "llm"


#: what each workload kind of data/stacks.csv is, in words
_WORKLOAD_WORDS = {"vision": "image models", "encoder": "encoders", "recommender": "recommenders",
                   "llm": "LLM decoders"}


def scenario_stack(scenario, workload):
    """The scenario's software stack for ``workload`` (``vision``, ``encoder``, ``recommender``, ``llm``), or
    None (each device's vendor default). A stack that does not serve that workload (vLLM for BERT) is an
    error naming the field and the stacks that do."""
    if scenario.stack is None:
        return None
    from ..errors import ScenarioError
    from .stacks import load_stacks

    table = load_stacks()
    serving = [s for s, w in zip(table["stack"], table["workloads"]) if workload in str(w).split(";")]
    if scenario.stack not in serving:
        raise ScenarioError("stack", f"{scenario.stack} does not serve {_WORKLOAD_WORDS[workload]} such as "
                                     f"{scenario.model}; choose one of {', '.join(serving)}, or leave it empty "
                                     f"(each device's default)")
    return scenario.stack


def _empty(ceil, why):
    out = pd.DataFrame({"name": ceil["name"].to_numpy()})
    out["feasible"], out["why"] = False, why
    return out


def project_scenario(scenario, catalog=None, measurements=None, search=False, layout=None):
    """Projected figures of ``scenario`` on every device of ``catalog``.

    ``search=True`` (LLM serving): each device's batch and tensor-parallel size are the
    ones with the most throughput per device whose median time per output token and
    time to first token meet ``latency_target_ms`` / ``ttft_target_ms`` (see
    :func:`~accelkit.projection.inference`), not the scenario's ``batch_size``.

    ``layout`` (training): a DataFrame with ``zero_stage`` and ``batch_size`` per device,
    index as ``catalog``, in place of the scenario's two values, and optionally
    ``tensor_parallel``, ``pipeline_parallel``, ``micro_batch_size`` (sequences per
    data-parallel rank, in place of ``batch_size / data parallel``) and ``recompute``
    -- the configuration search projects each device's own choice in one pass.

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``. Always: ``kind``, ``work_unit``, ``work_per_device_hour``
        (+ ``_low``/``_high``: training tokens, output tokens, requests or frames one
        device does in an hour), ``latency_s`` (+ range: per output token, per request
        or per frame; NaN for training), ``feasible``, ``why``, ``matmul_source``,
        ``memory_source``. Training adds ``days_on_n``, ``seconds``, ``mfu``,
        ``tokens_per_s_per_device`` (+ ranges), ``step_s``; LLM serving adds
        ``tpot_s``, ``ttft_s``, ``output_tokens_per_s_per_device`` (+ ranges),
        ``batch_size``, ``tensor_parallel``.
    """
    catalog = catalog_or_default(catalog)
    kind = workload_kind(scenario)
    ceil, _ = ceilings_for(None, catalog, measurements)
    if layout is not None and kind != "training":
        raise ValueError("layout: a per-device ZeRO stage and batch apply to training scenarios only")
    if kind == "training":
        frame = _training(scenario, catalog, measurements, ceil, layout)
    elif kind in ("vision", "encoder"):
        frame = _vision(scenario, catalog, measurements, ceil, kind)
    elif kind == "recommender":
        frame = _recommender(scenario, catalog, measurements)
    else:
        frame = _serving(scenario, catalog, measurements, search)
    frame.index = catalog.index
    frame["kind"] = kind
    if "work_unit" not in frame:
        frame["work_unit"] = WORK_UNITS[kind]
    for col in ("matmul_source", "memory_source"):
        if col not in frame:
            frame[col] = ""
    return frame


def training_layout(scenario, batch_size=None):
    """``(micro_batch, accumulation_steps)`` of a scenario's training step.

    ``batch_size`` sequences (default: the scenario's; an array gives one layout per
    value) are in memory at once across the cluster (a micro-batch of ``batch_size /
    n_devices`` each); gradient accumulation fills a step of at least 4,194,304 tokens
    (2**22, Llama 2's batch).
    """
    n = scenario.n_devices
    batch = scenario.batch_size if batch_size is None else batch_size
    if np.ndim(batch):
        micro = np.maximum(1, np.asarray(batch, dtype=int) // n)
        return micro, (step_sequences(micro, n, scenario.seq_len) // (micro * n)).astype(int)
    micro = max(1, int(batch) // n)
    return micro, int(step_sequences(micro, n, scenario.seq_len) // (micro * n))


def _preset_kind(scenario):
    """The kind of the scenario's preset (``None`` for a custom model)."""
    if scenario.model.lower() == "custom":
        return None
    from ..models import find_model

    return find_model(scenario.model)["kind"]


def is_vision_model(scenario):
    """True when the scenario's model is an image preset (CNN or ViT), trained per image, not per token."""
    return _preset_kind(scenario) in ("cnn", "vit")


def is_recommender_model(scenario):
    """True when the scenario's model is a recommender preset (DLRM-v2): per sample, tables split."""
    return _preset_kind(scenario) == "recommender"


def _training(scenario, catalog, measurements, ceil, layout=None):
    if scenario.precision not in TRAIN_PRECISIONS:
        return _empty(ceil, f"training in {scenario.precision} is not modelled (train in bf16, fp16 or fp8)")
    if is_vision_model(scenario):
        return _vision_training(scenario, catalog, measurements)
    if is_recommender_model(scenario):
        return _recommender_training(scenario, catalog, measurements)
    n = scenario.n_devices
    tp = pp = 1
    recompute = "selective"
    if layout is None:
        zero = scenario.zero_stage
        micro, accumulation = training_layout(scenario)
        global_tokens = micro * accumulation * n * scenario.seq_len
    elif "micro_batch_size" in layout:
        zero = layout["zero_stage"].to_numpy(dtype=int)
        tp = layout["tensor_parallel"].to_numpy(dtype=int)
        pp = layout["pipeline_parallel"].to_numpy(dtype=int)
        micro = layout["micro_batch_size"].to_numpy(dtype=int)
        recompute = layout["recompute"].to_numpy(dtype=object)
        global_tokens = step_sequences(micro, n // (tp * pp), scenario.seq_len) * scenario.seq_len
    else:
        zero = layout["zero_stage"].to_numpy(dtype=int)
        micro, accumulation = training_layout(scenario, layout["batch_size"].to_numpy(dtype=int))
        global_tokens = micro * accumulation * n * scenario.seq_len
    method, rank = finetune_settings(scenario)
    r = training(None, _model(scenario), tokens=scenario.tokens, precision=scenario.precision, n_devices=n,
                 tensor_parallel=tp, pipeline_parallel=pp, seq_len=scenario.seq_len, global_batch_tokens=global_tokens,
                 zero_stage=zero, micro_batch_size=micro, recompute=recompute,
                 catalog=catalog, measurements=measurements, check_memory=False,
                 utilization=scenario.utilization, finetune_method=method, lora_rank=rank)
    out = r.rename(columns={"days": "days_on_n", "days_low": "days_on_n_low", "days_high": "days_on_n_high"})
    for level in ("", "_low", "_high"):
        out[f"work_per_device_hour{level}"] = out[f"tokens_per_s_per_device{level}"] * units.SECONDS_PER_HOUR
        out[f"latency_s{level}"] = np.nan
    return out


def _per_sample(r):
    """A per-sample training projection in the decision's columns: samples stand in for tokens."""
    out = r.rename(columns={"days": "days_on_n", "days_low": "days_on_n_low", "days_high": "days_on_n_high"})
    for level in ("", "_low", "_high"):
        out[f"tokens_per_s_per_device{level}"] = out[f"samples_per_s_per_device{level}"]
        out[f"work_per_device_hour{level}"] = out[f"samples_per_s_per_device{level}"] * units.SECONDS_PER_HOUR
        out[f"latency_s{level}"] = np.nan
    out["work_unit"] = "samples"
    return out


def _vision_training(scenario, catalog, measurements):
    """An image model trained on ``scenario.tokens`` samples (images × epochs), data parallel on
    ``n_devices`` with at least :data:`~accelkit.projection.vision.VISION_TRAIN_BATCH` images per
    device (the scenario's batch over the devices when larger): 3 × forward FLOPs per sample
    (:func:`~accelkit.projection.vision.vision_training`), never 6·N·D."""
    from .vision import VISION_TRAIN_BATCH, vision_training

    n = scenario.n_devices
    r = vision_training(None, scenario.model, samples=scenario.tokens, precision=scenario.precision, n_devices=n,
                        batch_size=max(scenario.batch_size // n, VISION_TRAIN_BATCH), zero_stage=scenario.zero_stage,
                        catalog=catalog, measurements=measurements, utilization=scenario.utilization)
    out = _per_sample(r)
    return out


def _recommender_training(scenario, catalog, measurements):
    """A recommender trained on ``scenario.tokens`` samples, hybrid parallel on ``n_devices`` (tables
    split, MLPs data parallel) with at least
    :data:`~accelkit.projection.recommender_training.RECOMMENDER_TRAIN_BATCH` samples per device (the
    scenario's batch over the devices when larger): 3 × forward FLOPs per sample
    (:func:`~accelkit.projection.recommender_training.recommender_training`), never 6·N·D."""
    from .recommender_training import RECOMMENDER_TRAIN_BATCH, recommender_training

    n = scenario.n_devices
    r = recommender_training(None, scenario.model, samples=scenario.tokens, precision=scenario.precision,
                             n_devices=n, batch_size=max(scenario.batch_size // n, RECOMMENDER_TRAIN_BATCH),
                             catalog=catalog, measurements=measurements, utilization=scenario.utilization)
    out = _per_sample(r)
    # the cluster's memory is judged by the decision (sizing.memory_need): a projection stays a projection
    out["feasible"] = np.isfinite(out["step_s"].to_numpy(dtype=float))
    out["why"] = np.where(out["feasible"], "", out["why"])
    return out


def _serving(scenario, catalog, measurements, search=False):
    """A decoder LLM served at the scenario's batch, or searched under its TPOT / TTFT targets."""
    ttft = getattr(scenario, "ttft_target_ms", None)
    r = inference(None, _model(scenario), precision=scenario.precision, n_devices=scenario.n_devices,
                  batch_size=None if search else scenario.batch_size, input_tokens=scenario.seq_len,
                  output_tokens=scenario.output_tokens, schedule="continuous", catalog=catalog,
                  measurements=measurements, check_memory=False, stack=scenario_stack(scenario, "llm"),
                  tpot_target_s=units.ms_to_s(scenario.latency_target_ms) if search else None,
                  ttft_target_s=units.ms_to_s(ttft) if search and ttft else None)
    out = r.copy()
    for level in ("", "_low", "_high"):
        out[f"latency_s{level}"] = r[f"tpot_s{level}"]
        out[f"work_per_device_hour{level}"] = r[f"output_tokens_per_s_per_device{level}"] * units.SECONDS_PER_HOUR
    return out


def _vision(scenario, catalog, measurements, ceil, kind="vision"):
    """An image model or encoder served at the scenario's batch: :func:`~accelkit.projection.vision.vision`,
    the function chapter 07, the claims and ``accelkit project vision`` call too (the person's
    ``utilization`` where given; an encoder's requests carry ``seq_len`` tokens); under a power envelope a
    Jetson runs in its highest ``nvpmodel`` mode within it, as chapter 07 runs it. An encoder's request
    (or an image) waits for its whole pass: ``latency_s`` is one pass of ``batch_size``."""
    r = vision(None, scenario.model, precision=scenario.precision, batch_size=scenario.batch_size, catalog=catalog,
               measurements=measurements, utilization=scenario.utilization,
               power_envelope_w=scenario.power_envelope_w or None, stack=scenario_stack(scenario, kind),
               seq_len=scenario.seq_len if kind == "encoder" else None)
    out = r.copy()
    for level in ("", "_low", "_high"):
        out[f"work_per_device_hour{level}"] = r[f"frames_per_s{level}"] * units.SECONDS_PER_HOUR
    return out


def _recommender(scenario, catalog, measurements):
    """A recommender served on up to ``n_devices``: user-item pairs scored per second per device, in
    passes of :data:`~accelkit.projection.recommender.RECOMMENDER_BATCH` pairs (the tables replicated
    on each device when they fit one, else sharded over the scenario's devices, else partly in host
    memory), :func:`~accelkit.projection.recommender.recommender`, the call ``accelkit project
    recommender`` and ``accelkit validate`` make."""
    from .recommender import recommender

    r = recommender(None, scenario.model, precision=scenario.precision, n_devices=scenario.n_devices,
                    catalog=catalog, measurements=measurements, utilization=scenario.utilization,
                    stack=scenario_stack(scenario, "recommender"))
    out = r.copy()
    for level in ("", "_low", "_high"):
        out[f"work_per_device_hour{level}"] = r[f"samples_per_s{level}"] * units.SECONDS_PER_HOUR
    return out
