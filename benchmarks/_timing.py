"""Small timing helpers: best-of-N wall time with warm-up."""

from __future__ import annotations

import statistics
import time


def best_of(fn, repeat=7, warmup=1):
    """(best, median) seconds of ``fn()`` over ``repeat`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def report(name, seconds, target=None, unit="s"):
    best, median = seconds if isinstance(seconds, tuple) else (seconds, seconds)
    scale, label = (1e3, "ms") if best < 1 else (1.0, "s")
    line = f"{name:<62} best {best * scale:8.1f} {label}   median {median * scale:8.1f} {label}"
    if target is not None:
        line += f"   target < {target * scale:g} {label}  {'OK' if median < target else 'SLOW'}"
    print(line, flush=True)
    return {"name": name, "best_s": best, "median_s": median, "target_s": target}
