"""The checklist's items, one builder per item group: how each is judged on each stack.

Each builder returns records ``stack, item, group, criterion, required, level,
status, reason, source_url`` for every stack asked; :func:`accelkit.ecosystem.checklist`
collects them, weights and scores them (its docstring lists the rules in words).

Reference: source article (seed 003), rule 4 and pitfall 2; rows: ``data/ecosystem.csv``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..i18n import N_, _
from .vocabulary import FRAMEWORK_LABELS, RUNTIME_LABELS, STACK_LABELS

#: level -> status of an item the team *requires*, and of one that only helps
_REQUIRED_STATUS = {"native": "pass", "plugin": "pass", "fork": "risk", "limited": "risk", "none": "fail",
                    "unknown": "risk"}
_HELPFUL_STATUS = {**_REQUIRED_STATUS, "none": "risk"}

_LEVEL_WORDS = {
    "native": N_("built in"),
    "plugin": N_("through a plugin / extension"),
    "fork": N_("through a vendor's separate build"),
    "limited": N_("limited"),
    "none": N_("not supported"),
    "unknown": N_("unknown (no source found; check before buying)"),
    "": N_("not in the table"),
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
    "cuda": ("pass", N_("Your CUDA kernels run as they are")),
    "jetpack": ("pass", N_("JetPack includes the CUDA toolkit: recompile the kernels for the Jetson GPU")),
    "rocm": ("risk", N_("Port the CUDA kernels to HIP with HIPIFY (hipify-clang / hipify-perl); the conversion is "
                        "not fully automatic, so budget manual fixes and re-tuning")),
    "cann": ("fail", N_("CUDA kernels do not run on Ascend: rewrite each one in Ascend C")),
}

#: the deployments as people read them (the values stay English: they are data)
_DEPLOYMENT_WORDS = {"cloud": N_("cloud"), "on-prem": N_("on-prem"), "edge": N_("edge")}

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
        return self.cells.get((stack, criterion), ("unknown", _("no {criterion} row in the ecosystem table").format(
            criterion=criterion), ""))


def _record(stack, item, group, required, status, reason, level="", source="", criterion=""):
    return {"stack": stack, "item": item, "group": group, "criterion": criterion, "required": required,
            "level": level, "status": status, "reason": reason, "source_url": source}


def because(why, detail):
    """A reason in words followed by the table's detail (a sourced sentence, kept in its own words)."""
    return _("{why}. {detail}").format(why=why, detail=detail)


def _level_items(table, stacks, item, group, criterion, required, sentence, **words):
    """An item judged on one criterion's level, for every stack.

    ``sentence`` (translated) names the level as ``{level}``, with ``words`` for its other placeholders.
    """
    rule = _REQUIRED_STATUS if required else _HELPFUL_STATUS
    out = []
    for stack in stacks:
        level, detail, url = table(stack, criterion)
        why = sentence.format(level=_(_LEVEL_WORDS[level]), **words)
        out.append(_record(stack, item, group, required, rule[level], because(why, detail), level, url, criterion))
    return out


def _framework_items(table, stacks, framework):
    label = FRAMEWORK_LABELS.get(framework, framework)
    item = _("framework: {name}").format(name=label)
    if framework in ("pytorch", "tensorflow", "jax", "onnxruntime"):
        return _level_items(table, stacks, item, "frameworks", framework, True, _("{framework} {level}"),
                            framework=label)
    if framework in ("vllm", "triton"):
        return []  # a serving engine: judged by the serving item
    if framework not in _VENDOR_RUNTIMES:
        return [_record(s, item, "frameworks", True, "risk",
                        _("{framework} is not covered by the ecosystem table: check its support for this stack "
                          "yourself").format(framework=label),
                        "unknown") for s in stacks]
    spec = _VENDOR_RUNTIMES[framework]
    home = ", ".join(STACK_LABELS[s] for s in spec["home"])
    home_url = table(*next(iter(spec["home"].items())))[2]
    out = []
    for stack in stacks:
        if stack in spec["home"]:
            _level, detail, url = table(stack, spec["home"][stack])
            out.append(_record(stack, item, "frameworks", True, "pass",
                               because(_("{framework} is part of this stack").format(framework=label), detail),
                               source=url, criterion=spec["home"][stack]))
        elif stack in spec["indirect"]:
            _level, detail, url = table(stack, spec["indirect"][stack])
            out.append(_record(stack, item, "frameworks", True, "risk",
                               because(_("{framework} is reachable only indirectly here; its home is {home}").format(
                                   framework=label, home=home), detail),
                               source=url, criterion=spec["indirect"][stack]))
        else:
            out.append(_record(stack, item, "frameworks", True, "fail",
                               _("{framework} belongs to {home}: code and models built on it must be ported to "
                                 "{stack}'s own runtime (the source article's project slipped three months over "
                                 "this)").format(framework=label, home=home, stack=STACK_LABELS.get(stack, stack)),
                               source=home_url))
    return out


def _custom_kernel_items(table, stacks, owned):
    out = []
    for stack in stacks:
        level, detail, url = table(stack, "custom_ops")
        if not owned:
            # no kernels to port: any documented way to add a missing operator passes
            if level == "none":
                status, why = "risk", _("No way to add a missing operator")
            elif level == "unknown":
                status, why = "risk", _("No source on writing custom operators")
            else:
                status, why = "pass", _("No CUDA kernels to port; a missing operator can be added")
            out.append(_record(stack, _("custom operators (none owned)"), "custom_ops", False, status,
                               because(why, detail), level, url, "custom_ops"))
            continue
        if stack in _CUDA_KERNELS:
            status, why = _CUDA_KERNELS[stack]
            why = _(why)
        elif level == "none":
            status, why = "fail", _("CUDA kernels cannot run here and there is no custom-kernel mechanism")
        elif level == "unknown":
            status, why = "risk", _("No source on custom kernels here; assume the CUDA kernels must be rewritten")
        else:
            status, why = "fail", _("CUDA kernels do not carry over: rewrite each one in this stack's kernel "
                                    "language (the source article's AMD team found all its CUDA code needed "
                                    "rewriting)")
        out.append(_record(stack, _("custom CUDA kernels"), "custom_ops", True, status, because(why, detail), level,
                           url, "custom_ops"))
    return out


def _serving_items(table, stacks, runtimes):
    if not runtimes:
        return _level_items(table, stacks, _("serving (any runtime)"), "serving", "serving", False,
                            _("Serving {level}"))
    out = []
    for runtime in runtimes:
        label = RUNTIME_LABELS[runtime]
        for stack in stacks:
            level, detail, url = table(stack, "serving")
            named = re.search(_RUNTIME_PATTERNS[runtime], detail, flags=re.I) is not None
            if level == "none":
                status, why = "fail", _("No serving runtime, so no {runtime}").format(runtime=label)
            elif level == "unknown":
                status, why = "risk", _("No source on serving here; {runtime} unconfirmed").format(runtime=label)
            elif named and level in ("native", "plugin"):
                status, why = "pass", _("{runtime} is named by the source").format(runtime=label)
            elif named:
                status, why = "risk", _("{runtime} is named, with limitations").format(runtime=label)
            else:
                status, why = "risk", _("The source names other runtimes, not {runtime}: check {runtime} "
                                        "yourself").format(runtime=label)
            out.append(_record(stack, _("serving: {runtime}").format(runtime=label), "serving", True, status,
                               because(why, detail), level, url, "serving"))
    return out


def _team_items(table, stacks, skills):
    known = ", ".join(STACK_LABELS.get(s, s) for s in skills) or _("none")
    item = _("team skills")
    out = []
    for stack in stacks:
        label = STACK_LABELS.get(stack, stack)
        carry = _SKILL_CARRIES.get(stack)
        if stack in skills:
            out.append(_record(stack, item, "team_skills", True, "pass",
                               _("The team has shipped on {stack} before").format(stack=label)))
        elif carry and carry[0] in skills:
            _level, detail, url = table(stack, carry[1])
            out.append(_record(stack, item, "team_skills", True, "pass",
                               because(_("The team knows {stack}, which carries over").format(
                                   stack=STACK_LABELS[carry[0]]), detail), source=url))
        else:
            out.append(_record(stack, item, "team_skills", True, "risk",
                               _("The team has not used {stack} (it knows: {known}); budget time to learn its tools "
                                 "and versions -- the source article's OpenVINO project slipped three "
                                 "months").format(stack=label, known=known)))
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
    item = _("deployment: {deployment}").format(deployment=_(_DEPLOYMENT_WORDS.get(deployment, deployment)))
    edge, datacenter = ("edge", "consumer"), ("datacenter", "workstation")
    out = []
    for stack in stacks:
        label = STACK_LABELS.get(stack, stack)
        by_segment = segments_by_stack.get(stack, {})
        segs = set(by_segment)
        url = ""
        if not segs:
            status, why = "risk", _("No {stack} device in the catalogue to deploy").format(stack=label)
        elif deployment == "edge":
            if segs & set(edge):
                status, why = "pass", _("Edge/on-device parts run {stack} (catalogue: {devices})").format(
                    stack=label, devices=_some(by_segment, edge))
            elif stack in _EDGE_BY_SOURCE:
                _level, detail, url = table(stack, _EDGE_BY_SOURCE[stack])
                status, why = "pass", because(_("Targets edge devices"), detail)
            else:
                status, why = "fail", _("Datacenter only: every {stack} device in the catalogue is a datacenter part "
                                        "({devices})").format(stack=label, devices=_some(by_segment, datacenter))
        elif deployment == "on-prem":
            if stack in _CLOUD_ONLY:
                _level, detail, url = table(stack, _CLOUD_ONLY[stack])
                status, why = "fail", because(_("Cloud only, cannot be installed on-prem"), detail)
            else:
                status, why = "pass", _("Devices can be installed on-prem (catalogue: {devices})").format(
                    devices=_some(by_segment, datacenter + edge))
        elif segs & set(datacenter):  # cloud
            status, why = "pass", _("Datacenter parts run {stack} (catalogue: {devices}); which clouds rent them: "
                                    "data/cloud_prices.csv").format(stack=label, devices=_some(by_segment, datacenter))
        else:
            status, why = "risk", _("{stack} runs only on edge/consumer devices (catalogue: {devices}); a cloud "
                                    "deployment would run on another stack").format(
                stack=label, devices=_some(by_segment, edge))
        out.append(_record(stack, item, "deployment", True, status, why, source=url))
    return out
