"""The serving search's helpers: the largest batch meeting latency targets, TTFT at a
concurrency, the load arguments and the words of an infeasible projection.

Split out of :mod:`accelkit.projection.inference` (one job per module); each takes a
``core(level, batch, load=None, sched=...)`` callable that projects one layout.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import units
from .._validate import check_integer
from .serving_load import TOKEN_BUDGET

__all__ = []


def _largest_batch_meeting(core, fit, cap, schedule, tpot_target_s, ttft_target_s):
    """Per device and layout: the largest candidate batch whose median TPOT and TTFT meet
    the targets (NaN where none does), and the best TPOT / TTFT reached at batch 1 (for
    the reason). ``core(level, batch, load=None, sched=...)`` projects one layout."""
    limit = np.minimum(fit, cap)
    powers = 2.0 ** np.arange(0, int(np.log2(max(cap, 1.0))) + 1)
    best = np.full(limit.shape, np.nan)
    tpot1 = ttft1 = None

    def meets(b):
        r = core("", np.broadcast_to(b, limit.shape).astype(float))
        ok = np.ones(limit.shape, dtype=bool)
        if tpot_target_s is not None:
            ok &= r["tpot_s"] <= tpot_target_s
        if ttft_target_s is not None:
            # the running batch is the concurrency: TTFT under that load (queue + chunked prefill)
            r = dict(r, ttft_s=_ttft_at_concurrency(core, limit, b, schedule))
            ok &= r["ttft_s"] <= ttft_target_s
        return ok, r

    for b in np.unique(np.concatenate([powers, [cap]])):
        ok, r = meets(b)
        if b == 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a device without figures: all NaN
                tpot1 = np.nanmin(np.broadcast_to(r["tpot_s"], limit.shape), axis=1)
                ttft1 = np.nanmin(np.broadcast_to(r["ttft_s"], limit.shape), axis=1)
        best = np.where(ok & (b <= limit), b, best)
    # the memory limit itself, when it lies between two powers of two and still meets the targets
    ok, _ = meets(np.where(limit >= 1, limit, 1.0))
    best = np.where(ok & (limit >= 1), np.fmax(best, limit), best)
    return best, (tpot1, ttft1)


def _ttft_at_concurrency(core, limit, n, schedule):
    """Median TTFT with ``n`` closed-loop clients per group (:func:`serve_load`); the
    static schedule keeps its batch prefill."""
    n = np.broadcast_to(n, limit.shape).astype(float)
    if schedule == "static":
        return core("", n)["ttft_s"]
    most = np.where(limit >= 1, np.maximum(limit, n), 1.0)
    return core("", most, {"concurrency": n, "request_rate": None, "token_budget": TOKEN_BUDGET})["ttft_s"]


#: the figures only serving under load gives (with ``_low`` / ``_high``)
_LOAD_TIMES = ("ttft_p90_s", "ttft_mean_s", "ttft_first_wave_s", "tpot_p90_s")


def _load_args(concurrency, request_rate, token_budget, schedule, requests_per_client=None, synchronized=False):
    if synchronized not in (True, False):
        raise ValueError(f"synchronized must be True or False (clients in step: a closed loop of fixed lengths); "
                         f"got {synchronized!r}")
    if synchronized and concurrency is None:
        raise ValueError("synchronized applies to a closed-loop load test (concurrency=), "
                         "not to Poisson arrivals (request_rate=) or one request at a time")
    if concurrency is None and request_rate is None:
        if token_budget is not None:
            raise ValueError("token_budget applies to serving under load: give concurrency= or request_rate= too")
        if requests_per_client is not None:
            raise ValueError("requests_per_client applies to a closed-loop load test: give concurrency= too")
        return None
    if requests_per_client is not None:
        if concurrency is None:
            raise ValueError("requests_per_client applies to a closed-loop load test (concurrency=), "
                             "not to Poisson arrivals (request_rate=)")
        check_integer("requests_per_client", requests_per_client, low=1,
                      what="how many requests each client sends in the measured run")
    if concurrency is not None and request_rate is not None:
        raise ValueError("give concurrency= (closed-loop clients) or request_rate= (Poisson arrivals), not both")
    if schedule != "continuous":
        raise ValueError("serving under load (concurrency= / request_rate=) is continuous batching; "
                         "schedule='static' runs one fixed batch")
    if concurrency is not None:
        check_integer("concurrency", concurrency, low=1, what="a number of concurrent requests")
    elif not (np.isfinite(float(request_rate)) and float(request_rate) > 0):
        raise ValueError(f"request_rate must be a number of requests per second > 0; got {request_rate!r}")
    if token_budget is not None:
        check_integer("token_budget", token_budget, low=1, what="a number of tokens per scheduler step")
    return {"token_budget": float(TOKEN_BUDGET if token_budget is None else token_budget),
            "requests_per_client": None if requests_per_client is None else float(requests_per_client),
            "synchronized": bool(synchronized)}


def _explain(row, ceil_row, shape, n_devices, batch_size, mode, mm_precision, fit, tps):
    name = row["name"]
    if row["why"].startswith("no published dense"):
        others = [p for p in ("bf16", "fp16", "fp8", "int8", "fp32") if np.isfinite(ceil_row.get(f"matmul_{p}", np.nan))]
        return (f"precision={mode!r}: {name} has no published dense {mm_precision} peak in the catalogue; "
                f"it has {', '.join(others) or 'no tensor figures'}")
    if row["why"].startswith("batch_size"):
        best = int(np.nanmax(fit))
        return (f"batch_size={batch_size} does not fit on {n_devices} × {name}: at most {best} sequences of this "
                f"length fit next to the weights; use batch_size <= {best}, a larger tensor_parallel or more devices")
    if row["why"].startswith("the weights"):
        need = shape.params * 1.0
        tried = row["why"].split(" (", 1)[1].rstrip(")") if " (" in row["why"] else f"tensor parallel up to {int(np.max(tps))}"
        return (f"{shape.name} ({need / units.GIGA:.3g}e9 parameters in {mode}) does not fit on {n_devices} × {name} "
                f"({tried}); use more devices (n_devices) or a smaller precision")
    return f"{name}: {row['why']}"
