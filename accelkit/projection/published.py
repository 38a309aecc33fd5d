"""Accelerators whose weights live on the chip, taken at their vendor's published rates.

A Hailo-8 or a Coral Edge TPU has no external memory for the engine's roofline to
price, and its compiler maps each network onto the chip's own memories and compute in a
way no datasheet figure describes; the vendor does publish, model by model, the frames
per second it reaches. ``data/published_throughput.csv`` holds those figures (Hailo Model
Zoo tables, Coral's Edge TPU benchmarks page), each with its source and quote;
:func:`published_rate` picks the one for a model, precision and batch, and
:func:`~accelkit.projection.vision.vision` uses it for such a device. A model the
vendor does not list stays unknown on that device: never a pass.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..catalog import CatalogError, data_path
from ..tables import Column, Schema, read_table

__all__ = ["load_published", "published_rate", "published_devices"]

PUBLISHED_SCHEMA = Schema("the published throughput CSV", (
    Column("device", required=True, nonempty=True), Column("model", required=True, nonempty=True),
    Column("precision", required=True, nonempty=True),
    Column("batch_size", "number", required=True, nonempty=True, expected="a batch size"),
    Column("input_size", required=True),
    Column("frames_per_s", "number", required=True, nonempty=True, expected="frames per second > 0"),
    Column("framework", required=True), Column("source_url", required=True, nonempty=True),
    Column("quote", required=True, nonempty=True), Column("notes", required=True),
))


@lru_cache(maxsize=2)
def _load(path):
    return read_table(path, PUBLISHED_SCHEMA, Path(path).name, CatalogError)


def load_published(path=None):
    """The published rates (a copy): ``device, model, precision, batch_size, frames_per_s, source_url, ...``."""
    return _load(data_path("published_throughput.csv") if path is None else path).copy()


def published_devices(path=None):
    """Names of the devices projected from published rates only."""
    return set(_load(data_path("published_throughput.csv") if path is None else path)["device"])


def published_rate(device, model, precision, batch_size, path=None):
    """``(frames_per_s, row)`` of the published figure for ``model`` at ``precision`` on
    ``device`` -- at the largest published batch not above ``batch_size`` (else the
    smallest published one) -- or ``None`` where the vendor lists no such figure.

    On a streaming dataflow chip (Hailo) the rate at batch 1 is the pipelined throughput:
    frames leave at that rate while several are in flight, so ``batch / frames_per_s`` is
    the time a batch occupies the chip, a lower bound of one frame's latency.
    """
    table = _load(data_path("published_throughput.csv") if path is None else path)
    rows = table[(table["device"] == device) & (table["model"] == model) & (table["precision"] == precision)]
    if rows.empty:
        return None
    batches = rows["batch_size"].to_numpy(dtype=float)
    below = batches <= batch_size
    pick = rows.iloc[int(np.argmax(np.where(below, batches, -np.inf)))] if below.any() else \
        rows.iloc[int(np.argmin(batches))]
    return float(pick["frames_per_s"]), pick.to_dict()
