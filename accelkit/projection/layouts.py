"""Each device's best training layout: every tensor / pipeline / ZeRO / micro-batch /
recomputation split of a cluster, projected for the whole catalogue in one pass.

* :func:`step_sequences` -- sequences per optimizer step (whole micro-batches on every
  data-parallel rank, at least 2**22 tokens);
* :func:`training_layouts` -- the layouts an engineer would try on ``n_devices``;
* :func:`training_search` -- per device, the fastest that fits its memory.

The model of each layout is :func:`accelkit.projection.training`'s (the same
``_project``), so a layout chosen here and projected there gives the same figures.

References
----------
.. [1] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC21, arXiv:2104.04473, §3 (tensor parallel within a
   node, pipeline across, data parallel on top).
.. [4] S. Rajbhandari et al., "ZeRO", SC20, arXiv:1910.02054, §5 and §7.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import check_choice, check_integer, check_positive
from .ceilings import ceilings_for
from .constants import constants
from .shapes import resolve_model
from .systems import network_bandwidth
from .training import STEP_TOKENS, TRAIN_PRECISIONS, _project, finetune_terms

__all__ = ["step_sequences", "training_layouts", "training_search"]


def step_sequences(micro_batch_size, data_parallel, seq_len, target_tokens=STEP_TOKENS):
    """Sequences per optimizer step: whole micro-batches on every data-parallel rank
    (gradient accumulation), at least ``target_tokens`` [sequences]. Arrays broadcast."""
    per_pass = np.asarray(micro_batch_size) * np.asarray(data_parallel)
    return per_pass * np.maximum(1, np.ceil(target_tokens / (per_pass * seq_len)))


def training_layouts(n_devices, model, max_micro_batch=1, devices_per_node=8, recompute=("selective", "full")):
    """The layouts an engineer would try on ``n_devices``, simplest first.

    Tensor parallel 1/2/4/8… within a node, dividing the heads; pipeline stages in
    powers of two up to the layers, with ``tp · pp`` dividing the cluster; ZeRO 0 on
    one data-parallel rank, else 1-3 (3 = FSDP full sharding); with pipeline stages
    only ZeRO-1, as Megatron's distributed optimizer and DeepSpeed's pipeline engine
    allow; micro-batches 1, 2, 4 … up to ``max_micro_batch`` sequences per rank; the
    recomputation modes given. A model known only by its size gets data parallelism
    alone (its layers are unknown).

    Returns
    -------
    pandas.DataFrame
        ``tensor_parallel, pipeline_parallel, data_parallel, zero_stage,
        micro_batch_size, recompute``, one row per layout.
    """
    n = int(check_integer("n_devices", n_devices, low=1, what="a number of devices"))
    shape = resolve_model(model)
    micro = sorted({1 << i for i in range(int(np.log2(max(int(max_micro_batch), 1))) + 1)} | {int(max_micro_batch)})
    if shape.shaped:
        tps = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= min(n, devices_per_node) and n % t == 0
               and shape.n_heads % t == 0]
        pps = [p for p in (1, 2, 4, 8, 16, 32, 64, 128) if p <= shape.n_layers]
    else:
        tps, pps = [1], [1]
    rows = []
    for tp in tps:
        for pp in pps:
            if n % (tp * pp):
                continue
            dp = n // (tp * pp)
            zeros = [0] if dp == 1 else ([1, 2, 3] if pp == 1 else [1])
            rows += [(tp, pp, dp, z, mb, rc) for z in zeros for rc in recompute for mb in reversed(micro)]
    frame = pd.DataFrame(rows, columns=["tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage",
                                        "micro_batch_size", "recompute"])
    frame["_size"] = frame["tensor_parallel"] * frame["pipeline_parallel"]
    return frame.sort_values("_size", kind="stable").drop(columns="_size").reset_index(drop=True)


def training_search(catalog, model, tokens=2e12, precision="bf16", n_devices=8, seq_len=2048, max_micro_batch=1,
                    devices_per_node=8, network_gbps=None, measurements=None, utilization=None,
                    recompute=("selective", "full"), finetune_method="full", lora_rank=16, **overrides):
    """Each device's fastest training layout on ``n_devices`` that fits its memory.

    Every layout of :func:`training_layouts` is projected for every device in one
    vectorised pass (the model of :func:`training`; steps of at least 2**22 tokens,
    :func:`step_sequences`), and per device the one with the most tokens per second
    among those whose :func:`training_memory_bytes` fit is kept -- the search an
    engineer runs by hand over Megatron's or DeepSpeed's knobs (Narayanan et al.
    2021, §3: tensor parallel within a node, pipeline across, data parallel on top;
    Rajbhandari et al. 2020 for ZeRO). A ZeRO stage is taken only where the lower
    ones do not fit the same layout (each adds traffic). Where no layout fits, the
    one needing the least memory is returned, infeasible, with its ``why``.
    ``finetune_method`` / ``lora_rank``: as :func:`training` (LoRA and QLoRA layouts hold
    frozen weights and train adapters only).

    Returns
    -------
    pandas.DataFrame
        Index as ``catalog``: the columns of :func:`training` for the chosen layout,
        plus ``layouts_tried`` and ``layouts_fitting``.
    """
    precision = check_choice("precision", precision, TRAIN_PRECISIONS)
    check_positive("tokens", tokens, "a number of tokens")
    check_integer("max_micro_batch", max_micro_batch, low=1, what="a micro-batch size")
    n = int(check_integer("n_devices", n_devices, low=1, what="a number of devices"))
    shape = resolve_model(model)
    finetune = finetune_terms(shape, finetune_method, lora_rank)
    layouts = training_layouts(n, shape, max_micro_batch, devices_per_node, recompute)
    k = constants(**overrides)
    ceil, _ = ceilings_for(None, catalog, measurements)
    net_bw, net_source = network_bandwidth(ceil, catalog, network_gbps)
    n_dev, n_lay = len(ceil), len(layouts)
    dev, lay = np.repeat(np.arange(n_dev), n_lay), np.tile(np.arange(n_lay), n_dev)
    col = {c: layouts[c].to_numpy()[lay] for c in layouts}
    tp, pp, dp, mb = (col[c].astype(int) for c in ("tensor_parallel", "pipeline_parallel", "data_parallel",
                                                    "micro_batch_size"))
    frame = _project(shape, ceil.iloc[dev].reset_index(drop=True), np.broadcast_to(net_bw, (n_dev,))[dev],
                     np.broadcast_to(np.asarray(net_source, dtype=object), (n_dev,))[dev], tokens, precision, n, tp,
                     pp, dp, 1, seq_len, mb, step_sequences(mb, dp, seq_len), 1, col["recompute"],
                     col["zero_stage"].astype(int), devices_per_node, k, utilization, True, finetune)
    ok = frame["feasible"].to_numpy(dtype=bool).reshape(n_dev, n_lay).copy()
    # a higher ZeRO stage only where the lower ones do not fit: each adds traffic ([4]_ §7), and this
    # model counts ZeRO-3's weight gathers once per step, which flatters it under gradient accumulation
    for _, group in layouts.groupby(["tensor_parallel", "pipeline_parallel", "recompute"], sort=False):
        lower_fits = np.zeros(n_dev, dtype=bool)
        for _, same_stage in group.groupby("zero_stage", sort=True):
            rows = same_stage.index.to_numpy()
            fits_here = ok[:, rows].any(axis=1)
            ok[:, rows] &= ~lower_fits[:, None]
            lower_fits |= fits_here
    rate = np.where(ok, frame["tokens_per_s"].to_numpy(dtype=float).reshape(n_dev, n_lay), -np.inf)
    need = frame["memory_per_device_bytes"].to_numpy(dtype=float).reshape(n_dev, n_lay)
    choice = np.where(ok.any(axis=1), np.argmax(rate, axis=1), np.argmin(need, axis=1))
    out = frame.iloc[np.arange(n_dev) * n_lay + choice].reset_index(drop=True)
    out["layouts_tried"], out["layouts_fitting"] = n_lay, ok.sum(axis=1)
    out.index = catalog.index
    return out
