"""Checks on a load test's annotations: what its measured TTFT allows it to have been.

:func:`first_wave_floor_s` is the least mean TTFT a closed-loop run can report when it counts its
first wave; :func:`first_wave_problems` lists the cases of ``measured.csv`` whose annotations that
bound, or the column's own values, rule out (:func:`~accelkit.projection.validation.load_measured`
refuses them). :func:`requests_counted_at_least` reads the least request count a run's mean token
count implies, where the load test does not state it. Split out of :mod:`accelkit.projection.validation`
(one job per module).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..tables import problem

__all__ = ["first_wave_floor_s", "first_wave_problems", "requests_counted_at_least"]


def _opt(value):
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else int(value)


def first_wave_floor_s(case, extra_models=None, peaks=None):
    """The least mean TTFT [s] a closed-loop load test can report if its mean counts its first wave.

    A run of ``N`` clients that sends ``r`` requests each (``requests_per_client``) and starts
    them all at once (AIPerf's burst mode) counts ``N`` prompts that arrived together among its
    ``r·N`` requests. Those prompts need ``N · t1`` of compute, ``t1 = 2 · P_active · L /
    (n_devices · peak)`` (two FLOP per active parameter per prompt token, the attention left out,
    at the devices' dense peak of the case's matmul precision). However they are scheduled, the
    ``k``-th of them finishes no sooner than ``k · t1``, so their mean TTFT is at least
    ``(N + 1)/2 · t1`` (the shortest-processing-time bound of one server, Conway, Maxwell and
    Miller, *Theory of Scheduling* (1967), §3.3); the other requests' is at least 0. A measured mean
    below ``(N + 1) / (2 r) · t1`` cannot count that wave as ``1/r`` of its requests: the run
    warmed up first or sent more requests than ``r`` per client, and the case's
    ``requests_per_client`` is wrong. ``NaN`` where the case states no ``requests_per_client``.
    (Clients in step, ``synchronized``, are a fact of the load generator, not a claim about the
    mean: a case below the bound of its in-step waves shows the engine's model of them too slow.)
    ``extra_models``: architectures by name beside the presets (the validation's ``models.csv``);
    ``peaks``: :func:`~accelkit.projection.ceilings.device_ceilings` indexed by name (built here if
    not given; a caller checking many cases passes it once).
    """
    from . import ceilings
    from .precisions import resolve_precision
    from .shapes import resolve_model

    r = _opt(case.get("requests_per_client"))
    if r is None or case.get("metric") != "ttft_mean_s":
        return float("nan")
    shape = resolve_model((extra_models or {}).get(case["model"], case["model"]))
    _, _, mm, _ = resolve_precision(case["precision"] or "bf16")
    peaks = ceilings.device_ceilings().set_index("name") if peaks is None else peaks
    peak = float(peaks.loc[case["device"], f"peak_{mm}"])
    t1 = 2.0 * shape.active_params * float(case["input_tokens"]) / (int(case["n_devices"]) * peak)
    n = float(case["concurrency"])
    return (n + 1.0) / (2.0 * r) * t1


def first_wave_problems(frame, name, extra_models=None, load_categories=()):
    """Problems (``tables.problem``) of a typed ``measured.csv`` frame: a ``synchronized`` other
    than 0 / 1, a ``token_budget`` (the scheduler's tokens per step) on a case whose category is not
    among ``load_categories``, and a ``requests_per_client`` whose case's mean TTFT is below
    :func:`first_wave_floor_s`."""
    from . import ceilings

    problems = []
    if "token_budget" in frame:
        for i, r in frame[frame["token_budget"].notna() & ~frame["category"].isin(load_categories)].iterrows():
            problems.append(problem(name, i, "token_budget", f"the scheduler's tokens per step apply to a load test "
                                    f"({', '.join(load_categories)}); got one on a {r['category']} case"))
    for i, r in frame[frame["synchronized"].notna() & ~frame["synchronized"].isin([0, 1])].iterrows():
        problems.append(problem(name, i, "synchronized", f"expected 1 (clients in step: a closed loop of "
                                f"fixed lengths), 0 or empty; got {r['synchronized']!r}"))
    stated = frame[frame["requests_per_client"].notna()]
    peaks = ceilings.device_ceilings().set_index("name") if len(stated) else None  # once, not per case
    for i, r in stated.iterrows():
        try:
            floor = first_wave_floor_s(r, extra_models, peaks)
        except (KeyError, ValueError):  # an unknown device or model: its projection names the problem
            continue
        if r["value"] < floor:
            n = int(r["concurrency"])
            problems.append(problem(name, i, "requests_per_client", (
                f"a measured mean TTFT of {r['value']:.4g} s is below {floor:.4g} s, the least a run of "
                f"{n} clients can report when their first {n} simultaneous "
                f"prompts are 1/{int(r['requests_per_client'])} of its requests (their prefill at the dense peak); "
                f"expected it empty (the run warmed up or sent more requests: its steady state)")))
    return problems


def requests_counted_at_least(mean_tokens, nominal_tokens, most=100_000):
    """The fewest requests a load test's mean output (or input) length can be the average of [requests].

    Each request returns a whole number of tokens, so ``N`` requests averaging ``mean_tokens`` sum to a
    whole number: ``N · (mean − nominal)`` is an integer, and ``N`` is a multiple of the denominator of
    ``mean − nominal`` in lowest terms (999.99230769 = 1,000 − 1/1,300: at least 1,300 requests). The
    mean is read as the nearest fraction with a denominator up to ``most``; a mean that is whole (or not
    within 1e-9 of such a fraction) bounds nothing: 1 (the least there can be). Used on the GenAI-Perf
    course table, whose rows state no request count (``data/validation/README.md``).
    """
    diff = Fraction(float(mean_tokens)) - Fraction(float(nominal_tokens))
    near = diff.limit_denominator(most)
    if abs(float(diff - near)) > 1e-9:
        return 1
    return near.denominator
