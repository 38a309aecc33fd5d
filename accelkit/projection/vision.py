"""Image models (CNNs, ViTs) and encoders: time per batch, frames per second.

The one home of a vision frame time: chapter 07 (:func:`accelkit.sizing.edge_fit`),
the decision (:func:`accelkit.projection.for_scenario.project_scenario`) and the source
text's claims (:mod:`accelkit.claims`) all call :func:`vision`, so a device shows one
figure for one scenario everywhere.

A forward pass is priced **layer by layer** where the preset has a layer table
(:func:`~accelkit.projection.vision_layers.layer_table`: ResNet-50 v1.5 from its
paper's table, BERT and ViT from their transformer shapes)::

    time = Σ_layers roofline(B·F_l / rate, (W_l + B·maps_l) / bandwidth) + kernels × kernel time

* rate: the achievable matmul rate × the share of it the stack's convolutions and
  GEMMs reach (``vision_gemm_fraction_fused`` / ``_eager``; convolutions run as implicit
  GEMMs on the tensor units, NVIDIA, *Convolutional Layers User's Guide*), or the
  dense peak × the person's ``utilization``; bandwidth: the achievable one. The eager share is the
  tensor cores': the heuristically chosen tensor-core kernels of cuDNN and cuBLAS, called one by one at a
  layer's shape, reach about half of what the large square products of the ceiling do (tile and wave
  quantization, NVIDIA, *Matrix Multiplication Background User's Guide*; the fitted 0.55). An ``fp32`` layer
  on an NVIDIA GPU runs on the CUDA cores (its tensor cores take TF32, not FP32), and its ceiling is already
  the float32 ``torch.mm`` of that device (``data/efficiency.csv``), so it takes the fused share; AMD's
  Instinct parts run FP32 on their matrix cores and keep the eager share. In the fit split, the eager share
  projected DeepLearningExamples' TensorFlow ResNet-50 in fp32 on a T4 at 0.65× its measured throughput
  (batch 128), the 18 eager cases in fp16 and TF32 at 0.75-1.44× (median 1.02);
* ``maps_l``: the layer's input and output feature maps, in the precision's bytes;
  on an **eager** stack (PyTorch eager, TensorFlow with or without XLA: XLA fuses element-wise
  chains into its own kernels but calls cuBLAS and cuDNN for the GEMMs and convolutions) each batch norm,
  activation and residual add after the layer reads and writes its output map again,
  on a **fused** stack (TensorRT, a vendor compiler) they ride in the layer's
  kernel (:mod:`accelkit.projection.stacks`, ``data/stacks.csv``);
* the **L2 cache** (``data/clocks_caches.csv``): a layer whose batch of maps and weights fits
  in ``vision_l2_usable_fraction`` of the device's L2 leaves its maps there for the next layer,
  and only the share that does not fit goes to DRAM (:func:`layer_seconds`);
* kernels: one per layer, plus one per element-wise layer when eager; each costs
  ``vision_kernel_cycles_fused`` GPU cycles at the device's clock (a compiled kernel's launch,
  first wave and tail; ``data/clocks_caches.csv``, a Jetson's power mode) or
  ``vision_kernel_s_eager`` seconds (an eager framework's dispatch on the host) -- fitted on
  the fit sources of ``data/validation/measured.csv`` (MLPerf Inference, the TensorRT BERT
  demo, DeepLearningExamples) and checked on the held-out ones (``accelkit validate``).

A preset without a layer table (YOLOv8) takes the whole-net roofline of ``B × F``
FLOP against its weights, plus a fused ResNet-50's kernels (:func:`vision_seconds`).

What this replaced, and why
---------------------------
Before, one roofline over the whole net plus a floor of 0.535 ms solved from three
MLPerf results: it was right for TensorRT at batch 1 and 3-14× too fast for
TensorFlow and PyTorch, whose batch-1 latency is their kernels' dispatch and whose
throughput is their unfused feature maps (DeepLearningExamples' ResNet-50 tables).
The layers and the stack's execution class carry that difference, with two fitted
per-kernel times instead of one per-pass constant. One kernel time in seconds for every
device then left the L4 and L40S at 0.4-0.6× of their MLPerf ResNet-50 results (a 2.0-2.5 GHz
part paid an A100's per-kernel time, and their 48-96 MB L2 was not counted); the clock and
the L2 now carry that (``accelkit validate``, README).
Known gaps (``accelkit validate``): MLPerf Offline throughput is projected 0-20 %
low on datacenter GPUs (0.80-0.99×: TensorRT's INT8 convolutions beat the GEMM share the LLM
cases fit); the T4 at batch 1 runs 1.4-1.7× slower than its clock and L2 say. TensorFlow + XLA was the fused class until DeepLearningExamples' TF2 BERT tables showed it
2-5× slower than that; it is the eager class now (``data/stacks.csv`` says why).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_integer
from .ceilings import ceilings_for, one_or_frame
from .clocks_caches import gpu_clock_sources, gpu_clocks, l2_cache_bytes, l2_cache_sources, median_clock_hz
from .constants import constants
from .power_modes import device_mode_shares, engine_share
from .precisions import resolve_precision
from .stacks import stack_not_run_why, stack_row
from .vision_layers import ACT_BYTES, layer_table

__all__ = ["vision", "vision_seconds", "layer_seconds", "frame_flops", "vision_training",
           "vision_train_bytes_per_sample", "VISION_TRAIN_BATCH"]


def frame_flops(model):
    """FLOP of one forward pass of a preset (its published figure, or 2·N) and the row."""
    from ..models import find_model

    row = find_model(model) if isinstance(model, str) else model
    flops = row.get("forward_flop_per_sample", np.nan)
    if flops == flops and flops:
        return float(flops), row
    return 2.0 * float(row["params"]), row


def vision_seconds(flops_per_sample, weight_bytes, compute_rate, bandwidth, batch, k=None, floor_s=None):
    """Time of one forward pass of ``batch`` samples [s] on one device, for a model with
    no layer table (:func:`~accelkit.projection.vision_layers.layer_table`): the whole-net
    roofline ``roofline(batch · F / compute_rate, weights / bandwidth) + floor``.

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
    floor_s : numeric, optional
        Kernel time per pass [s]; default a fused stack's kernels of a net as deep as
        ResNet-50 (:data:`FALLBACK_KERNELS` × ``vision_kernel_cycles_fused`` at the median listed
        clock, :func:`~accelkit.projection.clocks_caches.gpu_clocks`).
    """
    k = constants() if k is None else k
    compute = flops_per_sample * batch / compute_rate
    weights = weight_bytes / bandwidth
    overlap = k["roofline_overlap"]
    floor = FALLBACK_KERNELS * k["vision_kernel_cycles_fused"] / median_clock_hz() if floor_s is None else floor_s
    return np.maximum(compute, weights) + (1.0 - overlap) * np.minimum(compute, weights) + floor


def layer_seconds(layers, weight_bytes, act_bytes, eager, compute_rate, bandwidth, batch, k, cache_bytes=None):
    """Time of the layers' kernels for one pass of ``batch`` samples [s], per device.

    Each GEMM-like layer is its own roofline (``roofline_overlap``): ``batch`` × its FLOP
    at ``compute_rate`` against its weights and feature maps at ``bandwidth``. A fused
    stack reads the layer's input map and writes its output once; an eager one also runs
    each following element-wise layer (batch norm, activation, add) as a kernel that
    reads and writes the output map again (``2 × elementwise × act_out`` more
    elements). The per-kernel time is added by the caller.

    ``cache_bytes`` (per device, NaN or None: none known): the L2 a layer's batch can keep on the
    chip. Where the layer's working set -- the batch's input and output maps plus its weights --
    exceeds ``vision_l2_usable_fraction`` × the L2, the excess share of its map traffic goes to
    DRAM; where it fits, the next layer reads the maps from the cache and they cost no DRAM time
    (an L2 hit is taken as hidden under the layer's compute; the L2's own bandwidth is not
    modelled). The usable share is fitted (the L2 also holds weights, the convolution's
    workspace, and on A100 / H100 it is two partitions).

    ``layers``: :func:`~accelkit.projection.vision_layers.layer_table`;
    ``eager``: bool per device; ``compute_rate``, ``bandwidth``: per device.
    """
    rate = np.asarray(compute_rate, dtype=float)[:, None]
    bw = np.asarray(bandwidth, dtype=float)[:, None]
    fl = layers["flops"].to_numpy(dtype=float)[None, :]
    maps = (layers["act_in"] + layers["act_out"]).to_numpy(dtype=float)[None, :]
    extra = (2.0 * layers["elementwise"] * layers["act_out"]).to_numpy(dtype=float)[None, :]
    moved_maps = batch * act_bytes * (maps + np.asarray(eager, dtype=float)[:, None] * extra)
    if cache_bytes is not None:
        held = np.nan_to_num(np.asarray(cache_bytes, dtype=float))[:, None] * k["vision_l2_usable_fraction"]
        working = batch * act_bytes * maps + layers["weights"].to_numpy(dtype=float)[None, :] * weight_bytes
        with np.errstate(invalid="ignore", divide="ignore"):
            spilled = np.where(working > 0, np.clip(1.0 - held / working, 0.0, 1.0), 1.0)
        moved_maps = moved_maps * spilled
    with np.errstate(invalid="ignore", divide="ignore"):
        compute = batch * fl / rate
        memory = (layers["weights"].to_numpy(dtype=float)[None, :] * weight_bytes + moved_maps) / bw
    overlap = k["roofline_overlap"]
    return (np.maximum(compute, memory) + (1.0 - overlap) * np.minimum(compute, memory)).sum(axis=1)


#: kernels per pass of a CNN with no layer table (the fused ResNet-50 v1.5's: 53 convolutions,
#: 2 pools and the fc layer)
FALLBACK_KERNELS = 56


def _kernels(layers, eager):
    """Kernels per pass, per device: one per layer, plus each element-wise layer when eager."""
    eager = np.asarray(eager, dtype=bool)
    if layers is None:
        return np.where(eager, np.nan, float(FALLBACK_KERNELS))
    return len(layers) + np.where(eager, float(layers["elementwise"].sum()), 0.0)


#: why an eager stack cannot time a model that has no layer table (accelkit.select.reasons puts it in words)
EAGER_NO_TABLE_WHY = ("the {stack} stack runs each layer as its own kernel, and {model} has no layer table to count "
                      "them (a fused stack such as tensorrt, or a model with a layer table: ResNet-50, ViT, BERT)")

#: why a chip whose memory is on the chip has no figure (accelkit.select.reasons puts it in words)
ON_CHIP_WHY = ("no published rate of {model} at {precision} for this chip (its memory is on the chip: only the "
               "vendor's own figures project it)")


def _published_overrides(names, row, precision, batch_size):
    """Per device: the time of a pass at the vendor's published rate (NaN where none), the
    words naming that source, and which devices are projected from published rates only
    (:mod:`accelkit.projection.published`)."""
    from .published import published_devices, published_rate

    listed = published_devices()
    only = np.array([n in listed for n in names])
    lat = np.full(len(names), np.nan)
    src = np.full(len(names), "", dtype=object)
    for i in np.flatnonzero(only):
        hit = published_rate(names[i], str(row.get("name", "")), precision, batch_size)
        if hit is not None:
            fps, r = hit
            lat[i] = batch_size / fps
            src[i] = f"published: {fps:g} frames/s at batch {int(r['batch_size'])} ({r['source_url']})"
    return lat, src, only


def _stacks_for(ceil, stack):
    """The stack of each device: the one asked for, or the device vendor's default."""
    from ..catalog import load_catalog
    from .stacks import default_stack

    if stack is not None:
        return np.full(len(ceil), stack_row(stack, workload="vision")["stack"], dtype=object)
    vendors = load_catalog().set_index("name")["vendor"]
    by_vendor = {v: default_stack(v) for v in set(vendors)}
    return np.array([by_vendor.get(vendors.get(n, ""), "vendor-compiler") for n in ceil["name"]], dtype=object)


def vision(device=None, model="ResNet-50", precision="int8", batch_size=1, catalog=None, measurements=None,
           utilization=None, peak=None, stack=None, seq_len=None, power_mode=None, layers=None, power_envelope_w=None,
           **overrides):
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
    stack : str, optional
        The software stack (``data/stacks.csv``: ``tensorrt``, ``tensorflow``,
        ``tensorflow-xla``, ``pytorch-eager``, ``vendor-compiler``); default per device,
        TensorRT on NVIDIA parts and the vendor's graph compiler elsewhere.
    seq_len : int, optional
        An encoder's tokens per sample (default the preset's ``max_seq_len``).
    power_mode : str, optional
        A Jetson's ``nvpmodel`` mode (``data/edge_power_modes.csv``: AGX Orin ``MAXN``,
        ``50W``, ``30W``, ``15W``, ...; one device only): its GPU rate and memory bandwidth
        scale by the TPCs and clocks the mode keeps, and at INT8 its DLAs' part of the peak by
        their clock (:mod:`accelkit.projection.power_modes`).
        Default: the catalogue's figures (the top mode).
    power_envelope_w : float, optional
        A power budget per device [W]: a device whose TDP exceeds it runs in its highest
        ``nvpmodel`` mode within it (:func:`~accelkit.projection.power_modes.mode_within`), as an
        engineer would configure it; a device with no such mode keeps its catalogue figures
        (the limit then excludes it). ``power_mode`` / ``power_w`` say which mode each runs in.
    layers : pandas.DataFrame, optional
        A layer table in place of the preset's (:func:`~accelkit.projection.vision_layers.layer_table`'s
        columns); :func:`~accelkit.projection.recommender.recommender` passes its embedding gather at
        the tables' precision.

    Returns
    -------
    dict or pandas.DataFrame
        ``latency_s`` (one pass of ``batch_size``), ``frame_ms`` (the same in ms: the
        time a frame waits for its pass), ``frames_per_s`` (per device), each with
        ``_low``/``_high``; ``compute_s``, ``memory_s``, ``floor_s`` (the parts),
        ``peak_ops``, ``matmul_source``, ``memory_source``, ``stack`` (the stack
        used), ``kernels`` (kernels per pass), ``clock_mhz`` / ``clock_source`` (the clock a
        compiled kernel's cycles run at; ``clock_source_url`` its address, "" for the listed median),
        ``l2_cache_bytes`` / ``l2_source`` (NaN / "": none published),
        ``power_mode`` / ``power_w`` (the ``nvpmodel`` mode run and its watts; "" and NaN: the top
        mode at the TDP), ``feasible``/``why``.
    """
    from .._validate import check_fraction
    from ..catalog import load_catalog

    check_integer("batch_size", batch_size, low=1, what="a batch size")
    if seq_len is not None:
        check_integer("seq_len", seq_len, low=1, what="an encoder's tokens per request")
    if utilization is not None:
        check_fraction("utilization", utilization, "a utilisation (share of the dense peak)")
    mode, w_bytes, mm_precision, _ = resolve_precision(precision)
    flops, row = frame_flops(model)
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    layers = layer_table(row, seq_len) if layers is None else layers
    if layers is not None:
        flops = float(layers["flops"].sum())
    gpu_share, memory_share, dla_share, mode_names, mode_w = device_mode_shares(ceil, single, catalog, power_mode,
                                                                                power_envelope_w)
    stacks = _stacks_for(ceil, stack)
    execution = {st: stack_row(st)["execution"] for st in set(stacks)}
    eager = np.array([execution[st] == "eager" for st in stacks])
    weights = float(row["params"]) * w_bytes
    own_peak = ceil[f"peak_{mm_precision}"].to_numpy(dtype=float)
    peak_ops = own_peak if peak is None else np.asarray(peak, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(own_peak > 0, peak_ops / own_peak, np.nan)
    gpu_share = engine_share(ceil, catalog, mm_precision, peak_ops, own_peak, gpu_share, dla_share)
    kernels = _kernels(layers, eager)
    clock_hz, clock_words = gpu_clocks(ceil["name"], mode_names)
    l2 = l2_cache_bytes(ceil["name"])
    # a compiled kernel's fixed cost is GPU cycles; an eager framework's is the host's dispatch, in seconds
    floor = kernels * np.where(eager, k["vision_kernel_s_eager"], k["vision_kernel_cycles_fused"] / clock_hz)
    vendors = (load_catalog() if catalog is None else catalog).set_index("name")["vendor"]
    cuda_core_fp32 = (mm_precision == "fp32") & (vendors.reindex(ceil["name"]).to_numpy() == "NVIDIA")
    out = {"name": ceil["name"].to_numpy()}
    for level, rate_level in (("", ""), ("_low", "_high"), ("_high", "_low")):
        if utilization is None:
            # the share of the matmul ceiling a stack's convolutions and GEMMs reach (fitted per class); the eager
            # share is a tensor-core one: an fp32 layer on an NVIDIA GPU runs the CUDA-core SGEMM its own ceiling
            # measures (module docstring)
            share = np.where(eager & ~cuda_core_fp32, k["vision_gemm_fraction_eager"], k["vision_gemm_fraction_fused"])
            rate = ceil[f"matmul_{mm_precision}{rate_level}"].to_numpy(dtype=float) * scale * share * gpu_share
        else:
            rate = peak_ops * utilization * gpu_share
        bw = ceil[f"memory_bw{rate_level}"].to_numpy(dtype=float) * memory_share
        if layers is None:
            t = vision_seconds(flops, weights, rate, bw, batch_size, k, floor)
        else:
            t = layer_seconds(layers, w_bytes, ACT_BYTES.get(mm_precision, 2.0), eager, rate, bw, batch_size, k,
                              l2) + floor
        out[f"latency_s{level}"] = t
        if level == "":
            out["compute_s"], out["memory_s"] = flops * batch_size / rate, weights / bw
    out["floor_s"] = floor
    # chips whose weights live on the chip (Hailo, Coral): the vendor's published rate or nothing
    lat_pub, src_pub, only_pub = _published_overrides(ceil["name"].to_numpy(), row, mode, batch_size)
    for level in ("", "_low", "_high"):
        out[f"latency_s{level}"] = np.where(only_pub, lat_pub, out[f"latency_s{level}"])
    # widen by the engine's own error on published image-model and encoder measurements (MLPerf, ...)
    term = {"recommender": "model_error_recommender", "encoder": "model_error_encoder"}.get(row.get("kind"), "model_error_vision")
    e = np.where(only_pub, 0.0, k[term])  # a published figure of this very configuration: no model term
    out["latency_s_low"], out["latency_s_high"] = out["latency_s_low"] / (1 + e), out["latency_s_high"] * (1 + e)
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"frame_ms{level}"] = units.s_to_ms(out[f"latency_s{level}"])
        out[f"frames_per_s{level}"] = batch_size / out[f"latency_s{src}"]
    out["peak_ops"] = peak_ops
    out["stack"] = np.where(only_pub, "vendor-compiler", stacks)
    out["kernels"] = kernels
    out["clock_mhz"], out["clock_source"] = clock_hz / units.MEGA, clock_words
    out["clock_source_url"] = gpu_clock_sources(ceil["name"], mode_names)
    out["l2_cache_bytes"], out["l2_source"] = l2, l2_cache_sources(ceil["name"])
    out["power_mode"] = mode_names
    out["power_w"] = mode_w
    out["matmul_source"] = (ceil[f"matmul_{mm_precision}_source"].to_numpy() if utilization is None else
                            np.full(len(ceil), f"your utilisation {utilization:.0%} of the dense {mm_precision} peak"))
    out["matmul_source"] = np.where(only_pub, src_pub, out["matmul_source"])
    out["memory_source"] = np.where(only_pub, "on-chip memory (the vendor's published rate covers it)",
                                    ceil["memory_bw_source"].to_numpy())
    feasible = np.isfinite(out["latency_s"])
    out["feasible"] = feasible
    out["why"] = np.where(feasible, "", np.where(~np.isfinite(peak_ops), f"no published dense {mm_precision} peak",
                                                 np.where(~np.isfinite(out["memory_s"]), "no published memory bandwidth",
                                                          f"no published dense {mm_precision} matmul efficiency")))
    # an eager stack runs every layer as its own kernels: without the model's layer table they cannot be counted
    no_table = ~feasible & ~np.isfinite(kernels) & np.isfinite(peak_ops)
    out["why"] = np.where(no_table, np.array([EAGER_NO_TABLE_WHY.format(stack=st, model=row.get("name", "this model"))
                                              for st in stacks], dtype=object), out["why"])
    out["why"] = np.where(only_pub & ~feasible,
                          ON_CHIP_WHY.format(model=row.get("name", "this model"), precision=mode), out["why"])
    if stack is not None:
        # a stack asked for by name prices only the parts it runs on (TensorRT: NVIDIA's), a chip priced from its
        # vendor's published rate included (Hailo's figures are its own compiler's, not TensorRT's)
        not_run = stack_not_run_why(stacks, ceil["name"], catalog)
        out["feasible"], out["why"] = feasible & (not_run == ""), np.where(not_run == "", out["why"], not_run)
        for c in [c for c in out if c.startswith(("latency_s", "frame_ms", "frames_per_s"))]:
            out[c] = np.where(out["feasible"], out[c], np.nan)
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
    from .sample_training import data_parallel_allreduce_seconds, sample_work_seconds
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
    grad = 2.0 * params * (1.5 if zero >= 3 else 1.0)
    out = {"name": ceil["name"].to_numpy()}
    steps = {}
    for level in ("", "_low", "_high"):
        bw = ceil[f"memory_bw{level}"].to_numpy(dtype=float)
        compute, work = sample_work_seconds(ceil, level, precision, flops, traffic, b, k, utilization)
        dp_comm = data_parallel_allreduce_seconds(ceil, level, grad, n, per_node, net_bw)
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
    return one_or_frame(pd.DataFrame(out), single)
