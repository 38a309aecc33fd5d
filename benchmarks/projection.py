"""Projection-engine speed: one scenario over the catalogue, the catalogue × 10,000 scenarios,
and the validation set."""

from __future__ import annotations

import numpy as np

from ._timing import best_of, report


def main():
    from accelkit import projection
    from accelkit.projection import validation

    projection.inference(None, "Llama-3.1 8B")  # warm the caches (catalogue, efficiencies)
    n_devices = len(projection.device_ceilings())
    rows = [
        report(f"inference(), one scenario x {n_devices} devices",
               best_of(lambda: projection.inference(None, "Llama-3.1 8B", batch_size=8), repeat=10), target=0.020),
        report("inference(), one device", best_of(lambda: projection.inference("H100 SXM", "Llama-3.1 8B",
                                                                                batch_size=8), repeat=10)),
        report(f"vision(), ResNet-50 layer by layer x {n_devices} devices",
               best_of(lambda: projection.vision(None, "ResNet-50", batch_size=8), repeat=10), target=0.020),
        report(f"recommender(), DLRM-v2 layer by layer x {n_devices} devices",
               best_of(lambda: projection.recommender(None, "DLRM-v2"), repeat=10), target=0.020),
        report(f"recommender_training(), DLRM-v2 on 8 x {n_devices} devices",
               best_of(lambda: projection.recommender_training(None, "DLRM-v2"), repeat=10), target=0.020),
        report(f"gnn(), R-GAT on 8 x {n_devices} devices",
               best_of(lambda: projection.gnn(None, n_devices=8), repeat=10), target=0.020),
        report(f"training(), one scenario x {n_devices} devices",
               best_of(lambda: projection.training(None, "Llama-2 7B", n_devices=8, check_memory=False), repeat=10),
               target=0.020),
    ]
    rng = np.random.default_rng(0)
    n = 10_000
    batch = rng.integers(1, 257, n)
    prompt = rng.integers(16, 8193, n)
    output = rng.integers(16, 2049, n)
    rows.append(report(f"inference_grid(): {n_devices} devices x {n:,} scenarios",
                       best_of(lambda: projection.inference_grid("Llama-3.1 8B", batch, prompt, output), repeat=5),
                       target=1.0))
    sizes = np.logspace(8, 12, 100)
    rows.append(report(f"tokens_per_second_grid(): 100 model sizes x {n_devices} devices",
                       best_of(lambda: _grid(sizes), repeat=3)))
    rows.append(report(f"accelkit validate: {len(validation.load_measured())} published cases",
                       best_of(validation.validate, repeat=1)))
    return rows


def _grid(sizes):
    from accelkit.projection.training_sweeps import tokens_per_second_grid

    return tokens_per_second_grid(sizes)
