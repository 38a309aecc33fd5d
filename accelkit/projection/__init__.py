"""The projection engine: per-device performance, from achievable ceilings.

Every time, throughput, memory traffic and achieved FLOP/s that accelkit shows is
projected here: a small physical model (roofline of prefill and decode,
tensor-parallel all-reduces over the device's link, per-step overheads, pipeline
bubble, recomputation, data-parallel gradient exchange) evaluated on *achievable*
ceilings -- datasheet × a published efficiency of that device (or its architecture
or vendor, with their spread as the range), or the person's own probe. Each figure
comes with ``_low``/``_high`` and the source of its efficiency. The model is checked
in the open against ``data/validation/measured.csv`` by ``accelkit validate``
(:mod:`accelkit.projection.validation`).

Public functions: :func:`inference`, :func:`training`, :func:`matmul_flops`,
:func:`memory_bandwidth`, :func:`allreduce_bus_bandwidth`, :func:`device_ceilings`,
:func:`vision`, :func:`recommender`, :func:`recommender_training`, :func:`gnn`.
"""

from .ceilings import (COMPUTE_PRECISIONS, allreduce_bus_bandwidth, allreduce_seconds, device_ceilings,
                       matmul_flops, memory_bandwidth)
from .constants import constants, constants_table
from .efficiency import efficiency_table, load_efficiency
from .inference import inference, inference_grid
from .precisions import PRECISION_MODES, mode_words
from .shapes import ModelShape, resolve_model
from .layouts import step_sequences, training_layouts, training_search
from .training import model_flops_per_token, training, training_memory_bytes
from .training_sweeps import training_sweep
from .vision import frame_flops, vision, vision_seconds
from .recommender import recommender
from .recommender_training import recommender_training
from .gnn import gnn

__all__ = ["inference", "inference_grid", "training", "training_sweep", "training_search", "training_layouts",
           "training_memory_bytes", "step_sequences", "matmul_flops", "memory_bandwidth", "allreduce_bus_bandwidth",
           "allreduce_seconds", "device_ceilings", "efficiency_table", "load_efficiency", "constants",
           "constants_table", "resolve_model", "ModelShape", "model_flops_per_token", "PRECISION_MODES",
           "COMPUTE_PRECISIONS", "mode_words", "vision",
           "vision_seconds", "frame_flops", "recommender", "recommender_training", "gnn"]
