"""LLM serving projection: time to first token, time per output token, throughput.

One vectorised model over devices × configurations, evaluated on the achievable
ceilings of :mod:`accelkit.projection.ceilings`:

* **prefill** of a request of ``L`` tokens on a tensor-parallel group of ``t``
  devices: ``roofline(compute, weight read) + non-matmul traffic + 2·n_layers
  all-reduces (at NCCL's measured latency) + prefill_overhead_s + the decode step's
  per-layer overhead`` (a forward pass launches the same kernels per layer), where
  ``roofline(a, b) = max(a, b) + (1 − roofline_overlap) · min(a, b)`` (kernels overlap memory
  and compute imperfectly),
  with compute = linear layers ``2·N_body·L/t`` at the achievable matmul rate plus causal
  attention ``2·n_layers·L²·d_attn/t`` at the achievable bf16 rate ([1]_ §2,
  [3]_ table 1);
* **decode step** of a batch of ``B`` sequences at mean context ``c``:
  ``roofline((weights + B·c·KV per token)/t at the achievable bandwidth,
  compute)`` + two all-reduces per layer of ``B·d_model`` 16-bit activations over
  the device's link (latency and bandwidth, [4]_) + a per-step and per-layer
  overhead ([1]_ §2; Megatron's two all-reduces per layer, [5]_ §3);
* **serving throughput** under continuous batching with chunked prefill ([2]_,
  [6]_): in steady state each step also carries ``B·L/O`` prompt tokens of the
  requests being admitted; they share the step's weight read and add their compute;
  output tokens per second = ``B / step``;
* **static batches** (``schedule="static"``): prefill of all ``B`` prompts, then
  ``O`` decode steps; throughput = ``B·O / (prefill + O · step)``.

Every figure's ``_low``/``_high`` spans the efficiencies' published spread, widened by
the engine's geometric-mean error on published measurements of that kind
(``model_error_*`` in ``data/projection_constants.csv``, from ``accelkit validate``).

``batch_size=None`` fills memory the way the serving stack sets KV cache aside
(:mod:`accelkit.projection.kv_room`), up to ``max_batch_size`` (vLLM's default ``max_num_seqs``).
``tensor_parallel=None`` picks, per device, the tensor-parallel size (dividing
``n_devices`` and the heads, at most ``devices_per_node``) with the highest output
throughput per device; the rest of the ``n_devices`` serve as data-parallel
replicas.

References
----------
.. [1] R. Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023,
   arXiv:2211.05102.
.. [2] W. Kwon et al., vLLM / PagedAttention, SOSP 2023, arXiv:2309.06180.
.. [3] J. Kaplan et al., arXiv:2001.08361, table 1 (FLOP per token).
.. [4] NVIDIA nccl-tests, doc/PERFORMANCE.md (bus bandwidth).
.. [5] M. Shoeybi et al., "Megatron-LM", arXiv:1909.08053, §3.
.. [6] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
   Sarathi-Serve", OSDI 2024, arXiv:2403.02310 (chunked prefill).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from .._validate import check_choice, check_integer
from .ceilings import allreduce_seconds, ceilings_for
from .constants import constants
from .kv_room import sequences_that_fit
from .precisions import resolve_kv_precision, resolve_precision
from .serving_layouts import _ACT_BYTES, _expert_group, _layouts, _n, _pipeline, expert_alltoall_seconds
from .serving_rates import llm_stack_limits, llm_stack_why, serving_rates
from .serving_load import TOKEN_BUDGET, md1_wait, serve_load, _wait_percentile  # noqa: F401 (public here too)
from .serving_search import _LOAD_TIMES, _explain, _largest_batch_meeting, _load_args
from .shapes import not_a_decoder, resolve_model

__all__ = ["inference", "inference_grid", "serve_core", "serve_load", "md1_wait", "OUTPUT_TIMES", "OUTPUT_RATES",
           "TOKEN_BUDGET"]

#: figures returned with ``_low`` / ``_high``
OUTPUT_TIMES = ("ttft_s", "tpot_s", "request_latency_s", "prefill_s", "decode_step_s")
OUTPUT_RATES = ("output_tokens_per_s", "output_tokens_per_s_per_device", "requests_per_s")


def serve_core(shape, rates, tp, batch, input_tokens, output_tokens, weight_bytes_per_param, kv_bytes,
               k, schedule="continuous", load=None, ep=1.0, devices_per_node=8):
    """The serving model on arrays (everything broadcasts).

    Parameters
    ----------
    shape : ModelShape
    rates : dict of arrays
        ``mm`` (matmul FLOP/s at the compute precision), ``mm_attn`` (bf16 FLOP/s for attention), ``bw``
        (bytes/s), ``ar_bw`` (all-reduce bus bytes/s, nccl-tests' large-message figure: a serving collective
        reaches ``serving_allreduce_bw_fraction`` of it), ``ar_lat`` (s) -- per device; optionally ``net_bw`` and
        ``net_lat`` (s) of the device's network port (expert parallel across nodes), ``car_max``
        (bytes, the stack's custom all-reduce limit, :mod:`~accelkit.projection.serving_rates`).
    tp, batch, input_tokens, output_tokens : arrays
        Tensor-parallel size, sequences per group, prompt and generated tokens.
    ep : array
        Expert-parallel group size (1: none). Where above 1, ``tp`` is 1 (attention data
        parallel), ``batch`` is one device's sequences, its weight reads are its share of
        the experts (:meth:`ModelShape.read_params`) and each step adds the experts'
        all-to-all (:func:`expert_alltoall_seconds`); the figures are one device's.
    devices_per_node : int
        Devices one node holds (an expert-parallel group beyond it crosses the network).
    weight_bytes_per_param, kv_bytes : float
        Storage bytes per weight and per KV element.
    k : dict
        Constants (:func:`accelkit.projection.constants.constants`).
    load : dict, optional
        Serving under load (see :func:`serve_load`): ``concurrency`` (closed-loop
        clients per group) or ``request_rate`` (Poisson arrivals per group, 1/s), and
        ``token_budget`` (the scheduler's tokens per step). ``batch`` is then the most
        sequences the group holds at once (memory and ``max_num_seqs``). ``None``: the
        figures above, unchanged.

    Returns
    -------
    dict of arrays [s, tokens/s]: ``prefill_s``, ``decode_step_s`` (per step, with
    the other sequences' prefill share), ``tpot_s``, ``ttft_s``,
    ``request_latency_s``, ``output_tokens_per_s`` (per group of ``tp``),
    ``memory_bound`` (bool: the decode step is limited by bandwidth), ``comm_s``
    (all-reduce time per decode step).
    """
    mm, mm_attn, bw = rates["mm"], rates["mm_attn"], rates["bw"]
    share = k["serving_allreduce_bw_fraction"]  # of the bus bandwidth: all-reduces and experts' all-to-alls alike
    coll = dict(rates, ar_bw=rates["ar_bw"] * share, ar_bw_pcie=rates["ar_bw_pcie"] * share)
    ar_bw = np.where(tp <= coll["link_max"], coll["ar_bw"], coll["ar_bw_pcie"])
    n_l, d, d_attn = _n(shape.n_layers), _n(shape.d_model), _n(shape.attention_dim)
    body = shape.active_body_params
    head = shape.head_flops_per_token
    kv_tok = shape.kv_elements_per_token * kv_bytes
    kv_div = np.minimum(tp, shape.kv_shards if np.isfinite(shape.kv_shards) else 1.0)
    L, O = np.asarray(input_tokens, dtype=float), np.asarray(output_tokens, dtype=float)
    B = np.asarray(batch, dtype=float)
    ep = np.asarray(ep, dtype=float)
    d_decode = _n(shape.decode_attention_dim)

    overlap = k["roofline_overlap"]
    # a model's GEMMs and FlashAttention reach fixed shares of the MAMF ceiling
    mm = mm * k["gemm_fraction"]
    mm_attn = mm_attn * k["attention_fraction"]
    # decode steps' small all-reduces: custom kernels in CUDA graphs; prompt tokens (not graph-captured) pay NCCL's
    ar_lat, prompt_lat = k["serving_allreduce_latency_s"], rates["ar_lat"]
    # a stack with a stated limit (vLLM, SGLang): its own kernel below it on a linked group or two devices, NCCL above
    car_max = rates.get("car_max", np.inf)
    custom_ok = (tp <= 2) | (rates.get("linked", True) & (tp <= rates["link_max"]))

    def roofline(t_mem, t_comp):
        # kernels overlap memory and compute imperfectly: max + (1 - overlap) × min
        return np.maximum(t_mem, t_comp) + (1.0 - overlap) * np.minimum(t_mem, t_comp)

    def tp_comm(tokens, lat=ar_lat):
        # two all-reduces per layer (after attention and after the MLP), Megatron-style
        msg = tokens * d * _ACT_BYTES
        lat = np.where(np.isfinite(car_max), np.where(custom_ok & (msg < car_max), ar_lat, prompt_lat), lat)
        return (2.0 * n_l * allreduce_seconds(msg, tp, ar_bw, lat)
                + expert_alltoall_seconds(tokens, shape, ep, coll, devices_per_node, ar_lat,
                                          rates.get("net_bw", np.inf), rates.get("net_lat", 0.0)))

    # causal attention computes half the score matrix (an encoder is vision()'s: one model per kind)
    attn_factor = 2.0

    layer_cost = k["decode_layer_overhead_s"] * n_l  # a forward pass's launches per layer, prefill or decode
    def prefill(n_seq):
        tokens = L * n_seq
        compute = ((2.0 * body * tokens + head * n_seq) / tp / mm
                   + attn_factor * n_l * L * L * d_attn * n_seq / tp / mm_attn)
        weights = shape.read_params(tokens, ep) * weight_bytes_per_param / tp / bw
        return roofline(weights, compute) + tp_comm(tokens, prompt_lat) + k["prefill_overhead_s"] + layer_cost

    def step(prefill_tokens, B=B, lat=ar_lat):
        ctx = L + O / 2.0
        moved = shape.read_params(B + prefill_tokens, ep) * weight_bytes_per_param / tp + B * ctx * kv_tok / kv_div
        t_mem = moved / bw
        t_comp = ((2.0 * body * (B + prefill_tokens) + head * B) / tp / mm
                  + (4.0 * n_l * ctx * d_decode * B + 2.0 * n_l * L * d_attn * prefill_tokens) / tp / mm_attn)
        comm = tp_comm(B + prefill_tokens, lat)
        overhead = k["decode_step_overhead_s"] + layer_cost
        return roofline(t_mem, t_comp) + comm + overhead, t_mem >= t_comp, comm

    prefill_one = prefill(1.0)
    if load is not None:
        return serve_load(step, prefill_one, B, L, O, chunk_step=lambda c, n: step(c, n, prompt_lat), **load)
    if schedule == "static":
        tpot, bound, comm = step(0.0)
        total = prefill(B) + O * tpot
        rate = B * O / total
        ttft = prefill(B)
        step_s = tpot
    else:
        tpot, bound, comm = step((B - 1.0) * L / O)
        step_s, _, _ = step(B * L / O)
        rate = B / step_s
        ttft = prefill_one
    latency = ttft + (O - 1.0) * tpot
    return {"prefill_s": prefill_one, "decode_step_s": step_s, "tpot_s": tpot, "ttft_s": ttft,
            "request_latency_s": latency, "output_tokens_per_s": rate, "memory_bound": bound, "comm_s": comm}


def inference(device=None, model="Llama-3.1 8B", precision="bf16", n_devices=1, tensor_parallel=None,
              batch_size=None, pipeline_parallel=None, input_tokens=1024, output_tokens=256, kv_precision=None, catalog=None,
              measurements=None, schedule="continuous", devices_per_node=8, max_batch_size=None, check_memory=True,
              tpot_target_s=None, ttft_target_s=None, concurrency=None, request_rate=None, token_budget=None,
              expert_parallel=None, requests_per_client=None, synchronized=False, stack=None, **overrides):
    """Projected serving figures of a model on a device (or every device).

    Parameters
    ----------
    device : str, list of str or None
        A catalogue name (returns a dict), a list or ``None`` for every device
        (returns a DataFrame, one row per device).
    model : str or dict
        A preset name or a dict with ``params, n_layers, d_model, n_heads`` (and
        optionally ``n_kv_heads, head_dim, ffn_dim, vocab, active_params, n_experts,
        n_active_experts``).
    precision : str
        ``bf16, fp16, fp32, tf32, fp8, int8`` (W8A8), ``w8a16`` / ``w4a16``
        (weight-only; ``int4`` means ``w4a16``), ``nvfp4``, ``mxfp4``.
    n_devices : int
        Devices serving together (tensor-parallel groups × data-parallel replicas).
    tensor_parallel : int, optional
        Tensor-parallel size; ``None`` picks the best per device (see module notes).
    pipeline_parallel : int, optional
        Pipeline stages across nodes (each a tensor-parallel group); ``None`` adds
        whole-node stages only where the model does not fit one node (more stages
        add a network hop per token, so one node wins wherever it fits).
    expert_parallel : int, optional
        A mixture of experts on expert-parallel groups of this many devices, attention
        data parallel (each device holds every non-expert weight, ``1/G`` of the routed
        experts and its own sequences' KV cache; ``batch_size`` is then per device, as
        TensorRT-LLM's ``--max_batch_size`` with ``enable_attention_dp``). ``None``: a
        mixture of experts also tries groups of 2, 4, 8 ... devices (dividing the experts
        and ``n_devices``) unless ``tensor_parallel`` or ``pipeline_parallel`` is given;
        the layout with the most tokens per device (meeting any targets) wins.
    batch_size : int, optional
        Sequences decoded together per tensor-parallel group; ``None`` fills memory
        up to ``max_batch_size``.
    input_tokens, output_tokens : int
        Prompt and generated tokens per request.
    kv_precision : str, optional
        KV-cache format (default: bf16, fp8 for the FP4 modes).
    measurements : DataFrame, optional
        Your probe results: they replace the published efficiencies of their device.
    schedule : {"continuous", "static"}
        Continuous batching with chunked prefill (serving engines), or static batches.
    max_batch_size : int, optional
        The serving engine's cap on sequences per step (default: the constant
        ``max_batch_size``, vLLM's ``max_num_seqs``).
    check_memory : bool
        ``False`` uses a given ``batch_size`` even where this memory estimate says it
        does not fit (the validation does: a published run did fit).
    concurrency : int, optional
        Serving under load, closed loop: this many clients each send a request as soon as
        their previous one ends (what load-test tools run: vLLM's ``benchmark_serving
        --max-concurrency``, genai-perf / AIPerf ``--concurrency``), spread evenly over the
        data-parallel replicas. The running batch is the concurrency (up to what memory
        and ``max_batch_size`` hold; ``batch_size``, if given, is that limit). TTFT then
        counts the wait for the prefill and the prefill spread over steps shared with the
        decodes (:func:`serve_load`); ``ttft_s`` / ``tpot_s`` are medians, with
        ``ttft_p90_s``, ``tpot_p90_s`` and ``ttft_mean_s`` beside them, and
        ``ttft_first_wave_s``: the mean TTFT when all ``N`` clients arrive at once (a load
        generator's start, a thundering herd). ``None`` (and no ``request_rate``): the
        figures of one request at a time, as before.
    requests_per_client : int, optional
        With ``concurrency``: how many requests each client sends in the measured run
        (a load test of ``--request-count R`` sends ``R / N``). The first wave then makes
        up ``1 / requests_per_client`` of the requests and ``ttft_mean_s`` includes it
        (:func:`serve_load`). ``None``: the steady state of a long-running service.
    synchronized : bool, default False
        With ``concurrency``: clients in step (fixed lengths), every wave queues as the first.
    request_rate : float, optional
        Serving under load, open loop: Poisson arrivals at this many requests per second
        over all ``n_devices``. A rate beyond what the devices sustain is infeasible.
    token_budget : int, optional
        The scheduler's tokens per step (vLLM ``max_num_batched_tokens``, TensorRT-LLM
        ``max_num_tokens``, SGLang ``chunked_prefill_size``); default
        :data:`TOKEN_BUDGET` (8192).
    stack : str, optional
        The serving engine (``data/stacks.csv``, workload ``llm``); default TensorRT-LLM on NVIDIA,
        vLLM on AMD, ``vendor-serving`` elsewhere. vLLM / SGLang pay NCCL's latency on all-reduces
        above their custom kernel's limit (8 MiB) (:mod:`accelkit.projection.serving_rates`).
    tpot_target_s, ttft_target_s : float, optional
        Service-level targets [s] on the projected (median) time per output token
        and time to first token. With ``batch_size=None`` the batch is the largest
        power of two (or the memory limit) that meets both, per device and
        tensor-parallel size, and the tensor-parallel size the one with the most
        throughput per device among those that meet them -- the search NVIDIA's
        aiconfigurator runs for its own GPUs ([1]_). A device where no batch meets
        them is infeasible and says what it reaches at batch 1.

    References
    ----------
    .. [1] NVIDIA, aiconfigurator (github.com/ai-dynamo/aiconfigurator): searches
       TP / batch / precision under TTFT and TPOT targets for the best throughput
       per GPU.

    Returns
    -------
    dict or pandas.DataFrame
        ``ttft_s, tpot_s, request_latency_s, prefill_s, decode_step_s`` [s],
        ``output_tokens_per_s`` (all ``n_devices``), ``output_tokens_per_s_per_device``,
        ``requests_per_s`` [1/s], each with ``_low``/``_high``; ``batch_size``,
        ``tensor_parallel``, ``pipeline_parallel``, ``expert_parallel``, ``replicas``, ``max_batch_size`` (what fits),
        ``memory_bound``, ``weight_bytes_per_device``, ``kv_bytes_per_device``,
        ``precision``, ``kv_precision``, ``stack`` (the serving engine), the ``*_source`` of each ceiling and
        ``feasible`` / ``why`` (a DataFrame row that cannot run says why).

    Raises
    ------
    ValueError
        For an unknown device or model (with close names), a tensor-parallel size
        that does not divide the heads or ``n_devices``, a batch that does not fit
        (saying what fits), or a single device without the precision's peak.
    """
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    check_integer("input_tokens", input_tokens, low=1, what="a number of prompt tokens")
    check_integer("output_tokens", output_tokens, low=1, what="a number of generated tokens")
    if batch_size is not None:
        check_integer("batch_size", batch_size, low=1, what="a batch size")
    schedule = check_choice("schedule", schedule, ["continuous", "static"])
    load = _load_args(concurrency, request_rate, token_budget, schedule, requests_per_client, synchronized)
    n_devices = int(n_devices)
    shape = resolve_model(model)
    if not shape.is_decoder:
        raise ValueError(not_a_decoder(shape))
    mode, w_bytes, mm_precision, kv_default = resolve_precision(precision)
    kv_name, kv_bytes = resolve_kv_precision(kv_precision, kv_default)
    k = constants(**overrides)
    cap = k["max_batch_size"] if max_batch_size is None else float(max_batch_size)
    ceil, single = ceilings_for(device, catalog, measurements)
    stack_names, car_max = llm_stack_limits(ceil, stack, catalog)
    tps, pps, eps = _layouts(n_devices, shape, tensor_parallel, pipeline_parallel, devices_per_node, expert_parallel)
    from .systems import network_bandwidth

    net_bw = network_bandwidth(ceil, catalog)[0][:, None]
    # a hop between pipeline stages: the device's measured small-message collective latency
    net_lat = ceil["allreduce_latency_s"].to_numpy(dtype=float)[:, None]

    weights_dev = shape.resident_params(eps) * w_bytes / (tps * pps)
    kv_div = np.minimum(tps, shape.kv_shards if np.isfinite(shape.kv_shards) else 1.0)
    kv_tok = shape.kv_elements_per_token * kv_bytes / kv_div
    fit, room, kv_seq = sequences_that_fit(ceil["memory_bytes"].to_numpy(dtype=float)[:, None], weights_dev, kv_tok,
                                           input_tokens, output_tokens, stack_names, k["serving_reserve_fraction"],
                                           fixed_batch=batch_size is not None)
    if batch_size is None:
        batch = np.minimum(fit, cap)
    elif check_memory:
        batch = np.where(fit >= batch_size, float(batch_size), np.nan)
    else:
        batch = np.where(room > 0, float(batch_size), np.nan)
    batch = np.where(batch >= 1, batch, np.nan)
    if load is not None:
        # the most sequences a group holds at once; the running batch itself comes from the load
        batch = np.where(np.isfinite(batch), batch, np.nan) if batch_size is not None else \
            np.where(fit >= 1, np.minimum(fit, cap), np.nan)
        share = tps * pps / n_devices  # a data-parallel replica's share of the clients or arrivals
        load = {**load, "concurrency": None if concurrency is None else float(concurrency) * share,
                "request_rate": None if request_rate is None else float(request_rate) * share}
    slo = load is None and batch_size is None and (tpot_target_s is not None or ttft_target_s is not None)

    # the achievable rates per level, built once (the target search projects many batches)
    rates_at = {lv: dict(serving_rates(ceil, mm_precision, lv), net_bw=net_bw, net_lat=net_lat, car_max=car_max)
                for lv in ("", "_low", "_high")}

    def core(level, b, load=None, sched=schedule):
        """One layout's figures per group of ``tp × pp × ep`` devices."""
        r = serve_core(shape, rates_at[level], tps, b, input_tokens, output_tokens, w_bytes, kv_bytes, k, sched, load,
                       ep=eps, devices_per_node=devices_per_node)
        return _expert_group(_pipeline(r, pps, b, input_tokens, shape, net_bw, net_lat), eps)

    if slo:
        batch, slo_best = _largest_batch_meeting(core, fit, cap, schedule, tpot_target_s, ttft_target_s)

    mid, slow, fast = core("", batch, load), core("_low", batch, load), core("_high", batch, load)
    per_dev = mid["output_tokens_per_s"] / (tps * pps * eps)
    choice = np.nanargmax(np.where(np.isfinite(per_dev), per_dev, -1.0), axis=1) if tps.shape[1] > 1 else \
        np.zeros(len(ceil), dtype=int)
    rows = np.arange(len(ceil))

    def pick(a):
        return np.broadcast_to(a, (len(ceil), tps.shape[1]))[rows, choice]

    tp_used = pick(tps)
    pp_used = pick(pps)
    ep_used = pick(eps)
    replicas = n_devices / (tp_used * pp_used * ep_used)
    n_rows = len(ceil)
    out = {"name": ceil["name"].to_numpy()}
    times = ("ttft_s", "tpot_s", "request_latency_s", "prefill_s", "decode_step_s") + \
        (() if load is None else _LOAD_TIMES)
    for name in times:
        out[name] = pick(mid[name])
        out[f"{name}_low"] = pick(fast[name])
        out[f"{name}_high"] = pick(slow[name])
    for level, res in (("", mid), ("_low", slow), ("_high", fast)):
        group = pick(res["output_tokens_per_s"]) * replicas
        out[f"output_tokens_per_s{level}"] = group
        out[f"output_tokens_per_s_per_device{level}"] = group / n_devices
        out[f"requests_per_s{level}"] = group / output_tokens
    # widen by the engine's own error on published measurements of the same kind
    e_ttft, e_decode = k["model_error_ttft"], k["model_error_decode"]
    e_rate = k["model_error_throughput"] if batch_size is None else e_decode
    if load is not None:
        # under load the engine's own error on serving-under-load measurements
        e_ttft, e_decode = k["model_error_load_ttft"], k["model_error_load_tpot"]
        e_rate = e_decode
    # an expert-parallel layout: at least the engine's error on expert-parallel measurements
    e_ep = np.where(ep_used > 1, k["model_error_expert_parallel"], 0.0)
    e_ttft, e_decode, e_rate = (np.maximum(e, e_ep) for e in (e_ttft, e_decode, e_rate))
    widen = (("ttft_s", e_ttft), ("prefill_s", e_ttft), ("tpot_s", e_decode), ("decode_step_s", e_decode),
             ("request_latency_s", e_decode), ("output_tokens_per_s", e_rate),
             ("output_tokens_per_s_per_device", e_rate), ("requests_per_s", e_rate))
    if load is not None:
        widen += tuple((n, e_ttft if n.startswith("ttft") else e_decode) for n in _LOAD_TIMES)
    for name, e in widen:
        out[f"{name}_low"] = out[f"{name}_low"] / (1.0 + e)
        out[f"{name}_high"] = out[f"{name}_high"] * (1.0 + e)
    batch_used = pick(batch) if load is None else pick(np.where(np.isfinite(batch), mid["running_batch"], np.nan))
    out.update({
        "batch_size": batch_used, "tensor_parallel": tp_used, "pipeline_parallel": pp_used,
        "expert_parallel": ep_used, "replicas": replicas,
        "n_devices": np.full(n_rows, n_devices), "max_batch_size": pick(fit),
        "memory_bound": pick(mid["memory_bound"]).astype(bool), "tp_comm_s": pick(mid["comm_s"]),
        "weight_bytes_per_device": pick(np.broadcast_to(weights_dev, (n_rows, tps.shape[1]))),
        "kv_bytes_per_device": batch_used * pick(np.broadcast_to(kv_seq, (n_rows, tps.shape[1]))),
        "precision": np.full(n_rows, mode, dtype=object), "kv_precision": np.full(n_rows, kv_name, dtype=object),
        "schedule": np.full(n_rows, schedule, dtype=object), "input_tokens": np.full(n_rows, input_tokens),
        "output_tokens": np.full(n_rows, output_tokens), "model": np.full(n_rows, shape.name, dtype=object),
        "matmul_source": ceil[f"matmul_{mm_precision}_source"].to_numpy(),
        "memory_source": ceil["memory_bw_source"].to_numpy(),
        "allreduce_source": ceil["allreduce_bw_source"].to_numpy(), "stack": stack_names,
    })
    why = llm_stack_why(stack_names, stack, ceil, catalog)  # "" where it runs
    no_peak = ~np.isfinite(ceil[f"matmul_{mm_precision}"].to_numpy(dtype=float))
    no_mem = ~np.isfinite(ceil["memory_bytes"].to_numpy(dtype=float)) | ~np.isfinite(
        ceil["memory_bw"].to_numpy(dtype=float))
    no_link = ~np.isfinite(pick(np.broadcast_to(mid["comm_s"], (n_rows, tps.shape[1])))) & (tp_used > 1)
    why[no_peak] = f"no published dense {mm_precision} peak"
    why[(why == "") & no_mem] = "no published memory size or bandwidth"
    why[(why == "") & no_link] = "no published link bandwidth for tensor parallelism"
    short = (why == "") & ~np.isfinite(batch_used)
    if slo and short.any():
        for i in np.flatnonzero(short & (np.nanmax(np.where(np.isfinite(fit), fit, np.inf), axis=1) >= 1)):
            tpot1, ttft1 = slo_best[0][i], slo_best[1][i]
            parts = []
            if tpot_target_s is not None and tpot1 > tpot_target_s:
                parts.append(f"{units.s_to_ms(tpot1):.3g} ms per output token > target {units.s_to_ms(tpot_target_s):g} ms")
            if ttft_target_s is not None and ttft1 > ttft_target_s:
                parts.append(f"{units.s_to_ms(ttft1):.3g} ms to the first token > target {units.s_to_ms(ttft_target_s):g} ms")
            why[i] = "no batch meets the targets: at batch 1 and its best tensor parallel " + " and ".join(parts)
    if short.any():
        fit_best = np.nanmax(np.where(np.isfinite(fit), fit, np.inf), axis=1)
        for i in np.flatnonzero(short & (why == "")):
            if fit_best[i] < 1:
                why[i] = (f"the weights and one sequence's KV cache do not fit on {n_devices} device"
                          f"{'s' if n_devices > 1 else ''} (tensor parallel up to {int(tps.max())}"
                          + (f", {int(pps.max())} pipeline stages" if pps.max() > 1 else "")
                          + (f", expert parallel up to {int(eps.max())}" if eps.max() > 1 else "") + ")")
            else:
                why[i] = f"batch_size={batch_size} does not fit: at most {int(np.nanmax(fit[i]))} sequences fit"
    if load is not None:
        over = (why == "") & np.isfinite(batch_used) & ~np.isfinite(out["ttft_s"])
        why[over] = "the request rate is beyond what the devices sustain (the queue grows without end)"
        out["concurrency"] = np.full(n_rows, np.nan if concurrency is None else float(concurrency))
        out["request_rate"] = np.full(n_rows, np.nan if request_rate is None else float(request_rate))
        out["most_sequences"] = pick(batch)
        out["prefill_utilisation"] = pick(mid["prefill_utilisation"])
    feasible = why == ""
    out["feasible"], out["why"] = feasible, why
    for c in [c for c in out if c.endswith(_FIGURE_SUFFIXES)]:
        out[c] = np.where(feasible, out[c], np.nan)
    if single:
        r = {c: v[0] for c, v in out.items()}
        if not r["feasible"]:
            raise ValueError(_explain(r, ceil.iloc[0], shape, n_devices, batch_size, mode, mm_precision, fit[0], tps[0]))
        return {c: (v.item() if hasattr(v, "item") else v) for c, v in r.items()}
    return pd.DataFrame(out)


_FIGURE_SUFFIXES = ("_s", "_s_low", "_s_high", "_per_s", "_per_s_low", "_per_s_high", "_per_device",
                    "_per_device_low", "_per_device_high")


def inference_grid(model, batch_size, input_tokens, output_tokens, precision="bf16", tensor_parallel=1,
                   kv_precision=None, catalog=None, measurements=None, schedule="continuous", **overrides):
    """The serving model for many configurations at once, on every device.

    ``batch_size``, ``input_tokens`` and ``output_tokens`` are arrays of one length S
    (one entry per configuration; scalars broadcast). Memory fit is not checked
    (see :func:`inference` for that); the maps of the decision space use this.

    Returns
    -------
    dict of arrays, shape (devices, S): ``ttft_s``, ``tpot_s``, ``request_latency_s``,
    ``output_tokens_per_s_per_device``; plus ``name`` (devices).
    """
    shape = resolve_model(model)
    _, w_bytes, mm_precision, kv_default = resolve_precision(precision)
    _, kv_bytes = resolve_kv_precision(kv_precision, kv_default)
    k = constants(**overrides)
    ceil, _ = ceilings_for(None, catalog, measurements)
    b, L, O = np.broadcast_arrays(np.asarray(batch_size, dtype=float), np.asarray(input_tokens, dtype=float),
                                  np.asarray(output_tokens, dtype=float))
    rates = dict(serving_rates(ceil, mm_precision), car_max=llm_stack_limits(ceil, None, catalog)[1])  # vendors' engines
    r = serve_core(shape, rates, float(tensor_parallel), b[None, :], L[None, :], O[None, :], w_bytes, kv_bytes, k, schedule)
    return {"name": ceil["name"].to_numpy(), "ttft_s": r["ttft_s"], "tpot_s": r["tpot_s"],
            "request_latency_s": r["request_latency_s"],
            "output_tokens_per_s_per_device": r["output_tokens_per_s"] / tensor_parallel}
