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

import http.client
import json
import math
import re
import socket
import threading
import time
import urllib.parse

import pandas as pd

from .. import units
from .samples import MHZ, MIB, MonitorError, tidy

__all__ = ["DCGM_METRICS", "REQUIRED_METRIC", "parse_duration", "choose_step", "parse_matchers", "format_matchers",
           "query_range", "query_prometheus"]

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


#: limits on the visitor-supplied ``match`` text
MAX_MATCH_CHARS = 1024
MAX_MATCHERS = 16
#: an answer is abandoned beyond this many bytes, or when the whole request takes longer than the deadline
MAX_ANSWER_BYTES = 16 * units.MIB
DEADLINE_S = 30.0
_CHUNK = 64 * units.KIB
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_OPS = ("=~", "!~", "!=", "=")
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}


def _short(text, n=40):
    """A bad value quoted in an error message: at most ``n`` characters of it."""
    text = str(text)
    return repr(text[:n]) + (f" … ({len(text)} characters)" if len(text) > n else "")


def parse_matchers(text):
    """Label matchers ``name op "value"``, comma-separated -> list of ``(name, op, value)``.

    ``op`` is one of ``=``, ``!=``, ``=~``, ``!~``; names are Prometheus label names
    (``[a-zA-Z_][a-zA-Z0-9_]*``, not the reserved ``__``-prefixed ones); values are
    quoted with ``"`` or ``'`` and may use the escapes ``\\\\ \\" \\' \\n \\t \\r``. One pair
    of surrounding braces is allowed (``{Hostname="node1"}``). Nothing else is
    accepted -- no functions, operators or other PromQL -- so the text can never
    change what is queried beyond selecting series by label; the selector is rebuilt
    from the parsed parts (:func:`format_matchers`).

    Raises :class:`MonitorError` naming the position and a short prefix of the problem.
    """
    if text is None:
        return []
    if not isinstance(text, str):
        raise MonitorError(f"match must be text such as Hostname=\"node1\"; got {type(text).__name__}")
    if len(text) > MAX_MATCH_CHARS:
        raise MonitorError(f"match is {len(text)} characters long; at most {MAX_MATCH_CHARS} are accepted")
    inner = text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    out, i, n = [], 0, len(inner)

    def fail(what, at):
        raise MonitorError(f"match takes label matchers only, such as Hostname=\"node1\",gpu=~\"0|1\" "
                           f"(name, one of = != =~ !~, a quoted value; comma-separated): {what} at character "
                           f"{at + 1}: {_short(inner[at:], 20)}")

    def skip(j):
        while j < n and inner[j] in " \t\r\n":
            j += 1
        return j

    i = skip(i)
    while i < n:
        m = _LABEL_NAME.match(inner, i)
        if not m:
            fail("expected a label name", i)
        name = m.group(0)
        if name.startswith("__"):
            fail(f"label {name!r} is reserved", i)
        i = skip(m.end())
        op = next((o for o in _OPS if inner.startswith(o, i)), None)
        if op is None:
            fail("expected one of = != =~ !~", i)
        i = skip(i + len(op))
        if i >= n or inner[i] not in "\"'":
            fail("expected a quoted value", i)
        quote, start, chars = inner[i], i, []
        i += 1
        while True:
            if i >= n:
                fail("unterminated quoted value", start)
            c = inner[i]
            if c == quote:
                i += 1
                break
            if c == "\\":
                if i + 1 >= n or inner[i + 1] not in _ESCAPES:
                    fail("unknown escape in a quoted value (use \\\\ \\\" \\' \\n \\t \\r)", i)
                chars.append(_ESCAPES[inner[i + 1]])
                i += 2
                continue
            if ord(c) < 0x20 or ord(c) == 0x7F:
                fail("control character in a quoted value", i)
            chars.append(c)
            i += 1
        out.append((name, op, "".join(chars)))  # regular expressions are RE2's: Prometheus checks them
        if len(out) > MAX_MATCHERS:
            raise MonitorError(f"match has more than {MAX_MATCHERS} label matchers")
        i = skip(i)
        if i < n:
            if inner[i] != ",":
                fail("expected a comma between matchers", i)
            i = skip(i + 1)  # a trailing comma is allowed, as in PromQL
    return out


def _quote(value):
    """A PromQL double-quoted string literal of ``value``."""
    return '"' + (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                  .replace("\t", "\\t").replace("\r", "\\r")) + '"'


def format_matchers(matchers):
    """``[(name, op, value), ...]`` -> ``name op "value",...`` (the canonical text, no braces)."""
    return ",".join(f"{name}{op}{_quote(value)}" for name, op, value in matchers)


def _selector(metric, match):
    """``metric{matchers}``, rebuilt from :func:`parse_matchers` (never the raw text)."""
    if not _LABEL_NAME.fullmatch(metric.replace(":", "_")):
        raise MonitorError(f"not a metric name: {_short(metric)}")
    matchers = match if isinstance(match, list) else parse_matchers(match)
    return f"{metric}{{{format_matchers(matchers)}}}" if matchers else metric


def _cut(conn, state):
    """Deadline reached: mark it and shut the socket, which wakes a blocked read."""
    state["expired"] = True
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _http_get(url, timeout_s, deadline_s, max_bytes):
    """``(status, body bytes)`` of a GET, within ``deadline_s`` in total and ``max_bytes`` of body.

    ``timeout_s`` bounds each connect and read; the deadline bounds the whole exchange,
    so a server that sends one byte every few seconds cannot hold the caller; the body
    is read in chunks and abandoned beyond ``max_bytes``. Raises :class:`MonitorError`
    for the deadline and the size, ``OSError`` / ``http.client.HTTPException`` otherwise.
    """
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    ends = time.monotonic() + deadline_s
    conn = cls(parts.hostname, parts.port, timeout=min(timeout_s, deadline_s))
    state = {"expired": False}
    timer = threading.Timer(deadline_s, _cut, args=(conn, state))
    timer.daemon = True
    timer.start()
    try:
        conn.connect()
        if state["expired"]:  # connected just after the deadline: the timer found no socket to shut
            raise OSError("deadline")
        conn.request("GET", target, headers={"Accept": "application/json", "User-Agent": "accelkit"})
        response = conn.getresponse()
        length = response.getheader("Content-Length", "")
        if length.strip().isdigit() and int(length) > max_bytes:
            raise MonitorError(f"the answer is {int(length):,} bytes; at most {max_bytes:,} are read "
                               "(narrow --since or --match)")
        chunks, total = [], 0
        while time.monotonic() <= ends:
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise MonitorError(f"the answer is over {max_bytes:,} bytes; at most that many are read "
                                   "(narrow --since or --match)")
            chunks.append(chunk)
        if state["expired"] or time.monotonic() > ends:
            raise MonitorError(f"no complete answer within {deadline_s:g} s")
        return response.status, b"".join(chunks)
    except (OSError, http.client.HTTPException):
        if state["expired"] or time.monotonic() > ends:
            raise MonitorError(f"no complete answer within {deadline_s:g} s") from None
        raise
    finally:
        timer.cancel()
        conn.close()


def query_range(url, query, start, end, step, timeout_s=10.0, deadline_s=None, max_bytes=None):
    """One range query: the ``data.result`` list of a ``matrix`` answer. Raises :class:`MonitorError`.

    The whole request must finish within ``deadline_s`` seconds (default
    :data:`DEADLINE_S`) and its answer may be at most ``max_bytes`` (default
    :data:`MAX_ANSWER_BYTES`), read in chunks.
    """
    base = url.rstrip("/") if isinstance(url, str) else ""
    try:
        parsed = urllib.parse.urlsplit(base)
        host_ok = bool(parsed.hostname) and (parsed.port is None or parsed.port > 0)
    except ValueError:  # a port that is not a number, or out of range
        host_ok = False
    if not base.startswith(("http://", "https://")) or not host_ok:
        raise MonitorError(f"--prometheus must be an http:// or https:// URL; got {_short(url)}")
    params = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"})
    full = f"{base}/api/v1/query_range?{params}"
    deadline_s = DEADLINE_S if deadline_s is None else float(deadline_s)
    max_bytes = MAX_ANSWER_BYTES if max_bytes is None else int(max_bytes)
    try:
        status, body = _http_get(full, timeout_s, deadline_s, max_bytes)
    except MonitorError as exc:
        raise MonitorError(f"Prometheus at {base}, query {query!r}: {exc}") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise MonitorError(f"cannot reach Prometheus at {base} ({_short(reason, 120)}); check the URL and that the "
                           "server is running") from None
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        payload = None
        if status < 400:
            raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r}: not JSON "
                               f"({_short(str(exc), 80)})") from None
    if status >= 400:
        detail = payload.get("error", "") if isinstance(payload, dict) else ""
        raise MonitorError(f"Prometheus at {base} rejected the query {query!r} (HTTP {status}"
                           + (f": {_short(detail, 200)}" if detail else "") + ")")
    if not isinstance(payload, dict):
        raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r}: expected a JSON object, "
                           f"got a {type(payload).__name__}")
    if payload.get("status") != "success":
        raise MonitorError(f"Prometheus at {base} answered {_short(payload.get('status'))} for {query!r}: "
                           f"{_short(payload.get('error', ''), 200)}")
    data = payload.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        raise MonitorError(f"Prometheus at {base} gave a {_short(kind)} result for {query!r}; "
                           "expected a matrix (a range query)")
    result = data.get("result", [])
    if not isinstance(result, list) or not all(isinstance(r, dict) for r in result):
        raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r}: data.result is not a list "
                           "of series")
    return result


def _series_values(series, base, query):
    """``(labels, [(t, value), ...])`` of one matrix series; a malformed point raises :class:`MonitorError`."""
    labels, values = series.get("metric", {}), series.get("values", [])
    if not isinstance(labels, dict) or not isinstance(values, list):
        raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r}: a series without "
                           "metric labels or values")
    out = []
    for point in values:
        try:
            t, value = point
            if isinstance(t, bool) or isinstance(value, (bool, list, dict)):
                raise TypeError
            out.append((float(t), float(value)))
        except (TypeError, ValueError):
            raise MonitorError(f"no valid answer from Prometheus at {base} for {query!r}: expected "
                               f"[time, \"number\"] points, got {_short(json.dumps(point), 60)}") from None
    return labels, out


def _gpu_index(labels, uuid_order):
    for key in ("gpu", "GPU"):
        if str(labels.get(key, "")).isdigit():
            return int(labels[key])
    match = re.match(r"nvidia(\d+)$", str(labels.get("device", "")))
    if match:
        return int(match.group(1))
    uuid = labels.get("UUID", labels.get("uuid", ""))
    return uuid_order.setdefault(uuid, len(uuid_order))


def query_prometheus(url, since="1h", match=None, end=None, step=None, timeout_s=10.0, metrics=None,
                     deadline_s=None, max_bytes=None):
    """DCGM-exporter samples from Prometheus at ``url`` over the last ``since``.

    Parameters
    ----------
    url : str
        Prometheus base URL, e.g. ``http://prometheus:9090``.
    since : str or float
        Window length (``1h``, ``30m``, seconds).
    match : str, optional
        Label matchers added to every query, e.g. ``Hostname="node1"`` (label matchers
        only: parsed by :func:`parse_matchers` and rebuilt, never spliced into PromQL).
    end : float, optional
        Window end [s since the epoch]; default now.
    step : float, optional
        Query step [s]; default :func:`choose_step` of the window.
    deadline_s, max_bytes : optional
        Limits of each query (:func:`query_range`).

    Returns
    -------
    DataFrame
        The sample table; ``attrs``: ``path`` (the source in words), ``queries``,
        ``missing`` (the queries that returned nothing), ``step_s``.

    Raises :class:`MonitorError` when the server cannot be reached, rejects a query,
    or returns nothing for ``DCGM_FI_DEV_GPU_UTIL`` (naming that query).
    """
    matchers = parse_matchers(match)
    match = format_matchers(matchers) or None
    window = parse_duration(since)
    end = time.time() if end is None else float(end)
    start = end - window
    step = choose_step(window) if step is None else float(step)
    rows, missing, queries, uuid_order = [], [], [], {}
    for metric, (column, factor) in (metrics or DCGM_METRICS).items():
        query = _selector(metric, matchers)
        queries.append(query)
        result = query_range(url, query, start, end, step, timeout_s, deadline_s=deadline_s, max_bytes=max_bytes)
        if not result:
            if metric == REQUIRED_METRIC:
                raise MonitorError(f"Prometheus at {url.rstrip('/')} returned nothing for {query} over the last "
                                   f"{since}: is dcgm-exporter scraped by this server"
                                   + (", and do the labels of --match exist" if match else "") + "?")
            missing.append(query)
            continue
        for series in result:
            labels, values = _series_values(series, url.rstrip("/"), query)
            host = str(labels.get("Hostname") or labels.get("instance", ""))
            gpu = _gpu_index(labels, uuid_order)
            for t, value in values:
                rows.append({"host": host, "gpu": gpu, "uuid": str(labels.get("UUID", "")),
                             "name": str(labels.get("modelName", "")), "timestamp_s": t,
                             "column": column, "value": value * factor})
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
