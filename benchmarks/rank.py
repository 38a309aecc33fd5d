"""Decision engine speed: one ranking, a 100 x 100 scenario grid, the sensitivity scan."""

from __future__ import annotations

import numpy as np

from ._timing import best_of, report


def main():
    import accelkit
    from accelkit import select
    from accelkit.scenario import Scenario

    catalog = accelkit.load_catalog()
    scenario = Scenario(model="custom", params=7e9, tokens=2e10, deployment="cloud")
    params, tokens = np.logspace(8, 12, 100), np.logspace(9, 13, 100)
    return [
        report(f"rank(): {len(catalog)} devices, one scenario", best_of(lambda: select.rank(scenario, catalog), 5)),
        report(f"rank_grid(): {len(catalog)} devices x 100 x 100 scenarios",
               best_of(lambda: select.rank_grid(scenario, params, tokens, catalog), 5), target=1.0),
        report("sensitivity(): 4 assumptions, 31 rankings", best_of(lambda: select.sensitivity(scenario, catalog), 1,
                                                                     warmup=0)),
    ]
