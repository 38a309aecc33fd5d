"""Where a served model's weights live: tensor parallel within a node, pipeline stages across nodes.

:func:`_layouts` lists the (tensor parallel, pipeline stages) candidates a serving search
tries; :func:`_pipeline` turns a tensor-parallel group's figures into those of ``pp``
stages (one network hop per stage boundary). Split out of
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


def _layouts(n_devices, shape, tensor_parallel, pipeline_parallel, devices_per_node):
    """(tensor parallel, pipeline stages) candidates as two (1, C) arrays.

    Tensor parallel stays within a node; pipeline stages span nodes, each stage a full
    tensor-parallel group of ``devices_per_node`` (vLLM's multi-node layout: TP inside the
    node over NVLink, PP across nodes over the network). ``pipeline_parallel=None`` adds
    stages of 2, 4, 8 ... whole nodes dividing ``n_devices`` and the layers; a given
    ``pipeline_parallel`` is used as is.
    """
    tps = _tp_candidates(n_devices, shape, tensor_parallel, devices_per_node)
    if pipeline_parallel is not None:
        check_integer("pipeline_parallel", pipeline_parallel, low=1, what="a number of pipeline stages")
        pp = int(pipeline_parallel)
        if tensor_parallel is None:
            tps = np.array([t for t in tps if n_devices % (t * pp) == 0] or [1.0])
        if n_devices % (int(tps.max()) * pp):
            raise ValueError(f"pipeline_parallel={pp} × tensor_parallel={int(tps.max())} must divide "
                             f"n_devices={n_devices}")
        return tps[None, :], np.full((1, len(tps)), float(pp))
    pairs = [(t, 1.0) for t in tps]
    node = float(min(devices_per_node, n_devices))
    layers = shape.n_layers if np.isfinite(shape.n_layers) else np.inf
    if tensor_parallel is None and node in tps:
        pairs += [(node, float(p)) for p in (2, 4, 8, 16, 32) if n_devices % (node * p) == 0 and p <= layers]
    return np.array([[t for t, _ in pairs]]), np.array([[p for _, p in pairs]])


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
