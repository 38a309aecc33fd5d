"""Read ``nvidia-smi --query-gpu=... --format=csv -l 1`` logs into the sample table.

nvidia-smi writes one header line naming the queried fields, with the unit in
brackets (``utilization.gpu [%]``, ``memory.used [MiB]``, ``clocks.sm [MHz]``), then
one line per GPU per interval. Unless ``nounits`` is given, each cell repeats the
unit (``30 %``, ``12288 MiB``, ``250.12 W``); a field the board cannot report reads
``[Not Supported]`` (``[N/A]``, ``N/A`` and ``[Unknown Error]`` also occur). This
module reads all of those, converts to SI at the edge, and keeps everything else
out of the statistics.

Several GPUs: the ``index`` field (or ``uuid``/``pci.bus_id``) tells them apart;
without any of them, rows are taken round-robin, as nvidia-smi prints them.
Several hosts: give several files, a ``host``/``hostname`` column, or comment lines
``# host: NAME`` (a comment sets the host of the rows that follow; a repeated
header line, as from concatenated logs, starts a new block).

Timestamps are read as printed (``YYYY/MM/DD HH:MM:SS.mmm``, the host's local
time); only differences between them are used.

Reference: NVIDIA, *nvidia-smi(1)* manual page, "SELECTIVE QUERY OPTIONS" (``--query-gpu``,
``--format=csv[,noheader][,nounits]``, ``-l``) and ``nvidia-smi --help-query-gpu``
(field names), https://docs.nvidia.com/deploy/nvidia-smi/
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import units
from .samples import MIB, MonitorError, tidy

__all__ = ["read_log", "read_logs", "parse_log_text", "FIELDS", "EXPECTED_FIELDS"]

_GIB, _KIB = units.GIB, units.KIB

#: nvidia-smi field -> (sample column, kind); the first name of each group is the one we suggest
FIELDS = {
    "timestamp": ("timestamp_s", "time"),
    "index": ("gpu", "int"),
    "name": ("name", "text"), "gpu_name": ("name", "text"),
    "uuid": ("uuid", "text"), "gpu_uuid": ("uuid", "text"),
    "pci.bus_id": ("pci_bus_id", "text"), "gpu_bus_id": ("pci_bus_id", "text"),
    "host": ("host", "text"), "hostname": ("host", "text"),
    "utilization.gpu": ("util_fraction", "percent"),
    "utilization.memory": ("memory_util_fraction", "percent"),
    "memory.used": ("memory_used_bytes", "memory"),
    "memory.total": ("memory_total_bytes", "memory"),
    "power.draw": ("power_w", "power"), "power.draw.instant": ("power_w", "power"),
    "power.draw.average": ("power_w", "power"),
    "power.limit": ("power_limit_w", "power"), "enforced.power.limit": ("power_limit_w", "power"),
    "temperature.gpu": ("temperature_c", "temperature"),
    "clocks.sm": ("sm_clock_hz", "clock"), "clocks.current.sm": ("sm_clock_hz", "clock"),
    "clocks.max.sm": ("sm_clock_max_hz", "clock"), "clocks.max.sm_clock": ("sm_clock_max_hz", "clock"),
    "clocks_throttle_reasons.active": ("throttle_reasons", "mask"),
    "clocks_event_reasons.active": ("throttle_reasons", "mask"),
}
#: single clock-event reason fields ("Active" / "Not Active") and their bit
_REASON_FIELDS = {
    "gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4, "hw_slowdown": 0x8,
    "sync_boost": 0x10, "sw_thermal_slowdown": 0x20, "hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80,
}
for _name, _bit in _REASON_FIELDS.items():
    for _prefix in ("clocks_throttle_reasons.", "clocks_event_reasons."):
        FIELDS[_prefix + _name] = (f"reason:{_bit}", "active")

EXPECTED_FIELDS = "timestamp,index,name,utilization.gpu,memory.used,memory.total,power.draw,power.limit," \
                  "temperature.gpu,clocks.sm,clocks.max.sm,clocks_throttle_reasons.active"

_MISSING = {"[not supported]", "[n/a]", "n/a", "[unknown error]", "", "[insufficient permissions]",
            "[gpu is lost]", "[requires pro]"}
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%°]*)$")
_UNITS = {
    "percent": {"%": 0.01, "": 0.01},
    "memory": {"MiB": MIB, "GiB": _GIB, "KiB": _KIB, "B": 1.0, "MB": units.MEGA, "GB": units.GIGA},
    "power": {"W": 1.0, "mW": units.MILLI, "kW": units.KILO},
    "clock": {"MHz": units.MEGA, "GHz": units.GIGA, "kHz": units.KILO, "Hz": 1.0},
    "temperature": {"": 1.0, "C": 1.0, "°C": 1.0},
    "int": {"": 1.0},
}
_WORDS = {"percent": "a percentage such as '30 %'", "memory": "a memory size such as '12288 MiB'",
          "power": "a power such as '250.5 W'", "clock": "a clock such as '1410 MHz'",
          "temperature": "a temperature in °C such as '65'", "int": "a whole number such as '0'"}
_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S",
                 "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S")
_EPOCH = _dt.datetime(1970, 1, 1)


def _header_field(cell):
    """'memory.used [MiB]' -> ('memory.used', 'MiB')."""
    cell = cell.strip()
    match = re.match(r"^(.*?)\s*\[(.*)\]$", cell)
    if match:
        return match.group(1).strip().lower(), match.group(2).strip()
    return cell.lower(), ""


def _parse_time(text):
    for fmt in _TIME_FORMATS:
        try:
            return (_dt.datetime.strptime(text, fmt) - _EPOCH).total_seconds()
        except ValueError:
            continue
    try:
        return float(text)
    except ValueError:
        return None


def _cell_value(text, kind, header_unit, where):
    """Convert one cell; ``where`` = (path, line, column number, field) for the error."""
    raw = text.strip()
    if raw.lower() in _MISSING:
        return -1 if kind == "mask" else (np.nan if kind not in ("text",) else "")
    if kind == "text":
        return raw
    path, line, col, field = where
    if kind == "time":
        value = _parse_time(raw)
        if value is None:
            raise MonitorError(f"{field}: expected a time such as '2024/05/01 12:00:00.123'; got {raw[:40]!r}",
                               path, line, col)
        return value
    if kind == "mask":
        try:
            return int(raw, 16) if raw.lower().startswith("0x") else int(raw)
        except ValueError:
            raise MonitorError(f"{field}: expected a clock-event bitmask such as '0x0000000000000004'; "
                               f"got {raw[:40]!r}", path, line, col) from None
    if kind == "active":
        low = raw.lower()
        if low in ("active", "not active"):
            return low == "active"
        raise MonitorError(f"{field}: expected 'Active' or 'Not Active'; got {raw[:40]!r}", path, line, col)
    match = _NUMBER.match(raw)
    table = _UNITS[kind]
    unit = match.group(2) if match else None
    if match and not unit:
        unit = header_unit
    if not match or unit not in table:
        raise MonitorError(f"{field}: expected {_WORDS[kind]}; got {raw[:40]!r}", path, line, col)
    value = float(match.group(1)) * table[unit]
    if kind == "int":
        return int(round(value))
    return value


#: longest line read (nvidia-smi writes a few hundred characters per sample)
MAX_LINE_CHARS = 16 * units.KIB


def parse_log_text(text, path="<text>", host=""):
    """Parse the text of one nvidia-smi CSV log (see the module notes) into a sample table."""
    rows, header, fields, header_line = [], None, None, None
    block_host = host
    n_blocks = 0
    for lineno, line in enumerate(io.StringIO(text), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            match = re.match(r"#\s*host\s*[:=]\s*(\S+)", stripped, re.I)
            if match:
                block_host = match.group(1)
            continue
        if len(stripped) > MAX_LINE_CHARS:
            raise MonitorError(f"the line is {len(stripped):,} characters long; an nvidia-smi CSV line is at most "
                               f"{MAX_LINE_CHARS:,} (is this an nvidia-smi log?)", path, lineno)
        try:
            cells = next(csv.reader([stripped], skipinitialspace=True, strict=True))
        except csv.Error as exc:
            raise MonitorError(f"not a CSV line ({exc}); starts {stripped[:40]!r}", path, lineno) from None
        first = _header_field(cells[0])[0]
        if first in FIELDS:
            header = [_header_field(c) for c in cells]
            unknown = [name for name, _unit in header if name not in FIELDS]
            fields = [FIELDS.get(name) for name, _unit in header]
            if not any(f and f[0] == "util_fraction" for f in fields):
                raise MonitorError("the header names no utilization.gpu column; expected the output of "
                                   f"nvidia-smi --query-gpu={EXPECTED_FIELDS} --format=csv -l 1"
                                   + (f" (fields not read: {', '.join(unknown)})" if unknown else ""),
                                   path, lineno)
            header_line = lineno
            n_blocks += 1
            continue
        if header is None:
            raise MonitorError("expected a header line first (as nvidia-smi --format=csv writes it, e.g. "
                               f"'timestamp, index, name, utilization.gpu [%], ...'); got {stripped[:60]!r}",
                               path, lineno, 1)
        if len(cells) != len(header):
            raise MonitorError(f"expected {len(header)} comma-separated values (as in the header on line "
                               f"{header_line}); got {len(cells)}", path, lineno)
        row = {"host": block_host, "block": n_blocks}
        for col, (cell, (name, unit), spec) in enumerate(zip(cells, header, fields), start=1):
            if spec is None:
                continue
            column, kind = spec
            value = _cell_value(cell, kind, unit, (path, lineno, col, name))
            if column.startswith("reason:"):
                if value is True:
                    row["_reasons"] = row.get("_reasons", 0) | int(column.split(":")[1])
                elif value is False:
                    row.setdefault("_reasons", 0)
                continue
            if column == "host" and not value:
                continue
            row[column] = value
        row["line"] = lineno
        rows.append(row)
    if header is None:
        raise MonitorError("no nvidia-smi header line found; expected the output of "
                           f"nvidia-smi --query-gpu={EXPECTED_FIELDS} --format=csv -l 1", path, 1 if text else None)
    if not rows:
        raise MonitorError("the log has a header but no samples", path)
    frame = pd.DataFrame(rows)
    if "_reasons" in frame.columns and "throttle_reasons" not in frame.columns:
        frame["throttle_reasons"] = frame["_reasons"].fillna(-1)
    frame = _assign_gpus(frame)
    frame["source"] = "nvidia-smi log"
    if "timestamp_s" not in frame.columns:
        frame["timestamp_s"] = frame.groupby(["host", "gpu"]).cumcount().astype(float)
    out = tidy(frame)
    out.attrs["path"] = str(path)
    return out


def _assign_gpus(frame):
    if "gpu" in frame.columns and frame["gpu"].notna().all():
        return frame
    key = "uuid" if "uuid" in frame.columns and (frame["uuid"] != "").all() else \
        "pci_bus_id" if "pci_bus_id" in frame.columns and (frame["pci_bus_id"] != "").all() else None
    if key:
        frame["gpu"] = frame.groupby("host")[key].transform(lambda s: pd.factorize(s)[0])
        return frame
    # round-robin: as many GPUs as rows before the first timestamp changes by more than 0.5 s
    parts = []
    for _host, part in frame.groupby(["host", "block"], sort=False):
        n = len(part)
        if "timestamp_s" in part.columns and part["timestamp_s"].notna().any():
            t0 = part["timestamp_s"].iloc[0]
            n = int((abs(part["timestamp_s"] - t0) <= 0.5).sum()) or 1
        parts.append(pd.Series(np.arange(len(part)) % n, index=part.index))
    frame["gpu"] = pd.concat(parts)
    return frame


def read_log(path, host=None):
    """Read one nvidia-smi CSV log file; ``host`` names the machine (default: a ``# host:``
    comment or a ``host`` column in the file, else the file name's stem when reading several)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MonitorError(f"cannot read the log ({exc.strerror or exc})", path) from None
    return parse_log_text(text, path, host or "")


def read_logs(paths, hosts=None):
    """Read several logs (one per host) into one table; a file without a host gets its file stem."""
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    hosts = list(hosts) if hosts else [None] * len(paths)
    frames = []
    for path, host in zip(paths, hosts):
        frame = read_log(path, host)
        if len(paths) > 1 and not host:
            frame.loc[frame["host"] == "", "host"] = path.stem
        frames.append(frame)
    out = tidy(pd.concat(frames, ignore_index=True))
    out.attrs["path"] = ", ".join(str(p) for p in paths)
    return out
