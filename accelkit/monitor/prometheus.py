"""DCGM-exporter metrics from a Prometheus server's HTTP API, over a time window.

For each DCGM field in :data:`DCGM_METRICS` the client asks
``GET /api/v1/query_range?query=FIELD{MATCH}&start=…&end=…&step=…`` (standard
library ``urllib`` + ``json`` only), with a step chosen from the window
(:func:`choose_step`: at most ~1000 points per series, on a round value), and
joins the series into the sample table by host (the exporter's ``Hostname``
label, else Prometheus' ``instance``) and GPU (``gpu``, else ``device`` nvidiaN).
The GPU model comes from the ``modelName`` label.

Units as dcgm-exporter publishes them (its ``etc/default-counters.csv`` and
``dcp-metrics-included.csv``): utilisation in %, the ``PROF_*`` activities as
ratios in [0, 1], frame-buffer memory in MiB, power in W, temperature in °C, clocks
in MHz, the clock-event reasons as the NVML bitmask. Converted to SI here.

References
----------
- Prometheus documentation, "HTTP API": range queries, the ``matrix`` result,
  error responses, https://prometheus.io/docs/prometheus/latest/querying/api/
- NVIDIA, *DCGM-Exporter* (docs.nvidia.com/datacenter/cloud-native/gpu-telemetry/) and
  *DCGM API: Field Identifiers* (``DCGM_FI_PROF_SM_ACTIVE``, ``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE``,
  ``DCGM_FI_PROF_DRAM_ACTIVE``, ``DCGM_FI_DEV_CLOCK_THROTTLE_REASONS``).
- Source text 003 §4.3: the ``dcgm`` scrape job of a Prometheus configuration.
"""

from __future__ import annotations

import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import pandas as pd

from .. import units
from .samples import MHZ, MIB, MonitorError, tidy

__all__ = ["DCGM_METRICS", "REQUIRED_METRIC", "parse_duration", "choose_step", "query_range", "query_prometheus"]

#: DCGM field -> (sample column, factor to SI)
DCGM_METRICS = {
    "DCGM_FI_DEV_GPU_UTIL": ("util_fraction", 0.01),
    "DCGM_FI_PROF_SM_ACTIVE": ("sm_active_fraction", 1.0),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("tensor_active_fraction", 1.0),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("dram_active_fraction", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("memory_util_fraction", 0.01),
    "DCGM_FI_DEV_FB_USED": ("memory_used_bytes", float(MIB)),
    "DCGM_FI_DEV_FB_FREE": ("memory_free_bytes", float(MIB)),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_POWER_MGMT_LIMIT": ("power_limit_w", 1.0),
    "DCGM_FI_DEV_GPU_TEMP": ("temperature_c", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_hz", MHZ),
    "DCGM_FI_DEV_MAX_SM_CLOCK": ("sm_clock_max_hz", MHZ),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("throttle_reasons", 1.0),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("throttle_reasons", 1.0),
}
#: without this one there is nothing to summarise
REQUIRED_METRIC = "DCGM_FI_DEV_GPU_UTIL"

_UNITS_S = {"ms": units.MILLI, "s": 1.0, "m": units.SECONDS_PER_MINUTE, "h": units.SECONDS_PER_HOUR,
            "d": units.SECONDS_PER_DAY, "w": units.SECONDS_PER_WEEK}
_NICE_STEPS = ((1, 2, 5, 10, 15, 30) + tuple(int(units.SECONDS_PER_MINUTE) * m for m in (1, 2, 5, 10, 15, 30))
               + tuple(int(units.SECONDS_PER_HOUR) * h for h in (1, 2, 6, 24)))


def parse_duration(text):
    """'1h', '30m', '1h30m', '90s', '2d' or a number of seconds -> seconds (> 0)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        raw = str(text).strip()
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)", raw)
        if raw and re.fullmatch(r"\d+(?:\.\d+)?", raw):
            seconds = float(raw)
        elif parts and "".join(n + u for n, u in parts) == raw:
            seconds = sum(float(n) * _UNITS_S[u] for n, u in parts)
        else:
            raise MonitorError(f"--since must be a duration such as 1h, 30m, 1h30m or 90s; got {text!r}")
    if not seconds > 0:
        raise MonitorError(f"--since must be a duration > 0; got {text!r}")
    return seconds


def choose_step(window_s, max_points=1000):
    """Query step [s] for a window: the smallest round step giving at most ``max_points`` points."""
    want = window_s / max_points
    for step in _NICE_STEPS:
        if step >= want:
            return float(step)
    return float(math.ceil(want))


def _selector(metric, match):
    if not match:
        return metric
    inner = match.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    return f"{metric}{{{inner}}}"


def query_range(url, query, start, end, step, timeout_s=10.0):
    """One range query: the ``data.result`` list of a ``matrix`` answer. Raises :class:`MonitorError`."""
    base = url.rstrip("/")
    params = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"})
    full = f"{base}/api/v1/query_range?{params}"
    if not base.startswith(("http://", "https://")):
        raise MonitorError(f"--prometheus must be an http:// or https:// URL; got {url!r}")
    try:
        with urllib.request.urlopen(full, timeout=timeout_s) as response:
            payload = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read().decode("utf-8")).get("error", "")
        except Exception:
            detail = ""
        raise MonitorError(f"Prometheus at {base} rejected the query {query!r} (HTTP {exc.code}"
                           + (f": {detail}" if detail else "") + ")") from None
    except urllib.error.URLError as exc:
        raise MonitorError(f"cannot reach Prometheus at {base} ({exc.reason}); check the URL and that the "
                           "server is running") from None
    except (OSError, ValueError) as exc:
        raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r} ({exc})") from None
    if payload.get("status") != "success":
        raise MonitorError(f"Prometheus at {base} answered {payload.get('status')!r} for {query!r}: "
                           f"{payload.get('error', '')}")
    data = payload.get("data", {})
    if data.get("resultType") != "matrix":
        raise MonitorError(f"Prometheus at {base} gave a {data.get('resultType')!r} result for {query!r}; "
                           "expected a matrix (a range query)")
    return data.get("result", [])


def _gpu_index(labels, uuid_order):
    for key in ("gpu", "GPU"):
        if str(labels.get(key, "")).isdigit():
            return int(labels[key])
    match = re.match(r"nvidia(\d+)$", str(labels.get("device", "")))
    if match:
        return int(match.group(1))
    uuid = labels.get("UUID", labels.get("uuid", ""))
    return uuid_order.setdefault(uuid, len(uuid_order))


def query_prometheus(url, since="1h", match=None, end=None, step=None, timeout_s=10.0, metrics=None):
    """DCGM-exporter samples from Prometheus at ``url`` over the last ``since``.

    Parameters
    ----------
    url : str
        Prometheus base URL, e.g. ``http://prometheus:9090``.
    since : str or float
        Window length (``1h``, ``30m``, seconds).
    match : str, optional
        Label matchers added to every query, e.g. ``Hostname="node1"``.
    end : float, optional
        Window end [s since the epoch]; default now.
    step : float, optional
        Query step [s]; default :func:`choose_step` of the window.

    Returns
    -------
    DataFrame
        The sample table; ``attrs``: ``path`` (the source in words), ``queries``,
        ``missing`` (the queries that returned nothing), ``step_s``.

    Raises :class:`MonitorError` when the server cannot be reached, rejects a query,
    or returns nothing for ``DCGM_FI_DEV_GPU_UTIL`` (naming that query).
    """
    window = parse_duration(since)
    end = time.time() if end is None else float(end)
    start = end - window
    step = choose_step(window) if step is None else float(step)
    rows, missing, queries, uuid_order = [], [], [], {}
    for metric, (column, factor) in (metrics or DCGM_METRICS).items():
        query = _selector(metric, match)
        queries.append(query)
        result = query_range(url, query, start, end, step, timeout_s)
        if not result:
            if metric == REQUIRED_METRIC:
                raise MonitorError(f"Prometheus at {url.rstrip('/')} returned nothing for {query} over the last "
                                   f"{since}: is dcgm-exporter scraped by this server"
                                   + (", and do the labels of --match exist" if match else "") + "?")
            missing.append(query)
            continue
        for series in result:
            labels = series.get("metric", {})
            host = labels.get("Hostname") or labels.get("instance", "")
            gpu = _gpu_index(labels, uuid_order)
            for t, value in series.get("values", []):
                rows.append({"host": host, "gpu": gpu, "uuid": labels.get("UUID", ""),
                             "name": labels.get("modelName", ""), "timestamp_s": float(t),
                             "column": column, "value": float(value) * factor})
    long = pd.DataFrame(rows)
    wide = long.pivot_table(index=["host", "gpu", "timestamp_s"], columns="column", values="value",
                            aggfunc="mean").reset_index()
    ident = long.groupby(["host", "gpu"]).agg(uuid=("uuid", "first"), name=("name", "first")).reset_index()
    wide = wide.merge(ident, on=["host", "gpu"], how="left")
    wide = wide[wide["util_fraction"].notna()] if "util_fraction" in wide.columns else wide
    if "memory_free_bytes" in wide.columns and "memory_used_bytes" in wide.columns:
        wide["memory_total_bytes"] = wide["memory_used_bytes"] + wide["memory_free_bytes"]
    wide["source"] = "prometheus"
    out = tidy(wide)
    out.attrs.update({"path": f"Prometheus {url.rstrip('/')} (last {since}" + (f", {match}" if match else "") + ")",
                      "queries": queries, "missing": missing, "step_s": step})
    return out
