"""Unit conversions, in one place.

The catalogue stores figures in the units people read (TFLOP/s, GB/s, GB, W);
formulas work in SI base units (FLOP/s, bytes/s, bytes, W). Everything converts
here so that a factor of 1000 is never written twice. 1 GB = 1e9 bytes, as
accelerator vendors print memory and bandwidth; names that say ``gib`` use 2**30.
"""

MILLI = 1e-3
KILO = 1e3
MEGA = 1e6
GIGA = 1e9
TERA = 1e12
PETA = 1e15
EXA = 1e18
KIB = 2**10
MIB = 2**20
GIB = 2**30
MICRO = 1e-6
NANO = 1e-9
BITS_PER_BYTE = 8

MILLISECONDS_PER_SECOND = 1e3
SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_DAY = 24.0
SECONDS_PER_WEEK = 604800.0
HOURS_PER_YEAR = 8760.0
DAYS_PER_YEAR = 365.25
#: mean Gregorian month [days], 365.25 / 12
DAYS_PER_MONTH = DAYS_PER_YEAR / 12
#: watts in a kilowatt (energy tariffs are per kWh)
WATTS_PER_KW = 1e3
JOULES_PER_KWH = 3.6e6
#: kilograms in a tonne (CO2e is quoted in t)
KG_PER_TONNE = 1e3


def s_to_ms(seconds):
    """s -> ms."""
    return seconds * MILLISECONDS_PER_SECOND


def ms_to_s(ms):
    """ms -> s."""
    return ms / MILLISECONDS_PER_SECOND


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


def watts_to_kw(watts):
    """W -> kW."""
    return watts / WATTS_PER_KW


def gbps_to_bytes_per_s(gbps):
    """Gbit/s (network links are quoted in bits) -> bytes/s."""
    return gbps * GIGA / BITS_PER_BYTE


def bytes_per_s_to_gbps(bytes_per_s):
    """bytes/s -> Gbit/s."""
    return bytes_per_s * BITS_PER_BYTE / GIGA
