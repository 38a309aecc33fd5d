"""Software ecosystem: the support matrix per stack, a requirements checklist, a local audit.

The source article's fourth rule: hardware is only as good as the software that
runs on it. One project slipped three months because the customer required Intel
OpenVINO while the team knew CUDA; another team bought AMD accelerators and found
its CUDA code had to be rewritten. Its must-check list: framework support
(TensorFlow/PyTorch versions), operator coverage (special layers), driver/CUDA
version requirements, and how hard custom operators are to write.

This module makes that check explicit and repeatable:

* :func:`load_ecosystem` reads ``data/ecosystem.csv`` -- one row per (software stack,
  criterion), a support ``level`` from a fixed vocabulary, the ``detail`` in words and
  the ``source_url`` it was read from (``unknown`` rows stay unknown, unsourced);
* :class:`Requirements` states what a team needs (frameworks, special operators,
  custom CUDA kernels it owns, serving runtime, team skills, deployment target);
* :func:`checklist` turns requirements into pass / risk / fail per (stack, item),
  each with its reason and source, and a weighted score per stack (0-100);
  :func:`stack_scores` and :func:`device_scores` summarise it per stack and per
  catalogue device (the decision engine filters and ranks on it);
* :func:`audit_local` reports what is installed on this machine (framework
  versions, CUDA / ROCm / cuDNN, driver, device capability) and what that means
  for each stack, without needing any of them to be present;
* :func:`to_markdown` and :func:`export` write the checklist as Markdown or CSV,
  never over an existing file unless asked.

Everything except :func:`audit_local` is pure (data in, frames out), imports no
widgets and no torch.

References
----------
Source article (seed 003), rule 4 "software-ecosystem compatibility traps" and
pitfall 2 "compatibility blind spot". Per-row sources: ``data/ecosystem.csv``.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata as _metadata
import importlib.util
import platform
import re
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ._validate import check_choice, check_number, suggest
from .catalog import SOFTWARE_STACKS, CatalogError, _read_rows, data_path
from .tables import Column, Schema, check_rows, problem, raise_problems
from .scenario import FRAMEWORKS as _SCENARIO_FRAMEWORKS

__all__ = [
    "STACKS",
    "CRITERIA",
    "LEVELS",
    "STATUSES",
    "FRAMEWORKS",
    "SERVING_RUNTIMES",
    "DEPLOYMENTS",
    "WEIGHT_KEYS",
    "DEFAULT_WEIGHTS",
    "STATUS_POINTS",
    "POINTS",
    "item_points",
    "STACK_LABELS",
    "CRITERION_LABELS",
    "Requirements",
    "load_ecosystem",
    "support_matrix",
    "checklist",
    "stack_scores",
    "device_scores",
    "audit_local",
    "audit_table",
    "to_markdown",
    "export",
    "free_paths",
]

# --- vocabularies ----------------------------------------------------------------------

#: criteria of data/ecosystem.csv, in display order
CRITERIA = (
    "pytorch", "tensorflow", "jax", "onnxruntime", "operator_coverage", "driver_toolkit",
    "custom_ops", "profiler", "quantization", "serving", "containers", "community",
)

#: support levels, best first. ``fork``: a vendor-maintained separate build of the
#: framework; ``plugin``: an extension/plugin/execution provider on top of the stock
#: release; ``limited``: works with documented gaps (inference only, experimental,
#: subset of ops, pinned versions); ``unknown``: no source found -- never guessed.
LEVELS = ("native", "plugin", "fork", "limited", "none", "unknown")

STATUSES = ("pass", "risk", "fail")

#: frameworks a team can require: the scenario's vocabulary (accelkit.scenario.FRAMEWORKS)
FRAMEWORKS = tuple(_SCENARIO_FRAMEWORKS)

SERVING_RUNTIMES = ("any", "vllm", "triton", "tgi")
DEPLOYMENTS = ("cloud", "on-prem", "edge")

#: score weights: one per checklist item group (a framework criterion of the CSV
#: counts under "frameworks"), 0-100 each; only their ratios matter
DEFAULT_WEIGHTS = {
    "frameworks": 25,
    "operator_coverage": 10,
    "driver_toolkit": 10,
    "custom_ops": 10,
    "team_skills": 10,
    "deployment": 10,
    "serving": 5,
    "quantization": 5,
    "profiler": 5,
    "containers": 5,
    "community": 5,
}
WEIGHT_KEYS = tuple(DEFAULT_WEIGHTS)

#: points of an item by status alone (items not judged on a level: team, deployment, vendor runtimes)
STATUS_POINTS = {"pass": 100.0, "risk": 50.0, "fail": 0.0}
#: points of an item by status and the level it was judged on; a stack's score is the
#: weighted mean of its items' points (see :func:`checklist`)
POINTS = {
    "pass": {"native": 100.0, "plugin": 85.0, "fork": 70.0, "limited": 70.0, "": 100.0},
    "risk": {"native": 60.0, "plugin": 60.0, "fork": 60.0, "limited": 50.0, "unknown": 40.0, "none": 40.0, "": 50.0},
    "fail": {level: 0.0 for level in ("native", "plugin", "fork", "limited", "unknown", "none", "")},
}

#: level -> status of an item the team *requires*, and of one that only helps
_REQUIRED_STATUS = {"native": "pass", "plugin": "pass", "fork": "risk", "limited": "risk", "none": "fail",
                    "unknown": "risk"}
_HELPFUL_STATUS = {**_REQUIRED_STATUS, "none": "risk"}

_LEVEL_WORDS = {
    "native": "built in",
    "plugin": "through a plugin / extension",
    "fork": "through a vendor's separate build",
    "limited": "limited",
    "none": "not supported",
    "unknown": "unknown (no source found; check before buying)",
    "": "not in the table",
}

STACK_LABELS = {
    "cuda": "NVIDIA CUDA",
    "rocm": "AMD ROCm",
    "xla": "Google TPU (XLA)",
    "gaudi": "Intel Gaudi",
    "cann": "Huawei Ascend CANN",
    "openvino": "Intel OpenVINO",
    "oneapi": "Intel oneAPI / XPU",
    "mps": "Apple MPS",
    "coreml": "Apple Core ML",
    "jetpack": "NVIDIA JetPack",
    "poplar": "Graphcore Poplar",
    "cambricon": "Cambricon MLU",
    "hailo": "Hailo",
    "edgetpu": "Coral Edge TPU",
    "neuron": "AWS Neuron",
}

CRITERION_LABELS = {
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "jax": "JAX",
    "onnxruntime": "ONNX Runtime",
    "operator_coverage": "operator coverage",
    "driver_toolkit": "driver / toolkit",
    "custom_ops": "custom ops",
    "profiler": "profiler",
    "quantization": "quantisation",
    "serving": "serving",
    "containers": "containers",
    "community": "community",
    "team_skills": "team skills",
    "deployment": "deployment",
    "frameworks": "frameworks",
}

FRAMEWORK_LABELS = {
    "pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "onnxruntime": "ONNX Runtime",
    "openvino": "OpenVINO", "tensorrt": "TensorRT", "vllm": "vLLM", "triton": "Triton",
    "mindspore": "MindSpore", "paddle": "PaddlePaddle",
}
RUNTIME_LABELS = {"any": "any", "vllm": "vLLM", "triton": "Triton", "tgi": "TGI"}
_RUNTIME_PATTERNS = {"vllm": r"\bvllm", "triton": r"\btriton\b", "tgi": r"\btgi\b|text-generation-inference"}

#: vendor runtimes tied to a stack: where they are at home (stack -> the row that says
#: so) and where they are reachable only indirectly (stack -> the row that says so)
_VENDOR_RUNTIMES = {
    "openvino": {"home": {"openvino": "driver_toolkit"}, "indirect": {"oneapi": "onnxruntime"}},
    "tensorrt": {"home": {"cuda": "quantization", "jetpack": "driver_toolkit"}, "indirect": {}},
}

#: where a team's CUDA kernels end up on each stack (the rest: rewrite, see _cuda_kernel_item)
_CUDA_KERNELS = {
    "cuda": ("pass", "your CUDA kernels run as they are"),
    "jetpack": ("pass", "JetPack includes the CUDA toolkit: recompile the kernels for the Jetson GPU"),
    "rocm": ("risk", "port the CUDA kernels to HIP with HIPIFY (hipify-clang / hipify-perl); the conversion is "
                     "not fully automatic, so budget manual fixes and re-tuning"),
    "cann": ("fail", "CUDA kernels do not run on Ascend: rewrite each one in Ascend C"),
}

#: a stack a team's skill carries over to, with the row that says why
_SKILL_CARRIES = {"jetpack": ("cuda", "custom_ops")}

#: stacks whose catalogue devices are not edge parts, but whose sourced rows say they
#: target edge devices (stack -> that row's criterion)
_EDGE_BY_SOURCE = {"openvino": "onnxruntime"}
#: stacks that cannot be installed on-prem, with the row that says so
_CLOUD_ONLY = {"xla": "driver_toolkit"}

#: a device listing both stacks is scored on the second: JetPack bundles CUDA, cuDNN
#: and TensorRT (jetpack/driver_toolkit row), and stock CUDA wheels do not apply there
_COMPONENT_OF = {"cuda": "jetpack"}

ECOSYSTEM_COLUMNS = ["stack", "criterion", "level", "detail", "source_url", "retrieved"]


# --- loading ---------------------------------------------------------------------------

ECOSYSTEM_SCHEMA = Schema("an ecosystem CSV", (
    Column("stack", required=True, choices=tuple(SOFTWARE_STACKS), lower=True, nonempty=True),
    Column("criterion", required=True, choices=tuple(CRITERIA), lower=True, nonempty=True),
    Column("level", required=True, choices=tuple(LEVELS), lower=True, nonempty=True),
    Column("detail", required=True, nonempty=True,
           empty_message="every row needs a detail in words (for unknown: what was searched)"),
    Column("source_url", required=True),
    Column("retrieved"),
), hint=" (retrieved optional)")


def _validate(raw, origin):
    frame, problems = check_rows(raw, ECOSYSTEM_SCHEMA, origin, CatalogError)
    sourced = frame["level"] != "unknown"
    no_url = sourced & ~frame["source_url"].str.match(r"https?://\S+$")
    for idx in frame.index[no_url]:
        problems.append(problem(origin, idx, "source_url", f"a {frame.at[idx, 'level']!r} row needs an http(s) "
                                 f"source URL, got {frame.at[idx, 'source_url']!r}; use level 'unknown' if no "
                                 "source was found"))
    dupes = frame.duplicated(["stack", "criterion"], keep="first")
    for idx in frame.index[dupes]:
        problems.append(problem(origin, idx, "criterion", f"({frame.at[idx, 'stack']}, "
                                 f"{frame.at[idx, 'criterion']}) appears twice"))
    known = frame[frame["stack"].isin(SOFTWARE_STACKS) & frame["criterion"].isin(CRITERIA)]
    for stack, rows in known.groupby("stack", sort=False):
        for criterion in sorted(set(CRITERIA) - set(rows["criterion"]), key=CRITERIA.index):
            problems.append(f"{origin}: stack {stack!r} has no row for criterion {criterion!r}; add one (level "
                            "'unknown' if nothing was found)")
    raise_problems(origin, problems, CatalogError)
    return frame[ECOSYSTEM_COLUMNS].reset_index(drop=True)


@lru_cache(maxsize=1)
def _builtin_ecosystem():
    origin = "ecosystem table"
    return _validate(_read_rows(data_path("ecosystem.csv"), origin), origin)


def load_ecosystem(path=None):
    """The software-stack support table, validated, one row per (stack, criterion).

    Parameters
    ----------
    path : str or Path, optional
        A CSV with columns ``stack, criterion, level, detail, source_url[, retrieved]``
        (read, never written). Default: the built-in ``data/ecosystem.csv``.

    Returns
    -------
    pandas.DataFrame
        Columns ``stack, criterion, level, detail, source_url, retrieved`` (text).
        ``stack`` ids are catalogue stack ids (:data:`accelkit.catalog.SOFTWARE_STACKS`),
        criteria from :data:`CRITERIA`, levels from :data:`LEVELS`.

    Raises
    ------
    CatalogError
        Naming the file, line and column: an unknown stack/criterion/level (with
        the closest match), a sourced row (any level but ``unknown``) without an
        http(s) ``source_url``, an empty detail, a duplicate (stack, criterion),
        or a stack missing a criterion.
    """
    if path is None:
        return _builtin_ecosystem().copy()
    origin = f"ecosystem file {Path(path).name}"
    return _validate(_read_rows(path, origin), origin)


def support_matrix(ecosystem=None, stacks=None):
    """Stacks × criteria table of levels (the heat-map's data)."""
    eco = load_ecosystem() if ecosystem is None else ecosystem
    matrix = eco.pivot(index="stack", columns="criterion", values="level")
    order = _stack_order(eco) if stacks is None else list(stacks)
    return matrix.reindex(index=order, columns=list(CRITERIA))


def _stack_order(eco):
    return list(dict.fromkeys(eco["stack"]))


# --- requirements ----------------------------------------------------------------------

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
        """One line in words (titles, reports)."""
        parts = [" + ".join(FRAMEWORK_LABELS.get(f, f) for f in self.frameworks) or "no framework"]
        if self.special_operators:
            parts.append("special ops " + ", ".join(self.special_operators))
        if self.custom_cuda_kernels:
            parts.append("own CUDA kernels")
        if self.serving_runtime != "any":
            parts.append(f"serving on {RUNTIME_LABELS[self.serving_runtime]}")
        if self.needs_quantization:
            parts.append("quantised models")
        skills = ", ".join(STACK_LABELS.get(s, s) for s in self.team_skills) or "no stack"
        parts.append(f"team knows {skills}")
        parts.append(f"{self.deployment} deployment")
        return "; ".join(parts)


# --- the checklist ---------------------------------------------------------------------

class _Table:
    """Fast lookups into the ecosystem table: (stack, criterion) -> level, detail, source."""

    def __init__(self, eco):
        self.cells = {(s, c): (lv, d, u) for s, c, lv, d, u in
                      zip(eco["stack"], eco["criterion"], eco["level"], eco["detail"], eco["source_url"])}

    def __call__(self, stack, criterion):
        return self.cells.get((stack, criterion), ("unknown", f"no {criterion} row in the ecosystem table", ""))


def _record(stack, item, group, required, status, reason, level="", source="", criterion=""):
    return {"stack": stack, "item": item, "group": group, "criterion": criterion, "required": required,
            "level": level, "status": status, "reason": reason, "source_url": source}


def _level_items(table, stacks, item, group, criterion, required, prefix):
    """An item judged on one criterion's level, for every stack."""
    rule = _REQUIRED_STATUS if required else _HELPFUL_STATUS
    out = []
    for stack in stacks:
        level, detail, url = table(stack, criterion)
        out.append(_record(stack, item, group, required, rule[level], f"{prefix}{_LEVEL_WORDS[level]}. {detail}",
                           level, url, criterion))
    return out


def _framework_items(table, stacks, framework):
    label = FRAMEWORK_LABELS.get(framework, framework)
    item = f"framework: {label}"
    if framework in ("pytorch", "tensorflow", "jax", "onnxruntime"):
        return _level_items(table, stacks, item, "frameworks", framework, True, f"{label} ")
    if framework in ("vllm", "triton"):
        return []  # a serving engine: judged by the serving item
    if framework not in _VENDOR_RUNTIMES:
        return [_record(s, item, "frameworks", True, "risk",
                        f"{label} is not covered by the ecosystem table: check its support for this stack yourself",
                        "unknown") for s in stacks]
    spec = _VENDOR_RUNTIMES[framework]
    home = ", ".join(STACK_LABELS[s] for s in spec["home"])
    home_url = table(*next(iter(spec["home"].items())))[2]
    out = []
    for stack in stacks:
        if stack in spec["home"]:
            _, detail, url = table(stack, spec["home"][stack])
            out.append(_record(stack, item, "frameworks", True, "pass", f"{label} is part of this stack. {detail}",
                               source=url, criterion=spec["home"][stack]))
        elif stack in spec["indirect"]:
            _, detail, url = table(stack, spec["indirect"][stack])
            out.append(_record(stack, item, "frameworks", True, "risk",
                               f"{label} is reachable only indirectly here; its home is {home}. {detail}",
                               source=url, criterion=spec["indirect"][stack]))
        else:
            out.append(_record(stack, item, "frameworks", True, "fail",
                               f"{label} belongs to {home}: code and models built on it must be ported to "
                               f"{STACK_LABELS.get(stack, stack)}'s own runtime (the source article's project "
                               "slipped three months over this)", source=home_url))
    return out


def _custom_kernel_items(table, stacks, owned):
    out = []
    for stack in stacks:
        level, detail, url = table(stack, "custom_ops")
        if not owned:
            # no kernels to port: any documented way to add a missing operator passes
            if level == "none":
                status, why = "risk", "No way to add a missing operator"
            elif level == "unknown":
                status, why = "risk", "No source on writing custom operators"
            else:
                status, why = "pass", "No CUDA kernels to port; a missing operator can be added"
            out.append(_record(stack, "custom operators (none owned)", "custom_ops", False, status,
                               f"{why}. {detail}", level, url, "custom_ops"))
            continue
        if stack in _CUDA_KERNELS:
            status, why = _CUDA_KERNELS[stack]
        elif level == "none":
            status, why = "fail", "CUDA kernels cannot run here and there is no custom-kernel mechanism"
        elif level == "unknown":
            status, why = "risk", "no source on custom kernels here; assume the CUDA kernels must be rewritten"
        else:
            status, why = "fail", ("CUDA kernels do not carry over: rewrite each one in this stack's kernel "
                                   "language (the source article's AMD team found all its CUDA code needed "
                                   "rewriting)")
        out.append(_record(stack, "custom CUDA kernels", "custom_ops", True, status,
                           f"{why[0].upper()}{why[1:]}. {detail}", level, url, "custom_ops"))
    return out


def _serving_items(table, stacks, runtimes):
    if not runtimes:
        return _level_items(table, stacks, "serving (any runtime)", "serving", "serving", False, "Serving ")
    out = []
    for runtime in runtimes:
        label = RUNTIME_LABELS[runtime]
        for stack in stacks:
            level, detail, url = table(stack, "serving")
            named = re.search(_RUNTIME_PATTERNS[runtime], detail, flags=re.I) is not None
            if level == "none":
                status, why = "fail", f"No serving runtime, so no {label}"
            elif level == "unknown":
                status, why = "risk", f"No source on serving here; {label} unconfirmed"
            elif named and level in ("native", "plugin"):
                status, why = "pass", f"{label} is named by the source"
            elif named:
                status, why = "risk", f"{label} is named, with limitations"
            else:
                status, why = "risk", f"The source names other runtimes, not {label}: check {label} yourself"
            out.append(_record(stack, f"serving: {label}", "serving", True, status, f"{why}. {detail}", level, url,
                               "serving"))
    return out


def _team_items(table, stacks, skills):
    known = ", ".join(STACK_LABELS.get(s, s) for s in skills) or "none"
    out = []
    for stack in stacks:
        label = STACK_LABELS.get(stack, stack)
        carry = _SKILL_CARRIES.get(stack)
        if stack in skills:
            out.append(_record(stack, "team skills", "team_skills", True, "pass",
                               f"The team has shipped on {label} before"))
        elif carry and carry[0] in skills:
            _, detail, url = table(stack, carry[1])
            out.append(_record(stack, "team skills", "team_skills", True, "pass",
                               f"The team knows {STACK_LABELS[carry[0]]}, which carries over. {detail}", source=url))
        else:
            out.append(_record(stack, "team skills", "team_skills", True, "risk",
                               f"The team has not used {label} (it knows: {known}); budget time to learn its tools "
                               "and versions -- the source article's OpenVINO project slipped three months"))
    return out


def _stack_devices(catalog):
    """Catalogue rows exploded to one row per (device, stack)."""
    stacks = catalog["software_stack"].fillna("").str.lower().str.split("|")
    frame = catalog.assign(stack=stacks).explode("stack")
    frame["stack"] = frame["stack"].str.strip()
    return frame[frame["stack"] != ""]


def _stack_segments(catalog):
    """stack -> {segment: [device names]} from the catalogue's software_stack column."""
    out = {}
    for name, segment, stacks in zip(catalog["name"], catalog["segment"], catalog["software_stack"].fillna("")):
        for stack in filter(None, (s.strip().lower() for s in str(stacks).split("|"))):
            out.setdefault(stack, {}).setdefault(segment, []).append(name)
    return out


def _some(by_segment, segments):
    names = [n for seg in segments for n in by_segment.get(seg, [])]
    return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")


@lru_cache(maxsize=1)
def _builtin_segments():
    from .catalog import load_catalog

    return _stack_segments(load_catalog(prices=False))


def _deployment_items(table, stacks, deployment, segments_by_stack):
    item = f"deployment: {deployment}"
    edge, datacenter = ("edge", "consumer"), ("datacenter", "workstation")
    out = []
    for stack in stacks:
        label = STACK_LABELS.get(stack, stack)
        by_segment = segments_by_stack.get(stack, {})
        segs = set(by_segment)
        url = ""
        if not segs:
            status, why = "risk", f"No {label} device in the catalogue to deploy"
        elif deployment == "edge":
            if segs & set(edge):
                status, why = "pass", f"Edge/on-device parts run {label} (catalogue: {_some(by_segment, edge)})"
            elif stack in _EDGE_BY_SOURCE:
                _, detail, url = table(stack, _EDGE_BY_SOURCE[stack])
                status, why = "pass", f"Targets edge devices. {detail}"
            else:
                status, why = "fail", (f"Datacenter only: every {label} device in the catalogue is a datacenter "
                                       f"part ({_some(by_segment, datacenter)})")
        elif deployment == "on-prem":
            if stack in _CLOUD_ONLY:
                _, detail, url = table(stack, _CLOUD_ONLY[stack])
                status, why = "fail", f"Cloud only, cannot be installed on-prem. {detail}"
            else:
                status, why = "pass", (f"Devices can be installed on-prem (catalogue: "
                                       f"{_some(by_segment, datacenter + edge)})")
        elif segs & set(datacenter):  # cloud
            status, why = "pass", (f"Datacenter parts run {label} (catalogue: {_some(by_segment, datacenter)}); "
                                   "which clouds rent them: data/cloud_prices.csv")
        else:
            status, why = "risk", (f"{label} runs only on edge/consumer devices (catalogue: {_some(by_segment, edge)});"
                                   " a cloud deployment would run on another stack")
        out.append(_record(stack, item, "deployment", True, status, why, source=url))
    return out


def _pick_stacks(stacks, eco):
    available = _stack_order(eco)
    if stacks is None:
        return available
    if isinstance(stacks, str):
        stacks = [stacks]
    picked = []
    for stack in stacks:
        stack = check_choice("stacks", stack, available)
        if stack not in picked:
            picked.append(stack)
    if not picked:
        raise ValueError("stacks must name at least one stack; got an empty list")
    return picked


def item_points(status, level):
    """Points of checklist items (0-100) from their status and the level they were judged on.

    Vectorised over two Series (or scalars). See :data:`POINTS`; an item not judged on a
    level (team skills, deployment, vendor runtimes) scores pass 100, risk 50, fail 0.
    """
    if isinstance(status, pd.Series):
        keys = pd.Series(list(zip(status, level)), index=status.index)
        return keys.map(lambda k: POINTS.get(k[0], {}).get(k[1], STATUS_POINTS[k[0]])).astype(float)
    return float(POINTS.get(status, {}).get(level, STATUS_POINTS[status]))


def checklist(requirements=None, stacks=None, *, ecosystem=None, catalog=None):
    """Pass / risk / fail per (stack, checklist item), with reasons, sources and a score.

    Parameters
    ----------
    requirements : Requirements, optional
        What the team needs (default: a PyTorch team that knows CUDA, deploying to
        the cloud).
    stacks : list of str, optional
        Stack ids to check (default: every stack in the table). Unknown ids raise
        ``ValueError`` with the closest match.
    ecosystem : DataFrame, optional
        :func:`load_ecosystem` output (default: the built-in table).
    catalog : DataFrame, optional
        The accelerator catalogue; its ``segment`` and ``software_stack`` columns
        decide the deployment item (default: the built-in catalogue).

    Returns
    -------
    pandas.DataFrame
        One row per (stack, item): ``stack, label, item, group, criterion, required,
        level, status, reason, source_url, weight, points, score``. ``level`` is the
        table's level the item was judged on (empty for team skills, deployment and
        vendor runtimes); ``score`` is the stack's score (0-100), repeated on each
        of its rows.

    Notes
    -----
    Items, in order (``group`` in brackets, ``*`` = always a requirement):

    * each required framework* [frameworks]: PyTorch, TensorFlow, JAX and ONNX
      Runtime are judged on their column; OpenVINO / TensorRT pass where they are
      at home (openvino; cuda, jetpack), are a risk where reachable indirectly
      (OpenVINO through ONNX Runtime on oneapi) and fail elsewhere (rewrite, the
      article's three-month slip); MindSpore / Paddle are not in the table: risk.
      vLLM / Triton are serving engines and join the serving item;
    * operator coverage [operator_coverage]; a requirement when special operators
      are named (one item listing them: the table has no per-operator lists);
    * driver / toolkit versions* [driver_toolkit];
    * custom operators [custom_ops]. With ``custom_cuda_kernels``: cuda pass,
      jetpack pass (CUDA toolkit included), rocm **risk** (HIP port with HIPIFY,
      not fully automatic), cann **fail** (Ascend C rewrite), other stacks fail
      (rewrite in their kernel language, or no mechanism at all; unknown: risk).
      Without: pass where any documented way to add an operator exists;
    * serving [serving]: a requirement when a runtime is named (serving_runtime or
      vLLM/Triton among frameworks): pass if the sourced row names it at level
      native/plugin, risk if named with limits or not named, fail if ``none``;
    * quantisation [quantization]; a requirement when ``needs_quantization``;
    * profiler, containers, community [their own groups]: help, never required;
    * team skills* [team_skills]: pass if the team has used the stack (CUDA skills
      carry to JetPack), else risk ("team has not used X");
    * deployment* [deployment]: edge fails for datacenter-only stacks (every
      catalogue device is a datacenter part; OpenVINO passes on its sourced edge
      row); on-prem fails for Cloud TPU (xla, sourced row); cloud is a risk for
      stacks with only edge/consumer devices.

    Level -> status of a **required** item: native, plugin -> pass; fork,
    limited, unknown -> risk; none -> fail. For an item that only helps, ``none``
    is a risk instead of a fail.

    Score: a stack's score is ``sum(weight × points) / sum(weight)`` over its
    items, 0-100. Points (:data:`POINTS`) by status and level:

    ======  ======  ======  ====  =======  =======  ====  ========
    status  native  plugin  fork  limited  unknown  none  no level
    ======  ======  ======  ====  =======  =======  ====  ========
    pass    100     85      70    70       --       --    100
    risk    60      60      60    50       40       40    50
    fail    0       0       0     0        0        0     0
    ======  ======  ======  ====  =======  =======  ====  ========

    (a plugin or fork works, but pins framework versions; "pass at limited" is a
    custom-operator path that exists but is hard.) A group's weight
    (:data:`DEFAULT_WEIGHTS` or ``requirements.weights``, 0-100 each; only ratios
    matter) is shared equally among its items, so naming three frameworks does not
    outweigh the other groups. Default weights: frameworks 25; operator coverage,
    driver/toolkit, custom ops, team skills, deployment 10 each; serving,
    quantisation, profiler, containers, community 5 each.
    The score ranks; ``n_fail`` (:func:`stack_scores`) filters: one fail means a
    stated requirement is not met.

    References
    ----------
    Source article (seed 003), rule 4 and pitfall 2; rows: ``data/ecosystem.csv``.
    """
    req = Requirements() if requirements is None else requirements
    if not isinstance(req, Requirements):
        raise ValueError(f"requirements must be an accelkit.ecosystem.Requirements; got {type(req).__name__}")
    eco = load_ecosystem() if ecosystem is None else ecosystem
    stacks = _pick_stacks(stacks, eco)
    segments = _builtin_segments() if catalog is None else _stack_segments(catalog)
    table = _Table(eco)
    records = []
    for framework in req.frameworks:
        records += _framework_items(table, stacks, framework)
    if req.special_operators:
        names = ", ".join(req.special_operators)
        records += _level_items(table, stacks, f"special operators: {names}", "operator_coverage",
                                "operator_coverage", True, f"Check {names} against this stack's support list; coverage ")
    else:
        records += _level_items(table, stacks, "operator coverage", "operator_coverage", "operator_coverage", False,
                                "Operator coverage ")
    records += _level_items(table, stacks, "driver / toolkit versions", "driver_toolkit", "driver_toolkit", True,
                            "Driver and toolkit ")
    records += _custom_kernel_items(table, stacks, req.custom_cuda_kernels)
    runtimes = ([req.serving_runtime] if req.serving_runtime != "any" else []) + \
        [f for f in req.frameworks if f in ("vllm", "triton")]
    records += _serving_items(table, stacks, list(dict.fromkeys(runtimes)))
    records += _level_items(table, stacks, "quantisation toolchain" + ("" if req.needs_quantization else " (helps)"),
                            "quantization", "quantization", req.needs_quantization, "Quantisation ")
    for criterion, item in (("profiler", "profiler"), ("containers", "container images"), ("community", "community")):
        records += _level_items(table, stacks, item, criterion, criterion, False, f"{item.capitalize()} ")
    records += _team_items(table, stacks, req.team_skills)
    records += _deployment_items(table, stacks, req.deployment, segments)

    frame = pd.DataFrame.from_records(records)
    order = {s: i for i, s in enumerate(stacks)}
    frame = frame.iloc[np.argsort(frame["stack"].map(order).to_numpy(), kind="stable")].reset_index(drop=True)
    frame.insert(1, "label", frame["stack"].map(lambda s: STACK_LABELS.get(s, s)))
    share = frame.groupby(["stack", "group"])["item"].transform("size")
    frame["weight"] = frame["group"].map(req.weights).astype(float) / share
    frame["points"] = item_points(frame["status"], frame["level"])
    weighted = (frame["weight"] * frame["points"]).groupby(frame["stack"]).sum()
    total = frame["weight"].groupby(frame["stack"]).sum()
    frame["score"] = frame["stack"].map(weighted / total)
    return frame


def stack_scores(requirements=None, stacks=None, *, ecosystem=None, catalog=None, checklist_frame=None):
    """One row per stack: score, counts of pass/risk/fail, worst item and its reason.

    Parameters as :func:`checklist`; ``checklist_frame`` reuses a computed checklist.

    Returns
    -------
    pandas.DataFrame
        Indexed by stack id: ``label, score`` (0-100), ``n_pass, n_risk, n_fail,
        worst_status, worst_item, worst_reason``; best first (score, then fewer
        fails, then fewer risks, then table order). The worst item is the one with
        the worst status that costs the most score (weight × (100 - points)).
    """
    frame = checklist(requirements, stacks, ecosystem=ecosystem, catalog=catalog) if checklist_frame is None \
        else checklist_frame
    order = {s: i for i, s in enumerate(dict.fromkeys(frame["stack"]))}
    rank = frame["status"].map({"fail": 0, "risk": 1, "pass": 2}).to_numpy()
    position = frame["stack"].map(order).to_numpy()
    # worst item first within each stack: status rank, then the score it costs (weight × lost points)
    lost = (frame["weight"] * (100.0 - frame["points"])).to_numpy()
    sorted_rows = np.lexsort((-lost, rank, position))
    worst = frame.iloc[sorted_rows].drop_duplicates("stack").set_index("stack")
    bad = worst["status"] != "pass"
    out = pd.DataFrame({
        "label": worst["label"],
        "score": worst["score"],
        "n_pass": 0, "n_risk": 0, "n_fail": 0,
        "worst_status": worst["status"],
        "worst_item": worst["item"].where(bad, ""),
        "worst_reason": (worst["item"] + ": " + worst["reason"]).where(bad, ""),
    })
    for status in STATUSES:
        out[f"n_{status}"] = (frame["status"] == status).groupby(frame["stack"]).sum().reindex(out.index).astype(int)
    out["_order"] = out.index.map(order)
    out = out.sort_values(["score", "n_fail", "n_risk", "_order"], ascending=[False, True, True, True])
    out.index.name = "stack"
    return out.drop(columns="_order")


def device_scores(catalog=None, requirements=None, *, ecosystem=None, scores=None):
    """Ecosystem score of every catalogue device: the best over its software stacks.

    Parameters
    ----------
    catalog : DataFrame, optional
        The accelerator catalogue (default :func:`accelkit.load_catalog`); its
        ``software_stack`` column lists stack ids separated by ``|``.
    requirements : Requirements, optional
    scores : DataFrame, optional
        :func:`stack_scores` output to reuse.

    Returns
    -------
    pandas.DataFrame
        Same index and order as ``catalog``: ``name, software_stack,
        ecosystem_stack`` (the stack the score comes from), ``ecosystem_score``
        (0-100; NaN where no listed stack is in the ecosystem table),
        ``ecosystem_fails, ecosystem_risks, ecosystem_reason``. Join it to the
        catalogue on the index (or ``name``).

    Notes
    -----
    A device listing several stacks runs any of them (Xeon: oneAPI or OpenVINO;
    Apple M4: MPS or Core ML), so it gets the best. Exception: a device listing
    both ``cuda`` and ``jetpack`` is scored on JetPack only -- JetPack bundles
    CUDA, cuDNN and TensorRT in one versioned image (jetpack/driver_toolkit row),
    and the stock CUDA wheels the cuda rows describe do not apply on a Jetson.
    """
    if catalog is None:
        from .catalog import load_catalog

        catalog = load_catalog()
    if scores is None:
        scores = stack_scores(requirements, ecosystem=ecosystem, catalog=catalog)
    pairs = _stack_devices(catalog)[["name", "stack"]].copy()
    pairs["_row"] = pairs.index
    listed = pairs.groupby("_row")["stack"].agg(set)
    dropped = pairs.apply(lambda r: _COMPONENT_OF.get(r["stack"]) in listed[r["_row"]], axis=1) \
        if len(pairs) else pd.Series(dtype=bool)
    pairs = pairs[~dropped.astype(bool)]
    pairs["_pos"] = pairs.groupby("_row").cumcount()
    joined = pairs.join(scores[["score", "n_fail", "n_risk", "worst_reason"]], on="stack")
    best = (joined.dropna(subset=["score"])
            .sort_values(["_row", "score", "n_fail", "_pos"], ascending=[True, False, True, True])
            .groupby("_row").head(1).set_index("_row"))
    out = pd.DataFrame({"name": catalog["name"], "software_stack": catalog["software_stack"].fillna("")},
                       index=catalog.index)
    out["ecosystem_stack"] = best["stack"].reindex(out.index).fillna("")
    out["ecosystem_score"] = best["score"].reindex(out.index).astype(float)
    out["ecosystem_fails"] = best["n_fail"].reindex(out.index)
    out["ecosystem_risks"] = best["n_risk"].reindex(out.index)
    reason = best["worst_reason"].reindex(out.index)
    no_stack = out["software_stack"].str.strip() == ""
    reason = reason.where(~(out["ecosystem_score"].isna() & no_stack), "no software_stack in the catalogue row")
    reason = reason.where(~(out["ecosystem_score"].isna() & ~no_stack),
                          "none of its stacks is in the ecosystem table")
    out["ecosystem_reason"] = reason.fillna("")
    return out


# --- local audit -----------------------------------------------------------------------

#: distribution names read with importlib.metadata (never imported for a version)
AUDIT_PACKAGES = {
    "torch": "torch",
    "torchvision": "torchvision",
    "tensorflow": "tensorflow",
    "jax": "jax",
    "jaxlib": "jaxlib",
    "onnxruntime": "onnxruntime",
    "onnxruntime-gpu": "onnxruntime-gpu",
    "onnxruntime-openvino": "onnxruntime-openvino",
    "openvino": "openvino",
    "tensorrt": "tensorrt",
    "coremltools": "coremltools",
    "intel_extension_for_pytorch": "intel-extension-for-pytorch",
    "torch_npu": "torch-npu",
    "torch_xla": "torch-xla",
    "libtpu": "libtpu",
    "habana_torch_plugin": "habana-torch-plugin",
    "poptorch": "poptorch",
    "torch_mlu": "torch-mlu",
    "hailort": "hailort",
    "pycoral": "pycoral",
    "tflite_runtime": "tflite-runtime",
    "mindspore": "mindspore",
    "torch_neuronx": "torch-neuronx",
    "vllm": "vllm",
    "nvidia-ml-py": "nvidia-ml-py",
}
NOT_INSTALLED = "not installed"

#: what a stack needs here, in words (package keys of AUDIT_PACKAGES)
_STACK_PACKAGES = {
    "xla": ("torch_xla", "libtpu", "jax"),
    "gaudi": ("habana_torch_plugin",),
    "cann": ("torch_npu", "mindspore"),
    "openvino": ("openvino", "onnxruntime-openvino"),
    "oneapi": ("intel_extension_for_pytorch",),
    "coreml": ("coremltools",),
    "poplar": ("poptorch",),
    "cambricon": ("torch_mlu",),
    "hailo": ("hailort",),
    "edgetpu": ("pycoral", "tflite_runtime"),
    "neuron": ("torch_neuronx",),
}


def _dist_version(dist):
    try:
        return _metadata.version(dist)
    except _metadata.PackageNotFoundError:
        return NOT_INSTALLED
    except Exception:  # a broken install must not break the audit
        return NOT_INSTALLED


def _torch_spec():
    """torch's import spec without importing it (None if absent or hidden)."""
    if "torch" in sys.modules and sys.modules["torch"] is None:
        return None
    try:
        return importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None


def _torch_build_static(spec):
    """``__version__``, ``cuda``, ``hip``, ``xpu`` from torch/version.py, read as text (no import)."""
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        path = Path(folder) / "version.py"
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        found = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                name, value = node.target.id, node.value
            else:
                continue
            if name in ("__version__", "cuda", "hip", "xpu"):
                try:
                    found[name] = ast.literal_eval(value)
                except ValueError:
                    pass
        return found
    return None


def _torch_facts(inspect_torch):
    """What torch was built for and what it sees; see :func:`audit_local`."""
    facts = {
        "installed": False, "how": None, "version": None, "cuda": None, "hip": None, "cudnn": None,
        "cuda_available": None, "device_count": None, "devices": [], "mps_available": None,
        "xpu_available": None, "error": None,
    }
    spec = _torch_spec()
    if spec is None:
        facts["error"] = NOT_INSTALLED
        return facts
    facts["installed"] = True
    if inspect_torch == "auto":
        inspect_torch = "torch" in sys.modules
    if not inspect_torch:
        static = _torch_build_static(spec)
        if static is None:
            facts["error"] = "torch/version.py not readable"
            return facts
        facts["how"] = "read torch/version.py (torch not imported)"
        facts["version"] = static.get("__version__")
        facts["cuda"], facts["hip"] = static.get("cuda"), static.get("hip")
        return facts
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken build
        facts["error"] = f"import failed: {type(exc).__name__}: {exc}"
        return facts
    facts["how"] = "imported torch"
    facts["version"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    facts["cuda"] = getattr(version, "cuda", None)
    facts["hip"] = getattr(version, "hip", None)
    try:
        facts["cuda_available"] = bool(torch.cuda.is_available())
        facts["device_count"] = int(torch.cuda.device_count()) if facts["cuda_available"] else 0
        for i in range(facts["device_count"]):
            major, minor = torch.cuda.get_device_capability(i)
            facts["devices"].append({"index": i, "name": torch.cuda.get_device_name(i),
                                     "capability": f"{major}.{minor}"})
        if facts["cuda"] or facts["hip"]:
            cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
            facts["cudnn"] = str(cudnn) if cudnn else None
    except Exception as exc:
        facts["error"] = f"device query failed: {type(exc).__name__}: {exc}"
    try:
        facts["mps_available"] = bool(torch.backends.mps.is_available())
    except Exception:
        facts["mps_available"] = False
    try:
        facts["xpu_available"] = bool(hasattr(torch, "xpu") and torch.xpu.is_available())
    except Exception:
        facts["xpu_available"] = False
    return facts


def _nvidia_driver(timeout_s):
    """Driver version and GPUs, from NVML or else ``nvidia-smi`` (the shared layer,
    :mod:`accelkit.monitor.nvml`)."""
    from .monitor import nvml

    facts = {"version": None, "cuda_driver": None, "gpus": [], "via": None, "error": None}
    pynvml, why = nvml.init()
    if pynvml is not None:
        try:
            facts["version"] = nvml.text(pynvml.nvmlSystemGetDriverVersion())
            try:
                cuda = pynvml.nvmlSystemGetCudaDriverVersion()
                facts["cuda_driver"] = f"{cuda // 1000}.{cuda % 1000 // 10}"
            except pynvml.NVMLError:
                pass
            for i in range(pynvml.nvmlDeviceGetCount()):
                handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                name = nvml.text(pynvml.nvmlDeviceGetName(handle))
                try:
                    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
                    capability = f"{major}.{minor}"
                except pynvml.NVMLError:
                    capability = None
                facts["gpus"].append({"index": i, "name": name, "capability": capability})
            facts["via"] = "NVML"
            return facts
        except pynvml.NVMLError as exc:
            facts["error"] = f"NVML: {exc}"
        finally:
            nvml.shutdown(pynvml)
    elif not why.startswith(nvml.LIBRARY_MISSING):
        facts["error"] = why
    out, smi_error = nvml.nvidia_smi(["--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                                     timeout_s)
    if out is None:
        facts["error"] = (facts["error"] + "; " if facts["error"] else "") + smi_error \
            if smi_error == "nvidia-smi not on PATH" else smi_error
        return facts
    for i, line in enumerate(filter(None, (l.strip() for l in out.splitlines()))):
        parts = [p.strip() for p in line.split(",")]
        name, version = parts[0], parts[1] if len(parts) > 1 else None
        facts["gpus"].append({"index": i, "name": name, "capability": parts[2] if len(parts) > 2 else None})
        facts["version"] = facts["version"] or version
    facts["via"] = "nvidia-smi"
    facts["error"] = None
    return facts


def _onnxruntime_providers(packages, probe):
    if not any(packages[k] != NOT_INSTALLED for k in ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino")):
        return None
    if not probe:
        return None
    try:
        import onnxruntime

        return list(onnxruntime.get_available_providers())
    except Exception:
        return None


def _rocm_version():
    for path in ("/opt/rocm/.info/version", "/opt/rocm/.info/version-dev"):
        try:
            return Path(path).read_text(encoding="utf-8").strip() or None
        except OSError:
            continue
    return None


def _gpu_list(gpus):
    return ", ".join(f"{g['name']} (compute capability {g['capability'] or '?'})" for g in gpus)


def _stack_meaning(stack, packages, torch_facts, driver, providers, system):
    """(status, reason) of one stack on this machine: ready / partly / not here."""
    t = torch_facts
    imported = t["how"] == "imported torch"
    if stack == "cuda":
        gpu = driver["version"]
        if t["cuda"] and imported:
            if t["cuda_available"]:
                return "ready", (f"torch {t['version']} built for CUDA {t['cuda']} sees {t['device_count']} GPU(s): "
                                 f"{_gpu_list(t['devices'])}")
            return "partly", (f"torch {t['version']} is a CUDA {t['cuda']} build but sees no GPU"
                              + (f" (NVIDIA driver {gpu})" if gpu else "; no NVIDIA driver found"))
        if t["cuda"]:
            if gpu and driver["gpus"]:
                return "ready", (f"torch {t['version']} is built for CUDA {t['cuda']} and NVIDIA driver {gpu} "
                                 f"shows {len(driver['gpus'])} GPU(s): {_gpu_list(driver['gpus'])} (torch not "
                                 "imported to confirm; chapter 08 measures it)")
            return "partly", f"torch {t['version']} is a CUDA {t['cuda']} build but no NVIDIA driver was found"
        if t["installed"] and t["version"] and not t["hip"]:
            return ("partly" if gpu else "not here"), (
                f"torch {t['version']} is a CPU-only build: the CUDA stack is not usable here yet"
                + (f"; NVIDIA driver {gpu} is present, so install a CUDA build of torch" if gpu else
                   "; no NVIDIA driver found either"))
        if gpu:
            return "partly", (f"NVIDIA driver {gpu} shows {len(driver['gpus'])} GPU(s) "
                              f"({_gpu_list(driver['gpus'])}) but no CUDA build of torch is installed")
        return "not here", "no NVIDIA driver and no CUDA build of torch"
    if stack == "rocm":
        if t["hip"] and imported:
            if t["cuda_available"]:
                return "ready", f"torch {t['version']} built for ROCm (HIP {t['hip']}) sees {t['device_count']} GPU(s)"
            return "partly", f"torch {t['version']} is a ROCm (HIP {t['hip']}) build but sees no GPU"
        if t["hip"]:
            return "partly", f"torch {t['version']} is a ROCm (HIP {t['hip']}) build (torch not imported to check a GPU)"
        rocm = _rocm_version()
        if rocm:
            return "partly", f"ROCm {rocm} is installed under /opt/rocm but torch is not a ROCm build"
        return "not here", "no ROCm build of torch and no /opt/rocm"
    if stack == "mps":
        if t["mps_available"]:
            return "ready", f"torch {t['version']} can use the Apple GPU (mps)"
        if system["platform"] == "darwin" and system["machine"] == "arm64" and t["installed"] and not imported:
            return "partly", f"torch {t['version']} on Apple silicon (torch not imported to confirm mps)"
        return "not here", ("torch does not report an MPS device" if imported else
                            "no Apple-silicon torch here") + f" (platform: {system['platform']})"
    if stack == "oneapi" and t["xpu_available"]:
        return "ready", f"torch {t['version']} sees an Intel GPU (xpu)"
    if stack == "jetpack":
        if Path("/etc/nv_tegra_release").exists():
            return "ready", "this is a Jetson (/etc/nv_tegra_release present)"
        return "not here", "not a Jetson (no /etc/nv_tegra_release)"
    keys = _STACK_PACKAGES.get(stack, ())
    found = [f"{k} {packages[k]}" for k in keys if packages.get(k, NOT_INSTALLED) != NOT_INSTALLED]
    if stack == "openvino" and providers and "OpenVINOExecutionProvider" in providers:
        found.append("ONNX Runtime OpenVINO EP")
    if found:
        extra = {"openvino": " (its CPU plugin runs on this machine's CPU)",
                 "coreml": f" (Core ML itself runs only on Apple OSes; platform: {system['platform']})",
                 "xla": " (TPUs are reachable only on Cloud TPU VMs)"}.get(stack, "")
        return "partly", "software installed: " + ", ".join(found) + extra + "; no device check was run"
    wanted = ", ".join(keys) if keys else "its vendor SDK"
    return "not here", f"not installed: {wanted}"


def audit_local(inspect_torch="auto", probe_onnxruntime=True, timeout_s=5.0):
    """What is installed on this machine, and what it means for each software stack.

    Versions come from package metadata (``importlib.metadata``), never from
    importing a heavy package. What torch was built for (``cuda``, ``hip``) is read
    from ``torch/version.py`` as text; torch itself is imported only when asked
    (or already imported), to read device availability, names, compute capability
    and the cuDNN version. The NVIDIA driver, GPU names and compute capabilities
    come from NVML (``pynvml``; :class:`pynvml.NVMLError` caught) or else
    ``nvidia-smi`` (run with a timeout). Nothing here needs a network.

    Parameters
    ----------
    inspect_torch : bool or "auto"
        ``True`` imports torch if installed (~2-4 s); ``False`` never does;
        ``"auto"`` (default) only uses a torch that is already imported.
    probe_onnxruntime : bool
        Import onnxruntime (if installed) to list its execution providers.
    timeout_s : float
        Limit for the ``nvidia-smi`` call [s].

    Returns
    -------
    dict
        Always the same keys, whatever is installed:

        * ``system``: ``python``, ``platform``, ``machine``;
        * ``packages``: every key of :data:`AUDIT_PACKAGES` -> version or ``"not installed"``;
        * ``onnxruntime_providers``: list, or ``None`` without onnxruntime;
        * ``torch``: ``installed, how`` (imported or read from version.py), ``version,
          cuda, hip, cudnn, cuda_available, device_count, devices`` (list of
          ``{index, name, capability}``), ``mps_available, xpu_available, error``
          (``None`` / ``[]`` where unknown or not inspected);
        * ``nvidia_driver``: ``version, cuda_driver, gpus, via, error``;
        * ``rocm``: ``version`` (``/opt/rocm``), ``hip`` (torch's build);
        * ``stacks``: every catalogue stack id -> ``{"status": "ready" | "partly" |
          "not here", "reason"}`` -- e.g. a CPU-only torch build means the CUDA stack
          is not usable here yet.
    """
    if inspect_torch not in (True, False, "auto"):
        raise ValueError(f"inspect_torch must be True, False or 'auto'; got {inspect_torch!r}")
    system = {"python": platform.python_version(), "platform": sys.platform, "machine": platform.machine()}
    packages = {key: _dist_version(dist) for key, dist in AUDIT_PACKAGES.items()}
    providers = _onnxruntime_providers(packages, probe_onnxruntime)
    torch_facts = _torch_facts(inspect_torch)
    driver = _nvidia_driver(timeout_s)
    rocm = {"version": _rocm_version(), "hip": torch_facts["hip"]}
    stacks = {}
    for stack in SOFTWARE_STACKS:
        status, reason = _stack_meaning(stack, packages, torch_facts, driver, providers, system)
        stacks[stack] = {"status": status, "reason": reason}
    return {
        "system": system,
        "packages": packages,
        "onnxruntime_providers": providers,
        "torch": torch_facts,
        "nvidia_driver": driver,
        "rocm": rocm,
        "stacks": stacks,
    }


def audit_table(audit=None):
    """The audit as two tidy frames: ``(facts, stacks)``.

    ``facts`` has columns ``section, item, value`` (text; ``—`` where unknown);
    ``stacks`` has ``stack, label, status, reason``.
    """
    audit = audit_local() if audit is None else audit

    def text(value):
        if value is None or value == []:
            return "—"
        if isinstance(value, list):
            return "; ".join(", ".join(f"{k} {v}" for k, v in d.items() if k != "index") if isinstance(d, dict)
                             else str(d) for d in value)
        return str(value)

    rows = [("system", k, text(v)) for k, v in audit["system"].items()]
    rows += [("package", k, text(v)) for k, v in audit["packages"].items()]
    rows.append(("onnxruntime", "providers", text(audit["onnxruntime_providers"])))
    rows += [("torch", k, text(v)) for k, v in audit["torch"].items()]
    rows += [("nvidia driver", k, text(v)) for k, v in audit["nvidia_driver"].items()]
    rows += [("rocm", k, text(v)) for k, v in audit["rocm"].items()]
    facts = pd.DataFrame(rows, columns=["section", "item", "value"])
    stacks = pd.DataFrame(
        [(s, STACK_LABELS.get(s, s), v["status"], v["reason"]) for s, v in audit["stacks"].items()],
        columns=["stack", "label", "status", "reason"],
    )
    return facts, stacks


# --- export ------------------------------------------------------------------------------

_SYMBOL = {"pass": "✅ pass", "risk": "⚠️ risk", "fail": "❌ fail"}


def _md_cell(text):
    text = str(text if text == text and text is not None else "")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def to_markdown(checklist_frame, title="Software-ecosystem checklist", requirements=None):
    """The checklist as a Markdown document: a score table, then one section per stack.

    Parameters
    ----------
    checklist_frame : DataFrame
        :func:`checklist` output.
    title : str
    requirements : Requirements, optional
        Described under the title when given.
    """
    _check_checklist(checklist_frame)
    scores = stack_scores(checklist_frame=checklist_frame)
    lines = [f"# {title}", ""]
    if requirements is not None:
        lines += [f"Requirements: {_md_cell(requirements.describe())}", ""]
    lines += ["Score 0-100: weighted mean of item points (pass 70-100 by support level, risk 40-60, fail 0; "
              "see accelkit.ecosystem.checklist).", "",
              "| stack | score | fail | risk | pass | worst item |", "|---|---:|---:|---:|---:|---|"]
    for stack, row in scores.iterrows():
        lines.append(f"| {_md_cell(row['label'])} | {row['score']:.1f} | {row['n_fail']} | {row['n_risk']} | "
                     f"{row['n_pass']} | {_md_cell(row['worst_item'])} |")
    for stack in scores.index:
        rows = checklist_frame[checklist_frame["stack"] == stack]
        lines += ["", f"## {_md_cell(STACK_LABELS.get(stack, stack))} ({stack}): {rows['score'].iloc[0]:.1f}", "",
                  "| item | status | level | reason | source |", "|---|---|---|---|---|"]
        for _, r in rows.iterrows():
            source = f"<{r['source_url']}>" if r["source_url"] else ""
            lines.append(f"| {_md_cell(r['item'])} | {_SYMBOL.get(r['status'], r['status'])} | "
                         f"{_md_cell(r['level']) or '—'} | {_md_cell(r['reason'])} | {source} |")
    return "\n".join(lines) + "\n"


def _check_checklist(frame):
    need = {"stack", "item", "status", "reason", "source_url", "score", "weight", "level"}
    if not isinstance(frame, pd.DataFrame) or need - set(frame.columns):
        missing = sorted(need - set(getattr(frame, "columns", [])))
        raise ValueError(f"checklist_frame must be accelkit.ecosystem.checklist() output; missing column(s) "
                         f"{', '.join(missing)}")


def export(checklist_frame, path, overwrite=False, requirements=None):
    """Write the checklist to ``path``: ``.csv`` (the tidy frame) or ``.md`` (Markdown).

    An existing file is never replaced unless ``overwrite=True``: it raises
    ``FileExistsError`` naming the file. The write is exclusive (no race with
    another writer). Returns the path written.
    """
    _check_checklist(checklist_frame)
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        text = checklist_frame.to_csv(index=False)
    elif suffix in (".md", ".markdown"):
        text = to_markdown(checklist_frame, requirements=requirements)
    else:
        raise ValueError(f"path must end in .csv or .md; got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "w" if overwrite else "x", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except FileExistsError:
        raise FileExistsError(f"{path} already exists; choose another name or pass overwrite=True") from None
    return path


def free_paths(folder, stem, suffixes=(".md", ".csv")):
    """Paths ``folder/stem<suffix>`` none of which exists yet: ``stem``, ``stem-2``, ``stem-3`` …

    One number serves every suffix, so a Markdown and a CSV export stay paired.
    """
    folder = Path(folder)
    n = 1
    while True:
        name = stem if n == 1 else f"{stem}-{n}"
        paths = [folder / f"{name}{s}" for s in suffixes]
        if not any(p.exists() for p in paths):
            return paths
        n += 1
