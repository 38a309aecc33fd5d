"""A person's probe results as the engine's efficiencies: measured / datasheet per ceiling.

The probes (:mod:`accelkit.probes`) measure; this turns their results table into the
ratios :func:`accelkit.projection.ceilings_for` uses in place of the published
efficiencies. It lives in the engine so the engine never imports the probes (the
probes call the engine, never the reverse); ``accelkit.probes.calibration`` is this
function.
"""

from __future__ import annotations

import pandas as pd

from ..vocabulary import MATMUL_DTYPES

__all__ = ["calibration"]


def calibration(results):
    """Measured/datasheet ratios, the "use my measurements" defaults for projections.

    One row per matmul dtype (its best shape) and per memory probe (copy, read):
    ``quantity``, ``precision``, ``measured`` (SI), ``unit``, ``datasheet``,
    ``ratio``, ``device_name`` and ``source`` (the results file, or "this
    session's run"). The matmul ratio is the maximum achievable fraction of the
    dense peak; real training reaches less (MFU 0.3-0.5 is typical), so use it as
    an upper bound on utilisation. NaN ratios where the device has no datasheet
    figure.
    """
    if not isinstance(results, pd.DataFrame) or "probe" not in results:
        raise ValueError("results must be a probe result DataFrame (run_all or load_results)")
    source = results.attrs.get("source", "this session's run (not saved)")
    device_name = results["device_name"].iloc[0] if len(results) else ""
    rows = []
    matmul = results[(results["probe"] == "matmul") & results["measured"].notna()]
    for dtype in [d for d in MATMUL_DTYPES if d in set(matmul["dtype"])]:
        group = matmul[matmul["dtype"] == dtype]
        best = group.loc[group["measured"].idxmax()]
        rows.append({"quantity": f"matmul {dtype}", "precision": dtype, "measured": best["measured"],
                     "unit": best["unit"], "datasheet": best["datasheet"], "ratio": best["ratio"]})
    for probe, label in (("memory_copy", "memory bandwidth (copy)"), ("memory_read", "memory bandwidth (read)")):
        group = results[(results["probe"] == probe) & results["measured"].notna()]
        if not group.empty:
            best = group.loc[group["measured"].idxmax()]
            rows.append({"quantity": label, "precision": "", "measured": best["measured"], "unit": best["unit"],
                         "datasheet": best["datasheet"], "ratio": best["ratio"]})
    frame = pd.DataFrame(rows, columns=["quantity", "precision", "measured", "unit", "datasheet", "ratio"])
    frame["device_name"] = device_name
    frame["source"] = source
    return frame
