"""Speed figures for accelkit, measured (never asserted in tests).

    python -m benchmarks              # every benchmark
    python -m benchmarks formulas     # one group: import, formulas, panels, notebooks, app, report, rank
"""
