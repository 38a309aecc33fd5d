"""Requirements -> pass / risk / fail per (stack, item), with reasons, sources and a score.

:func:`checklist` is the one scoring function; :func:`item_points` its points per
item; :func:`support_matrix` the stacks x criteria table of levels (the heat-map).

Reference: source article (seed 003), rule 4 and pitfall 2; rows: ``data/ecosystem.csv``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import check_choice
from ..i18n import N_, _
from .data import load_ecosystem
from .items import (
    _builtin_segments, _custom_kernel_items, _deployment_items, _framework_items, _level_items, _serving_items,
    _stack_segments, _Table, _team_items,
)
from .requirements import Requirements
from .vocabulary import CRITERIA, POINTS, STACK_LABELS, STATUS_POINTS

__all__ = ["support_matrix", "item_points", "checklist"]


def support_matrix(ecosystem=None, stacks=None):
    """Stacks × criteria table of levels (the heat-map's data)."""
    eco = load_ecosystem() if ecosystem is None else ecosystem
    matrix = eco.pivot(index="stack", columns="criterion", values="level")
    order = _stack_order(eco) if stacks is None else list(stacks)
    return matrix.reindex(index=order, columns=list(CRITERIA))


def _stack_order(eco):
    return list(dict.fromkeys(eco["stack"]))


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
        records += _level_items(table, stacks, _("special operators: {names}").format(names=names), "operator_coverage",
                                "operator_coverage", True,
                                _("Check {names} against this stack's support list; coverage {level}"), names=names)
    else:
        records += _level_items(table, stacks, _("operator coverage"), "operator_coverage", "operator_coverage", False,
                                _("Operator coverage {level}"))
    records += _level_items(table, stacks, _("driver / toolkit versions"), "driver_toolkit", "driver_toolkit", True,
                            _("Driver and toolkit {level}"))
    records += _custom_kernel_items(table, stacks, req.custom_cuda_kernels)
    runtimes = ([req.serving_runtime] if req.serving_runtime != "any" else []) + \
        [f for f in req.frameworks if f in ("vllm", "triton")]
    records += _serving_items(table, stacks, list(dict.fromkeys(runtimes)))
    records += _level_items(table, stacks, _("quantisation toolchain") if req.needs_quantization else
                            _("quantisation toolchain (helps)"),
                            "quantization", "quantization", req.needs_quantization, _("Quantisation {level}"))
    for criterion, item, sentence in (("profiler", N_("profiler"), N_("Profiler {level}")),
                                      ("containers", N_("container images"), N_("Container images {level}")),
                                      ("community", N_("community"), N_("Community {level}"))):
        records += _level_items(table, stacks, _(item), criterion, criterion, False, _(sentence))
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

