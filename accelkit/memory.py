"""Memory footprint: weights, training state (optimizer, ZeRO), activations, KV cache.

All sizes are in bytes. Parameter counts are plain counts.

References
----------
.. [1] S. Rajbhandari, J. Rasley, O. Ruwase, Y. He, "ZeRO: Memory Optimizations
   Toward Training Trillion Parameter Models", SC20, arXiv:1910.02054,
   sections 3.1 and 5 and figure 1 (2Ψ + 2Ψ + KΨ with K = 12).
.. [2] V. Korthikanti et al., "Reducing Activation Recomputation in Large
   Transformer Models", arXiv:2205.05198 (2022), section 4, eqs. 1-2 and table 2.
.. [3] W. Kwon et al., "Efficient Memory Management for Large Language Model
   Serving with PagedAttention" (vLLM), SOSP 2023, arXiv:2309.06180, section 2.3.
.. [4] T. Dettmers, M. Lewis, S. Shleifer, L. Zettlemoyer, "8-bit Optimizers via
   Block-wise Quantization", ICLR 2022, arXiv:2110.02861.
.. [5] N. Shazeer, M. Stern, "Adafactor: Adaptive Learning Rates with Sublinear
   Memory Cost", ICML 2018, arXiv:1804.04235.
.. [6] Hugging Face Transformers docs, "Model training anatomy" (18 bytes per
   parameter for mixed-precision AdamW: fp32 + fp16 weights, fp32 gradients,
   two fp32 Adam states).
.. [7] vLLM engine arguments: ``gpu_memory_utilization`` defaults to 0.9.
"""

from __future__ import annotations

import numpy as np

from ._validate import check_choice, check_integer, check_non_negative, check_positive

__all__ = [
    "BYTES_PER_PARAM",
    "OPTIMIZER_STATE_BYTES",
    "bytes_per_param",
    "weight_bytes",
    "training_bytes",
    "training_bytes_breakdown",
    "activation_bytes_per_layer",
    "kv_cache_bytes",
    "usable_bytes",
    "fits",
    "min_devices",
    "DEFAULT_RESERVE_FRACTION",
]

#: storage bytes per value for each precision (int4 packs two values per byte)
BYTES_PER_PARAM = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,  # TF32 is a compute mode; values are stored as FP32
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

#: optimizer state bytes per parameter when training in mixed precision, *including*
#: the fp32 master copy of the weights (the "K" of ZeRO [1]).
OPTIMIZER_STATE_BYTES = {
    "adam": 12.0,  # fp32 master weights + fp32 momentum + fp32 variance [1] §3.1
    "adamw": 12.0,
    "sgd": 4.0,  # fp32 master weights only (no momentum)
    "sgd-momentum": 8.0,  # fp32 master weights + fp32 momentum
    "adafactor": 4.0,  # fp32 master weights; factored second moments are O(rows+cols) [5]
    "adam-8bit": 6.0,  # fp32 master weights + two 8-bit states [4] (block scales ignored)
}

#: fraction of device memory kept free for the framework (CUDA context, allocator
#: fragmentation, workspaces) by default -- vLLM reserves 10 % ([7]).
DEFAULT_RESERVE_FRACTION = 0.10


def bytes_per_param(precision):
    """Storage bytes per value for ``precision`` (``fp64 … int4``)."""
    return BYTES_PER_PARAM[check_choice("precision", precision, BYTES_PER_PARAM)]


def weight_bytes(params, precision):
    """Bytes to hold the weights: ``params × bytes_per_param(precision)``.

    Parameters
    ----------
    params : numeric
        Parameters [count] (for mixture-of-experts: *all* experts, since all must
        be resident).
    precision : str
        ``fp64, fp32, tf32, bf16, fp16, fp8, int8, int4``.

    Returns
    -------
    numeric [bytes]

    Notes
    -----
    Example: Llama-2-7B (6.74e9 parameters) in bf16 holds 13.5 GB of weights.
    Quantised formats add small per-group scales, ignored here.
    """
    check_positive("params", params, "a number of parameters")
    return params * bytes_per_param(precision)


def training_bytes_breakdown(params, precision="mixed", optimizer="adam", zero_stage=0, n_devices=1, fp32_grads=False):
    """Per-device model-state bytes, split into weights, gradients and optimizer.

    Same arguments as :func:`training_bytes`; returns a dict of
    ``weights, gradients, optimizer, total`` [bytes per device].
    """
    check_positive("params", params, "a number of parameters")
    check_integer("zero_stage", zero_stage, low=0, what="a ZeRO stage (0, 1, 2 or 3)")
    if np.any(np.asarray(zero_stage) > 3):
        raise ValueError(f"zero_stage must be a ZeRO stage (0, 1, 2 or 3); got {zero_stage}")
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    precision = check_choice("precision", precision, ["mixed", *BYTES_PER_PARAM])
    optimizer = check_choice("optimizer", optimizer, OPTIMIZER_STATE_BYTES)
    if precision == "mixed":
        # 16-bit working weights and gradients; fp32 master copy counted in the optimizer
        w, g, k = 2.0, (4.0 if fp32_grads else 2.0), OPTIMIZER_STATE_BYTES[optimizer]
    else:
        # single-precision-format training: no separate master copy
        w = g = BYTES_PER_PARAM[precision]
        k = OPTIMIZER_STATE_BYTES[optimizer] - 4.0
        if fp32_grads:
            g = 4.0
        if optimizer == "adam-8bit":
            k = 2.0
    stage = np.asarray(zero_stage)
    shard_opt = np.where(stage >= 1, n_devices, 1)
    shard_grad = np.where(stage >= 2, n_devices, 1)
    shard_param = np.where(stage >= 3, n_devices, 1)
    weights = params * w / shard_param
    gradients = params * g / shard_grad
    optim = params * k / shard_opt
    if np.ndim(weights) == 0:
        weights, gradients, optim = float(weights), float(gradients), float(optim)
    return {"weights": weights, "gradients": gradients, "optimizer": optim, "total": weights + gradients + optim}


def training_bytes(params, precision="mixed", optimizer="adam", zero_stage=0, n_devices=1, fp32_grads=False):
    """Per-device bytes of model states when training (weights, gradients, optimizer).

    Parameters
    ----------
    params : numeric
        Parameters Ψ [count].
    precision : str, default "mixed"
        ``"mixed"``: bf16/fp16 weights and gradients with an fp32 master copy
        ([1]_ §3.1); or a single format (``"fp32"``, ``"bf16"``, …) used for
        weights, gradients and optimizer states alike.
    optimizer : str, default "adam"
        ``adam``/``adamw`` (K = 12), ``sgd-momentum`` (8), ``sgd`` (4),
        ``adafactor`` (≈ 4, [5]_), ``adam-8bit`` (≈ 6, [4]_) bytes per parameter
        of optimizer state including the fp32 master weights (mixed precision).
    zero_stage : int, default 0
        ZeRO-DP stage: 1 shards optimizer states, 2 also gradients, 3 also
        parameters over ``n_devices`` ([1]_ §5).
    n_devices : int, default 1
        Data-parallel degree N_d.
    fp32_grads : bool, default False
        Keep gradients in fp32: the 18-bytes-per-parameter convention of [6]_
        instead of ZeRO's 16.

    Returns
    -------
    numeric
        Bytes per device for model states (activations not included; see
        :func:`activation_bytes_per_layer`).

    Notes
    -----
    ZeRO [1]_ eq. in §5 / figure 1, with Ψ parameters and K = 12:
    stage 0: (2 + 2 + K)Ψ; stage 1: 2Ψ + 2Ψ + KΨ/N_d; stage 2: 2Ψ + (2 + K)Ψ/N_d;
    stage 3: (2 + 2 + K)Ψ/N_d. Worked example (figure 1): Ψ = 7.5e9, N_d = 64 gives
    120 GB, 31.4 GB, 16.6 GB and 1.9 GB.
    """
    return training_bytes_breakdown(params, precision, optimizer, zero_stage, n_devices, fp32_grads)["total"]


def activation_bytes_per_layer(
    seq_len,
    batch,
    hidden,
    n_heads,
    tensor_parallel=1,
    sequence_parallel=False,
    recompute="none",
):
    """Activation memory of one transformer layer in training, 16-bit activations.

    Parameters
    ----------
    seq_len : numeric
        Sequence length s [tokens].
    batch : numeric
        Micro-batch size b [sequences].
    hidden : numeric
        Hidden size h.
    n_heads : numeric
        Attention heads a.
    tensor_parallel : int, default 1
        Tensor-parallel size t.
    sequence_parallel : bool, default False
        Megatron sequence parallelism (shards the layer-norm and dropout parts).
    recompute : {"none", "selective", "full"}
        ``selective`` recomputes the attention core (the ``5as/h`` term);
        ``full`` keeps only the layer input (2sbh bytes).

    Returns
    -------
    numeric [bytes per layer, per device]

    Notes
    -----
    Korthikanti et al. [2]_: no parallelism ``sbh(34 + 5as/h)`` (eq. 1); tensor
    parallel ``sbh(10 + 24/t + 5as/(ht))`` (eq. 2); with sequence parallel
    ``sbh/t (34 + 5as/h)``; selective recomputation drops the ``5as/h`` term;
    full recomputation stores ``2sbh`` (table 2). Dropout masks included.
    """
    for name, value in (("seq_len", seq_len), ("batch", batch), ("hidden", hidden), ("n_heads", n_heads)):
        check_positive(name, value, "a size")
    check_positive("tensor_parallel", tensor_parallel, "a tensor-parallel size")
    recompute = check_choice("recompute", recompute, ["none", "selective", "full"])
    s, b, h, a, t = seq_len, batch, hidden, n_heads, tensor_parallel
    attention_core = 5.0 * a * s / h
    if recompute == "full":
        return 2.0 * s * b * h / (t if sequence_parallel else 1)
    if recompute == "selective":
        attention_core = 0.0
    if sequence_parallel:
        return s * b * h / t * (34.0 + attention_core)
    return s * b * h * (10.0 + 24.0 / t + attention_core / t)


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, precision):
    """Key-value cache bytes for autoregressive decoding.

    Parameters
    ----------
    n_layers : numeric
        Transformer layers L.
    n_kv_heads : numeric
        Key/value heads (``n_heads`` for multi-head attention, fewer for
        grouped-query or multi-query attention).
    head_dim : numeric
        Dimension per head.
    seq_len : numeric
        Tokens held per sequence (prompt + generated).
    batch : numeric
        Sequences held at once.
    precision : str
        Storage format of the cache (``bf16``, ``fp16``, ``fp8``, ``int8``, …).

    Returns
    -------
    numeric
        ``2 × L × n_kv_heads × head_dim × seq_len × batch × bytes`` [bytes].

    Notes
    -----
    The 2 counts keys and values. Worked example ([3]_ §2.3): OPT-13B
    (L = 40, 40 heads × 128 = 5120) in fp16 needs 2 × 5120 × 40 × 2 = 819,200 bytes
    ("800 KB") per token, ≈ 1.6 GB for a 2048-token sequence.
    """
    for name, value in (
        ("n_layers", n_layers),
        ("n_kv_heads", n_kv_heads),
        ("head_dim", head_dim),
        ("seq_len", seq_len),
        ("batch", batch),
    ):
        check_positive(name, value, "a size")
    return 2.0 * n_layers * n_kv_heads * head_dim * seq_len * batch * bytes_per_param(precision)


def usable_bytes(device_bytes, reserve_fraction=DEFAULT_RESERVE_FRACTION, overhead_bytes=0.0):
    """Device memory left for the model after the framework's share.

    Parameters
    ----------
    device_bytes : numeric
        Device memory [bytes].
    reserve_fraction : float, default 0.10
        Fraction kept free for the runtime (context, allocator, workspaces);
        0.10 follows vLLM's default ``gpu_memory_utilization = 0.9`` ([7]_).
    overhead_bytes : numeric, default 0
        A further fixed overhead [bytes].

    Returns
    -------
    numeric [bytes], never below 0.
    """
    check_positive("device_bytes", device_bytes, "a memory size in bytes")
    check_non_negative("overhead_bytes", overhead_bytes, "a size in bytes")
    if np.any(np.asarray(reserve_fraction) < 0) or np.any(np.asarray(reserve_fraction) >= 1):
        raise ValueError(f"reserve_fraction must be a fraction in [0, 1), e.g. 0.1; got {reserve_fraction}")
    return np.maximum(device_bytes * (1.0 - reserve_fraction) - overhead_bytes, 0.0)


def fits(required_bytes, device_bytes, reserve_fraction=DEFAULT_RESERVE_FRACTION, overhead_bytes=0.0):
    """True where ``required_bytes`` fits in one device's usable memory."""
    check_positive("required_bytes", required_bytes, "a memory size in bytes")
    return required_bytes <= usable_bytes(device_bytes, reserve_fraction, overhead_bytes)


def min_devices(required_bytes, device_bytes, reserve_fraction=DEFAULT_RESERVE_FRACTION, overhead_bytes=0.0):
    """Fewest devices whose usable memory together holds ``required_bytes``.

    Assumes the state shards evenly (tensor/pipeline parallel or ZeRO-3); the
    per-device overhead is paid on every device.

    Returns
    -------
    numeric
        ``ceil(required / usable)`` [devices]; ``inf`` where a device has no usable
        memory.
    """
    check_positive("required_bytes", required_bytes, "a memory size in bytes")
    usable = usable_bytes(device_bytes, reserve_fraction, overhead_bytes)
    with np.errstate(divide="ignore"):
        need = np.ceil(np.round(required_bytes / usable, 9))
    return np.where(usable > 0, np.maximum(need, 1), np.inf) if np.ndim(need) else (max(need, 1) if usable > 0 else np.inf)
