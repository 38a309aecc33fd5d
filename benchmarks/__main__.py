"""Run the benchmarks: ``python -m benchmarks [group ...]``; figures go to stdout and
``benchmarks/results/latest.json`` (not committed)."""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path

GROUPS = ["formulas", "projection", "panels", "notebooks", "rank", "report", "app", "app-load", "mutations"]


def main(argv):
    groups = argv or GROUPS
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"unknown benchmark group(s) {unknown}; choose from {GROUPS}", file=sys.stderr)
        return 2
    print(f"accelkit benchmarks on {platform.node() or 'this machine'}: {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}")
    results = []
    for group in groups:
        try:
            module = importlib.import_module(f"benchmarks.{group.replace('-', '_')}")
        except ModuleNotFoundError:
            print(f"[{group}] not available yet")
            continue
        print(f"[{group}]")
        results += module.main() or []
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
