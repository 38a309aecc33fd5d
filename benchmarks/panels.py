"""Widget speed: one control change recomputes and redraws a chapter (whole catalogue)."""

from __future__ import annotations

from ._timing import best_of, report

# (module, class, control, two values to alternate between)
CASES = [
    ("catalogue", "CataloguePanel", "precision", ("int8", "bf16")),
    ("demand", "DemandPanel", "time_target_days", (10.0, 30.0)),
    ("roofline", "RooflinePanel", "batch_size", (64, 16)),
    ("precision", "PrecisionPanel", "workload", ("inference", "training")),
    ("ecosystem", "EcosystemPanel", "custom_cuda_kernels", (True, False)),
    ("energy_tco", "TCOPanel", "streams", (50, 10)),
    ("cluster", "ClusterPanel", "network_gbps", (50.0, 200.0)),
    ("edge", "EdgePanel", "streams", (40, 10)),
    ("decision", "DecisionPanel", "n_devices", (4, 8)),
]


def main():
    import importlib

    results = []
    for module, cls, control, values in CASES:
        panel_cls = getattr(importlib.import_module(f"accelkit.ui.{module}"), cls)
        panel = panel_cls(run_sensitivity=False) if cls == "DecisionPanel" else panel_cls()
        state = {"i": 0}

        def change():
            state["i"] += 1
            panel.set(**{control: values[state["i"] % 2]})
            assert panel.error is None, panel.error

        results.append(report(f"{cls}: change {control} -> recompute + redraw", best_of(change, repeat=6),
                              target=0.100))
    return results
