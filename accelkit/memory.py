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
.. [8] E. Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", ICLR 2022,
   arXiv:2106.09685, §4.1 (``W0 + BA`` with ``B`` d×r and ``A`` r×k), §4.2 (no optimizer state
   for the frozen weights), §5.1 (``|Θ| = 2 × L_LoRA × d_model × r``).
.. [9] T. Dettmers, A. Pagnoni, A. Holtzman, L. Zettlemoyer, "QLoRA: Efficient Finetuning
   of Quantized LLMs", NeurIPS 2023, arXiv:2305.14314, §3 (NF4 storage, BF16 compute and
   adapters, double quantisation ``8/64 + 32/(64·256) = 0.127`` bits per parameter, paged
   optimizers).
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
    "FINETUNE_METHODS",
    "NF4_DQ_BITS",
    "lora_adapter_params",
    "finetune_bytes_breakdown",
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

#: fine-tuning methods: every weight trained, or low-rank adapters on frozen 16-bit / 4-bit weights ([8]_, [9]_)
FINETUNE_METHODS = ("full", "lora", "qlora")

#: bits per NF4-stored weight with double quantisation: 4 bits + FP8 constants per block of 64 + one FP32
#: constant per 256 blocks, ``4 + 8/64 + 32/(64·256)`` ([9]_ §3: 0.127 bits of constants, against 0.5 without DQ)
NF4_DQ_BITS = 4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)

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


def lora_adapter_params(matrices, rank):
    """Trainable parameters of LoRA adapters: ``rank × (d_in + d_out)`` per adapted matrix.

    Parameters
    ----------
    matrices : iterable of (d_in, d_out, count)
        The adapted weight matrices, e.g. ``[(4096, 4096, 64)]`` for W_q and W_v of 32 layers.
    rank : numeric
        Adapter rank r.

    Returns
    -------
    float [count]

    Notes
    -----
    LoRA ([8]_ §4.1) adds ``B A`` with ``B ∈ R^{d×r}``, ``A ∈ R^{r×k}`` to a frozen ``W0 ∈ R^{d×k}``;
    for square matrices this is the paper's ``|Θ| = 2 × L_LoRA × d_model × r`` (§5.1). GPT-3 175B
    (96 layers, d = 12288) with r = 4 on W_q and W_v: 18.9 M parameters, 37.7 MB in fp16 -- the
    paper's "350GB to 35MB" checkpoint (§4.2).
    """
    check_positive("rank", rank, "an adapter rank")
    total = 0.0
    for d_in, d_out, count in matrices:
        total += float(count) * (float(d_in) + float(d_out))
    return rank * total


def finetune_bytes_breakdown(params, method="full", adapter_params=0.0, quantized_params=None, precision="mixed",
                             optimizer="adam", zero_stage=0, n_devices=1):
    """Per-device model-state bytes of a fine-tuning method: weights, gradients, optimizer.

    Parameters
    ----------
    params : numeric
        Parameters of the model Ψ [count].
    method : {"full", "lora", "qlora"}
        ``full``: :func:`training_bytes_breakdown` (every weight trained). ``lora``: the
        frozen weights at 16 bits (fp32 for ``precision="fp32"``), no gradient or optimizer
        state for them ([8]_ §4.2), plus ``adapter_params`` trained in mixed-precision Adam
        (the 16 bytes of :func:`training_bytes`). ``qlora``: ``quantized_params`` stored in NF4
        with double quantisation (:data:`NF4_DQ_BITS`), the rest (embeddings, output head,
        norms) at 16 bits; BF16 adapters with BF16 gradients and two FP32 Adam moments (2 + 2
        + 8 bytes) in paged memory ([9]_ §3).
    adapter_params : numeric
        Trainable adapter parameters (:func:`lora_adapter_params`).
    quantized_params : numeric, optional
        Parameters stored in 4 bits (QLoRA; default: all of them).
    precision, optimizer : str
        As :func:`training_bytes` (``optimizer`` applies to the adapters of LoRA).
    zero_stage, n_devices : int
        ZeRO stage and data-parallel degree: stage 1 shards the optimizer state, 2 also the
        gradients, 3 also the weights -- frozen ones included (FSDP full sharding).

    Returns
    -------
    dict
        ``weights, gradients, optimizer, total`` [bytes per device] and ``paged`` (the part of
        ``optimizer`` that QLoRA's paged optimizer lets live in host memory; 0 otherwise).
        ``total`` counts everything; ``total - paged`` must be resident on the device.

    Notes
    -----
    Worked examples: LoRA on GPT-3 175B holds 350 GB of fp16 weights and a few hundred MB of
    adapters -- the LoRA paper's "from 1.2TB to 350GB" (§4.2). QLoRA on a 65B model holds
    64.8e9 × 4.127 / 8 = 33.4 GB of NF4 layers plus 1 GB of 16-bit embeddings: with
    adapters and activations it fits "a 65B parameter model on a single 48GB GPU" ([9]_).
    """
    method = check_choice("method", method, FINETUNE_METHODS)
    if method == "full":
        out = training_bytes_breakdown(params, precision, optimizer, zero_stage, n_devices)
        out["paged"] = 0.0
        return out
    check_positive("params", params, "a number of parameters")
    check_non_negative("adapter_params", adapter_params, "a number of adapter parameters")
    check_integer("zero_stage", zero_stage, low=0, what="a ZeRO stage (0, 1, 2 or 3)")
    check_integer("n_devices", n_devices, low=1, what="a number of devices")
    stage = np.asarray(zero_stage)
    shard_opt = np.where(stage >= 1, n_devices, 1)
    shard_grad = np.where(stage >= 2, n_devices, 1)
    shard_param = np.where(stage >= 3, n_devices, 1)
    adapters = np.asarray(adapter_params, dtype=float)
    if method == "lora":
        frozen = params * (4.0 if precision in ("fp32", "tf32") else 2.0)
        parts = training_bytes_breakdown(np.maximum(adapters, 1.0), precision, optimizer, 0, 1)
        scale = adapters / np.maximum(adapters, 1.0)  # 0 adapters: no adapter state
        a_w, a_g, a_o = (parts[k] * scale for k in ("weights", "gradients", "optimizer"))
        paged = 0.0
    else:
        quantized = params if quantized_params is None else np.minimum(quantized_params, params)
        frozen = quantized * NF4_DQ_BITS / 8.0 + (params - quantized) * 2.0
        a_w, a_g, a_o = 2.0 * adapters, 2.0 * adapters, 8.0 * adapters
        paged = a_o / shard_opt
    weights = (frozen + a_w) / shard_param
    gradients = a_g / shard_grad
    optim = a_o / shard_opt
    out = {"weights": weights, "gradients": gradients, "optimizer": optim, "total": weights + gradients + optim,
           "paged": paged}
    if all(np.ndim(v) == 0 for v in out.values()):
        out = {k: float(v) for k, v in out.items()}
    return out


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
