"""What a fine-tuning method changes in the training model: adapters, frozen and quantised weights.

* :func:`finetune_terms` -- for a model shape, the adapter parameters of LoRA / QLoRA at a rank
  (``rank × (d_in + d_out)`` per adapted matrix, Hu et al. 2021 §4.1), the parameters that train,
  and those QLoRA stores in NF4 (the layers' weights; embeddings and output head stay 16-bit);
* :func:`finetune_settings` / :func:`scenario_finetune` -- a scenario's method and rank (``full``
  unless the workload is ``fine-tuning``).

The training model (:mod:`accelkit.projection.training`) and the memory model
(:func:`accelkit.memory.finetune_bytes_breakdown`) use these counts.

References
----------
.. [1] E. Hu et al., "LoRA", ICLR 2022, arXiv:2106.09685.
.. [2] T. Dettmers et al., "QLoRA", NeurIPS 2023, arXiv:2305.14314, §4 (adapters on every linear
   layer are needed to match full fine-tuning).
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validate import check_choice, check_integer

__all__ = ["LORA_TARGETS", "finetune_terms", "finetune_settings", "flops_per_token", "scenario_finetune"]

#: which matrices get adapters: every linear layer of the blocks (QLoRA's finding that this is needed to match
#: full fine-tuning, arXiv:2305.14314 §4), or W_q and W_v only (the LoRA paper's experiments, §4.2)
LORA_TARGETS = ("all", "qv")


def _adapted_matrices(shape, targets):
    """``(d_in, d_out, count)`` of the matrices that get adapters. A shape without layers gets a
    transformer of its size guessed at GPT-3's and Llama's aspect ratio ``d_model = 128 · n_layers``
    (``N ≈ 12 · n_layers · d_model²``), multi-head attention and a 4·d two-matrix MLP."""
    if shape.shaped:
        n_l, d = shape.n_layers, shape.d_model
        d_attn = shape.attention_dim
        d_kv = shape.n_kv_heads * shape.head_dim
        attn = [(d, d_attn, n_l), (d, d_kv, n_l), (d, d_kv, n_l), (d_attn, d, n_l)]
        if targets == "qv":
            return [attn[0], attn[2]]
        ffn = shape.ffn_dim if np.isfinite(shape.ffn_dim) else 4.0 * d
        attn_params = n_l * (2.0 * d * d_attn + 2.0 * d * d_kv)
        # the MLP's matrices (gated: 3 per expert; GPT: 2), from the parameters left in the layers
        mlp = max(round((shape.body_params - attn_params) / (n_l * d * ffn)), 1)
        return attn + [(d, ffn, n_l * mlp - n_l * (mlp // 2)), (ffn, d, n_l * (mlp // 2))]
    d = (128.0 * shape.params / 12.0) ** (1.0 / 3.0)
    n_l = d / 128.0
    if targets == "qv":
        return [(d, d, 2.0 * n_l)]
    return [(d, d, 4.0 * n_l), (d, 4.0 * d, n_l), (4.0 * d, d, n_l)]


def finetune_terms(shape, finetune_method="full", lora_rank=16, lora_targets="all"):
    """What a fine-tuning method changes: ``method``, ``adapters`` (trainable adapter parameters),
    ``trainable`` (parameters with gradients and optimizer state) and ``quantized`` (parameters
    stored in NF4: the layers' weights for QLoRA; embeddings and output head stay 16-bit) [counts]."""
    method = check_choice("finetune_method", finetune_method, memory.FINETUNE_METHODS)
    targets = check_choice("lora_targets", lora_targets, LORA_TARGETS)
    if method == "full":
        return {"method": "full", "adapters": 0.0, "trainable": float(shape.params), "quantized": 0.0,
                "rank": np.nan}
    check_integer("lora_rank", lora_rank, low=1, what="an adapter rank")
    adapters = memory.lora_adapter_params(_adapted_matrices(shape, targets), lora_rank)
    quantized = float(shape.body_params) if method == "qlora" else 0.0
    return {"method": method, "adapters": adapters, "trainable": adapters, "quantized": quantized,
            "rank": float(lora_rank)}


def finetune_settings(scenario):
    """``(finetune_method, lora_rank)`` of a scenario: its method for ``fine-tuning``, ``full`` otherwise."""
    if getattr(scenario, "workload", "") != "fine-tuning":
        return "full", 16
    return getattr(scenario, "finetune_method", "full"), getattr(scenario, "lora_rank", 16)


def scenario_finetune(scenario):
    """:func:`finetune_terms` of a scenario's model, method and rank."""
    from .shapes import resolve_model, scenario_model

    method, rank = finetune_settings(scenario)
    if method == "full":  # no shape needed
        return {"method": "full", "adapters": 0.0, "trainable": np.nan, "quantized": 0.0, "rank": np.nan}
    return finetune_terms(resolve_model(scenario_model(scenario)), method, rank)


def flops_per_token(active_params, finetune):
    """Training FLOP per token of a fine-tuning method [FLOP].

    Full training: 6·N (2 forward, 4 backward; Kaplan et al. 2020 §2.1,
    :func:`accelkit.demand.training_flops`). LoRA / QLoRA: the frozen weights get no
    weight gradient, so their linear layers cost the forward and the activation
    gradient, 4·N, and the adapters train in full, 6·adapters (Hu et al. 2021 §4.2).

    Parameters
    ----------
    active_params : float
        Parameters used per token [count].
    finetune : dict
        :func:`scenario_finetune` (``method``, ``adapters``).
    """
    from ..demand import training_flops

    if finetune["method"] == "full":
        return training_flops(active_params, 1.0)
    return 4.0 * active_params + training_flops(finetune["adapters"], 1.0)
