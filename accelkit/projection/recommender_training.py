"""Training a DLRM-class recommender: hybrid parallel, samples per second.

The MLPs and cross layers are data parallel (each device runs its ``b`` samples forward and
backward, their gradients all-reduced); the embedding tables are model parallel, split
table-wise over all ``n`` devices, because they are far larger than one device (DLRM-v2's
26 tables hold 104.5 GB in fp32) -- Naumov et al., "Deep Learning Recommendation Model for
Personalization and Recommendation Systems", arXiv:1906.00091 (2019), §3 ("model parallelism
for the embeddings, data parallelism for the MLPs, butterfly shuffle between them"); Mudigere
et al., "Software-Hardware Co-design for Fast and Scalable Training of DLRM", ISCA 2022, §3.

One step, per device (``b`` samples per device, ``n`` devices):

* **MLPs**: ``3 · F · b`` FLOP (backward ≈ 2 × forward, Kaplan et al. 2020 §2.1) at the
  achievable matmul rate × ``gemm_fraction``, against their feature maps read and written in
  the forward and twice in the backward pass (``3 · Σ maps`` elements per sample), combined
  by ``roofline_overlap``;
* **embeddings**: each device looks up its tables' rows for the whole global batch, ``b ·
  Σh`` rows on average, and in the backward pass reads and writes each again with its
  Adagrad state (a fused sparse update): ``b · Σh · dim · (3 · e + 2 · s)`` bytes at the
  achievable bandwidth, ``e`` the tables' bytes per element and ``s`` the state's (4 with
  Adagrad's accumulator per element, as NVIDIA's HugeCTR MLPerf submissions budget 8 bytes per
  fp32 element; ~0 with row-wise Adagrad's one accumulator per row);
* **all-to-all** of the pooled vectors, forward and backward: ``2 · b · n_sparse · dim``
  elements, ``(n − 1)/n`` of them leaving the device -- over the node's link inside a node,
  over the network port across nodes -- each with a start-up of ``2 · α · log2 n`` (``α`` the
  device's measured all-reduce latency, the engine's convention for collectives);
* **dense gradients**: the all-reduce of the MLPs' 16 M parameters (bf16), hierarchical as
  :func:`~accelkit.projection.vision.vision_training`'s, ``dp_overlap`` of it hidden behind the
  backward pass;
* **kernels**: three per layer (the forward, and the backward's activation and weight
  gradients), each ``vision_kernel_cycles_fused`` GPU cycles at the device's clock
  (:func:`~accelkit.projection.clocks_caches.gpu_clocks`) -- the per-kernel cost fitted for
  compiled, graph-launched stacks (TensorRT, XLA), which is how MLPerf's HugeCTR runs a step (CUDA
  graphs); not the LLM engines' ``prefill_overhead_s``, a Python serving loop's cost, which
  alone would be 70 % of a DLRM-v2 step on 8 H100s.

Memory per device: the tables' share with their optimizer state, ``elements · (e + s) / n``
(``rows · 4`` for row-wise Adagrad), plus the MLPs with Adam-like state (16 bytes per
parameter); a cluster that cannot hold that is not feasible and says how many devices it
needs. Activations are not counted.

Checked against MLPerf Training v3.0-v4.0 DLRM-v2 (HugeCTR on H100, H200 and A100, 8 to 128
GPUs; ``accelkit validate``, category ``recommender_training``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_choice, check_fraction, check_integer, check_positive
from .ceilings import ceilings_for, one_or_frame
from .clocks_caches import gpu_clocks
from .constants import constants
from .recommender import EMBEDDING_BYTES, recommender_row
from .recommender_layers import dense_params, embedding_rows, lookups_per_sample, recommender_layers, table_elements
from .sample_training import (collective_startup_seconds, data_parallel_allreduce_seconds, node_link,
                              sample_work_seconds)
from .vision_layers import ACT_BYTES

__all__ = ["recommender_training", "RECOMMENDER_TRAIN_BATCH", "recommender_training_memory"]

#: samples per device per step when none is given: MLPerf's DLRM-v2 reference trains with a global
#: batch of 65,536 (mlcommons/training recommendation_v2/torchrec_dlrm README, GLOBAL_BATCH_SIZE=65536)
#: on 8 GPUs, 8,192 per GPU
RECOMMENDER_TRAIN_BATCH = 8192

#: optimizer -> (state bytes per embedding element, per embedding row): Adagrad keeps an fp32
#: accumulator per element (NVIDIA's HugeCTR planner budgets ``byte_per_elem = 8`` for fp32 tables
#: under Adagrad, NVIDIA-Merlin/HugeCTR samples/dlrm/sharding/generate_plan.py); row-wise Adagrad one
#: per row (FBGEMM's EXACT_ROWWISE_ADAGRAD)
OPTIMIZER_STATE = {"adagrad": (4.0, 0.0), "rowwise-adagrad": (0.0, 4.0)}
#: bytes per MLP parameter in mixed-precision training with Adam-like state (weights, gradient, two moments)
DENSE_STATE_BYTES = 16.0


def table_state_bytes(structure, embedding_bytes, optimizer="adagrad"):
    """Bytes of the embedding tables and their optimizer state, over all devices."""
    per_element, per_row = OPTIMIZER_STATE[optimizer]
    return table_elements(structure) * (embedding_bytes + per_element) + embedding_rows(structure) * per_row


def recommender_training_memory(structure, embedding_bytes, n_devices, optimizer="adagrad"):
    """Bytes per device of a recommender's model state when its tables are split over ``n_devices``."""
    return (table_state_bytes(structure, embedding_bytes, optimizer) / np.asarray(n_devices, dtype=float)
            + dense_params(structure) * DENSE_STATE_BYTES)


def recommender_training(device=None, model="DLRM-v2", samples=4_195_197_692, precision="bf16", n_devices=8,
                         batch_size=RECOMMENDER_TRAIN_BATCH, embedding_precision="fp32", optimizer="adagrad",
                         devices_per_node=8, network_gbps=None, catalog=None, measurements=None, utilization=None,
                         **overrides):
    """Projected time and rate of training a recommender preset on ``n_devices``.

    Parameters
    ----------
    samples : float
        Samples to train on (one epoch of Criteo 1TB is 4,195,197,692).
    precision : str
        The MLPs' training precision (``bf16``, ``fp16``, ``tf32``, ``fp32``).
    batch_size : int
        Samples per device per step.
    embedding_precision : str
        The tables' storage (``fp32`` by default, as in MLPerf's DLRM-v2 submissions).
    optimizer : str
        ``adagrad`` (a state per element, MLPerf's HugeCTR submissions) or ``rowwise-adagrad``.
    utilization : float, optional
        The person's share (0-1] of the dense peak the MLPs reach; replaces their projected time.

    Returns
    -------
    dict or pandas.DataFrame
        ``step_s, samples_per_s, samples_per_s_per_device, seconds, days, device_hours`` (each
        with ``_low``/``_high``), ``mlp_s``, ``embedding_s``, ``exchange_s``, ``allreduce_s``,
        ``kernels_s`` (the step's parts), ``memory_per_device_bytes``, ``min_devices_memory``,
        ``matmul_source``, ``memory_source``, ``feasible``/``why``.
    """
    from .systems import network_bandwidth
    from .training import TRAIN_PRECISIONS

    check_positive("samples", samples, "a number of training samples")
    for name, value, what in (("n_devices", n_devices, "a number of devices"),
                              ("batch_size", batch_size, "samples per device per step"),
                              ("devices_per_node", devices_per_node, "a number of devices per node")):
        check_integer(name, value, low=1, what=what)
    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    emb = check_choice("embedding_precision", embedding_precision, list(EMBEDDING_BYTES))
    optimizer = check_choice("optimizer", optimizer, list(OPTIMIZER_STATE))
    if utilization is not None:
        check_fraction("utilization", utilization, "a model FLOPs utilisation")
    row, structure = recommender_row(model)
    k = constants(**overrides)
    n, b = int(n_devices), int(batch_size)
    e_bytes, act = EMBEDDING_BYTES[emb], ACT_BYTES.get(precision, 2.0)
    layers = recommender_layers(structure)
    mlp = layers[layers["layer"] != "embedding_gather"]
    flops = float(mlp["flops"].sum())
    maps = 3.0 * float((mlp["act_in"] + mlp["act_out"]).sum()) * act
    rows_bytes = lookups_per_sample(structure) * float(structure["embedding_dim"]) * (
        3.0 * e_bytes + 2.0 * OPTIMIZER_STATE[optimizer][0])
    pooled = len(structure["table_rows"]) * float(structure["embedding_dim"]) * act
    dense_grad = 2.0 * dense_params(structure)
    ceil, single = ceilings_for(device, catalog, measurements)
    kernels = 3.0 * len(layers) * k["vision_kernel_cycles_fused"] / gpu_clocks(ceil["name"])[0]
    net_bw, _ = network_bandwidth(ceil, catalog, network_gbps)
    per_node = float(min(devices_per_node, n))
    peak = ceil[f"peak_{precision}"].to_numpy(dtype=float)
    out = {"name": ceil["name"].to_numpy()}
    steps, parts = {}, {}
    for level in ("", "_low", "_high"):
        compute, work = sample_work_seconds(ceil, level, precision, flops, maps, b, k, utilization)
        embedding = rows_bytes * b / ceil[f"memory_bw{level}"].to_numpy(dtype=float)
        link = node_link(ceil, level, per_node)
        with np.errstate(invalid="ignore", divide="ignore"):
            # forward and backward; the share of the peers in the node over the link, the rest over the network;
            # each with a collective's start-up
            exchange = np.where(n > 1, 2.0 * (b * pooled * ((per_node - 1.0) / n / link + (n - per_node) / n / net_bw)
                                              + collective_startup_seconds(ceil, level, n)), 0.0)
        # the MLPs' gradients, as an image model's (sample_training)
        dense = data_parallel_allreduce_seconds(ceil, level, dense_grad, n, per_node, net_bw)
        exposed = dense - k["dp_overlap"] * np.minimum(dense, compute * 2.0 / 3.0)
        steps[level] = work + embedding + exchange + exposed + kernels
        if level == "":
            parts = {"mlp_s": work, "embedding_s": embedding, "exchange_s": exchange, "allreduce_s": exposed,
                     "kernels_s": kernels * np.ones(len(ceil))}
    e = k["model_error_recommender"]
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        out[f"step_s{level}"] = steps[src]
        out[f"samples_per_s{level}"] = n * b / steps[level]
    for level in ("", "_low", "_high"):
        out[f"samples_per_s_per_device{level}"] = out[f"samples_per_s{level}"] / n
        out[f"seconds{level}"] = samples / out[f"samples_per_s{level}"]
    out["seconds_low"], out["seconds_high"] = samples / out["samples_per_s_high"], samples / out["samples_per_s_low"]
    # widen by the engine's own error on published recommender measurements
    for name in ("step_s", "seconds"):
        out[f"{name}_low"], out[f"{name}_high"] = out[f"{name}_low"] / (1.0 + e), out[f"{name}_high"] * (1.0 + e)
    for name in ("samples_per_s", "samples_per_s_per_device"):
        out[f"{name}_low"], out[f"{name}_high"] = out[f"{name}_low"] / (1.0 + e), out[f"{name}_high"] * (1.0 + e)
    for level in ("", "_low", "_high"):
        out[f"days{level}"] = out[f"seconds{level}"] / units.SECONDS_PER_DAY
        out[f"device_hours{level}"] = out[f"seconds{level}"] * n / units.SECONDS_PER_HOUR
        out[f"mfu{level}"] = out[f"samples_per_s_per_device{level}"] * 3.0 * flops / peak
    out.update(parts)
    need = recommender_training_memory(structure, e_bytes, n, optimizer)
    usable = ceil["memory_bytes"].to_numpy(dtype=float) * (1.0 - k["serving_reserve_fraction"])
    tables = table_state_bytes(structure, e_bytes, optimizer)
    with np.errstate(invalid="ignore", divide="ignore"):
        fewest = np.ceil(tables / (usable - dense_params(structure) * DENSE_STATE_BYTES))
    out["memory_per_device_bytes"] = np.full(len(ceil), float(need))
    out["min_devices_memory"] = fewest
    out.update({"n_devices": n, "micro_batch_size": b, "global_batch": n * b, "precision": precision,
                "embedding_precision": emb, "optimizer": optimizer, "model": row["name"], "flops_per_sample": 3.0 * flops,
                "zero_stage": 0, "tensor_parallel": 1, "pipeline_parallel": 1, "data_parallel": n})
    out["matmul_source"] = (ceil[f"matmul_{precision}_source"].to_numpy() if utilization is None
                            else np.full(len(ceil), f"your MFU {utilization:.0%} of the dense {precision} peak"))
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    projected = np.isfinite(np.asarray(out["step_s"], dtype=float))
    fits = need <= usable
    out["feasible"] = projected & fits
    gb = units.GIGA
    out["why"] = np.where(~projected, f"no published dense {precision} peak, memory bandwidth or link figure",
                          np.where(fits, "", [f"{tables / gb:,.1f} GB of {emb} embedding tables and optimizer state "
                                              f"need {f:.0f} devices of {u / gb:,.1f} GB usable; {n} given"
                                              for f, u in zip(fewest, usable)]))
    return one_or_frame(pd.DataFrame(out), single)
