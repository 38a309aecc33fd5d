"""Facts of this machine, in one place: torch devices, NVML and nvidia-smi, the host.

The probes (:mod:`accelkit.probes`), the ecosystem audit
(:func:`accelkit.ecosystem.audit_local`) and the monitor (:mod:`accelkit.monitor`)
read the machine they run on only through these modules:

* :mod:`~accelkit.local.host` -- host memory (``/proc/meminfo``, ``os.sysconf``),
  CPU model, usable cores, last-level cache, load, ROCm install, Jetson marker;
  no psutil;
* :mod:`~accelkit.local.devices` -- the torch devices (CUDA, ROCm through torch's
  CUDA API, Apple MPS, CPU): which exist, which to use, free memory, and what the
  installed torch was built for (read from ``torch/version.py`` without importing
  torch, or asked of an imported torch);
* :mod:`~accelkit.local.nvml` -- NVML through ``pynvml`` and the ``nvidia-smi``
  binary: static facts of a GPU, one sample of a GPU, the driver and its GPUs.

Nothing here raises because a driver, a binary or torch is missing: each reader
says why a fact is unknown (torch-using readers raise
:class:`~accelkit.local.devices.ProbeUnavailable` with the install hint, as the
probes document). Nothing touches the network; torch and pynvml are imported
inside the functions, so ``import accelkit.local`` is cheap.
"""

__all__ = ["host", "devices", "nvml", "INSTALL_HINT"]

#: how to get what the torch and NVML readers need (the ``probe`` extra: torch, nvidia-ml-py)
INSTALL_HINT = "install the probe extra: pip install 'accelkit[probe]' (or torch==2.13.0 on this kind of machine)"
