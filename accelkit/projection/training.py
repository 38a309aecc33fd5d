"""Transformer training projection: step time, tokens/s and MFU as results.

For a cluster of ``n_devices`` split into tensor-parallel ``t`` × pipeline ``p`` ×
data-parallel ``d`` groups, one optimizer step of ``G`` sequences of ``s`` tokens
(micro-batches of ``b``):

* per micro-batch and device: linear-layer FLOP ``3 × 2·N_body·b·s/(t·p)`` (forward +
  backward = 3 forward passes, [1]_) plus causal FlashAttention ``3.5 × 2·(n_layers/p)·
  s²·d_attn·b/t`` (its backward runs 5 matmuls to the forward's 2 because it
  recomputes the scores, [8]_), at the achievable matmul rate; full recomputation adds
  one forward of everything ([2]_; with FlashAttention, ``selective`` costs nothing
  more: the scores are never stored); the non-matmul work moves
  ``train_elementwise_bytes_per_token_layer × d_model`` bytes per token per layer at
  the achievable bandwidth; tensor parallelism adds four all-reduces per layer
  (six with full recomputation) of ``b·s·d_model`` 16-bit activations over the
  device's link ([3]_ §3);
* the pipeline runs ``m = G/(b·d)`` micro-batches with a bubble of ``(p−1)/v``
  micro-batch times for ``v`` interleaved stages ([1]_ §2.2);
* the data-parallel gradient all-reduce (bf16 gradients; 1.5× the volume under
  ZeRO-3 for the parameter gathers, [4]_) runs inside a node over the link and
  across nodes hierarchically over each device's network port ([5]_), with
  ``dp_overlap`` of it hidden behind the backward pass ([6]_);
* the optimizer step streams about 32 bytes per (sharded) parameter.

Ranges span the efficiencies' published spread, widened by the engine's
geometric-mean error on published training runs (``model_error_training``).

MFU is the model FLOPs of PaLM's convention ([7]_ appendix B: ``6·N + 12·n_layers·
d_attn·s`` per token, no recomputation) per second over the dense datasheet peak.

Fine-tuning methods (``finetune_method``): ``full`` is the model above. ``lora`` and
``qlora`` train low-rank adapters on frozen weights ([9]_, [10]_): the forward pass (2·N)
and the activation gradients (2·N) still run through every layer, the weight gradients
of the frozen layers (2·N) are skipped, so the linear layers cost 2 forward passes instead
of 3 (plus ``6·A`` for ``A`` adapter parameters; attention, which has no weights, costs the
same); the gradient all-reduce and the optimizer step cover the adapters only. ``qlora``
also dequantises every NF4 weight to BF16 each time a pass uses it ([10]_ §3, eqs. 5-6:
forward, backward, and the recomputed forward): modelled as a memory-bound pass reading
4.127 bits and writing 16 bits per weight at the achievable bandwidth. Memory:
:func:`accelkit.memory.finetune_bytes_breakdown`; QLoRA's adapter optimizer state is paged
([10]_) and not counted as resident.

References
----------
.. [1] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC21, arXiv:2104.04473.
.. [2] V. Korthikanti et al., "Reducing Activation Recomputation in Large
   Transformer Models", arXiv:2205.05198.
.. [3] M. Shoeybi et al., "Megatron-LM", arXiv:1909.08053.
.. [4] S. Rajbhandari et al., "ZeRO", SC20, arXiv:1910.02054, §7.
.. [5] X. Jia et al., arXiv:1807.11205 (hierarchical all-reduce).
.. [6] S. Li et al., "PyTorch Distributed", VLDB 2020, arXiv:2006.15704.
.. [7] A. Chowdhery et al., "PaLM", arXiv:2204.02311, appendix B.
.. [8] T. Dao, "FlashAttention-2", arXiv:2307.08691 (2023), §3.1 (backward pass).
.. [9] E. Hu et al., "LoRA", ICLR 2022, arXiv:2106.09685, §4.2 ("we do not need to calculate
   the gradient for the vast majority of the parameters": 25 % faster on GPT-3 175B).
.. [10] T. Dettmers et al., "QLoRA", NeurIPS 2023, arXiv:2305.14314, §3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import memory, units
from .._validate import check_choice, check_integer, check_positive
from .ceilings import allreduce_seconds, ceilings_for
from .constants import constants
from .finetune import LORA_TARGETS, finetune_settings, finetune_terms
from .shapes import resolve_model
from .systems import network_bandwidth

__all__ = ["training", "training_memory_bytes", "train_core", "model_flops_per_token",
           "TRAIN_PRECISIONS", "STEP_TOKENS", "finetune_terms", "finetune_settings",
           "LORA_TARGETS"]

TRAIN_PRECISIONS = ("bf16", "fp16", "fp8", "tf32", "fp32")
_ACT_BYTES = 2.0
#: tokens per optimizer step the workbook aims at: 2**22, Llama 2's 4M-token batch
STEP_TOKENS = 2**22
def model_flops_per_token(shape, seq_len, finetune=None):
    """Model FLOP per trained token, PaLM's convention ([7]_):
    ``6·N_body + 6·vocab·d_model + 12·n_layers·d_attn·seq_len`` (non-causal attention,
    no recomputation) [FLOP]. With LoRA / QLoRA (``finetune`` from :func:`finetune_terms`)
    the frozen layers' weight gradients are not computed: ``4·N_body + 4·vocab·d_model +
    6·A`` for ``A`` adapter parameters, attention as before ([9]_)."""
    n_l = shape.n_layers if np.isfinite(shape.n_layers) else 0.0
    d_attn = shape.attention_dim if np.isfinite(shape.attention_dim) else 0.0
    linear = 3.0 if finetune is None or finetune["method"] == "full" else 2.0
    adapters = 0.0 if finetune is None else 6.0 * finetune["adapters"]
    return (2.0 * linear * shape.active_body_params + linear * shape.head_flops_per_token + adapters
            + 12.0 * n_l * d_attn * seq_len)


def train_core(shape, rates, tp, pp, dp, seq_len, micro_batch, global_batch, virtual_stages, recompute, zero_stage,
               devices_per_node, k, cp=1, finetune=None):
    """The training model on arrays (see the module notes). Returns a dict of arrays:
    ``step_s, microbatch_s, compute_s, elementwise_s, tp_comm_s, bubble_s, dp_comm_s,
    optimizer_s`` [s]. ``finetune`` (:func:`finetune_terms`; ``None``: full training)
    selects the LoRA / QLoRA terms."""
    ft = finetune or {"method": "full", "adapters": 0.0, "trainable": shape.params, "quantized": 0.0}
    frozen = ft["method"] != "full"
    linear = 2.0 if frozen else 3.0
    mm, mm_attn, bw = rates["mm"] * k["gemm_fraction"], rates["mm_attn"] * k["attention_fraction"], rates["bw"]
    n_l = shape.n_layers if np.isfinite(shape.n_layers) else 0.0
    d = shape.d_model if np.isfinite(shape.d_model) else 0.0
    d_attn = shape.attention_dim if np.isfinite(shape.attention_dim) else 0.0
    # context parallel: each of cp ranks holds s/cp tokens of every sequence (and a 1/cp share of its attention)
    tokens_mb = micro_batch * seq_len / cp
    layers = n_l / pp
    lin_fwd = (2.0 * shape.active_body_params + shape.head_flops_per_token) * tokens_mb / (tp * pp)
    attn_fwd = 2.0 * layers * seq_len * seq_len * d_attn * micro_batch / tp / cp
    full = np.asarray(recompute) == "full"  # one name, or one per layout projected
    extra = np.where(full, 1.0, 0.0)
    adapter_fwd = 2.0 * ft["adapters"] * tokens_mb / (tp * pp)
    if rates.get("mfu") is not None:
        # the person's own MFU: model FLOPs (PaLM convention) at that share of the dense peak
        compute = (model_flops_per_token(shape, seq_len, finetune) * tokens_mb / (tp * pp)
                   / (rates["peak"] * rates["mfu"]))
        elementwise = 0.0 * compute
    else:
        compute = ((linear + extra) * lin_fwd / mm + (3.5 + extra) * attn_fwd / mm_attn
                   + (3.0 + extra) * adapter_fwd / mm)
        elementwise = k["train_elementwise_bytes_per_token_layer"] * d * tokens_mb * layers / tp / bw
    if ft["method"] == "qlora":
        # every NF4 weight dequantised to BF16 whenever a pass uses it (forward, backward, recomputed forward)
        elementwise = elementwise + (2.0 + extra) * ft["quantized"] / (tp * pp) * (memory.NF4_DQ_BITS / 8.0
                                                                                     + 2.0) / bw
    n_ar = np.where(full, 6.0, 4.0)
    link_bw = np.where(tp <= rates["link_max"], rates["ar_bw"], rates["ar_bw_pcie"])
    tp_bw = np.where(tp <= devices_per_node, link_bw, rates["net_bw"])
    tp_comm = n_ar * layers * allreduce_seconds(tokens_mb * d * _ACT_BYTES, tp, tp_bw, rates["ar_lat"])
    microbatch = compute + elementwise + tp_comm
    m = np.maximum(global_batch / (micro_batch * dp), 1.0)
    # pipeline-stage boundaries: activations forward and gradients back, over the network
    p2p = np.where(pp > 1, 2.0 * tokens_mb * d * _ACT_BYTES / tp / rates["net_bw"], 0.0)
    bubble = (pp - 1.0) / virtual_stages * (microbatch + p2p)
    pipeline = m * (microbatch + p2p) + bubble
    if frozen:
        # adapters' gradients reduce-scattered; under ZeRO-3 the frozen weights are gathered twice (all-reduce units)
        weight_bytes = memory.finetune_bytes_breakdown(shape.params, ft["method"], 0.0, ft["quantized"] or None)
        grad_bytes = (2.0 * ft["trainable"] + np.where(zero_stage >= 3, weight_bytes["weights"] - ft["trainable"],
                                                       0.0)) / (tp * pp)
    else:
        grad_bytes = 2.0 * shape.params / (tp * pp) * np.where(zero_stage >= 3, 1.5, 1.0)
    # the gradient is reduced over every rank that holds the same weights: data × context parallel
    dp_group = dp * cp
    per_node = np.maximum(np.minimum(devices_per_node / (tp * pp), dp_group), 1.0)
    nodes = np.maximum(np.ceil(dp_group / per_node), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        # reduce-scatter + all-gather inside the node, all-reduce of each 1/g shard across nodes ([5]_)
        node_bw = np.where(per_node <= rates["link_max"], rates["ar_bw"], rates["ar_bw_pcie"])
        intra = np.where(per_node > 1, 2.0 * (per_node - 1.0) / per_node * grad_bytes / node_bw, 0.0)
        across = np.where(nodes > 1, 2.0 * (nodes - 1.0) / nodes * grad_bytes / per_node / rates["net_bw"], 0.0)
    dp_comm = np.where(dp_group > 1, intra + across + 2.0 * rates["ar_lat"] * np.log2(np.maximum(dp_group, 1.0)), 0.0)
    # hidden behind the backward pass: the last micro-batch's (DDP/ZeRO-1/2), every one's (ZeRO-3 prefetch)
    window = np.where(zero_stage >= 3, m, 1.0) * compute * (linear - 1.0) / linear
    exposed = dp_comm - k["dp_overlap"] * np.minimum(dp_comm, window)
    shard = tp * pp * np.where(zero_stage >= 1, dp_group, 1.0)
    optimizer = 32.0 * ft["trainable"] / shard / bw
    step = pipeline + exposed + optimizer + k["train_step_overhead_s"]
    return {"step_s": step, "microbatch_s": microbatch, "compute_s": m * compute, "elementwise_s": m * elementwise,
            "tp_comm_s": m * tp_comm, "bubble_s": bubble, "dp_comm_s": exposed, "dp_comm_total_s": dp_comm,
            "optimizer_s": optimizer}


def _rates(ceil, precision, level, net_bw, utilization=None):
    lat_level = {"": "", "_low": "_high", "_high": "_low"}[level]
    attn = ceil[f"matmul_bf16{level}"].fillna(ceil[f"matmul_fp16{level}"])
    if precision in ("fp32", "tf32"):
        attn = ceil[f"matmul_{precision}{level}"]
    return {"mm": ceil[f"matmul_{precision}{level}"].to_numpy(dtype=float),
            "mm_attn": attn.to_numpy(dtype=float),
            "bw": ceil[f"memory_bw{level}"].to_numpy(dtype=float),
            "ar_bw": ceil[f"allreduce_bw{level}"].to_numpy(dtype=float),
            "ar_bw_pcie": ceil[f"allreduce_bw_pcie{level}"].to_numpy(dtype=float),
            "link_max": ceil["link_max_devices"].to_numpy(dtype=float),
            "ar_lat": ceil[f"allreduce_latency_s{lat_level}"].to_numpy(dtype=float),
            "net_bw": net_bw, "mfu": utilization,
            "peak": ceil[f"peak_{precision}"].to_numpy(dtype=float)}


def training(device=None, model="Llama-2 7B", tokens=2e12, precision="bf16", n_devices=8, tensor_parallel=1,
             pipeline_parallel=1, seq_len=2048, global_batch_tokens=None, recompute="selective", zero_stage=None,
             micro_batch_size=1, virtual_stages=1, context_parallel=1, devices_per_node=8, network_gbps=None,
             catalog=None, measurements=None, check_memory=True, utilization=None, finetune_method="full",
             lora_rank=16, lora_targets="all", **overrides):
    """Projected training speed of a model on a cluster of one device type.

    Parameters
    ----------
    device : str, list of str or None
        A catalogue name (returns a dict) or a list / ``None`` (a DataFrame).
    model : str or dict
        A preset name or a dict with ``params, n_layers, d_model, n_heads`` (…).
    tokens : float
        Tokens to train on [count].
    precision : {"bf16", "fp16", "fp8", "tf32", "fp32"}
        Matmul precision (mixed precision with fp32 master weights).
    n_devices : int
        Devices in the cluster = tensor × pipeline × data parallel.
    tensor_parallel, pipeline_parallel : int
    seq_len : int
        Tokens per sequence.
    global_batch_tokens : float, optional
        Tokens per optimizer step (default 4,194,304 = 2**22, Llama 2's 4M-token
        batch), rounded down to whole sequences and to a multiple of ``micro_batch_size``
        × data parallel.
    recompute : {"none", "selective", "full"}
        Activation recomputation (Korthikanti et al.).
    zero_stage : int or array of int, optional
        ZeRO stage 0-3 of the data-parallel state (``None``: 1 when data parallel,
        like Megatron's distributed optimizer; else 0). An array gives one stage per
        device projected (in the order of ``device`` / the catalogue), as the
        configuration search does.
    micro_batch_size : int or array of int
        Sequences per micro-batch (an array: one per device, like ``zero_stage``;
        ``global_batch_tokens`` may then be one per device too).
    virtual_stages : int
        Interleaved pipeline stages per device.
    context_parallel : int
        Ranks that split each sequence (Megatron-Core context parallelism); their
        exchange of keys and values is taken as hidden behind the attention compute.
    network_gbps : float, optional
        Network bandwidth per device between nodes [Gbit/s] (default: the device's
        reference system in ``data/reference_systems.csv``).
    utilization : float, optional
        Your own MFU (model FLOPs over the dense peak, 0-1) in place of the projected
        compute time; communication, bubble and optimizer are still projected.
    check_memory : bool
        Treat a layout whose model state and activations exceed the device's memory
        as infeasible (``False`` projects the speed anyway and only reports ``fits``;
        the validation uses it, since a published run did fit, however it did).
    finetune_method : {"full", "lora", "qlora"}
        ``full`` trains every weight; ``lora`` trains rank-``lora_rank`` adapters on frozen
        16-bit weights, ``qlora`` on frozen NF4 weights (see the module notes).
    lora_rank : int
        Adapter rank r (LoRA / QLoRA).
    lora_targets : {"all", "qv"}
        Adapters on every linear layer of the blocks, or on W_q and W_v only.

    Returns
    -------
    dict or pandas.DataFrame
        ``step_s, tokens_per_s, tokens_per_s_per_device, mfu, seconds, days,
        device_hours`` (each with ``_low``/``_high``), the step's parts
        (``compute_s, elementwise_s, tp_comm_s, bubble_s, dp_comm_s`` exposed, ``dp_comm_total_s`` before overlap, ``optimizer_s``),
        ``memory_per_device_bytes``, ``fits``, the configuration, the ceilings'
        ``*_source`` and ``feasible`` / ``why``.
    """
    check_positive("tokens", tokens, "a number of tokens")
    for name, value, what in (("n_devices", n_devices, "a number of devices"),
                              ("tensor_parallel", tensor_parallel, "a tensor-parallel size"),
                              ("pipeline_parallel", pipeline_parallel, "a pipeline-parallel size"),
                              ("seq_len", seq_len, "a sequence length"),
                              ("micro_batch_size", micro_batch_size, "a micro-batch size"),
                              ("virtual_stages", virtual_stages, "a number of interleaved stages"),
                              ("context_parallel", context_parallel, "a context-parallel size"),
                              ("devices_per_node", devices_per_node, "a number of devices per node")):
        check_integer(name, value, low=1, what=what)
    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    if np.ndim(recompute):
        recompute = np.array([check_choice("recompute", r, ["none", "selective", "full"]) for r in recompute])
    else:
        recompute = check_choice("recompute", recompute, ["none", "selective", "full"])
    # scalars stay scalars; arrays (one value per device, from the configuration search) stay arrays
    n, cp = int(n_devices), int(context_parallel)
    tp, pp = _whole(tensor_parallel), _whole(pipeline_parallel)
    shape = resolve_model(model)
    finetune = finetune_terms(shape, finetune_method, lora_rank, lora_targets)
    _check_layout(shape, n, tp, pp, cp, virtual_stages)
    dp = n // (tp * pp * cp)
    zero = np.where(dp > 1, 1, 0) if zero_stage is None else _whole(zero_stage)
    zero = int(zero) if np.ndim(zero) == 0 else zero
    if not np.isin(zero, (0, 1, 2, 3)).all():
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3; got {zero_stage!r}")
    micro_batch_size = _whole(micro_batch_size)
    gbt = 2.0**22 if global_batch_tokens is None else np.asarray(global_batch_tokens, dtype=float)
    check_positive("global_batch_tokens", gbt, "a number of tokens per step")
    step_seqs = np.floor(gbt / seq_len / (micro_batch_size * dp)) * micro_batch_size * dp
    if np.any(step_seqs < 1):
        # name the first device whose step is short (all of them when the values are scalars)
        i = int(np.argmin(np.atleast_1d(step_seqs)))

        def first(v):
            return np.broadcast_to(v, np.shape(step_seqs)).ravel()[i] if np.ndim(step_seqs) else v

        g, mb, d = first(gbt), first(micro_batch_size), first(dp)
        raise ValueError(f"global_batch_tokens={g:g} is less than one sequence of {seq_len} tokens per "
                         f"data-parallel rank ({d} ranks × micro-batch {mb}); raise it to at least "
                         f"{seq_len * mb * d}")
    if utilization is not None:
        from .._validate import check_fraction

        check_fraction("utilization", utilization, "a model FLOPs utilisation")
    k = constants(**overrides)
    ceil, single = ceilings_for(device, catalog, measurements)
    net_bw, net_source = network_bandwidth(ceil, catalog, network_gbps)
    out = _project(shape, ceil, net_bw, net_source, tokens, precision, n, tp, pp, dp, cp, seq_len, micro_batch_size,
                   step_seqs, virtual_stages, recompute, zero, devices_per_node, k, utilization, check_memory,
                   finetune)
    if single:
        r = out.iloc[0]
        if not r["feasible"]:
            raise ValueError(_explain(r, shape, int(np.ravel(zero)[0]), int(np.ravel(tp)[0]), int(np.ravel(pp)[0]),
                                      str(np.ravel(recompute)[0])))
        return {c: (v.item() if hasattr(v, "item") else v) for c, v in r.items()}
    return out


#: the figures of a training projection that carry ``_low`` / ``_high``
_FIGURES = ("step_s", "tokens_per_s", "tokens_per_s_per_device", "mfu", "seconds", "days", "device_hours")


def _check_layout(shape, n, tp, pp, cp, virtual_stages):
    """Refuse a layout (scalars or one value per device) that cannot split the cluster or the model."""
    tp_a, pp_a = np.atleast_1d(tp), np.atleast_1d(pp)
    bad = np.flatnonzero(n % (tp_a * pp_a * cp))
    if bad.size:
        t, p = tp_a[bad[0] % tp_a.size], pp_a[bad[0] % pp_a.size]
        raise ValueError(f"tensor_parallel × pipeline_parallel × context_parallel = {t * p * cp} must divide "
                         f"n_devices={n}")
    if np.isfinite(shape.n_heads):
        odd = tp_a[shape.n_heads % tp_a != 0]
        if odd.size:
            ok = [t for t in (1, 2, 4, 8, 16) if shape.n_heads % t == 0]
            raise ValueError(f"tensor_parallel={odd[0]} does not divide the {shape.n_heads:g} attention heads of "
                             f"{shape.name}; use one of {', '.join(map(str, ok))}")
    if np.isfinite(shape.n_layers):
        deep = pp_a[shape.n_layers < pp_a * virtual_stages]
        if deep.size:
            raise ValueError(f"pipeline_parallel × virtual_stages = {deep[0] * virtual_stages} exceeds the "
                             f"{shape.n_layers:g} layers of {shape.name}; use at most {int(shape.n_layers)} stages")


def training_memory_bytes(shape, tensor_parallel, pipeline_parallel, data_parallel, zero_stage, micro_batch_size,
                          seq_len, recompute, step_seqs, context_parallel=1, finetune=None):
    """Bytes per device of a training layout: model state plus live activations [bytes].

    Model state: mixed-precision Adam (16 bytes per parameter, ZeRO stage over the
    data × context-parallel ranks, [4]_ §5) divided over the ``tp · pp`` model
    shards. Activations: Korthikanti et al.'s per-layer bytes ([2]_ eq. 2 with
    sequence parallelism; ``full`` recomputation keeps only each layer's input) for
    ``n_layers / pp`` layers and, under 1F1B, up to ``pp`` micro-batches in flight on
    the first stage ([1]_ §2.2.2). FlashAttention never stores the score matrix, so
    ``none`` keeps what ``selective`` keeps. Every argument may be an array (one value
    per layout). LoRA / QLoRA (``finetune`` from :func:`finetune_terms`): the model state of
    :func:`accelkit.memory.finetune_bytes_breakdown` without QLoRA's paged optimizer state;
    the activations are those of full training (the frozen layers' activation gradients
    still need them).
    """
    tp, pp, dp, cp = (np.asarray(v, dtype=float) for v in (tensor_parallel, pipeline_parallel, data_parallel,
                                                             context_parallel))
    if finetune is None or finetune["method"] == "full":
        state = memory.training_bytes(shape.params, "mixed", "adam", zero_stage=zero_stage, n_devices=dp * cp)
    else:
        parts = memory.finetune_bytes_breakdown(shape.params, finetune["method"], finetune["adapters"],
                                                finetune["quantized"] or None, zero_stage=zero_stage,
                                                n_devices=dp * cp)
        state = parts["total"] - parts["paged"]
    state = state / (tp * pp)
    if not shape.shaped:
        return state
    in_flight = np.minimum(pp, np.asarray(step_seqs, dtype=float) / (np.asarray(micro_batch_size) * dp))
    per_layer = {mode: memory.activation_bytes_per_layer(seq_len, micro_batch_size, shape.d_model, shape.n_heads,
                                                         tensor_parallel=tp, sequence_parallel=True, recompute=mode)
                 for mode in ("selective", "full")}
    acts = np.where(np.asarray(recompute) == "full", per_layer["full"], per_layer["selective"])
    return state + acts * shape.n_layers / pp * in_flight / cp


def _project(shape, ceil, net_bw, net_source, tokens, precision, n, tp, pp, dp, cp, seq_len, micro_batch_size,
             step_seqs, virtual_stages, recompute, zero, devices_per_node, k, utilization, check_memory,
             finetune=None):
    """The training frame of every row of ``ceil`` (a device, or a device in one candidate layout)."""
    results = {}
    for level in ("", "_low", "_high"):
        results[level] = train_core(shape, _rates(ceil, precision, level, net_bw, utilization), tp, pp, dp, seq_len,
                                    micro_batch_size, step_seqs, virtual_stages, recompute, zero, devices_per_node, k,
                                    cp, finetune)
    # columns are gathered in a dict and framed once (column-by-column insertion dominated the run time)
    n_rows = len(ceil)
    out = {"name": ceil["name"].to_numpy()}
    step_tokens = step_seqs * seq_len
    peak = ceil[f"peak_{precision}"].to_numpy(dtype=float)
    mft = model_flops_per_token(shape, seq_len, finetune)
    # results["_low"] used the low ceilings (slow); a low time comes from the high ceilings
    for level, src in (("", ""), ("_low", "_low"), ("_high", "_high")):
        rate = step_tokens / results[src]["step_s"]
        out[f"tokens_per_s{level}"] = rate
        out[f"tokens_per_s_per_device{level}"] = rate / n
        out[f"mfu{level}"] = rate / n * mft / peak
    for level, src in (("", ""), ("_low", "_high"), ("_high", "_low")):
        seconds = tokens / (step_tokens / results[src]["step_s"])
        out[f"step_s{level}"] = results[src]["step_s"]
        out[f"seconds{level}"] = seconds
        out[f"days{level}"] = seconds / units.SECONDS_PER_DAY
        out[f"device_hours{level}"] = seconds * n / units.SECONDS_PER_HOUR
    # widen by the engine's own error on published training measurements
    e = k["model_error_training"]
    for name in _FIGURES:
        out[f"{name}_low"] = out[f"{name}_low"] / (1.0 + e)
        out[f"{name}_high"] = out[f"{name}_high"] * (1.0 + e)
    for part in ("compute_s", "elementwise_s", "tp_comm_s", "bubble_s", "dp_comm_s", "dp_comm_total_s", "optimizer_s"):
        out[part] = np.broadcast_to(results[""][part], (n_rows,))
    needed = training_memory_bytes(shape, tp, pp, dp, zero, micro_batch_size, seq_len, recompute, step_seqs, cp,
                                   finetune)
    usable = ceil["memory_bytes"].to_numpy(dtype=float) * (1.0 - memory.DEFAULT_RESERVE_FRACTION)
    per_device_bytes = np.broadcast_to(needed, (n_rows,)).astype(float)
    fits = per_device_bytes <= usable
    out["memory_per_device_bytes"] = per_device_bytes
    out["fits"] = fits
    out.update({"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "context_parallel": cp,
                "n_devices": n, "zero_stage": zero, "recompute": recompute, "precision": precision,
                "seq_len": seq_len, "micro_batch_size": micro_batch_size, "global_batch_tokens": step_tokens,
                "model": shape.name})
    ft = finetune or {"method": "full", "trainable": shape.params, "rank": np.nan}
    out.update({"finetune_method": ft["method"], "trainable_params": ft["trainable"], "lora_rank": ft["rank"]})
    out["matmul_source"] = (ceil[f"matmul_{precision}_source"].to_numpy() if utilization is None
                            else np.full(n_rows, f"your MFU {utilization:.0%} of the dense {precision} peak"))
    out["memory_source"] = ceil["memory_bw_source"].to_numpy()
    out["allreduce_source"] = ceil["allreduce_bw_source"].to_numpy()
    out["network_source"] = net_source
    why = np.full(n_rows, "", dtype=object)
    why[~np.isfinite(peak)] = f"no published dense {precision} peak"
    why[(why == "") & ~np.isfinite(usable)] = "no published memory size"
    why[(why == "") & ~np.isfinite(np.asarray(out["step_s"], dtype=float))] = (
        "no published link or bandwidth figure for this parallel layout")
    short = (why == "") & ~fits & check_memory
    why[short] = [f"needs {units.bytes_to_gb(v):.3g} GB per device, {units.bytes_to_gb(u):.3g} GB usable" for v, u in
                  zip(per_device_bytes[short], usable[short])]
    feasible = why == ""
    out["feasible"] = feasible
    out["why"] = why
    for name in _FIGURES:
        for level in ("", "_low", "_high"):
            out[f"{name}{level}"] = np.where(feasible, out[f"{name}{level}"], np.nan)
    return pd.DataFrame(out)


def _whole(value):
    """An int, or an int array for per-device values."""
    return int(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float).astype(int)


def _explain(row, shape, zero, tp, pp, recompute):
    if row["why"].startswith("needs"):
        hints = []
        if zero < 3:
            hints.append(f"zero_stage={zero + 1}")
        hints.append(f"tensor_parallel={tp * 2}")
        hints.append(f"pipeline_parallel={pp * 2}")
        if recompute != "full":
            hints.append("recompute='full'")
        return (f"{shape.name} does not fit on {row['name']} with this layout: {row['why']}; try "
                + ", ".join(hints) + " or more devices")
    return f"{row['name']}: {row['why']}"
