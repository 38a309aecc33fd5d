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

Modules, one job each: :mod:`~accelkit.ecosystem.vocabulary` (names, weights,
points, labels), :mod:`~accelkit.ecosystem.data` (loading and validating the CSV),
:mod:`~accelkit.ecosystem.requirements`, :mod:`~accelkit.ecosystem.items` (how each
checklist item is judged), :mod:`~accelkit.ecosystem.checklist`,
:mod:`~accelkit.ecosystem.scores`, :mod:`~accelkit.ecosystem.audit` (over the
machine facts of :mod:`accelkit.local`) and :mod:`~accelkit.ecosystem.export`.

References
----------
Source article (seed 003), rule 4 "software-ecosystem compatibility traps" and
pitfall 2 "compatibility blind spot". Per-row sources: ``data/ecosystem.csv``.
"""

from __future__ import annotations

from .audit import AUDIT_PACKAGES, NOT_INSTALLED, audit_local, audit_table
from .checklist import checklist, item_points, support_matrix
from .data import ECOSYSTEM_COLUMNS, load_ecosystem
from .export import export, free_paths, to_markdown
from .requirements import Requirements
from .scores import device_scores, stack_scores
from .vocabulary import (
    CRITERIA, CRITERION_LABELS, DEFAULT_WEIGHTS, DEPLOYMENTS, FRAMEWORK_LABELS, FRAMEWORKS, LEVELS, POINTS,
    RUNTIME_LABELS, SERVING_RUNTIMES, STACK_LABELS, STATUS_POINTS, STATUSES, WEIGHT_KEYS,
)

__all__ = [
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
    "FRAMEWORK_LABELS",
    "RUNTIME_LABELS",
    "ECOSYSTEM_COLUMNS",
    "AUDIT_PACKAGES",
    "NOT_INSTALLED",
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
