"""What a team needs from a software stack: :class:`Requirements`, validated on creation.

Reference: source article (seed 003), rule 4 -- framework support, special
operators, driver/CUDA versions, custom operators, team skills.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._validate import check_choice, check_number, suggest
from ..i18n import N_, _
from ..catalog import SOFTWARE_STACKS
from .vocabulary import (
    DEFAULT_WEIGHTS, DEPLOYMENTS, FRAMEWORK_LABELS, FRAMEWORKS, RUNTIME_LABELS, SERVING_RUNTIMES, STACK_LABELS,
    WEIGHT_KEYS,
)

__all__ = ["Requirements"]


#: "<deployment> deployment" in words
_DEPLOYMENT_PHRASES = {"cloud": N_("cloud deployment"), "on-prem": N_("on-prem deployment"),
                       "edge": N_("edge deployment")}


def _name_list(name, value, options):
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in (p.strip() for p in value.replace(";", ",").split(",")) if v]
    if not isinstance(value, (list, tuple, set, frozenset, pd.Index)):
        raise ValueError(f"{name} must be a list of names; got {value!r}")
    out = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"{name} must be a list of names (text); got {item!r}")
        item = item.strip() if options is None else check_choice(name, item, options)
        if item and item not in out:
            out.append(item)
    return out


def _flag(name, value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False; got {value!r}")


@dataclasses.dataclass
class Requirements:
    """What a team needs from a software stack.

    Attributes
    ----------
    frameworks : list of str
        Frameworks that must work, from :data:`FRAMEWORKS` (``pytorch``, ``tensorflow``,
        ``jax``, ``onnxruntime``; vendor runtimes ``openvino``, ``tensorrt``; serving
        engines ``vllm``, ``triton``; ``mindspore``, ``paddle``).
    special_operators : list of str
        Free-text names of special layers the models use (deformable conv, NMS, a
        custom attention ...). The table has no per-operator lists, so they are
        checked against each stack's operator-coverage row.
    custom_cuda_kernels : bool
        The team owns CUDA kernels that must keep working.
    serving_runtime : str
        ``any`` or a serving engine from :data:`SERVING_RUNTIMES` (vllm, triton, tgi).
    team_skills : list of str
        Stack ids the team has shipped on before (default ``["cuda"]``, the most
        common starting point and the source article's team).
    deployment : str
        ``cloud``, ``on-prem`` or ``edge``.
    needs_quantization : bool
        Deployment needs a quantisation toolchain (int8/int4/fp8 models).
    weights : dict
        Item group -> weight 0-100 (keys :data:`WEIGHT_KEYS`); missing keys take
        :data:`DEFAULT_WEIGHTS`. Only ratios matter.

    Raises ``ValueError`` naming the field for an unknown name (with the closest
    match) or a weight outside 0-100.
    """

    frameworks: list = dataclasses.field(default_factory=lambda: ["pytorch"])
    special_operators: list = dataclasses.field(default_factory=list)
    custom_cuda_kernels: bool = False
    serving_runtime: str = "any"
    team_skills: list = dataclasses.field(default_factory=lambda: ["cuda"])
    deployment: str = "cloud"
    needs_quantization: bool = False
    weights: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.frameworks = _name_list("frameworks", self.frameworks, FRAMEWORKS)
        self.special_operators = _name_list("special_operators", self.special_operators, None)
        self.team_skills = _name_list("team_skills", self.team_skills, SOFTWARE_STACKS)
        self.custom_cuda_kernels = _flag("custom_cuda_kernels", self.custom_cuda_kernels)
        self.needs_quantization = _flag("needs_quantization", self.needs_quantization)
        self.serving_runtime = check_choice("serving_runtime", self.serving_runtime, SERVING_RUNTIMES)
        self.deployment = check_choice("deployment", self.deployment, DEPLOYMENTS)
        weights = self.weights if self.weights is not None else {}
        if not isinstance(weights, dict):
            raise ValueError(f"weights must be a mapping of item group to weight (0-100); got {weights!r}")
        merged = dict(DEFAULT_WEIGHTS)
        for key, value in weights.items():
            key = check_choice("weights", str(key), WEIGHT_KEYS)
            check_number(f"weights[{key!r}]", value, low=0, high=100, expected="a weight from 0 to 100")
            merged[key] = float(value)
        if sum(merged.values()) <= 0:
            raise ValueError("weights: at least one weight must be > 0")
        self.weights = merged

    @classmethod
    def from_scenario(cls, scenario, **overrides):
        """Requirements from a :class:`accelkit.scenario.Scenario` plus explicit values.

        Taken from the scenario: ``frameworks``, ``custom_cuda_kernels``,
        ``deployment``; ``needs_quantization`` is true when its ``precision`` is
        fp8, int8 or int4; ``weights`` entries named ``ecosystem.<group>`` (e.g.
        ``ecosystem.team_skills``) set the weight of that group. ``overrides`` (any
        field; ``None`` keeps the value) are applied last -- the scenario has no
        field for team skills, serving runtime or special operators.
        """
        weights = {k.split(".", 1)[1]: v for k, v in (scenario.weights or {}).items()
                   if k.startswith("ecosystem.")}
        values = {
            "frameworks": list(scenario.frameworks),
            "custom_cuda_kernels": bool(scenario.custom_cuda_kernels),
            "deployment": scenario.deployment,
            "needs_quantization": scenario.precision in ("fp8", "int8", "int4"),
            "weights": weights,
        }
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            name = sorted(unknown)[0]
            hint = suggest(name, [f.name for f in dataclasses.fields(cls)])
            raise ValueError(f"Requirements has no field {name!r}" + (f"; did you mean {hint[0]!r}?" if hint else ""))
        values.update({k: v for k, v in overrides.items() if v is not None})
        if overrides.get("weights"):
            values["weights"] = {**weights, **overrides["weights"]}
        return cls(**values)

    def describe(self):
        """One line in words (titles, reports), in the language now in use."""
        parts = [" + ".join(FRAMEWORK_LABELS.get(f, f) for f in self.frameworks) or _("no framework")]
        if self.special_operators:
            parts.append(_("special ops {names}").format(names=", ".join(self.special_operators)))
        if self.custom_cuda_kernels:
            parts.append(_("own CUDA kernels"))
        if self.serving_runtime != "any":
            parts.append(_("serving on {runtime}").format(runtime=RUNTIME_LABELS[self.serving_runtime]))
        if self.needs_quantization:
            parts.append(_("quantised models"))
        skills = ", ".join(STACK_LABELS.get(s, s) for s in self.team_skills) or _("no stack")
        parts.append(_("team knows {stacks}").format(stacks=skills))
        parts.append(_(_DEPLOYMENT_PHRASES[self.deployment]) if self.deployment in _DEPLOYMENT_PHRASES
                     else f"{self.deployment} deployment")
        return "; ".join(parts)

