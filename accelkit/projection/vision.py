"""Image models (CNNs, ViTs) and encoders: time per batch, frames per second.

The one home of a vision frame time: chapter 07 (:func:`accelkit.sizing.edge_fit`),
the decision (:func:`accelkit.projection.for_scenario.project_scenario`) and the source
text's claims (:mod:`accelkit.claims`) all call :func:`vision`, so a device shows one
figure for one scenario everywhere.

A forward pass of a batch of ``B`` images costs ``B × F`` FLOP (``F`` the preset's
published ``forward_flop_per_sample``, or ``2·N`` where none is published) and reads
the weights once::

    time = roofline(B·F / compute rate, weights / bandwidth) + vision_pass_floor_s

* compute rate: the achievable matmul rate × ``gemm_fraction`` (convolutions run as
  implicit GEMMs on the tensor units, NVIDIA, *Convolutional Layers User's Guide*,
  "Convolution algorithms"), or, where the person states a ``utilization``, the dense
  peak × that share;
* the weights at the achievable memory bandwidth, combined with the compute by
  ``roofline_overlap`` (as an LLM's prefill, :mod:`accelkit.projection.inference`);
* a small-batch floor per pass, ``vision_pass_floor_s`` (0.535 ms): a CNN runs one
  kernel per layer, and at batch 1 each is too small to fill the device.

Which of the two figures this replaces was closer to measurements
------------------------------------------------------------------
Before, chapter 07 took ``F / (peak × 0.3)`` (YOLOv8s int8: 0.70 ms on a Jetson AGX
Orin, 0.74 ms on a T4) and the decision took the roofline plus the LLM prefill
overhead ``prefill_overhead_s`` (3.65 ms, fitted to PyTorch / TensorRT-LLM prefills;
4.02 and 4.04 ms). Against NVIDIA's MLPerf Inference ResNet-50 SingleStream results
(TensorRT, INT8; mean latency: T4 1.000 ms, v0.7; Jetson AGX Orin 64GB 0.636 ms,
v3.1; A100 PCIe 0.497 ms, v1.0 -- mlcommons/inference_results_v*/closed/NVIDIA/results/
{T4x1_TRT, Orin_TRT, A100-PCIex1_TRT}/resnet50/SingleStream) chapter 07's rule gives
0.21, 0.20 and 0.04 ms (3-11× too fast) and the decision's 3.7-3.8 ms (4-7× too
slow): neither holds. The LLM overhead cannot be a CNN's, since a whole ResNet-50 pass
on an A100 takes 0.5 ms; a bare share of the peak misses that a pass at batch 1 does
not fill the device at all. Kept: the decision's structure (achievable ceilings,
weights, roofline), with the LLM overhead replaced by the floor solved from those
three results (geometric mean over three devices, not one case). It gives 0.58, 0.77
and 0.73 ms (ratios 1.16, 1.21, 0.73) and 1.0 ms for YOLOv8s int8 on the AGX Orin.
Known gap: small Jetsons run YOLO-class nets slower than this (YOLOv8n int8 on an Orin
Nano Super, trtexec GPU time 3.49 ms, hokwangchoi/jetson-orin-nano-benchmarks; this
model ~1 ms), and batched throughput is projected ~1.7× above MLPerf Offline (T4 6,036,
AGX Orin 6,424 images/s) since convolutions reach less of the matmul ceiling than the
LLM GEMMs it was measured on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_integer
from .ceilings import ceilings_for
from .constants import constants
from .precisions import resolve_precision

__all__ = ["vision", "vision_seconds", "frame_flops", "vision_training",
           "vision_train_bytes_per_sample", "VISION_TRAIN_BATCH"]


def frame_flops(model):
    """FLOP of one forward pass of a preset (its published figure, or 2·N) and the row."""
    from ..models import find_model

    row = find_model(model) if isinstance(model, str) else model
    flops = row.get("forward_flop_per_sample", np.nan)
    if flops == flops and flops:
        return float(flops), row
    return 2.0 * float(row["params"]), row


def vision_seconds(flops_per_sample, weight_bytes, compute_rate, bandwidth, batch, k=None):
    """Time of one forward pass of ``batch`` samples [s] on one device.

    ``roofline(batch · F / compute_rate, weights / bandwidth) + vision_pass_floor_s``.

    Parameters
    ----------
    flops_per_sample : numeric [FLOP]
    weight_bytes : numeric [bytes]
    compute_rate : numeric
        The rate the convolutions / matmuls run at [FLOP/s]: the achievable matmul rate
        × ``gemm_fraction``, or the dense peak × the person's utilisation.
    bandwidth : numeric
        Achievable memory bandwidth [bytes/s].
    batch : numeric
        Samples per pass.
    """
    k = constants() if k is None else k
    compute = flops_per_sample * batch / compute_rate
    weights = weight_bytes / bandwidth
    overlap = k["roofline_overlap"]
    return np.maximum(compute, weights) + (1.0 - overlap) * np.minimum(compute, weights) + k["vision_pass_floor_s"]


def vision(device=None, model="ResNet-50", precision="int8", batch_size=1, catalog=None, measurements=None,
           utilization=None, peak=None, **overrides):
    """Projected time per pass and frames per second of an image model, per device.

    Parameters
    ----------
    device : str, list of str or None
        One device (returns a dict), several or ``None`` (every device of ``catalog``;
        returns a DataFrame in the catalogue's order).
    model : str or mapping
        An image preset (``forward_flop_per_sample``) or a model row.
    precision : str
        ``int8``, ``fp16``, ... (weights and matmul precision).
    batch_size : int
        Frames per pass.
    utilization : float, optional
        The person's share (0-1] of the dense peak the convolutions reach; replaces the
        achievable matmul rate (the floor and the weight traffic still count).
    peak : array-like, optional
        Dense peak per device [OP/s] in place of the catalogue's (chapter 07's GPU-only
        figure when the DLA engines are left idle); the achievable rate scales with it.

    Returns
    -------
    dict or pandas.DataFrame
        ``latency_s`` (one pass of ``batch_size``), ``frame_ms`` (the same in ms: the
        time a frame waits for its pass), ``frames_per_s`` (per device), each with
        ``_low``/``_high``; ``compute_s``, ``memory_s``, ``floor_s`` (the parts),
        ``peak_ops``, ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    from .._validate import check_fraction

    check_integer("batch_size", batch_size, low=1, what="a batch size")
    if utilization is not None:
        check_fraction("utilization", utilization, "a utilisation (share of the dense peak)")
    mode, w_bytes, mm_precision, _ = resolve_precision(precision)
    flops, row = frame_flops(model)
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    weights = float(row["params"]) * w_bytes
    own_peak = ceil[f"peak_{mm_precision}"].to_numpy(dtype=float)
    peak_ops = own_peak if peak is None else np.asarray(peak, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(own_peak > 0, peak_ops / own_peak, np.nan)
    out = {"name": ceil["name"].to_numpy()}
    for level, rate_level in (("", ""), ("_low", "_high"), ("_high", "_low")):
        if utilization is None:
            rate = ceil[f"matmul_{mm_precision}{rate_level}"].to_numpy(dtype=float) * scale * k["gemm_fraction"]
        else:
            rate = peak_ops * utilization
        bw = ceil[f"memory_bw{rate_level}"].to_numpy(dtype=float)
        out[f"latency_s{level}"] = vision_seconds(flops, weights, rate, bw, batch_size, k)
        if level == "":
            out["compute_s"], out["memory_s"] = flops * batch_size / rate, weights / bw
    out["floor_s"] = np.full(len(ceil), k["vision_pass_floor_s"])
    # image models are not in the validation set: widen by the largest error the engine shows elsewhere
    e = max(k[n] for n in ("model_error_training", "model_error_decode", "model_error_throughput", "model_error_ttft"))
    out["latency_s_low"], out["latency_s_high"] = out["latency_s_low"] / (1 + e), out["latency_s_high"] * (1 + e)
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"frame_ms{level}"] = units.s_to_ms(out[f"latency_s{level}"])
        out[f"frames_per_s{level}"] = batch_size / out[f"latency_s{src}"]
    out["peak_ops"] = peak_ops
    out["matmul_source"] = (ceil[f"matmul_{mm_precision}_source"].to_numpy() if utilization is None else
                            np.full(len(ceil), f"your utilisation {utilization:.0%} of the dense {mm_precision} peak"))
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    feasible = np.isfinite(out["latency_s"])
    out["feasible"] = feasible
    out["why"] = np.where(feasible, "", np.where(~np.isfinite(peak_ops), f"no published dense {mm_precision} peak",
                                                 np.where(~np.isfinite(out["memory_s"]), "no published memory bandwidth",
                                                          f"no published dense {mm_precision} matmul efficiency")))
    out["batch_size"] = np.full(len(ceil), int(batch_size))
    if single:
        r = {c: (v[0].item() if hasattr(v[0], "item") else v[0]) for c, v in out.items()}
        if not r["feasible"]:
            raise ValueError(f"{r['name']}: {r['why']}")
        return r
    return pd.DataFrame(out)


# --- training ---------------------------------------------------------------------------------------------------------

#: images per device per step when a scenario gives fewer: the per-GPU batch of NVIDIA's ResNet-50 v1.5 recipes
#: (DeepLearningExamples, ``--batch-size 256`` on DGX A100 and DGX-1)
VISION_TRAIN_BATCH = 256


def vision_train_bytes_per_sample(model, k=None):
    """Memory traffic of an image model's non-matmul training work per sample [bytes].

    A ViT (a preset with layers and width) counts like a transformer:
    ``train_elementwise_bytes_per_token_layer × d_model`` per token per layer, its
    tokens per image being ``F / (2·N)`` (a forward pass costs ``2·N`` FLOP per
    token). A CNN's batch norms, activations and residual adds stream their feature
    maps forward and backward; their bytes scale with the forward FLOPs ``F`` by
    ``vision_train_bytes_per_flop`` (solved from one published ResNet-50 run, see
    ``data/projection_constants.csv``).
    """
    k = constants() if k is None else k
    flops, row = frame_flops(model)
    layers, width = float(row.get("n_layers", np.nan)), float(row.get("d_model", np.nan))
    if row.get("kind") == "vit" and np.isfinite(layers) and np.isfinite(width):
        tokens = flops / (2.0 * float(row["params"]))
        return k["train_elementwise_bytes_per_token_layer"] * width * tokens * layers
    return k["vision_train_bytes_per_flop"] * flops


def vision_training(device=None, model="ResNet-50", samples=90 * 1281167, precision="bf16", n_devices=8,
                    batch_size=VISION_TRAIN_BATCH, zero_stage=None, devices_per_node=8, network_gbps=None,
                    catalog=None, measurements=None, utilization=None, **overrides):
    """Projected training time of an image model (CNN, ViT) on data-parallel devices.

    One step: each of ``n_devices`` devices runs ``batch_size`` samples forward and
    backward. Per device

    * matmul (convolutions run as implicit GEMMs): ``3 · F · b`` FLOP -- the backward
      pass costs about twice the forward (gradients of the activations and of the
      weights), Kaplan et al. 2020, arXiv:2001.08361, §2.1 -- at the achievable
      matmul rate × ``gemm_fraction``;
    * the non-matmul work: :func:`vision_train_bytes_per_sample` × ``b`` at the
      achievable bandwidth, combined with the matmul time by ``roofline_overlap``;
    * the bf16 gradient all-reduce of ``2·N`` bytes (intra-node over the link,
      across nodes over the network port), ``dp_overlap`` of it hidden behind the
      backward pass; the optimizer streams 32 bytes per (ZeRO-sharded) parameter;
      ``prefill_overhead_s`` per pass outside the kernels.

    ``utilization`` (0-1) replaces the projected matmul and non-matmul time by
    ``3 · F · b / (peak × utilization)``.

    Returns
    -------
    dict or pandas.DataFrame
        ``step_s, samples_per_s, samples_per_s_per_device, mfu`` (``3·F`` per sample
        over the dense peak), ``seconds, days, device_hours`` (each with
        ``_low``/``_high``), ``micro_batch_size`` (samples per device per step), ``global_batch``,
        ``memory_per_device_bytes`` (model state; activations unknown),
        ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    from .. import memory, units
    from .._validate import check_choice, check_fraction, check_integer, check_positive
    from .ceilings import allreduce_seconds
    from .systems import network_bandwidth
    from .training import TRAIN_PRECISIONS

    check_positive("samples", samples, "a number of training samples (images × epochs)")
    for name, value, what in (("n_devices", n_devices, "a number of devices"), ("batch_size", batch_size, "a batch"),
                              ("devices_per_node", devices_per_node, "a number of devices per node")):
        check_integer(name, value, low=1, what=what)
    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    if utilization is not None:
        check_fraction("utilization", utilization, "a model FLOPs utilisation")
    n, b = int(n_devices), int(batch_size)
    zero = (1 if n > 1 else 0) if zero_stage is None else int(zero_stage)
    flops, row = frame_flops(model)
    params = float(row["params"])
    k = constants(**overrides)
    traffic = vision_train_bytes_per_sample(row, k)
    ceil, single = ceilings_for(device, catalog, measurements)
    net_bw, _ = network_bandwidth(ceil, catalog, network_gbps)
    peak = ceil[f"peak_{precision}"].to_numpy(dtype=float)
    per_node = float(min(devices_per_node, n))
    nodes = float(np.ceil(n / per_node))
    grad = 2.0 * params * (1.5 if zero >= 3 else 1.0)
    out = {"name": ceil["name"].to_numpy()}
    steps = {}
    for level in ("", "_low", "_high"):
        lat = {"": "", "_low": "_high", "_high": "_low"}[level]
        bw = ceil[f"memory_bw{level}"].to_numpy(dtype=float)
        if utilization is None:
            compute = 3.0 * flops * b / (ceil[f"matmul_{precision}{level}"].to_numpy(dtype=float) * k["gemm_fraction"])
            moved = traffic * b / bw
            work = np.maximum(compute, moved) + (1.0 - k["roofline_overlap"]) * np.minimum(compute, moved)
        else:
            compute = work = 3.0 * flops * b / (peak * utilization)
        link = np.where(per_node <= ceil["link_max_devices"].to_numpy(dtype=float),
                        ceil[f"allreduce_bw{level}"].to_numpy(dtype=float),
                        ceil[f"allreduce_bw_pcie{level}"].to_numpy(dtype=float))
        with np.errstate(invalid="ignore", divide="ignore"):
            intra = allreduce_seconds(grad, per_node, link, 0.0)
            across = np.where(nodes > 1, 2.0 * (nodes - 1.0) / nodes * grad / per_node / net_bw, 0.0)
        latency = ceil[f"allreduce_latency_s{lat}"].to_numpy(dtype=float)
        dp_comm = np.where(n > 1, intra + across + 2.0 * latency * np.log2(max(n, 1)), 0.0)
        exposed = dp_comm - k["dp_overlap"] * np.minimum(dp_comm, compute * 2.0 / 3.0)
        optimizer = 32.0 * params / (n if zero >= 1 else 1) / bw
        steps[level] = work + exposed + optimizer + k["prefill_overhead_s"]
    e = k["model_error_training"]
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        rate = n * b / steps[src]
        out[f"step_s{level}"] = steps[src]
        out[f"samples_per_s{level}"] = n * b / steps[level]  # the low ceilings give the low rate
        out[f"seconds{level}"] = samples / rate
    for level in ("", "_low", "_high"):
        out[f"samples_per_s_per_device{level}"] = out[f"samples_per_s{level}"] / n
        out[f"mfu{level}"] = out[f"samples_per_s_per_device{level}"] * 3.0 * flops / peak
        out[f"days{level}"] = out[f"seconds{level}"] / units.SECONDS_PER_DAY
        out[f"device_hours{level}"] = out[f"seconds{level}"] * n / units.SECONDS_PER_HOUR
    # widen by the engine's own error on published training measurements
    for name in ("step_s", "samples_per_s", "samples_per_s_per_device", "mfu", "seconds", "days", "device_hours"):
        out[f"{name}_low"] = out[f"{name}_low"] / (1.0 + e)
        out[f"{name}_high"] = out[f"{name}_high"] * (1.0 + e)
    out.update({"n_devices": n, "data_parallel": n, "tensor_parallel": 1, "pipeline_parallel": 1, "zero_stage": zero,
                "micro_batch_size": b, "global_batch": n * b, "precision": precision,
                "model": row["name"], "flops_per_sample": 3.0 * flops, "traffic_bytes_per_sample": traffic})
    out["memory_per_device_bytes"] = np.full(len(ceil), float(
        memory.training_bytes(params, "mixed", "adam", zero_stage=zero, n_devices=n)))
    out["matmul_source"] = (ceil[f"matmul_{precision}_source"].to_numpy() if utilization is None
                            else np.full(len(ceil), f"your MFU {utilization:.0%} of the dense {precision} peak"))
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    feasible = np.isfinite(np.asarray(out["step_s"], dtype=float))
    out["feasible"] = feasible
    out["why"] = np.where(feasible, "", f"no published dense {precision} peak, memory bandwidth or link figure")
    frame = pd.DataFrame(out)
    if single:
        r = frame.iloc[0]
        if not r["feasible"]:
            raise ValueError(f"{r['name']}: {r['why']}")
        return {c: (v.item() if hasattr(v, "item") else v) for c, v in r.items()}
    return frame
