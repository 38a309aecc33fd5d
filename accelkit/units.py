"""Unit conversions, in one place.

The catalogue stores figures in the units people read (TFLOP/s, GB/s, GB, W);
formulas work in SI base units (FLOP/s, bytes/s, bytes, W). Everything converts
here so that a factor of 1000 is never written twice. 1 GB = 1e9 bytes, as
accelerator vendors print memory and bandwidth; names that say ``gib`` use 2**30.
"""

KILO = 1e3
MEGA = 1e6
GIGA = 1e9
TERA = 1e12
PETA = 1e15
GIB = 2**30
MILLI = 1e-3
MICRO = 1e-6
NANO = 1e-9
KIB = 2**10
MIB = 2**20
BITS_PER_BYTE = 8

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_YEAR = 8760.0
DAYS_PER_YEAR = 365.25
JOULES_PER_KWH = 3.6e6


def tflops_to_flops(tflops):
    """TFLOP/s (or TOP/s) -> FLOP/s (or OP/s)."""
    return tflops * TERA


def flops_to_tflops(flops):
    """FLOP/s -> TFLOP/s."""
    return flops / TERA


def gbs_to_bytes_per_s(gbs):
    """GB/s (1e9 bytes per second) -> bytes/s."""
    return gbs * GIGA


def bytes_per_s_to_gbs(bytes_per_s):
    """bytes/s -> GB/s."""
    return bytes_per_s / GIGA


def gb_to_bytes(gb):
    """GB (1e9 bytes) -> bytes."""
    return gb * GIGA


def bytes_to_gb(nbytes):
    """bytes -> GB (1e9 bytes)."""
    return nbytes / GIGA


def bytes_to_gib(nbytes):
    """bytes -> GiB (2**30 bytes)."""
    return nbytes / GIB


def bytes_to_mib(nbytes):
    """bytes -> MiB (2**20 bytes)."""
    return nbytes / MIB


def ms_to_seconds(ms):
    """milliseconds -> seconds."""
    return ms / KILO


def seconds_to_ms(seconds):
    """seconds -> milliseconds."""
    return seconds * KILO


def seconds_to_us(seconds):
    """seconds -> microseconds."""
    return seconds * MEGA


def milliwatts_to_watts(mw):
    """mW (as NVML reports power) -> W."""
    return mw / KILO


def mhz_to_hz(mhz):
    """MHz (as NVML reports clocks) -> Hz."""
    return mhz * MEGA


def joules_to_kwh(joules):
    """J -> kWh."""
    return joules / JOULES_PER_KWH


def kwh_to_joules(kwh):
    """kWh -> J."""
    return kwh * JOULES_PER_KWH
