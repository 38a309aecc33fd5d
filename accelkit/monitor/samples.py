"""The tidy sample table every monitor source produces, and its errors.

One row per (host, GPU, sample time); one column per quantity, SI units in the
name. Parsers convert at their edge (MiB -> bytes, MHz -> Hz, % -> fraction) and
hand :func:`tidy` a frame with any subset of :data:`COLUMNS`; :func:`tidy` adds
the missing ones as NaN/"" so the statistics never have to ask what a source had.

Columns
-------
``source``                   where the row came from ("nvml", "nvidia-smi log", "prometheus")
``host``                     host name ("" where the source does not say)
``gpu``                      GPU index on its host [int]
``uuid``, ``name``           GPU UUID and product name as the driver reports it
``timestamp_s``              sample time [s since the Unix epoch, or since the start]
``util_fraction``            NVML/DCGM GPU utilisation: the fraction of the sample period
                             during which at least one kernel ran [0-1]
``memory_util_fraction``     fraction of the period device memory was read or written [0-1]
``sm_active_fraction``       DCGM ``PROF_SM_ACTIVE``: cycles with >= 1 warp resident, averaged over SMs [0-1]
``tensor_active_fraction``   DCGM ``PROF_PIPE_TENSOR_ACTIVE``: cycles the tensor pipe was busy [0-1]
``dram_active_fraction``     DCGM ``PROF_DRAM_ACTIVE``: cycles the memory interface moved data [0-1]
``memory_used_bytes``, ``memory_total_bytes``  device memory [bytes]
``power_w``, ``power_limit_w``                 board power draw and enforced limit [W]
``temperature_c``            GPU core temperature [°C]
``sm_clock_hz``, ``sm_clock_max_hz``           SM clock now and its maximum [Hz]
``throttle_reasons``         NVML/DCGM clock-event bitmask [int, -1 where unknown]

References
----------
- NVIDIA, *NVML API Reference Guide*, ``nvmlUtilization_t`` (utilisation semantics),
  ``nvmlClocksEventReasons`` / "Clocks Throttle Reasons" (the bitmask),
  https://docs.nvidia.com/deploy/nvml-api/
- NVIDIA, *DCGM API reference*, "Field Identifiers" and "Field Constants"
  (``DCGM_FI_PROF_*`` ratios, ``DCGM_CLOCKS_EVENT_REASON_*`` masks),
  https://docs.nvidia.com/datacenter/dcgm/latest/
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from ..i18n import N_

__all__ = ["COLUMNS", "FRACTION_COLUMNS", "MonitorError", "tidy", "empty", "THROTTLE_BITS", "throttle_words",
           "MIB", "MHZ"]

MIB = units.MIB
MHZ = units.MEGA

#: columns of the sample table, in order, with their dtype
COLUMNS = {
    "source": str, "host": str, "gpu": int, "uuid": str, "name": str, "timestamp_s": float,
    "util_fraction": float, "memory_util_fraction": float, "sm_active_fraction": float,
    "tensor_active_fraction": float, "dram_active_fraction": float,
    "memory_used_bytes": float, "memory_total_bytes": float, "power_w": float, "power_limit_w": float,
    "temperature_c": float, "sm_clock_hz": float, "sm_clock_max_hz": float, "throttle_reasons": int,
}

FRACTION_COLUMNS = ("util_fraction", "memory_util_fraction", "sm_active_fraction", "tensor_active_fraction",
                    "dram_active_fraction")

#: clock-event reason bits (NVML ``nvmlClocksEventReason*`` = DCGM ``DCGM_CLOCKS_EVENT_REASON_*``)
THROTTLE_BITS = {
    0x1: N_("GPU idle"),
    0x2: N_("applications clocks setting"),
    0x4: N_("software power cap"),
    0x8: N_("hardware slowdown"),
    0x10: N_("sync boost"),
    0x20: N_("software thermal slowdown"),
    0x40: N_("hardware thermal slowdown"),
    0x80: N_("hardware power brake"),
    0x100: N_("display clocks setting"),
}
#: bits that mean the clocks were held down by power or heat (not idle, not a setting)
LIMITING_BITS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


class MonitorError(ValueError):
    """Bad monitor input: names the file (or URL), line, column and what was expected."""

    def __init__(self, message, path=None, line=None, column=None):
        self.path, self.line, self.column = path, line, column
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f", line {line}"
            if column is not None:
                where += f", column {column}"
            where += ": "
        super().__init__(where + message)


def empty():
    """A sample table with no rows (all :data:`COLUMNS`)."""
    return tidy(pd.DataFrame())


def tidy(frame):
    """Order, complete and type the columns of a sample table (a new frame).

    Missing columns are added (NaN for numbers, "" for text, -1 for the bitmask);
    fractions outside [0, 1] raise :class:`MonitorError` (a source that forgot to
    divide a percentage by 100). Rows are sorted by host, GPU and time.
    """
    frame = pd.DataFrame(frame).copy()
    for col, kind in COLUMNS.items():
        if col not in frame.columns:
            frame[col] = "" if kind is str else (-1 if col == "throttle_reasons" else (0 if kind is int else np.nan))
        if kind is str:
            frame[col] = frame[col].fillna("").astype(str)
        elif kind is int:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").fillna(-1).astype("int64")
        else:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    for col in FRACTION_COLUMNS:
        values = frame[col].dropna()
        if len(values) and (values.min() < 0 or values.max() > 1.0 + 1e-9):
            raise MonitorError(f"{col} must be a fraction in [0, 1]; got values from {values.min():g} "
                               f"to {values.max():g} (a percentage not divided by 100?)")
    frame = frame[list(COLUMNS)].sort_values(["host", "gpu", "timestamp_s"], kind="stable")
    return frame.reset_index(drop=True)


def throttle_words(mask, bits=LIMITING_BITS):
    """The clock-event reasons set in ``mask`` (only the limiting ones by default), as words."""
    mask = int(mask)
    if mask < 0:
        return []
    return [word for bit, word in THROTTLE_BITS.items() if mask & bit & bits]
