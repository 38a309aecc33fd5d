"""The shape of a transformer, as the projection engine needs it.

A model is a preset name from ``data/models.csv``, a preset row, or a dict with at
least ``params`` and, for the transformer terms, ``n_layers, d_model, n_heads``
(optional ``n_kv_heads, head_dim, ffn_dim, vocab, active_params, n_experts,
n_active_experts, tied_embeddings``). :func:`resolve_model` turns any of these into
a :class:`ModelShape` whose derived figures (matmul parameters, KV bytes per token,
attention width) every projection uses, so all of them count a model the same way.

References
----------
.. [1] J. Kaplan et al., "Scaling Laws for Neural Language Models",
   arXiv:2001.08361 (2020), table 1: forward FLOP per token ``2 N + 2 n_layer
   n_ctx d_attn`` with N the non-embedding parameters.
.. [2] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC21, arXiv:2104.04473, appendix: the output
   layer's ``2 · vocab · d_model`` FLOP per token.
.. [3] W. Kwon et al., vLLM, SOSP 2023, arXiv:2309.06180, §2.3 (KV cache bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["ModelShape", "resolve_model", "SHAPE_KEYS", "custom_shape", "scenario_model"]

#: keys a model dict may carry (``params`` required)
SHAPE_KEYS = ("name", "params", "active_params", "n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim",
              "ffn_dim", "vocab", "n_experts", "n_active_experts", "tied_embeddings", "kind",
              "kv_elements_per_token_layer")


def _num(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return v


@dataclass(frozen=True)
class ModelShape:
    """A transformer's sizes [counts]; NaN where unknown.

    ``params`` counts every resident parameter (all experts of a mixture of
    experts); ``active_params`` those one token uses.
    """

    name: str
    kind: str
    params: float
    active_params: float
    n_layers: float
    d_model: float
    n_heads: float
    n_kv_heads: float
    head_dim: float
    ffn_dim: float
    vocab: float
    n_experts: float
    n_active_experts: float
    tied_embeddings: bool
    kv_elements_per_token_layer: float

    # --- derived sizes ----------------------------------------------------------

    @property
    def shaped(self):
        """True where layers, width and heads are known (attention and KV terms apply)."""
        return bool(np.isfinite(self.n_layers) and np.isfinite(self.d_model) and np.isfinite(self.n_heads))

    @property
    def is_decoder(self):
        return self.kind in ("decoder", "moe-decoder")

    @property
    def attention_dim(self):
        """Query width ``n_heads · head_dim`` (= d_model for most models)."""
        return self.n_heads * self.head_dim

    @property
    def embedding_params(self):
        """Input-embedding parameters (a lookup, not a matmul); 0 when the vocabulary is unknown."""
        return self.vocab * self.d_model if np.isfinite(self.vocab) and np.isfinite(self.d_model) else 0.0

    @property
    def head_params(self):
        """Output-head parameters stored apart from the embedding (0 when tied or unknown)."""
        return 0.0 if self.tied_embeddings else self.embedding_params

    @property
    def body_params(self):
        """Parameters of the transformer layers (all experts) [count]."""
        return self.params - self.embedding_params - self.head_params

    @property
    def active_body_params(self):
        """Layer parameters one token multiplies through (active experts only) [count]."""
        return self.active_params - self.embedding_params - self.head_params

    @property
    def head_flops_per_token(self):
        """FLOP of the output head for one token that needs logits: ``2 · vocab · d_model`` ([2]_)."""
        return 2.0 * self.embedding_params

    @property
    def kv_elements_per_token(self):
        """KV-cache elements per token over all layers (``2 · n_kv_heads · head_dim · n_layers``,
        or the preset's override for latent attention); 0 for models without a cache."""
        if not (self.is_decoder and self.shaped):
            return 0.0
        per_layer = self.kv_elements_per_token_layer
        if not np.isfinite(per_layer):
            per_layer = 2.0 * self.n_kv_heads * self.head_dim
        return per_layer * self.n_layers

    @property
    def kv_shards(self):
        """How many ways the KV cache can split across tensor-parallel devices (KV heads;
        1 for a latent-attention cache, which every device keeps whole)."""
        if np.isfinite(self.kv_elements_per_token_layer):
            return 1.0
        return self.n_kv_heads

    @property
    def expert_params(self):
        """Parameters of one expert (0 for a dense model) [count]."""
        e, k = self.n_experts, self.n_active_experts
        if not (np.isfinite(e) and np.isfinite(k)) or e <= k:
            return 0.0
        return (self.params - self.active_params) / (e - k)

    @property
    def decode_attention_dim(self):
        """Width one decoded token's attention multiplies per cached token [count].

        ``n_heads · head_dim`` for ordinary attention. A latent cache (multi-head latent
        attention, DeepSeek-V2/V3) is decoded with the projections absorbed, as FlashMLA
        runs it: each of the ``n_heads`` heads scores and sums over the whole cached
        latent (576 = 512 + 64 rotary for DeepSeek-V3), so the width is ``n_heads`` × the
        cached elements per layer (the sum over values counts the 64 rotary elements it
        skips: +6 %) -- 4.5× the ``n_heads · head_dim`` of an unabsorbed head for
        DeepSeek-V3 (DeepSeek-AI 2024, DeepSeek-V2 paper §2.1.2-2.1.3, arXiv:2405.04434).
        """
        if self.is_decoder and np.isfinite(self.kv_elements_per_token_layer) and np.isfinite(self.n_heads):
            return self.n_heads * self.kv_elements_per_token_layer
        return self.attention_dim

    @property
    def routed_expert_params(self):
        """Parameters of all routed experts together (0 for a dense model) [count]."""
        return self.n_experts * self.expert_params if self.expert_params else 0.0

    def resident_params(self, expert_parallel=1.0):
        """Parameters one device of an expert-parallel group of ``expert_parallel`` holds
        [count]: every non-expert weight (attention, dense layers, shared experts,
        embeddings) plus its ``1/expert_parallel`` of the routed experts. ``params`` for 1."""
        ep = np.asarray(expert_parallel, dtype=float)
        return self.params - self.routed_expert_params * (1.0 - 1.0 / ep)

    def read_params(self, batch, expert_parallel=1.0):
        """Weights one decode step reads on one device [count]: all resident layer weights
        for a dense model; for a mixture of experts the shared part plus the experts a
        batch of ``batch`` tokens touches, ``E · (1 − (1 − k/E)^B)`` of them per layer
        (uniform routing), plus the output head. The embedding table is a lookup and is
        not read.

        With ``expert_parallel = G`` (``batch`` tokens on each of G devices, attention
        data parallel) a device holds ``E/G`` experts and the group's ``G · batch`` tokens
        touch ``(E/G) · (1 − (1 − k/E)^(G·B))`` of them.
        """
        batch = np.asarray(batch, dtype=float)
        lookup = 0.0 if self.tied_embeddings else self.embedding_params  # a tied table is read as the head
        p_e = self.expert_params
        if p_e == 0.0:
            return np.zeros(batch.shape) + (self.params - lookup)
        e, k = self.n_experts, self.n_active_experts
        ep = np.asarray(expert_parallel, dtype=float)
        shared = self.params - e * p_e - lookup
        touched = e / ep * (1.0 - (1.0 - k / e) ** (batch * ep))
        return shared + touched * p_e

    def describe(self):
        return {k: getattr(self, k) for k in ("name", "params", "active_params", "n_layers", "d_model", "n_heads",
                                               "n_kv_heads", "head_dim", "ffn_dim", "vocab")}


def _from_mapping(data, name_hint="custom"):
    from .._validate import check_positive

    if "params" not in data or data["params"] is None:
        raise ValueError("model must give params (a number of parameters > 0); a dict needs at least "
                         "params, n_layers, d_model, n_heads")
    params = float(check_positive("model['params']", data["params"], "a number of parameters"))
    get = lambda key: _num(data.get(key))  # noqa: E731
    for key in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "ffn_dim", "vocab"):
        value = get(key)
        if np.isfinite(value) and value <= 0:
            raise ValueError(f"model[{key!r}] must be a size > 0; got {data.get(key)!r}")
    n_heads = get("n_heads")
    d_model = get("d_model")
    head_dim = get("head_dim")
    if not np.isfinite(head_dim) and np.isfinite(d_model) and np.isfinite(n_heads):
        head_dim = d_model / n_heads
    n_kv = get("n_kv_heads")
    if not np.isfinite(n_kv):
        n_kv = n_heads
    if np.isfinite(n_kv) and np.isfinite(n_heads) and n_kv > n_heads:
        raise ValueError(f"model['n_kv_heads'] must be at most n_heads ({n_heads:g}); got {n_kv:g}")
    active = get("active_params")
    if not np.isfinite(active):
        active = params
    tied = data.get("tied_embeddings", False)
    if isinstance(tied, str):
        tied = tied.strip().lower() in ("true", "yes", "1")
    elif tied is None or (isinstance(tied, float) and np.isnan(tied)):
        tied = False
    kind = str(data.get("kind") or ("moe-decoder" if np.isfinite(get("n_experts")) else "decoder"))
    ffn = get("ffn_dim")
    if not np.isfinite(ffn):
        ffn = get("d_ff")
    return ModelShape(
        name=str(data.get("name") or name_hint), kind=kind, params=params, active_params=active,
        n_layers=get("n_layers"), d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv, head_dim=head_dim,
        ffn_dim=ffn, vocab=get("vocab") if "vocab" in data else get("vocab_size"),
        n_experts=get("n_experts"), n_active_experts=get("n_active_experts"), tied_embeddings=bool(tied),
        kv_elements_per_token_layer=get("kv_elements_per_token_layer"),
    )


#: where each kind of model that generates no tokens is projected (one model per kind)
_NOT_DECODED = {
    "encoder": ("an encoder: it reads a request in one pass and generates no tokens",
                "accelkit.projection.vision (accelkit project vision --model {name} --seq-len TOKENS)"),
    "cnn": ("an image model", "accelkit.projection.vision (accelkit project vision --model {name})"),
    "vit": ("an image model", "accelkit.projection.vision (accelkit project vision --model {name})"),
    "recommender": ("a recommender", "accelkit.projection.recommender (accelkit project recommender --model {name})"),
}


def not_a_decoder(shape):
    """Why a model that generates no tokens has no decode figures, and where it is projected."""
    what, where = _NOT_DECODED.get(shape.kind, (f"a {shape.kind} model", "its own projection"))
    return (f"model: {shape.name} is {what}; serving figures per output token are a decoder's. "
            f"Project it with {where.format(name=shape.name)}")


def resolve_model(model):
    """A :class:`ModelShape` from a preset name, a preset row (Series) or a dict.

    Raises
    ------
    ValueError
        (a :class:`~accelkit.catalog.CatalogError` for an unknown preset, listing the
        closest names) when the model cannot be resolved.
    """
    if isinstance(model, ModelShape):
        return model
    if isinstance(model, str):
        from ..models import find_model

        row = find_model(model)
        return _from_mapping(row.to_dict(), row["name"])
    if isinstance(model, pd.Series):
        return _from_mapping(model.to_dict())
    if isinstance(model, dict):
        return _from_mapping(model)
    raise ValueError(f"model must be a preset name (see accelkit.models.model_names()), or a dict with params, "
                     f"n_layers, d_model, n_heads; got {type(model).__name__}")


#: how far (as a ratio of parameter counts) the nearest preset decoder may be from a custom model
#: before its shape is no longer a sensible stand-in
CUSTOM_SHAPE_MAX_RATIO = 1.5


def custom_decoder(params, n_layers=None, d_model=None):
    """The shape of a decoder known by its parameter count: ``(model dict, words)``.

    With ``n_layers`` and ``d_model``: heads of 128 (64 where the width is not a
    multiple of 128), as many KV heads as attention heads (no grouped-query attention
    stated: the largest cache). Without them: the layers, width, heads, KV heads and
    vocabulary of the dense preset decoder nearest in parameter count (within
    ``CUSTOM_SHAPE_MAX_RATIO``), the parameter count kept as given -- so the KV cache
    and the attention cost are the preset's, never zero. The words say which.

    Raises
    ------
    accelkit.scenario.ScenarioError
        When only one of ``n_layers`` / ``d_model`` is given, or no preset is close
        enough to stand in (the message asks for layers and width).
    """
    from ..models import load_models
    from ..errors import ScenarioError

    params = float(params)
    if (n_layers is None) != (d_model is None):
        missing = "d_model" if d_model is None else "n_layers"
        raise ScenarioError(missing, f"a custom decoder with {'n_layers' if d_model is None else 'd_model'} given "
                                     f"needs {missing} too (or neither: the shape is then inferred from the nearest "
                                     "preset)")
    if n_layers is not None:
        d = int(d_model)
        head_dim = 128 if d % 128 == 0 else 64 if d % 64 == 0 else d
        heads = d // head_dim
        model = {"name": "custom", "kind": "decoder", "params": params, "n_layers": int(n_layers), "d_model": d,
                 "n_heads": heads, "n_kv_heads": heads, "head_dim": head_dim}
        from ..i18n import _

        words = _("shape given: {layers} layers, d_model {d_model}, {heads} heads of {head_dim} (KV heads = heads, "
                  "no grouped-query attention stated: the largest cache)").format(
            layers=int(n_layers), d_model=d, heads=heads, head_dim=head_dim)
        return model, words
    presets = load_models()
    dense = presets[presets["kind"].eq("decoder") & presets["n_layers"].notna() & presets["d_model"].notna()
                    & presets["n_heads"].notna() & presets["n_kv_heads"].notna()]
    distance = np.abs(np.log(dense["params"].astype(float) / params))
    row = dense.loc[distance.idxmin()]
    ratio = float(np.exp(distance.min()))
    if ratio > CUSTOM_SHAPE_MAX_RATIO:
        raise ScenarioError("params", f"no preset decoder is within {CUSTOM_SHAPE_MAX_RATIO:g}× of {params:.3g} "
                                      f"parameters to lend its shape (nearest: {row['name']}, {row['params']:.3g}); give "
                                      "n_layers and d_model of the custom model")
    model = {"name": "custom", "kind": "decoder", "params": params}
    for key in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size", "tied_embeddings"):
        value = row.get(key)
        if value is not None and not (isinstance(value, float) and np.isnan(value)):
            model[key] = value
    kv, heads = int(row["n_kv_heads"]), int(row["n_heads"])
    from ..i18n import _

    attention = _("GQA {kv} KV heads").format(kv=kv) if kv < heads else _("{heads} heads, no GQA").format(heads=heads)
    words = _("shape inferred from {model}: {layers} layers, d_model {d_model}, {attention}").format(
        model=row["name"], layers=int(row["n_layers"]), d_model=int(row["d_model"]), attention=attention)
    return model, words


def custom_shape(scenario):
    """``(model dict, words)`` of a custom decoder, or ``None`` where the scenario keeps a
    params-only model (a preset; training without ``n_layers`` / ``d_model``).

    Serving always needs a shape (the KV cache and the attention cost): the given
    ``n_layers`` / ``d_model``, else the nearest preset decoder's
    (:func:`~accelkit.projection.shapes.custom_decoder`), else a
    :class:`~accelkit.scenario.ScenarioError` asking for them.
    """
    if scenario.model.lower() != "custom":
        return None
    if not scenario.params:
        raise ValueError("params must be given (a number of parameters > 0) when model is 'custom'")
    layers, width = getattr(scenario, "n_layers", None), getattr(scenario, "d_model", None)
    from ..vocabulary import TRAINING_WORKLOADS

    if scenario.workload in TRAINING_WORKLOADS and layers is None and width is None:
        return None
    return custom_decoder(scenario.params, layers, width)


def scenario_model(scenario):
    """The model a scenario names, as :func:`resolve_model` takes it: a preset name, or a
    custom model's dict (its shape given or inferred, :func:`custom_shape`)."""
    if scenario.model.lower() == "custom":
        shaped = custom_shape(scenario)
        if shaped is not None:
            return shaped[0]
        return {"name": "custom", "params": float(scenario.params)}
    return scenario.model
