"""The torch devices of this machine, and what the installed torch was built for.

* :func:`import_torch` imports torch or raises :class:`ProbeUnavailable` with the install
  hint; :func:`torch_available` asks without raising;
* :func:`resolve_device` / :func:`available_devices` -- CUDA GPUs (NVIDIA, and AMD
  ROCm through torch's CUDA API), Apple MPS, the CPU, best first;
* :func:`free_memory_bytes` -- free memory of a device now [bytes];
* :func:`torch_facts` -- the build (version, CUDA, HIP) read from
  ``torch/version.py`` as text without importing torch, or, when asked, what an
  imported torch sees (devices, compute capability, cuDNN, MPS, XPU).

Reference: PyTorch documentation, *CUDA semantics* and ``torch.cuda``
(``is_available``, ``device_count``, ``get_device_properties``, ``mem_get_info``),
*MPS backend*, ``torch.version``.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from . import INSTALL_HINT
from .host import available_memory_bytes

__all__ = ["ProbeUnavailable", "NOT_INSTALLED", "import_torch", "torch_available", "resolve_device", "mps_available",
           "available_devices", "device_str", "free_memory_bytes", "torch_spec", "torch_build_static",
           "torch_facts"]

NOT_INSTALLED = "not installed"


class ProbeUnavailable(RuntimeError):
    """The probes cannot run here: torch is missing, or the asked-for device is absent."""


def import_torch():
    """The torch module; raises :class:`ProbeUnavailable` (with the install hint) without it."""
    try:
        import torch
    except ImportError as exc:  # also `sys.modules["torch"] = None`
        raise ProbeUnavailable(f"PyTorch is not installed ({exc}), so the probes cannot run; {INSTALL_HINT}") from None
    return torch


def torch_available():
    """True when torch imports (imports it: ~1-2 s the first time)."""
    try:
        import_torch()
    except ProbeUnavailable:
        return False
    return True


def mps_available(torch):
    """True when this torch build and machine have Apple MPS."""
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def resolve_device(device=None):
    """The torch device to probe.

    ``None``, ``""`` or ``"auto"`` pick the best available: the first CUDA/ROCm GPU,
    else Apple MPS, else the CPU. Raises ``ValueError`` for a malformed name and
    :class:`ProbeUnavailable` for a device this machine does not have.
    """
    torch = import_torch()
    if device is None or (isinstance(device, str) and device.strip().lower() in ("", "auto")):
        if torch.cuda.is_available():
            return torch.device("cuda", 0)
        if mps_available(torch):
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device.strip() if isinstance(device, str) else device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(
            f"device must be a torch device such as 'cpu', 'cuda:0' or 'mps'; got {device!r}"
        ) from None
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ProbeUnavailable(
                f"device={device!r}: torch {torch.__version__} sees no CUDA/ROCm GPU "
                "(torch.cuda.is_available() is False); leave device empty to probe the CPU"
            )
        index = 0 if dev.index is None else dev.index
        count = torch.cuda.device_count()
        if index >= count:
            raise ValueError(f"device={device!r}: this machine has {count} GPU(s), cuda:0 to cuda:{count - 1}")
        return torch.device("cuda", index)
    if dev.type == "mps":
        if not mps_available(torch):
            raise ProbeUnavailable(f"device={device!r}: Apple MPS is not available in this torch build or machine")
        return torch.device("mps")
    raise ValueError(f"device={device!r}: the probes support cpu, cuda[:N] (NVIDIA or AMD ROCm) and mps")


def available_devices():
    """Device names the probes can use here, best first (``['cuda:0', …, 'cpu']``)."""
    torch = import_torch()
    names = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    if mps_available(torch):
        names.append("mps")
    return names + ["cpu"]


def device_str(device):
    """A torch device as its name: ``cuda:0``, ``mps``, ``cpu``."""
    return f"{device.type}:{device.index}" if device.index is not None else device.type


def free_memory_bytes(device=None):
    """Free memory on ``device`` now, in bytes.

    GPU: ``torch.cuda.mem_get_info``; CPU and MPS (unified memory): the host's
    ``MemAvailable`` from /proc/meminfo, else ``os.sysconf('SC_AVPHYS_PAGES')`` x
    page size. ``None`` when nothing can tell.
    """
    torch = import_torch()
    device = resolve_device(device)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    return available_memory_bytes()


# --- what torch was built for (the ecosystem audit) ------------------------------------

def torch_spec():
    """torch's import spec without importing it (None if absent or hidden)."""
    if "torch" in sys.modules and sys.modules["torch"] is None:
        return None
    try:
        return importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None


def torch_build_static(spec):
    """``__version__``, ``cuda``, ``hip``, ``xpu`` from torch/version.py, read as text (no import)."""
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        path = Path(folder) / "version.py"
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        found = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                name, value = node.target.id, node.value
            else:
                continue
            if name in ("__version__", "cuda", "hip", "xpu"):
                try:
                    found[name] = ast.literal_eval(value)
                except ValueError:
                    pass
        return found
    return None


def torch_facts(inspect_torch):
    """What torch was built for and what it sees, as a dict; never raises.

    Keys: ``installed, how`` (imported, or read from version.py), ``version, cuda,
    hip, cudnn, cuda_available, device_count, devices`` (list of ``{index, name,
    capability}``), ``mps_available, xpu_available, error`` (``None`` / ``[]``
    where unknown or not inspected). ``inspect_torch``: ``True`` imports torch if
    installed; ``False`` never does; ``"auto"`` only uses a torch already imported.
    See :func:`accelkit.ecosystem.audit_local`.
    """
    facts = {
        "installed": False, "how": None, "version": None, "cuda": None, "hip": None, "cudnn": None,
        "cuda_available": None, "device_count": None, "devices": [], "mps_available": None,
        "xpu_available": None, "error": None,
    }
    spec = torch_spec()
    if spec is None:
        facts["error"] = NOT_INSTALLED
        return facts
    facts["installed"] = True
    if inspect_torch == "auto":
        inspect_torch = "torch" in sys.modules
    if not inspect_torch:
        static = torch_build_static(spec)
        if static is None:
            facts["error"] = "torch/version.py not readable"
            return facts
        facts["how"] = "read torch/version.py (torch not imported)"
        facts["version"] = static.get("__version__")
        facts["cuda"], facts["hip"] = static.get("cuda"), static.get("hip")
        return facts
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken build
        facts["error"] = f"import failed: {type(exc).__name__}: {exc}"
        return facts
    facts["how"] = "imported torch"
    facts["version"] = getattr(torch, "__version__", None)
    version = getattr(torch, "version", None)
    facts["cuda"] = getattr(version, "cuda", None)
    facts["hip"] = getattr(version, "hip", None)
    try:
        facts["cuda_available"] = bool(torch.cuda.is_available())
        facts["device_count"] = int(torch.cuda.device_count()) if facts["cuda_available"] else 0
        for i in range(facts["device_count"]):
            major, minor = torch.cuda.get_device_capability(i)
            facts["devices"].append({"index": i, "name": torch.cuda.get_device_name(i),
                                     "capability": f"{major}.{minor}"})
        if facts["cuda"] or facts["hip"]:
            cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
            facts["cudnn"] = str(cudnn) if cudnn else None
    except Exception as exc:
        facts["error"] = f"device query failed: {type(exc).__name__}: {exc}"
    try:
        facts["mps_available"] = bool(torch.backends.mps.is_available())
    except Exception:
        facts["mps_available"] = False
    try:
        facts["xpu_available"] = bool(hasattr(torch, "xpu") and torch.xpu.is_available())
    except Exception:
        facts["xpu_available"] = False
    return facts
