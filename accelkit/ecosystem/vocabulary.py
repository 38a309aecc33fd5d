"""The ecosystem's vocabulary: criteria, support levels, statuses, frameworks, weights, labels.

One place for the names the table (``data/ecosystem.csv``), the requirements, the
checklist and the UI share, and for the score's points per status and level
(see :func:`accelkit.ecosystem.checklist` for how they combine).

Reference: source article (seed 003), rule 4 "software-ecosystem compatibility
traps" -- its must-check list gives the criteria.
"""

from __future__ import annotations

from ..i18n import N_
from ..vocabulary import ECOSYSTEM_WEIGHTS
from ..vocabulary import FRAMEWORKS as _SCENARIO_FRAMEWORKS

__all__ = ["CRITERIA", "LEVELS", "STATUSES", "FRAMEWORKS", "SERVING_RUNTIMES", "DEPLOYMENTS", "DEFAULT_WEIGHTS",
           "WEIGHT_KEYS", "STATUS_POINTS", "POINTS", "STACK_LABELS", "CRITERION_LABELS", "FRAMEWORK_LABELS",
           "RUNTIME_LABELS", "STATUS_WORDS", "LEVEL_WORDS"]

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
#: statuses and levels as people read them (the values stay English: they are data)
STATUS_WORDS = {"pass": N_("pass"), "risk": N_("risk"), "fail": N_("fail")}
LEVEL_WORDS = {"native": N_("native"), "plugin": N_("plugin"), "fork": N_("fork"), "limited": N_("limited"),
               "none": N_("none"), "unknown": N_("unknown")}

#: frameworks a team can require: the scenario's vocabulary (accelkit.scenario.FRAMEWORKS)
FRAMEWORKS = tuple(_SCENARIO_FRAMEWORKS)

SERVING_RUNTIMES = ("any", "vllm", "triton", "tgi")
DEPLOYMENTS = ("cloud", "on-prem", "edge")

#: score weights per checklist item group (one home: :data:`accelkit.vocabulary.ECOSYSTEM_WEIGHTS`)
DEFAULT_WEIGHTS = ECOSYSTEM_WEIGHTS
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
    "operator_coverage": N_("operator coverage"),
    "driver_toolkit": N_("driver / toolkit"),
    "custom_ops": N_("custom ops"),
    "profiler": N_("profiler"),
    "quantization": N_("quantisation"),
    "serving": N_("serving"),
    "containers": N_("containers"),
    "community": N_("community"),
    "team_skills": N_("team skills"),
    "deployment": N_("deployment"),
    "frameworks": N_("frameworks"),
}

FRAMEWORK_LABELS = {
    "pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "onnxruntime": "ONNX Runtime",
    "openvino": "OpenVINO", "tensorrt": "TensorRT", "vllm": "vLLM", "triton": "Triton",
    "mindspore": "MindSpore", "paddle": "PaddlePaddle",
}
#: labels as shown: the words among them are marked for translation (translate with ``_()`` where shown)
RUNTIME_LABELS = {"any": N_("any"), "vllm": "vLLM", "triton": "Triton", "tgi": "TGI"}
