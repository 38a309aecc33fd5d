"""accelkit: choose AI accelerators and prove the choice with numbers.

The package holds a sourced hardware catalogue and small vectorised formulas
(compute demand, memory, roofline, communication, precision, energy, TCO).
Heavy libraries (torch, plotly, ipywidgets) are imported only by the modules
that need them, so ``import accelkit`` stays fast.

Units: every formula takes and returns SI base units (FLOP, FLOP/s, bytes,
bytes/s, seconds, watts, joules, USD); the catalogue stores the units people
read, with the unit in the column name. Conversions live in :mod:`accelkit.units`.
"""

from importlib import import_module as _import_module

__version__ = "0.1.0"

__all__ = [
    "load_catalog",
    "catalog",
    "units",
    "demand",
    "memory",
    "roofline",
    "llm",
    "comm",
    "precision",
    "energy",
    "tco",
    "ecosystem",
    "select",
    "scenario",
    "probes",
    "monitor",
    "plots",
    "report",
    "references",
]

_SUBMODULES = set(__all__) - {"load_catalog"}


def load_catalog(path=None, **kwargs):
    """Load the accelerator catalogue; see :func:`accelkit.catalog.load_catalog`."""
    from .catalog import load_catalog as _load

    return _load(path, **kwargs)


def __getattr__(name):
    # Submodules load on first use (PEP 562): `accelkit.roofline` works without an
    # explicit import, and `import accelkit` pulls in nothing heavy.
    if name in _SUBMODULES:
        module = _import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'accelkit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
