"""Software stacks as data: what the runtime does to a model's layers (``data/stacks.csv``).

One constant set cannot describe TensorRT and eager PyTorch at once: a compiled stack
fuses each convolution or GEMM with the batch norm, activation and residual add that
follow it, so a layer is one kernel that writes its output once; an eager framework
runs each of those as its own kernel, each reading and writing the whole feature map.
Each row of ``data/stacks.csv`` names a stack, its ``execution`` class (``fused`` or
``eager``), the workloads it is modelled for and the vendors it is the default of,
with the documentation that says how it executes. The per-kernel cost of each class
(``vision_kernel_cycles_fused``, GPU cycles at the device's clock, ``data/clocks_caches.csv``;
``vision_kernel_s_eager``, seconds of the host's dispatch) is a fitted constant of
``data/projection_constants.csv`` (``accelkit validate --fit``, on the fit sources).

Serving engines for decoders (workload ``llm``: TensorRT-LLM, vLLM, SGLang, the vendor's
own) differ where the engine can source it: the largest tensor-parallel all-reduce their
custom kernel takes (``custom_allreduce_max_bytes``, ``_rocm`` on AMD parts; vLLM's
``CustomAllreduce``: 8 MiB), above which they fall back to NCCL
(:func:`~accelkit.projection.serving_rates.llm_stack_limits`), and how much KV cache they set
aside for a request they admit (``kv_reservation``): TensorRT-LLM's default capacity policy,
``GUARANTEED_NO_EVICT``, reserves the prompt plus the request's whole output at admission so that
no started request is paused (``whole_request``); vLLM's paged cache holds the tokens a sequence
has and preempts when it runs out (``tokens_held``), so a running batch holds, on average, its
prompts and half their outputs; and whether their memory share is of the whole device (vLLM) or
of what the weights leave (TensorRT-LLM) (:func:`kv_cache_policy`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["load_stacks", "stack_row", "default_stack", "serving_engine_labels", "kv_cache_policy", "runs_on",
           "stack_not_run_why",
           "EXECUTIONS", "KV_RESERVATIONS", "KV_SHARES_OF", "WORKLOADS"]

EXECUTIONS = ("fused", "eager")

#: how a serving engine sets KV cache aside for a request it admits (``llm`` rows)
KV_RESERVATIONS = ("whole_request", "tokens_held")

#: what the serving memory share (``serving_reserve_fraction`` kept free) is a share of: the device's
#: whole memory (vLLM's ``gpu_memory_utilization``) or what the loaded weights leave (TensorRT-LLM's
#: ``kv_cache_free_gpu_mem_fraction``)
KV_SHARES_OF = ("device_memory", "memory_after_weights")

#: the workloads a stack row may list; a stack serves only the ones it lists
WORKLOADS = ("vision", "encoder", "recommender", "llm")

STACKS_SCHEMA = Schema("the software stacks CSV", (
    Column("stack", required=True, nonempty=True), Column("label", required=True, nonempty=True),
    Column("workloads", required=True, nonempty=True),
    Column("execution", required=True, nonempty=True, choices=EXECUTIONS),
    Column("default_for_vendors", required=True), Column("source_url", required=True, nonempty=True),
    Column("notes", required=True),
    Column("custom_allreduce_max_bytes", kind="number", unit="bytes", low=0),
    Column("custom_allreduce_max_bytes_rocm", kind="number", unit="bytes", low=0),
    Column("kv_reservation", choices=KV_RESERVATIONS), Column("kv_cache_share_of", choices=KV_SHARES_OF),
    Column("kv_policy_source_url"), Column("kv_policy_quote"),
    Column("runs_on_vendors", required=True, nonempty=True), Column("runs_on_source_url", required=True, nonempty=True),
    Column("runs_on_quote", required=True, nonempty=True),
), label="stack", unique="stack")


@lru_cache(maxsize=2)
def _load(path):
    return read_table(path, STACKS_SCHEMA, Path(path).name, CatalogError)


def load_stacks(path=None):
    """The stacks table (a copy)."""
    return _load(data_path("stacks.csv") if path is None else path).copy()


def _serves(workloads, workload):
    return workload in [w.strip() for w in str(workloads).split(";")]


def stack_row(stack, path=None, workload=None):
    """One stack's row as a dict; an unknown name raises naming the close matches, and a
    stack that does not serve ``workload`` (``vision``, ``llm``, ...) names those that do."""
    from .._validate import check_choice

    rows = _rows(str(data_path("stacks.csv") if path is None else path), workload)
    name = check_choice("stack", stack, list(rows))
    return dict(rows[name])  # a copy: the table read once stays as read


@lru_cache(maxsize=16)
def _rows(path, workload):
    # name -> row of the stacks serving ``workload`` (all: None), built once per table (a rank asks ~5 times)
    table = _load(path)
    if workload is not None:
        table = table[[_serves(w, workload) for w in table["workloads"]]]
    return {name: row for name, row in zip(table["stack"], table.to_dict("records"))}


@lru_cache(maxsize=8)
def _defaults(path, workload):
    table = _load(path)
    return {v.strip(): stack for stack, vendors, works in
            zip(table["stack"], table["default_for_vendors"], table["workloads"])
            if _serves(works, workload) for v in str(vendors).split(";") if v.strip()}


#: the stack of a vendor no row names, per workload
_FALLBACK = {"llm": "vendor-serving"}


def default_stack(vendor, path=None, workload="vision"):
    """The stack a device of ``vendor`` runs ``workload`` with by default (image models,
    encoders and recommenders share theirs; ``llm``: the serving engine)."""
    fallback = _FALLBACK.get(workload, "vendor-compiler")
    return _defaults(data_path("stacks.csv") if path is None else path, workload).get(vendor, fallback)


@lru_cache(maxsize=2)
def _labels(path, workload):
    table = _load(path)
    return {stack: label for stack, label, works in zip(table["stack"], table["label"], table["workloads"])
            if _serves(works, workload)}


@lru_cache(maxsize=2)
def _runs_on(path):
    table = _load(path)
    return {stack: {v.strip() for v in str(vendors).split(";") if v.strip()}
            for stack, vendors in zip(table["stack"], table["runs_on_vendors"])}


def runs_on(stacks, vendors, names, path=None):
    """Whether each stack of ``stacks`` runs on the matching device (boolean array): ``data/stacks.csv``'s
    ``runs_on_vendors`` lists vendors (every part of theirs) and device families (a name's first word, where a
    stack runs on some of a vendor's parts only: SGLang on Intel's Xeon, not its Gaudi), each row citing where it
    is stated (TensorRT and TensorRT-LLM: NVIDIA only; vLLM: NVIDIA, AMD, Intel, Google, Huawei, ...)."""
    table = _runs_on(data_path("stacks.csv") if path is None else path)
    return np.array([bool({v, str(n).split(" ")[0]} & table.get(s, set()))
                     for s, v, n in zip(np.ravel(stacks), np.ravel(vendors), np.ravel(names))], dtype=bool)


def stack_not_run_why(stacks, names, catalog=None, path=None):
    """Per device of ``names``: "" where its stack of ``stacks`` runs on it, else why not ("TensorRT does
    not run on the Instinct MI300X (it runs on NVIDIA; data/stacks.csv)"), the words a projection gives for a
    device it cannot price."""
    from ..catalog import load_catalog

    vendors = (load_catalog() if catalog is None else catalog).set_index("name")["vendor"]
    vendor = np.array([vendors.get(n, "") for n in names], dtype=object)
    stacks = np.broadcast_to(np.asarray(stacks, dtype=object), vendor.shape)
    ok = runs_on(stacks, vendor, np.asarray(names, dtype=object), path)
    words = _not_run_words(data_path("stacks.csv") if path is None else path)
    return np.array(["" if good else f"{words[s][0]} does not run on the {n} (it runs on {words[s][1]}; data/stacks.csv)"
                     for s, n, good in zip(stacks, names, ok)], dtype=object)


@lru_cache(maxsize=2)
def _not_run_words(path):
    """``stack -> (label, "the vendors it runs on")``, read once (the reason a device is not priced)."""
    table = _load(path)
    return {stack: (label, str(vendors).replace(";", ", "))
            for stack, label, vendors in zip(table["stack"], table["label"], table["runs_on_vendors"])}


def serving_engine_labels(path=None):
    """``stack -> label`` of the serving engines (workload ``llm``), read once (the decision names one per device)."""
    return _labels(data_path("stacks.csv") if path is None else path, "llm")


def kv_cache_policy(stacks, path=None):
    """How each serving stack of ``stacks`` sets KV cache aside, as two boolean arrays of its shape.

    ``whole_request``: ``True`` where the stack reserves a request's prompt and whole output when it
    admits it (``kv_reservation`` ``whole_request``: TensorRT-LLM's default ``GUARANTEED_NO_EVICT``),
    ``False`` where it holds only the tokens a sequence has (``tokens_held``: vLLM's paged cache).
    ``after_weights``: ``True`` where its memory share is a share of what the loaded weights leave
    (``kv_cache_share_of`` ``memory_after_weights``: TensorRT-LLM's ``kv_cache_free_gpu_mem_fraction``),
    ``False`` where it is a share of the whole device (vLLM's ``gpu_memory_utilization``).
    References: ``data/stacks.csv``'s ``kv_policy_source_url`` and ``kv_policy_quote`` per row.
    """
    policy = _kv_policies(data_path("stacks.csv") if path is None else path)
    got = np.array([policy.get(s, (False, False)) for s in np.ravel(np.asarray(stacks, dtype=object))],
                   dtype=bool).reshape(-1, 2)
    return got[:, 0].reshape(np.shape(stacks)), got[:, 1].reshape(np.shape(stacks))


@lru_cache(maxsize=2)
def _kv_policies(path):
    """``stack -> (whole_request, after_weights)``, read once (every serving projection asks)."""
    table = _load(path)
    return {stack: (reserve == "whole_request", share == "memory_after_weights")
            for stack, reserve, share in zip(table["stack"], table["kv_reservation"], table["kv_cache_share_of"])}
