"""How many sequences a serving group holds in memory: the KV cache's room and each sequence's share.

The serving stack decides both (``data/stacks.csv``, :func:`~accelkit.projection.stacks.kv_cache_policy`):

* **vLLM** (``tokens_held``, ``device_memory``): the paged cache holds the tokens a sequence has, so a
  running batch holds each prompt and, on average, half its output, ``L + O/2`` tokens; the engine's
  share of memory, ``1 − serving_reserve_fraction`` (``gpu_memory_utilization`` = 0.9), is a share of
  the whole device, weights included [1]_.
* **TensorRT-LLM** (``whole_request``, ``memory_after_weights``): its default ``GUARANTEED_NO_EVICT``
  policy admits a request only when the cache can hold its prompt and whole output, ``L + O`` tokens,
  so that no started request is paused [2]_; the cache takes ``kv_cache_free_gpu_mem_fraction`` (0.9)
  of the memory the loaded weights leave [3]_.

A fixed batch (``batch_size`` given) holds every sequence to its full length, ``L + O``, on any stack.

References
----------
.. [1] vLLM engine arguments, ``gpu_memory_utilization``, docs.vllm.ai/en/v0.8.1/serving/engine_args.html.
.. [2] TensorRT-LLM, "Useful Runtime Options: Capacity Scheduler Policy",
   nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/useful-runtime-flags.html.
.. [3] TensorRT-LLM, ``tensorrt_llm/bench/benchmark/throughput.py`` (``--kv_cache_free_gpu_mem_fraction``,
   default 0.90, "The percentage of memory to use for KV Cache after model load").
"""

from __future__ import annotations

import numpy as np

from .stacks import kv_cache_policy

__all__ = ["sequences_that_fit"]


def sequences_that_fit(memory_bytes, weight_bytes, kv_bytes_per_token, input_tokens, output_tokens, stacks,
                       reserve_fraction, fixed_batch=False):
    """The most sequences one device of a serving group holds, and the KV room and bytes per sequence.

    Parameters
    ----------
    memory_bytes : array, shape (devices, 1)
        Each device's memory [bytes].
    weight_bytes : array
        The weights each device holds [bytes] (broadcast with ``memory_bytes``).
    kv_bytes_per_token : array or float
        KV-cache bytes one token of one sequence takes on one device (after tensor-parallel sharding).
    input_tokens, output_tokens : int
        Prompt and output lengths ``L``, ``O``.
    stacks : array of str, shape (devices,)
        Each device's serving stack (:func:`~accelkit.projection.serving_rates.llm_stack_limits`).
    reserve_fraction : float
        ``serving_reserve_fraction``: the share of memory the stack leaves to the runtime.
    fixed_batch : bool
        A fixed batch: every sequence at its full length ``L + O``.

    Returns
    -------
    (fit, room, kv_seq)
        ``fit``: whole sequences that fit (0 where the weights leave no room; ``inf`` for a model with no
        KV cache); ``room`` [bytes] the KV cache's room (negative where the weights do not fit);
        ``kv_seq`` [bytes] one sequence's KV cache.
    """
    whole, after_weights = (a[:, None] for a in kv_cache_policy(stacks))
    kept = 1.0 - reserve_fraction
    room = np.where(after_weights, (memory_bytes - weight_bytes) * kept, memory_bytes * kept - weight_bytes)
    context = input_tokens + np.where(fixed_batch | whole, output_tokens, output_tokens / 2.0)
    kv_seq = kv_bytes_per_token * context
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(kv_seq > 0, np.floor(room / np.where(kv_seq > 0, kv_seq, 1.0)), np.where(room > 0, np.inf, 0))
    return np.where(room > 0, fit, 0.0), room, kv_seq
