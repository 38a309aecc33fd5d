"""Read ``nvidia-smi topo -m`` and say which GPUs talk the slow way.

The matrix gives, for every pair of devices (GPUs and NICs), the closest path
between them, best first: ``NV#`` (a bonded set of # NVLinks), ``PIX`` (at most one
PCIe bridge), ``PXB`` (several PCIe bridges, no host bridge), ``PHB`` (through a
PCIe host bridge, typically the CPU), ``NODE`` (between host bridges within one
NUMA node), ``SYS`` (across the SMP interconnect between NUMA nodes, e.g. QPI/UPI;
older drivers print ``SOC``). The columns after the devices give each GPU's CPU
and NUMA affinity.

:func:`warnings` turns that into advice: GPU pairs that cross sockets without
NVLink (the source text's rule: GPUs on different CPU sockets should talk over
NVLink), GPUs whose nearest NIC is across the socket link (GPUDirect RDMA then
crosses it too), and the NUMA binding of each GPU's processes.

References
----------
- NVIDIA, *nvidia-smi(1)*, "topo" and its legend; NVML ``nvmlGpuTopologyLevel_t``
  (INTERNAL, SINGLE, MULTIPLE, HOSTBRIDGE, NODE, SYSTEM), https://docs.nvidia.com/deploy/nvml-api/
- NCCL documentation, "Environment Variables" (``NCCL_P2P_LEVEL``: the same
  LOC/NVL/PIX/PXB/PHB/SYS path levels decide whether peer-to-peer is used).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd

from ..i18n import _

from .samples import MonitorError

__all__ = ["Topology", "parse_topology_text", "read_topology", "LINK_RANK", "LINK_WORDS"]

#: closeness of a path (lower is closer); NV# ranks 0
LINK_RANK = {"X": -1, "NV": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}
LINK_WORDS = {
    "NV": "NVLink", "PIX": "one PCIe bridge", "PXB": "several PCIe bridges", "PHB": "a PCIe host bridge (the CPU)",
    "NODE": "host bridges within one NUMA node", "SYS": "the link between CPU sockets", "SOC": "the link between CPU sockets",
}
_AFFINITY = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_CODE = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")
_EXPECTED = "X, NV# (e.g. NV12), PIX, PXB, PHB, NODE or SYS"


@dataclasses.dataclass
class Topology:
    """A parsed topology matrix.

    ``matrix``: DataFrame of link codes, devices as index and columns; ``affinity``:
    one row per GPU (``device``, ``cpu_affinity``, ``numa_affinity``, ``gpu_numa_id``);
    ``nics``: NIC label -> interface name (from the NIC legend); ``source``: file or "live".
    """

    matrix: pd.DataFrame
    affinity: pd.DataFrame
    nics: dict
    source: str = ""

    @property
    def gpus(self):
        return [d for d in self.matrix.index if d.upper().startswith("GPU")]

    @property
    def nic_devices(self):
        return [d for d in self.matrix.index if not d.upper().startswith("GPU")]

    def links(self):
        """Long table of GPU pairs: ``a``, ``b``, ``link``, ``nvlinks`` (count, 0 without NVLink), ``path``."""
        rows = []
        gpus = self.gpus
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                code = self.matrix.loc[a, b]
                kind = _kind(code)
                rows.append({"a": a, "b": b, "link": code, "nvlinks": int(code[2:]) if kind == "NV" else 0,
                             "path": LINK_WORDS.get(kind, code)})
        return pd.DataFrame(rows, columns=["a", "b", "link", "nvlinks", "path"])

    def warnings(self):
        """Advice from the matrix: list of dicts ``severity`` ("warning"|"note"), ``topic``, ``text``."""
        return topology_warnings(self)


def _kind(code):
    return "NV" if code.startswith("NV") else code


def _header_names(line):
    return re.findall(r"CPU Affinity|NUMA Affinity|GPU NUMA ID|\S+", line)


def parse_topology_text(text, source="<text>"):
    """Parse the text printed by ``nvidia-smi topo -m``.

    Raises :class:`MonitorError` naming the line and column of a cell that is not
    a link code, a row with too few cells, or a file with no matrix header.
    """
    lines = text.splitlines()
    header_at = next((i for i, line in enumerate(lines) if re.match(r"^\s*GPU0\b", line)
                      and not re.match(r"^\s*GPU0\s+X\b", line)), None)
    if header_at is None:
        raise MonitorError("no topology header found; expected the output of 'nvidia-smi topo -m' "
                           "(a line starting with the device names GPU0 GPU1 ... CPU Affinity)", source,
                           1 if text.strip() else None)
    names = _header_names(lines[header_at])
    devices = [n for n in names if n not in _AFFINITY]
    extra = [n for n in names if n in _AFFINITY]
    matrix, affinity, nics = {}, [], {}
    for lineno in range(header_at + 1, len(lines)):
        line = lines[lineno]
        if not line.strip():
            if matrix:
                break
            continue
        if line.strip().lower().startswith("legend"):
            break
        cells = line.split()
        label = cells[0]
        if label not in devices:
            raise MonitorError(f"expected a row for one of the devices in the header ({', '.join(devices)}); "
                               f"got {label!r}", source, lineno + 1, 1)
        values = cells[1:]
        if len(values) < len(devices):
            raise MonitorError(f"row {label}: expected {len(devices)} link codes ({_EXPECTED}), one per device "
                               f"in the header; got {len(values)}", source, lineno + 1)
        row = {}
        for col, (device, code) in enumerate(zip(devices, values[:len(devices)]), start=2):
            if not _CODE.match(code):
                raise MonitorError(f"row {label}, column {device}: expected a link code ({_EXPECTED}); got {code!r}",
                                   source, lineno + 1, col)
            if (device == label) != (code == "X"):
                raise MonitorError(f"row {label}, column {device}: expected 'X' exactly where a device meets "
                                   f"itself; got {code!r}", source, lineno + 1, col)
            row[device] = code
        matrix[label] = row
        if label.upper().startswith("GPU"):
            rest = values[len(devices):]
            entry = {"device": label}
            for name, value in zip(extra, rest):
                entry[name.lower().replace(" ", "_")] = value
            affinity.append(entry)
    missing = [d for d in devices if d not in matrix]
    if missing:
        raise MonitorError(f"the matrix has no row for {', '.join(missing)}; expected one row per device in "
                           "the header", source)
    for line in lines:
        match = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", line)
        if match:
            nics[match.group(1)] = match.group(2)
    frame = pd.DataFrame.from_dict(matrix, orient="index")[devices].loc[devices]
    for a in devices:
        for b in devices:
            if frame.loc[a, b] != frame.loc[b, a]:
                raise MonitorError(f"the matrix is not symmetric: {a}->{b} is {frame.loc[a, b]} but {b}->{a} is "
                                   f"{frame.loc[b, a]}", source)
    aff = pd.DataFrame(affinity, columns=["device", "cpu_affinity", "numa_affinity", "gpu_numa_id"])
    return Topology(frame, aff, nics, str(source))


def read_topology(path):
    """Read a saved ``nvidia-smi topo -m`` output, or run it when ``path`` is ``"live"``."""
    if str(path) == "live":
        from .live import run_nvidia_smi

        return parse_topology_text(run_nvidia_smi(["topo", "-m"]), "nvidia-smi topo -m")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MonitorError(f"cannot read the topology file ({exc.strerror or exc})", path) from None
    return parse_topology_text(text, path)


def _pairs_text(pairs):
    return ", ".join(f"{a}-{b}" for a, b in pairs)


def topology_warnings(topo):
    """See :meth:`Topology.warnings`."""
    out = []
    m = topo.matrix
    links = topo.links()
    far = links[links["link"].isin(["SYS", "SOC"])]
    if len(far):
        out.append({"severity": "warning", "topic": "GPU pairs across sockets",
                    "text": _("{n} GPU pair(s) talk across CPU sockets without NVLink (SYS): {pairs}. Their "
                              "all-reduces cross the inter-socket link; keep tensor-parallel groups among "
                              "NVLink-connected GPUs, or use a system whose GPUs are all NVLink-connected.").format(
                        n=len(far), pairs=_pairs_text(zip(far["a"], far["b"])))})
    mid = links[links["link"].isin(["PHB", "NODE"])]
    if len(mid):
        out.append({"severity": "note", "topic": "GPU pairs through the CPU",
                    "text": _("{n} GPU pair(s) without NVLink go through the CPU's host bridges (PHB/NODE): "
                              "{pairs}; peer-to-peer traffic between them is limited by PCIe.").format(
                        n=len(mid), pairs=_pairs_text(zip(mid["a"], mid["b"])))})
    nics = topo.nic_devices
    if nics:
        for gpu in topo.gpus:
            best = min(nics, key=lambda n: LINK_RANK.get(_kind(m.loc[gpu, n]), 9))
            code = m.loc[gpu, best]
            name = f"{best} ({topo.nics[best]})" if best in topo.nics else best
            if code in ("SYS", "SOC"):
                out.append({"severity": "warning", "topic": "GPU far from its NIC",
                            "text": _("{gpu} is far from every NIC: the nearest, {nic}, is across the CPU sockets "
                                      "(SYS). GPUDirect RDMA traffic of this GPU crosses the socket link; give each "
                                      "socket its own NIC, on the GPUs' PCIe switch (PIX/PXB).").format(gpu=gpu,
                                                                                                        nic=name)})
            elif code in ("PHB", "NODE"):
                out.append({"severity": "note", "topic": "GPU far from its NIC",
                            "text": _("{gpu}'s nearest NIC, {nic}, is reached through the CPU ({code}), not a "
                                      "shared PCIe switch.").format(gpu=gpu, nic=name, code=code)})
    aff = topo.affinity
    if len(aff) and aff["numa_affinity"].notna().any():
        known = aff[aff["numa_affinity"].fillna("N/A") != "N/A"]
        groups = known.groupby("numa_affinity", sort=True)
        if groups.ngroups > 1:
            parts = []
            for node, part in groups:
                cpus = part["cpu_affinity"].iloc[0]
                parts.append(_("{devices} -> NUMA node {node} (CPUs {cpus}; {command})").format(
                    devices=", ".join(part["device"]), node=node, cpus=cpus,
                    command=f"numactl --cpunodebind={node} --membind={node}"))
            out.append({"severity": "note", "topic": "NUMA binding",
                        "text": _("the GPUs hang off different NUMA nodes; bind each GPU's process (and its data "
                                  "loader) to that GPU's node: {bindings}.").format(bindings="; ".join(parts))})
    return out
