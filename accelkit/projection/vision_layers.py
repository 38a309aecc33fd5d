"""The layers of an image model or encoder: each GEMM's work and the feature maps it moves.

A whole-net roofline misses what decides a vision model's speed at small batch and in
an eager framework: dozens of small layers, each a kernel launch, and feature maps
that an unfused framework writes and reads again for every batch norm, activation and
residual add. :func:`layer_table` lists, per GEMM-like layer, its FLOP per sample, the
elements of its input and output feature maps, its weights, and the element-wise
layers that follow it; :mod:`accelkit.projection.vision` prices each row on a device
with a software stack (:mod:`accelkit.projection.stacks`).

* **ResNet-50 v1.5** from He et al., "Deep Residual Learning for Image Recognition",
  CVPR 2016, table 1 (50-layer column: a 7×7/2 stem, 3×3/2 max pool, bottleneck stages
  [1×1, 3×3, 1×1] × {3, 4, 6, 3} at 56, 28, 14, 7 with 64-512 / 256-2048 channels,
  projection shortcuts, global pool, 1000-way fc), with v1.5's stride on the 3×3 conv
  (NVIDIA DeepLearningExamples, ResNet-50 v1.5 README; torchvision's ``Bottleneck``).
  Its multiply-adds sum to 4.09 G (the ``GFLOPS 4.09`` of torchvision's weights page,
  which counts multiply-adds): a test checks it.
* **Encoders and ViTs** (BERT, ViT-B/16): per layer the QKV, output, and two MLP GEMMs
  (``3d², d², 2·d·d_ff`` multiply-adds per token) and the attention's ``QKᵀ`` and
  ``AV`` (``2·s²·d`` per sequence, both ways), Vaswani et al. 2017 §3; BERT's layers
  from Devlin et al. 2019 §3, ViT's 196 patches + class token from Dosovitskiy et al.
  2021 §3.1 (224² input, 16² patches).
* Recommenders (DLRM-v2): the embedding gather, bottom MLP, cross layers and top MLP
  of :mod:`accelkit.projection.recommender_layers`.
* Other presets (YOLOv8s, YOLOv8m) have no layer table here: :func:`layer_table`
  returns ``None`` and the whole-net roofline is used.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = ["layer_table", "resnet50_layers", "transformer_layers", "ACT_BYTES"]

#: bytes of one feature-map element per matmul precision (activations run in it)
ACT_BYTES = {"fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 1.0}

_COLUMNS = ["layer", "flops", "act_in", "act_out", "weights", "elementwise"]

#: ImageNet-1k's classes: the width of ResNet-50's classifier (He et al. 2016, table 1)
IMAGENET_CLASSES = 1000


def _conv(name, k, c_in, c_out, h_in, stride, elementwise):
    """One convolution: ``2·k²·c_in·c_out·h_out²`` FLOP, its maps and weights (per sample)."""
    h_out = h_in // stride
    return {"layer": name, "flops": 2.0 * k * k * c_in * c_out * h_out * h_out,
            "act_in": float(c_in * h_in * h_in), "act_out": float(c_out * h_out * h_out),
            "weights": float(k * k * c_in * c_out), "elementwise": elementwise}


@lru_cache(maxsize=1)
def resnet50_layers():
    """ResNet-50 v1.5 at 224×224, one row per convolution and the fc layer.

    ``elementwise`` counts the element-wise layers that follow the GEMM and touch its
    output (batch norm, ReLU, the residual add): a fused stack folds them into the
    convolution; an eager one runs each as its own kernel over the whole map.
    """
    rows = [_conv("conv1", 7, 3, 64, 224, 2, 2)]  # + BN, ReLU
    # 3×3/2 max pool: 112 -> 56, an element-wise pass over the stem's output
    rows.append({"layer": "maxpool", "flops": 0.0, "act_in": 64.0 * 112 * 112, "act_out": 64.0 * 56 * 56,
                 "weights": 0.0, "elementwise": 0})
    c_in, h = 64, 56
    for stage, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3)), start=2):
        out = 4 * width
        for b in range(blocks):
            stride = 2 if (b == 0 and stage > 2) else 1
            name = f"conv{stage}_{b + 1}"
            rows.append(_conv(f"{name}a", 1, c_in, width, h, 1, 2))
            rows.append(_conv(f"{name}b", 3, width, width, h, stride, 2))
            if b == 0:
                rows.append(_conv(f"{name}proj", 1, c_in, out, h, stride, 1))  # + BN
            rows.append(_conv(f"{name}c", 1, width, out, h // stride, 1, 3))  # + BN, add, ReLU
            c_in, h = out, h // stride
    rows.append({"layer": "avgpool", "flops": 0.0, "act_in": 2048.0 * 7 * 7, "act_out": 2048.0, "weights": 0.0,
                 "elementwise": 0})
    rows.append({"layer": "fc", "flops": 2.0 * 2048 * IMAGENET_CLASSES, "act_in": 2048.0,
                 "act_out": float(IMAGENET_CLASSES), "weights": 2048.0 * IMAGENET_CLASSES + IMAGENET_CLASSES,
                 "elementwise": 0})
    return pd.DataFrame(rows, columns=_COLUMNS)


def transformer_layers(n_layers, d_model, d_ff, n_heads, seq_len):
    """A bidirectional transformer's layers for one sequence of ``seq_len`` tokens.

    Per layer: the QKV projection (then the attention scores, softmax and ``AV``,
    ``2·s²·d`` multiply-adds, scores ``heads·s²`` elements), the output projection
    (+ residual add and layer norm), the MLP's two GEMMs (GELU between; + add and
    norm after).
    """
    s, d, f, h = float(seq_len), float(d_model), float(d_ff), float(n_heads)
    one = [
        {"layer": "qkv", "flops": 2.0 * s * d * 3 * d, "act_in": s * d, "act_out": 3 * s * d, "weights": 3 * d * d,
         "elementwise": 0},
        {"layer": "attention", "flops": 2.0 * 2.0 * s * s * d, "act_in": 3 * s * d + h * s * s,
         "act_out": s * d + h * s * s, "weights": 0.0, "elementwise": 1},  # softmax over the scores
        {"layer": "attn_out", "flops": 2.0 * s * d * d, "act_in": s * d, "act_out": s * d, "weights": d * d,
         "elementwise": 2},  # + add, layer norm
        {"layer": "mlp_in", "flops": 2.0 * s * d * f, "act_in": s * d, "act_out": s * f, "weights": d * f,
         "elementwise": 1},  # GELU
        {"layer": "mlp_out", "flops": 2.0 * s * f * d, "act_in": s * f, "act_out": s * d, "weights": f * d,
         "elementwise": 2},  # + add, layer norm
    ]
    rows = [dict(r, layer=f"{i}.{r['layer']}") for i in range(int(n_layers)) for r in one]
    return pd.DataFrame(rows, columns=_COLUMNS)


def layer_table(row, seq_len=None):
    """The layers of a preset row (``None`` where this module has no table for it).

    ``seq_len``: an encoder's tokens per sample (default the preset's ``max_seq_len``);
    a ViT's tokens come from its input size and 16-pixel patches.
    """
    name, kind = str(row.get("name", "")), str(row.get("kind", ""))
    if name == "ResNet-50":
        return resnet50_layers()
    if kind == "recommender":
        from .recommender_layers import recommender_layers, recommender_structure

        structure = recommender_structure(name)
        return None if structure is None else recommender_layers(structure)
    shape = [row.get(c, np.nan) for c in ("n_layers", "d_model", "d_ff", "n_heads")]
    if kind in ("encoder", "vit") and all(v == v and v for v in shape):
        body = None
        if kind == "vit":
            side = int(str(row.get("input_size") or "224x224").lower().split("x")[0])
            patches, d = (side // 16) ** 2, float(shape[1])
            seq_len = patches + 1
            # the 16×16 patch embedding: a 16×16/16 convolution from 3 channels to d
            body = pd.DataFrame([{"layer": "patch_embed", "flops": 2.0 * patches * 3 * 16 * 16 * d,
                                  "act_in": 3.0 * side * side, "act_out": patches * d, "weights": 3 * 16 * 16 * d,
                                  "elementwise": 1}], columns=_COLUMNS)
        elif seq_len is None:
            seq_len = row.get("max_seq_len", np.nan)
        if not (seq_len == seq_len and seq_len):
            return None
        layers = transformer_layers(*(float(v) for v in shape), float(seq_len))
        return layers if body is None else pd.concat([body, layers], ignore_index=True)
    return None
