"""A transformer trained on this device: one micro-batch's forward and backward and one optimizer step, timed.

The LLM probe (:mod:`accelkit.probes.llm`) checks the engine's serving model where a
person sits; this one checks its training model, and measures the figure the
workbook asks a person to bring: their own stack's model FLOPs utilisation (MFU),
which a scenario takes as ``utilization``.

* :func:`training_step_seconds` -- a decoder in the model's own shape (RMSNorm,
  fused QKV projection, causal ``scaled_dot_product_attention``, SwiGLU or GELU MLP
  as the preset's parameter count says, output head -- tied to the embedding where
  the preset ties them -- and cross-entropy), fp32 master weights under ``torch.autocast`` (bf16 or
  fp16 matmuls: mixed precision, Micikevicius et al. 2018) and AdamW (PyTorch's
  fused kernel on CUDA); the median time of one micro-batch's forward + backward
  and of one optimizer step;
* :func:`training_probe` -- those times as a step of ``accumulation_steps``
  micro-batches, tokens per second and MFU (PaLM's convention, Chowdhery et al.
  2022, appendix B), next to :func:`accelkit.projection.training` of the same
  layout on one device.

It is plain eager PyTorch: no fused norms or activations, no ``torch.compile``, no
activation recomputation. The engine's constants were fitted to tuned frameworks
(Megatron-LM, llm-foundry, MaxText, NeMo), so the measured step is expected to be
slower than projected; the MFU it reports is what this stack reaches, and a scenario
given it as ``utilization`` projects a cluster at that efficiency.

Units: seconds, tokens, FLOP.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import check_choice, check_integer
from ..local.devices import import_torch, resolve_device
from ._base import _check_fraction, _cleanup, _guard, _Skipped
from .llm import _mlp_matrices, _shape
from .timing import measure_seconds

__all__ = ["training_step_seconds", "training_probe", "TRAIN_PROBE_PRECISIONS", "TRAIN_FORMAT"]

#: matmul formats of the probe (master weights stay fp32)
TRAIN_PROBE_PRECISIONS = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
TRAIN_FORMAT = "accelkit-train-probe"


def _module(torch, shape, n_layers):
    nn, F = torch.nn, torch.nn.functional
    d, hd, nh, nkv = int(shape.d_model), int(shape.head_dim), int(shape.n_heads), int(shape.n_kv_heads)
    ff, vocab = int(shape.ffn_dim), int(shape.vocab) if np.isfinite(shape.vocab) else 0
    gqa = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 5)
    gated = _mlp_matrices(shape) == 3

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv = nn.Linear(d, (nh + 2 * nkv) * hd, bias=False)
            self.out = nn.Linear(nh * hd, d, bias=False)
            self.up = nn.Linear(d, 2 * ff if gated else ff, bias=False)
            self.down = nn.Linear(ff, d, bias=False)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).split([nh * hd, nkv * hd, nkv * hd], dim=-1)
            q = q.view(b, t, nh, hd).transpose(1, 2)
            k = k.view(b, t, nkv, hd).transpose(1, 2)
            v = v.view(b, t, nkv, hd).transpose(1, 2)
            extra = {}
            if nkv != nh and gqa:
                extra = {"enable_gqa": True}
            elif nkv != nh:
                k, v = k.repeat_interleave(nh // nkv, dim=1), v.repeat_interleave(nh // nkv, dim=1)
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
            x = x + self.out(attn.transpose(1, 2).reshape(b, t, nh * hd))
            if gated:
                gate, up = self.up(self.norm2(x)).chunk(2, dim=-1)
                return x + self.down(F.silu(gate) * up)
            return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(max(vocab, 1), d)
            self.layers = nn.ModuleList(Layer() for _ in range(n_layers))
            self.norm = nn.RMSNorm(d)
            self.head = nn.Linear(d, vocab, bias=False) if vocab else None
            if self.head is not None and shape.tied_embeddings:
                self.head.weight = self.embed.weight  # GPT-2's output head is its input embedding

        def forward(self, tokens):
            x = self.embed(tokens)
            for layer in self.layers:
                x = layer(x)
            x = self.norm(x)
            return self.head(x) if self.head is not None else x

    return Decoder()


def _max_seq_len(model):
    """The preset's context length (``max_seq_len`` in data/models.csv), or None."""
    if not isinstance(model, str):
        return None
    from ..models import find_model

    value = find_model(model).get("max_seq_len")
    return int(value) if value == value and value else None


def _bytes_needed(shape, n_layers, micro_batch_size, seq_len):
    """fp32 weights, gradients and two Adam moments (16 bytes a parameter), the bf16 copies
    autocast keeps (2), and eager activations (about 60 bytes per token per d_model per layer:
    Korthikanti et al.'s 34 with nothing fused, plus fp32 norms) [bytes]."""
    vocab = shape.vocab if np.isfinite(shape.vocab) else 0
    d, hd = shape.d_model, shape.head_dim
    params = n_layers * (d * (shape.n_heads + 2 * shape.n_kv_heads) * hd + shape.n_heads * hd * d
                         + _mlp_matrices(shape) * d * shape.ffn_dim) + 2 * vocab * d
    tokens = micro_batch_size * seq_len
    return float(18 * params + 60 * tokens * d * n_layers + 8 * tokens * vocab)


def training_step_seconds(model, micro_batch_size=1, seq_len=2048, precision="bf16", device=None, n_layers=None,
                          memory_fraction=0.9, budget_s=2.0):
    """Median seconds of one micro-batch's forward + backward and of one AdamW step.

    Returns
    -------
    dict
        ``microbatch_s`` [s] (forward, loss and backward of ``micro_batch_size``
        sequences of ``seq_len`` tokens), ``optimizer_s`` [s] (one fused AdamW step
        over every parameter) and ``params`` [count, the module's].
    """
    torch = import_torch()
    device = resolve_device(device)
    precision = check_choice("precision", precision, list(TRAIN_PROBE_PRECISIONS))
    check_integer("micro_batch_size", micro_batch_size, low=1, what="a micro-batch size")
    check_integer("seq_len", seq_len, low=2, what="a sequence length")
    shape, layers = _shape(model, n_layers)
    longest = _max_seq_len(model)
    if longest and seq_len > longest:
        raise ValueError(f"seq_len={seq_len} is longer than {shape.name}'s {longest}-token context; use at most {longest}")
    try:
        _guard(_bytes_needed(shape, layers, micro_batch_size, seq_len), device, _check_fraction(memory_fraction),
               f"training {shape.name}")
    except _Skipped as exc:
        raise ValueError(f"{exc}; choose a smaller model, micro-batch or sequence, or n_layers") from None
    torch.manual_seed(0)
    net = _module(torch, shape, layers).to(device)
    params = sum(p.numel() for p in net.parameters())
    fused = {"fused": True} if device.type == "cuda" else {}
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4, **fused)
    vocab = int(shape.vocab) if np.isfinite(shape.vocab) else 0
    tokens = torch.randint(0, max(vocab, 1), (micro_batch_size, seq_len + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    dtype = getattr(torch, TRAIN_PROBE_PRECISIONS[precision])
    autocast = precision != "fp32"

    def micro_batch():
        with torch.autocast(device_type=device.type, dtype=dtype, enabled=autocast):
            out = net(inputs)
        loss = torch.nn.functional.cross_entropy(out.float().flatten(0, 1), targets.flatten()) if vocab \
            else out.float().square().mean()
        loss.backward()

    def step():
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    try:
        mb = measure_seconds(micro_batch, device, warmup=2, min_repeats=3, max_repeats=30, budget_s=budget_s)
        opt = measure_seconds(step, device, warmup=2, min_repeats=3, max_repeats=30, budget_s=budget_s / 4)
        return {"microbatch_s": float(np.median(mb)), "optimizer_s": float(np.median(opt)), "params": float(params)}
    finally:
        del net, optimizer
        _cleanup(torch, device)


def training_probe(model, device=None, micro_batch_sizes=(1, 4), seq_len=2048, accumulation_steps=16,
                   precision="bf16", catalog_device=None, n_layers=None, memory_fraction=0.9, budget_s=2.0):
    """Measured training steps of ``model`` on this device, next to the engine's projection.

    A step is ``accumulation_steps`` micro-batches and one optimizer step (the
    measured parts added up). Where ``catalog_device`` names a catalogue device and
    all layers were built, each row carries :func:`accelkit.projection.training` of
    the same layout on one device (micro-batch, sequence, global batch, ZeRO 0,
    ``recompute="none"``).

    Returns
    -------
    pandas.DataFrame
        ``model, micro_batch_size, seq_len, accumulation_steps, microbatch_s,
        optimizer_s, step_s`` [s], ``tokens_per_s``, ``mfu`` (PaLM's model FLOPs over
        the dense datasheet peak; NaN without a catalogue device), and
        ``projected_step_s`` (+ ``_low``/``_high``), ``projected_mfu``, ``ratio``
        (measured over projected step time).
    """
    from ..projection.training import model_flops_per_token

    if not isinstance(micro_batch_sizes, (list, tuple)) or not micro_batch_sizes:
        raise ValueError(f"micro_batch_sizes must be a non-empty list of whole numbers; got {micro_batch_sizes!r}")
    check_integer("accumulation_steps", accumulation_steps, low=1, what="a number of micro-batches per step")
    shape, _ = _shape(model, n_layers)
    rows = []
    for b in micro_batch_sizes:
        t = training_step_seconds(model, int(b), seq_len, precision, device, n_layers, memory_fraction, budget_s)
        step = accumulation_steps * t["microbatch_s"] + t["optimizer_s"]
        rows.append({"model": shape.name, "micro_batch_size": int(b), "seq_len": seq_len,
                     "accumulation_steps": accumulation_steps, "microbatch_s": t["microbatch_s"],
                     "optimizer_s": t["optimizer_s"], "step_s": step,
                     "tokens_per_s": accumulation_steps * b * seq_len / step, "params_built": t["params"]})
    frame = pd.DataFrame(rows)
    frame["precision"] = precision
    frame["mfu"] = np.nan
    if catalog_device is not None and n_layers is None:
        from ..projection import training

        for i, r in frame.iterrows():
            p = training(catalog_device, model, tokens=1e9, precision=precision, n_devices=1, seq_len=seq_len,
                         micro_batch_size=int(r["micro_batch_size"]), zero_stage=0, recompute="none",
                         global_batch_tokens=int(r["accumulation_steps"] * r["micro_batch_size"] * seq_len),
                         check_memory=False)
            frame.loc[i, ["projected_step_s", "projected_step_s_low", "projected_step_s_high", "projected_mfu"]] = [
                p["step_s"], p["step_s_low"], p["step_s_high"], p["mfu"]]
        frame["ratio"] = frame["step_s"] / frame["projected_step_s"]
        # the same tokens per step: MFU scales with the inverse of the step time
        frame["mfu"] = frame["projected_mfu"] / frame["ratio"]
    frame["model_flops_per_token"] = model_flops_per_token(shape, seq_len)
    return frame
