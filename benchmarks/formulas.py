"""Formula speed: import time, the whole catalogue × 10,000 workloads, a widget-sized step."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ._timing import best_of, report


def bench_import():
    code = "import time; t = time.perf_counter(); import accelkit; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
             for _ in range(5)]
    code_cat = ("import time; t = time.perf_counter(); import accelkit; accelkit.load_catalog(); "
                "print(time.perf_counter() - t)")
    cat_times = [float(subprocess.run([sys.executable, "-c", code_cat], capture_output=True, text=True,
                                      check=True).stdout) for _ in range(3)]
    return [
        report("import accelkit (fresh interpreter)", (min(times), float(np.median(times))), target=1.0),
        report("import accelkit + load_catalog() (fresh interpreter)", (min(cat_times), float(np.median(cat_times)))),
    ]


def bench_catalogue_x_workloads(n_workloads=10_000):
    import accelkit
    from accelkit import catalog as cat
    from accelkit import llm, roofline

    catalog = accelkit.load_catalog()
    rng = np.random.default_rng(0)
    intensity = 10 ** rng.uniform(-1, 4, n_workloads)
    weights = 10 ** rng.uniform(8, 12, n_workloads)  # bytes of weights per workload
    kv = 10 ** rng.uniform(6, 10, n_workloads)

    def run():
        peak = cat.peak_flops(catalog, "bf16").to_numpy()
        bw = cat.datasheet_memory_bandwidth(catalog).to_numpy()
        table = roofline.catalog_roofline(peak, bw, intensity, catalog["name"].to_numpy())
        ok = ~np.isnan(bw)
        decode = llm.decode_seconds_per_token(weights[None, :], kv[None, :], bw[ok][:, None])
        return table, decode

    table, decode = run()
    n = len(catalog)
    return [report(f"roofline + decode bounds: {n} devices x {n_workloads:,} workloads ({len(table):,} rows)",
                   best_of(run, repeat=5), target=1.0)]


def bench_widget_step():
    """What one control change costs in pure formulas: every device, one workload."""
    import accelkit
    from accelkit import catalog as cat
    from accelkit import demand, llm, memory, roofline

    catalog = accelkit.load_catalog()

    def run():
        peak = cat.peak_flops(catalog, "bf16")
        bw = cat.datasheet_memory_bandwidth(catalog)
        known = peak.notna() & bw.notna()
        p, b = peak[known], bw[known]
        w = memory.weight_bytes(7e9, "bf16")
        kv = memory.kv_cache_bytes(32, 8, 128, 4096, 8, "bf16")
        need = demand.devices_needed(demand.training_flops(7e9, 2e12) / (30 * 86400), p, 0.4)
        step = llm.decode_step_seconds(7e9, w, kv / 8, 8, p, b)
        att = roofline.attainable_flops(p, b, roofline.decode_intensity(7e9, 8, kv_bytes_per_sequence=kv / 8))
        return need, step, att

    return [report("widget-sized recomputation (all devices, one scenario)", best_of(run, repeat=20), target=0.020)]


def main():
    return bench_import() + bench_catalogue_x_workloads() + bench_widget_step()
