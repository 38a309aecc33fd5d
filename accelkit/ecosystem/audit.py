"""What is installed on this machine, and what it means for each software stack.

:func:`audit_local` reads package versions from metadata (never by importing),
and the machine's facts through :mod:`accelkit.local` (what torch was built for
and sees, the NVIDIA driver by NVML or nvidia-smi, ROCm, Jetson);
:func:`audit_table` lays it out as two tidy frames.

Reference: source article (seed 003), pitfall 2 "compatibility blind spot".
"""

from __future__ import annotations

import importlib.metadata as _metadata
import platform
import sys

import pandas as pd

from ..catalog import SOFTWARE_STACKS
from ..local import devices, host, nvml
from ..local.devices import NOT_INSTALLED
from ..i18n import N_, _
from .vocabulary import STACK_LABELS

__all__ = ["AUDIT_PACKAGES", "NOT_INSTALLED", "audit_local", "audit_table"]

#: package keys (import names) -> distribution names read with importlib.metadata (never
#: imported for a version); each distribution is its key with "_" written "-"
AUDIT_PACKAGES = {key: key.replace("_", "-") for key in (
    "torch", "torchvision", "tensorflow", "jax", "jaxlib", "onnxruntime", "onnxruntime-gpu",
    "onnxruntime-openvino", "openvino", "tensorrt", "coremltools", "intel_extension_for_pytorch",
    "torch_npu", "torch_xla", "libtpu", "habana_torch_plugin", "poptorch", "torch_mlu", "hailort",
    "pycoral", "tflite_runtime", "mindspore", "torch_neuronx", "vllm", "nvidia-ml-py",
)}

#: what a stack needs here, in words (package keys of AUDIT_PACKAGES)
_STACK_PACKAGES = {
    "xla": ("torch_xla", "libtpu", "jax"),
    "gaudi": ("habana_torch_plugin",),
    "cann": ("torch_npu", "mindspore"),
    "openvino": ("openvino", "onnxruntime-openvino"),
    "oneapi": ("intel_extension_for_pytorch",),
    "coreml": ("coremltools",),
    "poplar": ("poptorch",),
    "cambricon": ("torch_mlu",),
    "hailo": ("hailort",),
    "edgetpu": ("pycoral", "tflite_runtime"),
    "neuron": ("torch_neuronx",),
}


def _dist_version(dist):
    try:
        return _metadata.version(dist)
    except _metadata.PackageNotFoundError:
        return NOT_INSTALLED
    except Exception:  # a broken install must not break the audit
        return NOT_INSTALLED


def _onnxruntime_providers(packages, probe):
    if not any(packages[k] != NOT_INSTALLED for k in ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino")):
        return None
    if not probe:
        return None
    try:
        import onnxruntime

        return list(onnxruntime.get_available_providers())
    except Exception:
        return None

def _gpu_list(gpus):
    return ", ".join(_("{gpu} (compute capability {capability})").format(gpu=g["name"], capability=g["capability"] or "?")
                     for g in gpus)


def _stack_meaning(stack, packages, torch_facts, driver, providers, system):
    """(status, reason) of one stack on this machine: ready / partly / not here."""
    t = torch_facts
    imported = t["how"] == "imported torch"
    if stack == "cuda":
        gpu = driver["version"]
        if t["cuda"] and imported:
            if t["cuda_available"]:
                return "ready", _("torch {version} built for CUDA {cuda} sees {n} GPU(s): {gpus}").format(
                    version=t["version"], cuda=t["cuda"], n=t["device_count"], gpus=_gpu_list(t["devices"]))
            return "partly", (_("torch {version} is a CUDA {cuda} build but sees no GPU (NVIDIA driver {driver})")
                              if gpu else
                              _("torch {version} is a CUDA {cuda} build but sees no GPU; no NVIDIA driver found")
                              ).format(version=t["version"], cuda=t["cuda"], driver=gpu)
        if t["cuda"]:
            if gpu and driver["gpus"]:
                return "ready", _("torch {version} is built for CUDA {cuda} and NVIDIA driver {driver} shows {n} "
                                  "GPU(s): {gpus} (torch not imported to confirm; chapter 08 measures it)").format(
                    version=t["version"], cuda=t["cuda"], driver=gpu, n=len(driver["gpus"]),
                    gpus=_gpu_list(driver["gpus"]))
            return "partly", _("torch {version} is a CUDA {cuda} build but no NVIDIA driver was found").format(
                version=t["version"], cuda=t["cuda"])
        if t["installed"] and t["version"] and not t["hip"]:
            return ("partly" if gpu else "not here"), (
                _("torch {version} is a CPU-only build: the CUDA stack is not usable here yet; NVIDIA driver {driver} "
                  "is present, so install a CUDA build of torch") if gpu else
                _("torch {version} is a CPU-only build: the CUDA stack is not usable here yet; no NVIDIA driver found "
                  "either")).format(version=t["version"], driver=gpu)
        if gpu:
            return "partly", _("NVIDIA driver {driver} shows {n} GPU(s) ({gpus}) but no CUDA build of torch is "
                               "installed").format(driver=gpu, n=len(driver["gpus"]), gpus=_gpu_list(driver["gpus"]))
        return "not here", _("no NVIDIA driver and no CUDA build of torch")
    if stack == "rocm":
        if t["hip"] and imported:
            if t["cuda_available"]:
                return "ready", _("torch {version} built for ROCm (HIP {hip}) sees {n} GPU(s)").format(
                    version=t["version"], hip=t["hip"], n=t["device_count"])
            return "partly", _("torch {version} is a ROCm (HIP {hip}) build but sees no GPU").format(
                version=t["version"], hip=t["hip"])
        if t["hip"]:
            return "partly", _("torch {version} is a ROCm (HIP {hip}) build (torch not imported to check a GPU)").format(
                version=t["version"], hip=t["hip"])
        rocm = host.rocm_version()
        if rocm:
            return "partly", _("ROCm {rocm} is installed under /opt/rocm but torch is not a ROCm build").format(rocm=rocm)
        return "not here", _("no ROCm build of torch and no /opt/rocm")
    if stack == "mps":
        if t["mps_available"]:
            return "ready", _("torch {version} can use the Apple GPU (mps)").format(version=t["version"])
        if system["platform"] == "darwin" and system["machine"] == "arm64" and t["installed"] and not imported:
            return "partly", _("torch {version} on Apple silicon (torch not imported to confirm mps)").format(
                version=t["version"])
        return "not here", (_("torch does not report an MPS device (platform: {platform})") if imported else
                            _("no Apple-silicon torch here (platform: {platform})")).format(platform=system["platform"])
    if stack == "oneapi" and t["xpu_available"]:
        return "ready", _("torch {version} sees an Intel GPU (xpu)").format(version=t["version"])
    if stack == "jetpack":
        if host.is_jetson():
            return "ready", _("this is a Jetson (/etc/nv_tegra_release present)")
        return "not here", _("not a Jetson (no /etc/nv_tegra_release)")
    keys = _STACK_PACKAGES.get(stack, ())
    found = [f"{k} {packages[k]}" for k in keys if packages.get(k, NOT_INSTALLED) != NOT_INSTALLED]
    if stack == "openvino" and providers and "OpenVINOExecutionProvider" in providers:
        found.append("ONNX Runtime OpenVINO EP")
    if found:
        extra = {"openvino": " " + _("(its CPU plugin runs on this machine's CPU)"),
                 "coreml": " " + _("(Core ML itself runs only on Apple OSes; platform: {platform})").format(
                     platform=system["platform"]),
                 "xla": " " + _("(TPUs are reachable only on Cloud TPU VMs)")}.get(stack, "")
        return "partly", _("software installed: {found}{extra}; no device check was run").format(
            found=", ".join(found), extra=extra)
    wanted = ", ".join(keys) if keys else _("its vendor SDK")
    return "not here", _("not installed: {wanted}").format(wanted=wanted)


def audit_local(inspect_torch="auto", probe_onnxruntime=True, timeout_s=5.0):
    """What is installed on this machine, and what it means for each software stack.

    Versions come from package metadata (``importlib.metadata``), never from
    importing a heavy package. What torch was built for (``cuda``, ``hip``) is read
    from ``torch/version.py`` as text; torch itself is imported only when asked
    (or already imported), to read device availability, names, compute capability
    and the cuDNN version. The NVIDIA driver, GPU names and compute capabilities
    come from NVML (``pynvml``; :class:`pynvml.NVMLError` caught) or else
    ``nvidia-smi`` (run with a timeout). Nothing here needs a network.

    Parameters
    ----------
    inspect_torch : bool or "auto"
        ``True`` imports torch if installed (~2-4 s); ``False`` never does;
        ``"auto"`` (default) only uses a torch that is already imported.
    probe_onnxruntime : bool
        Import onnxruntime (if installed) to list its execution providers.
    timeout_s : float
        Limit for the ``nvidia-smi`` call [s].

    Returns
    -------
    dict
        Always the same keys, whatever is installed:

        * ``system``: ``python``, ``platform``, ``machine``;
        * ``packages``: every key of :data:`AUDIT_PACKAGES` -> version or ``"not installed"``;
        * ``onnxruntime_providers``: list, or ``None`` without onnxruntime;
        * ``torch``: ``installed, how`` (imported or read from version.py), ``version,
          cuda, hip, cudnn, cuda_available, device_count, devices`` (list of
          ``{index, name, capability}``), ``mps_available, xpu_available, error``
          (``None`` / ``[]`` where unknown or not inspected);
        * ``nvidia_driver``: ``version, cuda_driver, gpus, via, error``;
        * ``rocm``: ``version`` (``/opt/rocm``), ``hip`` (torch's build);
        * ``stacks``: every catalogue stack id -> ``{"status": "ready" | "partly" |
          "not here", "reason"}`` -- e.g. a CPU-only torch build means the CUDA stack
          is not usable here yet.
    """
    if inspect_torch not in (True, False, "auto"):
        raise ValueError(f"inspect_torch must be True, False or 'auto'; got {inspect_torch!r}")
    system = {"python": platform.python_version(), "platform": sys.platform, "machine": platform.machine()}
    packages = {key: _dist_version(dist) for key, dist in AUDIT_PACKAGES.items()}
    providers = _onnxruntime_providers(packages, probe_onnxruntime)
    torch_facts = devices.torch_facts(inspect_torch)
    driver = nvml.driver_facts(timeout_s)
    rocm = {"version": host.rocm_version(), "hip": torch_facts["hip"]}
    stacks = {}
    for stack in SOFTWARE_STACKS:
        status, reason = _stack_meaning(stack, packages, torch_facts, driver, providers, system)
        stacks[stack] = {"status": status, "reason": reason}
    return {
        "system": system,
        "packages": packages,
        "onnxruntime_providers": providers,
        "torch": torch_facts,
        "nvidia_driver": driver,
        "rocm": rocm,
        "stacks": stacks,
    }


#: why no NVIDIA driver was found (accelkit.local.nvml.driver_facts), as people read it; the tool's own
#: message in the parentheses stays as the tool wrote it
_DRIVER_ERRORS = (
    (r"NVML not available \((?P<detail>[^)]*)\): no NVIDIA driver on this machine",
     N_("NVML not available ({detail}): no NVIDIA driver on this machine")),
    (r"nvidia-smi not on PATH", N_("nvidia-smi not on PATH")),
)


def _driver_error(text):
    """The driver facts' ``error`` in the language in use, part by part (a part of unknown form is kept)."""
    import re

    parts = []
    for part in str(text).split("; "):
        for pattern, words in _DRIVER_ERRORS:
            found = re.fullmatch(pattern, part)
            if found:
                part = _(words).format(**found.groupdict())
                break
        parts.append(part)
    return "; ".join(parts)


def audit_table(audit=None):
    """The audit as two tidy frames: ``(facts, stacks)``.

    ``facts`` has columns ``section, item, value`` (text; ``—`` where unknown);
    ``stacks`` has ``stack, label, status, reason``.
    """
    audit = audit_local() if audit is None else audit

    def text(value):
        if value is None or value == []:
            return "—"
        if isinstance(value, list):
            return "; ".join(", ".join(f"{k} {v}" for k, v in d.items() if k != "index") if isinstance(d, dict)
                             else str(d) for d in value)
        return str(value)

    rows = [("system", k, text(v)) for k, v in audit["system"].items()]
    rows += [("package", k, text(v)) for k, v in audit["packages"].items()]
    rows.append(("onnxruntime", "providers", text(audit["onnxruntime_providers"])))
    rows += [("torch", k, text(v)) for k, v in audit["torch"].items()]
    rows += [("nvidia driver", k, _driver_error(v) if k == "error" and v else text(v))
             for k, v in audit["nvidia_driver"].items()]
    rows += [("rocm", k, text(v)) for k, v in audit["rocm"].items()]
    facts = pd.DataFrame(rows, columns=["section", "item", "value"])
    stacks = pd.DataFrame(
        [(s, STACK_LABELS.get(s, s), v["status"], v["reason"]) for s, v in audit["stacks"].items()],
        columns=["stack", "label", "status", "reason"],
    )
    return facts, stacks
