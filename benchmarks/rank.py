"""Decision engine speed, with the configuration search: one ranking per workload kind, a
100 x 100 scenario grid, the way forward, the sensitivity scan and the rank-stability draws."""

from __future__ import annotations

import numpy as np

from ._timing import best_of, report


def main():
    import accelkit
    from accelkit import select
    from accelkit.scenario import Scenario

    catalog = accelkit.load_catalog()
    training = Scenario(model="Llama-2 7B", tokens=2e10, deployment="cloud")
    serving = Scenario(workload="inference", model="Llama-3.1 70B", deployment="on-prem", latency_target_ms=50,
                       ttft_target_ms=1000)
    lower = serving.copy().update(allow_lower_precision=True)
    moe = Scenario(workload="inference", model="DeepSeek-V3", precision="fp8", n_devices=16, deployment="on-prem",
                   latency_target_ms=100)
    custom = Scenario(model="custom", params=7e9, tokens=2e10, deployment="cloud")
    edge = Scenario(workload="inference", model="ResNet-50", deployment="edge", power_envelope_w=30, streams=10)
    recommender = Scenario(workload="inference", model="DLRM-v2", precision="int8", requests_per_s=2e7,
                           deployment="on-prem", latency_target_ms=60)
    recsys_training = Scenario.load(_example("recsys-8xa100-overbought"))
    params, tokens = np.logspace(8, 12, 100), np.logspace(9, 13, 100)
    n = len(catalog)
    return [
        report(f"rank(): {n} devices, training 7B, TP / PP / ZeRO / micro-batch / recompute search",
               best_of(lambda: select.rank(training, catalog), 5), target=0.200),
        report(f"rank(): {n} devices, serving 70B, TP / batch search under TTFT + TPOT targets",
               best_of(lambda: select.rank(serving, catalog), 5), target=0.200),
        report(f"rank(): {n} devices, serving DeepSeek-V3 on 16, TP x PP x expert-parallel search under a TPOT target",
               best_of(lambda: select.rank(moe, catalog), 5), target=0.200),
        report(f"rank(): {n} devices, serving DLRM-v2 at 2e7 user-item pairs/s",
               best_of(lambda: select.rank(recommender, catalog), 5), target=0.200),
        report(f"rank(): {n} devices, training DLRM-v2 (the article's recommender)",
               best_of(lambda: select.rank(recsys_training, catalog), 5), target=0.200),
        report(f"rank(): {n} devices, serving 70B, + 4 precisions",
               best_of(lambda: select.rank(lower, catalog), 5)),
        report(f"rank_grid(): {n} devices x 100 x 100 scenarios, ZeRO search",
               best_of(lambda: select.rank_grid(custom, params, tokens, catalog), 5), target=1.0),
        report("nearest_feasible(): empty edge shortlist", best_of(lambda: select.nearest_feasible(edge, catalog), 1)),
        report("rank_stability(): 500 draws", best_of(lambda: select.rank_stability(training, catalog), 3)),
        report("sensitivity(): 6 assumptions", best_of(lambda: select.sensitivity(training, catalog), 1, warmup=0)),
    ]


def _example(stem):
    """The path of a scenario file in examples/."""
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "examples" / f"{stem}.yaml"
