"""Live samples of this machine's GPUs: NVML for a duration or while a command runs.

:func:`sample` loops over :func:`accelkit.local.nvml.read_sample` (the shared NVML
layer of the probes, the ecosystem audit and the monitor) and returns the monitor's
sample table; :func:`run_nvidia_smi` runs the ``nvidia-smi`` binary for the monitor
and raises :class:`~accelkit.monitor.samples.MonitorError` with the reason.

Reference: NVIDIA, *NVML API Reference Guide* (Device Queries),
https://docs.nvidia.com/deploy/nvml-api/ ; *nvidia-smi(1)*, https://docs.nvidia.com/deploy/nvidia-smi/
"""

from __future__ import annotations

import socket
import subprocess
import time

from ..local.nvml import init, nvidia_smi, read_sample, shutdown, text
from .samples import MonitorError

__all__ = ["sample", "run_nvidia_smi"]


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


def run_nvidia_smi(args, timeout_s=10.0):
    """Like :func:`accelkit.local.nvml.nvidia_smi`, raising :class:`MonitorError` with the reason."""
    out, why = nvidia_smi(args, timeout_s)
    if out is None:
        raise MonitorError(f"cannot run 'nvidia-smi {' '.join(args)}' here ({why}); run it on the GPU machine, "
                           "save its output to a file and pass the file instead")
    return out
