"""Shared vocabularies: the lists and default weights more than one layer names.

Below the scenario, the decision and the ecosystem checklist, so each can import them
without importing the others: the frameworks a team can require, the decision's criteria
and their default weights, and the ecosystem checklist's group weights.
"""

from __future__ import annotations

from .i18n import N_

__all__ = ["WORKLOADS", "TRAINING_WORKLOADS", "MATMUL_DTYPES", "FRAMEWORKS", "DECISION_CRITERIA", "DECISION_WEIGHTS", "ECOSYSTEM_WEIGHTS"]

#: what a scenario runs; the first two train (every weight, or adapters) and size by days
WORKLOADS = ("training", "fine-tuning", "inference")
TRAINING_WORKLOADS = WORKLOADS[:2]

#: matmul formats the probes measure and a probe result can calibrate
MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")

#: frameworks a team can require (``Scenario.frameworks``; the ecosystem checklist's criteria)
FRAMEWORKS = ("pytorch", "tensorflow", "jax", "onnxruntime", "openvino", "tensorrt", "vllm", "triton", "mindspore", "paddle")

#: criterion -> (what it measures, better when); what it measures is marked with ``N_`` and translated
#: where shown (the decision tab's weight tooltips)
DECISION_CRITERIA = {
    "time": (N_("margin over the time or latency target, counted up to the target headroom (right-sizing: "
                "speed nobody asked for earns nothing)"), "faster, up to the headroom"),
    "cost": (N_("what meeting the demand costs: the devices needed, rented, or bought as units with the energy of "
                "the hours used, per million units of work"), "cheaper"),
    "efficiency": (N_("the scenario's work (tokens, frames, user-item pairs) per joule at the power the device runs "
                      "at (its TDP, or a Jetson's power mode): the projected rate per watt"), "higher"),
    "ecosystem": (N_("software-stack fit for the scenario's frameworks and skills (0-100)"), "higher"),
    "headroom": (N_("usable memory over what the model needs on the allowed devices"), "more"),
}
DECISION_WEIGHTS = {"time": 1.0, "cost": 1.0, "efficiency": 0.5, "ecosystem": 1.0, "headroom": 0.5}

#: score weights: one per checklist item group (a framework criterion of the CSV
#: counts under "frameworks"), 0-100 each; only their ratios matter
ECOSYSTEM_WEIGHTS = {
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
