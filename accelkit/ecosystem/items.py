"""The checklist's items, one builder per item group: how each is judged on each stack.

Each builder returns records ``stack, item, group, criterion, required, level,
status, reason, source_url`` for every stack asked; :func:`accelkit.ecosystem.checklist`
collects them, weights and scores them (its docstring lists the rules in words).

Reference: source article (seed 003), rule 4 and pitfall 2; rows: ``data/ecosystem.csv``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .vocabulary import FRAMEWORK_LABELS, RUNTIME_LABELS, STACK_LABELS

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
    from ..catalog import load_catalog

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
