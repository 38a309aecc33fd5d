"""Probe results without torch: the result frame's vocabulary, JSON, shipped examples,
calibration, and tables for display.

Everything here works on a result frame (from :func:`accelkit.probes.run_all` or
:func:`load_results`) and imports neither torch nor anything that does, so the UI
and the projections can read a person's measurements on a machine without torch.

* :data:`COLUMNS` -- the columns of every probe result frame, in order;
  :data:`MATMUL_DTYPES` and :data:`PRECISION_MODES` -- the formats probed;
* :func:`save_results` / :func:`load_results` -- JSON, never overwritten unless asked;
  :func:`example_results` / :func:`load_example_results` -- ``data/probe_results``;
* :func:`calibration` -- measured/datasheet ratios for the projections;
  :func:`calibrated_utilization` -- one of them, with its source in words;
* :func:`precision_table` -- the precision probe pivoted, one row per (model, dtype);
* :func:`format_value` / :func:`display_table` -- SI prefixes for people; :func:`note_text` -- a saved
  note in the language in use.

Units are SI throughout: FLOP/s (OP/s for integer formats), bytes/s, seconds, watts.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..i18n import N_, _
from ..projection.calibration import calibration  # noqa: F401 (re-exported: probes.calibration)
from ..vocabulary import MATMUL_DTYPES
from ..numbers import SI_PREFIXES
from ..units import MILLI, PETA, s_to_ms, seconds_to_us

__all__ = ["COLUMNS", "MATMUL_DTYPES", "PRECISION_MODES", "RESULTS_FORMAT", "RESULTS_VERSION", "save_results",
           "results_json", "load_results", "results_from_text", "example_results", "load_example_results", "calibration", "calibrated_utilization",
           "precision_table", "format_value", "display_table", "note_text"]

#: columns of every probe result frame, in order
COLUMNS = [
    "probe", "dtype", "shape", "measured", "unit", "datasheet", "ratio",
    "device", "device_name", "torch_version", "timestamp", "note",
]

#: number formats the matmul probe tries, in order

#: modes of the precision probe, in order (fp32 is the reference)
PRECISION_MODES = ("fp32", "bf16", "fp16", "int8")

RESULTS_FORMAT = "accelkit-probe-results"
RESULTS_VERSION = 1


def _now():
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# --- JSON ---------------------------------------------------------------------------

def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _records(frame):
    return [_plain(r) for r in frame.to_dict(orient="records")]


def save_results(frame, path, overwrite=False, label=None):
    """Write probe results to JSON; returns the path.

    The file holds ``format``, ``version``, a ``header`` (machine description,
    torch version, date, mode, ``label``), the ``inventory`` and the ``results``
    rows (NaN written as null). An existing file is never replaced unless
    ``overwrite=True``: ``FileExistsError`` names it. ``label`` describes the
    machine in words ("2-core VM, CPU only").
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be the DataFrame returned by run_all; got {type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame is missing the column(s) {', '.join(missing)}; expected the output of run_all")
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise ValueError(f"path must end in .json; got {str(path)!r}")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; pass overwrite=True (accelkit probe --force) to replace it")
    text = results_json(frame, label=label)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w" if overwrite else "x", encoding="utf-8") as handle:
        handle.write(text)
    return path


def results_json(frame, label=None):
    """The text :func:`save_results` writes (for a download: no file is written)."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be the DataFrame returned by run_all; got {type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame is missing the column(s) {', '.join(missing)}; expected the output of run_all")
    header = dict(frame.attrs.get("header") or {})
    if not header:
        first = frame.iloc[0] if len(frame) else {}
        header = {"device": first.get("device", ""), "device_name": first.get("device_name", ""),
                  "torch_version": first.get("torch_version", ""), "date": _now(), "machine": {}}
    if label is not None:
        header["label"] = str(label)
    header.setdefault("saved", _now())
    payload = {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "header": _plain(header),
        "inventory": frame.attrs.get("inventory", []),
        "utilization_samples": _plain(frame.attrs.get("utilization_samples", [])),
        "columns": COLUMNS,
        "results": _records(frame[COLUMNS]),
    }
    return json.dumps(payload, indent=1, allow_nan=False) + "\n"


def load_results(path):
    """Read a JSON file written by :func:`save_results` into a DataFrame.

    ``attrs["header"]``, ``attrs["inventory"]``, ``attrs["utilization_samples"]``
    and ``attrs["source"]`` (the file) carry the rest. Needs no torch.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"probe results file not found: {path}")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"path={str(path)!r} is not a JSON file of probe results ({exc})") from None
    return _results_frame(payload, f"path={str(path)!r}", str(path))


def results_from_text(text, name="upload.json"):
    """:func:`load_results` for a file's text already in memory (an upload); ``name`` is only shown."""
    shown = repr(str(name)[:40])
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{shown} is not a JSON file of probe results (line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg})") from None
    return _results_frame(payload, shown, str(name)[:80])


def _results_frame(payload, shown, source):
    if not isinstance(payload, dict) or payload.get("format") != RESULTS_FORMAT:
        raise ValueError(f"{shown} is not an accelkit probe results file (expected format "
                         f"{RESULTS_FORMAT!r}, written by accelkit probe --json)")
    if not isinstance(payload.get("results", []), list):
        raise ValueError(f"{shown}: field 'results' should be a list of rows")
    frame = pd.DataFrame(payload.get("results", []))
    for col in COLUMNS:
        if col not in frame.columns:
            frame[col] = np.nan if col in ("measured", "datasheet", "ratio") else ""
    frame = frame[COLUMNS].copy()
    for col in ("measured", "datasheet", "ratio"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    for col in ("probe", "dtype", "shape", "unit", "device", "device_name", "torch_version", "timestamp", "note"):
        frame[col] = frame[col].fillna("").astype(str)
    frame.attrs["header"] = payload.get("header", {})
    frame.attrs["inventory"] = payload.get("inventory", [])
    frame.attrs["utilization_samples"] = payload.get("utilization_samples", [])
    frame.attrs["source"] = source
    return frame


def example_results():
    """Paths of the shipped example results (``data/probe_results/*.json``), sorted."""
    from ..catalog import data_path

    folder = data_path("probe_results")
    return sorted(folder.glob("*.json")) if folder.exists() else []


def load_example_results(name=None):
    """The shipped example results as a DataFrame (see :func:`load_results`).

    ``name``: a file name in ``data/probe_results`` (default: the first GPU result
    if there is one, else the first file). Raises ``FileNotFoundError`` when no
    example results exist.
    """
    paths = example_results()
    if not paths:
        raise FileNotFoundError("no example probe results in data/probe_results/ (run accelkit probe --json FILE)")
    if name:
        chosen = [p for p in paths if p.name == name or p.stem == name]
        if not chosen:
            raise FileNotFoundError(f"name={name!r}: no such example; available: {', '.join(p.name for p in paths)}")
        return load_results(chosen[0])
    frames = [load_results(p) for p in paths]
    gpu = [f for f in frames if str(f.attrs["header"].get("device", "")).startswith("cuda")]
    return (gpu or frames)[0]


# --- calibration --------------------------------------------------------------------

def calibrated_utilization(results, precision="bf16", default=None):
    """``(utilisation, source text)`` for a projection at ``precision``.

    The measured/datasheet matmul ratio at ``precision`` from ``results`` (a probe
    result frame or a :func:`calibration` frame). Falls back to ``default`` with a
    text saying why when the ratio is unknown (device not in the catalogue, dtype
    not measured).
    """
    calib = results if "quantity" in results.columns else calibration(results)
    row = calib[calib["precision"] == precision]
    if row.empty or not np.isfinite(row["ratio"].iloc[0]):
        why = "not measured" if row.empty else "no datasheet figure to compare with"
        return default, f"default utilisation ({precision} {why} in {calib['source'].iloc[0] if len(calib) else 'the results'})"
    r = row.iloc[0]
    return float(r["ratio"]), f"measured {precision} matmul on {r['device_name']}: {r['ratio']:.0%} of datasheet ({r['source']})"


# --- tables -------------------------------------------------------------------------

def precision_table(results):
    """One row per (model, dtype): time per batch [s], speed-up vs fp32, errors, note.

    Works on any probe result frame (live or loaded); no torch needed.
    """
    data = results[results["probe"].astype(str).str.startswith("precision_")]
    columns = ["model", "dtype", "seconds_per_batch", "speedup_vs_fp32", "max_abs_error", "rel_l2_error",
               "cosine", "note"]
    if data.empty:
        return pd.DataFrame(columns=columns)
    data = data.assign(model=data["shape"].astype(str).str.split().str[0],
                       metric=data["probe"].str.replace("precision_", "", regex=False))
    keys = ["model", "shape", "dtype"]
    wide = data.drop_duplicates(keys + ["metric"]).set_index(keys + ["metric"])["measured"].unstack("metric")
    wide = wide.reindex(columns=["time", "max_abs_error", "rel_l2_error", "cosine"])
    notes = data[data["metric"] == "time"].drop_duplicates(keys).set_index(keys)["note"]
    table = wide.reset_index().rename(columns={"time": "seconds_per_batch"})
    table["note"] = [notes.get((m, s, d), "") for m, s, d in zip(table["model"], table["shape"], table["dtype"])]
    fp32 = table[table["dtype"] == "fp32"].drop_duplicates("shape").set_index("shape")["seconds_per_batch"]
    table["speedup_vs_fp32"] = table["shape"].map(fp32) / table["seconds_per_batch"]
    order = {m: i for i, m in enumerate(PRECISION_MODES)}
    table = table.sort_values(["model", "dtype"], key=lambda s: s.map(order) if s.name == "dtype" else s,
                              kind="stable")
    return table[columns].reset_index(drop=True)


# --- display ------------------------------------------------------------------------

# the one prefix table (accelkit.numbers), up to P as measured rates need
_PREFIXES = [(scale, prefix) for scale, prefix in SI_PREFIXES if scale <= PETA]


def format_value(value, unit):
    """A measured value with an SI prefix: ``format_value(4.3e10, "FLOP/s") -> '43.2 GFLOP/s'``.

    Seconds below 1 s are shown in ms or µs; dimensionless figures ("1") in
    scientific notation; NaN as an em dash.
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "—"
    if not math.isfinite(value):
        return "—"
    if unit == "s":
        if value >= 1:
            return f"{value:.3g} s"
        return f"{s_to_ms(value):.3g} ms" if value >= MILLI else f"{seconds_to_us(value):.3g} µs"
    if unit == "1":
        return f"{value:.3g}" if value == 0 or 1e-2 <= abs(value) < 1e3 else f"{value:.2e}"
    if unit in ("%", "W"):
        return f"{value:.0f} {unit}" if unit == "W" else f"{value:.0f} %"
    if unit == "B/s":
        unit = "B/s"
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def display_table(results, max_note=90):
    """The results as readable text columns: probe, dtype, shape, measured, datasheet, ratio, note."""
    out = pd.DataFrame({
        "probe": results["probe"],
        "dtype": results["dtype"],
        "shape": results["shape"],
        "measured": [format_value(v, u) for v, u in zip(results["measured"], results["unit"])],
        "datasheet": [format_value(v, u) for v, u in zip(results["datasheet"], results["unit"])],
        "ratio": [f"{r:.0%}" if np.isfinite(r) else "—" for r in results["ratio"].astype(float)],
        "note": [n if len(n) <= max_note else n[: max_note - 1] + "…" for n in results["note"].astype(str)],
    })
    return out


#: the parts of a probe's note as it saves them ("; " between parts), and their wording for a
#: person; numbers and code are kept, a part of any other form is shown as saved
_NOTES = (
    (r"median of (?P<n>\d+) calls", N_("median of {n} calls")),
    (r"median of (?P<n>\d+) batches", N_("median of {n} batches")),
    (r"best of (?P<n>\d+) shapes \(MAMF\)", N_("best of {n} shapes (MAMF)")),
    (r"fp32 \(reference\)", N_("fp32 (reference)")),
    (r"torch\.autocast\((?P<device>[^,]+), (?P<torch_dtype>[\w.]+)\): matmuls in (?P<mode>\w+), accumulation and "
     r"norms in fp32", N_("torch.autocast({device}, {torch_dtype}): matmuls in {mode}, accumulation and norms in fp32")),
    (r"not run: torch's dynamic int8 quantisation \(torch\.ao\) runs on the CPU only",
     N_("not run: torch's dynamic int8 quantisation (torch.ao) runs on the CPU only")),
    (r"cosine similarity of y and y_fp32", N_("cosine similarity of y and y_fp32")),
    (r"pinned host memory", N_("pinned host memory")),
    (r"pageable host memory", N_("pageable host memory")),
    (r"bytes per second one way", N_("bytes per second one way")),
    (r"dst\.copy_\(src\): bytes read \+ bytes written per second \(STREAM Copy counting\)",
     N_("dst.copy_(src): bytes read + bytes written per second (STREAM Copy counting)")),
    (r"src\.sum\(\): bytes read per second", N_("src.sum(): bytes read per second")),
    (r"NVML 'gpu' = % of time a kernel was running \(busy, not % of peak\)",
     N_("NVML 'gpu' = % of time a kernel was running (busy, not % of peak)")),
    (r"> (?P<n>\d+) % while training = compute-bound, low = starved by input",
     N_("> {n} % while training = compute-bound, low = starved by input")),
    (r"NVML 'memory' = % of time device memory was read or written",
     N_("NVML 'memory' = % of time device memory was read or written")),
    (r"mean board power \(NVML\)", N_("mean board power (NVML)")),
    (r"(?P<n>\d+) samples during the matmul probe", N_("{n} samples during the matmul probe")),
    (r"no samples", N_("no samples")),
    (r"not in the catalogue", N_("not in the catalogue")),
    (r"closest: (?P<names>.+)", N_("closest: {names}")),
    (r"ambiguous in the catalogue: (?P<names>.+)", N_("ambiguous in the catalogue: {names}")),
    (r"larger shapes skipped in this mode: (?P<shapes>.+) \(about (?P<seconds>[\d.]+) s a call\)",
     N_("larger shapes skipped in this mode: {shapes} (about {seconds} s a call)")),
    (r"CPUs without FP8 units convert the inputs, so this is not a hardware FP8 rate",
     N_("CPUs without FP8 units convert the inputs, so this is not a hardware FP8 rate")),
    (r"torch\._int_mm int8 x int8 -> int32 \(CPU kernel; the catalogue's int8 figures are for matrix engines\)",
     N_("torch._int_mm int8 x int8 -> int32 (CPU kernel; the catalogue's int8 figures are for matrix engines)")),
    (r"no GPU utilisation on the CPU: (?P<reason>.+)", N_("no GPU utilisation on the CPU: {reason}")),
    (r"NVML not available \((?P<detail>[^)]*)\): no NVIDIA driver on this machine",
     N_("NVML not available ({detail}): no NVIDIA driver on this machine")),
    (r"NVML is NVIDIA-only", N_("NVML is NVIDIA-only")),
    (r"use rocm-smi for AMD GPUs", N_("use rocm-smi for AMD GPUs")),
    (r"not applicable: the probed device is the CPU, so there is no host-device copy",
     N_("not applicable: the probed device is the CPU, so there is no host-device copy")),
    (r"not run: fp16 autocast is a GPU mode here \(CPUs without fp16 matrix units emulate it\)",
     N_("not run: fp16 autocast is a GPU mode here (CPUs without fp16 matrix units emulate it)")),
    (r"bf16 autocast and int8 cover the CPU", N_("bf16 autocast and int8 cover the CPU")),
    (r"not supported: TF32 is a tensor-core mode of NVIDIA \(Ampere and later\) and AMD GPUs",
     N_("not supported: TF32 is a tensor-core mode of NVIDIA (Ampere and later) and AMD GPUs")),
    (r"CPU and MPS matmuls run in fp32", N_("CPU and MPS matmuls run in fp32")),
    (r"torch\.ao\.quantization\.quantize_dynamic: nn\.Linear weights int8 \(per tensor\), activations quantised "
     r"per batch", N_("torch.ao.quantization.quantize_dynamic: nn.Linear weights int8 (per tensor), activations "
                      "quantised per batch")),
    (r"attention projections stay fp32", N_("attention projections stay fp32")),
    (r"no GPU found by torch \(torch\.cuda\.is_available\(\) is False\): the probes ran on the CPU",
     N_("no GPU found by torch (torch.cuda.is_available() is False): the probes ran on the CPU")),
    (r"the probes ran on the CPU \(asked for\)", N_("the probes ran on the CPU (asked for)")),
)


def _parts(text):
    """``text`` split at "; " outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith("; ", i):
            parts.append(text[start:i])
            start = i + 2
    return parts + [text[start:]]


def note_text(note):
    """A saved probe note in the language in use, part by part (a part of unknown form is kept)."""
    parts = []
    for part in _parts(str(note)):
        for pattern, message in _NOTES:
            found = re.fullmatch(pattern, part)
            if found:
                values = found.groupdict()
                if "reason" in values:
                    values["reason"] = note_text(values["reason"])
                part = _(message).format(**values)
                break
        parts.append(part)
    return "; ".join(parts)
