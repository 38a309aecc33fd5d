"""The one NVML / nvidia-smi layer: the probes, the ecosystem audit and the monitor use it.

* :func:`init` / :func:`shutdown` -- NVML through ``pynvml`` (package
  ``nvidia-ml-py``); never raises, says why NVML is unavailable;
* :func:`device_info` -- static facts of one GPU (power limit, max clocks, PCIe);
* :func:`read_sample` -- one sample of one GPU in the monitor's units;
* :func:`sample` -- sample every GPU for a duration, or while a command runs;
* :func:`nvidia_smi` / :func:`run_nvidia_smi` -- the ``nvidia-smi`` binary, with a timeout.

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
import socket
import subprocess
import time

from .samples import MonitorError

__all__ = ["init", "shutdown", "reason", "handle", "text", "device_info", "device_count", "read_sample",
           "sample", "nvidia_smi", "run_nvidia_smi", "LIBRARY_MISSING", "INSTALL_HINT"]

INSTALL_HINT = "install the probe extra: pip install 'accelkit[probe]' (or torch==2.13.0 on this kind of machine)"
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
            "power_limit_w": lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
            "sm_clock_max_hz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM) * 1e6,
            "memory_clock_max_hz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM) * 1e6,
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
    get("power_w", lambda: pynvml.nvmlDeviceGetPowerUsage(h), 1e-3)
    get("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h), 1e-3)
    get("temperature_c", lambda: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU))
    get("sm_clock_hz", lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM), 1e6)
    get("sm_clock_max_hz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM), 1e6)
    row["throttle_reasons"] = _reasons(pynvml, h)
    return row


def sample(seconds=None, command=None, interval_s=1.0, indices=None, on_sample=None):
    """Sample every NVIDIA GPU (or ``indices``) every ``interval_s`` seconds.

    Either for ``seconds``, or while ``command`` (a list of program arguments) runs;
    with both, until whichever ends first. Returns ``(samples, returncode)``: the
    sample table (see :mod:`accelkit.monitor.samples`; ``timestamp_s`` in seconds
    since the Unix epoch) and the command's exit status (None without a command).

    Raises :class:`MonitorError` when NVML is not available (no NVIDIA driver, or
    ``nvidia-ml-py`` missing), when a command cannot be started, or on bad arguments.
    """
    from .samples import tidy

    if seconds is None and not command:
        raise MonitorError("give a duration (seconds) or a command to sample while it runs")
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0):
        raise MonitorError(f"seconds must be a duration > 0; got {seconds!r}")
    if not (isinstance(interval_s, (int, float)) and interval_s > 0):
        raise MonitorError(f"interval_s must be a time in seconds > 0; got {interval_s!r}")
    pynvml, why = init()
    if pynvml is None:
        raise MonitorError(f"cannot sample the GPUs here: {why}. Read a log (--log) or a Prometheus server "
                           "(--prometheus) instead")
    rows, process = [], None
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        wanted = list(range(count)) if indices is None else list(indices)
        if not wanted:
            raise MonitorError("NVML sees no NVIDIA GPU on this machine")
        bad = [i for i in wanted if not 0 <= int(i) < count]
        if bad:
            raise MonitorError(f"no GPU {bad[0]} here; NVML sees GPUs 0-{count - 1}")
        handles = {i: pynvml.nvmlDeviceGetHandleByIndex(i) for i in wanted}
        names = {i: text(pynvml.nvmlDeviceGetName(h)) for i, h in handles.items()}
        uuids = {}
        for i, h in handles.items():
            try:
                uuids[i] = text(pynvml.nvmlDeviceGetUUID(h))
            except pynvml.NVMLError:
                uuids[i] = ""
        host = socket.gethostname()
        if command:
            try:
                process = subprocess.Popen(list(command))
            except OSError as exc:
                raise MonitorError(f"cannot start the command {command[0]!r}: {exc.strerror or exc}") from None
        start = time.monotonic()
        while True:
            now = time.time()
            for i, h in handles.items():
                row = read_sample(pynvml, h, i, now, host)
                row["name"], row["uuid"] = names[i], uuids[i]
                rows.append(row)
                if on_sample is not None:
                    on_sample(row)
            elapsed = time.monotonic() - start
            if process is not None and process.poll() is not None:
                break
            if seconds is not None and elapsed >= seconds:
                break
            wait = interval_s if seconds is None else min(interval_s, max(0.0, seconds - elapsed))
            if process is not None:
                try:
                    process.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    pass
            else:
                time.sleep(wait)
    except KeyboardInterrupt:
        pass
    finally:
        shutdown(pynvml)
    returncode = None
    if process is not None:
        if process.poll() is None:
            if seconds is not None:
                returncode = None  # still running: the duration ended first; leave it running
            else:
                process.terminate()
                returncode = process.wait()
        else:
            returncode = process.returncode
    frame = tidy(rows)
    frame.attrs["path"] = "live NVML samples"
    return frame, returncode


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


def run_nvidia_smi(args, timeout_s=10.0):
    """Like :func:`nvidia_smi`, raising :class:`MonitorError` with the reason."""
    out, why = nvidia_smi(args, timeout_s)
    if out is None:
        raise MonitorError(f"cannot run 'nvidia-smi {' '.join(args)}' here ({why}); run it on the GPU machine, "
                           "save its output to a file and pass the file instead")
    return out
