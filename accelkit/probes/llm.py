"""A transformer served on this device: decode step and prefill of a model's own shape, timed.

The matmul and bandwidth probes measure ceilings; this one measures what the
projection engine projects from them, on the machine at hand, so the engine can be
checked where a person sits (``accelkit probe --llm "Llama-2 7B"``):

* :func:`decode_step_seconds` -- one decode step of ``batch_size`` sequences whose
  context holds ``context_tokens``: per layer an RMSNorm, the fused QKV projection,
  the KV-cache write, attention over the cache (``torch.nn.functional.
  scaled_dot_product_attention``, grouped-query where the model has fewer KV heads),
  the output projection, the MLP (gated SwiGLU, or GELU where the preset's parameter
  count says two matrices); then the final norm and the output
  head. On CUDA the step is captured once in a CUDA graph and replayed, as gpt-fast
  and vLLM serve, so kernel-launch gaps are not counted as the GPU's time;
* :func:`prefill_seconds` -- the same layers over ``input_tokens`` prompt tokens with
  causal attention (time to first token, less tokenisation and sampling);
* :func:`llm_probe` -- both over a few batch sizes, next to the engine's projection
  (:func:`accelkit.projection.inference`, static batch) with its range.

Weights are random in the model's shape (``data/models.csv``): the time of a dense
matmul or a memory read does not depend on the values, and nothing is downloaded.
Rotary embeddings, sampling and the embedding lookup are left out (elementwise or a
gather of a few rows, well under 1 % of a step); mixtures of experts are refused.

Units: seconds, tokens, bytes.

References
----------
- H. Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models",
  arXiv:2307.09288 (2023), §2.2 and table 1: pre-normalisation with RMSNorm, SwiGLU,
  grouped-query attention -- the layer built here.
- PyTorch-labs, gpt-fast (github.com/pytorch-labs/gpt-fast): a static KV cache and
  CUDA-graph replay of the decode step.
- W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
  PagedAttention", SOSP 2023, arXiv:2309.06180: CUDA graphs for decode.
"""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd

from ..local.devices import import_torch, resolve_device
from .._validate import check_choice, check_integer
from ..projection.validation import geometric_mean_error  # noqa: F401 (one home; named here for the CLI)
from ._base import _check_fraction, _cleanup, _guard, _Skipped
from .timing import measure_seconds

__all__ = ["decode_step_seconds", "prefill_seconds", "llm_probe", "save_llm_results", "load_llm_results",
           "example_llm_results", "LLM_PRECISIONS", "LLM_FORMAT"]

#: storage and compute formats of the probe (weights, activations and KV cache alike)
LLM_PRECISIONS = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
_EPS = 1e-5
LLM_FORMAT = "accelkit-llm-probe"


def _shape(model, n_layers=None):
    from ..projection.shapes import resolve_model

    shape = resolve_model(model)
    if not (shape.is_decoder and shape.shaped) or not np.isfinite(shape.ffn_dim):
        raise ValueError(f"model {shape.name!r}: the LLM probe needs a decoder with known layers, width, heads and "
                         f"MLP width (data/models.csv columns n_layers, d_model, n_heads, d_ff)")
    if np.isfinite(shape.n_experts) and shape.n_experts > 1:
        raise ValueError(f"model {shape.name!r} is a mixture of experts; the LLM probe builds dense models only")
    layers = int(shape.n_layers) if n_layers is None else check_integer("n_layers", n_layers, low=1,
                                                                           what="a number of layers")
    return shape, layers


def _mlp_matrices(shape):
    """3 for a gated MLP (SwiGLU: gate, up and down projections; Llama, Mistral, Qwen), 2 for a
    plain one (GELU: up and down; GPT-2, GPT-3): whichever the preset's parameter count fits."""
    d, hd = shape.d_model, shape.head_dim
    attention = d * (shape.n_heads + 2 * shape.n_kv_heads) * hd + shape.n_heads * hd * d
    mlp = shape.body_params / shape.n_layers - attention
    return 2 if abs(mlp - 2 * d * shape.ffn_dim) < abs(mlp - 3 * d * shape.ffn_dim) else 3


class _Model:
    """Random weights of a dense decoder in ``shape``: per layer fused QKV, output, gate+up and down
    projections; a static KV cache for ``batch`` sequences of up to ``max_context`` tokens."""

    def __init__(self, torch, shape, n_layers, dtype, device, batch, max_context):
        self.torch, self.dtype = torch, dtype
        # scaled_dot_product_attention takes grouped-query attention natively from torch 2.5
        self.native_gqa = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 5)
        d, hd = int(shape.d_model), int(shape.head_dim)
        self.nh, self.nkv, self.hd = int(shape.n_heads), int(shape.n_kv_heads), hd
        ff, vocab = int(shape.ffn_dim), int(shape.vocab) if np.isfinite(shape.vocab) else 0
        gen = torch.Generator(device=device).manual_seed(0)

        def weight(rows, cols):
            w = torch.empty(rows, cols, device=device, dtype=dtype)
            return w.normal_(0.0, 0.02, generator=gen)

        qkv = (self.nh + 2 * self.nkv) * hd
        self.gated = _mlp_matrices(shape) == 3
        up = 2 * ff if self.gated else ff
        self.layers = [(weight(d, qkv), weight(self.nh * hd, d), weight(d, up), weight(ff, d))
                       for _ in range(n_layers)]
        self.head = weight(d, vocab) if vocab else None
        cache = (n_layers, batch, self.nkv, max_context, hd)
        self.k_cache = torch.zeros(cache, device=device, dtype=dtype)
        self.v_cache = torch.zeros(cache, device=device, dtype=dtype)

    @staticmethod
    def bytes_needed(shape, n_layers, element_bytes, batch, max_context):
        d, hd, ff = shape.d_model, shape.head_dim, shape.ffn_dim
        per_layer = d * (shape.n_heads + 2 * shape.n_kv_heads) * hd + shape.n_heads * hd * d + _mlp_matrices(shape) * d * ff
        vocab = shape.vocab if np.isfinite(shape.vocab) else 0
        kv = 2 * n_layers * batch * shape.n_kv_heads * max_context * hd
        return float((per_layer * n_layers + d * vocab + kv) * element_bytes)

    def _norm(self, x):
        x32 = x.float()
        return (x32 * self.torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + _EPS)).to(self.dtype)

    def forward(self, x, start, causal):
        """``x`` [batch, tokens, d_model] at positions ``start ..``; returns the last position's logits."""
        F = self.torch.nn.functional
        b, t, _ = x.shape
        end = start + t
        for i, (w_qkv, w_o, w_up, w_down) in enumerate(self.layers):
            qkv = self._norm(x) @ w_qkv
            q, k, v = qkv.split([self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], dim=-1)
            q = q.view(b, t, self.nh, self.hd).transpose(1, 2)
            self.k_cache[i, :, :, start:end] = k.view(b, t, self.nkv, self.hd).transpose(1, 2)
            self.v_cache[i, :, :, start:end] = v.view(b, t, self.nkv, self.hd).transpose(1, 2)
            keys, values = self.k_cache[i, :, :, :end], self.v_cache[i, :, :, :end]
            gqa = {}
            if self.nkv != self.nh and self.native_gqa:
                gqa = {"enable_gqa": True}  # each KV head serves nh/nkv query heads, read once
            elif self.nkv != self.nh:
                keys = keys.repeat_interleave(self.nh // self.nkv, dim=1)
                values = values.repeat_interleave(self.nh // self.nkv, dim=1)
            attn = F.scaled_dot_product_attention(q, keys, values, is_causal=causal and t > 1, **gqa)
            x = x + attn.transpose(1, 2).reshape(b, t, self.nh * self.hd) @ w_o
            if self.gated:
                gate, up = (self._norm(x) @ w_up).chunk(2, dim=-1)
                x = x + (F.silu(gate) * up) @ w_down
            else:
                x = x + F.gelu(self._norm(x) @ w_up, approximate="tanh") @ w_down
        last = self._norm(x[:, -1])
        return last @ self.head if self.head is not None else last


def _build(model, precision, device, batch_size, max_context, n_layers, memory_fraction):
    torch = import_torch()
    device = resolve_device(device)
    precision = check_choice("precision", precision, list(LLM_PRECISIONS))
    shape, layers = _shape(model, n_layers)
    dtype = getattr(torch, LLM_PRECISIONS[precision])
    need = _Model.bytes_needed(shape, layers, torch.tensor([], dtype=dtype).element_size(), batch_size, max_context)
    try:
        _guard(need, device, _check_fraction(memory_fraction), f"{shape.name} weights and KV cache")
    except _Skipped as exc:
        raise ValueError(f"{exc}; choose a smaller model, batch or context, or n_layers") from None
    return torch, device, shape, _Model(torch, shape, layers, dtype, device, batch_size, max_context)


def _median(times):
    return float(statistics.median(times))


def decode_step_seconds(model, batch_size=1, context_tokens=1024, precision="bf16", device=None, n_layers=None,
                        memory_fraction=0.9, budget_s=1.0, cuda_graph=True):
    """Median seconds of one decode step [s] (time per output token of every sequence in the batch).

    Parameters
    ----------
    model : str or dict
        A decoder preset of ``data/models.csv`` (dense) or a shape dict.
    batch_size : int
        Sequences decoded together.
    context_tokens : int
        Tokens already in each sequence's KV cache; the step attends over them plus one.
    precision : {"bf16", "fp16", "fp32"}
        Weights, activations and KV cache.
    n_layers : int, optional
        Build fewer layers than the model has (small tests); ``None``: all.
    cuda_graph : bool
        Replay the step from a CUDA graph (CUDA only), as serving engines do.
    """
    check_integer("batch_size", batch_size, low=1, what="a batch size")
    check_integer("context_tokens", context_tokens, low=1, what="a number of tokens in the KV cache")
    torch, device, _shape_, net = _build(model, precision, device, batch_size, context_tokens + 1, n_layers,
                                         memory_fraction)
    x = torch.zeros(batch_size, 1, int(_shape_.d_model), device=device, dtype=net.dtype).normal_()
    try:
        with torch.inference_mode():
            step = lambda: net.forward(x, context_tokens, causal=False)  # noqa: E731
            if device.type == "cuda" and cuda_graph:
                stream = torch.cuda.Stream(device)
                stream.wait_stream(torch.cuda.current_stream(device))
                with torch.cuda.stream(stream):
                    for _ in range(3):  # warm kernels and the allocator before capture
                        step()
                torch.cuda.current_stream(device).wait_stream(stream)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    step()
                run = graph.replay
            else:
                run = step
            return _median(measure_seconds(run, device, warmup=3, min_repeats=5, max_repeats=200, budget_s=budget_s))
    finally:
        del net
        _cleanup(torch, device)


def prefill_seconds(model, input_tokens=1024, batch_size=1, precision="bf16", device=None, n_layers=None,
                    memory_fraction=0.9, budget_s=1.0):
    """Median seconds to prefill ``batch_size`` prompts of ``input_tokens`` [s] (causal attention,
    KV cache written, logits of the last position)."""
    check_integer("input_tokens", input_tokens, low=1, what="a number of prompt tokens")
    check_integer("batch_size", batch_size, low=1, what="a batch size")
    torch, device, _shape_, net = _build(model, precision, device, batch_size, input_tokens, n_layers,
                                         memory_fraction)
    x = torch.zeros(batch_size, input_tokens, int(_shape_.d_model), device=device, dtype=net.dtype).normal_()
    try:
        with torch.inference_mode():
            return _median(measure_seconds(lambda: net.forward(x, 0, causal=True), device, warmup=2, min_repeats=3,
                                           max_repeats=50, budget_s=budget_s))
    finally:
        del net
        _cleanup(torch, device)


def llm_probe(model="Llama-2 7B", device=None, batch_sizes=(1, 8, 32), input_tokens=1024, output_tokens=256,
              precision="bf16", catalog_device=None, n_layers=None, memory_fraction=0.9, budget_s=1.0):
    """Measured decode and prefill of ``model`` on this device, next to the engine's projection.

    Decode is timed at the middle of the generation (context ``input_tokens +
    output_tokens / 2``), where the engine evaluates its static-batch time per
    output token, so the two are the same quantity; prefill is one prompt (batch 1).

    Returns
    -------
    pandas.DataFrame
        One row per measurement: ``metric`` (``tpot_s`` or ``ttft_s``), ``batch_size``,
        ``measured`` [s], and where ``catalog_device`` names a catalogue device (and
        all layers were built): ``projected``, ``projected_low``, ``projected_high``
        [s], ``ratio`` (projected/measured; above 1 the engine is too slow),
        ``inside_range``, and ``projected_kernels`` [s]: the projection without the
        serving engine's fixed per-step and per-prefill time (scheduler, sampling),
        which this probe does not spend -- the like-for-like figure.
    """
    if not isinstance(batch_sizes, (list, tuple)) or not batch_sizes:
        raise ValueError(f"batch_sizes must be a non-empty list of whole numbers; got {batch_sizes!r}")
    context = input_tokens + output_tokens // 2
    rows = [{"metric": "tpot_s", "batch_size": int(b),
             "measured": decode_step_seconds(model, b, context, precision, device, n_layers, memory_fraction, budget_s)}
            for b in batch_sizes]
    rows.append({"metric": "ttft_s", "batch_size": 1,
                 "measured": prefill_seconds(model, input_tokens, 1, precision, device, n_layers, memory_fraction,
                                             budget_s)})
    frame = pd.DataFrame(rows)
    frame.insert(0, "model", _shape(model)[0].name)
    frame["precision"], frame["input_tokens"], frame["output_tokens"] = precision, input_tokens, output_tokens
    frame["context_tokens"] = np.where(frame["metric"] == "tpot_s", context, input_tokens)
    if catalog_device is not None and n_layers is None:
        from ..projection import inference

        for i, r in frame.iterrows():
            args = dict(precision=precision, batch_size=int(r["batch_size"]), input_tokens=input_tokens,
                        output_tokens=output_tokens, schedule="static")
            p = inference(catalog_device, model, **args)
            # the same projection less the serving engine's fixed per-step and per-prefill time
            # (scheduler, sampling), which this probe does not have: its kernels alone
            bare = inference(catalog_device, model, decode_step_overhead_s=0.0, prefill_overhead_s=0.0, **args)
            frame.loc[i, ["projected", "projected_low", "projected_high", "projected_kernels"]] = [
                p[r["metric"]], p[f"{r['metric']}_low"], p[f"{r['metric']}_high"], bare[r["metric"]]]
        frame["ratio"] = frame["projected"] / frame["measured"]
        frame["ratio_kernels"] = frame["projected_kernels"] / frame["measured"]
        frame["inside_range"] = frame["measured"].between(frame["projected_low"], frame["projected_high"])
    return frame


# --- results files ------------------------------------------------------------------

def save_llm_results(frame, path, machine, overwrite=False, label=None, fmt=LLM_FORMAT, method=__name__):
    """Write :func:`llm_probe` results (or, with ``fmt``, the training probe's) as JSON
    (``format``, ``header`` with the machine, ``label`` and date, ``results`` rows); an
    existing file is never replaced unless ``overwrite=True``. Returns the path."""
    import json
    from pathlib import Path

    from .results import _now, _plain, _records

    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ValueError(f"path must end in .json; got {str(path)!r}")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; pass overwrite=True (accelkit probe --force) to replace it")
    header = {"machine": _plain(dict(machine)), "date": _now(), "method": method}
    if label is not None:
        header["label"] = str(label)
    text = json.dumps({"format": fmt, "version": 1, "header": header, "results": _records(frame)},
                      indent=1, allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w" if overwrite else "x", encoding="utf-8") as handle:
        handle.write(text + "\n")
    return path


def load_llm_results(path, fmt=LLM_FORMAT):
    """Read a file of :func:`save_llm_results` (``fmt``: the training probe's format for its
    files): a DataFrame, the header in ``attrs["header"]``."""
    import json
    from pathlib import Path

    path = Path(path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable LLM probe results file ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ValueError(f"{path}: expected format {fmt!r} (written by accelkit probe --llm or --train with --json)")
    frame = pd.DataFrame(payload.get("results", []))
    needed = {"metric", "batch_size", "measured", "input_tokens", "output_tokens"} if fmt == LLM_FORMAT else \
        {"micro_batch_size", "seq_len", "accumulation_steps", "step_s"}
    missing = ({"model", "precision"} | needed) - set(frame)
    if missing:
        raise ValueError(f"{path}: results rows lack {', '.join(sorted(missing))}")
    frame.attrs["header"], frame.attrs["source"] = payload.get("header", {}), str(path)
    return frame


def example_llm_results(kind="llm"):
    """Paths of the shipped probe measurements (``data/probe_results/llm/*.json``, or with
    ``kind="train"`` the training probe's ``data/probe_results/train/*.json``), sorted."""
    from ..catalog import data_path

    folder = data_path("probe_results") / check_choice("kind", kind, ["llm", "train"])
    return sorted(folder.glob("*.json")) if folder.exists() else []
