"""Widget panels, one module per notebook chapter (ipywidgets + plotly).

Importing this package imports ipywidgets and plotly; ``import accelkit`` does not.
Each panel is built from the shared controls in :mod:`accelkit.ui.controls`, does
its arithmetic through the pure functions of ``accelkit``, and draws with
:mod:`accelkit.plots`. A panel shows live widgets (``panel.show()``) or, for a
static report, plain figures and tables (``panel.show(static=True)``).
"""

from importlib import import_module as _import_module

_PANELS = {
    "CataloguePanel": "catalogue",
    "DemandPanel": "demand",
    "EcosystemPanel": "ecosystem",
    "RooflinePanel": "roofline",
    "PrecisionPanel": "precision",
    "EnergyPanel": "energy_tco",
    "TCOPanel": "energy_tco",
    "ClusterPanel": "cluster",
    "EdgePanel": "edge",
    "DecisionPanel": "decision",
    "ProbePanel": "probe",
    "ValidationPanel": "validation",
    "MonitorPanel": "monitor",
}


def __getattr__(name):
    if name in _PANELS:
        module = _import_module(f".{_PANELS[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'accelkit.ui' has no attribute {name!r}")
