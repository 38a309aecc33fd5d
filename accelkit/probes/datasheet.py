"""The catalogue side of a probe: which catalogue row a device is, and its datasheet figure.

* :func:`_catalogue_match` -- the catalogue row of a device name torch or NVML
  reports (by name or alias), or the closest names;
* :func:`_datasheet` -- the datasheet value of one result row in SI units: the
  dense peak at the row's dtype (FLOP/s, OP/s), the memory bandwidth (bytes/s), or
  for host<->device copies the theoretical PCIe rate of the link NVML reports;
* :func:`_pcie_bytes_per_s` -- that PCIe rate from generation and width.

No torch. Reference: PCI-SIG, *PCI Express Base Specification* (per-lane transfer
rates 2.5-64 GT/s; 8b/10b line code for Gen 1-2, 128b/130b for Gen 3-5, 242/256
FLIT for Gen 6).
"""

from __future__ import annotations

from ..units import BITS_PER_BYTE, GIGA

#: PCIe transfer rate per lane [GT/s] and line-code efficiency, per generation (PCI-SIG)
_PCIE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130), 5: (32.0, 128 / 130),
         6: (64.0, 242 / 256)}


def _pcie_bytes_per_s(gen, width):
    """Theoretical one-direction PCIe bandwidth in bytes/s: GT/s x encoding / 8 bits x lanes."""
    try:
        rate, efficiency = _PCIE[int(gen)]
        return rate * GIGA * efficiency / BITS_PER_BYTE * int(width)
    except (KeyError, TypeError, ValueError):
        return float("nan")


def _catalogue_match(name):
    """(catalogue row name or '', text for the catalogue_match column)."""
    from ..catalog import CatalogError, find

    try:
        row = find(name)
    except CatalogError as exc:
        text = str(exc)
        if "closest:" in text:
            return "", "not in the catalogue; closest: " + text.split("closest:", 1)[1].strip()
        if "matches several" in text:
            return "", "ambiguous in the catalogue: " + text.split("matches several devices:", 1)[-1].strip()
        return "", "not in the catalogue"
    return row["name"], row["name"]


def _datasheet(row, match_name, header_pcie=None):
    """Datasheet value in SI units for one result row (NaN when unknown)."""
    from .. import units
    from ..catalog import PRECISION_COLUMNS, find

    probe, dtype = row["probe"], row["dtype"]
    if probe in ("host_to_device", "device_to_host") and header_pcie:
        return _pcie_bytes_per_s(*header_pcie)
    if not match_name:
        return float("nan")
    entry = find(match_name)
    if probe == "matmul" and dtype in PRECISION_COLUMNS:
        return float(units.tflops_to_flops(entry[PRECISION_COLUMNS[dtype]]))
    if probe in ("memory_copy", "memory_read"):
        return float(units.gbs_to_bytes_per_s(entry["memory_bw_gbs"]))
    return float("nan")
