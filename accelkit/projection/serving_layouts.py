"""Where a served model's weights live: tensor parallel within a node, pipeline stages across
nodes, experts spread over an expert-parallel group.

:func:`_layouts` lists the (tensor parallel, pipeline stages, expert parallel) candidates a
serving search tries; :func:`_pipeline` turns a tensor-parallel group's figures into
those of ``pp`` stages (one network hop per stage boundary); :func:`_expert_group` those
of one expert-parallel rank into its group's; :func:`expert_alltoall_seconds` is the
dispatch and combine an expert-parallel step adds. Split out of
:mod:`accelkit.projection.inference` (one job per module).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_integer

__all__ = []

_ACT_BYTES = 2.0  # activations exchanged between tensor-parallel ranks (and pipeline stages) in 16-bit


def _n(x):
    return 0.0 if not np.isfinite(x) else x


def _tp_candidates(n_devices, shape, tensor_parallel, devices_per_node):
    if tensor_parallel is not None:
        check_integer("tensor_parallel", tensor_parallel, low=1, what="a tensor-parallel size")
        tp = int(tensor_parallel)
        if n_devices % tp:
            raise ValueError(f"tensor_parallel={tp} must divide n_devices={n_devices}; "
                             f"use one of {', '.join(str(t) for t in range(1, n_devices + 1) if n_devices % t == 0)}")
        if np.isfinite(shape.n_heads) and shape.n_heads % tp:
            ok = [t for t in (1, 2, 4, 8, 16) if shape.n_heads % t == 0 and n_devices % t == 0]
            raise ValueError(f"tensor_parallel={tp} does not divide the {shape.n_heads:g} attention heads of "
                             f"{shape.name}; use one of {', '.join(map(str, ok))}")
        return np.array([tp], dtype=float)
    cands = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= min(n_devices, devices_per_node) and n_devices % t == 0
             and (not np.isfinite(shape.n_heads) or shape.n_heads % t == 0)]
    return np.array(cands or [1], dtype=float)


def _ep_candidates(n_devices, shape, expert_parallel, tensor_parallel, pipeline_parallel):
    """Expert-parallel group sizes to try (each with attention data parallel, TP 1)."""
    moe = shape.expert_params > 0.0
    if expert_parallel is not None:
        check_integer("expert_parallel", expert_parallel, low=1, what="an expert-parallel size")
        ep = int(expert_parallel)
        if ep == 1:
            return []
        if not moe:
            raise ValueError(f"expert_parallel={ep} applies to a mixture of experts; {shape.name} is dense "
                             "(leave expert_parallel unset)")
        if shape.n_experts % ep:
            ok = [g for g in (2, 4, 8, 16, 32, 64, 128, 256) if shape.n_experts % g == 0 and n_devices % g == 0]
            raise ValueError(f"expert_parallel={ep} does not divide the {shape.n_experts:g} experts of {shape.name}; "
                             f"use one of {', '.join(map(str, ok)) or '1'}")
        if n_devices % ep:
            raise ValueError(f"expert_parallel={ep} must divide n_devices={n_devices}")
        if (tensor_parallel or 1) != 1 or (pipeline_parallel or 1) != 1:
            raise ValueError("expert_parallel runs attention data parallel: leave tensor_parallel and "
                             "pipeline_parallel unset (or 1)")
        return [float(ep)]
    if not moe or tensor_parallel is not None or pipeline_parallel is not None:
        return []
    return [float(g) for g in (2, 4, 8, 16, 32, 64, 128, 256, 512)
            if g <= n_devices and n_devices % g == 0 and shape.n_experts % g == 0]


def _layouts(n_devices, shape, tensor_parallel, pipeline_parallel, devices_per_node, expert_parallel=None):
    """(tensor parallel, pipeline stages, expert parallel) candidates as three (1, C) arrays.

    Tensor parallel stays within a node; pipeline stages span nodes, each stage a full
    tensor-parallel group of ``devices_per_node`` (vLLM's multi-node layout: TP inside the
    node over NVLink, PP across nodes over the network). ``pipeline_parallel=None`` adds
    stages of 2, 4, 8 ... whole nodes dividing ``n_devices`` and the layers; a given
    ``pipeline_parallel`` is used as is.

    A mixture of experts also gets expert-parallel groups of ``G`` = 2, 4, 8 ... devices
    (dividing ``n_devices`` and the experts): each device holds ``1/G`` of the routed
    experts and every non-expert weight, and runs attention for its own sequences
    (attention data parallel) -- the layout SGLang and TensorRT-LLM serve DeepSeek-V3
    with (``--enable-dp-attention --ep-size``, ``enable_attention_dp``), within a node
    or across nodes (DeepEP). ``expert_parallel=G`` uses that group only; a given
    ``tensor_parallel`` or ``pipeline_parallel`` without it keeps to those layouts.
    """
    eps = _ep_candidates(n_devices, shape, expert_parallel, tensor_parallel, pipeline_parallel)
    if expert_parallel is not None and eps:
        return np.array([[1.0]]), np.array([[1.0]]), np.array([eps])
    tps = _tp_candidates(n_devices, shape, tensor_parallel, devices_per_node)
    if pipeline_parallel is not None:
        check_integer("pipeline_parallel", pipeline_parallel, low=1, what="a number of pipeline stages")
        pp = int(pipeline_parallel)
        if tensor_parallel is None:
            tps = np.array([t for t in tps if n_devices % (t * pp) == 0] or [1.0])
        if n_devices % (int(tps.max()) * pp):
            raise ValueError(f"pipeline_parallel={pp} × tensor_parallel={int(tps.max())} must divide "
                             f"n_devices={n_devices}")
        return tps[None, :], np.full((1, len(tps)), float(pp)), np.ones((1, len(tps)))
    triples = [(t, 1.0, 1.0) for t in tps]
    node = float(min(devices_per_node, n_devices))
    layers = shape.n_layers if np.isfinite(shape.n_layers) else np.inf
    if tensor_parallel is None and node in tps:
        triples += [(node, float(p), 1.0) for p in (2, 4, 8, 16, 32) if n_devices % (node * p) == 0 and p <= layers]
    triples += [(1.0, 1.0, g) for g in eps]
    t, p, e = (np.array([[x[i] for x in triples]]) for i in range(3))
    return t, p, e


def expert_alltoall_seconds(tokens, shape, ep, rates, devices_per_node, latency_s, net_bw, net_lat):
    """Dispatch and combine of an expert-parallel step on one device [s]; 0 where ``ep`` is 1.

    Each of the ``tokens`` a device holds goes to its ``k`` routed experts and comes
    back: per MoE layer a dispatch and a combine all-to-all of ``tokens · k · d_model``
    16-bit values, of which the share ``(G−1)/G`` leaves the device (uniform routing,
    NCCL's all-to-all bus bandwidth convention ``algbw · (n−1)/n``). Inside a node
    it moves at the device's collective bus bandwidth; the share bound for other nodes
    (``(G − node)/G``) at its network port. Each all-to-all adds the small-message
    latency (the serving all-reduce latency in a node, the network's across nodes).
    Every layer is counted as an MoE layer (DeepSeek-V3: 58 of 61; +5 %).
    Reference: DeepSeek-AI, DeepSeek-V3 technical report §3.2 (arXiv:2412.19437);
    DeepEP (github.com/deepseek-ai/DeepEP).
    """
    ep = np.asarray(ep, dtype=float)
    if not np.any(ep > 1):
        return 0.0
    k, d, n_l = _n(shape.n_active_experts), _n(shape.d_model), _n(shape.n_layers)
    sent = np.asarray(tokens, dtype=float) * k * d * _ACT_BYTES
    node = np.minimum(ep, float(devices_per_node))
    in_bw = np.where(node <= rates["link_max"], rates["ar_bw"], rates["ar_bw_pcie"])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (sent * (node - 1.0) / ep / in_bw + sent * (ep - node) / ep / net_bw
             + np.where(ep > node, net_lat, latency_s))
    return np.where(ep > 1, 2.0 * n_l * t, 0.0)


def _expert_group(result, ep):
    """One expert-parallel rank's figures as its group's: the ``ep`` ranks step together,
    each with its own sequences, so the group emits ``ep`` times a rank's tokens."""
    ep = np.asarray(ep, dtype=float)
    if not np.any(ep > 1):
        return result
    return dict(result, output_tokens_per_s=result["output_tokens_per_s"] * ep)


def _pipeline(result, pp, batch, input_tokens, shape, net_bw, net_lat):
    """A tensor-parallel group's figures (``serve_core``) spread over ``pp`` pipeline stages.

    Each stage holds ``1/pp`` of the layers, so a token still passes every layer in
    turn: its time per output token is the group's plus ``pp − 1`` hops of its
    activations (``B·d_model`` 16-bit values) between nodes, latency and bandwidth of
    the device's network port; ``pp`` micro-batches of ``B`` sequences are in flight,
    so the group of ``tp × pp`` devices emits ``pp`` times the tokens per step
    (Narayanan et al. 2021 §2.2; vLLM's pipeline-parallel serving). The prompt crosses
    the same ``pp − 1`` boundaries once.
    """
    if not np.any(pp > 1):
        return result
    d = _n(shape.d_model)
    hops = pp - 1.0
    B = np.asarray(batch, dtype=float)
    step_hop = hops * (B * d * _ACT_BYTES / net_bw + net_lat)
    prefill_hop = hops * (np.asarray(input_tokens, dtype=float) * d * _ACT_BYTES / net_bw + net_lat)
    out = dict(result)
    out["tpot_s"] = result["tpot_s"] + step_hop
    out["decode_step_s"] = result["decode_step_s"] + step_hop
    out["ttft_s"] = result["ttft_s"] + prefill_hop
    out["prefill_s"] = result["prefill_s"] + prefill_hop
    out["output_tokens_per_s"] = pp * B / out["decode_step_s"]
    with np.errstate(divide="ignore", invalid="ignore"):
        # every output token after the first waits the hops too
        after_first = (result["request_latency_s"] - result["ttft_s"]) / result["tpot_s"]
    out["request_latency_s"] = out["ttft_s"] + after_first * out["tpot_s"]
    return out
