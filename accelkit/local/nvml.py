"""The one NVML / nvidia-smi layer: the probes, the ecosystem audit and the monitor use it.

* :func:`init` / :func:`shutdown` -- NVML through ``pynvml`` (package
  ``nvidia-ml-py``); never raises, says why NVML is unavailable;
* :func:`device_info` -- static facts of one GPU (power limit, max clocks, PCIe);
* :func:`read_sample` -- one sample of one GPU in the monitor's units (the
  monitor's :func:`accelkit.monitor.sample` loops over it);
* :func:`driver_facts` -- the NVIDIA driver, CUDA driver API version and the GPUs
  with their compute capability, from NVML or else ``nvidia-smi``;
* :func:`nvidia_smi` -- the ``nvidia-smi`` binary, with a timeout.

Utilisation semantics (NVML ``nvmlDeviceGetUtilizationRates``): ``gpu`` is the
percent of the last sample period (1/6 s to 1 s, by product) during which one or
more kernels ran -- busy time, not the share of the chip's peak; ``memory`` is the
percent of that period during which device memory was read or written. Power
(``nvmlDeviceGetPowerUsage``) and the enforced limit are milliwatts, clocks MHz,
memory bytes (``nvmlDeviceGetMemoryInfo``); converted to W, Hz and bytes here.

Reference: NVIDIA, *NVML API Reference Guide* (Device Queries: utilisation, power,
clocks, clock-event reasons), https://docs.nvidia.com/deploy/nvml-api/ ;
*nvidia-smi(1)*, https://docs.nvidia.com/deploy/nvidia-smi/
"""

from __future__ import annotations

import shutil
import subprocess

from ..units import MEGA, MILLI, mhz_to_hz, milliwatts_to_watts
from . import INSTALL_HINT

__all__ = ["init", "shutdown", "reason", "handle", "text", "device_info", "device_count", "read_sample",
           "driver_facts", "nvidia_smi", "LIBRARY_MISSING", "INSTALL_HINT"]

#: how :func:`init`'s reason starts when the Python binding itself is missing
LIBRARY_MISSING = "NVML not available: nvidia-ml-py is not installed"


def init():
    """(pynvml module, None) after ``nvmlInit``, or (None, reason). Never raises."""
    try:
        import pynvml
    except ImportError:
        return None, f"{LIBRARY_MISSING} ({INSTALL_HINT})"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML not available ({exc}): no NVIDIA driver on this machine"
    except Exception as exc:  # a broken driver install must not stop the caller
        return None, f"NVML not available ({type(exc).__name__}: {exc})"
    return pynvml, None


def shutdown(pynvml):
    """``nvmlShutdown``, ignoring errors."""
    if pynvml is None:
        return
    try:
        pynvml.nvmlShutdown()
    except Exception:
        pass


def reason():
    """Why NVML is unavailable ('' when it is available)."""
    pynvml, why = init()
    shutdown(pynvml)
    return why or ""


def handle(pynvml, index, pci_bus_id=None):
    """NVML device handle by PCI bus id (when given and known) or index."""
    if pci_bus_id:
        try:
            return pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
        except pynvml.NVMLError:
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(index)


def text(value):
    """NVML strings are bytes in old bindings, str in new ones."""
    return value.decode() if isinstance(value, bytes) else str(value)


def device_count():
    """Number of NVIDIA GPUs NVML sees (0 without NVML)."""
    pynvml, _ = init()
    if pynvml is None:
        return 0
    try:
        return int(pynvml.nvmlDeviceGetCount())
    except pynvml.NVMLError:
        return 0
    finally:
        shutdown(pynvml)


def device_info(index=0, pci_bus_id=None):
    """NVML facts of one NVIDIA GPU, as a dict (SI units; names carry the unit).

    Keys: ``nvml_name``, ``driver_version``, ``power_limit_w``, ``sm_clock_max_hz``,
    ``memory_clock_max_hz``, ``temperature_c``, ``gpu_util_pct``,
    ``memory_util_pct``, ``pcie_gen``, ``pcie_width`` (+ ``_max``), and
    ``nvml_note`` (why a figure is missing). Without NVML the dict holds only
    ``nvml_note`` with the reason; it never raises.
    """
    pynvml, why = init()
    if pynvml is None:
        return {"nvml_note": why}
    info, missing = {}, []
    try:
        h = handle(pynvml, index, pci_bus_id)
        readers = {
            "nvml_name": lambda: text(pynvml.nvmlDeviceGetName(h)),
            "driver_version": lambda: text(pynvml.nvmlSystemGetDriverVersion()),
            "power_limit_w": lambda: milliwatts_to_watts(pynvml.nvmlDeviceGetEnforcedPowerLimit(h)),
            "sm_clock_max_hz": lambda: mhz_to_hz(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
            "memory_clock_max_hz": lambda: mhz_to_hz(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)),
            "temperature_c": lambda: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
            "gpu_util_pct": lambda: pynvml.nvmlDeviceGetUtilizationRates(h).gpu,
            "memory_util_pct": lambda: pynvml.nvmlDeviceGetUtilizationRates(h).memory,
            "pcie_gen": lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h),
            "pcie_width": lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(h),
            "pcie_gen_max": lambda: pynvml.nvmlDeviceGetMaxPcieLinkGeneration(h),
            "pcie_width_max": lambda: pynvml.nvmlDeviceGetMaxPcieLinkWidth(h),
        }
        for key, read in readers.items():
            try:
                info[key] = read()
            except pynvml.NVMLError as exc:
                missing.append(f"{key}: {exc}")
    except pynvml.NVMLError as exc:
        missing.append(f"device {index}: {exc}")
    finally:
        shutdown(pynvml)
    info["nvml_note"] = "; ".join(missing)
    return info


def _reasons(pynvml, h):
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        fn = getattr(pynvml, name, None)
        if fn is not None:
            try:
                return int(fn(h))
            except pynvml.NVMLError:
                return -1
    return -1


def read_sample(pynvml, h, index, t_s, host=""):
    """One sample of one GPU as a row of the sample table (fields NVML cannot read are NaN)."""
    nan = float("nan")
    row = {"source": "nvml", "host": host, "gpu": index, "timestamp_s": t_s}

    def get(key, fn, scale=1.0):
        try:
            row[key] = fn() * scale
        except pynvml.NVMLError:
            row[key] = nan

    try:
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        row["util_fraction"], row["memory_util_fraction"] = util.gpu / 100.0, util.memory / 100.0
    except pynvml.NVMLError:
        row["util_fraction"] = row["memory_util_fraction"] = nan
    try:
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        row["memory_used_bytes"], row["memory_total_bytes"] = float(mem.used), float(mem.total)
    except pynvml.NVMLError:
        row["memory_used_bytes"] = row["memory_total_bytes"] = nan
    get("power_w", lambda: pynvml.nvmlDeviceGetPowerUsage(h), MILLI)  # mW -> W
    get("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h), MILLI)
    get("temperature_c", lambda: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU))
    get("sm_clock_hz", lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM), MEGA)  # MHz -> Hz
    get("sm_clock_max_hz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM), MEGA)
    row["throttle_reasons"] = _reasons(pynvml, h)
    return row


def driver_facts(timeout_s=5.0):
    """Driver version and GPUs, from NVML or else ``nvidia-smi`` (run with ``timeout_s`` [s]).

    Returns a dict ``version`` (driver), ``cuda_driver`` (the CUDA driver API
    version, "12.4"), ``gpus`` (list of ``{index, name, capability}``), ``via``
    ("NVML", "nvidia-smi" or None) and ``error`` (why nothing was found). Never raises.
    """
    facts = {"version": None, "cuda_driver": None, "gpus": [], "via": None, "error": None}
    pynvml, why = init()
    if pynvml is not None:
        try:
            facts["version"] = text(pynvml.nvmlSystemGetDriverVersion())
            try:
                cuda = pynvml.nvmlSystemGetCudaDriverVersion()  # an encoding: 1000 x major + 10 x minor
                facts["cuda_driver"] = f"{cuda // 1000}.{cuda % 1000 // 10}"
            except pynvml.NVMLError:
                pass
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                name = text(pynvml.nvmlDeviceGetName(h))
                try:
                    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
                    capability = f"{major}.{minor}"
                except pynvml.NVMLError:
                    capability = None
                facts["gpus"].append({"index": i, "name": name, "capability": capability})
            facts["via"] = "NVML"
            return facts
        except pynvml.NVMLError as exc:
            facts["error"] = f"NVML: {exc}"
        finally:
            shutdown(pynvml)
    elif not why.startswith(LIBRARY_MISSING):
        facts["error"] = why
    out, smi_error = nvidia_smi(["--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"], timeout_s)
    if out is None:
        facts["error"] = (facts["error"] + "; " if facts["error"] else "") + smi_error \
            if smi_error == "nvidia-smi not on PATH" else smi_error
        return facts
    for i, line in enumerate(filter(None, (l.strip() for l in out.splitlines()))):
        parts = [p.strip() for p in line.split(",")]
        name, version = parts[0], parts[1] if len(parts) > 1 else None
        facts["gpus"].append({"index": i, "name": name, "capability": parts[2] if len(parts) > 2 else None})
        facts["version"] = facts["version"] or version
    facts["via"] = "nvidia-smi"
    facts["error"] = None
    return facts


def nvidia_smi(args, timeout_s=10.0):
    """Run ``nvidia-smi ARGS``: (stdout, None) or (None, why it failed). Never raises."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi not on PATH"
    try:
        done = subprocess.run([smi, *args], capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"nvidia-smi: {type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return None, f"nvidia-smi exited {done.returncode}: {(done.stderr or done.stdout).strip()[:200]}"
    return done.stdout, None
