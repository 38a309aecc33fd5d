"""Energy efficiency, job energy and emissions.

References
----------
.. [1] D. Patterson et al., "Carbon Emissions and Large Neural Network Training",
   arXiv:2104.10350 (2021): energy = device-hours × average power × PUE;
   CO2e = energy × grid carbon intensity.
.. [2] H. Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models",
   arXiv:2307.09288 (2023), table 2: 7B model, 184,320 GPU-hours at 400 W peak,
   31.22 tCO2eq.
.. [3] The Green Grid, "PUE: A Comprehensive Examination of the Metric",
   White Paper 49 (2012): PUE = facility energy / IT equipment energy.
.. [4] A. Tschand et al., "MLPerf Power: Benchmarking the Energy Efficiency of Machine
   Learning Systems from Microwatts to Megawatts for Sustainable AI", arXiv:2410.12032
   (2024), §3: energy efficiency as work per unit of energy (samples or tokens per joule =
   throughput / average power).
"""

from __future__ import annotations

import numpy as np

from . import units
from ._validate import check_fraction, check_non_negative, check_number, check_positive

__all__ = [
    "flops_per_watt",
    "effective_flops_per_watt",
    "work_per_joule",
    "job_energy_joules",
    "job_energy_kwh",
    "co2_kg",
]


def flops_per_watt(peak_flops, watts):
    """Peak compute per watt: ``peak_flops / watts`` [FLOP/s per W = FLOP/J].

    Notes
    -----
    The source article's examples: A100, 312 TFLOP/s (dense bf16/fp16 tensor) /
    400 W = 0.78 TFLOP/s per W -- correct for the SXM part. Its "Jetson Orin:
    40 TFLOPS / 50 W" does not match NVIDIA's module datasheets; compare the
    catalogue's Jetson rows (and mind sparse vs dense TOPS).
    """
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_positive("watts", watts, "a power in watts")
    return peak_flops / watts


def effective_flops_per_watt(peak_flops, watts, utilization, power_fraction=1.0):
    """Delivered FLOP per joule at a utilisation: ``peak · u / (watts · power_fraction)``.

    Parameters
    ----------
    peak_flops : numeric [FLOP/s]
    watts : numeric
        Rated power (TDP) [W].
    utilization : numeric
        Achieved fraction of peak, in (0, 1].
    power_fraction : numeric, default 1
        Average draw as a fraction of TDP while running (measured, e.g. with NVML);
        1 charges the full TDP, a conservative choice.
    """
    check_fraction("utilization", utilization, "a utilisation")
    check_number("power_fraction", power_fraction, low=0, low_inclusive=False, high=1.5,
                 expected="a fraction of TDP in (0, 1.5]")
    return flops_per_watt(peak_flops, watts) * utilization / power_fraction


def work_per_joule(work_per_hour, watts):
    """The work a device does per joule at a power: ``work_per_hour / (3600 · watts)``.

    Parameters
    ----------
    work_per_hour : numeric or array
        Projected work per device-hour [tokens, frames, user-item pairs ... per h]
        (:func:`accelkit.projection.for_scenario`'s ``work_per_device_hour``); NaN where
        not projected.
    watts : numeric or array
        Power drawn while doing it [W]; the decision passes the power the device runs at: its
        maximum (TDP), an upper bound of the draw under load, so the figure is a floor, or a
        Jetson's ``nvpmodel`` mode. NaN where unknown.

    Returns
    -------
    Work per joule [units of work / J] (MLPerf Power's energy efficiency [4]_: throughput
    over power). Unlike :func:`flops_per_watt` it counts what the workload gets done: a
    memory-bound decode or embedding gather gains nothing from peak FLOP/s, so peak per
    watt rewards the wrong part there.
    """
    # NaN is "not projected" or "not published" and passes through; a known figure must make sense
    w, work = np.asarray(watts, dtype=float), np.asarray(work_per_hour, dtype=float)
    check_positive("watts", w[~np.isnan(w)], "a power in watts")
    check_non_negative("work_per_hour", work[~np.isnan(work)], "an amount of work per hour")
    return work_per_hour / (units.SECONDS_PER_HOUR * watts)


def job_energy_joules(power_w, seconds, n_devices=1, pue=1.0):
    """Facility energy of a job: ``power × seconds × devices × PUE`` [J].

    Parameters
    ----------
    power_w : numeric
        Average power per device [W] (TDP for a bound).
    seconds : numeric
        Run time [s].
    n_devices : numeric, default 1
    pue : numeric, default 1.0
        Power usage effectiveness ≥ 1 ([3]_): 1.1-1.2 for efficient liquid-cooled
        halls (the article's training cluster targets < 1.2), ~1.5 typical.
    """
    check_positive("power_w", power_w, "a power in watts")
    check_non_negative("seconds", seconds, "a time in seconds")
    check_positive("n_devices", n_devices, "a number of devices")
    check_number("pue", pue, low=1.0, high=5.0, expected="a PUE between 1 and 5")
    return power_w * seconds * n_devices * pue


def job_energy_kwh(power_w, seconds, n_devices=1, pue=1.0):
    """:func:`job_energy_joules` in kWh.

    Worked example ([2]_ table 2): Llama 2 7B, 184,320 GPU-hours at 400 W,
    PUE 1: 184,320 h × 400 W = 73,728,000 Wh = 73,728 kWh.
    """
    return units.joules_to_kwh(job_energy_joules(power_w, seconds, n_devices, pue))


def co2_kg(energy_kwh, grid_kg_per_kwh):
    """Emissions ``energy × grid carbon intensity`` [kg CO2e] ([1]_).

    Parameters
    ----------
    energy_kwh : numeric [kWh]
    grid_kg_per_kwh : numeric
        Carbon intensity of the electricity [kg CO2e/kWh]; varies by region and
        hour (~0.02 hydro/nuclear to ~0.8 coal-heavy grids).

    Notes
    -----
    Worked example ([2]_): 73,728 kWh → 31.22 t CO2e implies 0.4234 kg/kWh.
    """
    check_non_negative("energy_kwh", energy_kwh, "an energy in kWh")
    check_non_negative("grid_kg_per_kwh", grid_kg_per_kwh, "a carbon intensity in kg/kWh")
    return energy_kwh * grid_kg_per_kwh
