"""Facts of the host: memory, CPU, caches, load, ROCm and Jetson installs (no psutil).

Units: bytes. Memory comes from ``/proc/meminfo`` (Linux; its figures are KiB,
"kB" in the file) or else ``os.sysconf`` pages x page size; the CPU model from
``/proc/cpuinfo`` or else :mod:`platform`; cache sizes from
``/sys/devices/system/cpu/cpu0/cache/index*/size`` ("32K", "1M"; binary prefixes).
Every reader returns ``None`` (or a plain fallback) where the machine cannot tell;
none raises.

References: Linux ``proc(5)`` (``/proc/meminfo``: MemTotal, MemAvailable) and the
sysfs ABI ``Documentation/ABI/testing/sysfs-devices-system-cpu`` (cache ``size``).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from ..units import GIB, KIB, MIB

__all__ = ["meminfo_bytes", "available_memory_bytes", "total_memory_bytes", "cpu_model", "cpu_cores",
           "last_level_cache_bytes", "load_average_1min", "rocm_version", "is_jetson", "JETSON_RELEASE"]

#: the file that marks an NVIDIA Jetson (L4T release)
JETSON_RELEASE = "/etc/nv_tegra_release"
_ROCM_VERSION_FILES = ("/opt/rocm/.info/version", "/opt/rocm/.info/version-dev")


def meminfo_bytes(key):
    """One ``/proc/meminfo`` field (``"MemTotal"``, ``"MemAvailable"``) in bytes, or None."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * KIB
    except OSError:
        return None
    return None


def _memory_bytes(meminfo_key, sysconf_pages):
    """A /proc/meminfo field in bytes, else ``os.sysconf`` pages x page size, else None."""
    value = meminfo_bytes(meminfo_key)
    if value:
        return value
    try:
        return os.sysconf(sysconf_pages) * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def available_memory_bytes():
    """Memory the OS could hand out now, in bytes (MemAvailable, else free pages)."""
    return _memory_bytes("MemAvailable", "SC_AVPHYS_PAGES")


def total_memory_bytes():
    """Physical memory of the host in bytes (MemTotal, else all pages), or None."""
    return _memory_bytes("MemTotal", "SC_PHYS_PAGES")


def cpu_model():
    """The CPU's model name (``/proc/cpuinfo``; else :mod:`platform`; else "unknown CPU")."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_cores():
    """Logical cores this process may use (its affinity mask; else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def last_level_cache_bytes():
    """The largest CPU cache of cpu0 in bytes (sysfs), or None where sysfs does not say."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    best = 0
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            text = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": KIB, "M": MIB, "G": GIB}.get(text[-1:], 1)
        try:
            best = max(best, int(text.rstrip("KMG")) * scale)
        except ValueError:
            continue
    return best or None


def load_average_1min():
    """The 1-minute load average, rounded to 2 decimals (None where the OS has none)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def rocm_version():
    """The ROCm release installed under /opt/rocm (its ``.info/version``), or None."""
    for path in _ROCM_VERSION_FILES:
        try:
            return Path(path).read_text(encoding="utf-8").strip() or None
        except OSError:
            continue
    return None


def is_jetson():
    """True on an NVIDIA Jetson (:data:`JETSON_RELEASE` exists)."""
    return Path(JETSON_RELEASE).exists()
